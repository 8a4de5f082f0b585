"""Figures for priority preemption in LLM serving (notebook 14, FastSwitch): tail-latency gains of each
context-switch mechanism over vLLM's as one factor varies, vLLM's tail split into preemption stall and the rest, and
one point's tail latencies per mechanism. Functions of experiment tables only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .._units import number_text
from . import style

__all__ = ["MECHANISM_COLORS", "gains", "stall_split", "tails", "value_text"]

MECHANISM_COLORS = {
    "vllm": "#7f7f7f",
    "+block-groups": "#1f77b4",
    "+async": "#2ca02c",
    "+reuse": "#ff7f0e",
    "fastswitch": "#d62728",
}

_FACTOR_TITLES = {
    "rate": "priority-change rate (per iteration)",
    "block_tokens": "KV block size (tokens)",
    "pcie_gbs": "PCIe per GPU and direction (GB/s)",
    "load": "load (conversations/s)",
}


def gains(table: pd.DataFrame, factor: str, title: str | None = None) -> go.Figure:
    """Two panels (p99 TTFT, p99 TBT): each mechanism's gain over ``vllm`` (vLLM's p99 / the mechanism's, mean over
    seeds) against ``factor`` (a column of ``table``, an ``llm-preemption`` sweep), log scale."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("p99 TTFT gain over vLLM", "p99 TBT gain over vLLM"))
    for col, metric in enumerate(("p99_ttft_s", "p99_tbt_s"), start=1):
        w = table.pivot_table(index=factor, columns="mechanism", values=metric, aggfunc="mean")
        for m in [c for c in MECHANISM_COLORS if c in w.columns and c != "vllm"]:
            fig.add_trace(
                go.Scatter(
                    x=w.index.to_numpy(),
                    y=(w["vllm"] / w[m]).to_numpy(),
                    mode="lines+markers",
                    name=m,
                    legendgroup=m,
                    showlegend=col == 1,
                    line={"color": MECHANISM_COLORS[m]},
                ),
                row=1,
                col=col,
            )
        fig.add_hline(y=1.0, line={"dash": "dot", "color": "#999"}, row=1, col=col)
    xt = _FACTOR_TITLES.get(factor, factor)
    fig.update_xaxes(title_text=xt, type="log" if factor in ("rate", "block_tokens", "pcie_gbs") else "linear")
    fig.update_yaxes(type="log", title_text="gain (x)", col=1)
    return style(fig, title=title or f"Tail-latency gain of each mechanism vs {xt}", height=400)


def stall_split(table: pd.DataFrame, factor: str = "rate", title: str | None = None) -> go.Figure:
    """vLLM's p99 TBT split into its synchronous preemption stall (share of the gaps at or above the p99) and the
    rest, against ``factor``; bars per value (mean over seeds)."""
    v = table[table.mechanism == "vllm"].groupby(factor)[["p99_tbt_s", "stall_share_tbt"]].mean()
    x = [f"{i:g}" for i in v.index]
    stall = (v.p99_tbt_s * v.stall_share_tbt * 1e3).to_numpy()
    rest = (v.p99_tbt_s * (1 - v.stall_share_tbt) * 1e3).to_numpy()
    fig = go.Figure(
        [
            go.Bar(x=x, y=rest, name="compute and queueing", marker={"color": "#9ecae1"}),
            go.Bar(
                x=x,
                y=stall,
                name="preemption stall (swap copies)",
                marker={"color": "#d62728"},
                text=[f"{s:.0%}" for s in v.stall_share_tbt],
                textposition="outside",
            ),
        ]
    )
    fig.update_layout(barmode="stack")  # on a linear axis: a stacked segment's length is its share of the whole
    return style(
        fig,
        title=title or "vLLM's p99 TBT: how much is preemption stall",
        x_title=_FACTOR_TITLES.get(factor, factor),
        y_title="p99 TBT (ms)",
        height=380,
    )


def value_text(v: float) -> str:
    """A tail latency as the bars label it and the panel's table prints it: whole units with thousands separated from
    100 on (``1,262``, never ``1.26e+03`` or a rounded ``1,260`` beside a bar labelled ``1,262``), three significant
    digits below (``4.57``)."""
    return f"{v:,.0f}" if abs(v) >= 100 else number_text(v)


def tails(rows: pd.DataFrame, title: str = "Tail latency by mechanism") -> go.Figure:
    """Bars of p99 TTFT and p99 TBT per mechanism (``rows``: one ``llm-preemption`` row per mechanism)."""
    rows = rows.set_index("mechanism")
    ms = [m for m in MECHANISM_COLORS if m in rows.index]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("p99 TTFT (s)", "p99 TBT (ms)"))
    for col, (metric, scale) in enumerate((("p99_ttft_s", 1.0), ("p99_tbt_s", 1e3)), start=1):
        y = np.array([rows.loc[m, metric] * scale for m in ms])
        fig.add_trace(
            go.Bar(
                x=ms,
                y=y,
                marker={"color": [MECHANISM_COLORS[m] for m in ms]},
                text=[value_text(v) for v in y],
                textposition="outside",
                showlegend=False,
            ),
            row=1,
            col=col,
        )
    fig.update_yaxes(type="log")
    fig.update_yaxes(title_text="seconds", col=1)
    fig.update_yaxes(title_text="milliseconds", col=2)
    return style(fig, title=title, x_title="mechanism", height=360)
