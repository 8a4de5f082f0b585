"""Plotly figure builders: functions of model outputs.

A builder turns a model's result (a tidy DataFrame, arrays, a record) into a figure. It may reshape what it is given
for display (pick columns, normalise to a percentage, place labels), but model logic (a statistic, a fit, a
simulation) belongs in a model package, where it is tested and shared with the CLI and the reproductions.

Every figure has a title, axis titles with units, and the shared template below. :func:`style` applies them;
:func:`setup_notebook` picks plotly's JupyterLab mimetype renderer: committed notebooks stay small (no inlined
plotly.js) and nothing is fetched from a CDN, so notebooks and dashboards work offline.

It is longer than ~500 lines because it holds the one style every builder applies, read together: the palette and
labels, the axis policy (log ticks in full values, linear under a decade, bar baselines), title fitting and the marks
placed in an axis's coordinates; :func:`workbench.testing.figure_problems` checks that policy as one.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from .._plotdata import (
    BARS_FROM,
    LOG_MENTION,
    MODEBAR_PX,
    axis_ref,
    axis_values,
    bar_traces,
    coinciding_lines,
    hidden_markers,
    log_extent,
    marker_points,
    match_groups,
    title_room_px,
    title_width_px,
)
from .._plotdata import (
    EM_PER_CHAR as _EM_PER_CHAR,
)
from .._units import number_text

__all__ = [
    "TEMPLATE",
    "COLORS",
    "PALETTE",
    "colors_of",
    "color_of",
    "label",
    "FULL_WIDTH_PX",
    "EXPORT_SCALE",
    "CDF_POINTS",
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
    "mark_y",
    "export_config",
    "setup_notebook",
]

#: Colours in turn for series that are not an entity of :data:`COLORS`, and the template's colorway: a trace given
#: no colour takes one of these, never plotly's default palette (which no other figure uses).
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")


def _register_template() -> str:
    template = go.layout.Template(pio.templates["plotly_white"])
    template.layout.colorway = PALETTE
    pio.templates["workbench"] = template
    return "workbench"


#: Most points drawn per empirical CDF line of raw samples, at evenly spaced ranks with both ends kept
#: (:func:`workbench.distributions.ecdf`): one point per request drew 18,000 per line for notebook 10's ten minutes of
#: M-large, 1.5 MB per saved figure; 2,000 keep 20 points above the 99th percentile, finer than a line at a figure's
#: width shows.
CDF_POINTS = 2000
#: The figures' plotly template: ``plotly_white`` with :data:`PALETTE` as its colorway.
TEMPLATE = _register_template()
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
    "vllm-2023": "#c5b0d5",
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


def color_of(name: object, i: int = 0) -> str:
    """The colour of a series: its entity's in :data:`COLORS`, else the ``i``-th of :data:`PALETTE`.

    Examples
    --------
    >>> color_of("spray"), color_of("a run of my own", 1)
    ('#2ca02c', '#ff7f0e')
    """
    return COLORS.get(str(name)) or PALETTE[i % len(PALETTE)]


#: What a reader calls a value the code names by an identifier (a collective, a fault, an operator, a schedule, a
#: workload ablation), where replacing underscores by spaces does not read right.
LABELS = {
    "halving_doubling": "halving-doubling",
    "double_binary_tree": "double binary tree",
    "all_to_all": "all-to-all",
    "nic_degraded": "degraded NIC",
    "flapping_link": "flapping link",
    "attn_prefill": "attention (prefill)",
    "attn_decode": "attention (decode)",
    "lm_head": "LM head",
    "allreduce": "all-reduce",
    "sequential-1f1b": "sequential 1F1B",
    "1f1b": "1F1B",
    "arrivals_only": "arrivals only",
    "lengths_only": "lengths only",
}


def label(value: object) -> str:
    """A value as a legend entry, a category or a facet title shows it: its reader's name in :data:`LABELS`, else
    the value with underscores as spaces (``fat_tree`` reads ``fat tree``).

    Examples
    --------
    >>> label("nic_degraded"), label("sequential-1f1b"), label("fat_tree"), label(0.5)
    ('degraded NIC', 'sequential 1F1B', 'fat tree', '0.5')
    """
    text = str(value)
    return LABELS.get(text, text.replace("_", " "))


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
    so a narrow figure keeps its full plot width and no legend entry is cut. The axes follow the one axis policy
    (:func:`tidy_axes`) and the titles are wrapped to fit a figure :data:`FULL_WIDTH_PX` wide, clear of the mode bar
    (:func:`fit_titles`; a panel wraps them again for its narrower cells).
    """
    _apply_template(fig)
    fig.update_layout(
        title={"text": title, "x": 0.02},
        margin={"t": _TOP_MARGIN, "r": 20},
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0, "xanchor": "left"},
    )
    if x_title is not None:
        fig.update_xaxes(title_text=x_title)
    if y_title is not None:
        fig.update_yaxes(title_text=y_title)
    if height is not None:
        fig.update_layout(height=height)
    tidy_axes(fig)
    fit_titles(fig, FULL_WIDTH_PX)
    return fig


