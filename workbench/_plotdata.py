"""The numeric data of plotly traces, for the figure builders (:mod:`workbench.viz`) and the figure invariants
(:func:`workbench.testing.figure_problems`) alike: one definition of what "two lines coincide" means, of the data an
axis shows (its extent in powers of ten on a log axis), of which bars an axis carries, and of the words that say an
axis is logarithmic or where its bars start."""

from __future__ import annotations

import numpy as np

__all__ = [
    "numbers",
    "axis_ref",
    "axis_values",
    "log_extent",
    "match_groups",
    "bar_traces",
    "LOG_MENTION",
    "BARS_FROM",
    "coinciding_lines",
    "hidden_markers",
    "marker_points",
    "title_width_px",
    "title_room_px",
    "EM_PER_CHAR",
    "MODEBAR_PX",
]

#: Average glyph width of plotly's default font, in ems (for estimating how many characters fit a width).
EM_PER_CHAR = 0.56
#: Width (px) of the mode bar a panel's figure shows on hover at its top right (measured ~160 px in Lab: camera, link, zoom, pan, autoscale, reset;
#: :data:`workbench.viz.MODEBAR_REMOVE`): a title's first line, level with it, stops short of it.
MODEBAR_PX = 170


#: An axis title's words saying the axis is logarithmic: ``(log scale)``, ``(log)`` or ``, log scale`` / ``, log``
#: before the closing parenthesis of its unit (``latency (µs, log scale)``).
LOG_MENTION = r"\s*\(log(?:\s+scale)?\)|,\s*log(?:\s+scale)?(?=\s*[);])"
#: How an axis title states where bars start when the axis does not include zero (``FCT (ms; bars from 0.1)``).
BARS_FROM = "bars from"


def numbers(value) -> np.ndarray | None:
    """A trace attribute's values as a flat float array, or None when they are not numbers (categories, dates).
    Reads plotly's typed arrays too: a figure read back from JSON (``plotly.io.from_json``, the reproductions'
    cached figures) holds a numpy array as ``{"dtype": "f8", "bdata": <base64>}``.

    Examples
    --------
    >>> numbers({"dtype": "f8", "bdata": "AAAAAAAA8D8AAAAAAAAAQA=="}), numbers(["a", "b"])
    (array([1., 2.]), None)
    """
    import base64

    if value is None:
        return None
    if isinstance(value, dict):
        if "bdata" not in value or "dtype" not in value:
            return None
        raw = value["bdata"]
        data = base64.b64decode(raw) if isinstance(raw, str) else bytes(raw)
        return np.frombuffer(data, dtype=np.dtype(value["dtype"]).newbyteorder("<")).astype(float).ravel()
    try:
        return np.asarray(value, dtype=float).ravel()
    except (TypeError, ValueError):
        return None


def axis_ref(ax) -> str:
    """The trace-side name of a layout axis: ``xaxis`` -> ``x``, ``yaxis2`` -> ``y2``."""
    name = ax.plotly_name
    return name[0] + name[5:]


def axis_values(fig, ax) -> np.ndarray:
    """Every finite number the traces plot on layout axis ``ax`` (empty for categories, dates or no data)."""
    axis, ref = ax.plotly_name[0], axis_ref(ax)
    parts = []
    for trace in fig.data:
        if (getattr(trace, f"{axis}axis", None) or axis) != ref or getattr(trace, axis, None) is None:
            continue
        if getattr(trace, "visible", None) is False:
            continue
        v = numbers(getattr(trace, axis))
        if v is not None:  # not categories or dates
            parts.append(v[np.isfinite(v)])
    return np.concatenate(parts) if parts else np.empty(0)


def match_groups(fig, axis: str) -> list[list]:
    """The ``axis`` (``"x"`` or ``"y"``) layout axes of ``fig`` grouped by ``matches`` (shared axes of subplots
    must take one type and one tick policy); an axis that matches no other is a group of its own."""
    axes = list(getattr(fig, f"select_{axis}axes")())
    root = {axis_ref(a): (a.matches or axis_ref(a)) for a in axes}
    groups: dict[str, list] = {}
    for a in axes:
        groups.setdefault(root[axis_ref(a)], []).append(a)
    return list(groups.values())


