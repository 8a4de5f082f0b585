"""Figures for request traces: arrivals over time, hour-of-day profiles, per-window CV and Gamma shape, token-length
distributions with fits, request vs response, and a side-by-side comparison of services.

Each builder takes already-computed numbers (from :mod:`workbench.workloads.characterize`) keyed by trace name and
does no computation of its own beyond laying them out (and drawing a long empirical curve at the resolution a figure
shows, :func:`loglog_points`). ``fig`` may be an existing figure (a ``go.FigureWidget`` in a
panel) to draw into.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import CDF_POINTS, style

__all__ = [
    "trace_colors",
    "arrivals_over_time",
    "hour_of_day",
    "window_fits",
    "length_ccdf",
    "loglog_points",
    "request_response",
    "service_comparison",
]

_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def trace_colors(names) -> dict[str, str]:
    """A stable colour per trace name, in order."""
    return {n: _PALETTE[i % len(_PALETTE)] for i, n in enumerate(names)}


def _new(fig: go.Figure | None) -> go.Figure:
    return go.Figure() if fig is None else fig


def arrivals_over_time(series: dict[str, pd.DataFrame], *, fig: go.Figure | None = None) -> go.Figure:
    """Request rate over time: ``series[name]`` has ``start_s`` and ``rate_per_s`` (bins of any width)."""
    fig = _new(fig)
    colors = trace_colors(series)
    for name, s in series.items():
        hours = s["start_s"].to_numpy() / 3600.0
        fig.add_trace(
            go.Scatter(
                x=hours, y=s["rate_per_s"], mode="lines", name=name, line={"color": colors[name]}, line_shape="hv"
            )
        )
    return style(fig, title="Arrivals over time", x_title="time from trace start (h)", y_title="request rate (req/s)")


def hour_of_day(profiles: dict[str, pd.DataFrame], *, fig: go.Figure | None = None) -> go.Figure:
    """Mean requests per hour of day: ``profiles[name]`` has ``hour`` and ``requests`` (per hour)."""
    fig = _new(fig)
    colors = trace_colors(profiles)
    for name, p in profiles.items():
        fig.add_trace(
            go.Scatter(x=p["hour"], y=p["requests"], mode="lines+markers", name=name, line={"color": colors[name]})
        )
    fig.update_xaxes(range=[-0.5, 23.5], dtick=3)
    return style(fig, title="Requests per hour of day", x_title="hour of day (h)", y_title="requests per hour (req/h)")


def window_fits(fits: dict[str, pd.DataFrame], *, window_s: float, fig: go.Figure | None = None) -> go.Figure:
    """Per-window gap CV and fitted Gamma shape (``fits[name]`` from ``window_gamma_fits`` over windows of
    ``window_s`` seconds, which the title states), shape 1 = Poisson."""
    grid = {
        "rows": 1,
        "cols": 2,
        "subplot_titles": ("inter-arrival CV per window", "Gamma shape per window"),
        "horizontal_spacing": 0.14,
    }
    if fig is None:
        fig = make_subplots(**grid)
    else:
        fig.set_subplots(**grid)
    colors = trace_colors(fits)
    for name, f in fits.items():
        h = f["start_s"].to_numpy() / 3600.0
        fig.add_trace(
            go.Scatter(
                x=h, y=f["cv"], mode="markers", name=name, legendgroup=name, marker={"color": colors[name], "size": 5}
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=h,
                y=f["shape"],
                mode="markers",
                name=name,
                legendgroup=name,
                showlegend=False,
                marker={"color": colors[name], "size": 5},
            ),
            row=1,
            col=2,
        )
    fig.add_hline(y=1.0, line={"dash": "dot", "color": "#444444"}, row=1, col=1)
    fig.add_hline(y=1.0, line={"dash": "dot", "color": "#444444"}, row=1, col=2)
    fig.update_yaxes(type="log", title_text="CV of gaps", row=1, col=1)
    fig.update_yaxes(type="log", title_text="Gamma shape", row=1, col=2)
    fig.update_xaxes(title_text="window start (h)", row=1, col=1)
    fig.update_xaxes(title_text="window start (h)", row=1, col=2)
    return style(fig, title=f"Burstiness per {window_s / 60:g}-minute window (dotted: Poisson)")


def loglog_points(x: np.ndarray, y: np.ndarray, *, points: int = CDF_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """The points of a monotone curve on log-log axes that a figure can tell apart: the first point of each of
    ``points / 2`` equal steps of log x and of log y, and the last point (an empirical CCDF of every distinct length
    of a trace held ~10,000 points a line, 0.2 MB a line in a saved notebook). A curve with a value <= 0, or of
    ``points`` points or fewer, is returned whole.

    Examples
    --------
    >>> x = np.arange(1.0, 100_001.0)  # every length 1-100,000 once: P(X >= x) falls to 1e-5
    >>> tx, ty = loglog_points(x, (x.size - x + 1) / x.size)
    >>> tx.size <= 2001, float(tx[0]), float(tx[-1]), float(ty[-1])
    (True, 1.0, 100000.0, 1e-05)
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size <= points or not ((x > 0).all() and (y > 0).all()):
        return x, y
    steps = max(points // 2, 1)
    keep = [np.array([x.size - 1])]
    for v in (np.log(x), np.log(y)):
        span = v.max() - v.min()
        step = np.floor((v - v.min()) / span * (steps - 1)) if span > 0 else np.zeros(v.size)
        keep.append(np.flatnonzero(np.r_[True, step[1:] != step[:-1]]))
    idx = np.unique(np.concatenate(keep))
    return x[idx], y[idx]


def length_ccdf(curves: dict[str, dict], *, title: str = "Token lengths", fig: go.Figure | None = None) -> go.Figure:
    """Empirical CCDF of lengths (at the resolution the figure shows, :func:`loglog_points`) with fitted CCDFs on
    log-log axes (a Zipf law is a straight line).

    ``curves[name]`` has ``values``, ``ccdf`` (empirical) and ``grid`` with ``fits`` (label -> CCDF on the grid).
    """
    fig = _new(fig)
    colors = trace_colors(curves)
    dashes = ["dash", "dot", "dashdot"]
    for name, c in curves.items():
        x, y = loglog_points(c["values"], c["ccdf"])
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                name=name,
                legendgroup=name,
                line={"color": colors[name], "width": 2},
            )
        )
        for i, (label, y) in enumerate(c["fits"].items()):
            fig.add_trace(
                go.Scatter(
                    x=c["grid"],
                    y=y,
                    mode="lines",
                    name=f"{name}: {label}",
                    legendgroup=name,
                    showlegend=False,  # colour says the source, dash the fit: one legend entry each, not one per pair
                    line={"color": colors[name], "dash": dashes[i % 3], "width": 1},
                )
            )
    # the key to the dashes, by fit family (each fit's own KS distance is in its hover label)
    fit_labels = list(dict.fromkeys(label.split(" (")[0] for c in curves.values() for label in c["fits"]))
    for i, label in enumerate(fit_labels):
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="lines",
                name=f"{label} fit",
                line={"color": "#555555", "dash": dashes[i % 3], "width": 1},
            )
        )
    fig.update_xaxes(type="log", dtick=1, tickangle=0)  # one label per decade: no crowded, tilted ticks
    fig.update_yaxes(type="log", dtick=1)
    return style(fig, title=title, x_title="length (tokens)", y_title="P(length ≥ x)")