def _apply_template(fig: go.Figure) -> None:
    """Set :data:`TEMPLATE` on ``fig`` as plotly sets its default template on a new figure: without validating it again
    (it was validated when registered). Assigning it through ``update_layout`` validated every property of the template
    on every figure: 6.9 ms against 0.6 ms, the same JSON."""
    layout = fig.layout
    was = layout._validate
    layout._validate = False
    try:
        layout.template = pio.templates[TEMPLATE]
    finally:
        layout._validate = was


def tidy_axes(fig: go.Figure) -> go.Figure:
    """The one axis policy: every axis reads right without a legend. :func:`style` and the panels' redraw call it,
    so axes set to log after :func:`style` are covered too; idempotent.

    * A log axis shows at least two labelled ticks, each with its full value: the powers of ten (``10⁻⁶``, never
      ``1μ``) when at least two are in view (every second or third one beyond seven), else 1, 2 and 5 times them
      labelled in full (``0.2``, ``0.5``, ``1``, ``2``; plotly's own labels there are a bare ``2`` or ``5`` standing
      for 0.2 or 50). Data spanning less than a factor of ten is drawn on a linear axis instead (and the axis title
      no longer says "log"; annotations on it move with it).
    * Bars start at zero: bars on an axis that does not include zero (a log axis, or a linear range set above zero)
      start at a stated baseline, the bottom of the axis, which the axis title states (``bars from 0.1``; on a log
      axis the power of ten below the smallest value, so a 1.6x difference never draws as 12x unstated).
    * Linear axes print plain numbers: ``0.0001`` and ``800,000``, never ``100μ`` or ``0.8e+6``; a constant series
      computed in floating point is not autoranged over its rounding noise.
    * Coinciding lines and markers stay visible (:func:`show_coinciding`).
    * A figure whose colorway is plotly's default takes :data:`PALETTE` instead (a series given no colour of its own
      is drawn in the workbench's colours, as in every other figure).

    Examples
    --------
    >>> f = tidy_axes(go.Figure(go.Scatter(x=[1, 2], y=[0.5, 300]), layout={"yaxis": {"type": "log"}}))
    >>> f.layout.yaxis.exponentformat, f.layout.yaxis.dtick, f.layout.xaxis.exponentformat
    ('power', 1, 'none')
    >>> g = tidy_axes(go.Figure(go.Scatter(y=[0.15, 3.1]), layout={"yaxis": {"type": "log"}}))
    >>> g.layout.yaxis.dtick, g.layout.yaxis.tickformat
    ('D2', ',~g')
    >>> tidy_axes(go.Figure(go.Bar(y=[0.526, 0.820]), layout={"yaxis": {"type": "log"}})).layout.yaxis.type
    'linear'
    >>> b = tidy_axes(go.Figure(go.Bar(y=[2.3, 190.0]), layout={"yaxis": {"type": "log", "title": "FCT (ms)"}}))
    >>> b.layout.yaxis.title.text, b.layout.yaxis.range[0]
    ('FCT (ms; bars from 1)', 0.0)
    """
    for axis in ("x", "y"):
        for group in match_groups(fig, axis):
            if any(ax.type == "log" for ax in group):
                _log_policy(fig, group, axis)
            for ax in group:
                if ax.type != "log":
                    _linear_policy(fig, ax)
                _state_bar_baseline(fig, ax)
    template = fig.layout.template
    if not fig.layout.colorway and (template is None or template.layout.colorway != PALETTE):
        fig.layout.colorway = PALETTE
    show_coinciding(fig)
    return fig


