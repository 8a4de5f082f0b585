"""ipywidgets panels: controls wired to a model call and plotly FigureWidgets, nothing else.

Every panel follows one pattern: its controls are constrained to valid ranges so that a user cannot reach an invalid
model call; a change calls one model function that returns a tidy result (a DataFrame or a record); the figures are
built from that result by :mod:`workbench.viz` builders and put in place with :func:`redraw`. A panel computes
nothing itself and never imports a reproduction: analysis that a panel needs lives in a model package.

Figures are shown in :class:`FigurePane` widgets: an output area that renders the figure with plotly's mimetype
renderer (the ``jupyterlab-plotly`` extension draws it offline). Unlike ``plotly.graph_objects.FigureWidget`` it
renders in Voilà dashboards as well as in JupyterLab: Voilà 0.5 cannot create the anywidget model behind
``FigureWidget``.

Layout is shared so that every panel fits a 1366x768 window with JupyterLab's file browser open and still uses a
1920x1080 one: :func:`panel` puts the controls in a grid above the figures (as many columns as fit), descriptions at
their natural width (never truncated), and the figures in a grid whose cells are at least :data:`FIGURE_MIN_PX` wide,
each figure filling its cell (``autosize``; no fixed pixel width anywhere). A panel with more figures than fit in one
row (three or four) shows them in tabs of at most two side by side (:data:`FIGURES_PER_ROW`), so that the controls
and the figures they drive are in one screen at 768 px: a second row of figures would be below the fold.

This module is longer than ~500 lines: the layout and the fidelity note (:class:`FidelityNote`) it places beside a
panel's info are read together (where the note sits is what keeps every panel within that fold), and a module of its
own in this package would read as a panel module (each of which a paper shows).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

from .._paths import cache_root
from .._units import number_text
from .._validate import one_of
from ..viz import MODEBAR_REMOVE, export_config, fit_titles, tidy_axes

__all__ = [
    "param_control",
    "param_controls",
    "param_values",
    "log_steps",
    "FigurePane",
    "Panel",
    "BACKGROUND_VALIDATION",
    "FidelityNote",
    "background_validation",
    "redraw",
    "clear",
    "load_note",
    "panel",
    "controls_grid",
    "figures_grid",
    "figures_tabs",
    "html_table",
    "FIGURE_MIN_PX",
    "FIGURES_PER_ROW",
    "CONTROL_MIN_PX",
    "NOTE_MIN_PX",
    "PANEL_CLASS",
    "FIGURE_CLASS",
    "FIDELITY_CLASS",
]

#: Narrowest a figure cell gets before the figures wrap onto another row (two side by side need ~900 px).
FIGURE_MIN_PX = 440
#: Most figures a panel shows at once: one row of two fits 1366x768 below the controls; more go in tabs.
FIGURES_PER_ROW = 2
#: Narrowest the fidelity note beside a panel's info gets (:func:`panel`).
NOTE_MIN_PX = 200
#: Narrowest a control cell gets before the controls wrap.
CONTROL_MIN_PX = 300
#: CSS classes on every panel's top-level element and on every figure pane: a stable marker for the browser tests
#: (and for any page that embeds panels) that does not depend on which controls or figures a panel has.
PANEL_CLASS = "wb-panel"
FIGURE_CLASS = "wb-figure"


class FigurePane(W.Output):
    """A figure in a panel: shows the last figure given to :func:`redraw`, filling the width of its cell.

    ``pane.figure`` is that figure (a ``plotly.graph_objects.Figure``); ``pane.data`` and ``pane.layout_figure``
    are its traces and layout, for tests and for code that reads what is shown.

    Examples
    --------
    >>> pane = FigurePane()
    >>> redraw(pane, go.Figure(go.Scatter(y=[1, 2])))
    >>> len(pane.data), pane.figure.layout.autosize
    (1, True)
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.add_class(FIGURE_CLASS)
        self.figure = go.Figure()
        self.layout.width = "100%"
        self.layout.min_width = "0"

    @property
    def data(self) -> tuple:
        return self.figure.data

    @property
    def layout_figure(self) -> go.Layout:
        return self.figure.layout

    def show(self, fig: go.Figure) -> None:
        """Render ``fig`` in place of what the pane shows."""
        import json

        import plotly.io as pio
        from IPython import get_ipython

        self.figure = fig
        if get_ipython() is None:  # no kernel (a script or a test): nothing to render into
            return
        bundle = json.loads(pio.to_json(fig, validate=False))  # plotly's encoder: numpy arrays become JSON lists
        # the camera button saves a paper-ready PNG (3x, named by title); a mode bar without the selection tools
        bundle["config"] = {**export_config(fig), "modeBarButtonsToRemove": list(MODEBAR_REMOVE)}
        # Set the synced outputs directly rather than capturing a display() in ``with self:``: the capture routes
        # through the kernel's parent message, which nbclient (``make notebooks``, store_widget_state=False) mishandles.
        self.outputs = (
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {
                    "application/vnd.plotly.v1+json": bundle,
                    "text/plain": f"<{fig.layout.title.text or 'figure'}>",
                },
            },
        )


