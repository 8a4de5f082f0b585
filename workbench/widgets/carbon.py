"""Carbon-aware scheduling panel: region, season, scheduler, gamma and load -> carbon vs completion time per
scheduler, and the chosen scheduler's busy executors against the grid intensity.

Every number is a point of a registered experiment (:func:`workbench.experiments.run_point`, seed 0): the table and
the scatter are the ``carbon-scheduling`` rows of the carbon-agnostic baseline, CAP (B = K/5), PCAPS and the chosen
scheduler (a treatment: same jobs, arrivals and duration draws for all), and the busy-executor figure the
``carbon-busy-hours`` rows of the same runs (busy executors and intensity per trace hour). The
:mod:`workbench.viz.carbon` builders make the figures and :func:`~workbench.widgets.redraw` swaps them in.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import experiments as ex
from ..viz import carbon as vc
from . import (
    FigurePane,
    clear,
    html_table,
    log_steps,
    panel,
    param_control,
    param_controls,
    param_values,
    redraw,
)

__all__ = ["CarbonView", "carbon_panel", "panel_model", "EXECUTORS", "JOB_CAP", "LOAD", "JOBS"]

EXPERIMENT = "carbon-scheduling"
#: The same runs hour by hour.
BUSY = "carbon-busy-hours"
#: Cluster of the panel (the quick scale of the ``pcaps`` reproduction): executors, per-job cap, offered load, and
#: the jobs the load control starts at.
EXECUTORS = 50
JOB_CAP = 25
LOAD = 0.5
JOBS = 25
#: ``cp`` (critical path) is the carbon-agnostic baseline's rule under another name: the panel offers it once.
SAME_AS_BASELINE = "cp"


@dataclass(frozen=True)
class CarbonView:
    """What the carbon panel shows for one setting."""

    runs: pd.DataFrame  #: one row per scheduler: the ``carbon-scheduling`` row (scheduler, gamma, carbon_kg, ...)
    busy: dict[str, np.ndarray]  #: busy executors per trace hour of the baseline and of the chosen scheduler
    intensity: np.ndarray  #: gCO2eq/kWh per trace hour from the window start (as long as the longest busy series)


def panel_model(
    region: str = "CAISO",
    season: str = "summer",
    scheduler: str = "pcaps",
    gamma: float = 0.5,
    jobs: int = JOBS,
    seed: int = 0,
) -> CarbonView:
    """The panel's points: ``jobs`` TPC-H jobs at load :data:`LOAD` on :data:`EXECUTORS` executors, under the
    carbon-agnostic baseline, CAP (B = K/5), PCAPS at ``gamma`` and ``scheduler``: the ``carbon-scheduling`` rows for
    seed index ``seed`` (those the ``pcaps`` reproduction's claims average over regions and seeds) and the
    ``carbon-busy-hours`` rows of the baseline's and ``scheduler``'s runs. A point the model refuses raises
    :class:`~workbench.experiments.SweepError` naming it.

    Examples
    --------
    >>> v = panel_model("DE", "summer", "fifo", 0.5, 5)  # doctest: +SKIP
    >>> v.runs.scheduler.tolist()  # doctest: +SKIP
    ['agnostic', 'cap', 'pcaps', 'fifo']
    """
    point = {
        "region": region,
        "season": season,
        "gamma": gamma,
        "load": LOAD,
        "jobs": jobs,
        "executors": EXECUTORS,
        "job_cap": JOB_CAP,
        "cap_minimum": EXECUTORS // 5,
    }
    busy_rows = {
        s: ex.run_point(BUSY, {**point, "scheduler": s}, seed=seed) for s in dict.fromkeys(["agnostic", scheduler])
    }
    names = list(dict.fromkeys(["agnostic", "cap", "pcaps", scheduler]))
    runs = pd.concat([ex.run_point(EXPERIMENT, {**point, "scheduler": s}, seed=seed) for s in names], ignore_index=True)
    longest = max(busy_rows.values(), key=len)
    return CarbonView(
        runs,
        {s: r.busy_executors.to_numpy() for s, r in busy_rows.items()},
        longest.intensity_g_per_kwh.to_numpy(),
    )


def carbon_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    exp = ex.get(EXPERIMENT)
    region, season = param_controls(exp, ["region", "season"], season={"description": "season (2023)"})
    scheduler = param_control(exp.param("scheduler"))
    scheduler.options = [s for s in scheduler.options if s != SAME_AS_BASELINE]
    scheduler.value = exp.param("scheduler").default  # new options reset the value to the first
    gamma = param_control(exp.param("gamma"))
    fit = exp.limit("jobs", load=LOAD, executors=EXECUTORS)  # the jobs a season's trace window holds
    p = exp.param("jobs")
    stops = [v for v in log_steps(p.low or 1, p.high or fit, JOBS) if v <= fit]
    jobs = param_control(p, JOBS, stops=stops, description="load (jobs)")
    controls = [region, season, scheduler, gamma, jobs]
    info = W.HTML()
    fig_pts = FigurePane()
    fig_busy = FigurePane()

    def update(*_):
        values = param_values(controls)
        try:
            view = panel_model(**values)
        except ex.SweepError as err:
            for pane in (fig_pts, fig_busy):
                clear(pane, "the model refused this setting", height=340)
            info.value = f"<b>Not run:</b> {html.escape(str(err))}"
            return
        redraw(fig_pts, vc.carbon_vs_jct(view.runs), height=340)
        redraw(fig_busy, vc.busy_vs_intensity(view.busy, view.intensity), height=340)
        base = view.runs.set_index("scheduler").loc["agnostic"]
        info.value = html_table(
            ["scheduler", "carbon (g CO2eq)", "vs agnostic", "mean JCT (s)", "vs agnostic", "intensity seen"],
            [
                [
                    vc.SCHEDULER_NAMES.get(r.scheduler, r.scheduler)
                    + (f" γ={r.gamma:g}" if r.scheduler == "pcaps" else ""),
                    f"{r.carbon_kg * 1e3:,.0f}",
                    f"{r.carbon_kg / base.carbon_kg - 1:+.1%}",
                    f"{r.mean_jct_s:,.1f}",
                    f"{r.mean_jct_s / base.mean_jct_s - 1:+.0%}",
                    f"{r.intensity_seen:,.0f} gCO2eq/kWh",
                ]
                for r in view.runs.itertuples()
            ],
            caption=f"{values['jobs']:,} TPC-H jobs at load {LOAD:g} on {EXECUTORS} executors (each job at most "
            f"{JOB_CAP}); one trace hour per {exp.param('seconds_per_hour').default:g} simulated seconds; CAP with B = {EXECUTORS // 5}. One region and "
            "one draw of jobs and arrivals (the experiment's seed 0): the reproduction's claims average the six "
            "PCAPS regions over 2 seeds (5 at full scale); one draw's carbon cut and completion-time change vary "
            "from seed to seed",
        )

    for w in controls:
        w.continuous_update = False
        w.observe(update, "value")
    update()
    return panel(controls, [fig_pts, fig_busy], info=info, fidelity="workbench.widgets.carbon:carbon_panel")
