"""What a cached result depends on: the code it can reach and the data files it read.

Every cache of computed results (sweep records, paper runs, shared studies) is keyed by the code that computes it
and checked against the data it read, so an edited model or a shadowed data file never serves an old number.

**Code.** :func:`code_fingerprint` digests the source of a module and of every module it imports, transitively (the
import statements of each file, anywhere in it, read with :mod:`ast` once per source by
:mod:`workbench._import_lists`; only the workbench's own modules and those of the root's top-level package are
followed: a third-party library enters as its version, :data:`RUNTIME`). It is a module-granularity
over-approximation of "the code a function can reach": an edit anywhere in that closure recomputes, an edit
elsewhere does not. A module already imported is digested *as loaded*: its digest is taken
when this process first needs it and kept until the module is reloaded (``importlib.reload`` or IPython's
autoreload give it a new ``__spec__``), so results computed by the code that actually ran are never stored under the
key of an edited file the process has not loaded (an edit is live, and keyed, after a restart or a reload). A file
edited between its import and its first digest is caught by the stat noted when it was loaded
(:mod:`workbench._loaded`): it is keyed as "loaded before an edit", a key no process running the edited file
computes, with a warning.

**Data.** While a :func:`recording` is active, every data file the workbench resolves on its search path
(:func:`workbench.data.find`) is noted with the path it resolved to, or as missing; when the recording ends each is
digested by content (:func:`workbench._fingerprint.path_digest`). The result is a :class:`Deps` stored beside the cached
result; a reader re-resolves each name on the current search path and recomputes when any digest differs
(:func:`workbench.data.stale`), so a file shadowed through ``$WORKBENCH_DATA``, edited, added or removed invalidates
exactly the results that read it. Functions that remember results in memory across calls use :func:`remember`
(never :func:`functools.cache`): it replays the dependencies recorded on the first call on every later one, so a
caller's recording is complete whatever ran before it in the process.

Recordings nest (a paper's run records the sweeps it reads) and are per thread and task (:mod:`contextvars`).

Examples
--------
>>> with recording() as rec:
...     note_module("workbench._rng")
>>> sorted(rec.deps().code)
['workbench._rng']
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import importlib.util
import json
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from . import _import_lists, _loaded, _unfiled

__all__ = [
    "Deps",
    "RUNTIME",
    "recording",
    "note_path",
    "note_module",
    "replay",
    "remember",
    "data_env",
    "search_env",
    "module_closure",
    "code_fingerprint",
    "closure_digests",
    "mismatched",
    "module_digest",
]

F = TypeVar("F", bound=Callable[..., Any])

#: Third-party packages whose version is part of every code fingerprint (their numerics shape the results).
RUNTIME_PACKAGES = ("numpy", "scipy", "pandas", "numba", "networkx", "simpy")


def _runtime() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [f"python {sys.version_info.major}.{sys.version_info.minor}"]
    for name in RUNTIME_PACKAGES:
        try:
            parts.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            parts.append(f"{name} absent")
    return "; ".join(parts)


#: The interpreter and library versions every code fingerprint includes.
RUNTIME = _runtime()


# ----------------------------------------------------------------------------------------------------------------------
# Recording
# ----------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Deps:
    """What one result depends on: ``data`` maps each data-file name it asked the search path for to the content
    digest of what it found (``"missing"`` when nothing was found); ``code`` maps module names whose closure it ran
    (beyond the cache key's own) to their :func:`code_fingerprint`."""

    data: Mapping[str, str] = field(default_factory=dict)
    code: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, dict[str, str]]:
        return {"data": dict(sorted(self.data.items())), "code": dict(sorted(self.code.items()))}

    @classmethod
    def from_json(cls, rec: Any) -> Deps:
        """Parse :meth:`to_json`'s output; ``ValueError`` when it is not one."""
        if not isinstance(rec, dict) or not all(isinstance(rec.get(k, {}), dict) for k in ("data", "code")):
            raise ValueError(f"not a dependency record: {rec!r}")
        data, code = rec.get("data", {}), rec.get("code", {})
        if not all(isinstance(k, str) and isinstance(v, str) for d in (data, code) for k, v in d.items()):
            raise ValueError(f"not a dependency record: {rec!r}")
        return cls(dict(data), dict(code))

    def __bool__(self) -> bool:
        return bool(self.data or self.code)


