"""Figures for checkpointing (notebook 12): ETTR vs checkpoint interval per method, and the stall per method vs job
size. Functions of model outputs only."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from . import style

__all__ = ["ettr_vs_interval", "stall_vs_gpus"]

COLORS = {"bytecheckpoint": "#2ca02c", "dcp": "#d62728", "mcp": "#ff7f0e"}
NAMES = {"bytecheckpoint": "ByteCheckpoint", "dcp": "DCP-like (blocking)", "mcp": "MCP-like (blocking)"}


def ettr_vs_interval(curve: pd.DataFrame, optimum: pd.DataFrame | None = None, title: str = "ETTR vs checkpoint "
                     "interval") -> go.Figure:  # fmt: skip
    """One line per method (``curve``: rows of method, interval_s, ettr); ``optimum`` (method, interval_s, ettr)
    marks each method's optimal interval."""
    fig = go.Figure()
    for m, g in curve.groupby("method", sort=False):
        fig.add_trace(go.Scatter(x=g.interval_s, y=g.ettr, mode="lines", name=NAMES.get(m, m),
                                 line={"color": COLORS.get(m)}))  # fmt: skip
    if optimum is not None:
        for m, r in optimum.set_index("method").iterrows():
            fig.add_trace(go.Scatter(x=[r.interval_s], y=[r.ettr], mode="markers", showlegend=False,
                                     marker={"size": 10, "color": COLORS.get(str(m)), "symbol": "diamond"},
                                     hovertemplate=f"{NAMES.get(str(m), m)} optimum: %{{x:.0f}} s<extra></extra>"))  # fmt: skip
    fig.update_xaxes(type="log")
    return style(fig, title=title, x_title="work between checkpoints (s)", y_title="ETTR (productive / wall time)")


def stall_vs_gpus(table: pd.DataFrame, title: str = "Checkpoint stall per save vs job size") -> go.Figure:
    """One line per method (``table``: rows of gpus, method, stall_s), log-log."""
    fig = go.Figure()
    for m, g in table.groupby("method", sort=False):
        fig.add_trace(go.Scatter(x=g.gpus, y=g.stall_s, mode="lines+markers", name=NAMES.get(m, m),
                                 line={"color": COLORS.get(m)}))  # fmt: skip
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return style(fig, title=title, x_title="GPUs", y_title="training stalled per checkpoint (s)")
