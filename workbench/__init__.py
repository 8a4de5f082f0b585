"""workbench: analytical models, simulations and paper reproductions for datacenter-network and LLM-systems research.

The package is layered, with data flowing one way (see ``DESIGN.md`` in the shared folder):

* model packages (:mod:`workbench.arrivals`, ``fabric``, ``workloads``, ``serving``, ``aqm``, ...) are pure,
  vectorized functions over numpy arrays and small frozen dataclasses;
* :mod:`workbench.reproductions` turns papers' findings into :class:`~workbench.reproductions.Claim` objects that
  call the models;
* :mod:`workbench.viz` builds plotly figures from model outputs and :mod:`workbench.widgets` wires ipywidgets
  controls to model calls and figures;
* the notebooks are thin narrative on top.
"""

__version__ = "0.1.0"


class WorkbenchWarning(UserWarning):
    """Base class of the warnings the workbench itself issues (errors in the test suite)."""


__all__ = ["WorkbenchWarning", "__version__"]
