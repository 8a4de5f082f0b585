"""LLM serving models: one engine over cost models and scheduling policies, SLOs and one capacity search.

* :func:`serve` (:mod:`workbench.serving.cluster`): a request table on ``n_replicas`` replicas behind a load balancer
  (``balancer``: round-robin, random, or least-outstanding), arrivals compressed by ``rate_scale``; returns a
  :class:`ServeResult` (the per-request table: TTFT, TBT, end-to-end latency, queueing delay; beside it the GPUs, busy
  fraction and early stop). The request validator, the balancer and the table are shared
  (:mod:`workbench.serving._common`).
* :mod:`workbench.serving.engine`: **the one engine**, a replica's event loop (closed-form runs of decode iterations,
  KV accounting, early stop), over any *cost model* and any *scheduling policy*.
* :mod:`workbench.serving.cost`: the cost-model protocol (:class:`CostModel`: iteration cost, decode line, KV capacity
  in tokens, GPUs per replica, swap cost). Two implement it: :class:`Deployment` (:mod:`workbench.serving.roofline`:
  a model on ``tp * pp`` GPUs, per-operator roofline costs, sequential or overlapped) and :class:`ServerConfig`
  (:mod:`workbench.serving.linear`: the abstract linear-cost server, ``base + prefill + decode + KV`` terms and a KV
  budget; :func:`fit_linear` derives one from a Deployment by least squares).
* :mod:`workbench.serving.scheduler`: the policies (:class:`Scheduler`): vLLM, Sarathi-Serve and Orca on a paged KV
  cache (preemption by recompute or swap, prefix sharing over ``hash_ids``), and Orca's reservation of whole contexts
  (``"reserve"``, the ServerConfig's default). For (linear cost, reservation) the engine runs a **compiled fast
  path** (:func:`~workbench.serving.linear.simulate_linear`), checked against the general loop.
* :mod:`workbench.serving.capacity`: SLOs (a TTFT and optionally a TBT quantile) and the one capacity search: the
  largest rate scale a server meets an SLO at, by bracketing and bisection (:func:`max_rate_scale`), in req/s averaged
  over seeds (:func:`capacity_search`) and in GPUs (:func:`~workbench.serving.gpus.capacity_gpus`, either cost model:
  a :class:`~workbench.serving.gpus.GpuCapacity` record with the cheapest configuration beside the candidates' table).
* :mod:`workbench.serving.specs`: GPU and model specification tables (a source per row; user rows by dict or CSV).
* :mod:`workbench.serving.disagg`: prefill/decode disaggregation (separate pools, KV transfer over the network) and
  the fewest prefill and decode replicas meeting an SLO.
* :mod:`workbench.serving.servegen_gpus`: ServeGen's under-provisioning use case sized in GPUs.
* :mod:`workbench.serving.validation`: the models against published measurements (model, published, error).
* :mod:`workbench.serving.gpus`: capacity in GPUs, and NanoFlow's optimal-throughput bound with the resource that
  binds.
"""

from ._common import BALANCERS, ReplicaRun, ServeResult, balance, latency_summary
from .capacity import SLO, CapacityResult, ScaleSearch, capacity_search, max_rate_scale, meets_slo, server_for
from .cluster import serve
from .cost import CostModel
from .engine import PREEMPTIONS, SCHEDULERS, Scheduler, simulate_replica
from .gpus import GpuCapacity, capacity_gpus
from .linear import ServerConfig
from .linear_fit import fit_linear
from .roofline import EFFICIENCY, Deployment, Efficiency

__all__ = [
    "BALANCERS",
    "EFFICIENCY",
    "SCHEDULERS",
    "SLO",
    "CapacityResult",
    "CostModel",
    "Deployment",
    "GpuCapacity",
    "Efficiency",
    "PREEMPTIONS",
    "ReplicaRun",
    "ScaleSearch",
    "Scheduler",
    "ServeResult",
    "ServerConfig",
    "balance",
    "capacity_gpus",
    "capacity_search",
    "fit_linear",
    "latency_summary",
    "max_rate_scale",
    "meets_slo",
    "serve",
    "server_for",
    "simulate_replica",
]