class Panel(W.VBox):
    """A panel's top-level widget (CSS class :data:`PANEL_CLASS`); before its notebook runs, it reads as a hint
    instead of a widget repr."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.add_class(PANEL_CLASS)

    def __repr__(self) -> str:
        return "Interactive panel: run the notebook (or this cell) to use it."


def redraw(target: go.FigureWidget | FigurePane, fresh: go.Figure, *, height: int = 340) -> None:
    """Replace what ``target`` shows with ``fresh``.

    The figure fills the width of its cell (``autosize``, no fixed width), so it never runs past the output area;
    its titles are wrapped to fit the narrowest cell (:data:`FIGURE_MIN_PX`). A :class:`~plotly.graph_objects.Figure`
    is shown as it is, not copied (so build it for this call: the pane adjusts its layout): copying re-validated every
    trace and layout property: 7.9 ms a figure on average over the notebooks' 37 panel figures, up to 15 ms.
    """
    if isinstance(target, FigurePane):
        fig = fresh if type(fresh) is go.Figure else go.Figure(fresh)
        tidy_axes(fig)
        fig.update_layout(width=None, autosize=True, height=height)
        fit_titles(fig, FIGURE_MIN_PX, height)
        target.show(fig)
        return
    with target.batch_update():
        target.data = []
        target.add_traces(fresh.data)
        target.layout = fresh.layout
        tidy_axes(target)
        target.layout.width = None
        target.layout.autosize = True
        target.layout.height = height


def load_note(b: dict, n: int, span_s: float, *, who: str = "") -> str:
    """What a reader must know before a served run's numbers (HTML, empty when there is nothing to say): an
    overloaded run (its percentiles measure the backlog) and the requests never served. ``b`` is
    :func:`workbench.serving.metrics.backlog` of the run's ``n`` requests over ``span_s`` seconds of arrivals; ``who``
    names the run when a panel serves several.

    Examples
    --------
    >>> load_note({"overloaded": 0.0, "rejected": 0.0}, 10, 60.0)
    ''
    >>> load_note({"overloaded": 0.0, "rejected": 2.0}, 10, 60.0, who="naive")
    'naive: 2 requests rejected (a context larger than the KV cache or the batch budget): infinitely late in p99 TTFT<br>'
    """
    note = ""
    lead = f"{who}: " if who else ""
    if b["overloaded"]:
        note += (
            f"{lead}<b>overloaded</b>: {b['queued_at_end']:,.0f} of {n:,} requests ({b['queued_fraction']:.0%}) were still "
            f"queued when arrivals stopped, the last finished {b['drain_s']:,.0f} s after the last arrival: this rate "
            f"exceeds what the deployment serves, and the latencies below grow with the run's length ({span_s:,.0f} s)"
            "<br>"
        )
    if b["rejected"]:
        note += (
            f"{lead}{b['rejected']:,.0f} requests rejected (a context larger than the KV cache or the batch budget): "
            "infinitely late in p99 TTFT<br>"
        )
    return note


def clear(target: FigurePane, reason: str, *, height: int = 340) -> None:
    """Show nothing in ``target`` and say why: a panel in an error or invalid state clears every figure that state
    makes stale, so that no figure keeps the previous settings' data under the new message. The figure has no trace
    and no axes; its title is ``Not drawn: <reason>`` (keep the reason short, the panel's message gives the detail).

    Examples
    --------
    >>> pane = FigurePane()
    >>> redraw(pane, go.Figure(go.Scatter(y=[1, 2])))
    >>> clear(pane, "no fit")
    >>> len(pane.data), pane.figure.layout.title.text
    (0, 'Not drawn: no fit')
    """
    hidden = {"visible": False}
    empty = go.Figure(layout={"title": {"text": f"Not drawn: {reason}"}, "xaxis": hidden, "yaxis": hidden})
    redraw(target, empty, height=height)


def _fit(control: W.Widget) -> W.Widget:
    """Let a control fill its grid cell and show its whole description."""
    if hasattr(control, "style") and hasattr(control.style, "description_width"):
        control.style.description_width = "initial"
    if isinstance(control, W.Checkbox):
        control.indent = False  # no blank description column before the box
    control.layout.width = "auto"
    control.layout.min_width = "0"
    return control


def _on_release(widget: W.Widget) -> W.Widget:
    """``widget`` and every control inside it recompute on release, never on every drag step or keystroke
    (``continuous_update=False`` on each slider and text box)."""
    if hasattr(widget, "continuous_update"):
        widget.continuous_update = False
    for child in getattr(widget, "children", ()):
        _on_release(child)
    return widget


def controls_grid(controls: Sequence[W.Widget], *, min_px: int = CONTROL_MIN_PX) -> W.GridBox:
    """Controls in as many columns as fit (each at least ``min_px`` wide), descriptions never truncated; every
    slider and text box among them updates on release."""
    for c in controls:
        _on_release(c)
    return W.GridBox(
        [_fit(c) for c in controls],
        layout=W.Layout(
            grid_template_columns=f"repeat(auto-fill, minmax({int(min_px)}px, 1fr))",
            grid_gap="4px 16px",
            width="100%",
        ),
    )


def figures_grid(figures: Sequence[W.Widget], *, min_px: int = FIGURE_MIN_PX) -> W.GridBox:
    """Figures side by side while each gets ``min_px``, stacked otherwise; each fills its cell."""
    for fig in figures:
        if isinstance(fig, go.FigureWidget):
            fig.layout.autosize = True
            fig.layout.width = None
        else:
            fig.layout.width = "100%"
    return W.GridBox(
        list(figures),
        layout=W.Layout(
            grid_template_columns=f"repeat(auto-fit, minmax({int(min_px)}px, 1fr))",
            grid_gap="8px",
            width="100%",
        ),
    )


def figures_tabs(pages: Mapping[str, Sequence[W.Widget]]) -> W.Tab:
    """Figures in tabs: one page per entry of ``pages`` (tab title -> figures), each page a :func:`figures_grid` of
    at most :data:`FIGURES_PER_ROW` figures."""
    if not pages:
        raise ValueError("figures_tabs needs at least one page of figures")
    for title, figures in pages.items():
        if not 1 <= len(figures) <= FIGURES_PER_ROW:
            raise ValueError(f"page {title!r} has {len(figures)} figures; a page holds 1 to {FIGURES_PER_ROW}")
    return W.Tab(children=[figures_grid(f) for f in pages.values()], titles=list(pages), layout=W.Layout(width="100%"))


class FidelityNote(W.HTML):
    """How far the engines behind a panel lie from their independent references, for the region its controls are in
    (:func:`workbench.fidelity.panel_notes`), kept current as the controls move. Compact: one line (at the width of
    a 1366x768 window) names each engine's validated error ("serving: validated on 132 points, median |error| 8%,
    worst +147%; this model/GPU: 3 points") and, highlighted on the same line, every control that leaves the
    validated envelope ("Outside the validated envelope: GPU MI300X"), always visible; the line is the ``<summary>``
    of an HTML ``<details>`` that opens on the reference kinds, why an engine has no independent reference, and one
    sentence per control outside ("no measured point for GPU MI300X (measured: A100-80GB, H100-SXM)"). The text wraps:
    nothing is clipped at a panel's width.

    ``shown`` is the panel's key in :data:`workbench.fidelity.PANELS` (or an experiment's name); ``controls`` maps an
    engine control's name (``gpu``, ``model``, ``tp``, ...) to the widget holding its value; ``read``, when given,
    returns those values instead (an explore panel parses its lists of values) and raises ``ValueError`` for a value
    that does not parse (the note then waits for one that does)."""

    def __init__(
        self,
        shown: str,
        controls: Mapping[str, W.Widget] | None = None,
        *,
        read: Callable[[], dict] | None = None,
    ) -> None:
        super().__init__(layout=W.Layout(width="auto", min_width="0"))
        self.add_class(FIDELITY_CLASS)
        self.shown = shown
        self.controls = dict(controls or {})
        self.notes: list = []
        self._read = read
        self._worker: Any = None
        self._cache = cache_root()  # the cache this note reads; a background validation fills this one
        for widget in self.controls.values():
            widget.observe(lambda _change: self.refresh(), names="value")
        self.refresh()

    def values(self) -> dict:
        """The panel's current values of the engine controls."""
        if self._read is not None:
            return self._read()
        return {name: widget.value for name, widget in self.controls.items()}

    @property
    def outside(self) -> list[str]:
        """Every note of a control outside the validated envelope, over the panel's engines."""
        return [o for n in self.notes for o in n.outside]

    def refresh(self) -> None:
        """Recompute the note for the controls' current values. An engine whose validation is not in the cache yet
        (a fresh cache: the packet references replay for minutes) is computed in a background thread, the note
        saying so meanwhile, so that building a panel never waits for it; the note fills in when it is done."""
        from .. import fidelity

        try:
            values = self.values()
        except (ValueError, TypeError):  # a value being typed that does not parse yet: the panel says why on run
            return
        try:
            missing = [n for n in fidelity.panel_engines(self.shown) if not fidelity.points_cached(n)]
            if missing and not background_validation():
                self.value = _note_html(
                    [
                        f"{', '.join(missing)}: validation not in this cache ({BACKGROUND_VALIDATION}=0); "
                        f"`workbench validate --engine {' '.join(missing)}` computes it"
                    ]
                )
                return
            if missing:
                self._compute(missing)
                self.value = _note_html([f"{', '.join(missing)}: validation being computed (first use of this cache)"])
                return
            self.notes = fidelity.panel_notes(self.shown, **values)
        except (ValueError, TypeError, OSError) as exc:  # a reference file missing: say so, the panel still works
            self.notes = []
            self.value = _note_html([f"Validation not available here: {exc}"])
            return
        named = [x for n in self.notes for x in n.named]
        self.value = _note_html([n.summary for n in self.notes], named, [n.text for n in self.notes])

    def _compute(self, names: Sequence[str]) -> None:
        if self._worker is not None and self._worker.is_alive():
            return
        self._worker = _validate_in_background(tuple(names), self._computed)

    def _computed(self, error: str) -> None:
        """Called from the background thread when the validation ends. A process whose cache has changed since the
        note was built (a test switching ``WORKBENCH_CACHE``; a kernel's never does) leaves the note as it is:
        refreshing would read, and start a validation in, a cache the note was not built for."""
        if cache_root() != self._cache:
            return
        if error:
            self.notes = []
            self.value = _note_html([f"Validation not available here: {error}"])
        else:
            self.refresh()

    def wait(self, timeout: float | None = None) -> None:
        """Block until the note's validation is computed (for tests and scripts; a panel never waits). A note that
        followed another panel's computation into another cache starts its own when that one ends: waited for too."""
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while (worker := self._worker) is not None:
            worker.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if self._worker is worker or (deadline is not None and time.monotonic() >= deadline):
                return


