"""What a function without a source file depends on: one typed in a notebook (an experiment registered in a cell) or
shipped to a worker by value (:func:`workbench._deps.code_fingerprint` keys the caches by it).

A module's code is digested from its file; a notebook's function has none. Its digest is its source (or, without
one, its code object) and everything it reads that a cell can change: the values of the global names it uses, in
itself and in its nested code (comprehensions, lambdas), its default arguments and the variables it closes over.
A global that is another function without a file (a helper typed in another cell) is digested the same way, in
turn; plain data (numbers, strings, containers of them) by value, arrays and pandas objects by content, dataclass
instances field by field (an experiment's record holds its function: digested, not printed with its address). A
global that comes from a module with a file (the workbench's, or a user's package outside the Python installation) is
returned as a module to follow, whose file is digested with its imports; the standard library and installed packages
enter by their versions (:data:`workbench._deps.RUNTIME`). Any other object enters by its type's name.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import sys
import types
from typing import Any

from . import _loaded

__all__ = ["digest", "followed_module"]

#: How deep containers are digested by value (deeper: by their type).
_DEPTH = 4


def _names(code: types.CodeType) -> set[str]:
    """The global names ``code`` and the code nested in it (comprehensions, lambdas, inner functions) use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def followed_module(name: str | None) -> bool:
    """Whether module ``name`` is one whose file the code keys digest: the workbench's own, or a module loaded from
    a file outside the Python installation (a user's package)."""
    if not isinstance(name, str) or not name or name == "__main__":
        return False
    if name.partition(".")[0] == "workbench":
        return True
    file = getattr(sys.modules.get(name), "__file__", None)
    return file is not None and not os.path.realpath(file).startswith(_loaded._INSTALLED)


def _value(value: Any, h: Any, modules: set[str], seen: set[int], depth: int) -> None:
    if isinstance(value, types.ModuleType):
        if followed_module(value.__name__):
            modules.add(value.__name__)
        h.update(b"module " + value.__name__.encode())
    elif isinstance(value, (types.FunctionType, type)):
        module = str(getattr(value, "__module__", None) or "")
        if followed_module(module) and getattr(sys.modules.get(module), "__file__", None):
            modules.add(module)
            h.update(f"{module}.{value.__qualname__}".encode())
        elif isinstance(value, types.FunctionType):
            _function(value, h, modules, seen)
        else:
            h.update(_source(value) or value.__qualname__.encode())
    elif value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        h.update(type(value).__name__.encode() + repr(value).encode())
    elif isinstance(value, (tuple, list, set, frozenset, dict)) and depth < _DEPTH:
        items = sorted(value.items(), key=repr) if isinstance(value, dict) else value
        if isinstance(value, (set, frozenset)):
            items = sorted(value, key=repr)
        h.update(f"{type(value).__name__}[{len(value)}]".encode())
        for item in items:
            _value(item, h, modules, seen, depth + 1)
    elif type(value).__module__ == "numpy" and hasattr(value, "tobytes"):
        h.update(f"ndarray {value.dtype} {getattr(value, 'shape', ())}".encode() + value.tobytes())
    elif type(value).__module__.startswith("pandas") and hasattr(value, "shape"):
        import pandas as pd

        h.update(f"{type(value).__name__} {value.shape}".encode())
        h.update(pd.util.hash_pandas_object(value, index=True).to_numpy().tobytes())
    else:
        module = type(value).__module__
        if followed_module(module):
            modules.add(module)
        h.update(f"object {module}.{type(value).__qualname__}".encode())
        if dataclasses.is_dataclass(value) and depth < _DEPTH:  # field by field (a repr may hold addresses)
            for f in dataclasses.fields(value):
                h.update(b"\0field " + f.name.encode())
                _value(getattr(value, f.name, None), h, modules, seen, depth + 1)


def _source(fn: Any) -> bytes | None:
    try:
        return inspect.getsource(fn).encode()
    except (OSError, TypeError):
        return None


def _function(fn: types.FunctionType, h: Any, modules: set[str], seen: set[int]) -> None:
    if id(fn) in seen:
        return
    seen.add(id(fn))
    code = fn.__code__
    h.update(_source(fn) or repr((code.co_code, code.co_consts, code.co_names)).encode())
    glob = fn.__globals__
    for name in sorted(_names(code)):
        if name in glob:
            h.update(b"\0global " + name.encode() + b"\0")
            _value(glob[name], h, modules, seen, 0)
    for default in (*(fn.__defaults__ or ()), *sorted((fn.__kwdefaults__ or {}).items())):
        _value(default, h, modules, seen, 0)
    for cell in fn.__closure__ or ():
        try:
            _value(cell.cell_contents, h, modules, seen, 0)
        except ValueError:  # an empty cell
            h.update(b"empty cell")


def digest(fn: Any, h: Any) -> list[str]:
    """Feed ``h`` (a hashlib object) with what function ``fn``, which has no source file, depends on, and return the
    modules with files it reaches (to be digested with their imports).

    Examples
    --------
    >>> import hashlib
    >>> ns = {"__name__": "__main__"}
    >>> exec("SCALE = 1.0\\ndef helper(x):\\n    return SCALE * x\\ndef f(x):\\n    return helper(x)", ns)
    >>> def key():
    ...     h = hashlib.sha256()
    ...     digest(ns["f"], h)
    ...     return h.hexdigest()
    >>> before = key()
    >>> ns["SCALE"] = 2.0  # a cell re-run with another constant: the helper's global changed
    >>> key() != before
    True
    """
    modules: set[str] = set()
    if isinstance(fn, types.FunctionType):
        _function(fn, h, modules, set())
    else:
        h.update(_source(fn) or repr(fn).encode())
    return sorted(modules)
