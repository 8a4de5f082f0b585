"""The layering of ARCHITECTURE.md, enforced: models -> viz / experiments -> reproductions -> widgets -> CLI.

Every ``import`` in the package (absolute or relative, at any depth, including imports inside functions) is resolved
to the top-level part of ``workbench`` it names, and checked against the layer of the importing module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "workbench"

#: Layer of each top-level part; anything not listed is a model package or a support module (layer 0).
LAYER = {
    "viz": 1,
    "experiments": 1,
    "reproductions": 2,
    "widgets": 3,
    "cli": 4,
    "workload_cli": 4,
    "dashboards": 4,
    "scaffold": 4,
}
#: Imports forbidden although the layers allow them: viz and experiments are siblings, not a stack, a widget
#: never reaches into a reproduction (analysis a panel needs belongs in a model package), and among the model packages
#: the flow-level fabric models sit below the packet engine (``aqm`` imports ``fabric``'s topology, routing and
#: flow sizes; ``fabric`` never imports ``aqm``).
FORBIDDEN = {("viz", "experiments"), ("experiments", "viz"), ("widgets", "reproductions"), ("fabric", "aqm")}


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "workbench" and len(parts) > 1 else None


def _imports(path: Path, package: Path) -> list[tuple[int, str]]:
    """``(line, absolute module)`` for every import in ``path`` that targets the workbench package."""
    pkg = list(path.relative_to(package.parent).parts[:-1])  # the package a relative import starts from
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("workbench")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:  # from . import x, y: each name may be a submodule
                    out += [(node.lineno, f"{target}.{a.name}") for a in node.names]
                    continue
            else:
                target = node.module or ""
            if target.startswith("workbench"):
                out.append((node.lineno, target))
    return out


def _violations(package: Path = PACKAGE) -> list[str]:
    bad = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent)
        own = rel.parts[1].removesuffix(".py") if len(rel.parts) > 1 else None
        if own is None:
            continue
        for line, module in _imports(path, package):
            other = _part(module)
            if other is None or other == own:
                continue
            mine, theirs = LAYER.get(own, 0), LAYER.get(other, 0)
            if theirs > mine or (own, other) in FORBIDDEN:
                bad.append(f"{rel}:{line} ({own}, layer {mine}) imports {module} ({other}, layer {theirs})")
    return bad


def test_imports_flow_one_way():
    assert _violations() == []


def test_checker_sees_relative_and_nested_imports(tmp_path):
    """The checker itself can fail: a model module importing viz, and a widget importing a reproduction."""
    root = tmp_path / "workbench"
    (root / "fabric").mkdir(parents=True)
    (root / "widgets").mkdir()
    (root / "fabric" / "m.py").write_text("def f():\n    from ..viz import style\n")
    (root / "widgets" / "w.py").write_text("import workbench.reproductions.c4\n")
    (root / "fabric" / "up.py").write_text("from ..aqm.perpacket import simulate_packets\n")
    found = _violations(root)
    assert len(found) == 3, found
    assert any("fabric" in v and "workbench.aqm" in v for v in found)
    assert any("fabric" in v and "workbench.viz" in v for v in found)
    assert any("widgets" in v and "reproductions" in v for v in found)


@pytest.mark.parametrize("path", sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")))
def test_module_fits_in_a_head(path):
    """About 500 lines per module; a longer one says why in its docstring (a line containing 'longer than')."""
    text = (PACKAGE / path).read_text(encoding="utf-8")
    n = text.count("\n")
    if n <= 550:
        return
    doc = ast.get_docstring(ast.parse(text)) or ""
    assert "longer than" in doc, f"{path} has {n} lines: split it, or say in its docstring why it is longer than ~500"