#: The environment variable that keeps panels from starting background validations ("0"; default on): on a shared
#: machine, or where many short-lived caches would each replay the references (the test suite's panel sweeps).
BACKGROUND_VALIDATION = "WORKBENCH_BACKGROUND_VALIDATION"


def background_validation() -> bool:
    """Whether a panel starts a validation its cache lacks (:data:`BACKGROUND_VALIDATION` is not ``"0"``)."""
    import os

    return os.environ.get(BACKGROUND_VALIDATION, "1").strip() != "0"


def _validate_in_background(names: tuple[str, ...], done: Callable[[str], None]) -> Any:
    """Compute the validation points of engines ``names`` into the cache in a ``workbench validate`` process at the
    lowest CPU priority (the kernel's own cells go first; no shared interpreter lock; it ends if the kernel does; one
    process per set of engines, the panels that need it waiting on the same), and call ``done`` with ""
    (or the error's last line) from a thread that waits for it. Returns that thread."""
    import os
    import subprocess
    import sys
    import threading

    from ..cache import cache_dir

    cmd = [sys.executable, "-m", "workbench.cli", "validate", "--engine", *names]
    cache = str(cache_dir())
    env = {**os.environ, "WORKBENCH_CACHE": cache}  # the cache this panel reads, whatever the environment says later
    key = (cache, names)  # one process per cache and set of engines

    def child() -> None:  # lowest priority, and ended with the kernel (Linux: SIGTERM when its parent exits)
        os.nice(19)
        try:
            import ctypes
            import signal

            ctypes.CDLL(None).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    running = _VALIDATING.get(key)
    if running is not None and running.is_alive():  # another panel started it: wait for the same process

        def follow() -> None:
            running.join()
            done(_VALIDATED.get(key, ""))

        follower = threading.Thread(target=follow, name=f"validate {' '.join(names)} (waiting)", daemon=True)
        follower.start()
        return follower

    def work() -> None:
        try:
            proc = subprocess.run(
                cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=child, env=env
            )
        except OSError as exc:
            done(str(exc))
            return
        lines = proc.stderr.strip().splitlines()
        error = "" if proc.returncode == 0 else (lines[-1] if lines else f"workbench validate exited {proc.returncode}")
        _VALIDATED[key] = error
        done(error)

    worker = threading.Thread(target=work, name=f"validate {' '.join(names)}", daemon=True)
    _VALIDATING[key] = worker
    worker.start()
    return worker


