"""Figures of the execution graph (notebook 07): one iteration's timeline (streams as rows, kernels as bars, the
critical path outlined) and the overlap breakdown per plan. Functions of model outputs (tables) only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import label, style

__all__ = ["timeline", "overlap_breakdown", "KIND_COLORS"]

KIND_COLORS = {
    "compute": "#1f77b4",
    "optimizer": "#9467bd",
    "tp_comm": "#17becf",
    "pp_comm": "#bcbd22",
    "dp_comm": "#d62728",
    "cpu_launch": "#c7c7c7",
    "cpu_sync": "#7f7f7f",
}
_PARTS = {
    "exposed_compute_s": ("exposed compute", "#1f77b4"),
    "overlapped_s": ("compute and communication overlapped", "#2ca02c"),
    "exposed_comm_s": ("exposed communication", "#d62728"),
    "other_s": ("other (bubbles, launch and sync gaps)", "#7f7f7f"),
}


def timeline(table: pd.DataFrame, title: str = "One training iteration") -> go.Figure:
    """Horizontal bars of every kernel (``timeline_table``'s rows): one row per stage and stream, bars coloured by
    kind, critical-path kernels outlined in black."""
    t = table.sort_values(["stage", "stream"], kind="stable")
    rows = [f"stage {s} {k}" for s, k in zip(t.stage, t.stream)]
    t = t.assign(row=rows)
    order = list(dict.fromkeys(rows))
    fig = go.Figure()
    for kind, color in KIND_COLORS.items():
        sel = t[t.kind == kind]
        if sel.empty:
            continue
        fig.add_trace(
            go.Bar(
                y=sel.row,
                x=(sel.end_s - sel.start_s),
                base=sel.start_s,
                orientation="h",
                name=label(kind),
                marker={"color": color, "line": {"width": np.where(sel.critical, 1.5, 0.0), "color": "#000000"}},
                hovertemplate="%{y}: %{base:.4f} s + %{x:.4f} s<extra>" + kind + "</extra>",
            )
        )
    crit = t[t.critical]
    if not crit.empty:
        mid = (crit.start_s + crit.end_s) / 2
        fig.add_trace(
            go.Scatter(x=mid, y=crit.row, mode="markers", name="critical path", marker={"color": "#000000", "size": 3})
        )
    fig.update_layout(barmode="overlay", bargap=0.25)
    fig.update_yaxes(categoryorder="array", categoryarray=order[::-1])
    return style(fig, title=title, x_title="time in the iteration (s)", y_title="stage and stream")


def overlap_breakdown(table: pd.DataFrame, label: str = "plan", title: str = "Where the iteration goes") -> go.Figure:
    """Stacked bars of exposed compute, overlap, exposed communication and other per row (labelled by ``label``)."""
    fig = go.Figure()
    x = table[label].astype(str)
    for col, (name, color) in _PARTS.items():
        fig.add_trace(go.Bar(x=x, y=table[col], name=name, marker_color=color))
    fig.update_layout(barmode="stack")
    return style(fig, title=title, x_title=label, y_title="time per iteration (s)")