def log_extent(fig, axes) -> tuple[float, float] | None:
    """log10 of the smallest and largest value shown on the log axis (or group of matched axes) ``axes``: its
    range where one is set, else its traces' positive data; None without either."""
    axes = axes if isinstance(axes, list | tuple) else [axes]
    for ax in axes:
        if ax.range is not None and None not in ax.range:
            return float(min(ax.range)), float(max(ax.range))
    values = np.concatenate([axis_values(fig, ax) for ax in axes])
    values = values[values > 0]
    if not values.size:
        return None
    return float(np.log10(values.min())), float(np.log10(values.max()))


def bar_traces(fig, ax) -> list:
    """The bar traces whose values (their length) lie along layout axis ``ax`` and start at zero (no ``base`` of
    their own): ``y`` for vertical bars, ``x`` for horizontal ones."""
    axis, ref = ax.plotly_name[0], axis_ref(ax)
    found = []
    for t in fig.data:
        if getattr(t, "type", None) not in ("bar", "histogram") or t.visible is False or t.base is not None:
            continue
        along = "x" if t.orientation == "h" else "y"
        if along == axis and (getattr(t, f"{axis}axis", None) or axis) == ref:
            found.append(t)
    return found


def _numeric_xy(trace) -> tuple[np.ndarray, np.ndarray] | None:
    """A scatter trace's numeric (x, y) of one shape (x defaults to the point index), or None (other trace types,
    no y, categories, dates)."""
    if getattr(trace, "type", None) not in ("scatter", "scattergl") or trace.y is None:
        return None
    y = numbers(trace.y)
    x = None if y is None else np.arange(y.size, dtype=float) if trace.x is None else numbers(trace.x)
    if x is None or y is None:
        return None
    return (x, y) if x.shape == y.shape else None


def _xy(trace) -> tuple[np.ndarray, np.ndarray] | None:
    """A line trace's numeric (x, y), or None when it has none (categories, dates, no line)."""
    if "lines" not in (getattr(trace, "mode", None) or "lines"):
        return None
    xy = _numeric_xy(trace)
    return xy if xy is not None and xy[1].size else None


def coinciding_lines(fig) -> list[tuple[int, int]]:
    """Pairs ``(i, j)``, ``i < j``, of line traces on the same axes whose points coincide (to 1e-9 relative):
    drawn alike, trace ``j`` hides trace ``i`` although both keep a legend entry."""
    lines = []
    for i, t in enumerate(fig.data):
        xy = _xy(t)
        if xy is not None and t.visible is not False:
            lines.append((i, (t.xaxis or "x", t.yaxis or "y"), xy))
    pairs = []
    for a, (i, axes_i, (xi, yi)) in enumerate(lines):
        for j, axes_j, (xj, yj) in lines[a + 1 :]:
            if (
                axes_i == axes_j
                and xi.shape == xj.shape
                and np.allclose(xi, xj, rtol=1e-9, atol=0.0, equal_nan=True)
                and np.allclose(yi, yj, rtol=1e-9, atol=0.0, equal_nan=True)
            ):
                pairs.append((i, j))
    return pairs


#: Plotly's default marker size (px) and the point count below which a scatter without a mode draws markers.
_DEFAULT_MARKER_SIZE = 6
_AUTO_MARKERS_BELOW = 20


