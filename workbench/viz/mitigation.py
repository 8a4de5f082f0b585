"""Figures of the failure-mitigation study (SWARM, :mod:`workbench.fabric.mitigation`)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import style

__all__ = ["mitigation_bars", "improvement_vs_drop", "rank_agreement", "MITIGATION_COLORS"]

MITIGATION_COLORS = {
    "none": "#7f7f7f",
    "disable": "#d62728",
    "drain": "#ff7f0e",
    "reweight": "#2ca02c",
    "operator": "#1f77b4",
}


def _need(table: pd.DataFrame, cols: set[str]) -> None:
    missing = cols - set(table.columns)
    if missing:
        raise ValueError(f"table is missing column(s) {', '.join(sorted(missing))}; it needs {', '.join(sorted(cols))}")


def mitigation_bars(table: pd.DataFrame, *, title: str = "Connection-level performance per mitigation") -> go.Figure:
    """Small-flow p99 FCT (ms) and long-flow mean throughput (Gbit/s) per mitigation, side by side; one bar group per
    ``engine`` if the table has that column (rows: ``mitigation, small_p99_fct_ms, long_tput_gbps``)."""
    _need(table, {"mitigation", "small_p99_fct_ms", "long_tput_gbps"})
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("small flows (<100 KB): p99 FCT", "long flows (>=1 MB): mean throughput")
    )
    groups = table.groupby("engine", sort=False) if "engine" in table.columns else [("", table)]
    patterns = ["", "/"]
    for k, (engine, d) in enumerate(groups):
        colors = [MITIGATION_COLORS.get(m, "#444444") for m in d.mitigation]
        for col, metric in ((1, "small_p99_fct_ms"), (2, "long_tput_gbps")):
            fig.add_trace(
                go.Bar(
                    x=list(d.mitigation),
                    y=d[metric],
                    marker={"color": colors, "pattern": {"shape": patterns[k % 2]}},
                    name=str(engine) or "estimator",
                    legendgroup=str(engine),
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
    fig.update_yaxes(title_text="p99 FCT (ms)", type="log", row=1, col=1)
    fig.update_yaxes(title_text="throughput (Gbit/s)", row=1, col=2)
    fig.update_layout(barmode="group")
    return style(fig, title=title, x_title="mitigation")


def improvement_vs_drop(
    table: pd.DataFrame, *, title: str = "Small-flow p99 FCT: operators' rule / SWARM's choice"
) -> go.Figure:
    """The ratio of the operators' rule's small-flow p99 FCT to that of the estimator's top-ranked mitigation, per
    drop rate (rows: ``drop_rate, load, ratio``), one line per load."""
    _need(table, {"drop_rate", "load", "ratio"})
    fig = go.Figure()
    for load, d in table.sort_values("drop_rate").groupby("load"):
        fig.add_trace(go.Scatter(x=d.drop_rate, y=d.ratio, mode="lines+markers", name=f"load {load:.0%}"))
    fig.add_hline(y=1.0, line_dash="dot", line_color="#444444")
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return style(fig, title=title, x_title="drop rate of the lossy cables", y_title="p99 FCT ratio (x)")


def rank_agreement(table: pd.DataFrame, *, title: str = "Estimator vs per-packet ranking per scenario") -> go.Figure:
    """Kendall's tau between the estimator's and the per-packet engine's combined rankings per scenario (rows:
    ``scenario, kendall_tau, top1_agree``); bars coloured by whether the top choices agree."""
    _need(table, {"scenario", "kendall_tau", "top1_agree"})
    fig = go.Figure(
        go.Bar(
            x=list(table.scenario),
            y=table.kendall_tau,
            marker={"color": ["#2ca02c" if a else "#d62728" for a in table.top1_agree]},
            text=["top-1 agrees" if a else "top-1 differs" for a in table.top1_agree],
            textposition="outside",
            name="Kendall tau",
        )
    )
    fig.update_yaxes(range=[-1.1, 1.25])
    return style(fig, title=title, x_title="scenario", y_title="Kendall tau (1 = same order)")
