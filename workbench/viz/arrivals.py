"""Figures for arrival processes: gap distributions, counts per window, dispersion, and waiting times."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import COLORS, PALETTE, mark_y, style

__all__ = [
    "cv_vs_burstiness",
    "idc_vs_window",
    "wait_ccdf",
    "p99_ratio_vs_utilization",
    "interarrival_histogram",
    "counts_per_window_figure",
    "wait_percentiles",
]

_SERIES = ["poisson", "gamma", "weibull"]


def _color(name: str, i: int) -> str:
    key = next((k for k in _SERIES if k in name.lower()), None)
    return COLORS[key] if key else PALETTE[i % len(PALETTE)]


def cv_vs_burstiness(burstiness: np.ndarray, measured_cv: np.ndarray) -> go.Figure:
    """Measured inter-arrival CV against vLLM burstiness, with the theory CV = 1/sqrt(burstiness)."""
    b = np.asarray(burstiness, dtype=float)
    grid = np.geomspace(b.min() / 1.5, b.max() * 1.5, 100)
    fig = go.Figure()
    fig.add_scatter(
        x=grid,
        y=1 / np.sqrt(grid),
        mode="lines",
        name="theory 1/sqrt(b)",
        line={"color": COLORS["theory"], "dash": "dash"},
    )
    fig.add_scatter(x=b, y=measured_cv, mode="markers", name="measured", marker={"size": 10, "color": COLORS["gamma"]})
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return style(
        fig,
        title="Gamma arrivals: CV of inter-arrival gaps vs burstiness",
        x_title="burstiness (Gamma shape, vLLM convention)",
        y_title="inter-arrival CV",
    )


def idc_vs_window(window_mean_gaps: np.ndarray, idc: Mapping[str, np.ndarray], cv2: Mapping[str, float]) -> go.Figure:
    """Index of dispersion of counts against window length (in mean gaps), with each process's CV^2 asymptote."""
    fig = go.Figure()
    for i, (name, values) in enumerate(idc.items()):
        color = _color(name, i)
        fig.add_scatter(x=window_mean_gaps, y=values, mode="lines+markers", name=name, line={"color": color})
        fig.add_scatter(
            x=[window_mean_gaps[0], window_mean_gaps[-1]],
            y=[cv2[name]] * 2,
            mode="lines",
            name=f"CV² of {name}",
            line={"color": color, "dash": "dot"},
            showlegend=False,
        )
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return style(
        fig,
        title="Index of dispersion of counts tends to CV² for renewal processes (dotted)",
        x_title="window length (mean inter-arrival gaps)",
        y_title="IDC = Var[N]/E[N]",
    )


def wait_ccdf(
    sim: Mapping[str, tuple[np.ndarray, np.ndarray]],
    exact: Mapping[str, tuple[np.ndarray, np.ndarray]],
    kingman_p99_s: Mapping[str, float],
    *,
    utilization: float,
) -> go.Figure:
    """Waiting-time CCDF per arrival process: simulated (solid), exact GI/M/1 (dashed), Kingman p99 (marker)."""
    fig = go.Figure()
    for i, (name, (x, p)) in enumerate(sim.items()):
        color = _color(name, i)
        fig.add_scatter(x=x, y=p, mode="lines", name=f"{name} (simulated)", line={"color": color})
        ex, ep = exact[name]
        fig.add_scatter(x=ex, y=ep, mode="lines", name=f"{name} (exact GI/M/1)", line={"color": color, "dash": "dash"})
        fig.add_scatter(
            x=[kingman_p99_s[name]],
            y=[0.01],
            mode="markers",
            name=f"{name}: Kingman p99",
            marker={"symbol": "x", "size": 12, "color": color},
        )
    fig.update_yaxes(type="log")
    mark_y(fig, 0.01, "p99", color="#777777", position="left")
    return style(
        fig,
        title=f"Waiting time at utilization {utilization:g}: burstiness multiplies the tail",
        x_title="waiting time (multiples of mean service time)",
        y_title="P(wait > x)",
    )


def p99_ratio_vs_utilization(
    utilization: np.ndarray, ratio_exact: np.ndarray, *, band: tuple[float, float] = (4.0, 5.0)
) -> go.Figure:
    """p99 wait of Gamma CV-3 arrivals over Poisson's at the same throughput, against utilization."""
    fig = go.Figure()
    fig.add_hrect(
        y0=band[0],
        y1=band[1],
        fillcolor="#2ca02c",
        opacity=0.15,
        line_width=0,
        annotation_text="reported 4-5x",
        annotation_position="top left",
    )
    fig.add_scatter(
        x=utilization, y=ratio_exact, mode="lines+markers", name="exact GI/M/1", line={"color": COLORS["gamma"]}
    )
    return style(
        fig,
        title="p99 wait: Gamma (CV 3) over Poisson arrivals, same throughput",
        x_title="server utilization",
        y_title="p99 wait ratio (Gamma / Poisson)",
    )


def interarrival_histogram(
    edges: np.ndarray, density: np.ndarray, pdf_x: np.ndarray | None = None, pdf_y: np.ndarray | None = None
) -> go.Figure:
    """Density histogram of gaps on log bins, with the model's density when given."""
    fig = go.Figure()
    centers = np.sqrt(edges[:-1] * edges[1:]) if edges[0] > 0 else 0.5 * (edges[:-1] + edges[1:])
    fig.add_bar(
        x=centers, y=density, width=np.diff(edges), name="sampled", marker={"color": COLORS["gamma"]}, opacity=0.6
    )
    if pdf_x is not None and pdf_y is not None:
        fig.add_scatter(x=pdf_x, y=pdf_y, mode="lines", name="model density", line={"color": COLORS["theory"]})
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return style(fig, title="Inter-arrival gaps", x_title="inter-arrival gap (s)", y_title="density (1/s)")


def counts_per_window_figure(window_start_s: np.ndarray, counts: np.ndarray, window_s: float) -> go.Figure:
    """Arrivals per window over time, with the mean."""
    fig = go.Figure()
    fig.add_bar(x=window_start_s, y=counts, name="arrivals", marker={"color": COLORS["gamma"]})
    fig.add_scatter(
        x=[window_start_s[0], window_start_s[-1]],
        y=[float(np.mean(counts))] * 2,
        mode="lines",
        name="mean",
        line={"color": COLORS["theory"], "dash": "dash"},
    )
    return style(fig, title=f"Arrivals per {window_s:g}-s window", x_title="time (s)", y_title="arrivals per window")


def wait_percentiles(frame: pd.DataFrame) -> go.Figure:
    """Simulated and exact waiting-time percentiles per arrival process (from :func:`arrivals.compare_waits`)."""
    fig = go.Figure()
    sim_cols = [c for c in frame.columns if c.startswith("sim_p")]
    labels = [c[len("sim_") : -len("_s")] for c in sim_cols]
    for i, name in enumerate(frame.index):
        color = _color(name, i)
        fig.add_bar(
            x=labels, y=frame.loc[name, sim_cols].to_numpy(float), name=f"{name} (simulated)", marker={"color": color}
        )
        fig.add_scatter(
            x=labels,
            y=frame.loc[name, [f"exact_{l}_s" for l in labels]].to_numpy(float),
            mode="markers",
            name=f"{name} (exact)",
            marker={"color": "#000", "symbol": "line-ew-open", "size": 24, "line": {"width": 3}},
        )
    fig.update_layout(barmode="group")
    fig.update_yaxes(type="log")
    return style(
        fig, title="Waiting-time percentiles at the same throughput", x_title="percentile", y_title="waiting time (s)"
    )
