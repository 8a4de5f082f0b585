"""The workbench's ``njit``: numba's, with an on-disk cache that follows the code a compiled function can reach.

Numba's own cache checks only the file that defines a function: a compiled function that calls a compiled function
of another file (the serving engine's loop calls the cost evaluation of ``serving/_cost_eval.py``; the packet and
microservice loops call ``_eventheap``), or reads a constant imported from one, keeps serving the machine code built
from the old callee after that file is edited. Measured: tripling ``pf_cost`` in ``_cost_eval.py`` left the engine's
first-token time at 0.2968 s with the cache in place (1.2730 s with an empty one); the sweep cache, keyed by the code
(:mod:`workbench._deps`), recomputed the point and got the stale number back from numba.

Importing this module puts :class:`ClosureLocator` first among numba's cache locators. For a function defined in an
importable module it keys the cache index by numba's own stamp of the file *and* the module's
:func:`~workbench._deps.code_fingerprint` (the source of every workbench module it imports, transitively, and the
numerical libraries' versions): an edit anywhere in that closure recompiles on the next run, an edit elsewhere does
not. Functions of notebooks, scripts and other packages without a source module fall through to numba's locators.
Every compiled function of the package is decorated with this ``njit``
(``tests/experiments/test_cache_follows.py`` checks that no module takes it from numba directly).
"""

from __future__ import annotations

import sys
from pathlib import Path

from numba import njit
from numba.core import caching, config

from ._deps import code_fingerprint

__all__ = ["ClosureLocator", "njit"]


class ClosureLocator(caching.UserProvidedCacheLocator):
    """Numba's cache under ``NUMBA_CACHE_DIR`` (the workbench sets it to ``$WORKBENCH_CACHE/numba``), its index
    stamped with the defining module's code fingerprint as well as the file's content."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._module = py_func.__module__

    def get_source_stamp(self):
        return (super().get_source_stamp(), code_fingerprint(self._module))

    @classmethod
    def from_function(cls, py_func, py_file):
        module = sys.modules.get(getattr(py_func, "__module__", None) or "")
        file = getattr(module, "__file__", None)
        if not config.CACHE_DIR or file is None or Path(file).resolve() != Path(py_file).resolve():
            return None
        return super().from_function(py_func, py_file)


if ClosureLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, ClosureLocator)
