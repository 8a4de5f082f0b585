"""Switch queues with RED/ECN and PRED's adaptive marking, DCTCP senders, and flow completion time.

Layers of the model, from fastest to most detailed:

* :mod:`~workbench.aqm.red` -- the marking ramp, classic ``(min_k, max_k, max_p)`` and PRED's ``(min_k, slope)``;
* :mod:`~workbench.aqm.fluid` -- N long DCTCP flows through one queue: the steady-state standing queue and the delay
  ODE (queue oscillation, utilization), vectorized over numbers of flows;
* :mod:`~workbench.aqm.packet` -- a simpy discrete-event simulation of DCTCP flows through one bottleneck or a
  leaf-spine fabric (from :mod:`workbench.fabric.topology`), with static thresholds or PRED's Flow Concurrent
  Stabilizer and Queue Length Adjuster; queue traces and flow completion times;
* :mod:`~workbench.aqm.workload` -- the DCTCP web-search flow-size distribution and Poisson arrivals at a load;
* :mod:`~workbench.aqm.experiments` -- scheme comparisons (queue vs concurrency, one bottleneck, leaf-spine) shared
  by the PRED reproduction, its notebook and its widget.

The two fidelities agree where they overlap (long flows on one bottleneck): see ``tests/aqm``.
"""

from .fluid import DCTCP_G, FluidResult, bdp_pkts, simulate_fluid, steady_state
from .packet import Network, PredConfig, SimResult, dumbbell, fct_summary, leaf_spine_fct
from .experiments import PRED_DEFAULT, STATIC_DEFAULT, compare_schemes, concurrency_sweep, fabric_comparison
from .red import RedMarking, mark_probability
from .workload import SIZE_CLASSES, WEB_SEARCH_CDF, FlowSizeCDF, poisson_flows, size_class, web_search

__all__ = [
    "DCTCP_G",
    "PRED_DEFAULT",
    "STATIC_DEFAULT",
    "compare_schemes",
    "concurrency_sweep",
    "fabric_comparison",
    "FlowSizeCDF",
    "FluidResult",
    "Network",
    "PredConfig",
    "RedMarking",
    "SIZE_CLASSES",
    "SimResult",
    "WEB_SEARCH_CDF",
    "bdp_pkts",
    "dumbbell",
    "fct_summary",
    "leaf_spine_fct",
    "mark_probability",
    "poisson_flows",
    "simulate_fluid",
    "size_class",
    "steady_state",
    "web_search",
]