class Recorder:
    """Collects what is noted while its :func:`recording` is active; :meth:`deps` digests it."""

    def __init__(self) -> None:
        self._paths: dict[str, Path | None] = {}
        self._digests: dict[str, str] = {}
        self._code: dict[str, str] = {}
        self._stats: dict[Path, tuple[int, int, int] | None] = {}  # files read by remembered calls, as they were
        self._lock = threading.Lock()

    def _path(self, key: str, path: Path | None) -> None:
        with self._lock:
            self._paths.setdefault(key, path)

    def _digest(self, key: str, digest: str) -> None:
        with self._lock:
            self._digests.setdefault(key, digest)

    def _module(self, name: str, digest: str) -> None:
        with self._lock:
            self._code.setdefault(name, digest)

    def deps(self) -> Deps:
        """The dependencies noted so far, data files digested by content now."""
        from ._fingerprint import path_digest

        with self._lock:
            paths, digests, code = dict(self._paths), dict(self._digests), dict(self._code)
        data = dict(digests)
        for key, path in paths.items():
            if key not in data:
                data[key] = path_digest(path)
        return Deps(data, code)


_ACTIVE: contextvars.ContextVar[tuple[Recorder, ...]] = contextvars.ContextVar("workbench_recorders", default=())


@contextlib.contextmanager
def recording() -> Iterator[Recorder]:
    """Record the data files and modules the enclosed code depends on (nested recordings each see everything)."""
    rec = Recorder()
    token = _ACTIVE.set((*_ACTIVE.get(), rec))
    try:
        yield rec
    finally:
        _ACTIVE.reset(token)


def active() -> bool:
    """Whether a :func:`recording` is active in this context."""
    return bool(_ACTIVE.get())


def note_path(key: str, path: Path | None) -> None:
    """Note that the data file ``key`` (a search-path name, or an absolute path) resolved to ``path`` (``None``:
    not found). Called by :func:`workbench.data.find`; a no-op outside a recording."""
    for rec in _ACTIVE.get():
        rec._path(key, path)


def note_module(name: str) -> None:
    """Note that the code of module ``name`` (and its imports) ran: its fingerprint becomes a dependency."""
    recs = _ACTIVE.get()
    if recs:
        digest = code_fingerprint(name)
        for rec in recs:
            rec._module(name, digest)


def replay(deps: Deps) -> None:
    """Note every dependency of a result read from a cache, as if it had been computed here."""
    for rec in _ACTIVE.get():
        for key, digest in deps.data.items():
            rec._digest(key, digest)
        for name, digest in deps.code.items():
            rec._module(name, digest)


_DATA_ENV: contextvars.ContextVar[str | None] = contextvars.ContextVar("workbench_data_env", default=None)


def data_env() -> str:
    """The ``$WORKBENCH_DATA`` in effect: the one a :func:`search_env` block set, else the environment's."""
    override = _DATA_ENV.get()
    return os.environ.get("WORKBENCH_DATA", "") if override is None else override


@contextlib.contextmanager
def search_env(value: str | None) -> Iterator[None]:
    """Run the block under ``$WORKBENCH_DATA = value`` for the data search path (``None``: leave it as it is),
    without touching the process environment (a Dask worker's other threads keep theirs)."""
    if value is None:
        yield
        return
    token = _DATA_ENV.set(value)
    try:
        yield
    finally:
        _DATA_ENV.reset(token)


def _stat_or_none(path: Path) -> tuple[int, int, int] | None:
    try:
        return _stat(path)
    except OSError:
        return None


def remember(fn: F) -> F:
    """:func:`functools.cache` for functions whose result depends on data files or sweeps: results are remembered
    per arguments and per ``$WORKBENCH_DATA``, and the dependencies recorded by the first call are replayed on every
    later one (so the recording of whoever calls it is complete). A file the call read that has since been edited in
    place (its size, modification time or inode changed) makes the next call compute again: a notebook kernel sees
    an edited table without a restart. ``fn.cache_clear()`` forgets everything.

    Examples
    --------
    >>> calls = []
    >>> @remember
    ... def twice(x):
    ...     calls.append(x)
    ...     return 2 * x
    >>> twice(2), twice(2), calls
    (4, 4, [2])
    """
    store: dict[Any, tuple[Any, Deps, tuple[tuple[Path, tuple[int, int, int] | None], ...]]] = {}
    lock = threading.Lock()

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = (args, tuple(sorted(kwargs.items())), data_env())
        with lock:
            hit = store.get(key)
        if hit is not None and any(_stat_or_none(path) != sig for path, sig in hit[2]):
            hit = None  # a file it read was edited in place since (a kernel that keeps running sees the edit)
        if hit is None:
            with recording() as rec:
                value = fn(*args, **kwargs)
            stats = {path: _stat_or_none(path) for path in rec._paths.values() if path is not None}
            hit = (value, rec.deps(), tuple({**stats, **rec._stats}.items()))
            with lock:
                store[key] = hit
        replay(hit[1])
        for outer in _ACTIVE.get():  # a remembered caller checks the files this call read too
            with outer._lock:
                for path, sig in hit[2]:
                    outer._stats.setdefault(path, sig)
        return hit[0]

    wrapper.cache_clear = store.clear  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


