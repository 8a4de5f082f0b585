"""Figures for fault localization: the timing heat map with ground truth and suspects, precision/recall curves,
detection delay against job size, and localization of function-level faults (functions of
:mod:`workbench.training.diagnosis` outputs)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import colors_of, label, style

__all__ = ["DETECTOR_COLORS", "timing_heatmap", "pr_curves", "delay_vs_size", "function_fault_bars"]

DETECTOR_COLORS = colors_of("naive", "c4d", "minder", "holmes", "perftracker")
#: Marker symbol per detector (curves that run together stay apart).
DETECTOR_SYMBOLS = {"naive": "x", "c4d": "circle", "minder": "square", "holmes": "diamond", "perftracker": "star"}
_SYMBOLS = {"naive": "x", "c4d": "diamond", "minder": "square", "holmes": "triangle-up", "perftracker": "star"}


def timing_heatmap(
    signals, suspects: Mapping[str, pd.DataFrame] | None = None, *, max_ranks: int = 96, max_iterations: int = 400
) -> go.Figure:
    """Each rank's excess time per iteration (compute + transmit minus the iteration's median), with the fault's
    ground truth (onset and rank) and each detector's top suspects at their alarm iteration marked.

    ``signals`` is a job's :class:`~workbench.training.diagnosis.Signals` (with ``suspects``: detector name ->
    suspects), or already the table of what is drawn
    (:func:`~workbench.training.diagnosis.evaluate.timing_view`, e.g. an experiment's rows). Rows are a spread of
    ranks (the faulty and suspected ones always included); machine-level suspects are drawn on their machine's first
    rank.

    Examples
    --------
    >>> from workbench.training.diagnosis import Fault, JobSpec, simulate, c4d
    >>> s = simulate(JobSpec(ranks=64), 100, Fault("slow_gpu", 9, 40), seed=0)
    >>> len(timing_heatmap(s, {"c4d": c4d.detect(s)}).data)
    3
    """
    if isinstance(signals, pd.DataFrame):
        view = signals
    else:
        from ..training.diagnosis.evaluate import timing_view

        view = timing_view(signals, suspects, max_ranks=max_ranks, max_iterations=max_iterations)
    cells = view[view.part == "cell"].pivot(index="rank", columns="iteration", values="excess_s")
    excess = cells.to_numpy(float)
    labels = [str(int(r)) for r in cells.index]
    fig = go.Figure(
        go.Heatmap(
            x=cells.columns.to_numpy(),
            y=labels,
            z=excess,
            colorscale="Viridis",
            zmin=0,
            zmax=float(np.nanpercentile(excess, 99.9)) or 1.0,
            colorbar={"title": {"text": "excess (s)"}},
            name="excess time",
            hovertemplate="iteration %{x}<br>rank %{y}<br>%{z:.3f} s<extra></extra>",
        )
    )
    for f in view[view.part == "fault"].itertuples():
        fig.add_scatter(
            x=[int(f.iteration)],
            y=[str(int(f.rank))],
            mode="markers",
            name=f"fault: {label(f.fault_kind)}",
            marker={"symbol": "star", "size": 16, "color": "white", "line": {"color": "black", "width": 1.5}},
        )
    shown = view[view.part == "suspect"]
    for name, top in shown.groupby("detector", sort=False):
        fig.add_scatter(
            x=top.iteration,
            y=[str(int(r)) for r in top["rank"]],
            mode="markers",
            name=f"{name} suspects",
            marker={
                "symbol": _SYMBOLS.get(str(name), "circle"),
                "size": 12,
                "color": DETECTOR_COLORS.get(str(name), "black"),
                "line": {"color": "white", "width": 1},
            },
        )
    style(
        fig,
        title="Per-rank excess time over the iteration median",
        x_title="iteration",
        y_title="rank (a spread of ranks)",
        height=420,
    )
    fig.update_yaxes(type="category", showticklabels=len(labels) <= 40)
    return fig


#: Recall between neighbouring detectors drawn side by side in :func:`pr_curves` (their points often coincide).
PR_DODGE = 0.03


def pr_curves(sweep: pd.DataFrame) -> go.Figure:
    """Precision against recall for each detector as its threshold sweeps (:func:`~workbench.training.diagnosis.
    evaluate.threshold_sweep`); a threshold with no alarm has no precision and is not drawn. Each curve is the path
    of the threshold from low to high (recall never rises along it), with a marker symbol per detector.

    Over a few jobs recall takes few values (0, 0.5, 1 over two faulty jobs) and detectors land on the same points,
    one marker on top of another. So the detectors are drawn side by side, like grouped bars: each is shifted by a
    fixed multiple of :data:`PR_DODGE` in recall (the axis title says so); the hover shows the true values.

    Examples
    --------
    >>> t = pd.DataFrame({"detector": ["c4d"] * 2 + ["minder"], "threshold": [3.0, 6.0, 2.0],
    ...                   "precision": [0.5, 1.0, 1.0], "recall": [1.0, 0.9, 0.9], "f1": [0.67, 0.95, 0.95]})
    >>> f = pr_curves(t)
    >>> [np.round(tr.x, 3).tolist() for tr in f.data], [tr.customdata[:, 0].tolist() for tr in f.data]
    ([[0.985, 0.885], [0.915]], [[1.0, 0.9], [0.9]])
    """
    fig = go.Figure()
    groups = [(name, g) for name, g in sweep.groupby("detector", sort=False)]
    for k, (name, g) in enumerate(groups):
        g = g.dropna(subset=["precision"]).sort_values("threshold")
        shift = (k - (len(groups) - 1) / 2) * PR_DODGE
        fig.add_scatter(
            x=g.recall + shift,
            y=g.precision,
            mode="lines+markers",
            name=name,
            line={"color": DETECTOR_COLORS.get(name)},
            marker={"symbol": DETECTOR_SYMBOLS.get(name, "circle"), "size": 8},
            customdata=np.column_stack([g.recall, g.threshold]),
            hovertemplate=f"{name}, threshold %{{customdata[1]:g}}<br>recall %{{customdata[0]:.2f}}<br>"
            "precision %{y:.2f}<extra></extra>",
        )
    half = (len(groups) - 1) / 2 * PR_DODGE
    style(
        fig,
        title="Precision vs recall as each detector's threshold sweeps",
        x_title=f"recall (each detector shifted ≤ ±{half:.2g})" if half else "recall",
        y_title="precision",
        height=420,
    )
    fig.update_xaxes(range=[-0.02 - half, 1.02 + half])
    fig.update_yaxes(range=[-0.02, 1.02])
    return fig


def delay_vs_size(quality: pd.DataFrame) -> go.Figure:
    """Median onset-to-alarm delay against job size per detector, from ``quality_table(..., by=("detector",
    "ranks"))``.

    Examples
    --------
    >>> q = pd.DataFrame({"detector": ["c4d", "c4d"], "ranks": [64, 1024], "median_delay_s": [5.0, 6.0]})
    >>> len(delay_vs_size(q).data)
    1
    """
    fig = go.Figure()
    for name, g in quality.groupby("detector", sort=False):
        g = g.sort_values("ranks")
        fig.add_scatter(
            x=g.ranks, y=g.median_delay_s, mode="lines+markers", name=name, line={"color": DETECTOR_COLORS.get(name)}
        )
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return style(
        fig,
        title="Detection delay vs job size (correct alarms, median over fault kinds)",
        x_title="ranks (GPUs)",
        y_title="onset to alarm (s)",
        height=380,
    )


def function_fault_bars(results: pd.DataFrame) -> go.Figure:
    """Share of jobs each detector localizes, per function-level fault and scope, from
    :func:`~workbench.training.diagnosis.evaluate` rows (with ``scope``, ``top1``, and PerfTracker's ``named``: the
    machine found and the slowed function named).

    Examples
    --------
    >>> r = pd.DataFrame({"kind": ["gc_pause"] * 2, "scope": ["all"] * 2, "detector": ["c4d", "perftracker"],
    ...                   "top1": [False, True], "named": [False, True]})
    >>> len(function_fault_bars(r).data)
    3
    """
    r = results.assign(case=results.kind.map(label) + " / " + results.scope.fillna("machine"))
    cases = list(dict.fromkeys(r.case))
    fig = go.Figure()
    for name, g in r.groupby("detector", sort=False):
        rate = g.groupby("case").top1.mean().reindex(cases)
        fig.add_bar(x=cases, y=rate, name=f"{name}: right machine", marker_color=DETECTOR_COLORS.get(name))
    if "named" in r:
        g = r[r.detector == "perftracker"]
        rate = g.groupby("case").named.mean().reindex(cases)
        fig.add_bar(
            x=cases,
            y=rate,
            name="perftracker: and the function",
            marker={"color": DETECTOR_COLORS["perftracker"], "pattern": {"shape": "/"}, "opacity": 0.6},
        )
    style(
        fig,
        title="Function-level faults: share of jobs localized (on every worker, any machine is right)",
        x_title="fault / where (machine: one machine's 8 ranks; all: every worker)",
        y_title="share of jobs",
        height=400,
    )
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[0, 1.05])
    return fig
