"""Figures for the fabric notebooks (packet spraying, C4).

Each builder takes model outputs (tidy tables from :mod:`workbench.fabric` or arrays) and only selects, pivots and
converts units; the numbers themselves come from the models.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import COLORS, colors_of, style

__all__ = [
    "ROUTING_COLORS",
    "ratio_vs_size",
    "uplink_heatmaps",
    "time_vs_size",
    "connections_bar",
    "slowdown_vs_gpus",
    "gain_vs_share",
    "bond_bandwidth",
]

#: One colour per routing, the same in every fabric figure.
ROUTING_COLORS = colors_of("ecmp", "mp-2", "mp-4", "mp-8", "spray", "minimal", "planned")


def _color(routing: str) -> str:
    return ROUTING_COLORS.get(routing, "#444444")


def ratio_vs_size(table: pd.DataFrame, title: str = "Max congestion vs ideal spraying") -> go.Figure:
    """Lines of ``ratio`` vs ``gpus`` per ``routing`` (a ``fabric-congestion`` sweep, :mod:`workbench.experiments.fabric`)."""
    fig = go.Figure()
    for routing, part in table.groupby("routing", sort=False):
        fig.add_trace(
            go.Scatter(
                x=part["gpus"], y=part["ratio"], mode="lines+markers", name=routing, line={"color": _color(routing)}
            )
        )
    ticks = sorted(set(table["gpus"].tolist()))
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(t) for t in ticks])
    return style(fig, title=title, x_title="GPUs (hosts)", y_title="max congestion / ideal (x)")


def uplink_heatmaps(table: pd.DataFrame, title: str) -> go.Figure:
    """One heatmap of leaf->spine link load (GB) per routing, from :func:`workbench.fabric.uplink_load_table`."""
    names = list(dict.fromkeys(table["routing"]))
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=names, horizontal_spacing=0.06)
    mats = {
        k: part.pivot(index="leaf", columns="spine", values="load_bytes").to_numpy() / 1e9
        for k, part in table.groupby("routing", sort=False)
    }
    zmax = max(float(m.max()) for m in mats.values()) or 1.0
    for i, k in enumerate(names, start=1):
        fig.add_trace(
            go.Heatmap(
                z=mats[k],
                zmin=0,
                zmax=zmax,
                colorscale="Viridis",
                showscale=i == len(names),
                colorbar={"title": {"text": "load (GB)", "side": "right"}, "thickness": 12, "tickformat": ".3~g"},
            ),
            row=1,
            col=i,
        )
        fig.update_xaxes(title_text="spine", row=1, col=i)
    fig.update_yaxes(title_text="leaf", row=1, col=1)
    style(fig, title=title)
    fig.update_layout(margin={"r": 90})  # room for the colour bar's numbers and title right of the last heatmap
    return fig


def time_vs_size(table: pd.DataFrame, title: str) -> go.Figure:
    """Collective completion time (s) vs message size (bytes) per routing, from
    a ``collective-time-vs-size`` sweep (:mod:`workbench.experiments.fabric`)."""
    fig = go.Figure()
    for routing, part in table.groupby("routing", sort=False):
        fig.add_trace(
            go.Scatter(
                x=part["size_bytes"],
                y=part["time_s"],
                mode="lines+markers",
                name=routing,
                line={"color": _color(routing)},
            )
        )
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return style(fig, title=title, x_title="message size (bytes)", y_title="completion time (s)")


def connections_bar(table: pd.DataFrame, title: str) -> go.Figure:
    """Connections (queue pairs) of the busiest host per routing, from a ``fabric-congestion`` sweep."""
    counts = table["connections_per_host"].tolist()
    fig = go.Figure(
        go.Bar(
            x=table["routing"].tolist(),
            y=counts,
            marker_color=[_color(k) for k in table["routing"]],
            text=counts,
            textposition="outside",
        )
    )
    return style(fig, title=title, x_title="routing", y_title="connections per host (count)")


def slowdown_vs_gpus(table: pd.DataFrame, title: str = "Communication slowdown of ECMP vs planned paths") -> go.Figure:
    """``slowdown`` columns vs ``gpus`` (a frame with ``gpus`` and one column per curve, e.g. from c4_gain_table)."""
    fig = go.Figure()
    for col, name, color in (
        ("nic_slowdown", "NIC bond (exact)", COLORS["ecmp"]),
        ("fabric_slowdown", "fabric (Monte-Carlo)", "#1f77b4"),
        ("slowdown", "combined", "#444444"),
    ):
        if col in table:
            part = table.drop_duplicates("gpus")
            fig.add_trace(
                go.Scatter(x=part["gpus"], y=part[col], mode="lines+markers", name=name, line={"color": color})
            )
    ticks = sorted(set(table["gpus"].tolist()))
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(t) for t in ticks])
    return style(fig, title=title, x_title="GPUs", y_title="communication time, ECMP / planned (x)")


def gain_vs_share(
    table: pd.DataFrame,
    title: str = "Runtime gain of planned paths (C4P model)",
    *,
    selected: tuple[float, float] | None = None,
) -> go.Figure:
    """Gain (%) vs communication share (%) with one line per GPU count; a band marks C4's reported ~15%;
    ``selected = (share, gain)`` (fractions) marks the point a panel's slider chose."""
    fig = go.Figure()
    for gpus, part in table.groupby("gpus"):
        fig.add_trace(go.Scatter(x=100 * part["comm_share"], y=100 * part["gain"], mode="lines", name=f"{gpus} GPUs"))
    if selected is not None:
        share, gain = selected
        fig.add_trace(
            go.Scatter(
                x=[100 * share],
                y=[100 * gain],
                mode="markers",
                name=f"selected: {100 * share:.0f}% share",
                marker={"size": 11, "symbol": "diamond", "color": "#222222"},
            )
        )
        fig.add_vline(x=100 * share, line={"dash": "dot", "color": "#888888", "width": 1})
    fig.add_hrect(
        y0=12,
        y1=18,
        fillcolor=COLORS["ideal"],
        opacity=0.15,
        line_width=0,
        annotation_text="C4 reports ~15%",
        annotation_position="top right",
    )
    return style(
        fig, title=title, x_title="communication share of iteration time (%)", y_title="iteration throughput gain (%)"
    )


def bond_bandwidth(flows: np.ndarray, effective: np.ndarray, title: str) -> go.Figure:
    """Expected effective bandwidth (fraction of ideal) vs long-lived flows per bonded NIC."""
    fig = go.Figure(
        go.Scatter(x=flows, y=effective, mode="lines+markers", name="ECMP (exact)", line={"color": COLORS["ecmp"]})
    )
    fig.add_trace(
        go.Scatter(
            x=flows,
            y=np.ones_like(effective),
            mode="lines",
            name="planned",
            line={"color": ROUTING_COLORS["planned"], "dash": "dash"},
        )
    )
    return style(fig, title=title, x_title="flows per NIC (count)", y_title="effective bandwidth (fraction of ideal)")
