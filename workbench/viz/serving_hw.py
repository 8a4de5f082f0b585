"""Figures of serving on real hardware: latency CDFs, throughput vs NanoFlow's bound, operator costs, validation."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..distributions import ecdf
from . import CDF_POINTS, color_of, colors_of, label, mark_x, style

__all__ = [
    "latency_cdf_figure",
    "throughput_bound_figure",
    "operator_figure",
    "validation_figure",
    "tp_scaling_figure",
    "gemm_efficiency_figure",
]


def latency_cdf_figure(
    samples: Mapping[str, np.ndarray], *, metric: str = "TTFT", slo_s: float | None = None, log_x: bool = True
) -> go.Figure:
    """Empirical CDF of per-request latencies (seconds) per named run, over its finite values (at most
    :data:`CDF_POINTS` points a line), with the SLO as a vertical line.

    Examples
    --------
    >>> fig = latency_cdf_figure({"run": np.linspace(0.01, 1.0, 10_000)}, slo_s=0.5)
    >>> len(fig.data[0].x), float(fig.data[0].y[-1])
    (2000, 1.0)
    """
    fig = go.Figure()
    for name, values in samples.items():
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        x, y = ecdf(v, points=CDF_POINTS) if v.size else (v, v)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name))
    if log_x:
        fig.update_xaxes(type="log")
    if slo_s is not None:
        mark_x(fig, slo_s, f"SLO {slo_s:.3g} s", position="bottom")
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
        fig.add_trace(go.Bar(x=breakdown["operator"].map(label), y=breakdown[col] * 1e3, name=name))
    fig.update_layout(barmode="group")
    return style(fig, title="Roofline cost per operator of one iteration", x_title="operator", y_title="time (ms)")


#: Reader's names of the validation table's metrics (legend entries, not column identifiers).
METRIC_LABELS = {
    "output_tokens_per_s_per_gpu": "static-batch throughput",
    "total_tokens_per_s_per_gpu": "offline total throughput",
    "offline_output_tokens_per_s": "offline throughput",
    "ttft_s": "static-batch TTFT",
    "single_request_ttft_s": "single-request TTFT",
    "single_request_itl_s": "single-request ITL",
    "trace_mean_ttft_s": "online run: mean TTFT",
    "trace_mean_tpot_s": "online run: mean TPOT",
    "trace_output_tokens_per_s": "online run: throughput",
    "prefill_iteration_s": "prefill iteration",
    "decode_iteration_s": "decode iteration",
    "chunked_prefill_s": "chunked prefill",
}


def validation_figure(table: pd.DataFrame) -> go.Figure:
    """Signed error (model / published - 1) of every published point, one column per metric, one colour per engine
    profile (``metric``, ``error``, ``point``, ``engine_profile`` when present), with the zero line. Points of
    different units share one axis because the error is unit-free."""

    fig = go.Figure()
    profiles = table["engine_profile"] if "engine_profile" in table else pd.Series("model", index=table.index)
    names = list(dict.fromkeys(profiles))
    colors = {n: c for n, c in zip(names, colors_of(*names).values(), strict=True)}
    order = [m for m in METRIC_LABELS if m in set(table["metric"])] + sorted(set(table["metric"]) - set(METRIC_LABELS))
    labels = {m: METRIC_LABELS.get(m, m.replace("_", " ")) for m in order}
    for name in names:
        part = table[profiles == name]
        fig.add_trace(
            go.Box(
                x=part["metric"].map(labels),
                y=100 * part["error"],
                name=str(name),
                boxpoints="all",
                jitter=0.5,
                pointpos=0,
                fillcolor="rgba(0,0,0,0)",
                line={"color": "rgba(0,0,0,0)"},
                marker={"color": colors[name], "size": 7},
                text=part["point"],
                hovertemplate="%{text}<br>error %{y:.0f}%",
            )
        )
    fig.add_hline(y=0, line={"color": "#444444", "dash": "dot"})
    fig.update_xaxes(categoryorder="array", categoryarray=[labels[m] for m in order])
    fig.update_layout(legend_title_text="engine profile", boxmode="group")
    return style(
        fig, title="Model error per published point", x_title="published metric", y_title="model / published - 1 (%)"
    )


def tp_scaling_figure(panels: Mapping[str, pd.DataFrame]) -> go.Figure:
    """Measured and modelled time of one kind of published iteration against the tensor-parallel degree, one subplot
    per ``panels`` entry (its title: the iteration shown), a colour per GPU, measured solid and modelled dashed. Each
    frame holds rows of :func:`~workbench.serving.validation.validation_table`: ``gpu``, ``tp``, ``published`` and
    ``model_estimate`` in seconds (shown in ms), at most one row per (GPU, TP).

    Examples
    --------
    >>> rows = pd.DataFrame({"gpu": ["A100-80GB"] * 2, "tp": [4, 8], "published": [0.042, 0.043],
    ...                      "model_estimate": [0.043, 0.032]})
    >>> [t.name for t in tp_scaling_figure({"decode step": rows}).data]
    ['A100-80GB measured', 'A100-80GB model']
    """
    for title, rows in panels.items():
        missing = {"gpu", "tp", "published", "model_estimate"} - set(rows.columns)
        if missing:
            raise ValueError(f"panel {title!r}: rows lack column(s) {sorted(missing)}")
        if rows.duplicated(["gpu", "tp"]).any():
            raise ValueError(f"panel {title!r}: more than one row for a (gpu, tp): pick one iteration per panel")
    gpus = list(dict.fromkeys(g for rows in panels.values() for g in rows["gpu"]))
    colors = {g: color_of(g, i) for i, g in enumerate(gpus)}
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=list(panels), horizontal_spacing=0.1)
    tps: set[int] = set()
    shown: set[str] = set()  # one legend entry per series, from the first panel that has it
    for j, rows in enumerate(panels.values(), start=1):
        for g in gpus:
            part = rows[rows["gpu"] == g].sort_values("tp")
            if part.empty:
                continue
            tps.update(int(t) for t in part["tp"])
            for what, col, dash in (("measured", "published", "solid"), ("model", "model_estimate", "dash")):
                name = f"{g} {what}"
                fig.add_trace(
                    go.Scatter(
                        x=part["tp"],
                        y=1e3 * part[col],
                        mode="lines+markers",
                        name=name,
                        legendgroup=name,
                        showlegend=name not in shown,
                        line={"color": colors[g], "dash": dash},
                        hovertemplate=f"{g}, TP %{{x}}: %{{y:.1f}} ms ({what})<extra></extra>",
                    ),
                    row=1,
                    col=j,
                )
                shown.add(name)
    ticks = sorted(tps)
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(t) for t in ticks], title_text="tensor-parallel degree")
    fig.update_yaxes(rangemode="tozero", title_text="iteration (ms)")
    return style(fig, title="Measured and modelled iteration time by tensor parallelism")


GENERATION_LABELS = {
    "ampere": "Ampere (A100 profile)",
    "hopper": "Hopper (H100 profile)",
    "ada": "A40 profile (ada)",
    "RTX-4090": "GeForce RTX 4090 (its own profile)",
    "RTX-PRO-6000": "RTX PRO 6000 Blackwell Server Edition (its own profile)",
}


def gemm_efficiency_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    """The fraction of the roofline a layer's projections reach vs tokens in the iteration, one line per GPU
    generation (``{generation: (tokens, fraction)}``, e.g. from :func:`workbench.serving.opcurves.curves`)."""
    fig = go.Figure()
    for gen, (tokens, frac) in curves.items():
        fig.add_trace(
            go.Scatter(
                x=tokens,
                y=100 * np.asarray(frac),
                mode="lines+markers",
                name=GENERATION_LABELS.get(gen, gen),
                hovertemplate="%{x:.0f} tokens: %{y:.0f}%",
            )
        )
    fig.update_xaxes(type="log")
    fig.update_yaxes(rangemode="tozero")
    return style(
        fig,
        title="Measured GEMM efficiency vs batch (Vidur's and LLMServingSim's profiles)",
        x_title="tokens in the iteration (log scale)",
        y_title="fraction of the roofline reached (%)",
    )