#: The background validations of this process, by cache directory and engines (:func:`_validate_in_background`), and
#: how each ended.
_VALIDATING: dict[tuple[str, tuple[str, ...]], Any] = {}
_VALIDATED: dict[tuple[str, tuple[str, ...]], str] = {}


#: CSS class of a panel's fidelity note (:class:`FidelityNote`); its warning carries ``wb-fidelity-outside``.
FIDELITY_CLASS = "wb-fidelity"
_NOTE_STYLE = "font-size:12px;line-height:16px;color:#444;white-space:normal;overflow-wrap:anywhere;margin:0"
_WARN_STYLE = "background:#fff4ce;border-left:3px solid #bf8700;color:#5c3b00;padding:0 4px;font-weight:600"


def _note_html(summaries: Sequence[str], named: Sequence[str] = (), body: Sequence[str] = ()) -> str:
    """The note: a ``<details>`` whose ``<summary>`` (always shown) holds ``summaries`` and, highlighted, the controls
    ``named`` outside the envelope; opened, it shows ``body`` (one paragraph per engine)."""
    line = " &middot; ".join(html.escape(s) for s in summaries)
    if named:
        warn = "Outside the validated envelope: " + "; ".join(dict.fromkeys(named))
        line += f" <span class='wb-fidelity-outside' style='{_WARN_STYLE}'>&#9888; {html.escape(warn)}</span>"
    if not body:
        return f"<div style='{_NOTE_STYLE}'>{line}</div>"
    paragraphs = "".join(f"<div style='margin:2px 0 0 12px'>{html.escape(t)}</div>" for t in body)
    return (
        f"<details style='{_NOTE_STYLE}'><summary style='cursor:pointer' title='the validation behind this panel'>"
        f"{line}</summary>{paragraphs}</details>"
    )


