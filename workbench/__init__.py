"""workbench: analytical models, simulations and paper reproductions for datacenter-network and LLM-systems research.

The package is layered, with imports running one way (``ARCHITECTURE.md`` at the repository root is the authority):
models -> viz / experiments -> reproductions -> widgets -> notebooks and CLI.

* model packages (:mod:`workbench.arrivals`, ``distributions``, ``fabric``, ``aqm``, ``workloads``, ``serving``,
  ``training``, ``placement``) are pure, vectorized functions over numpy arrays, tidy DataFrames and small frozen
  dataclasses;
* :mod:`workbench.viz` builds plotly figures from model outputs; :mod:`workbench.experiments` runs parameter studies
  of the models on Dask;
* :mod:`workbench.reproductions` turns papers' findings into :class:`~workbench.reproductions.Claim` objects that
  call the models (and viz, for their figures);
* :mod:`workbench.widgets` wires ipywidgets controls to model calls and viz builders;
* the notebooks and the ``workbench`` command are thin entry points on top.
"""

__version__ = "0.1.0"

# first: every later import of a workbench module notes its source file (see workbench._loaded)
from . import _loaded

_loaded.install()


class WorkbenchWarning(UserWarning):
    """Base class of the warnings the workbench itself issues (errors in the test suite)."""


__all__ = ["WorkbenchWarning", "__version__"]


def _numba_cache_under_workbench_cache() -> None:
    """Numba's compiled-code cache goes under ``$WORKBENCH_CACHE/numba`` (not into the installed package's
    ``__pycache__``), unless the user chose ``NUMBA_CACHE_DIR``. Set before the first compile: numba reads the
    variable when it is imported, and its config attribute when it writes a cache, so both are set."""
    import os
    import sys

    from ._paths import cache_root

    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    os.environ["NUMBA_CACHE_DIR"] = str(cache_root() / "numba")
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]  # type: ignore[attr-defined]


_numba_cache_under_workbench_cache()
