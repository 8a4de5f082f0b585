"""Fault-localization panel: fault kind, severity, job size, noise and detector -> the timing heat map with ground
truth and suspects marked, precision/recall curves, and each detector's verdict on this job."""

from __future__ import annotations

import ipywidgets as W
import pandas as pd

from .._rng import keyed_int
from ..training import diagnosis as dg
from ..viz import diagnosis as vd
from . import FigurePane, html_table, panel, redraw

__all__ = ["fault_panel", "panel_model"]

SIZES = (64, 256, 1024, 4096, 16384)
#: Precision/recall curves are swept on jobs of at most this many ranks, so the panel answers in a few seconds.
PR_MAX_RANKS = 1024
#: Faulty jobs (and as many healthy ones) behind the panel's precision/recall curves.
PR_JOBS = 2


def panel_model(
    kind: str,
    severity: float,
    ranks: int,
    noise_level: float,
    collective: str = "ring",
    detector: str = "all",
    seed: int = 0,
    pr_jobs: int = PR_JOBS,
) -> dict:
    """The panel's model call: one job with its suspects per detector, and the threshold sweep behind the curves.

    Examples
    --------
    >>> out = panel_model("nic_degraded", 2.0, 64, 1.0, pr_jobs=1)
    >>> sorted(out["suspects"]), out["scores"].loc["c4d", "top1"]
    (['c4d', 'holmes', 'minder', 'naive', 'perftracker'], True)
    """
    names = list(dg.DETECTORS) if detector == "all" else [detector]
    sc = dg.Scenario(kind, ranks, severity, noise_level, collective, iterations=300, onset_iteration=100, seed=seed)
    signals = sc.signals()
    suspects = {n: dg.DETECTORS[n](signals) for n in names}
    scores = pd.DataFrame({n: dg.score_suspects(signals, s) for n, s in suspects.items()}).T
    pr_ranks = min(ranks, PR_MAX_RANKS)
    jobs = [
        dg.Scenario(kind, pr_ranks, severity, noise_level, collective, 300, 100, seed=keyed_int(seed, "faulty", i))
        for i in range(pr_jobs)
    ]
    jobs += [
        dg.Scenario("none", pr_ranks, 1.0, noise_level, collective, 300, 100, seed=keyed_int(seed, "healthy", i))
        for i in range(pr_jobs)
    ]
    return {
        "signals": signals,
        "suspects": suspects,
        "scores": scores,
        "sweep": dg.threshold_sweep(jobs, names),
        "pr_ranks": pr_ranks,
    }


def _blamed(suspects: pd.DataFrame) -> str:
    """The function and scope a detector blamed (PerfTracker), or empty."""
    if "function" not in suspects.columns or suspects.empty:
        return ""
    return f"{suspects['function'].iloc[0]} ({suspects['scope'].iloc[0]})"


def fault_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    kind = W.Dropdown(options=[*dg.FAULT_KINDS, *dg.FUNCTION_FAULTS], value="nic_degraded", description="fault")
    severity = W.FloatSlider(value=2.0, min=1.2, max=4.0, step=0.1, description="severity")
    ranks = W.Dropdown(options=list(SIZES), value=256, description="ranks")
    noise = W.FloatSlider(value=1.0, min=0.0, max=3.0, step=0.25, description="noise multiplier")
    collective = W.Dropdown(options=list(dg.COLLECTIVES), value="ring", description="collective")
    detector = W.Dropdown(options=["all", *dg.DETECTORS], value="all", description="detector")
    info = W.HTML()
    heat = FigurePane()
    curves = FigurePane()

    def update(*_):
        out = panel_model(kind.value, severity.value, ranks.value, noise.value, collective.value, detector.value)
        redraw(heat, vd.timing_heatmap(out["signals"], out["suspects"]), height=340)
        redraw(curves, vd.pr_curves(out["sweep"]), height=340)
        f = out["signals"].faults[0]
        yes = {True: "yes", False: "no"}
        rows = [
            [
                n,
                yes[bool(r.alarm)],
                yes[bool(r.top1)],
                yes[bool(r.top3)],
                "" if pd.isna(r.delay_s) else f"{r.delay_s:.1f}",
                _blamed(out["suspects"][n]),
            ]
            for n, r in out["scores"].iterrows()
        ]
        info.value = html_table(
            ["detector", "alarm", "top-1", "top-3", "delay (s)", "function (workers)"],
            rows,
            caption=f"one job (seed 0): fault on rank {f.rank} (machine "
            f"{f.machine(out['signals'].job.ranks_per_machine)}) from iteration {f.onset_iteration}; whether a "
            "detector finds it varies from job to job (the reproductions' claims score many jobs); curves over "
            f"{PR_JOBS} faulty and {PR_JOBS} healthy {out['pr_ranks']}-rank jobs",
        )

    for w in (kind, severity, ranks, noise, collective, detector):
        w.continuous_update = False
        w.observe(update, "value")
    update()
    return panel(
        [kind, severity, ranks, noise, collective, detector],
        [heat, curves],
        info=info,
        fidelity="workbench.widgets.diagnosis:fault_panel",
    )