def panel(
    controls: Sequence[W.Widget],
    figures: Sequence[W.Widget] | Mapping[str, Sequence[W.Widget]],
    *,
    info: W.Widget | None = None,
    control_min_px: int = CONTROL_MIN_PX,
    fidelity: str | None = None,
    fidelity_controls: Mapping[str, W.Widget] | None = None,
    fidelity_read: Callable[[], dict] | None = None,
    note_beside: str = "info",
) -> Panel:
    """The standard panel: a controls grid, an optional info line or table with the fidelity note beside it
    (:class:`FidelityNote`, when ``fidelity`` names the panel in :data:`workbench.fidelity.PANELS` or an experiment;
    its engine controls in ``fidelity_controls``, or their values from ``fidelity_read``), then the figures.

    The info keeps its natural width and the note takes the rest of that row (at least :data:`NOTE_MIN_PX`, its text
    wrapping), so the note costs no height where the info is short of the panel's width: the controls and the figures
    they drive stay in one screen at 1366x768. Without an info the note is a line of its own. ``note_beside=
    "controls"`` puts it in the controls grid instead, in the cell after the last control (for a panel whose info
    fills its width, a wide table, while its last row of controls has a free cell at 1366x768).

    ``figures`` is a list of at most :data:`FIGURES_PER_ROW` figures (shown side by side) or a mapping of tab title ->
    such a list (shown in tabs, :func:`figures_tabs`): more figures than one row would put the last row below the fold
    of a 1366x768 window. ``control_min_px``: the narrowest control cell (a panel with many short controls packs
    more per row).
    """
    one_of("note_beside", note_beside, ("info", "controls"))
    note = FidelityNote(fidelity, fidelity_controls, read=fidelity_read) if fidelity is not None else None
    in_grid = note is not None and note_beside == "controls"
    grid = controls_grid(controls, min_px=control_min_px)
    if in_grid:
        grid.children = (*grid.children, note)
    parts: list[W.Widget] = [grid]
    if info is not None:
        parts.append(info)
    if note is not None and not in_grid:
        parts.append(note)
    if isinstance(figures, Mapping):
        shown = figures_tabs(figures)
    else:
        if len(figures) > FIGURES_PER_ROW:
            raise ValueError(
                f"a panel shows at most {FIGURES_PER_ROW} figures in a row, got {len(figures)}: pass a mapping of "
                "tab title -> figures instead"
            )
        shown = figures_grid(figures)
    parts.append(shown)
    layout = W.Layout(width="100%", overflow="hidden")
    if note is not None and info is not None and not in_grid:  # info and note side by side, the rest full width
        layout.display = "grid"
        layout.grid_template_columns = f"auto minmax({NOTE_MIN_PX}px, 1fr)"
        layout.grid_template_areas = '"controls controls" "info note" "figures figures"'
        layout.grid_gap = "0 12px"
        layout.align_items = "flex-start"
        for part, area in zip((grid, info, note, shown), ("controls", "info", "note", "figures")):
            part.layout.grid_area = area
    out = Panel(parts, layout=layout)
    out.fidelity = note  # the note, for tests and for a panel's own text
    return out


