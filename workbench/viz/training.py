"""Figures for the training notebooks (07 iteration time, 08 failures): functions of model outputs only."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .._units import name_label
from . import COLORS, mark_x, style
from .fabric import ROUTING_COLORS

__all__ = [
    "breakdown",
    "gain_vs_share",
    "iteration_vs_gpus",
    "validation",
    "ettr_vs_gpus",
    "ettr_vs_interval",
    "loss_breakdown",
]

_PARTS = {
    "compute_s": ("compute", "#1f77b4"),
    "tp_comm_s": ("TP on NVLink", "#17becf"),
    "pp_p2p_s": ("PP point-to-point", "#bcbd22"),
    "moe_a2a_s": ("MoE all-to-all", "#8c564b"),
    "bubble_s": ("pipeline bubble", "#7f7f7f"),
    "dp_exposed_s": ("DP on the fabric (exposed)", "#d62728"),
    "optimizer_s": ("optimizer step", "#9467bd"),
}


def breakdown(table: pd.DataFrame, label: str = "routing", title: str = "Iteration time breakdown") -> go.Figure:
    """Stacked bars of the critical-path components (one bar per row, labelled by column ``label``)."""
    fig = go.Figure()
    x = table[label].astype(str)
    for col, (name, color) in _PARTS.items():
        if col in table and float(table[col].abs().sum()) > 0:
            fig.add_trace(go.Bar(x=x, y=table[col], name=name, marker_color=color))
    fig.update_layout(barmode="stack")
    return style(fig, title=title, x_title=label, y_title="time per iteration (s)")


def gain_vs_share(table: pd.DataFrame, title: str = "Planned paths vs ECMP: gain vs fabric share") -> go.Figure:
    """Each plan's ECMP iteration-time penalty over planned paths vs its fabric share (from routing_comparison)."""
    e = table[table.routing == "ecmp"]
    fig = go.Figure()
    for model, part in e.groupby("model" if "model" in e else "routing"):
        fig.add_trace(
            go.Scatter(
                x=100 * part.fabric_share,
                y=100 * part.gain,
                mode="markers",
                name=str(model),
                text=[f"TP{a} PP{b} DP{c}" for a, b, c in zip(part.tp, part.pp, part.dp)],
            )
        )
    fig.add_hrect(
        y0=12,
        y1=18,
        fillcolor=COLORS["ideal"],
        opacity=0.15,
        line_width=0,
        annotation_text="C4 reports ~15%",
        annotation_position="top right",
    )
    fig.add_vrect(x0=10, x1=30, fillcolor="#999999", opacity=0.08, line_width=0)
    return style(
        fig,
        title=title,
        x_title="exposed DP communication, planned paths (% of iteration)",
        y_title="ECMP iteration time over planned (%)",
    )


def iteration_vs_gpus(table: pd.DataFrame, title: str = "Iteration time vs GPUs (weak scaling)") -> go.Figure:
    """Iteration time vs GPU count, one line per routing (from weak_scaling)."""
    fig = go.Figure()
    for r, part in table.groupby("routing", sort=False):
        fig.add_trace(
            go.Scatter(
                x=part.gpus,
                y=part.iteration_s,
                mode="lines+markers",
                name=r,
                line={"color": ROUTING_COLORS.get(r, "#444444")},
            )
        )
    ticks = sorted(set(table.gpus.tolist()))
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(t) for t in ticks])
    return style(fig, title=title, x_title="GPUs", y_title="time per iteration (s)")