#: Dash styles given, in turn, to a line drawn exactly over an earlier one (so both stay visible).
_OVERLAP_DASHES = ("dash", "dot", "dashdot", "longdash", "longdashdot")


def _overlap_dashes():
    """Plotly's named dash styles of :data:`_OVERLAP_DASHES`, then dash-length patterns of plotly's own form
    (``"3px,6px"``, each distinct): as many as the lines drawn over one line (seven routings on a one-spine fabric
    all coincide, more than the named styles)."""
    yield from _OVERLAP_DASHES
    k = 0
    while True:
        k += 1
        yield f"{2 + k}px,{3 + 2 * k}px"


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
    >>> many = show_coinciding(go.Figure([go.Scatter(x=[0, 1], y=[1, 2], name=str(k)) for k in range(8)]))
    >>> [t.line.dash for t in many.data][5:]
    ['longdashdot', '3px,5px', '4px,7px']
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
            t.line.dash = next(d for d in _overlap_dashes() if d not in used)
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
#: The tick format of a log axis with fewer than two powers of ten in view (ticks at 1, 2 and 5 times them): every
#: label its full value (``0.2``, ``50``, ``2,000``), never plotly's bare digit.
_LOG_TICKFORMAT = ",~g"


def _log_policy(fig: go.Figure, group: list, axis: str) -> None:
    """The log-axis rules of :func:`tidy_axes` for one axis and the axes that match it."""
    extent = log_extent(fig, group)
    if extent is not None:  # a builder's ticks are kept when they label at least two values in view
        for ax in group:
            if ax.tickvals is not None and _ticks_in_view(ax.tickvals, *extent) < 2:
                ax.update(tickvals=None, ticktext=None)
    if extent is None:  # no positive data and no range: nothing to place ticks by
        for ax in group:
            ax.update(exponentformat="power")
        return
    lo, hi = extent
    if hi - lo < 1 and all(ax.tickvals is None for ax in group):
        for ax in group:
            _to_linear(fig, ax, axis)
        return
    if any(bar_traces(fig, ax) for ax in group) and all(ax.range is None for ax in group):
        # bars on a log axis start at its bottom: fix it at the power of ten at or below the smallest value
        lo, hi = float(np.floor(lo + 1e-9)), hi + 0.05 * (hi - np.floor(lo + 1e-9))
        for ax in group:
            ax.update(range=[lo, hi], autorange=False)
    powers = int(np.floor(hi + 1e-9) - np.ceil(lo - 1e-9)) + 1
    for ax in group:
        ax.update(type="log", exponentformat="power")
        if ax.tickvals is not None:  # the builder's own ticks
            continue
        if powers >= 2:
            ax.update(dtick=int(np.ceil(powers / _MAX_LOG_LABELS)))
            if ax.tickformat == _LOG_TICKFORMAT:
                ax.tickformat = None
        else:
            ax.update(dtick="D2", tickformat=_LOG_TICKFORMAT)


