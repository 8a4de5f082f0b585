"""Fault-localization panel: fault kind, severity, job size, noise and detector -> the timing heat map with ground
truth and suspects marked, precision/recall curves, and each detector's verdict on this job.

Every number is a point of a registered experiment (:func:`workbench.experiments.run_point`): the job, its heat map
and the verdicts are ``fault-localization-job``'s, the curves ``fault-localization-thresholds``'."""

from __future__ import annotations

import ipywidgets as W
import pandas as pd

from .. import experiments as ex
from ..viz import diagnosis as vd
from . import FigurePane, html_table, panel, param_controls, param_values, redraw

__all__ = ["fault_panel", "panel_model", "CONTROLS"]

#: The ``fault-localization-job`` parameters the panel controls, in the order shown (the job's seed at its default).
CONTROLS = ("kind", "severity", "ranks", "noise_level", "collective", "detectors")


def panel_model(seed: int = 0, **values) -> dict:
    """The panel's numbers: the ``fault-localization-job`` point at ``values`` (``job``: its rows, by ``part``) and
    the ``fault-localization-thresholds`` point behind the curves (``sweep``), on jobs of as many ranks as the job's
    or the most that experiment offers (``pr_ranks``).

    Examples
    --------
    >>> out = panel_model(kind="nic_degraded", ranks=64, jobs=1)
    >>> scores = out["job"].query("part == 'score'").set_index("detector")
    >>> sorted(scores.index), bool(scores.loc["c4d", "top1"])
    (['c4d', 'holmes', 'minder', 'naive', 'perftracker'], True)
    """
    jobs = values.pop("jobs", None)
    job = ex.run_point("fault-localization-job", values, seed=seed)
    pr = ex.get("fault-localization-thresholds")
    ranks = job.ranks.iloc[0]
    pr_ranks = max(r for r in pr.param("ranks").choices or () if r <= ranks)
    sweep_values = {**values, "ranks": pr_ranks, **({} if jobs is None else {"jobs": jobs})}
    return {"job": job, "sweep": ex.run_point(pr, sweep_values, seed=seed), "pr_ranks": pr_ranks}


def fault_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    controls = param_controls("fault-localization-job", CONTROLS)
    jobs = ex.get("fault-localization-thresholds").param("jobs").default
    info = W.HTML()
    heat = FigurePane()
    curves = FigurePane()

    def update(*_):
        out = panel_model(**param_values(controls))
        job = out["job"]
        redraw(heat, vd.timing_heatmap(job[job.part != "score"]), height=340)
        redraw(curves, vd.pr_curves(out["sweep"]), height=340)
        f = job[job.part == "fault"].iloc[0]
        yes = {True: "yes", False: "no"}
        rows = [
            [
                r.detector,
                yes[bool(r.alarm)],
                yes[bool(r.top1)],
                yes[bool(r.top3)],
                "" if pd.isna(r.delay_s) else f"{r.delay_s:.1f}",
                r.blamed,
            ]
            for r in job[job.part == "score"].itertuples()
        ]
        info.value = html_table(
            ["detector", "alarm", "top-1", "top-3", "delay (s)", "function (workers)"],
            rows,
            caption=f"one job (seed 0): fault on rank {f['rank']:.0f} (machine {f.machine:.0f}) from iteration "
            f"{f.iteration:.0f}; whether a detector finds it varies from job to job (the reproductions' claims score "
            f"many jobs); curves over {jobs} faulty and {jobs} healthy {out['pr_ranks']}-rank jobs",
        )

    for w in controls:
        w.observe(update, "value")
    update()
    return panel(controls, [heat, curves], info=info, fidelity="workbench.widgets.diagnosis:fault_panel")