def validation(points: pd.DataFrame, title: str = "Iteration model vs published training runs") -> go.Figure:
    """Signed error of the iteration model on every run of the validation corpus against pipeline depth (left) and
    the job's GPUs (right), one colour per source (:data:`~workbench.viz.COLORS`), from
    :func:`workbench.training.validation.validation_points`: the error as an iteration time (``time_error``, positive
    when the model is slower), filled markers for the headline rows, open ones for rows whose unstated settings
    could move them by more than 5%."""
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=("against pipeline depth", "against the job's GPUs"))  # fmt: skip
    for source, part in points.groupby("source", sort=False):
        color = COLORS.get(source, "#444444")
        name = str(part.source_name.iloc[0])
        for headline, sub in part.groupby("headline"):
            for col, x in ((1, sub.pp), (2, sub.gpus)):
                fig.add_trace(
                    go.Scatter(
                        x=x,
                        y=100 * sub.time_error,
                        mode="markers",
                        name=name,
                        legendgroup=name,
                        showlegend=bool(col == 1 and (headline or not part.headline.any())),
                        marker={
                            "color": color,
                            "size": 9,
                            "symbol": "circle" if headline else "circle-open",
                            "line": {"width": 1.5, "color": color},
                        },
                        text=sub.id,
                        hovertemplate="%{text}: %{y:.1f}%<extra></extra>",
                    ),
                    row=1,
                    col=col,
                )
    for col in (1, 2):
        fig.add_hline(y=0.0, line_dash="dash", line_color="#444444", row=1, col=col)
        fig.update_xaxes(type="log", row=1, col=col)
    fig.update_xaxes(title_text="pipeline stages (PP)", row=1, col=1)
    fig.update_xaxes(title_text="GPUs", row=1, col=2)
    style(fig, title=title)
    fig.update_yaxes(title_text="model over published iteration time, minus 1 (%)", row=1, col=1)
    return fig


def ettr_vs_gpus(table: pd.DataFrame, title: str = "Effective training time ratio vs job size") -> go.Figure:
    """ETTR vs GPUs per recovery mode (from the TrainMover reproduction's table)."""
    fig = go.Figure()
    for mode, color in (("checkpoint", COLORS["ecmp"]), ("live", COLORS["ideal"])):
        part = table[table["mode"] == mode]
        fig.add_trace(
            go.Scatter(
                x=part.gpus,
                y=part.ettr,
                mode="lines+markers",
                line={"color": color},
                name="checkpoint-restart" if mode == "checkpoint" else "live migration",
            )
        )
    fig.update_xaxes(type="log")
    return style(fig, title=title, x_title="GPUs in the job", y_title="ETTR (productive / wall time)")


def ettr_vs_interval(curve: pd.DataFrame, young_daly_s: float, title: str = "ETTR vs checkpoint interval") -> go.Figure:
    """Closed-form ETTR and Monte-Carlo (+-2 standard errors) vs interval, with the Young/Daly interval marked."""
    m = curve.interval_s / 60
    fig = go.Figure(
        go.Scatter(
            x=m, y=curve.ettr, mode="lines", name="closed form (renewal-reward)", line={"color": COLORS["theory"]}
        )
    )
    fig.add_trace(
        go.Scatter(
            x=m,
            y=curve.mc_ettr,
            mode="markers",
            name="Monte-Carlo (month)",
            error_y={"type": "data", "array": 2 * curve.mc_se},
            marker={"color": "#1f77b4"},
        )
    )
    fig.update_xaxes(type="log")
    mark_x(fig, young_daly_s / 60, "Young/Daly", color=COLORS["ecmp"], position="bottom")
    return style(fig, title=title, x_title="checkpoint interval (min)", y_title="ETTR (productive / wall time)")


def loss_breakdown(table: pd.DataFrame, title: str = "GPU-hours lost per day") -> go.Figure:
    """Stacked GPU-hours lost per day by category; ``table`` has ``label, category, gpu_hours_per_day``."""
    fig = go.Figure()
    for cat, part in table.groupby("category", sort=False):
        fig.add_trace(go.Bar(x=part.label.astype(str), y=part.gpu_hours_per_day, name=name_label(str(cat))))
    fig.update_layout(barmode="stack")
    return style(fig, title=title, x_title="scenario", y_title="GPU-hours lost per day")