def _ticks_in_view(tickvals, lo: float, hi: float) -> int:
    """How many of a log axis's ``tickvals`` lie within log10 extent ``lo`` .. ``hi``."""
    values = [float(v) for v in tickvals if isinstance(v, int | float) and v > 0]
    return sum(lo - 1e-6 <= np.log10(v) <= hi + 1e-6 for v in values)


def _to_linear(fig: go.Figure, ax, axis: str) -> None:
    """Draw log axis ``ax`` linear (its data span less than a decade): range, annotations placed on it and its
    title's mention of the log scale follow."""
    import re

    ax.update(type="linear", dtick=None)
    if ax.tickformat == _LOG_TICKFORMAT:
        ax.tickformat = None
    if ax.range is not None and None not in ax.range:
        ax.range = [10 ** float(r) for r in ax.range]
    ref = axis_ref(ax)
    for ann in fig.layout.annotations:  # a log axis places annotations at log10 of their value
        if (getattr(ann, f"{axis}ref") or axis) == ref and isinstance(getattr(ann, axis), int | float):
            setattr(ann, axis, 10 ** float(getattr(ann, axis)))
    if ax.title.text:
        ax.title.text = re.sub(LOG_MENTION, "", ax.title.text)


def _linear_policy(fig: go.Figure, ax) -> None:
    """Plain numbers (800,000 rather than 0.8e+6 or 800k, 0.0001 rather than 100μ), no range over float noise."""
    ax.update(exponentformat="none", separatethousands=True)
    if ax.range is None and ax.type in (None, "-", "linear") and ax.autorange is not False:
        _no_noise_range(fig, ax)


def _state_bar_baseline(fig: go.Figure, ax) -> None:
    """Bars on axis ``ax`` that does not include zero start at its bottom: the axis title says where."""
    import re

    if not bar_traces(fig, ax) or ax.range is None:
        return
    bottom, top = ax.range  # either may be None (autoranged), on a linear axis
    if ax.type == "log" and None not in ax.range:
        base = 10 ** min(float(bottom), float(top))
    elif ax.type != "log" and bottom is not None and float(bottom) > 0:
        base = float(bottom)
    elif ax.type != "log" and top is not None and float(top) < 0:
        base = float(top)
    else:
        return
    said = f"{BARS_FROM} {number_text(base)}"
    title = re.sub(r"\s*<br>\s*", " ", ax.title.text or "")  # unwrapped: fit_titles wraps it again
    if BARS_FROM in title:  # stated before (by an earlier call, for another range): say the one now
        ax.title.text = re.sub(rf"{BARS_FROM} [^);]*", said, title)
    elif title.endswith(")"):
        ax.title.text = f"{title[:-1]}; {said})"
    else:
        ax.title.text = f"{title} ({said})" if title else said


#: A linear axis whose data spans less than this fraction of its magnitude shows rounding noise, not data.
_NOISE_SPAN = 1e-9


def _no_noise_range(fig: go.Figure, ax) -> None:
    """A constant series computed in floating point (0.99999999999999778 ... 0.99999999999999889) would autorange
    over its rounding noise and draw it as data: give such an axis a range of +-5% around the value instead."""
    v = axis_values(fig, ax)
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


#: Top margin (px) of a styled figure with a one-line title; each further line of title adds to it.
_TOP_MARGIN = 60
#: Width (px) of a full-width figure where it is narrowest: a notebook's output area in JupyterLab at 1366x768 with
#: the file browser open (measured: the ``.jp-OutputArea-output`` of a code cell). :func:`style` wraps titles to it.
FULL_WIDTH_PX = 930
#: A line break a title's author chose (kept by :func:`fit_titles`); a plain ``<br>`` is a wrap, redone per width.
HARD_BREAK = "<br />"
_HARD = r"<br\s*/>"


