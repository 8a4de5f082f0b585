"""The carbon panel builds at its defaults, redraws on release and survives every control at both ends."""

import ipywidgets as W

from workbench.testing import requires_data
from workbench.viz.carbon import SCHEDULER_NAMES

DATA = ("carbon-dag/tpch/2g/q01.json", "carbon-dag/carbon-intensity/US-CAL-CISO/US-CAL-CISO_2023_hourly.csv")


def _parts(panel):
    controls = list(panel.children[0].children)
    info = panel.children[1]
    figures = list(panel.children[-1].children)
    return controls, info, figures


@requires_data(*DATA)
def test_panel_builds_at_defaults():
    from workbench.widgets.carbon import carbon_panel

    controls, info, (pts, busy) = _parts(carbon_panel())
    assert [c.description for c in controls] == ["region", "season (2023)", "scheduler", "PCAPS gamma", "load (jobs)"]
    assert all(c.continuous_update is False for c in controls)
    # defaults: scheduler pcaps, so the table has the baseline, CAP and PCAPS (3 rows + header)
    assert isinstance(info, W.HTML) and info.value.count("<tr>") == 4
    assert {t.name for t in pts.data} == {SCHEDULER_NAMES[s] for s in ("agnostic", "cap", "pcaps")}
    # busy executors of the baseline and PCAPS, and the intensity on the second y axis
    assert [t.name for t in busy.data] == [SCHEDULER_NAMES["agnostic"], SCHEDULER_NAMES["pcaps"], "grid intensity"]
    assert busy.data[-1].yaxis == "y2"
    assert max(busy.data[0].y) <= 50 + 1e-9  # never more busy executors than the cluster has


@requires_data(*DATA)
def test_every_control_moves_to_both_ends():
    from workbench.widgets.carbon import carbon_panel

    controls, info, (pts, _) = _parts(carbon_panel())
    for c in controls:
        ends = (c.options[0], c.options[-1]) if hasattr(c, "options") else (c.min, c.max)
        ends = tuple(e[1] if isinstance(e, tuple) else e for e in ends)  # a selection slider's (label, value)
        for end in ends:
            c.value = end  # every stop runs: the jobs control stops where the arrivals would outlast the window
            assert "Not run" not in info.value and "carbon-agnostic" in info.value and len(pts.data) >= 3
        c.value = ends[0]
    # scheduler fifo adds a fourth row (FIFO) to the table
    sched = controls[2]
    sched.value = "fifo"
    assert info.value.count("<tr>") == 5 and "FIFO" in info.value


@requires_data(*DATA)
def test_jobs_that_outlast_the_window_are_refused_by_name(monkeypatch):
    """Arrivals past the season's window are refused before the simulation, and so is work that has not drained by
    its end, both naming the knobs (jobs, load, executors, seconds_per_hour) and how many jobs fit."""
    import numpy as np
    import pytest

    from workbench._rng import int31_seed
    from workbench.carbon.cluster import poisson_arrivals
    from workbench.experiments import carbon as xc

    point = {"scheduler": "agnostic", "region": "DE", "season": "winter", "gamma": 0.5, "load": 0.5}
    run = {**point, "executors": 50, "job_cap": 25, "cap_minimum": 10, "seconds_per_hour": 60.0, "seed": 0}
    fit = xc._jobs_in_window(0.5, 50, 60.0)
    with pytest.raises(ValueError, match=rf"jobs=2,000 arrive over .* lower jobs \(about {fit:,} arrive"):
        xc.carbon_run(**run, jobs=2000)
    # one job on one executor, in a window that ends an hour after it arrives: it arrives, and does not finish
    first = poisson_arrivals(1, xc.mean_job_work_s(), seed=int31_seed(0) + 1)[0]
    window = np.full(int(first) + 2, 300.0)  # seconds_per_hour=1: one trace hour per simulated second
    monkeypatch.setattr(xc, "region_intensity", lambda region, season: window)
    one = {**run, "load": 1.0, "executors": 1, "job_cap": 1, "cap_minimum": 0, "seconds_per_hour": 1.0}
    with pytest.raises(ValueError, match=r"jobs=1 are still running at the window's end, .* lower jobs"):
        xc.carbon_run(**one, jobs=1)