#: One cell's style in an info table: left-aligned like its header, with room between columns.
_CELL = "text-align:left;padding:1px 14px 1px 0;vertical-align:top"


def html_table(header: Sequence[str], rows: Sequence[Sequence[object]], *, caption: str = "") -> str:
    """A panel's info table as HTML: headers aligned with their values, cells escaped, an optional caption line.

    Examples
    --------
    >>> html_table(["policy", "hot ToRs"], [["random", 77]]).count("<td ")
    2
    >>> "&lt;b&gt;" in html_table(["x"], [["<b>"]])
    True
    """

    def cells(tag: str, values: Sequence[object]) -> str:
        return "".join(f'<{tag} style="{_CELL}">{html.escape(str(v))}</{tag}>' for v in values)

    width = len(header)
    for i, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"row {i} has {len(row)} cells, the header has {width}")
    body = "".join(f"<tr>{cells('td', r)}</tr>" for r in rows)
    lead = f"<div>{html.escape(caption)}</div>" if caption else ""
    # a widget's HTML inherits the 28 px line height of a control row: a table at that height pushed the figures below
    # the fold at 768 px
    return (
        f'<div style="line-height:1.35">{lead}<table style="border-collapse:collapse">'
        f"<tr>{cells('th', header)}</tr>{body}</table></div>"
    )


def log_steps(low: float, high: float, default: float | None = None) -> list[float]:
    """Values 1, 2, 5 x 10^k from ``low`` to ``high`` (both included), with ``default`` inserted exactly: the stops
    of a logarithmic control, so that a slider never snaps to an odd value such as 631 where 600 was meant.

    Examples
    --------
    >>> log_steps(1, 100, 30)
    [1, 2, 5, 10, 20, 30, 50, 100]
    """
    import math

    if not (0 < low < high):
        raise ValueError(f"log_steps needs 0 < low < high, got low={low}, high={high}")
    values = {low, high}
    for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0**k
            if low <= v <= high:
                values.add(v)
    if default is not None:
        values.add(default)
    return sorted(int(v) if float(v).is_integer() else float(v) for v in values)


def _doublings(multiple: int, low: float, high: float) -> list[int]:
    """``multiple`` times the powers of two that lie in ``[low, high]`` (a multiple-of control's stops).

    Examples
    --------
    >>> _doublings(8, 8, 100)
    [8, 16, 32, 64]
    """
    out, v = [], multiple
    while v <= high:
        if v >= low:
            out.append(v)
        v *= 2
    return out


def _nice(v: float) -> str:
    """A slider stop's label: whole numbers with thousands separated, others as :func:`~workbench._units.number_text`
    writes them to six significant digits (``2×10⁻⁵``, where ``:g`` wrote ``2e-05``)."""
    return f"{v:,.0f}" if float(v).is_integer() and abs(v) >= 1 else number_text(v, 6)


def _readout_format(low: float, high: float, step: float) -> str:
    """A float slider's readout (d3-format): three significant digits below 1,000, and above it the step's decimals
    with thousands separators, never exponent notation (``.3g`` reads 1,200 s as ``1.20e+3``).

    >>> _readout_format(0.0, 1.0, 0.01), _readout_format(300.0, 3600.0, 10.0), _readout_format(0.0, 2000.0, 0.5)
    ('.3g', ',.0f', ',.1f')
    """
    import math

    if max(abs(low), abs(high)) < 1000:
        return ".3g"
    return f",.{max(0, -math.floor(math.log10(step)))}f"