def _wrap(text: str, chars: int, first: int | None = None) -> tuple[str, int]:
    """``text`` wrapped at ``chars`` characters a line (the first line at ``first``), and its number of lines. Wraps
    made before (``<br>``) are undone first; breaks written :data:`HARD_BREAK` stay.

    Examples
    --------
    >>> _wrap("one two three<br>four five", 12)
    ('one two<br>three four<br>five', 3)
    >>> _wrap("Title<br />subtitle", 40)
    ('Title<br />subtitle', 2)
    """
    import re
    import textwrap

    first = chars if first is None else first
    parts, count = [], 0
    for part in re.split(_HARD, text or ""):
        flat = re.sub(r"\s*<br>\s*", " ", part).strip()
        room = max(first if not count else chars, 12)
        lines = [flat]
        if len(flat) > room:
            head = textwrap.wrap(flat, room)[0]
            lines = [head, *textwrap.wrap(flat[len(head) :].strip(), max(chars, 12))]
        parts.append("<br>".join(lines))
        count += len(lines)
    return HARD_BREAK.join(parts), max(count, 1)


def _extra_lines(text: str | None) -> int:
    """Lines of a title beyond its first."""
    import re

    return len(re.findall(r"<br\s*/?>", text or ""))


def fit_titles(fig: go.Figure, width_px: int, height_px: int | None = None) -> go.Figure:
    """Wrap the title and the subplot titles so that they fit a figure ``width_px`` wide (plotly never wraps text; a
    long title runs past a narrow figure), its first line clear of the mode bar (:data:`MODEBAR_PX`, shown on hover at
    the top right), with the top margin the extra title lines need; with ``height_px``, wrap
    y-axis titles longer than their axis too (they would run into the title). Idempotent, and a figure wrapped for
    one width is re-wrapped for another (:func:`style` wraps at :data:`FULL_WIDTH_PX`, a panel at its cell's width);
    a break written :data:`HARD_BREAK` is kept.

    Examples
    --------
    >>> f = fit_titles(go.Figure(layout={"title": {"text": "A rather long title for a figure in a narrow cell"}}), 300)
    >>> f.layout.title.text.count("<br>"), f.layout.margin.t
    (2, 104)
    >>> fit_titles(f, 900).layout.title.text.count("<br>"), f.layout.margin.t
    (0, 60)
    """
    size = fig.layout.title.font.size or 17
    # the margin the title had before any wrap: what it has now, less what earlier wraps added
    top = fig.layout.margin.t if fig.layout.margin.t is not None else _TOP_MARGIN
    before = int(1.3 * size) * _extra_lines(fig.layout.title.text)
    subplot_titles = [
        ann
        for ann in fig.layout.annotations
        if ann.xref == "paper" and ann.yref == "paper" and not ann.showarrow and ann.yanchor == "bottom"
    ]
    before += max((int(1.3 * (a.font.size or 16)) * _extra_lines(a.text) for a in subplot_titles), default=0)
    base = max(top - before, 0)
    first, usable = title_room_px(fig, width_px)
    per_char = size * _EM_PER_CHAR
    text, lines = _wrap(fig.layout.title.text or "", int(usable / per_char), int(first / per_char))
    if fig.layout.title.text:
        fig.layout.title.text = text
    extra_title = int(1.3 * size) * (lines - 1)
    # Subplot titles: paper-anchored annotations above a column (make_subplots), as wide as their column.
    widths = [ax.domain[1] - ax.domain[0] for ax in fig.select_xaxes() if ax.domain]
    column = min(widths) if widths else 1.0
    extra = 0
    for ann in subplot_titles:
        ann_size = ann.font.size or 16
        ann.text, ann_lines = _wrap(ann.text or "", int(width_px * column / (ann_size * _EM_PER_CHAR)))
        extra = max(extra, int(1.3 * ann_size) * (ann_lines - 1))
    fig.update_layout(margin_t=base + extra_title + extra)
    if lines > 1 or extra:  # keep a wrapped title at the top, clear of the subplot titles below it
        below_top = 14 / height_px if height_px else 0.03  # plotly's pad.t does not move a container-anchored title
        fig.update_layout(title_yref="container", title_y=1 - below_top, title_yanchor="top")
    elif fig.layout.title.yref == "container" and fig.layout.title.yanchor == "top":  # no longer wrapped
        fig.update_layout(title_yref=None, title_y=None, title_yanchor=None)
    if height_px is not None:
        top = fig.layout.margin.t if fig.layout.margin.t is not None else _TOP_MARGIN
        plot_px = max(height_px - top - 90, 60)  # less the x-axis ticks, title and legend below
        for ax in fig.select_yaxes():
            if ax.title.text:
                span = ax.domain[1] - ax.domain[0] if ax.domain else 1.0
                ax.title.text, _ = _wrap(
                    ax.title.text, int(plot_px * span / ((ax.title.font.size or 14) * _EM_PER_CHAR))
                )
    return fig


