"""Every notebook's explore panel with every control at both ends (issue 22, points 2 and 8), in Python: after each
move the panel's sweep runs and its figure passes the figure invariants (:func:`workbench.testing.figure_problems`).

The panels are the notebooks' own ``explore_panel(...)`` calls, read from ``notebooks/*.py`` with their literal
arguments (a grid bound to a name earlier in the notebook, such as 05's ``FCT_GRID``, is read from that binding). Each
runs at the smallest scale its experiment declares (:attr:`workbench.experiments.Experiment.small`: fewer hosts,
shorter runs, fewer samples), on one seed, serially, in a private cache; the notebook's x values and series stay.
A control's ends:

* a multi-select (a choice parameter): its first option only, and every option;
* a number field (a list of values, not a range): its first listed value only, and its last only (with one value,
  the field has one end and is not moved);
* the "quantity" menu of a panel split into facets (05): its first and its last quantity.

Each control is moved to one end, the sweep runs ("Run sweep" pressed), the figure is checked, then the other end,
and the control is put back before the next one moves. Points a grid shares with an earlier one come from the cache.
The browser test (``tests/browser/test_lab.py``) moves one control of each explore panel through the page.
"""

from __future__ import annotations

import ast
import contextlib
from pathlib import Path

import ipywidgets as W
import pytest

from workbench import experiments as ex
from workbench.testing import figure_problems, notebook_missing_data, notebook_needs_data

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _value(node: ast.expr, bound: dict, imports: list[ast.stmt]):
    """A call argument's value: a literal; a name bound to a literal at the notebook's top level; else (e.g.
    ``list(ck.METHODS)``) the expression evaluated after the notebook's ``workbench`` imports."""
    if isinstance(node, ast.Name) and node.id in bound:
        return bound[node.id]
    try:
        return ast.literal_eval(node)
    except ValueError:
        namespace: dict = {}
        exec(compile(ast.Module(body=imports, type_ignores=[]), "<imports>", "exec"), namespace)
        return eval(compile(ast.Expression(body=node), "<argument>", "eval"), namespace)


def notebook_explore_panels() -> list[tuple[str, str, dict]]:
    """(notebook, experiment, keyword arguments) of every top-level ``explore_panel("<experiment>", ...)`` call in
    ``notebooks/*.py``; a keyword given as a name takes the literal that name is bound to at the notebook's top level."""
    out = []
    for path in sorted((ROOT / "notebooks").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                with contextlib.suppress(ValueError):
                    bound[node.targets[0].id] = ast.literal_eval(node.value)
        imports = [
            node
            for node in tree.body
            if (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("workbench"))
            or (isinstance(node, ast.Import) and all(a.name.startswith("workbench") for a in node.names))
        ]
        for node in tree.body:
            call = node.value if isinstance(node, ast.Expr) else None
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "explore_panel"):
                continue
            name = ast.literal_eval(call.args[0])
            kwargs = {k.arg: _value(k.value, bound, imports) for k in call.keywords}
            out.append((path.stem, name, kwargs))
    return out


PANELS = notebook_explore_panels()


def _smallest(experiment: str, kwargs: dict) -> dict:
    """The panel's arguments at its experiment's smallest declared scale: the ``small`` grid's values for every
    parameter that is neither the x axis nor a series, one seed, serial, no run when built."""
    exp = ex.get(experiment)
    small = exp.small if isinstance(exp.small, dict) else {}
    keep = {kwargs["x"], *kwargs.get("series", ())}
    grid = dict(kwargs.get("grid") or {})
    grid.update({k: v for k, v in small.items() if k not in keep})
    return {**kwargs, "grid": grid, "seeds": 1, "client": False, "autorun": False}


def _ends(control: W.Widget) -> list[tuple[str, object]]:
    if isinstance(control, W.SelectMultiple):
        values = [v for _, v in control._options_full]
        return [("first only", (values[0],)), ("all", tuple(values))]
    if isinstance(control, W.Dropdown):
        values = [v for _, v in control._options_full]
        return [("first", values[0]), ("last", values[-1])]
    values = [v.strip() for v in control.value.split(",") if v.strip()]
    return [] if len(values) < 2 or ":" in control.value else [("first only", values[0]), ("last only", values[-1])]


def _quantity(panel) -> W.Dropdown | None:
    stack = [panel]
    while stack:
        w = stack.pop()
        if isinstance(w, W.Dropdown) and w.description == "quantity":
            return w
        stack.extend(getattr(w, "children", ()))
    return None


def _checked(panel, where: str) -> list[str]:
    """The panel's state after a run: problems of its figure, or why it has none."""
    if "Grid error" in panel.info.value:
        return [f"{where}: {panel.info.value}"]
    if not panel.figure.data:
        return [f"{where}: no figure ({panel.info.value})"]
    return [f"{where}: {p}" for p in figure_problems(panel.figure.figure)]


@pytest.mark.parametrize(("notebook", "experiment", "kwargs"), PANELS, ids=[f"{p[0]}:{p[1]}" for p in PANELS])
def test_every_explore_control_at_both_ends_draws_true_figures(notebook, experiment, kwargs, tmp_path, monkeypatch):
    nb = ROOT / "notebooks" / f"{notebook}.ipynb"
    missing = notebook_missing_data(nb)
    if missing and notebook_needs_data(nb):
        pytest.skip(f"{notebook} needs data: {', '.join(missing)}")
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    # the fidelity notes are tested in test_fidelity_notes.py: no background replay of the references per fresh cache
    monkeypatch.setenv("WORKBENCH_BACKGROUND_VALIDATION", "0")
    from workbench.widgets.explore import explore_panel

    panel = explore_panel(experiment, **_smallest(experiment, kwargs))
    panel.run.click()
    found = _checked(panel, "defaults")
    moves = [(name, c) for name, c in panel.controls.items()]
    if (quantity := _quantity(panel)) is not None:
        moves.append(("quantity", quantity))
    moved = 0
    for name, control in moves:
        default = control.value
        for label, value in _ends(control):
            control.value = value
            if control is not quantity:
                panel.run.click()
            found += _checked(panel, f"{name} at {label} ({value!r})")
            moved += 1
        control.value = default
    assert moved, f"{notebook} {experiment}: no control moved"
    assert not found, f"{notebook} {experiment}: {found}"


def test_the_notebook_explore_panels_are_found():
    """Every notebook's explore section contributes its panel, 05's grid bound to a name included."""
    names = {(p[0][:2], p[1]) for p in PANELS}
    assert {("05", "pred-fct-vs-load"), ("05", "pred-leafspine-mix"), ("09", "diagnosis-detection")} <= names
    assert len(PANELS) >= 14
    fct = next(p for p in PANELS if p[1] == "pred-fct-vs-load")
    assert fct[2]["grid"]["marking"] == ["static", "pred"] and fct[2]["facet_col"] == "size_class"
