"""A module's import statements as module names, parsed once per source and stored for every later process.

:func:`workbench._deps.module_closure` follows the imports of every module a cached result can reach. Parsing the
~70 files of a closure with :mod:`ast` took a fresh process 0.3-0.5 s, paid again by every kernel, dashboard and CLI
call; the list depends only on the module's name and source, so it is stored under ``$WORKBENCH_CACHE/code-imports/``
by the digest of both and read back by any process that finds the same source.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from ._atomic import atomic_path
from ._paths import cache_root

__all__ = ["imports"]


def imports(name: str, path: Path) -> frozenset[str]:
    """Modules named by the import statements of module ``name``'s source at ``path`` (anywhere in the file; relative
    imports resolved), plus its parent packages (importing a module runs them)."""
    try:
        source = path.read_bytes()
    except OSError:
        source = b""
    key = hashlib.sha256(b"imports\0" + name.encode() + b"\0" + source).hexdigest()
    result = _stored(key)
    if result is None:
        result = _parse(name, path, source)
        _store(key, result)
    return result


def _file(key: str) -> Path:
    return cache_root() / "code-imports" / key[:2] / key


def _stored(key: str) -> frozenset[str] | None:
    """The import list stored for this key (by any process), or None. The file is named by the digest of the module's
    name and source; its first line repeats that digest and the digest of the list below it (a damaged, truncated or
    foreign file is ignored and parsed again)."""
    try:
        head, _, body = _file(key).read_text(encoding="utf-8").partition("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if head != f"{key} {hashlib.sha256(body.encode()).hexdigest()}":
        return None
    return frozenset(body.split("\n")) - {""}


def _store(key: str, names: frozenset[str]) -> None:
    body = "\n".join(sorted(names))
    path = _file(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            tmp.write_text(f"{key} {hashlib.sha256(body.encode()).hexdigest()}\n{body}", encoding="utf-8")
    except OSError:  # a read-only or full cache: the list is parsed again next time, nothing is lost
        pass


def _parse(name: str, path: Path, source: bytes) -> frozenset[str]:
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()
    try:
        tree = ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError):
        tree = ast.Module(body=[], type_ignores=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import submodule`
    parts = name.split(".")
    out.update(".".join(parts[:i]) for i in range(1, len(parts)))
    out.discard(name)
    return frozenset(out)
