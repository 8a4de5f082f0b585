"""Every notebook's panel with every control at both ends of its range (issue 22, points 2 and 8): after each move,
every figure the panel shows passes the figure invariants (:func:`workbench.testing.figure_problems`).

The panels are the ones the notebooks build (their ``<name>_panel(...)`` calls, read from ``notebooks/*.py`` with
their literal arguments); the explore panels are not swept here (their controls are a sweep's grid, run on a button:
``tests/experiments/test_explore.py`` covers them). Each control is moved to one end, the figures are checked, it is
moved to the other end, checked again, and put back to its default before the next control moves. A control's ends:

* a slider's ``min`` and ``max`` (a log slider's ``base**min`` and ``base**max``); a selection slider's, dropdown's
  or toggle's first and last option;
* a checkbox off and on;
* a multi-select with only its first option and with every option.

The panels' buttons (ServeGen's capacity search, the serving-hardware GPU plan) are not pressed: they print a number
and draw no figure, and each press is a search costing seconds. The browser tests (``tests/browser/test_lab.py`` per
notebook, ``tests/browser/test_dashboards.py`` per dashboard) move a representative subset through the page (the first
slider and the first dropdown of each panel, both ends) and read what plotly draws; this test moves every control, in
Python, where a move costs one model call and no page round trip, and checks the figures at the narrowest width a
panel draws them (:data:`~workbench.widgets.FIGURE_MIN_PX`, stricter on titles than any width a page gives them).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import ipywidgets as W
import pytest

from workbench.testing import figure_problems, notebook_missing_data, notebook_needs_data
from workbench.widgets import FIGURE_MIN_PX, FigurePane

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def notebook_panels() -> list[tuple[str, str, str, dict]]:
    """(notebook, module, function, keyword arguments) of every panel call in ``notebooks/*.py`` but the explore
    panels: a top-level expression ``f(...)`` whose name ends in ``_panel``, with ``f`` imported from
    ``workbench.widgets.<module>`` and literal arguments."""
    out = []
    for path in sorted((ROOT / "notebooks").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = {
            a.asname or a.name: node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("workbench.widgets")
            for a in node.names
        }
        for node in tree.body:
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
                continue
            func = node.value.func
            if not (isinstance(func, ast.Name) and func.id.endswith("_panel") and func.id != "explore_panel"):
                continue
            assert func.id in where, f"{path.name}: {func.id} is not imported from workbench.widgets"
            assert not node.value.args, f"{path.name}: {func.id} takes keyword arguments only here"
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.value.keywords}
            out.append((path.stem, where[func.id], func.id, kwargs))
    return out


PANELS = notebook_panels()


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def _controls(root) -> list[W.Widget]:
    """The value controls under ``root`` (sliders, selections, toggles, checkboxes, multi-selects)."""
    kinds = (W.IntSlider, W.FloatSlider, W.FloatLogSlider, W.SelectionSlider, W.Dropdown, W.ToggleButtons)
    return [w for w in _walk(root) if isinstance(w, (*kinds, W.Checkbox, W.SelectMultiple))]


def _ends(control: W.Widget) -> list[tuple[str, object]]:
    """(label, value) of the two ends of ``control``'s range, read now (another control may have moved them)."""
    if isinstance(control, W.FloatLogSlider):
        return [("min", control.base**control.min), ("max", control.base**control.max)]
    if isinstance(control, (W.IntSlider, W.FloatSlider)):
        return [("min", control.min), ("max", control.max)]
    if isinstance(control, W.Checkbox):
        return [("off", False), ("on", True)]
    if isinstance(control, W.SelectMultiple):
        values = [v for _, v in control._options_full]
        return [("first only", (values[0],)), ("all", tuple(values))]
    values = [v for _, v in control._options_full]  # selection slider, dropdown, toggle buttons
    return [("first", values[0]), ("last", values[-1])]


def _name(control: W.Widget) -> str:
    return control.description or type(control).__name__


#: A number in ``e`` notation (``1.26e+03``, ``2e-05``): what a panel's text must never show a reader.
E_NOTATION = re.compile(r"(?<![\w#.])\d+(?:\.\d+)?e[+-]\d+\b")


def _problems(root) -> dict[int | str, list[str]]:
    """The figure invariants' findings per figure pane of ``root``; a figure emptied by a setting the model refuses
    must say why (its title ``Not drawn: <reason>``, :func:`workbench.widgets.clear`). And the panel's text (its info,
    tables, notes and the labels of its sliders' and menus' options) writes numbers as people read them (:func:`workbench._units.number_text`), never in ``e``
    notation."""
    panes = [w for w in _walk(root) if isinstance(w, FigurePane)]
    assert panes, "the panel shows no figure"
    found: dict[int | str, list[str]] = {}
    texts = [w.value for w in _walk(root) if isinstance(w, (W.HTML, W.Label)) and isinstance(w.value, str)]
    texts += [str(label) for w in _walk(root) if hasattr(w, "_options_full") for label, _ in w._options_full]
    if bad := sorted({m.group(0) for t in texts for m in E_NOTATION.finditer(t)}):
        found["text"] = [f"numbers in e notation: {', '.join(bad)}"]
    for i, p in enumerate(panes):
        if not p.figure.data:
            title = p.figure.layout.title.text or ""
            if not title.startswith("Not drawn: "):
                found[i] = [f"an empty figure that does not say why (title {title!r})"]
        elif problems := figure_problems(p.figure, width_px=FIGURE_MIN_PX):
            found[i] = problems
    return found


@pytest.mark.parametrize(("notebook", "module", "func", "kwargs"), PANELS, ids=[f"{p[0]}:{p[2]}" for p in PANELS])
def test_every_control_at_both_ends_draws_true_figures(notebook: str, module: str, func: str, kwargs: dict):
    nb = ROOT / "notebooks" / f"{notebook}.ipynb"
    missing = notebook_missing_data(nb)
    if missing and notebook_needs_data(nb):
        pytest.skip(f"{notebook} needs data: {', '.join(missing)}")
    root = getattr(importlib.import_module(module), func)(**kwargs)
    controls = _controls(root)
    assert controls, f"{func} has no control to move"
    found: dict[str, dict] = {}
    if problems := _problems(root):
        found["defaults"] = problems
    for control in controls:
        default = control.value
        for label, value in _ends(control):
            if control.disabled:
                break
            control.value = value
            if problems := _problems(root):
                found[f"{_name(control)} at {label} ({control.value!r})"] = problems
        control.value = default
    assert not found, f"{notebook} {func}: figures break the invariants: {found}"


def test_the_notebook_panels_are_found():
    """Every notebook with a panel cell contributes it (explore panels aside)."""
    names = {p[2] for p in PANELS}
    assert {"arrivals_panel", "spraying_panel", "burstgpt_panel", "fault_panel", "checkpoint_panel"} <= names
    assert len(PANELS) >= 18
