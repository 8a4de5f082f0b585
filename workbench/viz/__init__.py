"""Plotly figure builders: functions of model outputs.

A builder turns a model's result (a tidy DataFrame, arrays, a record) into a figure. It may reshape what it is given
for display (pick columns, normalise to a percentage, place labels), but model logic (a statistic, a fit, a
simulation) belongs in a model package, where it is tested and shared with the CLI and the reproductions.

Every figure has a title, axis titles with units, and the shared template below. :func:`style` applies them;
:func:`setup_notebook` picks plotly's JupyterLab mimetype renderer: committed notebooks stay small (no inlined
plotly.js) and nothing is fetched from a CDN, so notebooks and dashboards work offline.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from .._plotdata import (
    EM_PER_CHAR as _EM_PER_CHAR,
)
from .._plotdata import (
    MODEBAR_PX,
    coinciding_lines,
    hidden_markers,
    marker_points,
    title_room_px,
    title_width_px,
)

__all__ = [
    "TEMPLATE",
    "COLORS",
    "colors_of",
    "EXPORT_SCALE",
    "style",
    "tidy_axes",
    "show_coinciding",
    "coinciding_lines",
    "fit_titles",
    "title_width_px",
    "title_room_px",
    "MODEBAR_REMOVE",
    "MODEBAR_PX",
    "mark_x",
    "export_config",
    "setup_notebook",
]

TEMPLATE = "plotly_white"
#: Colour per entity (a routing, a marking, a placement policy, a scheduler, a detector, a workload model, an arrival
#: process), one table for every figure: the topic figures, the panels and the explore panels all look colours up
#: here, so an entity has the same colour wherever it is drawn (an entity not listed gets a palette colour).
COLORS = {
    # arrival processes and reference curves
    "poisson": "#1f77b4",
    "gamma": "#d62728",
    "weibull": "#2ca02c",
    "theory": "#444444",
    "ideal": "#2ca02c",
    # routing (fabric)
    "ecmp": "#d62728",
    "mp-2": "#ff7f0e",
    "mp-4": "#bcbd22",
    "mp-8": "#8c564b",
    "spray": "#2ca02c",
    "minimal": "#1f77b4",
    "planned": "#9467bd",
    # per-packet simulators (packet-level validation)
    "ns-3": "#1f77b4",
    "htsim": "#ff7f0e",
    "workbench": "#2ca02c",
    # marking (AQM) and placement policy
    "static": "#7f7f7f",
    "pred": "#9467bd",
    "random": "#7f7f7f",
    "aware": "#9467bd",
    # detectors (fault localization)
    "naive": "#7f7f7f",
    "c4d": "#d62728",
    "minder": "#1f77b4",
    "holmes": "#2ca02c",
    "perftracker": "#9467bd",
    # carbon-aware schedulers
    "fifo": "#7f7f7f",
    "fair": "#8c564b",
    "cp": "#1f77b4",
    "agnostic": "#1f77b4",
    "cap": "#ff7f0e",
    "cap-fifo": "#e377c2",
    "pcaps": "#2ca02c",
    # ServeGen workload models
    "m-large": "#1f77b4",
    "m-mid": "#ff7f0e",
    "m-small": "#2ca02c",
    "mm-image": "#9467bd",
    "deepseek-r1": "#d62728",
    # serving engine profiles
    "vllm": "#1f77b4",
    "vllm-v0": "#aec7e8",
    "sarathi-serve": "#17becf",
    "sglang": "#ff7f0e",
    "trtllm": "#2ca02c",
    "trtllm-v0.5": "#98df8a",
    "nanoflow": "#9467bd",
    # sources of the training validation corpus (datasets/training_validation/corpus.csv)
    "narayanan2021": "#1f77b4",
    "korthikanti2022": "#17becf",
    "smith2022": "#8c564b",
    "bigscience2022": "#e377c2",
    "megatron-core2024": "#2ca02c",
    "llama3-2024": "#ff7f0e",
    "megascale2024": "#9467bd",
    "lumos2025": "#d62728",
}


def colors_of(*names: str) -> dict[str, str]:
    """The :data:`COLORS` entries of ``names``: a topic's colour table, taken from the one table.

    Examples
    --------
    >>> colors_of("ecmp", "spray")
    {'ecmp': '#d62728', 'spray': '#2ca02c'}
    """
    return {n: COLORS[n] for n in names}


def style(
    fig: go.Figure,
    *,
    title: str,
    x_title: str | None = None,
    y_title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """Apply the workbench template, a title and axis titles (include units, e.g. ``"inter-arrival (s)"``).

    The legend goes horizontally below the plot area (anchored to the bottom of the figure, with the margin it needs),
    so a narrow figure keeps its full plot width and no legend entry is cut.
    """
    fig.update_layout(
        template=TEMPLATE,
        title={"text": title, "x": 0.02},
        margin={"t": 60, "r": 20},
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0, "xanchor": "left"},
    )
    tidy_axes(fig)
    if x_title is not None:
        fig.update_xaxes(title_text=x_title)
    if y_title is not None:
        fig.update_yaxes(title_text=y_title)
    if height is not None:
        fig.update_layout(height=height)
    return fig


def tidy_axes(fig: go.Figure) -> go.Figure:
    """Number formats people read without a legend: powers of ten on log axes (``10^-6``, not ``1μ``; only the powers
    of ten are labelled when at least two are in view, 1, 2 and 5 times them when fewer are) and no SI
    suffixes on linear axes (``0.0001`` and ``800,000``, never ``100μ`` or ``0.8e+6``). Idempotent; :func:`style` and the panels'
    redraw call it, so axes set to log after :func:`style` are covered too.

    Examples
    --------
    >>> f = tidy_axes(go.Figure(go.Scatter(x=[1, 2], y=[0.5, 300]), layout={"yaxis": {"type": "log"}}))
    >>> f.layout.yaxis.exponentformat, f.layout.yaxis.dtick, f.layout.xaxis.exponentformat
    ('power', 1, 'none')
    >>> tidy_axes(go.Figure(go.Bar(y=[2.3, 19.1]), layout={"yaxis": {"type": "log"}})).layout.yaxis.dtick
    'D2'
    """
    for axis in ("x", "y"):
        for ax in getattr(fig, f"select_{axis}axes")():
            _tidy(ax, fig, axis)
    show_coinciding(fig)
    return fig


#: Dash styles given, in turn, to a line drawn exactly over an earlier one (so both stay visible).
_OVERLAP_DASHES = ("dash", "dot", "dashdot", "longdash", "longdashdot")


def show_coinciding(fig: go.Figure) -> go.Figure:
    """Keep every line visible where lines coincide: a line drawn exactly over an earlier one is dashed (a dash
    style of its own per overlap), so the one beneath shows through its gaps; its legend entry shows the dash. A
    marker series entirely under as large markers of later series is drawn larger, a ring round them. Idempotent;
    :func:`tidy_axes` calls it.

    Examples
    --------
    >>> f = show_coinciding(go.Figure([go.Scatter(x=[0, 1], y=[1, 2], name="a"), go.Scatter(x=[0, 1], y=[1, 2])]))
    >>> f.data[0].line.dash, f.data[1].line.dash
    (None, 'dash')
    """
    covered: dict[int, int] = {}
    for i, j in coinciding_lines(fig):
        if j in covered:
            continue
        covered[j] = i
        t = fig.data[j]
        # the dashes already on these points: the line beneath's own (a dotted line beneath a line given "dot" would
        # hide it again) and those of the lines drawn over it before this one
        used = {fig.data[i].line.dash or "solid"} | {
            fig.data[k].line.dash or "solid" for k, base in covered.items() if base == i and k != j
        }
        if (t.line.dash or "solid") in used:
            t.line.dash = next((d for d in _OVERLAP_DASHES if d not in used), "longdashdot")
    _ring_hidden_markers(fig)
    return fig


#: Pixels by which a marker series drawn under as large markers of later series grows, so its rim shows round them.
_RING_PX = 5


def _ring_hidden_markers(fig: go.Figure) -> None:
    """Markers drawn exactly under as large markers of later series (two policies with the same result) would
    hide their series: the one beneath grows by :data:`_RING_PX` beyond the largest marker over it, so each shows as
    a coloured ring round the next (the last drawn is innermost)."""
    for _ in range(2 * len(fig.data)):  # each pass rings one series; growing one can cover an earlier one
        hidden = hidden_markers(fig)
        if not hidden:
            return
        i = hidden[-1][0]
        t = fig.data[i]
        points = marker_points(t)
        assert points is not None  # a hidden series is a marker series
        x, y = points[:2]
        over = []
        for u in fig.data[i + 1 :]:
            m = marker_points(u)
            if m is not None and (u.xaxis or "x", u.yaxis or "y") == (t.xaxis or "x", t.yaxis or "y"):
                same = np.isclose(x[:, None], m[0][None, :], rtol=1e-9, atol=1e-12)
                if (same & np.isclose(y[:, None], m[1][None, :], rtol=1e-9, atol=1e-12)).any():
                    over.append(m[2])
        t.marker.size = max(over, default=points[2]) + _RING_PX


#: Most powers of ten labelled on a log axis (beyond, every second or third one is).
_MAX_LOG_LABELS = 7


def _log_extent(fig: go.Figure, ax, axis: str) -> tuple[float, float] | None:
    """log10 of the smallest and largest positive values shown on log axis ``ax`` (its range, else its traces' data)."""
    if ax.range is not None and None not in ax.range:
        return float(min(ax.range)), float(max(ax.range))
    ref = axis + ax.plotly_name[len(axis) + 4 :]  # "xaxis2" -> "x2"
    values = []
    for trace in fig.data:
        if (getattr(trace, f"{axis}axis", None) or axis) == ref and getattr(trace, axis, None) is not None:
            try:
                v = np.asarray(getattr(trace, axis), dtype=float).ravel()
            except (TypeError, ValueError):  # categories or dates: not a log axis's data
                continue
            v = v[np.isfinite(v) & (v > 0)]
            if v.size:
                values.append((v.min(), v.max()))
    if not values:
        return None
    return float(np.log10(min(v[0] for v in values))), float(np.log10(max(v[1] for v in values)))


def _tidy(ax, fig: go.Figure, axis: str) -> None:
    if ax.type == "log":
        ax.update(exponentformat="power")
        extent = None if ax.tickvals is not None or ax.dtick is not None else _log_extent(fig, ax, axis)
        decades = None if extent is None else np.floor(extent[1]) - np.ceil(extent[0])
        if decades is not None and decades >= 1:
            # At least two powers of ten in view: label only those (no "2" and "5" between), at most ~7 of them.
            ax.update(dtick=int(np.ceil((decades + 1) / _MAX_LOG_LABELS)))
        elif decades is not None:
            # Fewer: plotly labels every digit (2, 3, ... 9 crowding the decade's label); 1, 2 and 5 times the
            # powers of ten instead.
            ax.update(dtick="D2")
    else:  # plain numbers: 800,000 rather than 0.8e+6 or 800k, 0.0001 rather than 100μ
        ax.update(exponentformat="none", separatethousands=True)
        if ax.range is None and ax.type in (None, "-", "linear") and ax.autorange is not False:
            _no_noise_range(fig, ax, axis)


#: A linear axis whose data spans less than this fraction of its magnitude shows rounding noise, not data.
_NOISE_SPAN = 1e-9


def _axis_values(fig: go.Figure, ax, axis: str) -> np.ndarray:
    """Every finite number plotted on axis ``ax`` (empty for categories, dates or no data)."""
    ref = axis + ax.plotly_name[len(axis) + 4 :]  # "xaxis2" -> "x2"
    parts = []
    for trace in fig.data:
        if (getattr(trace, f"{axis}axis", None) or axis) == ref and getattr(trace, axis, None) is not None:
            try:
                v = np.asarray(getattr(trace, axis), dtype=float).ravel()
            except (TypeError, ValueError):
                continue
            parts.append(v[np.isfinite(v)])
    return np.concatenate(parts) if parts else np.empty(0)


def _no_noise_range(fig: go.Figure, ax, axis: str) -> None:
    """A constant series computed in floating point (0.99999999999999778 ... 0.99999999999999889) would autorange
    over its rounding noise and draw it as data: give such an axis a range of +-5% around the value instead."""
    v = _axis_values(fig, ax, axis)
    if v.size < 2:
        return
    lo, hi = float(v.min()), float(v.max())
    mid = (lo + hi) / 2
    if 0 < hi - lo <= _NOISE_SPAN * max(abs(mid), 1e-300):
        half = max(abs(mid) * 0.05, 1e-12)
        ax.update(range=[mid - half, mid + half])


#: Mode-bar buttons of no use on the panels' figures (selection tools, zoom steps): the bar a panel's figure shows on
#: hover keeps the camera, zoom, pan, autoscale and reset, and is narrower.
MODEBAR_REMOVE = ("select2d", "lasso2d", "zoomIn2d", "zoomOut2d")


def _wrap(text: str, chars: int, first: int | None = None) -> tuple[str, int]:
    """``text`` wrapped at ``chars`` characters a line (the first line at ``first``), and its number of lines."""
    import textwrap

    first = chars if first is None else first
    if not text or "<br" in text or len(text) <= first:
        return text, 1
    head = textwrap.wrap(text, max(first, 12))[0]
    lines = [head, *textwrap.wrap(text[len(head) :].strip(), max(chars, 12))]
    return "<br>".join(lines), len(lines)


def fit_titles(fig: go.Figure, width_px: int, height_px: int | None = None) -> go.Figure:
    """Wrap the title and the subplot titles so that they fit a figure ``width_px`` wide (plotly never wraps text; a
    long title runs past a narrow figure), its first line clear of the mode bar (:data:`MODEBAR_PX`, shown on hover at
    the top right), with the top margin the extra title lines need; with ``height_px``, wrap
    y-axis titles longer than their axis too (they would run into the title).

    Examples
    --------
    >>> f = fit_titles(go.Figure(layout={"title": {"text": "A rather long title for a figure in a narrow cell"}}), 300)
    >>> f.layout.title.text.count("<br>"), f.layout.margin.t
    (2, 104)
    """
    size = fig.layout.title.font.size or 17
    first, usable = title_room_px(fig, width_px)
    per_char = size * _EM_PER_CHAR
    text, lines = _wrap(fig.layout.title.text or "", int(usable / per_char), int(first / per_char))
    if lines > 1:
        top = fig.layout.margin.t if fig.layout.margin.t is not None else 60
        fig.update_layout(title_text=text, margin_t=top + int(1.3 * size) * (lines - 1))
    # Subplot titles: paper-anchored annotations above a column (make_subplots), as wide as their column.
    widths = [ax.domain[1] - ax.domain[0] for ax in fig.select_xaxes() if ax.domain]
    column = min(widths) if widths else 1.0
    extra = 0
    for ann in fig.layout.annotations:
        if ann.xref == "paper" and ann.yref == "paper" and not ann.showarrow and ann.yanchor == "bottom":
            ann_size = ann.font.size or 16
            ann.text, ann_lines = _wrap(ann.text or "", int(width_px * column / (ann_size * _EM_PER_CHAR)))
            extra = max(extra, int(1.3 * ann_size) * (ann_lines - 1))
    if extra:
        fig.update_layout(margin_t=(fig.layout.margin.t if fig.layout.margin.t is not None else 60) + extra)
    if lines > 1 or extra:  # keep a wrapped title at the top, clear of the subplot titles below it
        below_top = 14 / height_px if height_px else 0.03  # plotly's pad.t does not move a container-anchored title
        fig.update_layout(title_yref="container", title_y=1 - below_top, title_yanchor="top")
    if height_px is not None:
        top = fig.layout.margin.t if fig.layout.margin.t is not None else 60
        plot_px = max(height_px - top - 90, 60)  # less the x-axis ticks, title and legend below
        for ax in fig.select_yaxes():
            if ax.title.text:
                span = ax.domain[1] - ax.domain[0] if ax.domain else 1.0
                ax.title.text, _ = _wrap(
                    ax.title.text, int(plot_px * span / ((ax.title.font.size or 14) * _EM_PER_CHAR))
                )
    return fig


def mark_x(
    fig: go.Figure, x: float, text: str, *, log_x: bool = False, color: str = "#444444", position: str = "top"
) -> go.Figure:
    """A dashed vertical line at ``x`` labelled ``text`` at the ``position`` ("top" or "bottom") of the plot.

    Unlike ``add_vline(annotation_text=...)``, the label stays at ``x`` on a log axis (plotly places a vline's
    annotation at ``10**x`` there, which also stretches the axis range).

    Examples
    --------
    >>> f = mark_x(go.Figure(layout={"xaxis": {"type": "log"}}), 100.0, "SLO", log_x=True)
    >>> f.layout.annotations[0].x, f.layout.shapes[0].x0
    (2.0, 100.0)
    """
    import math

    fig.add_vline(x=x, line_dash="dash", line_color=color)
    fig.add_annotation(
        x=math.log10(x) if log_x else x,
        y=1 if position == "top" else 0,
        yref="y domain",
        text=text,
        showarrow=False,
        xanchor="left",
        yanchor="top" if position == "top" else "bottom",
        font={"size": 11},
    )
    return fig


#: Scale of the camera button's PNG: an on-screen figure of ~460 px is saved ~1,400 px wide (paper-ready).
EXPORT_SCALE = 3


def export_config(fig: go.Figure | None = None) -> dict:
    """Plotly's display config for a figure: the camera button saves a PNG at :data:`EXPORT_SCALE` times the
    on-screen size, named after the figure's title.

    Examples
    --------
    >>> export_config(go.Figure(layout={"title": "p99 wait vs load (Gamma CV 3)"}))["toImageButtonOptions"]
    {'format': 'png', 'scale': 3, 'filename': 'p99-wait-vs-load-gamma-cv-3'}
    """
    import re

    title = ""
    if fig is not None and fig.layout.title and fig.layout.title.text:
        title = re.sub(r"<[^>]+>", " ", fig.layout.title.text)
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:80] or "workbench-figure"
    return {"toImageButtonOptions": {"format": "png", "scale": EXPORT_SCALE, "filename": slug}, "displaylogo": False}


def setup_notebook(renderer: str = "plotly_mimetype") -> None:
    """Set plotly's default renderer for notebooks: the JupyterLab/Voilà mimetype renderer (the ``jupyterlab-plotly``
    extension installed with plotly draws it offline; no CDN request), with the camera button exporting at
    :data:`EXPORT_SCALE` times the on-screen size."""
    pio.renderers.default = renderer
    pio.templates.default = TEMPLATE
    for name in renderer.split("+"):
        r = pio.renderers[name]
        if hasattr(r, "config"):
            r.config = {**(r.config or {}), **export_config()}