# ----------------------------------------------------------------------------------------------------------------------
# Code
# ----------------------------------------------------------------------------------------------------------------------

_code_lock = threading.RLock()
#: module name -> (the ``__spec__`` it was digested under, or None when not loaded; file stat; digest)
_module_digests: dict[str, tuple[Any, tuple[int, int, int], str]] = {}
_module_imports: dict[tuple[str, tuple[int, int, int]], frozenset[str]] = {}
_warned_edits: set[str] = set()


def _origin(name: str) -> Path | None:
    """The source file of module ``name`` (``None``: no such module, or not a Python source file), found without
    importing it: a submodule is looked up under its top-level package's directory."""
    mod = sys.modules.get(name)
    file = getattr(mod, "__file__", None) if mod is not None else None
    if file is None:
        top, _, rest = name.partition(".")
        top_mod = sys.modules.get(top)
        if top_mod is None:
            try:
                spec = importlib.util.find_spec(top)
            except (ImportError, ValueError):
                return None
            locations = list(spec.submodule_search_locations or []) if spec is not None else []
            if not rest:
                file = spec.origin if spec is not None and spec.has_location else None
        else:
            locations = list(getattr(top_mod, "__path__", []))
        if rest:
            for base in locations:
                stem = Path(base, *rest.split("."))
                for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
                    if candidate.is_file():
                        file = str(candidate)
                        break
                if file is not None:
                    break
    if file is None or not str(file).endswith(".py"):
        return None
    return Path(file)


