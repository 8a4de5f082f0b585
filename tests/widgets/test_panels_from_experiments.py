"""Panels are generated from their experiment's ``Param``s and compute nothing themselves (issue 36, item 2).

The rule, checked on the source of every panel module in ``workbench/widgets/`` (all but ``__init__.py``, which holds
the generators :func:`~workbench.widgets.param_control` and :func:`~workbench.widgets.param_controls`):

* **no model call**: no call reaches a model package (:data:`MODELS`) -- a name imported from one, or an attribute
  of a module imported from one. A panel's numbers come from ``experiments.run_point`` or ``experiments.sweep`` of a
  registered experiment. Reading a spec table (a call into a ``specs`` module: ``specs.gpu(...)``, ``specs.models()``)
  is not a model call, and naming a model's constant (``MECHANISMS``, ``ck.METHODS``) without calling it is not one.
  Going around ``run_point`` is one too: calling an experiment module's own function (``from ..experiments.carbon
  import carbon_run``), or deriving an experiment's seed by hand (``ex.point_seed``, anything from ``_rng``) to call
  a model with it.
* **no hand-built control**: no ipywidgets value control (:data:`CONTROLS`) is constructed with a literal range or
  literal options (``min``, ``max``, ``step``, ``base`` or ``options`` given as a constant, a literal tuple/list, a
  ``range``, or a name bound to one in the module or the function): such a range is a second copy of what the
  experiment's ``Param`` states. A control whose options come from data (a spec table, a model's list of choices,
  an experiment's ``Param``) is not hand-built; a checkbox or a button has no range and is not checked.

Panels not yet converted are listed in :data:`KNOWN` with the reason; a listed panel that no longer breaks the rule
fails the test, so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import workbench

WIDGETS = Path(workbench.__file__).parent / "widgets"
#: The model packages: a call into one from a panel is a model call.
MODELS = {
    "aqm",
    "arrivals",
    "carbon",
    "distributions",
    "fabric",
    "microservices",
    "placement",
    "serving",
    "training",
    "workloads",
}
#: The rest of ``workbench``: not models (every module or package of ``workbench`` is in exactly one of the two sets,
#: :func:`test_every_package_is_classified`).
NOT_MODELS = {
    "cache",
    "cli",
    "dashboards",
    "data",
    "experiments",
    "fidelity",
    "notebook_files",
    "reproductions",
    "scaffold",
    "tables",
    "templates",
    "testing",
    "viz",
    "widgets",
    "workload_cli",
}
#: ipywidgets controls that hold a parameter's value over a range or a set of options.
CONTROLS = {
    "BoundedFloatText",
    "BoundedIntText",
    "Combobox",
    "Dropdown",
    "FloatLogSlider",
    "FloatRangeSlider",
    "FloatSlider",
    "FloatText",
    "IntRangeSlider",
    "IntSlider",
    "IntText",
    "RadioButtons",
    "Select",
    "SelectMultiple",
    "SelectionRangeSlider",
    "SelectionSlider",
    "ToggleButtons",
}
#: Keywords of a control that state its range or its options.
RANGE_KEYWORDS = {"options", "min", "max", "step", "base"}

#: Panel modules that still build controls by hand or call a model (issue 36, item 2, not yet converted): why.
KNOWN: dict[str, str] = {}
#: Controls the rule matches that hold no parameter of an experiment: ``module:function`` and why.
NOT_PARAMS = {
    "explore:explore_panel": "the number of seeds a sweep averages is a setting of the sweep, not an experiment's Param",
}


def _is_literal_expr(node: ast.AST, literal_names: set[str]) -> bool:
    """Whether ``node`` is made only of constants and names bound to literals (calls such as ``list``, ``range``
    or ``log_steps`` over them included): no attribute read, no other name."""
    called = {id(f) for n in ast.walk(node) if isinstance(n, ast.Call) for f in ast.walk(n.func)}
    bound = {
        t.id
        for n in ast.walk(node)
        if isinstance(n, ast.comprehension)
        for t in ast.walk(n.target)
        if isinstance(t, ast.Name)
    }
    for n in ast.walk(node):
        if id(n) in called:
            continue
        if isinstance(n, ast.Attribute):
            return False
        if isinstance(n, ast.Name) and n.id not in literal_names and n.id not in bound:
            return False
    return True


def _literal_names(body: list[ast.stmt], known: set[str] | None = None) -> set[str]:
    """Names bound (by assignment) to a literal expression in ``body`` (statements walked in order)."""
    names = set(known or ())
    for stmt in body:
        for node in ast.walk(stmt):
            literal = isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
            if literal and _is_literal_expr(node.value, names):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


#: Functions of the ``experiments`` package a panel calls only to go around ``run_point`` (a seed derived by hand).
AROUND_RUN_POINT = {"point_seed"}


def _imports(tree: ast.Module) -> tuple[set[str], set[str], set[str], set[str]]:
    """(names bound to a model package or one of its members, to an experiment module or its members, or to a
    seed helper; the subset that are spec-table modules or members of one; names bound to ``ipywidgets``; names
    bound to the ``experiments`` package itself)."""
    models, specs, ipyw, experiments = set(), set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            ipyw |= {a.asname or a.name for a in node.names if a.name == "ipywidgets"}
        if not isinstance(node, ast.ImportFrom) or node.level < 2:
            continue
        parts = [p for p in (node.module or "").split(".") if p]
        for alias in node.names:
            path, bound = [*parts, alias.name], alias.asname or alias.name
            if path == ["experiments"]:
                experiments.add(bound)
            elif path[0] in MODELS or path[0] == "_rng" or (path[0] == "experiments" and len(path) > 2):
                models.add(bound)
                if path[0] in MODELS and "specs" in path:
                    specs.add(bound)
    return models, specs, ipyw, experiments


def violations(source: str) -> list[str]:
    """``kind:function:line`` of every model call (``model``) and hand-built control (``control``) in ``source``
    (a panel module)."""
    tree = ast.parse(source)
    models, specs, ipyw, experiments = _imports(tree)
    module_literals = _literal_names([s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.ClassDef))])
    found: dict[tuple[str, int], str] = {}  # (kind, line) -> the innermost function holding it
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in scopes:
        literals = _literal_names(fn.body, module_literals)
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            chain, f = [], node.func
            while isinstance(f, ast.Attribute):
                chain.append(f.attr)
                f = f.value
            if not isinstance(f, ast.Name):
                continue
            model = f.id in models and f.id not in specs and "specs" not in chain
            around = f.id in experiments and bool(chain) and chain[-1] in AROUND_RUN_POINT
            if model or around:
                found["model", node.lineno] = fn.name
            elif f.id in ipyw and len(chain) == 1 and chain[0] in CONTROLS:
                given = [*node.args, *(k.value for k in node.keywords if k.arg in RANGE_KEYWORDS)]
                if any(_is_literal_expr(v, literals) for v in given):
                    found["control", node.lineno] = fn.name
    return [f"{kind}:{name}:{line}" for (kind, line), name in sorted(found.items())]


PANELS = sorted(p.stem for p in WIDGETS.glob("*.py") if p.stem != "__init__")


def _violations(name: str) -> list[str]:
    found = violations((WIDGETS / f"{name}.py").read_text(encoding="utf-8"))
    return [v for v in found if not (v.startswith("control:") and f"{name}:{v.split(':')[1]}" in NOT_PARAMS)]


@pytest.mark.parametrize("name", PANELS)
def test_panel_is_generated_from_its_experiment(name):
    """A panel's controls come from its experiment's ``Param``s and its numbers from ``run_point``/``sweep``; the
    known exceptions are listed with a reason, and one that no longer breaks the rule must leave the list."""
    found = _violations(name)
    if name in KNOWN:
        assert found, f"widgets/{name}.py now follows the rule: remove it from KNOWN (and ARCHITECTURE.md's list)"
    else:
        assert not found, (
            f"widgets/{name}.py builds a control by hand or calls a model at {found}: build its controls with "
            "widgets.param_controls from the experiment's Params and read its numbers with experiments.run_point or "
            "experiments.sweep (a model function a panel needs is a registered experiment)"
        )


def test_known_exceptions_are_panels():
    assert set(KNOWN) <= set(PANELS), sorted(set(KNOWN) - set(PANELS))


def test_controls_of_no_parameter_are_still_there():
    """Every listed control that holds no parameter is still matched (a stale entry would hide a hand-built one)."""
    for entry in NOT_PARAMS:
        name, fn = entry.split(":")
        found = violations((WIDGETS / f"{name}.py").read_text(encoding="utf-8"))
        assert any(v.startswith(f"control:{fn}:") for v in found), entry


def test_every_package_is_classified():
    """A new package of ``workbench`` is a model or not: the rule must know which."""
    root = Path(workbench.__file__).parent
    names = {p.stem for p in root.glob("*.py")} | {p.name for p in root.iterdir() if (p / "__init__.py").exists()}
    names |= {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    names = {n for n in names if not n.startswith("_")}
    assert not MODELS & NOT_MODELS
    assert names == MODELS | NOT_MODELS, (sorted(names - MODELS - NOT_MODELS), sorted((MODELS | NOT_MODELS) - names))


def test_the_rule_catches_a_hand_built_control_and_a_model_call():
    bad = (
        "import ipywidgets as W\n"
        "from .. import arrivals as arr\n"
        "from ..serving.metrics import backlog\n"
        "from ..serving import specs\n"
        "STOPS = (1, 2, 4)\n"
        "def panel():\n"
        "    a = W.FloatSlider(value=0.5, min=0.05, max=0.95)\n"
        "    b = W.SelectionSlider(options=list(STOPS), value=1)\n"
        "    names = ['x', 'y']\n"
        "    c = W.Dropdown(options=names)\n"
        "    d = W.Dropdown(options=[m.name for m in specs.models()])\n"
        "    t = arr.arrival_times(arr.Poisson(1.0), 10, seed=0)\n"
        "    return backlog(t), specs.gpu('H100'), a, b, c, d\n"
        "from .. import experiments as ex\n"
        "from ..experiments.carbon import carbon_run\n"
        "from .._rng import keyed\n"
        "def around(p):\n"
        "    s = ex.point_seed(ex.get('carbon-scheduling'), p, 0, 0)\n"
        "    return carbon_run(**p, seed=s), keyed(0, 'x')\n"
    )
    assert violations(bad) == [
        "control:panel:7",
        "control:panel:8",
        "control:panel:10",
        "model:panel:12",
        "model:panel:13",
        "model:around:18",
        "model:around:19",
    ]
    good = (
        "import ipywidgets as W\n"
        "from .. import experiments as ex\n"
        "from ..serving import specs\n"
        "from ..serving.preemption import MECHANISMS\n"
        "from . import param_controls, param_values\n"
        "def panel():\n"
        "    exp = ex.get('llm-preemption')\n"
        "    controls = param_controls(exp, ['rate', 'load'])\n"
        "    p = exp.param('mechanism')\n"
        "    mechs = W.SelectMultiple(options=list(MECHANISMS)[1:], description=p.title)\n"
        "    gpu = W.Dropdown(options=[g.gpu for g in specs.gpus()])\n"
        "    show = W.Checkbox(value=True, description='show')\n"
        "    return ex.run_point(exp, param_values(controls)), mechs, gpu, show\n"
    )
    assert violations(good) == []