def marker_points(trace) -> tuple[np.ndarray, np.ndarray, float, str | None] | None:
    """A marker trace's numeric (x, y) of its finite points, its marker size and its line's dash (None: no line); None
    when it draws no markers of one size (no markers, sizes per point, categories, dates)."""
    xy = None if getattr(trace, "visible", None) is False else _numeric_xy(trace)
    if xy is None:
        return None
    x, y = xy
    mode = trace.mode or ("lines+markers" if y.size < _AUTO_MARKERS_BELOW else "lines")
    size = trace.marker.size if trace.marker.size is not None else _DEFAULT_MARKER_SIZE
    if "markers" not in mode or not isinstance(size, int | float):
        return None
    ok = np.isfinite(x) & np.isfinite(y)
    dash = (trace.line.dash or "solid") if "lines" in mode else None
    return (x[ok], y[ok], float(size), dash) if ok.any() else None


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise ``a[:, None] == b[None, :]`` to 1e-9 relative (what :func:`coinciding_lines` calls the same)."""
    return np.isclose(a[:, None], b[None, :], rtol=1e-9, atol=1e-12)


def _segments_covered(x: np.ndarray, y: np.ndarray, others: list[tuple[np.ndarray, np.ndarray]]) -> bool:
    """Whether every segment of the polyline (x, y) of non-zero length lies on the segments of the polylines in
    ``others`` (drawn over it: the line beneath does not show)."""
    ends = [np.column_stack([ox, oy]) for ox, oy in others]
    a = np.concatenate([e[:-1] for e in ends]) if ends else np.empty((0, 2))
    b = np.concatenate([e[1:] for e in ends]) if ends else np.empty((0, 2))
    for k in range(x.size - 1):
        p, q = np.array([x[k], y[k]]), np.array([x[k + 1], y[k + 1]])
        d = q - p
        length = float(np.hypot(*d))
        if not np.isfinite(length) or length <= 1e-12 * max(float(np.abs(p).max()), 1.0):
            continue
        # the other segments on the line through p and q, as intervals of its parameter (p at 0, q at 1)
        off = [
            np.abs(d[0] * (e[:, 1] - p[1]) - d[1] * (e[:, 0] - p[0])) <= 1e-9 * length * (np.hypot(*(e - p).T) + length)
            for e in (a, b)
        ]
        ta, tb = (((e - p) @ d) / length**2 for e in (a, b))
        on = off[0] & off[1] & np.isfinite(ta) & np.isfinite(tb)
        spans = sorted(zip(np.minimum(ta, tb)[on], np.maximum(ta, tb)[on]))
        reach = 0.0
        for lo, hi in spans:  # does the union of the intervals cover [0, 1]?
            if lo > reach + 1e-9:
                break
            reach = max(reach, hi)
        if reach < 1 - 1e-9:
            return False
    return True


def hidden_markers(fig) -> list[tuple[int, list[int]]]:
    """Marker traces drawn entirely under later ones, as ``(i, [j, ...])``: every point of trace ``i`` has a marker
    of a later trace ``j`` on the same axes at the same position (to 1e-9 relative) and at least as large, and its
    line, if it draws one, runs along later lines of the same dash. Trace ``i`` keeps its legend entry, but a reader cannot see it
    (five detectors whose precision/recall points coincide show as two).

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> f = go.Figure([go.Scatter(x=[1, 1], y=[0.5, 1], mode="markers"), go.Scatter(x=[1, 1], y=[1, 0.5])])
    >>> hidden_markers(f)
    [(0, [1])]
    """
    traces = [
        (i, (t.xaxis or "x", t.yaxis or "y"), m) for i, t in enumerate(fig.data) if (m := marker_points(t)) is not None
    ]
    found = []
    for a, (i, axes, (x, y, size, dash)) in enumerate(traces):
        later = [(j, m) for j, axes_j, m in traces[a + 1 :] if axes_j == axes and m[2] >= size]
        covered = np.zeros(x.size, bool)
        by: list[int] = []
        for j, (xj, yj, _, _) in later:
            hit = (_same(x, xj) & _same(y, yj)).any(axis=1)
            if (hit & ~covered).any():
                by.append(j)
            covered |= hit
        if not covered.all():
            continue
        if dash is not None and x.size > 1:  # its line shows unless later lines of its dash run along it
            over = [
                xy
                for j, t in enumerate(fig.data)
                if j > i
                and (t.xaxis or "x", t.yaxis or "y") == axes
                and (t.line.dash or "solid") == dash
                and t.visible is not False
                and (xy := _xy(t)) is not None
                and xy[0].size > 1
            ]
            if not _segments_covered(x, y, over):
                continue
        found.append((i, by))
    return found


def title_width_px(fig) -> tuple[float, float]:
    """Estimated pixel widths of a figure's title text: (its first line, its widest line)."""
    import re

    size = fig.layout.title.font.size or 17
    lines = [re.sub(r"<[^>]+>", "", line) for line in re.split(r"<br\s*/?>", fig.layout.title.text or "")]
    widths = [len(line) * size * EM_PER_CHAR for line in lines]
    return widths[0], max(widths)


def title_room_px(fig, width_px: int) -> tuple[float, float]:
    """The room a title has in a figure ``width_px`` wide: (its first line, level with the mode bar; other lines)."""
    usable = width_px - (fig.layout.margin.l if fig.layout.margin.l is not None else 80) * 0.3
    return usable - MODEBAR_PX, usable