def request_response(binned: dict, *, fig: go.Figure | None = None) -> go.Figure:
    """Mean response length per request-length bin with the 10-90% band: one
    :class:`~workbench.workloads.characterize.RequestResponse` (``request_response``'s answer) per trace."""
    fig = _new(fig)
    colors = trace_colors(binned)
    for name, rr in binned.items():
        c = colors[name]
        table = rr.table
        x = table["mean_input"].to_numpy()
        fig.add_trace(
            go.Scatter(
                x=np.r_[x, x[::-1]],
                y=np.r_[table["q90_output"], table["q10_output"][::-1]],
                fill="toself",
                fillcolor=_fade(c),
                line={"width": 0},
                hoverinfo="skip",
                name=f"{name}: 10-90%",
                legendgroup=name,
                showlegend=False,
            )
        )
        rho = rr.spearman
        fig.add_trace(
            go.Scatter(
                x=x,
                y=table["mean_output"],
                mode="lines+markers",
                name=f"{name} (Spearman {rho:.2f})",
                legendgroup=name,
                line={"color": c},
            )
        )
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return style(
        fig,
        title="Response vs request length (mean, 10-90% band)",
        x_title="request length (tokens)",
        y_title="response length (tokens)",
    )


def _fade(hex_color: str, alpha: float = 0.15) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def service_comparison(table: pd.DataFrame, *, fig: go.Figure | None = None) -> go.Figure:
    """Bars per trace: gap CV, median window Gamma shape, mean request and response lengths (``services_table``)."""
    titles = ("CV of all gaps", "median 20-min Gamma shape", "mean request length", "mean response length")
    y_titles = ("gap CV", "Gamma shape", "request (tokens)", "response (tokens)")
    cols = ["gap_cv", "median_shape", "mean_input_tokens", "mean_output_tokens"]
    grid = {"rows": 2, "cols": 2, "subplot_titles": titles, "horizontal_spacing": 0.14, "vertical_spacing": 0.16}
    if fig is None:
        fig = make_subplots(**grid)
    else:
        fig.set_subplots(**grid)
    colors = trace_colors(table.index)
    for j, col in enumerate(cols):
        r, c = j // 2 + 1, j % 2 + 1
        for name in table.index:
            fig.add_trace(
                go.Bar(
                    x=[name],
                    y=[table.loc[name, col]],
                    name=name,
                    legendgroup=name,
                    showlegend=j == 0,
                    marker={"color": colors[name]},
                ),
                row=r,
                col=c,
            )
        fig.update_xaxes(showticklabels=False, row=r, col=c)
        fig.update_yaxes(title_text=y_titles[j], type="log" if j == 0 else None, row=r, col=c)
    fig.update_layout(height=700)
    return style(fig, title="Services side by side")
