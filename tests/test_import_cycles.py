"""No import cycles inside the package.

Every ``import`` and ``from ... import`` of a ``workbench`` module is an edge, wherever it is written (module level,
inside a function, under ``TYPE_CHECKING``): a function-level import that closes a loop is still a loop in the
design, only hidden from the interpreter. ``from package import name`` is an edge to ``package.name`` when that is a
module and to ``package`` (its ``__init__``) otherwise. A cycle is a strongly connected component of two or more
modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1] / "workbench"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> nx.DiGraph:
    files = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    stem = ".".join([*base, node.module] if node.module else base)
                else:
                    stem = node.module or ""
                for alias in node.names:
                    sub = f"{stem}.{alias.name}"
                    targets.append(sub if sub in files else stem)
            for target in targets:
                while target and target not in files:  # `import a.b.c` of a non-module attribute
                    target = target.rpartition(".")[0]
                if target and target != name and target.startswith("workbench"):
                    graph.add_edge(name, target)
    return graph


def test_graph_sees_the_package():
    graph = _graph()
    assert graph.number_of_nodes() > 100
    assert graph.has_edge("workbench.cli", "workbench.reproductions")


def test_no_import_cycles():
    cycles = [sorted(c) for c in nx.strongly_connected_components(_graph()) if len(c) > 1]
    assert cycles == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)
