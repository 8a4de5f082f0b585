"""Carbon-aware scheduling panel: region, season, scheduler, gamma and load -> carbon vs completion time per
scheduler, and the chosen scheduler's busy executors against the grid intensity.

The package pattern: :func:`panel_model` runs the carbon-agnostic baseline, CAP, PCAPS and the chosen scheduler on
the same jobs, arrivals and duration draws (:func:`workbench.carbon.simulate`) and returns a frozen
:class:`CarbonView`; the :mod:`workbench.viz.carbon` builders make the figures and :func:`~workbench.widgets.redraw`
swaps them in.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import experiments as ex
from ..carbon import SCHEDULERS
from ..experiments.carbon import REGIONS, SEASONS, carbon_run, region_intensity
from ..viz import carbon as vc
from . import FigurePane, html_table, panel, redraw

__all__ = ["CarbonView", "carbon_panel", "panel_model", "EXECUTORS", "JOB_CAP", "LOAD"]

#: Cluster of the panel (the quick scale of the ``pcaps`` reproduction): executors, per-job cap, offered load.
EXECUTORS = 50
JOB_CAP = 25
LOAD = 0.5


@dataclass(frozen=True)
class CarbonView:
    """What the carbon panel shows for one setting."""

    runs: pd.DataFrame  #: one row per scheduler: scheduler, gamma, cap_minimum, carbon_kg, mean_jct_s, ...
    busy: dict[str, np.ndarray]  #: busy executors per trace hour of the baseline and of the chosen scheduler
    intensity: np.ndarray  #: gCO2eq/kWh per trace hour from the window start


def panel_model(region: str, season: str, scheduler: str, gamma: float, jobs: int, seed: int = 0) -> CarbonView:
    """The panel's model call: ``jobs`` TPC-H jobs at load :data:`LOAD` on :data:`EXECUTORS` executors, under the
    carbon-agnostic baseline, CAP (B = K/5), PCAPS at ``gamma`` and ``scheduler`` (same jobs and draws for all).

    Each run is the ``carbon-scheduling`` experiment's own simulation (:func:`~workbench.experiments.carbon.carbon_run`)
    at the seed the experiment gives this point's replicate ``seed``, so the table's numbers are the experiment's row
    (the one the ``pcaps`` reproduction's claims average over regions and seeds).

    Examples
    --------
    >>> v = panel_model("DE", "summer", "fifo", 0.5, 5)  # doctest: +SKIP
    >>> v.runs.scheduler.tolist()  # doctest: +SKIP
    ['agnostic', 'cap', 'pcaps', 'fifo']
    """
    exp = ex.get("carbon-scheduling")
    point = {
        **exp.defaults(),
        "region": region,
        "season": season,
        "gamma": gamma,
        "load": LOAD,
        "jobs": jobs,
        "executors": EXECUTORS,
        "job_cap": JOB_CAP,
        "cap_minimum": EXECUTORS // 5,
    }
    names = list(dict.fromkeys(["agnostic", "cap", "pcaps", scheduler]))
    rows, busy = [], {}
    for name in names:
        p = {**point, "scheduler": name}
        r = carbon_run(**p, seed=ex.point_seed(exp, p, 0, seed))
        rows.append(
            {
                "scheduler": name,
                "gamma": gamma,
                "cap_minimum": EXECUTORS // 5,
                "carbon_kg": r.carbon_g / 1e3,
                "mean_jct_s": r.mean_jct_s,
                "makespan_s": r.makespan_s,
                "intensity_seen": r.carbon_g / r.energy_kwh if r.energy_kwh > 0 else 0.0,
            }
        )
        if name in ("agnostic", scheduler):
            busy[name] = r.busy_per_hour()
    return CarbonView(pd.DataFrame(rows), busy, region_intensity(region, season))


def carbon_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    region = W.Dropdown(options=list(REGIONS), value="CAISO", description="region")
    season = W.Dropdown(options=list(SEASONS), value="summer", description="season (2023)")
    scheduler = W.Dropdown(options=[s for s in SCHEDULERS if s != "cp"], value="pcaps", description="scheduler")
    gamma = W.FloatSlider(value=0.5, min=0.0, max=1.0, step=0.05, description="PCAPS gamma", readout_format=".2f")
    jobs = W.IntSlider(value=25, min=5, max=40, step=5, description="load (jobs)")
    controls = [region, season, scheduler, gamma, jobs]
    info = W.HTML()
    fig_pts = FigurePane()
    fig_busy = FigurePane()

    def update(*_):
        view = panel_model(region.value, season.value, scheduler.value, gamma.value, jobs.value)
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
            caption=f"{jobs.value} TPC-H jobs at load {LOAD:g} on {EXECUTORS} executors (each job at most "
            f"{JOB_CAP}); one trace hour per 60 simulated seconds; CAP with B = {EXECUTORS // 5}. One region and "
            "one draw of jobs and arrivals (the experiment's seed 0): the reproduction's claims average the six "
            "PCAPS regions over 2 seeds (5 at full scale); one draw's carbon cut and completion-time change vary "
            "from seed to seed",
        )

    for w in controls:
        w.continuous_update = False
        w.observe(update, "value")
    update()
    return panel(controls, [fig_pts, fig_busy], info=info, fidelity="workbench.widgets.carbon:carbon_panel")
