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


class WorkbenchWarning(UserWarning):
    """Base class of the warnings the workbench itself issues (errors in the test suite)."""


__all__ = ["WorkbenchWarning", "__version__"]
