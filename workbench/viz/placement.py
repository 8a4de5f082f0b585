"""Figures for the hotspot study: latency vs utilization and random vs hotspot-aware placement."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..distributions import ecdf
from . import CDF_POINTS, COLORS, colors_of, mark_x, style

__all__ = ["latency_curve", "hot_tor_bars", "utilization_cdf"]

_POLICY_COLORS = colors_of("random", "aware")


def latency_curve(
    curves: dict[str, pd.DataFrame],
    *,
    knee: float | None = None,
    knee_label: str = "knee",
    title: str = "Queueing latency vs link utilization",
) -> go.Figure:
    """Mean (solid) and p99 (dotted) latency per named curve (``utilization, mean_latency_s, tail_latency_s``);
    ``knee`` marked with ``knee_label`` (say which curve it is the knee of)."""
    fig = go.Figure()
    palette = [COLORS["poisson"], COLORS["gamma"], COLORS["weibull"], COLORS["theory"]]
    for i, (name, df) in enumerate(curves.items()):
        color = palette[i % len(palette)]
        fig.add_trace(
            go.Scatter(
                x=df["utilization"],
                y=df["mean_latency_s"] * 1e6,
                name=f"{name} mean",
                mode="lines+markers",
                line={"color": color},
            )
        )
        fig.add_trace(
            go.Scatter(
                x=df["utilization"],
                y=df["tail_latency_s"] * 1e6,
                name=f"{name} p99",
                mode="lines",
                line={"color": color, "dash": "dot"},
            )
        )
    if knee is not None:
        mark_x(fig, knee, f"{knee_label} {knee:.0%}", color=COLORS["theory"])
    fig.update_yaxes(type="log")
    return style(fig, title=title, x_title="link utilization", y_title="latency (µs, log scale)")


def hot_tor_bars(study: pd.DataFrame, *, title: str = "Hot ToRs and where network-intensive tasks land") -> go.Figure:
    """Mean hot-ToR fraction and fraction of network-intensive tasks on hot ToRs per policy."""
    agg = study.groupby("policy", sort=False)[["hot_fraction", "intensive_on_hot", "other_on_hot"]].mean()
    fig = go.Figure()
    labels = {
        "hot_fraction": "ToRs that are hot",
        "intensive_on_hot": "network-intensive tasks on hot ToRs",
        "other_on_hot": "other tasks on hot ToRs",
    }
    for policy, row in agg.iterrows():
        fig.add_trace(
            go.Bar(
                x=[labels[c] for c in agg.columns],
                y=row.to_numpy() * 100,
                name=policy,
                marker_color=_POLICY_COLORS.get(policy),
            )
        )
    fig.update_layout(barmode="group")
    return style(fig, title=title, x_title="", y_title="share (%)")


def utilization_cdf(
    utilization: dict[str, np.ndarray],
    *,
    threshold: float | None = None,
    title: str = "ToR uplink utilization across racks",
) -> go.Figure:
    """Empirical CDF of ToR utilization per policy (at most :data:`~workbench.viz.CDF_POINTS` points a
    line)."""
    fig = go.Figure()
    for policy, u in utilization.items():
        x, y = ecdf(np.asarray(u, dtype=float), points=CDF_POINTS)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                name=policy,
                mode="lines",
                line={"color": _POLICY_COLORS.get(policy)},
            )
        )
    if threshold is not None:
        mark_x(fig, threshold, "hot", color=COLORS["theory"])
    return style(fig, title=title, x_title="ToR uplink utilization", y_title="fraction of ToRs")
