"""Figures of serving on real hardware: latency CDFs, throughput vs NanoFlow's bound, operator costs, validation."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import mark_x, style

__all__ = ["latency_cdf_figure", "throughput_bound_figure", "operator_figure", "validation_figure"]


def latency_cdf_figure(
    samples: Mapping[str, np.ndarray], *, metric: str = "TTFT", slo_s: float | None = None, log_x: bool = True
) -> go.Figure:
    """Empirical CDF of per-request latencies (seconds) per named run, with the SLO as a vertical line."""
    fig = go.Figure()
    for name, values in samples.items():
        v = np.sort(np.asarray(values, dtype=float)[np.isfinite(values)])
        fig.add_trace(go.Scatter(x=v, y=np.arange(1, v.size + 1) / max(v.size, 1), mode="lines", name=name))
    if log_x:
        fig.update_xaxes(type="log", dtick=1)  # a label per decade; the 2s and 5s between crowd a half-width figure
    if slo_s is not None:
        mark_x(fig, slo_s, f"SLO {slo_s:.3g} s", log_x=log_x, position="bottom")
    return style(fig, title=f"{metric} per request", x_title=f"{metric} (s)", y_title="fraction of requests")


def throughput_bound_figure(table: pd.DataFrame) -> go.Figure:
    """Per (model, workload) row: optimal (peak), overlapped and sequential throughput in tokens/s per GPU.

    ``table`` has ``label``, ``optimal_tokens_per_s``, ``overlapped_tokens_per_s``, ``sequential_tokens_per_s`` and
    ``bound``.
    """
    fig = go.Figure()
    for col, name in (
        ("optimal_tokens_per_s", "optimal (peak, overlapped)"),
        ("overlapped_tokens_per_s", "overlapped, stated efficiencies"),
        ("sequential_tokens_per_s", "sequential, stated efficiencies"),
    ):
        fig.add_trace(go.Bar(x=table["label"], y=table[col], name=name))
    fig.update_layout(barmode="group")
    fig.update_yaxes(type="log")
    return style(
        fig,
        title="Throughput vs NanoFlow's optimal bound",
        x_title="model, GPUs, input/output tokens",
        y_title="tokens/s per GPU",
    )


def operator_figure(breakdown: pd.DataFrame) -> go.Figure:
    """Compute, memory and network seconds per operator of one iteration (from ``Deployment.breakdown``)."""
    fig = go.Figure()
    for col, name in (("compute_s", "compute"), ("memory_s", "memory"), ("network_s", "network")):
        fig.add_trace(go.Bar(x=breakdown["operator"], y=breakdown[col] * 1e3, name=name))
    fig.update_layout(barmode="group")
    return style(fig, title="Roofline cost per operator of one iteration", x_title="operator", y_title="time (ms)")


#: Reader's names of the validation table's metrics (legend entries, not column identifiers).
METRIC_LABELS = {
    "output_tokens_per_s_per_gpu": "output tokens/s per GPU",
    "total_tokens_per_s_per_gpu": "total tokens/s per GPU",
    "ttft_s": "time to first token (s)",
    "prefill_iteration_s": "prefill iteration (s)",
    "decode_iteration_s": "decode iteration (s)",
}


def validation_figure(table: pd.DataFrame) -> go.Figure:
    """Model vs published value per point (``published``, ``model_estimate``, ``metric``, ``point``), log-log."""
    fig = go.Figure()
    for metric, part in table.groupby("metric", sort=False):
        fig.add_trace(
            go.Scatter(
                x=part["published"],
                y=part["model_estimate"],
                mode="markers",
                name=METRIC_LABELS.get(metric, metric.replace("_", " ")),
                text=part["point"],
                hovertemplate="%{text}<br>published %{x}<br>model %{y}",
            )
        )
    lo = float(min(table["published"].min(), table["model_estimate"].min())) / 1.5
    hi = float(max(table["published"].max(), table["model_estimate"].max())) * 1.5
    fig.add_trace(
        go.Scatter(
            x=[lo, hi], y=[lo, hi], mode="lines", name="model = published", line={"dash": "dot", "color": "#444444"}
        )
    )
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return style(
        fig,
        title="Model vs published measurements",
        x_title="published (tokens/s per GPU or s)",
        y_title="model (same unit)",
    )