def _mark(fig: go.Figure, axis: str, value: float, text: str, color: str, position: str, row, col) -> go.Figure:
    """A dashed line across the plot at ``value`` on ``axis`` (``"x"``: vertical) with a label at one end, placed in
    the axis's own coordinates (log10 of the value on a log axis)."""
    import math

    add = fig.add_vline if axis == "x" else fig.add_hline
    kwargs = {"row": row, "col": col} if row is not None or col is not None else {}
    add(value, line_dash="dash", line_color=color, **kwargs)
    shape = fig.layout.shapes[-1]
    ref = getattr(shape, f"{axis}ref") or axis
    other = getattr(shape, f"{'y' if axis == 'x' else 'x'}ref")
    ax = fig.layout[f"{axis}axis{ref[1:]}"]
    at = math.log10(value) if ax.type == "log" else value
    end = 1 if position in ("top", "right") else 0
    if axis == "x":
        place = {"x": at, "xref": ref, "y": end, "yref": other, "xanchor": "left"}
        place["yanchor"] = "top" if end else "bottom"
    else:
        place = {"y": at, "yref": ref, "x": end, "xref": other, "yanchor": "bottom"}
        place["xanchor"] = "right" if end else "left"
    fig.add_annotation(text=text, showarrow=False, font={"size": 11, "color": color}, **place)
    return fig


def mark_x(
    fig: go.Figure,
    x: float,
    text: str,
    *,
    color: str = "#444444",
    position: str = "top",
    row: int | None = None,
    col: int | None = None,
) -> go.Figure:
    """A dashed vertical line at ``x`` labelled ``text`` at the ``position`` ("top" or "bottom") of the plot.

    Unlike ``add_vline(annotation_text=...)``, the label stays at ``x`` on a log axis (plotly places a vline's
    annotation at ``10**x`` there, which also stretches the axis range). Set the axis type first: the label is placed
    in the axis's coordinates as they are when it is added (:func:`tidy_axes` moves it if it turns the axis linear).

    Examples
    --------
    >>> f = mark_x(go.Figure(layout={"xaxis": {"type": "log"}}), 100.0, "SLO")
    >>> f.layout.annotations[0].x, f.layout.shapes[0].x0
    (2.0, 100.0)
    """
    return _mark(fig, "x", x, text, color, position, row, col)


def mark_y(
    fig: go.Figure,
    y: float,
    text: str,
    *,
    color: str = "#444444",
    position: str = "right",
    row: int | None = None,
    col: int | None = None,
) -> go.Figure:
    """A dashed horizontal line at ``y`` labelled ``text`` above it at the ``position`` ("left" or "right") of the
    plot, in the axis's coordinates (log10 of ``y`` on a log axis: plotly placed ``add_hline``'s label for
    ``y=0.01`` at 10^0.01, the top of a CCDF). Set the axis type first, as for :func:`mark_x`.

    Examples
    --------
    >>> f = mark_y(go.Figure(layout={"yaxis": {"type": "log"}}), 0.01, "p99")
    >>> f.layout.annotations[0].y, f.layout.shapes[0].y0
    (-2.0, 0.01)
    """
    return _mark(fig, "y", y, text, color, position, row, col)


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
