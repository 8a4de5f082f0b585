"""Figures for carbon-aware scheduling (PCAPS, CAP) and the sunk-carbon fallacy, built from model outputs.

* :func:`carbon_vs_jct`: one point per scheduler (carbon against mean job completion time), PCAPS points labelled
  with their ``gamma`` and CAP points with their always-allowed executors ``B``.
* :func:`busy_vs_intensity`: executors busy per trace hour (left axis) against the grid intensity (right axis).
* :func:`sunk_comparison`: total operational carbon of operational-carbon vs SCI placement by grid intensity.

Each scheduler has one colour in every figure (:data:`SCHEDULER_COLORS`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from . import COLORS, colors_of, style

__all__ = ["SCHEDULER_COLORS", "SCHEDULER_NAMES", "carbon_vs_jct", "busy_vs_intensity", "sunk_comparison"]

#: Colour per scheduler of :data:`workbench.carbon.SCHEDULERS` (``agnostic`` is ``cp``: same colour).
SCHEDULER_COLORS = colors_of("fifo", "fair", "cp", "agnostic", "cap", "cap-fifo", "pcaps")
#: Legend name per scheduler.
SCHEDULER_NAMES = {
    "fifo": "FIFO",
    "fair": "weighted fair",
    "cp": "critical path",
    "agnostic": "carbon-agnostic (critical path)",
    "cap": "CAP",
    "cap-fifo": "CAP around FIFO",
    "pcaps": "PCAPS",
}
_INTENSITY_COLOR = COLORS["theory"]


def _label(row) -> str:
    if row.scheduler == "pcaps" and "gamma" in row._fields:
        return f"γ={row.gamma:g}"
    if row.scheduler in ("cap", "cap-fifo") and "cap_minimum" in row._fields:
        return f"B={int(row.cap_minimum)}"
    return ""


def carbon_vs_jct(runs: pd.DataFrame, *, title: str = "Carbon vs mean job completion time per scheduler") -> go.Figure:
    """One point per scheduler setting: mean ``carbon_kg`` (shown in g CO2eq) against mean ``mean_jct_s`` over the
    rows of ``runs`` (e.g. seeds and regions of the ``carbon-scheduling`` experiment), PCAPS points labelled with
    ``gamma`` and CAP points with ``cap_minimum``. One legend entry per scheduler."""
    need = {"scheduler", "carbon_kg", "mean_jct_s"}
    missing = need - set(runs.columns)
    if missing:
        raise ValueError(f"runs is missing column(s) {', '.join(sorted(missing))}; it needs {', '.join(sorted(need))}")
    keys = ["scheduler"] + [c for c in ("gamma", "cap_minimum") if c in runs.columns]
    d = runs.copy()
    # gamma only matters for PCAPS and B only for CAP: do not split other schedulers' points by them
    if "gamma" in d:
        d["gamma"] = np.where(d.scheduler == "pcaps", d["gamma"], np.nan)
    if "cap_minimum" in d:
        d["cap_minimum"] = np.where(d.scheduler.isin(["cap", "cap-fifo"]), d["cap_minimum"], np.nan)
    pts = d.groupby(keys, sort=False, dropna=False)[["carbon_kg", "mean_jct_s"]].mean().reset_index()
    fig = go.Figure()
    for name, g in pts.groupby("scheduler", sort=False):
        g = g.sort_values("mean_jct_s")
        fig.add_trace(
            go.Scatter(
                x=g.mean_jct_s,
                y=g.carbon_kg * 1e3,
                mode="markers+text" if len(g) else "markers",
                text=[_label(r) for r in g.itertuples()],
                textposition="top center",
                cliponaxis=False,  # the label of the highest point runs above the plot area
                marker={"color": SCHEDULER_COLORS.get(str(name)), "size": 11},
                name=SCHEDULER_NAMES.get(str(name), str(name)),
            )
        )
    return style(fig, title=title, x_title="mean job completion time (s)", y_title="carbon (g CO2eq)")


def busy_vs_intensity(
    busy: Mapping[str, np.ndarray],
    intensity: np.ndarray,
    *,
    title: str = "Busy executors vs the grid's carbon intensity",
) -> go.Figure:
    """Mean busy executors per trace hour for each named run (``{scheduler: SimResult.busy_per_hour()}``, named by
    scheduler so that the colour follows it) on the left axis, and ``intensity`` (gCO2eq/kWh of the same hours,
    starting at the runs' first hour) on the right axis."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    longest = max((np.asarray(b).size for b in busy.values()), default=0)
    inten = np.asarray(intensity, float)[: max(longest, 1)]
    for name, b in busy.items():
        b = np.asarray(b, float)
        fig.add_trace(
            go.Scatter(
                x=np.arange(b.size),
                y=b,
                mode="lines",
                line={"shape": "hv", "color": SCHEDULER_COLORS.get(name)},
                name=SCHEDULER_NAMES.get(name, name),
            ),
            secondary_y=False,
        )
    fig.add_trace(
        go.Scatter(
            x=np.arange(inten.size),
            y=inten,
            mode="lines",
            line={"shape": "hv", "color": _INTENSITY_COLOR, "dash": "dot"},
            name="grid intensity",
        ),
        secondary_y=True,
    )
    style(fig, title=title, x_title="trace hour since the window start (h)")
    fig.update_yaxes(title_text="executors busy (mean over the hour)", secondary_y=False, rangemode="tozero")
    fig.update_yaxes(
        title_text="carbon intensity (gCO2eq/kWh)",
        secondary_y=True,
        rangemode="tozero",
        showgrid=False,
        tickmode="auto",
        tickformat=",.0f",
    )
    return fig


def sunk_comparison(
    table: pd.DataFrame,
    mean_intensity: Mapping[str, float],
    *,
    title: str = "Total carbon of operational-carbon vs SCI placement by grid intensity",
) -> go.Figure:
    """Total operational carbon (t CO2eq) of each placement rule per region against the region's mean intensity.

    ``table`` has one row per region (columns ``region, operational_kg, sci_kg``, e.g. the ``sunk-carbon-placement``
    experiment at one utilization and lifetime); ``mean_intensity`` maps each region to its mean gCO2eq/kWh."""
    need = {"region", "operational_kg", "sci_kg"}
    missing = need - set(table.columns)
    if missing:
        raise ValueError(f"table is missing column(s) {', '.join(sorted(missing))}; it needs {', '.join(sorted(need))}")
    absent = [r for r in table.region if r not in mean_intensity]
    if absent:
        raise ValueError(f"mean_intensity has no value for region(s) {', '.join(map(str, absent))}")
    d = table.assign(intensity=[float(mean_intensity[r]) for r in table.region]).sort_values("intensity")
    fig = go.Figure()
    series = (
        ("operational_kg", "placement by operational carbon", COLORS["poisson"], "circle"),
        ("sci_kg", "placement by SCI (embodied amortized)", COLORS["gamma"], "diamond"),
    )
    for col, name, color, symbol in series:
        fig.add_trace(
            go.Scatter(
                x=d.intensity,
                y=d[col] / 1e3,
                mode="lines+markers+text" if col == "sci_kg" else "lines+markers",
                text=list(d.region) if col == "sci_kg" else None,
                textposition="top center",
                cliponaxis=False,  # the label of the highest point runs above the plot area
                marker={"color": color, "symbol": symbol, "size": 9},
                line={"color": color},
                name=name,
            )
        )
    return style(fig, title=title, x_title="mean grid carbon intensity (gCO2eq/kWh)", y_title="total carbon (t CO2eq)")
