"""Switch queues with RED/ECN and PRED's adaptive marking, DCTCP senders, and flow completion time.

Layers of the model, from fastest to most detailed:

* :mod:`~workbench.aqm.red` -- the marking ramp, classic ``(min_k, max_k, max_p)`` and PRED's ``(min_k, slope)``;
* :mod:`~workbench.aqm.pred` -- PRED's configuration, its fluid form and its two controllers (FCS and QLA);
* :mod:`~workbench.aqm.fluid` -- N long DCTCP flows through one queue: the steady-state standing queue and the delay
  ODE (queue oscillation, utilization), vectorized over numbers of flows;
* :mod:`~workbench.aqm.perpacket` -- the packet-level engine, compiled (numba): every packet and every ACK through
  every hop's FIFO, DCTCP senders, static marking or PRED's controllers (its result: :mod:`~workbench.aqm.result`);
* :mod:`~workbench.aqm.scenarios` -- one bottleneck shared by long and web-search flows, and web-search flows across
  a leaf-spine fabric, alone or with background flows or incast bursts (from :mod:`workbench.fabric.topology`, paths from :mod:`workbench.fabric.routing`);
* :mod:`~workbench.aqm.replay` -- a given flow table (e.g. the ``fabric-websearch-128`` connection matrices) on a
  given leaf-spine, and the ``workbench aqm replay`` command;
* :mod:`~workbench.aqm.workload` -- the DCTCP web-search flow-size distribution, Poisson arrivals at a load, size
  classes, a leaf-spine's flows drawn as the ``fabric-websearch-128`` README states;
* :mod:`~workbench.aqm.validation` -- the per-packet engine's validation as data: its nine FCT statistics against the
  envelope of two independent simulators (ns-3, htsim) on ten workloads;

The parameter studies over these models (queue vs concurrency, bottleneck and leaf-spine FCT vs load and marking)
are experiments of :mod:`workbench.experiments.aqm`, run by :func:`workbench.experiments.sweep`.

The fluid and packet models agree where they overlap (long flows on one bottleneck, static marking).
"""

from .fluid import DCTCP_G, FluidResult, bdp_pkts, simulate_fluid, steady_state
from .pred import PRED_DEFAULT, FluidMarking, PredConfig, fluid_marking
from .red import STATIC_DEFAULT, RedMarking, mark_probability
from .result import SimResult
from .scenarios import MIXES, ROUTINGS, ack_paths, dumbbell, fabric_paths, fct_summary, leaf_spine_fct, leaf_spine_mix
from .workload import (
    SIZE_CLASSES,
    VALIDATION_SIZE_CLASSES,
    WEB_SEARCH_CDF,
    FlowSizeCDF,
    poisson_flows,
    size_class,
    web_search,
)

__all__ = [
    "DCTCP_G",
    "MIXES",
    "PRED_DEFAULT",
    "ROUTINGS",
    "STATIC_DEFAULT",
    "ack_paths",
    "fabric_paths",
    "FlowSizeCDF",
    "FluidMarking",
    "FluidResult",
    "PredConfig",
    "RedMarking",
    "SIZE_CLASSES",
    "SimResult",
    "VALIDATION_SIZE_CLASSES",
    "WEB_SEARCH_CDF",
    "bdp_pkts",
    "dumbbell",
    "fct_summary",
    "fluid_marking",
    "leaf_spine_fct",
    "leaf_spine_mix",
    "mark_probability",
    "poisson_flows",
    "simulate_fluid",
    "size_class",
    "steady_state",
    "web_search",
]
