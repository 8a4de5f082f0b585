"""Figures for the AQM model (RED/ECN, PRED, DCTCP): functions of model outputs (tidy DataFrames of the PRED
experiments in :mod:`workbench.experiments.aqm`), no computation of their own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import COLORS, colors_of, style
from .experiments import errorbar_lines

__all__ = ["queue_vs_concurrency", "fct_by_class", "fct_vs_load", "pred_vs_baselines", "validation_envelope"]

_MARKING_COLORS = colors_of("static", "pred")


def queue_vs_concurrency(frame: pd.DataFrame, *, title: str = "Standing queue vs concurrent long flows") -> go.Figure:
    """Queue length vs number of long flows; ``frame`` has ``n_flows, queue_pkts, marking, model`` columns.

    ``model`` is ``"fluid"`` (drawn as lines) or ``"packet"`` (markers).
    """
    fig = go.Figure()
    for (marking, model), sub in frame.groupby(["marking", "model"], sort=False):
        color = _MARKING_COLORS.get(marking, COLORS["theory"])
        line = model == "fluid"
        fig.add_trace(
            go.Scatter(
                x=sub["n_flows"],
                y=sub["queue_pkts"],
                name=f"{marking} ({model})",
                mode="lines" if line else "markers+lines",
                line={"color": color, "dash": "solid" if line else "dot"},
                marker={"size": 9, "symbol": "circle" if marking == "static" else "diamond"},
            )
        )
    fig.update_xaxes(type="log")
    return style(fig, title=title, x_title="concurrent long flows (log scale)", y_title="mean queue (packets)")


def fct_by_class(summary: pd.DataFrame, *, title: str = "Flow completion time by size class") -> go.Figure:
    """Grouped bars of p50 and p99 FCT; ``summary`` has ``marking, size_class, p50_s, p99_s``."""
    fig = go.Figure()
    for marking, sub in summary.groupby("marking", sort=False):
        color = _MARKING_COLORS.get(marking, COLORS["theory"])
        fig.add_trace(
            go.Bar(x=sub["size_class"], y=sub["p50_s"] * 1e3, name=f"{marking} p50", marker_color=color, opacity=0.55)
        )
        fig.add_trace(go.Bar(x=sub["size_class"], y=sub["p99_s"] * 1e3, name=f"{marking} p99", marker_color=color))
    fig.update_layout(barmode="group")
    fig.update_yaxes(type="log")
    return style(fig, title=title, x_title="flow size class", y_title="FCT (ms, log scale)")


def fct_vs_load(summary: pd.DataFrame, *, title: str = "FCT vs load: static vs PRED, ECMP vs spraying") -> go.Figure:
    """p50 and p99 FCT (ms) vs load by size class, mean over seeds with error bars of one standard error.

    ``summary`` is :func:`workbench.experiments.summarize` of a ``pred-fct-vs-load`` sweep over ``p50_s`` and
    ``p99_s``: one panel per percentile (rows) and size class (columns), colour by marking, dash by routing.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"load": [0.5, 0.9] * 2, "marking": "pred", "routing": "ecmp", "size_class": "small",
    ...                   "quantity": ["p50_s", "p50_s", "p99_s", "p99_s"], "mean": [1e-4, 2e-4, 1e-3, 3e-3],
    ...                   "sem": 1e-5})
    >>> fig = fct_vs_load(s)
    >>> len(fig.data), fig.data[0].name
    (2, 'pred, ecmp')
    """
    series = [c for c in ("marking", "routing") if c in summary.columns]
    return errorbar_lines(
        summary.replace({"quantity": {"p50_s": "p50", "p99_s": "p99"}}),
        "load",
        series=series,
        facet_col="size_class",
        facet_row="quantity",
        scale=1e3,
        log_y=True,
        title=title,
        x_title="offered load (fraction of host link)",
        y_title="FCT (ms, log scale)",
    )


_MIX_COLORS = {"websearch": "#1f77b4", "background": "#d62728", "incast": "#2ca02c"}


def pred_vs_baselines(
    table: pd.DataFrame,
    *,
    claimed_pct: tuple[float, float] = (-80.0, -68.0),
    title: str = "PRED's change of small-flow p99 FCT vs each static baseline, leaf-spine at 90% load",
) -> go.Figure:
    """Grouped bars of PRED's change of the small-flow p99 FCT (percent, negative: PRED lower) against each static
    baseline, one colour per workload mix, error bars one standard error over seeds, and the paper's claimed range
    as a shaded band.

    ``table`` has ``mix, baseline, change_pct, change_sem_pct`` (:func:`workbench.reproductions.pred.mix_table`).

    Examples
    --------
    >>> t = pd.DataFrame({"mix": ["websearch", "background"], "baseline": "step-15", "change_pct": [2.0, -40.0],
    ...                   "change_sem_pct": [3.0, 5.0]})
    >>> [d.name for d in pred_vs_baselines(t).data]
    ['websearch', 'background']
    """
    fig = go.Figure()
    for mix, sub in table.groupby("mix", sort=False):
        fig.add_trace(
            go.Bar(
                x=sub["baseline"],
                y=sub["change_pct"],
                error_y={"type": "data", "array": sub["change_sem_pct"].fillna(0.0)},
                name=str(mix),
                marker_color=_MIX_COLORS.get(str(mix), COLORS["theory"]),
            )
        )
    lo, hi = claimed_pct
    fig.add_hrect(y0=lo, y1=hi, fillcolor=COLORS["pred"], opacity=0.15, line_width=0)
    fig.add_annotation(
        xref="paper", x=0.01, y=(lo + hi) / 2, text="paper: 68-80% lower", showarrow=False, xanchor="left"
    )
    fig.add_hline(y=0.0, line={"color": COLORS["theory"], "width": 1})
    fig.update_layout(barmode="group")
    return style(
        fig,
        title=title,
        x_title="static baseline (step K or RED min-max, packets)",
        y_title="PRED vs static (%, negative: PRED lower)",
    )


def _workload_label(row) -> str:
    """A workload as an axis category: its load, arrival window and seed (``90% 25 ms``, ``30% 20 ms s1``)."""
    label = f"{row.load:.0%} {row.window_ms:g} ms"
    return label if row.workload.endswith("ms") else f"{label} s{row.seed}"


def validation_envelope(
    points: pd.DataFrame,
    *,
    tolerance: float = 0.15,
    title: str = "Per-packet engine vs two references (ns-3, htsim): nine FCT statistics per workload",
) -> go.Figure:
    """The engine's nine FCT statistics against the envelope two reference simulators span, one panel per size class
    (rows) and statistic (columns), one category per workload.

    ``points`` is :func:`workbench.aqm.validation.validation_points`. Each workload's envelope is drawn as a bar from
    ``(1 - tolerance)`` x the lower reference to ``(1 + tolerance)`` x the higher; the references are markers on
    it, the engine a cross (red where it lies outside).

    Examples
    --------
    >>> p = pd.DataFrame({"workload": "w_20ms_s1", "load": 0.5, "window_ms": 20.0, "seed": 1,
    ...                   "size_class": ["small"] * 3, "statistic": ["mean", "p50", "p99"], "ns3": [1e-4, 5e-5, 1e-3],
    ...                   "htsim": [2e-4, 6e-5, 2e-3], "model": [1.5e-4, 9e-5, 1.1e-3],
    ...                   "within": [True, False, True]})
    >>> p["reference_low"], p["reference_high"] = p[["ns3", "htsim"]].min(axis=1), p[["ns3", "htsim"]].max(axis=1)
    >>> [t.name for t in validation_envelope(p).data][:4]
    ['envelope: 0.85 x lower to 1.15 x higher reference', 'ns-3', 'htsim', 'workbench engine']
    """
    points = points.assign(label=[_workload_label(r) for r in points.itertuples()])
    classes = list(pd.unique(points["size_class"]))
    stats = list(pd.unique(points["statistic"]))
    fig = make_subplots(
        rows=len(classes),
        cols=len(stats),
        shared_xaxes=True,
        subplot_titles=[f"{c}, {s}" for c in classes for s in stats],
        horizontal_spacing=0.05,
        vertical_spacing=0.08,
    )
    band = f"envelope: {1 - tolerance:.2f} x lower to {1 + tolerance:.2f} x higher reference"
    shown: set[str] = set()

    def add(trace: go.Scatter, i: int, j: int) -> None:
        trace.showlegend = trace.name not in shown
        trace.legendgroup = trace.name
        shown.add(trace.name)
        fig.add_trace(trace, row=i, col=j)

    for i, c in enumerate(classes, start=1):
        for j, s in enumerate(stats, start=1):
            p = points[(points["size_class"] == c) & (points["statistic"] == s)]
            lo, hi = (1 - tolerance) * p["reference_low"] * 1e3, (1 + tolerance) * p["reference_high"] * 1e3
            xs = np.repeat(p["label"].to_numpy(object), 3)
            ys = np.column_stack([lo, hi, np.full(len(p), np.nan)]).ravel()
            add(go.Scatter(x=xs, y=ys, name=band, mode="lines", line={"color": "#cccccc", "width": 10}), i, j)
            for ref, col, symbol in (("ns-3", "ns3", "circle-open"), ("htsim", "htsim", "square-open")):
                add(go.Scatter(x=p["label"], y=p[col] * 1e3, name=ref, mode="markers",
                               marker={"color": COLORS[ref], "symbol": symbol, "size": 9}), i, j)  # fmt: skip
            inside = p["within"].astype(bool)
            for name, sel, color in (
                ("workbench engine", inside, COLORS["workbench"]),
                ("workbench engine, outside the envelope", ~inside, "#d62728"),
            ):
                if sel.any():
                    add(go.Scatter(x=p["label"][sel], y=p["model"][sel] * 1e3, name=name, mode="markers",
                                   marker={"color": color, "symbol": "x", "size": 8}), i, j)  # fmt: skip
    fig.update_yaxes(type="log")
    # axis titles before style(): the axis policy draws a facet spanning under a decade linear and drops "log scale"
    # from its title (set after, the title said log on a linear axis)
    fig.update_xaxes(title_text="workload (offered load, arrival window, seed)", row=len(classes))
    fig.update_yaxes(title_text="FCT (ms, log scale)", col=1)
    style(fig, title=title, height=max(420, 300 * len(classes)))
    fig.update_xaxes(tickangle=-45, row=len(classes))
    return fig
