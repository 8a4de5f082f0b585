"""No reproduction runs a parameter grid of its own (issue 36, item 2): a parameter study a claim or figure reads is
a registered experiment, run by ``experiments.sweep``.

The rule, checked on the source of every module in ``workbench/reproductions/``: no ``for`` loop or comprehension
iterates over a *grid of settings* while calling a *model function* in its body. A grid of settings is a literal
tuple, list or set, a ``range(...)``, a name bound to one (at module level or in the function), a subscript of such a
name (``JOB_GPUS[scale]``), or a constant of a model package (``dg.FUNCTION_FAULTS``). A model function is any call
reaching a model package (every ``workbench`` subpackage or module other than ``experiments``, ``reproductions``,
``viz``, ``widgets``, ``fidelity``, ``cli`` and the underscore helpers): a name imported from one, or an attribute
of a module imported from one. A loop over data files or traces (names not bound to literals), over the rows of a
sweep's result, or around ``experiments.sweep`` itself is not a grid loop (``enumerate``, ``zip``, ``sorted`` and
generator expressions are looked through).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import workbench

REPRODUCTIONS = Path(workbench.__file__).parent / "reproductions"
#: Not model packages: a call into these is not a model call.
NOT_MODELS = {"experiments", "reproductions", "viz", "widgets", "fidelity", "cli", "dashboards", "notebook_files"}

#: Modules that still run a grid of their own (issue 36, item 2, not yet converted), with the reason they remain.
KNOWN: dict[str, str] = {}
#: Loops the rule matches that run over data, not settings: ``module:function`` and why.
DATA_LOOPS = {
    "burstgpt:_diurnal": "splits one trace by its log types",
    "pcaps:region_spread": "reads one carbon trace per region",
    "servegen:_length_shapes": "reads each language model's request pool",
    "servegen:_length_shift": "reads each language model's request pool",
}


def _model_bindings(tree: ast.Module) -> set[str]:
    """Names bound by importing from a model package (functions, classes and modules alike)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            parts = (node.module or "").split(".")
            if node.level == 1:  # a sibling inside reproductions/
                continue
            top = parts[0]
            if top and (top in NOT_MODELS or top.startswith("_")):
                continue
            for alias in node.names:
                if not top and (alias.name in NOT_MODELS or alias.name.startswith("_")):
                    continue  # ``from .. import experiments as ex``
                out.add(alias.asname or alias.name)
    return out


def _literal(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(isinstance(e, ast.Constant) or _literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(_literal(v) or isinstance(v, ast.Constant) for v in node.values)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"


def _settings_names(body: list[ast.stmt]) -> set[str]:
    names = set()
    for stmt in body:
        for node in ast.walk(stmt):
            value = getattr(node, "value", None)
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and value is not None and _literal(value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            names.add(n.id)
    return names


def _is_grid(it: ast.AST, settings: set[str], models: set[str]) -> bool:
    if _literal(it):
        return True
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("enumerate", "zip", "sorted"):
        return any(_is_grid(a, settings, models) for a in it.args)
    if isinstance(it, ast.GeneratorExp):
        return any(_is_grid(g.iter, settings, models) for g in it.generators)
    if isinstance(it, ast.Subscript):
        it = it.value
    if isinstance(it, ast.Name):
        return it.id in settings
    return isinstance(it, ast.Attribute) and isinstance(it.value, ast.Name) and it.value.id in models


def _calls_model(nodes: list[ast.AST], models: set[str]) -> bool:
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Call):
                f = node.func
                while isinstance(f, ast.Attribute):
                    f = f.value
                if isinstance(f, ast.Name) and f.id in models:
                    return True
    return False


def grid_loops(source: str) -> list[str]:
    """``function:line`` of every grid loop calling a model function in ``source`` (a reproduction module)."""
    tree = ast.parse(source)
    models = _model_bindings(tree)
    module_settings = _settings_names(tree.body)
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        settings = module_settings | _settings_names(fn.body)
        for node in ast.walk(fn):
            if isinstance(node, (ast.For, ast.AsyncFor)) and _is_grid(node.iter, settings, models):
                if _calls_model(node.body, models):
                    found.append(f"{fn.name}:{node.lineno}")
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) and any(
                _is_grid(g.iter, settings, models) for g in node.generators
            ):
                body = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
                if _calls_model(body + [g.iter for g in node.generators[1:]], models):
                    found.append(f"{fn.name}:{node.lineno}")
    return sorted(set(found))


MODULES = sorted(p.stem for p in REPRODUCTIONS.glob("*.py") if not p.stem.startswith("_"))


def _loops(name: str) -> list[str]:
    loops = grid_loops((REPRODUCTIONS / f"{name}.py").read_text())
    return [loop for loop in loops if f"{name}:{loop.split(':')[0]}" not in DATA_LOOPS]


@pytest.mark.parametrize("name", MODULES)
def test_reproduction_runs_no_grid_of_its_own(name):
    """A reproduction's parameter study is a registered experiment; the known exceptions are listed with a reason,
    and an exception that no longer loops must leave the list (so the list only shrinks)."""
    loops = _loops(name)
    if name in KNOWN:
        assert loops, f"reproductions/{name}.py no longer runs a grid of its own: remove it from KNOWN"
    else:
        assert not loops, (
            f"reproductions/{name}.py loops over a parameter grid calling a model at {loops}: register the study "
            "as an experiment (workbench/experiments/) and read it with experiments.sweep"
        )


def test_data_loop_exceptions_still_exist():
    """Every listed loop over data is still matched by the rule (a stale entry would hide a future grid)."""
    for entry in DATA_LOOPS:
        name, fn = entry.split(":")
        assert fn in {loop.split(":")[0] for loop in grid_loops((REPRODUCTIONS / f"{name}.py").read_text())}, entry


def test_the_rule_catches_a_grid_and_passes_a_sweep():
    grid = (
        "from ..training import failures as tf\nSIZES = (1, 2)\n"
        "def f():\n    return [tf.ettr(n) for n in SIZES]\n"
        "def g(scale):\n    out = []\n    for n in SIZES:\n        for m in ('a', 'b'):\n"
        "            out.append(tf.Recovery(m, n))\n    return out\n"
    )
    assert grid_loops(grid) == ["f:4", "g:7", "g:8"]
    swept = (
        "from .. import experiments as ex\nfrom ..training import failures as tf\nSIZES = (1, 2)\n"
        "def f(paths):\n    t = ex.sweep('x', {'n': list(SIZES)})\n"
        "    return [tf.load(p) for p in paths], [ex.sweep('y', {'m': m}) for m in SIZES], [round(v) for v in SIZES]\n"
    )
    assert grid_loops(swept) == []
