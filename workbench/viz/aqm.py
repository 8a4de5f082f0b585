"""Figures for the AQM model (RED/ECN, PRED, DCTCP): functions of model outputs (tidy DataFrames of the PRED
experiments in :mod:`workbench.experiments.aqm`), no computation of their own."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from . import COLORS, colors_of, style
from .experiments import errorbar_lines

__all__ = ["queue_vs_concurrency", "fct_by_class", "fct_vs_load", "pred_vs_baselines"]

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
