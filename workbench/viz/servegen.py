"""Figures for ServeGen: client concentration, burstiness, diurnal load, lengths and the capacity use case.

Builders take arrays prepared by :mod:`workbench.workloads.servegen.stats` and :mod:`workbench.serving`. Two reduce
their input to the plotted points first, with :mod:`workbench.distributions`: :func:`cv_cdf_figure` turns raw
``(cv, weight)`` pairs into a weighted CDF and :func:`length_ccdf_figure` turns PMFs into tail probabilities.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..distributions import pmf_ccdf, weighted_cdf
from . import COLORS, PALETTE, colors_of, mark_x, style

__all__ = [
    "MODEL_COLORS",
    "lorenz_figure",
    "cv_cdf_figure",
    "diurnal_figure",
    "length_ccdf_figure",
    "capacity_figure",
    "rate_timeline_figure",
    "ttft_cdf_figure",
]

MODEL_COLORS = colors_of("m-large", "m-mid", "m-small", "mm-image", "deepseek-r1")


def _color(name: str, i: int) -> str:
    for model, c in MODEL_COLORS.items():
        if name.startswith(model):
            return c
    return PALETTE[i % len(PALETTE)]


def lorenz_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    """Cumulative share of requests against the share of clients (busiest first), one line per model."""
    fig = go.Figure()
    fig.add_scatter(
        x=[0, 100], y=[0, 100], mode="lines", name="equal share", line={"color": COLORS["theory"], "dash": "dot"}
    )
    for i, (name, (x, y)) in enumerate(curves.items()):
        fig.add_scatter(
            x=100 * np.asarray(x), y=100 * np.asarray(y), mode="lines", name=name, line={"color": _color(name, i)}
        )
    return style(
        fig, title="Client concentration (Lorenz curve)", x_title="clients, busiest first (%)", y_title="requests (%)"
    )


def cv_cdf_figure(samples: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    """Rate-weighted CDF of per-client-window inter-arrival CV, one line per model; CV = 1 is Poisson.

    ``samples`` maps a name to the raw ``(cv, weight)`` pair of ``ClientPool.cv_distribution`` (or already a
    ``(cv_sorted, cumulative_fraction)`` pair), reduced here with :func:`workbench.distributions.weighted_cdf`.
    """
    fig = go.Figure()
    for i, (name, (x, w)) in enumerate(samples.items()):
        xs, c = weighted_cdf(x, w)
        fig.add_scatter(x=xs, y=c, mode="lines", name=name, line={"color": _color(name, i)})
    fig.update_xaxes(type="log")
    mark_x(fig, 1.0, "Poisson", color=COLORS["poisson"])
    return style(
        fig,
        title="Per-client burstiness (rate-weighted)",
        x_title="inter-arrival CV (ratio, log)",
        y_title="fraction of requests",
    )


def diurnal_figure(profiles: Mapping[str, pd.Series]) -> go.Figure:
    """Aggregate rate per hour of day relative to its daily mean, one line per model."""
    fig = go.Figure()
    for i, (name, prof) in enumerate(profiles.items()):
        fig.add_scatter(
            x=prof.index,
            y=prof.to_numpy() / np.nanmean(prof.to_numpy()),
            mode="lines+markers",
            name=name,
            line={"color": _color(name, i)},
        )
    fig.update_xaxes(dtick=3, range=[-0.5, 23.5])
    return style(fig, title="Diurnal load", x_title="hour of day (h)", y_title="rate / daily mean (ratio)")


def length_ccdf_figure(pmfs: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    """Complementary CDF of pooled token-length distributions on log-log axes (inputs solid, outputs dashed).

    ``pmfs`` maps a name to a ``(values, probabilities)`` PMF, reduced here with
    :func:`workbench.distributions.pmf_ccdf`.
    """
    fig = go.Figure()
    for i, (name, (v, p)) in enumerate(pmfs.items()):
        x, y = pmf_ccdf(v, p)
        fig.add_scatter(
            x=np.maximum(x, 1),
            y=y,
            mode="lines",
            name=name,
            line={"color": _color(name, i), "dash": "dash" if "output" in name else "solid"},
        )
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log", exponentformat="power")
    return style(fig, title="Token lengths (pooled over clients)", x_title="length (tokens)", y_title="P(length > x)")


def capacity_figure(cells: pd.DataFrame, paper_value: float = 0.5) -> go.Figure:
    """Under-provisioning of the naive plan per model and hour of day (1 - composed / naive capacity)."""
    fig = go.Figure()
    for i, (model, g) in enumerate(cells.groupby("model", sort=False)):
        fig.add_scatter(
            x=g["hour"],
            y=100 * g["underprovision"],
            mode="lines+markers",
            name=model,
            line={"color": _color(model, i)},
            customdata=np.c_[g["composed_rps"], g["naive_rps"]],
            hovertemplate="%{x}h: %{y:.0f}%<br>composed %{customdata[0]:.2f} req/s<br>naive %{customdata[1]:.2f} req/s",
        )
    fig.add_hline(
        y=100 * paper_value,
        line={"color": COLORS["theory"], "dash": "dash"},
        annotation_text=f"paper: {paper_value:.0%}",
    )
    fig.add_hline(y=0, line={"color": "#999999", "width": 1})
    fig.update_xaxes(dtick=3)
    return style(
        fig,
        title="Naive workload under-provisioning (p99 TTFT SLO, one instance)",
        x_title="hour of day (h)",
        y_title="under-provisioning (%)",
    )


def rate_timeline_figure(
    series: Mapping[str, tuple[np.ndarray, np.ndarray]], *, fig: go.Figure | None = None
) -> go.Figure:
    """Request rate over time for several workloads (``name -> (bin_start_s, rate_rps)``); updates ``fig`` in place."""
    fig = fig if fig is not None else go.Figure()
    with fig.batch_update():
        fig.data = ()
        for _i, (name, (x, y)) in enumerate(series.items()):
            color = COLORS["poisson"] if "naive" in name else PALETTE[4]
            fig.add_scatter(x=x, y=y, mode="lines", name=name, line={"color": color, "width": 1})
        style(fig, title="Arrivals", x_title="time (s)", y_title="rate (req/s)")
    return fig


def ttft_cdf_figure(
    series: Mapping[str, tuple[np.ndarray, np.ndarray]], slo_s: float | None = None, *, fig: go.Figure | None = None
) -> go.Figure:
    """CDF of time to first token per workload (``name -> (ttft_sorted_s, fraction)``), log x; SLO as a line. A
    request that is never served (its TTFT infinite: rejected, its context beyond the KV budget) is not drawn: its
    workload's curve ends below 1 and its legend entry says what share never got a first token.

    Examples
    --------
    >>> f = ttft_cdf_figure({"composed": (np.array([0.1, 0.2, np.inf, np.inf]), np.array([0.25, 0.5, 0.75, 1.0]))})
    >>> f.data[0].name, f.data[0].x.tolist()
    ('composed (50% never served)', [0.1, 0.2])
    """
    fig = fig if fig is not None else go.Figure()
    with fig.batch_update():
        fig.data = ()
        for name, (x, y) in series.items():
            x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
            served = np.isfinite(x)
            label = name if served.all() else f"{name} ({1 - served.mean():.0%} never served)"
            color = COLORS["poisson"] if "naive" in name else PALETTE[4]
            fig.add_scatter(x=np.maximum(x[served], 1e-3), y=y[served], mode="lines", name=label, line={"color": color})
        if slo_s is not None:
            fig.add_scatter(
                x=[slo_s, slo_s], y=[0, 1], mode="lines", name="SLO", line={"color": COLORS["theory"], "dash": "dash"}
            )
        fig.update_xaxes(type="log")
        style(fig, title="Time to first token", x_title="TTFT (s, log)", y_title="fraction of requests")
    return fig
