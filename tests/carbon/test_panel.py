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
            c.value = end
            if "Not run" in info.value:  # the most jobs outlast the trace window on 50 executors: refused, said why
                assert c.description == "load (jobs)" and "intensity has 1440 hours" in info.value
                assert len(pts.data) == 0
            else:
                assert "carbon-agnostic" in info.value and len(pts.data) >= 3
        c.value = ends[0]
    # scheduler fifo adds a fourth row (FIFO) to the table
    sched = controls[2]
    sched.value = "fifo"
    assert info.value.count("<tr>") == 5 and "FIFO" in info.value