def _stat(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _imports(name: str, path: Path, sig: tuple[int, int, int]) -> frozenset[str]:
    """Modules named by the import statements of ``name``'s source (anywhere in the file), resolved, plus its
    parent packages (importing a module runs them)."""
    known = _module_imports.get((name, sig))
    if known is None:
        known = _module_imports[(name, sig)] = _import_lists.imports(name, path)
    return known


def _followed(root: str) -> Callable[[str], bool]:
    tops = {"workbench", root.split(".")[0]}
    return lambda name: name.split(".")[0] in tops


def module_closure(name: str) -> dict[str, Path]:
    """The modules ``name`` imports, transitively (itself included), that :func:`code_fingerprint` digests: the
    workbench's own and those of ``name``'s top-level package, by name, with their source files.

    Examples
    --------
    >>> closure = module_closure("workbench.arrivals.queues")
    >>> "workbench._validate" in closure, "numpy" in closure
    (True, False)
    """
    follow = _followed(name)
    out: dict[str, Path] = {}
    stack = [name]
    with _code_lock:
        known = _closures.get(name)
        if known is not None and _unchanged(known[0]):
            return dict(known[1])
        stamps = []
        while stack:
            mod = stack.pop()
            if mod in out or not follow(mod):
                continue
            path = _origin(mod)
            if path is None:
                continue
            out[mod] = path
            sig = _stat(path)
            stamps.append((mod, path, sig))
            stack.extend(m for m in _imports(mod, path, sig) if m not in out)
        _closures[name] = (tuple(stamps), dict(out))
    return out


#: module name -> (each module of its closure with its file and that file's stat, the closure), as last walked: a
#: closure holds while every one of its files is unchanged and loaded from where it was found (the walk looks up
#: hundreds of imported names, most of them not modules, each at two file checks; a sweep asks for the same closure
#: once per point).
_closures: dict[str, tuple[tuple[tuple[str, Path, tuple[int, int, int]], ...], dict[str, Path]]] = {}


def _unchanged(stamps: Sequence[tuple[str, Path, tuple[int, int, int]]]) -> bool:
    for mod, path, sig in stamps:
        file = getattr(sys.modules.get(mod), "__file__", None)
        if file is not None and file != str(path):
            return False
        try:
            if _stat(path) != sig:
                return False
        except OSError:
            return False
    return True


def module_digest(name: str, path: Path) -> str:
    """sha256 of module ``name``'s source as this process runs it (see the module notes: as loaded, for an imported
    module; a warning, once per file, when the file was edited after it was loaded)."""
    with _code_lock:
        mod = sys.modules.get(name)
        spec = getattr(mod, "__spec__", None) if mod is not None else None
        sig = _stat(path)
        known = _module_digests.get(name)
        if known is not None:
            known_spec, known_sig, known_digest = known
            if known_sig == sig:
                if spec is not None and known_spec is not spec:
                    _module_digests[name] = (spec, sig, known_digest)
                return known_digest
            if spec is not None and known_spec is spec:  # edited on disk since this process loaded it
                _warn_edited(path)
                return known_digest
        loaded = _loaded.STAMPS.get(name) if mod is not None else None
        if loaded is not None and loaded != sig:  # edited after this process loaded it, before it was digested
            _warn_edited(path)
            # the code that runs is the file as it was: a key no process running the edited file computes, kept
            # with the file's stat as loaded (the edit warns again, a reload digests the file anew)
            digest = hashlib.sha256(name.encode() + b"\0loaded before an edit\0" + repr(loaded).encode()).hexdigest()
            sig = loaded
        else:
            digest = hashlib.sha256(name.encode() + b"\0" + path.read_bytes()).hexdigest()
        _module_digests[name] = (spec, sig, digest)
        return digest


def _warn_edited(path: Path) -> None:
    if str(path) not in _warned_edits:
        _warned_edits.add(str(path))
        from . import WorkbenchWarning

        warnings.warn(
            f"{path} changed after this process imported it: results are computed and cached for the code as loaded; "
            "restart the kernel (or reload the module) to run the edited code",
            WorkbenchWarning,
            stacklevel=4,
        )


def _roots(target: str | Callable[..., Any], h: Any) -> list[str]:
    """The modules whose closure is ``target``'s code; a function without a file adds what it depends on to ``h``
    (:mod:`workbench._unfiled`: its source, the values and helpers its globals hold, its defaults and closure)."""
    if isinstance(target, str):
        return [target]
    module = getattr(target, "__module__", None) or ""
    if _origin(module) is not None:
        return [module]
    return [m for m in _unfiled.digest(target, h) if _origin(m) is not None]


def closure_digests(target: str | Callable[..., Any]) -> dict[str, str]:
    """``{module: digest}`` over the closure of ``target``'s code (see :func:`code_fingerprint`)."""
    closure: dict[str, Path] = {}
    for root in _roots(target, hashlib.sha256()):
        closure.update(module_closure(root))
    return {name: module_digest(name, closure[name]) for name in sorted(closure)}


def code_fingerprint(target: str | Callable[..., Any]) -> str:
    """A digest of the code ``target`` (a module name, or a function) can reach, and of :data:`RUNTIME`.

    A function defined in a file is its module's closure; one without a file (typed in a notebook, or shipped to a
    worker by value) is what :mod:`workbench._unfiled` digests (its source, the values and helpers of the cells it
    reads) plus the closures of the modules with files its global names come from.

    Examples
    --------
    >>> code_fingerprint("workbench.arrivals.queues") == code_fingerprint("workbench.arrivals.queues")
    True
    >>> code_fingerprint("workbench.arrivals.queues") != code_fingerprint("workbench.aqm.fluid")
    True
    """
    h = hashlib.sha256(RUNTIME.encode())
    closure: dict[str, Path] = {}
    for root in _roots(target, h):
        closure.update(module_closure(root))
    for name in sorted(closure):
        h.update(name.encode() + b"\0" + module_digest(name, closure[name]).encode() + b"\0")
    return h.hexdigest()[:32]


def mismatched(digests: Mapping[str, str]) -> list[str]:
    """The modules of ``digests`` (another process's :func:`closure_digests`) whose code differs here, as this
    process runs it; modules this process cannot find (shipped by value) are not compared."""
    out = []
    for name, digest in digests.items():
        path = _origin(name)
        if path is not None and module_digest(name, path) != digest:
            out.append(name)
    return out


def canonical(obj: Any) -> bytes:
    """Canonical JSON bytes (sorted keys, no spaces): what keys are hashed from."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
