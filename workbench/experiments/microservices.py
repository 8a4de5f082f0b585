"""Microservice overload-control studies (issue 28, Rajomon NSDI'25).

* ``microservice-overload`` -- open-loop Poisson load on a call graph (:func:`workbench.microservices.make_graph`):
  ``base_load`` x the graph's capacity (the rate that saturates its busiest service for the graph's request mix),
  a ``pattern`` of "spike" (``spike_load`` x capacity from ``spike_start_s`` for ``spike_len_s``) or "step" (from
  ``spike_start_s`` to the end), under ``controller`` (a treatment: at a point every controller sees the same
  arrivals, types and importances) with a common queueing-delay threshold ``threshold_s``; metrics over the
  requests arriving during the spike (:meth:`workbench.microservices.SimResult.summary`, from ``spike_start_s`` to
  the row's ``spike_end_s``).
* ``microservice-overload-series`` -- the same run (same parameters, same seed: a ``microservice-overload`` row's own
  simulation) as a time series: offered load, goodput, drops and p95 latency per ``bin_s`` of arrival time
  (:meth:`workbench.microservices.SimResult.timeseries`), one row per bin.
"""

from __future__ import annotations

from .._rng import int31_seed
from ..microservices import CONTROLLERS, GRAPHS, Load, make_controller, make_graph, simulate
from ._space import Param, experiment

__all__ = ["microservice_overload", "microservice_overload_series", "point_load"]


def point_load(
    graph: str,
    base_load: float,
    spike_load: float,
    pattern: str,
    duration_s: float,
    spike_start_s: float,
    spike_len_s: float,
    slo_s: float,
) -> tuple:
    """The (graph, :class:`~workbench.microservices.Load`) of one point: rates relative to the graph's capacity."""
    g = make_graph(graph, slo_s * 1e3)
    cap = g.capacity_rps()
    load = Load(base_load * cap, spike_load * cap, duration_s, spike_start_s, spike_len_s, step=pattern == "step")
    return g, load


#: The parameters of a run (both experiments).
PARAMS = (
    Param("graph", "hotel-search", choices=GRAPHS, doc="call graph (DeathStarBench or a chain)"),
    Param("controller", "rajomon", choices=CONTROLLERS, seeded=False, doc="overload controller"),
    Param("base_load", 0.5, "", low=0.0, high=1.0, doc="load before and after the spike / capacity"),
    Param("spike_load", 1.5, "", low=0.1, high=5.0, doc="load during the spike / capacity"),
    Param("pattern", "spike", choices=("spike", "step"), doc="a spike that ends, or a step to the end"),
    Param("duration_s", 6.0, "s", low=0.5, high=120.0, doc="simulated time"),
    Param("spike_start_s", 1.0, "s", low=0.0, high=100.0, doc="spike start"),
    Param("spike_len_s", 3.0, "s", low=0.1, high=100.0, doc="spike length"),
    Param("slo_s", 0.02, "s", low=0.001, high=1.0, log=True, doc="end-to-end latency SLO"),
    Param("threshold_s", 0.002, "s", low=0.0001, high=0.1, log=True, doc="controllers' queueing-delay threshold"),
)
#: The small grid's run: 2 s with a 1 s spike.
SMALL = {"duration_s": 2.0, "spike_start_s": 0.5, "spike_len_s": 1.0}


def _run(*, controller, threshold_s, seed, **point):
    """(graph, :class:`~workbench.microservices.SimResult`) of one point (the :data:`PARAMS` by name): the run both
    experiments read."""
    g, load = point_load(**point)
    return g, simulate(g, load, make_controller(controller, threshold_s * 1e3), seed=int31_seed(seed))


@experiment(
    "microservice-overload",
    version="3",
    small={
        "graph": ["hotel-search", "chain-4"],
        "controller": list(CONTROLLERS),
        **SMALL,
    },
    params=list(PARAMS),
)
def microservice_overload(*, seed, **run):
    """Goodput, tail latency, drops and wasted work of one controller through a load spike on one call graph (the
    :data:`PARAMS` and ``seed`` by name)."""
    g, r = _run(seed=seed, **run)
    return {"capacity_rps": g.capacity_rps(), "spike_end_s": r.load.spike_end_s, **r.summary()}


@experiment(
    "microservice-overload-series",
    version="1",
    small={"graph": "chain-2", "controller": ["none", "rajomon"], **SMALL},
    params=[
        *PARAMS,
        Param("bin_s", 0.1, "s", low=0.01, high=10.0, log=True, seeded=False, doc="time bin of the series"),
    ],
)
def microservice_overload_series(*, bin_s, seed, **run):
    """Offered load, goodput, drops and p95 latency per time bin (by arrival) of one controller's run: the run behind
    the ``microservice-overload`` row at the same parameters and seed (``bin_s`` does not key the seed)."""
    _, r = _run(seed=seed, **run)
    return r.timeseries(bin_s)
