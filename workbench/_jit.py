"""The workbench's ``njit``: numba's, with an on-disk cache that follows the code a compiled function can reach.

Numba's own cache checks only the file that defines a function: a compiled function that calls a compiled function
of another file (the serving engine's loop calls the cost evaluation of ``serving/_cost_eval.py``; the packet and
microservice loops call ``_eventheap``), or reads a constant imported from one, keeps serving the machine code built
from the old callee after that file is edited. Measured: scaling ``pf_cost``'s attention 30x in ``_cost_eval.py``
left the engine's first-token time at 0.2968 s with the cache in place (1.2730 s with an empty one); the sweep cache,
keyed by the code (:mod:`workbench._deps`), recomputed the point and got the stale number back from numba.

Importing this module puts :class:`ClosureLocator` first among numba's cache locators. For a function defined in an
importable module it keys the cache index by numba's own stamp of the file *and* the module's
:func:`~workbench._deps.code_fingerprint` (the source of every workbench module it imports, transitively, and the
numerical libraries' versions): an edit anywhere in that closure recompiles on the next run, an edit elsewhere does
not. Functions of notebooks, scripts and other packages without a source module fall through to numba's locators.
With ``cache=True`` a function is also compiled once across processes that compile it at the same moment
(:func:`_compile_once`). Every compiled function of the package is decorated with this ``njit``
(``tests/experiments/test_cache_follows.py`` checks that no module takes it from numba directly).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from numba import njit as _numba_njit
from numba.core import caching, config, sigutils
from numba.core.compiler_lock import global_compiler_lock

from ._deps import code_fingerprint

__all__ = ["ClosureLocator", "njit"]


class ClosureLocator(caching.UserProvidedCacheLocator):
    """Numba's cache under ``NUMBA_CACHE_DIR`` (the workbench sets it to ``$WORKBENCH_CACHE/numba``), its index
    stamped with the defining module's code fingerprint as well as the file's content."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._module = py_func.__module__

    def get_source_stamp(self):
        return _Stamp(super().get_source_stamp(), self._module)


class _Stamp:
    """Numba's stamp of the file and the module's code fingerprint, the fingerprint computed when numba first compares
    or saves the stamp (loading or writing the cache index on the function's first call), not when the function is
    decorated: importing the package decorates every compiled function (76), and digesting their closures then took
    0.44 s of the 2.3 s an import of every experiment and panel takes. Compares and pickles as the tuple
    ``(numba's stamp, fingerprint)``, which is what the index on disk holds."""

    __slots__ = ("_file", "_module", "_value")

    def __init__(self, file_stamp, module: str):
        self._file, self._module = file_stamp, module
        self._value: tuple | None = None

    @property
    def value(self) -> tuple:
        if self._value is None:
            self._value = (self._file, code_fingerprint(self._module))
        return self._value

    def __eq__(self, other):
        return self.value == (other.value if isinstance(other, _Stamp) else other)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.value)

    def __reduce__(self):
        return tuple, (self.value,)

    @classmethod
    def from_function(cls, py_func, py_file):
        module = sys.modules.get(getattr(py_func, "__module__", None) or "")
        file = getattr(module, "__file__", None)
        if not config.CACHE_DIR or file is None or Path(file).resolve() != Path(py_file).resolve():
            return None
        return super().from_function(py_func, py_file)


if ClosureLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, ClosureLocator)


def _compile_once(dispatcher) -> None:
    """Make the processes that compile ``dispatcher`` for the same types at once (test workers, Dask workers,
    notebook kernels on a fresh cache) do it once: a compile not yet in this process takes numba's compiler lock,
    then a file lock named after the function; the second process waits, and numba's own compile then finds the
    first one's entry in the cache and loads it (the serving engine's loop: ~20 s of compiling, ~1 s to load)."""
    compile_ = dispatcher.compile
    lock = (
        Path(getattr(config, "CACHE_DIR", ""))
        / "locks"
        / f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"
    )

    @functools.wraps(compile_)
    def compile(sig):
        args, _ = sigutils.normalize_signature(sig)
        if tuple(args) in dispatcher.overloads:
            return compile_(sig)
        from .cache import locked

        with global_compiler_lock, locked(lock):  # the compiler lock first: threads of one process never wait on
            return compile_(sig)  # each other's file lock while holding it

    dispatcher.compile = compile


def njit(*args, **kwargs):
    """numba's ``njit``; with ``cache=True`` the compiled code is cached under :class:`ClosureLocator` and compiled
    once across processes (:func:`_compile_once`)."""
    if args and callable(args[0]) and len(args) == 1 and not kwargs:
        return _numba_njit(args[0])
    decorate = _numba_njit(*args, **kwargs)
    if not kwargs.get("cache") or not config.CACHE_DIR:
        return decorate

    def wrap(fn):
        dispatcher = decorate(fn)
        _compile_once(dispatcher)
        return dispatcher

    return wrap
