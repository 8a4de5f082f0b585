"""Figures for overload control on microservice call graphs (Rajomon NSDI'25), built from model outputs.

* :func:`spike_timeseries`: goodput, drops and p95 latency over time per controller through a load spike.
* :func:`controller_bars`: one metric (wasted work, goodput, p99) per graph and controller.
* :func:`waste_vs_depth`: wasted work against the call-chain depth per controller.

Each controller has one colour in every figure (:data:`CONTROLLER_COLORS`).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import style

__all__ = ["CONTROLLER_COLORS", "CONTROLLER_NAMES", "METRICS", "spike_timeseries", "controller_bars", "waste_vs_depth"]

CONTROLLER_COLORS = {"none": "#7f7f7f", "dagor": "#ff7f0e", "breakwater": "#1f77b4", "rajomon": "#2ca02c"}
CONTROLLER_NAMES = {
    "none": "no control",
    "dagor": "DAGOR-style (per service, queueing delay)",
    "breakwater": "Breakwater-style (per service, credits)",
    "rajomon": "Rajomon (tokens and prices)",
}
#: Axis title per summary metric.
METRICS = {
    "wasted_work_frac": "wasted work (share of service time)",
    "goodput_rps": "goodput (req/s within the SLO)",
    "p99_ms": "p99 latency (ms)",
    "p95_ms": "p95 latency (ms)",
    "drop_frac": "dropped at a service (share)",
}


def _need(df: pd.DataFrame, cols: set[str], what: str) -> None:
    missing = cols - set(df.columns)
    if missing:
        raise ValueError(f"{what} is missing column(s) {', '.join(sorted(missing))}")


def spike_timeseries(
    series: Mapping[str, pd.DataFrame],
    *,
    slo_ms: float,
    spike: tuple[float, float] | None = None,
    title: str = "Through a load spike: goodput, drops and p95 latency per controller",
) -> go.Figure:
    """Three stacked panels over time from :meth:`~workbench.microservices.SimResult.timeseries` frames, one per
    controller (keyed by its name): goodput and offered load (requests/s), drops (requests/s), p95 latency (ms,
    log axis, the SLO dashed in red). ``spike``: (start, end) shaded."""
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06)
    first = True
    for name, ts in series.items():
        _need(ts, {"t_s", "offered_rps", "goodput_rps", "drops_rps", "p95_ms"}, f"series[{name!r}]")
        if first:
            fig.add_trace(
                go.Scatter(x=ts.t_s, y=ts.offered_rps, name="offered load", line={"color": "black", "dash": "dot"}),
                row=1,
                col=1,
            )
            first = False
        c = CONTROLLER_COLORS.get(name)
        label = CONTROLLER_NAMES.get(name, name)
        kw = {"legendgroup": name, "line": {"color": c}}
        fig.add_trace(go.Scatter(x=ts.t_s, y=ts.goodput_rps, name=label, **kw), row=1, col=1)
        fig.add_trace(go.Scatter(x=ts.t_s, y=ts.drops_rps, name=label, showlegend=False, **kw), row=2, col=1)
        fig.add_trace(go.Scatter(x=ts.t_s, y=ts.p95_ms, name=label, showlegend=False, **kw), row=3, col=1)
    t_end = max((float(ts.t_s.max()) for ts in series.values()), default=1.0)
    fig.add_trace(
        go.Scatter(
            x=[0.0, t_end],
            y=[slo_ms, slo_ms],
            name=f"SLO {slo_ms:g} ms",
            mode="lines",
            line={"dash": "dash", "color": "red"},
        ),
        row=3,
        col=1,
    )
    if spike is not None:
        for r in (1, 2, 3):
            fig.add_vrect(x0=spike[0], x1=spike[1], fillcolor="grey", opacity=0.12, line_width=0, row=r, col=1)
    fig.update_xaxes(title_text="time (s)", row=3, col=1)
    fig.update_yaxes(title_text="goodput (req/s)", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="drops (req/s)", rangemode="tozero", row=2, col=1)
    fig.update_yaxes(title_text="p95 (ms)", type="log", row=3, col=1)
    return style(fig, title=title)  # last: the axis policy sees the log axis


def controller_bars(df: pd.DataFrame, metric: str, *, title: str | None = None, log_y: bool = False) -> go.Figure:
    """Grouped bars: mean ``metric`` per ``graph`` (x) and ``controller`` (colour) over the rows of ``df`` (e.g.
    seeds of the ``microservice-overload`` experiment); ``log_y`` for a metric spanning decades (the bars then start
    at a power of ten the axis title states)."""
    _need(df, {"graph", "controller", metric}, "df")
    m = df.groupby(["graph", "controller"], sort=False)[metric].mean().reset_index()
    fig = go.Figure()
    for name, g in m.groupby("controller", sort=False):
        fig.add_trace(
            go.Bar(
                x=g.graph, y=g[metric], name=CONTROLLER_NAMES.get(name, name), marker_color=CONTROLLER_COLORS.get(name)
            )
        )
    fig.update_layout(barmode="group")
    if log_y:
        fig.update_yaxes(type="log")
    return style(
        fig, title=title or METRICS.get(metric, metric), x_title="call graph", y_title=METRICS.get(metric, metric)
    )


def waste_vs_depth(df: pd.DataFrame, *, title: str = "Wasted work against call-chain depth") -> go.Figure:
    """Mean ``wasted_work_frac`` per ``depth`` and ``controller`` (lines with markers)."""
    _need(df, {"depth", "controller", "wasted_work_frac"}, "df")
    m = df.groupby(["controller", "depth"], sort=False).wasted_work_frac.mean().reset_index()
    fig = go.Figure()
    for name, g in m.groupby("controller", sort=False):
        g = g.sort_values("depth")
        fig.add_trace(
            go.Scatter(
                x=g.depth,
                y=g.wasted_work_frac,
                mode="lines+markers",
                name=CONTROLLER_NAMES.get(name, name),
                line={"color": CONTROLLER_COLORS.get(name)},
            )
        )
    return style(
        fig,
        title=title,
        x_title="services in the chain (the last one the bottleneck)",
        y_title="wasted work (share of service time)",
    )
