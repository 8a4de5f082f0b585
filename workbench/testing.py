"""Helpers for tests of the workbench and of code built on it (in the spirit of ``xarray.testing``).

It is longer than ~500 lines because the figure invariants are one list read in one place: each rule of
:func:`figure_problems` (numbers, words, legends, titles, axes, annotations, colours) has its check beside it, and the
browser tests run the same checks on what plotly draws.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from . import _deps, data

__all__ = [
    "requires_data",
    "data_file",
    "data_reads",
    "unrecorded_reads",
    "find_widget",
    "notebook_missing_data",
    "figure_problems",
    "axis_problems",
    "annotation_problems",
    "colour_problems",
    "MAX_LEGEND_ENTRIES",
]


def _missing_reason(missing: list[str]) -> str:
    where = ", ".join(map(str, data.search_path())) or "no search-path directory exists"
    return f"real data not on the data search path ({where}): {', '.join(missing)}"


def requires_data(*relpaths: str):
    """A pytest mark that skips the test, naming what is missing, unless every file in ``relpaths`` (paths relative
    to the data search path) is on the data search path. Use it on tests that read real traces::

        @requires_data("azure-llm-2023/AzureLLMInferenceTrace_code.csv")
        def test_load_azure():
            df = load_trace(data_file("azure-llm-2023/AzureLLMInferenceTrace_code.csv"))
    """
    import pytest

    if not relpaths:
        raise ValueError("requires_data needs at least one relative path")
    missing = [rel for rel in relpaths if data.find(rel) is None]
    # ``workbench_data`` (ignored by skipif) is how the test session marks the test ``data``: ``-m "not data"``
    return pytest.mark.skipif(  # type: ignore[call-arg]  # extra keywords are kept on the mark
        bool(missing), reason=_missing_reason(missing) if missing else "", workbench_data=tuple(relpaths)
    )


def data_file(relpath: str) -> Path:
    """The path of ``relpath`` on the data search path, for a test marked with :func:`requires_data`
    (``FileNotFoundError`` naming the search path if the mark is missing and so is the file)."""
    found = data.find(relpath)
    if found is None:
        raise FileNotFoundError(_missing_reason([relpath]) + " (mark the test with workbench.testing.requires_data)")
    return found


_READS: list[set[Path]] = []
_READS_LOCK = threading.Lock()
_HOOKED: list[bool] = []


def _audit(event: str, args: tuple) -> None:
    if event != "open" or not _READS:
        return
    target = args[0]
    if isinstance(target, int):
        return
    try:
        path = Path(os.fsdecode(target)).resolve()
    except (TypeError, ValueError, OSError):
        return
    with _READS_LOCK:
        for reads in _READS:
            reads.add(path)


@contextlib.contextmanager
def data_reads() -> Iterator[set[Path]]:
    """Collect every file the enclosed code opens that lies in a directory of the data search path (through
    Python's ``open`` and what is built on it: pandas, numpy, csv, json; a Python audit hook, installed once per
    process and idle outside this block). What :func:`unrecorded_reads` checks a dependency record against."""
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED.append(True)
    opened: set[Path] = set()
    with _READS_LOCK:
        _READS.append(opened)
    out: set[Path] = set()
    try:
        yield out
    finally:
        with _READS_LOCK:
            _READS.remove(opened)
        roots = data.search_path()
        out.update(p for p in opened if any(p.is_relative_to(r) for r in roots) and p.is_file())


def unrecorded_reads(reads: set[Path], deps: _deps.Deps) -> list[Path]:
    """The files of ``reads`` (from :func:`data_reads`) that a dependency record does not cover: neither one of its
    data files nor inside one of its data directories, as they resolve now. Empty when the record is complete."""
    covered = [p.resolve() for p in (data.find(k) for k in deps.data) if p is not None]
    return sorted(r for r in reads if not any(r == c or r.is_relative_to(c) for c in covered))


def notebook_missing_data(notebook: str | os.PathLike) -> list[str]:
    """The files a notebook's printed outputs were computed from (its ``workbench.requires_data`` metadata, paths
    relative to the data search path) that are not on the data search path here.

    The committed outputs of such a notebook describe the real data; where the data is absent the notebook still runs
    (on its stand-ins) but its outputs cannot match, so the test suite executes it without comparing outputs.
    """
    path = Path(notebook)
    try:
        metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable notebook ({exc})") from exc
    required = metadata.get("workbench", {}).get("requires_data", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ValueError(f"{path}: metadata workbench.requires_data must be a list of relative paths, got {required!r}")
    return [rel for rel in required if data.find(rel) is None]


def notebook_needs_data(notebook: str | os.PathLike) -> bool:
    """True when a notebook cannot run at all without its ``requires_data`` files (metadata
    ``workbench.runs_without_data: false``: no stand-in exists); such a notebook is skipped, naming the files, where
    they are absent, instead of being executed without output comparison."""
    metadata = json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {})
    return metadata.get("workbench", {}).get("runs_without_data", True) is False


def paper_missing_data(paper) -> list[str]:
    """The files of a paper's ``requires_data`` (a :class:`~workbench.reproductions.Paper`: its claims, experiments and
    panel have no stand-in) that are not on the data search path here."""
    return [rel for rel in paper.requires_data if data.find(rel) is None]


def find_widget(root, *, description: str | None = None, kind: str | None = None):
    """The first widget under ``root`` (depth-first through ``children``) whose ``description`` equals
    ``description`` and/or whose class name is ``kind`` (e.g. ``"HTML"``); ``KeyError`` if there is none.

    Examples
    --------
    >>> import ipywidgets as W
    >>> box = W.VBox([W.HTML("hi"), W.IntSlider(description="n")])
    >>> find_widget(box, description="n").value, find_widget(box, kind="HTML").value
    (0, 'hi')
    """
    if description is None and kind is None:
        raise ValueError("find_widget needs description and/or kind")
    stack = [root]
    while stack:
        w = stack.pop(0)
        if (description is None or getattr(w, "description", None) == description) and (
            kind is None or type(w).__name__ == kind
        ):
            return w
        stack[:0] = list(getattr(w, "children", ()))
    raise KeyError(f"no widget with description={description!r} kind={kind!r} under {type(root).__name__}")


#: More legend entries than this crowd the plot away (use colour for one dimension and dash for another instead).
MAX_LEGEND_ENTRIES = 8
#: Code identifiers a reader should not see: ``snake_case`` names and lower-case spellings of a pipeline schedule's
#: name such as ``1f1b`` (a reader writes 1F1B).
_RAW_IDENTIFIER = r"\b[a-z0-9]+_[a-z0-9_]+\b|\b\d+f\d+b\b"
_ASCII_UNITS = r"\(us\)|\bus\b(?![a-z])|\(rps\)|\brps\b"
_FLOAT_NOISE = 1e-9
#: A number that failed to be one, printed into a text ("per nan-minute window", "x inf", "None GPUs").
_NOT_A_NUMBER = r"\b(?:[Nn]a[Nn]|[Ii]nf|None)\b"


def figure_problems(fig, *, width_px: int | None = None) -> list[str]:
    """What a reader would see wrong in a plotly figure; empty when it passes the project's figure invariants:

    * every plotted number finite (NaN is a gap and allowed; infinity is not data);
    * no linear axis autoranged over floating-point noise (a data span below 1e-9 of its magnitude);
    * titles, axis titles, annotations and legend entries in words (no ``snake_case`` identifiers) and units from
      the project's table (``µs`` and ``req/s``, never ``us`` or ``rps``), and no ``nan``, ``inf`` or ``None`` printed
      where a number should be; no point label in exponent notation (``1.08e+03``);
    * at most :data:`MAX_LEGEND_ENTRIES` legend entries;
    * no text label of a point cut off at the edge of an autoranged axis (a label above the highest point is clipped
      by the plot area unless the trace sets ``cliponaxis=False``);
    * with ``width_px`` (the narrowest the figure is drawn, e.g. a panel's :data:`~workbench.widgets.FIGURE_MIN_PX`):
      the title's lines fit that width and its first line stops short of the mode bar at the top right;
    * no line drawn exactly over another with the same dash, and no marker series whose every point lies under as
      large a marker of later series (the one beneath would be invisible although it keeps its legend entry);
    * axes that read right (:func:`axis_problems`): a log axis has an explicit tick policy whose labels are full
      values (never plotly's bare ``2`` or ``5`` between powers of ten, never an SI suffix), every axis at least two
      labelled ticks in view, a linear axis's title does not say "log", bars start at zero or their axis title states
      where they start (``bars from 0.1``), and no bars are stacked on a log axis;
    * annotations placed in their axes' coordinates (:func:`annotation_problems`): on a log axis at log10 of the
      value (a label at the raw value of the line it names is drawn at 10 to that power), and none that stretches
      its axis beyond what the figure plots;
    * colours from the workbench's palette (:data:`workbench.viz.PALETTE`, :data:`workbench.viz.COLORS`), never
      plotly's default colorway;
    * category labels in words too (``attention (prefill)``, not ``attn_prefill``).

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> figure_problems(go.Figure(go.Scatter(y=[1, float("inf")], name="mean_rate_rps", line_color="#1f77b4")))
    ['inf in trace 0 (mean_rate_rps).y', "identifier in legend: 'mean_rate_rps'"]
    """
    import re

    import numpy as np

    from ._plotdata import axis_values, numbers

    problems: list[str] = []
    for i, t in enumerate(fig.data):
        for attr in ("x", "y", "z"):
            a = numbers(getattr(t, attr, None))
            if a is not None and np.isinf(a).any():  # None: categories, dates
                problems.append(f"inf in trace {i} ({t.name}).{attr}")
    texts = []
    if fig.layout.title and fig.layout.title.text:
        texts.append(("title", fig.layout.title.text))
    for ax in [*fig.select_xaxes(), *fig.select_yaxes()]:
        if ax.title and ax.title.text:
            texts.append((ax.plotly_name, ax.title.text))
        if ax.range is None and ax.type in (None, "-", "linear"):
            v = axis_values(fig, ax)
            if v.size > 1 and 0 < np.ptp(v) <= _FLOAT_NOISE * max(abs(float(v.mean())), 1e-300):
                problems.append(f"{ax.plotly_name} autoranges over float noise ({v.min()!r} .. {v.max()!r})")
    for a in fig.layout.annotations or ():
        if a.text:
            texts.append(("annotation", a.text))
    problems += _clipped_text(fig)
    if width_px is not None and fig.layout.title and fig.layout.title.text:
        from ._plotdata import title_room_px, title_width_px

        (first, widest), (first_room, room) = title_width_px(fig), title_room_px(fig, width_px)
        if first > first_room or widest > room:
            problems.append(
                f"title runs {'past the figure' if widest > room else 'under the mode bar'} at {width_px} px "
                f"(first line ~{first:.0f} px of {first_room:.0f}, widest ~{widest:.0f} px of {room:.0f})"
            )
    for i, t in enumerate(fig.data):  # a point's own label: 1,080 or 1.08k reads, 1.08e+03 does not
        labels = getattr(t, "text", None)
        for label in [labels] if isinstance(labels, str) else list(labels) if labels is not None else []:
            if isinstance(label, str) and re.search(r"\d(?:\.\d+)?e[+-]?\d", label):
                problems.append(f"exponent notation in trace {i} ({t.name}) label: {label!r}")
                break
    legend = [t.name for t in fig.data if t.name and t.showlegend is not False]
    texts += [("legend", name) for name in dict.fromkeys(legend)]
    texts += [("category label", c) for c in _category_labels(fig)]
    problems += axis_problems(fig) + annotation_problems(fig) + colour_problems(fig)
    for where, text in texts:
        plain = re.sub(r"<[^>]+>", " ", text)
        if re.search(_RAW_IDENTIFIER, plain):
            problems.append(f"identifier in {where}: {text!r}")
        if re.search(_ASCII_UNITS, plain):
            problems.append(f"ASCII unit in {where}: {text!r}")
        if re.search(_NOT_A_NUMBER, plain):
            problems.append(f"not a number printed in {where}: {text!r}")
    if len(set(legend)) > MAX_LEGEND_ENTRIES:
        problems.append(f"{len(set(legend))} legend entries (at most {MAX_LEGEND_ENTRIES})")
    from ._plotdata import coinciding_lines, hidden_markers

    hidden = set()
    for i, j in coinciding_lines(fig):
        a, b = fig.data[i], fig.data[j]
        if (a.line.dash or "solid") == (b.line.dash or "solid") and a.name and a.showlegend is not False:
            problems.append(f"trace {j} ({b.name}) hides trace {i} ({a.name}): same points, same dash")
            hidden.add(i)
    for i, by in hidden_markers(fig):
        a = fig.data[i]
        if i not in hidden and a.name and a.showlegend is not False:
            over = ", ".join(f"{j} ({fig.data[j].name})" for j in by)
            problems.append(f"trace {i} ({a.name}) hidden under trace(s) {over}: same points, markers as large")
    return problems


#: A point's text label needs about this share of its axis's data span beyond the point (a 12 px label on a ~190 px
#: plot less the ~5% autorange pad): closer to the edge of an autoranged axis, the plot area cuts it.
_LABEL_ROOM = 0.12


def _clipped_text(fig) -> list[str]:
    """Text labels of scatter points at (or near) the edge of an autoranged axis on the side the label is drawn (above the
    highest point, below the lowest, right of the rightmost, left of the leftmost): the plot area clips them unless
    the trace sets ``cliponaxis=False`` (plotly's autorange leaves room for markers, not for their labels)."""
    import numpy as np

    from ._plotdata import axis_values, numbers

    found = []
    sides = (("y", "top", np.max), ("y", "bottom", np.min), ("x", "right", np.max), ("x", "left", np.min))
    for i, t in enumerate(fig.data):
        if getattr(t, "type", None) not in ("scatter", "scattergl") or "text" not in (t.mode or ""):
            continue
        if t.cliponaxis is False or t.text is None or not isinstance(t.textposition, str | None):
            continue
        position = t.textposition or "middle center"
        labels = np.atleast_1d(np.asarray(t.text, dtype=object))
        for axis, side, extreme in sides:
            if side not in position or getattr(t, axis, None) is None:
                continue
            ref = getattr(t, f"{axis}axis", None) or axis
            ax = fig.layout[f"{axis}axis{ref[1:]}"]
            v = numbers(getattr(t, axis))
            if v is None:
                continue
            everything = axis_values(fig, ax)
            if ax.range is not None or not everything.size or labels.size not in (1, v.size):
                continue
            edge, span = extreme(everything), np.ptp(everything)
            if getattr(ax, "type", None) == "log" and (everything > 0).all():
                v, edge, span = np.log10(np.maximum(v, 1e-300)), np.log10(edge), np.ptp(np.log10(everything))
            at_edge = np.abs(v - edge) <= _LABEL_ROOM * span
            shown = [str(lab) for lab in np.broadcast_to(labels, v.shape)[at_edge] if str(lab or "").strip()]
            if shown:
                found.append(f"text of trace {i} ({t.name}) cut off at the {side} of the plot: {shown[0]!r}")
    return found


def _category_labels(fig) -> list[str]:
    """The text of every category a figure's traces place on an axis, and of every tick label it sets."""
    import numpy as np

    found: dict[str, None] = {}
    for t in fig.data:
        for axis in ("x", "y"):
            v = getattr(t, axis, None)
            if v is None or isinstance(v, str):
                continue
            a = np.asarray(v, dtype=object).ravel()
            if a.size and all(isinstance(x, str) for x in a[:50]):
                try:
                    np.asarray(a, dtype=float)
                except ValueError:  # not numbers written as text
                    found.update(dict.fromkeys(map(str, a)))
    for ax in [*fig.select_xaxes(), *fig.select_yaxes()]:
        if ax.ticktext is not None:
            found.update(dict.fromkeys(map(str, ax.ticktext)))
    return list(found)


def _numbers(values) -> list[float]:
    out = []
    for v in values:
        if isinstance(v, int | float) and not isinstance(v, bool):
            out.append(float(v))
    return out


def axis_problems(fig) -> list[str]:
    """What makes an axis of ``fig`` read wrong (the axis rules of :func:`figure_problems`; the policy that meets
    them is :func:`workbench.viz.tidy_axes`).

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> axis_problems(go.Figure(go.Scatter(y=[0.15, 3.0]), layout={"yaxis": {"type": "log", "dtick": "D2"}}))
    ['yaxis: log axis labels the ticks between powers of ten with a bare digit (2 for 0.2 or 20)']
    >>> axis_problems(go.Figure(go.Bar(y=[0.5, 0.8]), layout={"yaxis": {"type": "log", "dtick": 1}}))[-1]
    'yaxis: bars on a log axis without a stated baseline (the axis title says where the bars start: "bars from ...")'
    """
    import re

    from ._plotdata import BARS_FROM, LOG_MENTION, bar_traces, log_extent, match_groups

    problems = []
    for axis in ("x", "y"):
        for group in match_groups(fig, axis):
            for ax in group:
                name, title = ax.plotly_name, re.sub(r"\s*<br\s*/?>\s*", " ", ax.title.text or "")
                if ax.type == "log":
                    extent = log_extent(fig, group)
                    if extent is not None:
                        problems += [f"{name}: {p}" for p in _log_tick_problems(ax, *extent)]
                elif re.search(LOG_MENTION, title):
                    problems.append(f"{name}: the title says log on a {ax.type or 'linear'} axis: {title!r}")
                elif ax.tickvals is not None and ax.range is not None and None not in ax.range:
                    lo, hi = sorted(ax.range)
                    inside = [v for v in _numbers(ax.tickvals) if lo <= v <= hi]
                    if len(inside) < 2:
                        problems.append(f"{name}: {len(inside)} labelled tick(s) in view (at least 2)")
                bars = bar_traces(fig, ax)
                if not bars:
                    continue
                if ax.type == "log":
                    if BARS_FROM not in title:
                        problems.append(
                            f"{name}: bars on a log axis without a stated baseline (the axis title says where the "
                            f'bars start: "{BARS_FROM} ...")'
                        )
                    if fig.layout.barmode in ("stack", "relative") and len(bars) > 1:
                        problems.append(f"{name}: bars stacked on a log axis (a segment's length means nothing)")
                elif ax.range is not None and ax.autorange is not True:
                    bottom, top = ax.range  # either may be None (autoranged)
                    starts_above = isinstance(bottom, int | float) and bottom > 0
                    ends_below = isinstance(top, int | float) and top < 0
                    if (starts_above or ends_below) and BARS_FROM not in title:
                        problems.append(
                            f"{name}: bars on an axis from {bottom} to {top} (not including zero) without a stated "
                            f'baseline ("{BARS_FROM} ..." in the axis title)'
                        )
    return problems


def _log_tick_problems(ax, lo: float, hi: float) -> list[str]:
    """The tick problems of log axis ``ax`` showing log10 values ``lo`` to ``hi``."""
    import math

    eps = 1e-6
    dtick = ax.dtick
    if ax.tickvals is not None:
        ticks = [math.log10(v) for v in _numbers(ax.tickvals) if v > 0]
        shown = [v for v in ticks if lo - eps <= v <= hi + eps]
        return [] if len(shown) >= 2 else [f"{len(shown)} labelled tick(s) in view (at least 2)"]
    if dtick is None:
        return ["log axis left to plotly's automatic ticks (which label the ticks between powers of ten with a bare "
                "digit: 2 for 0.2 or 20)"]  # fmt: skip
    if isinstance(dtick, str) and dtick[:1] == "D":
        if not ax.tickformat:
            return ["log axis labels the ticks between powers of ten with a bare digit (2 for 0.2 or 20)"]
        digits = (1, 2, 5) if dtick == "D2" else tuple(range(1, 10))
        ticks = [p + math.log10(d) for p in range(math.floor(lo) - 1, math.ceil(hi) + 1) for d in digits]
    elif isinstance(dtick, str) and dtick[:1] == "L":
        step = float(dtick[1:])
        first = math.ceil(10**lo / step) * step
        ticks = [math.log10(first + k * step) for k in range(int((10**hi - first) / step) + 1) if first + k * step > 0]
    else:
        step = float(dtick)
        if ax.exponentformat not in ("power", "none"):
            return [f"log axis labels powers of ten with exponentformat {ax.exponentformat!r} (1μ, 1k: use power)"]
        ticks = [k * step for k in range(math.ceil(lo / step - eps), math.floor(hi / step + eps) + 1)]
    shown = [v for v in ticks if lo - eps <= v <= hi + eps]
    return [] if len(shown) >= 2 else [f"{len(shown)} labelled tick(s) in view on a log axis (at least 2)"]


def _axis_of(fig, axis: str, ref: str):
    try:
        return fig.layout[f"{axis}axis{ref[1:]}"]
    except (KeyError, ValueError):
        return None


def annotation_problems(fig) -> list[str]:
    """Annotations placed in data coordinates that do not say what they mean: on a log axis an annotation is placed
    at log10 of its value, so one at the raw value of the line it labels (``add_hline(y=0.01,
    annotation_text="p99")``) is drawn at 10 to that power; and an annotation beyond everything the figure plots on
    its axis (data and shapes) stretches the axis to reach it (:func:`workbench.viz.mark_x` and ``mark_y`` place
    them right).

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> f = go.Figure(go.Scatter(x=[0.5, 3.0], y=[0.2, 1.0]), layout={"xaxis": {"type": "log"}})
    >>> _ = f.add_vline(x=1.0, annotation_text="Poisson")
    >>> annotation_problems(f)  # doctest: +NORMALIZE_WHITESPACE
    ["annotation 'Poisson' at x=1 on a log axis is drawn at 10^1, not at the line it labels (1): a log axis places
    annotations at log10 of their value"]
    """
    import math

    import numpy as np

    from ._plotdata import axis_values

    problems = []
    shapes = list(fig.layout.shapes or ())
    for a in fig.layout.annotations or ():
        if not a.text:
            continue
        for axis in ("x", "y"):
            ref = getattr(a, f"{axis}ref") or axis
            v = getattr(a, axis)
            if ref == "paper" or "domain" in ref or not isinstance(v, int | float) or isinstance(v, bool):
                continue
            ax = _axis_of(fig, axis, ref)
            if ax is None or ax.type in ("category", "date", "multicategory"):
                continue
            coords = [
                float(c)
                for sh in shapes
                if (getattr(sh, f"{axis}ref") or axis) == ref
                for c in (getattr(sh, f"{axis}0"), getattr(sh, f"{axis}1"))
                if isinstance(c, int | float) and not isinstance(c, bool)
            ]
            log = ax.type == "log"
            if log:
                raw = [c for c in coords if c > 0 and math.isclose(v, c, rel_tol=1e-9, abs_tol=1e-12)]
                if any(not math.isclose(v, math.log10(c), abs_tol=1e-9) for c in raw):
                    problems.append(
                        f"annotation {a.text!r} at {axis}={v:g} on a log axis is drawn at 10^{v:g}, not at the line "
                        f"it labels ({raw[0]:g}): a log axis places annotations at log10 of their value"
                    )
                    continue
            data = axis_values(fig, ax)
            shown = np.concatenate([data, np.asarray(coords, dtype=float)])
            if log:
                shown = np.log10(shown[shown > 0])
            if ax.range is not None and None not in ax.range and ax.autorange is not True:
                shown = np.concatenate([shown, np.asarray(_numbers(ax.range), dtype=float)])
            if shown.size < 2:
                continue
            lo, hi = float(shown.min()), float(shown.max())
            pad = 0.1 * (hi - lo) + 1e-12
            if not lo - pad <= v <= hi + pad:
                where = f"10^{v:g}" if log else f"{v:g}"
                problems.append(
                    f"annotation {a.text!r} at {axis}={where} lies beyond what the figure plots on its axis "
                    f"({10**lo if log else lo:g} to {10**hi if log else hi:g}): it stretches the axis to reach it"
                )
    return problems


#: plotly's default colorway (its "plotly" template), which the workbench's figures do not use.
_PLOTLY_COLORWAY = ("#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a", "#19d3f3", "#ff6692", "#b6e880", "#ff97ff",
                    "#fecb52")  # fmt: skip


def _explicit_colours(t) -> list[str]:
    colours = []
    for holder, attr in (("line", "color"), ("marker", "color"), (None, "fillcolor")):
        obj = getattr(t, holder, None) if holder else t
        value = getattr(obj, attr, None) if obj is not None else None
        if isinstance(value, str):
            colours.append(value)
        elif value is not None and not isinstance(value, int | float):
            colours += [c for c in list(value) if isinstance(c, str)]
    return colours


def colour_problems(fig) -> list[str]:
    """Series drawn in plotly's default palette while every other figure takes its colours from the workbench's
    (:data:`workbench.viz.COLORS` per entity, :data:`workbench.viz.PALETTE` in turn): a colour from plotly's default
    colorway, or no colour while the figure's colorway is plotly's default.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> colour_problems(go.Figure(go.Bar(y=[1, 2], name="compute"), layout={"template": "plotly_white"}))
    ["trace 0 (compute) takes plotly's default palette (no colour of its own; the figure's colorway is plotly's)"]
    """
    layout = fig.layout
    colorway = layout.colorway or (layout.template.layout.colorway if layout.template else None) or ()
    default = {c.lower() for c in colorway} & set(_PLOTLY_COLORWAY)
    problems = []
    for i, t in enumerate(fig.data):
        if t.visible is False or getattr(t, "type", None) not in ("scatter", "scattergl", "bar", "box", "histogram",
                                                                  "violin"):  # fmt: skip
            continue
        if getattr(t, "mode", None) == "text":
            continue
        colours = [c.lower() for c in _explicit_colours(t)]
        if any(c in _PLOTLY_COLORWAY for c in colours):
            problems.append(f"trace {i} ({t.name}) is drawn in a colour of plotly's default palette")
        elif not colours and default:
            problems.append(
                f"trace {i} ({t.name}) takes plotly's default palette (no colour of its own; the figure's colorway "
                "is plotly's)"
            )
    return problems