def param_control(
    param,
    value=None,
    *,
    step: float | None = None,
    sentinel: tuple[float, str] | None = None,
    shown_in: tuple[float, str] | None = None,
    stops: Sequence[float] | None = None,
    labels: Mapping[Any, str] | None = None,
    **kwargs,
) -> W.Widget:
    """The control for an experiment's :class:`~workbench.experiments.Param`, constrained to what the parameter
    allows: a dropdown for choices, a checkbox for a flag, a slider between finite bounds (1-2-5 stops when the
    parameter is ``log``), a number box otherwise. The description is the parameter's title with its unit; the value
    is ``value`` (validated) or the default; sliders update on release (``continuous_update=False``), so a drag costs
    one model call. ``control.param_name`` is the parameter's name (read it back with :func:`param_values`).

    ``sentinel=(value, text)`` names a value that stands for something else (``pcie_gbs=0``: "the GPU's own"): the
    control becomes a slider over that value, shown as ``text``, and the parameter's 1-2-5 stops, so it never reads
    as a number it is not (a "0.00 GB/s" that means 32 GB/s).

    ``shown_in=(factor, unit)`` shows the stops of a ``log`` (or ``sentinel``) parameter in another unit: each stop
    reads as its value times ``factor`` and the description names ``unit`` (an RTT held in seconds shown in µs:
    ``shown_in=(1e6, "us")``); the control's value stays in the parameter's own unit.

    ``stops`` are the values offered when what the parameter allows depends on other parameters (GPU counts that are
    multiples of ``tp x pp``): a slider over them, each validated by the parameter. Derive them from the experiment's
    ``Param``s or data, never type them: a literal list is the second copy of a range that panels must not hold.

    ``labels`` maps some of a choice parameter's values to what the menu shows for them (``{"curves": "measured
    curves"}``); the options stay the parameter's choices, in its order.

    Examples
    --------
    >>> from workbench import experiments as ex
    >>> c = param_control(ex.get("arrivals-queue-wait").param("utilization"))
    >>> type(c).__name__, c.description, c.value, c.continuous_update
    ('FloatSlider', 'utilization', 0.7, False)
    """
    value = param.default if value is None else param.validate(value)
    factor, title = 1.0, param.title
    if shown_in is not None:
        from .._units import name_label, with_unit

        if not (param.log or sentinel is not None or stops is not None):
            raise ValueError(
                f"parameter {param.name!r}: shown_in needs a log, sentinel or stops control (its stops are named)"
            )
        factor, title = float(shown_in[0]), with_unit(param.label or name_label(param.name), shown_in[1])
    common = {"description": title, "tooltip": param.doc, **kwargs}
    if sentinel is not None:
        special, text = param.validate(sentinel[0]), sentinel[1]
        if param.low is None or param.high is None:
            raise ValueError(f"parameter {param.name!r}: a sentinel control needs both bounds")
        import math

        start = param.low if param.low > 0 else 10.0 ** (math.floor(math.log10(param.high)) - 3)  # three decades
        steps = [v for v in log_steps(start, param.high, None) if v != special]
        steps = [
            v for v in steps if (param.low_inclusive or v > param.low) and (param.high_inclusive or v < param.high)
        ]
        options = [(text, special), *((_nice(v * factor), param.kind(v)) for v in steps)]
        if value not in [v for _, v in options]:
            options = sorted([*options[1:], (_nice(value * factor), value)], key=lambda o: o[1])
            options.insert(0, (text, special))
        control: W.Widget = W.SelectionSlider(options=options, value=value, continuous_update=False, **common)
        control.param_name = param.name
        return control
    if stops is not None:
        values = sorted({param.validate(v) for v in stops})
        if value not in values:
            raise ValueError(f"parameter {param.name!r}: the value {value!r} is not one of the stops {values}")
        control = W.SelectionSlider(
            options=[(_nice(v * factor), v) for v in values], value=value, continuous_update=False, **common
        )
        control.param_name = param.name
        return control
    if labels is not None and param.choices is None:
        raise ValueError(f"parameter {param.name!r}: labels name choices, and it has none")
    if param.choices is not None:
        options = list(param.choices) if labels is None else [(labels.get(c, str(c)), c) for c in param.choices]
        control = W.Dropdown(options=options, value=value, **common)
    elif param.kind is bool:
        control = W.Checkbox(value=bool(value), **common)
    elif param.kind is str:
        control = W.Text(value=value, continuous_update=False, **common)
    else:
        lo, hi = param.low, param.high
        finite = lo is not None and hi is not None
        if finite and param.log and lo is not None and hi is not None:
            lo_v = lo if param.low_inclusive else lo * 1.000001 if lo > 0 else None
            if lo_v is None or lo_v <= 0:
                raise ValueError(f"parameter {param.name!r} is log-scaled but its lower bound {lo} is not positive")
            steps = [v for v in log_steps(max(lo_v, 1e-300), hi, value) if param.low_inclusive or v > lo]
            steps = [v for v in steps if param.high_inclusive or v < hi]
            if param.multiple:  # the multiple times powers of two (ranks: 8, 16, 32, ...), and the default
                steps = sorted({v for v in _doublings(param.multiple, lo_v, hi) if param.high_inclusive or v < hi}
                               | {param.kind(value)})  # fmt: skip
            options = [(_nice(v * factor), param.kind(v)) for v in steps]
            control = W.SelectionSlider(options=options, value=param.kind(value), continuous_update=False, **common)
        elif finite and lo is not None and hi is not None:
            if param.kind is int:
                lo_i = int(lo) + (0 if param.low_inclusive else 1)
                hi_i = int(hi) - (0 if param.high_inclusive else 1)
                if param.multiple:  # the slider's stops are the multiples in range
                    lo_i, hi_i = -(-lo_i // param.multiple) * param.multiple, hi_i // param.multiple * param.multiple
                control = W.IntSlider(
                    value=value,
                    min=lo_i,
                    max=hi_i,
                    step=int(step or param.multiple or 1),
                    continuous_update=False,
                    **common,
                )
            else:
                step = step or _step_for(lo, hi, value, param.low_inclusive)
                lo_f = lo if param.low_inclusive else lo + step
                hi_f = hi if param.high_inclusive else hi - step
                control = W.FloatSlider(
                    value=value,
                    min=lo_f,
                    max=hi_f,
                    step=step,
                    continuous_update=False,
                    readout_format=_readout_format(lo_f, hi_f, step),
                    **common,
                )
        else:
            # a bounded box needs both ends (ipywidgets' defaults are 0 and 100, which would clamp the value): the
            # missing end is the largest number the browser holds exactly
            big = 2**53 - 1 if param.kind is int else 1.7e308
            bounds = {}
            if lo is not None:
                bounds["min"], bounds["max"] = lo, big
            if hi is not None:
                bounds["min"], bounds["max"] = bounds.get("min", -big), hi
            box = W.BoundedIntText if param.kind is int else W.BoundedFloatText
            control = (
                box(value=value, **bounds, **common)
                if bounds
                else (W.IntText if param.kind is int else W.FloatText)(value=value, **common)
            )
    control.param_name = param.name
    return control


def _default_step(low: float, high: float) -> float:
    import math

    span = high - low
    return 10.0 ** math.floor(math.log10(span / 20)) if span > 0 else 1.0


def _step_for(low: float, high: float, value: float, low_inclusive: bool = True) -> float:
    """A linear slider's step: :func:`_default_step`, divided by 10 until ``value`` lies on a stop inside the range
    (a slider clamps or snaps a value it cannot show, so a default such as 0.6 on a 0-1000 range with step 10 would
    silently become 10: the FastSwitch panel ran at 10 conversations/s instead of the experiment's 0.6).

    Examples
    --------
    >>> _step_for(0.0, 1000.0, 0.6, low_inclusive=False), _step_for(0.0, 1.0, 0.7)
    (0.1, 0.01)
    """
    import math

    span = high - low
    first = math.floor(math.log10(span / 20)) if span > 0 else 0
    for exponent in range(first, first - 12, -1):
        step = 10.0**exponent
        k = (value - low) / step
        lowest = low if low_inclusive else low + step
        if value >= lowest - 1e-9 * step and abs(k - round(k)) < 1e-6:
            return step
    return step


def param_controls(experiment, names: Sequence[str], values: dict | None = None, **overrides) -> list[W.Widget]:
    """One :func:`param_control` per parameter name of ``experiment`` (a name or an
    :class:`~workbench.experiments.Experiment`), valued from ``values`` (default: the parameters' defaults);
    ``overrides`` maps a name to keyword arguments of its control (e.g. ``step``)."""
    from .. import experiments as ex

    exp = ex.get(experiment)
    values = values or {}
    return [param_control(exp.param(n), values.get(n), **overrides.get(n, {})) for n in names]


def param_values(controls: Sequence[W.Widget]) -> dict:
    """``{parameter name: value}`` of controls made by :func:`param_control`."""
    return {c.param_name: c.value for c in controls if hasattr(c, "param_name")}
