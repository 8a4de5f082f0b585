"""LLM serving models: one engine over cost models and scheduling policies, SLOs and one capacity search.

* :func:`serve` (:mod:`workbench.serving.cluster`): a request table on ``n_replicas`` replicas behind a load balancer
  (``balancer``: round-robin, random, or least-outstanding), arrivals compressed by ``rate_scale``; returns a
  :class:`ServeResult` (the per-request table: TTFT, TBT, end-to-end latency, queueing delay; beside it the GPUs, busy
  fraction and early stop). The request validator, the balancer and the table are shared
  (:mod:`workbench.serving._common`).
* :mod:`workbench.serving.engine`: **the one engine**, a replica's compiled event loop (closed-form runs of decode
  iterations, KV accounting, early stop), over any *cost model* and any *scheduling policy*; the only event loop of
  serving (FastSwitch's mechanisms, disaggregated pools and the least-outstanding router run in it).
* :mod:`workbench.serving.cost`: the cost-model protocol (:class:`CostModel`: its one cost table, KV capacity in
  tokens, GPUs per replica, the one swap cost). Two implement it: :class:`Deployment` (:mod:`workbench.serving
  .roofline`: a model on ``tp * pp`` GPUs, per-operator costs from measured kernels, sequential or overlapped) and
  :class:`ServerConfig` (:mod:`workbench.serving.linear`: the abstract linear-cost server, ``base + prefill + decode +
  KV`` terms and a KV budget; :func:`fit_linear` derives one from a Deployment by least squares).
* :mod:`workbench.serving.scheduler`: the policies (:class:`Scheduler`): vLLM, Sarathi-Serve and Orca on a paged KV
  cache, and Orca's reservation of whole contexts (``"reserve"``, the ServerConfig's default); preemption by recompute
  or swap (per block or per block group, sync or async, with or without KV reuse), FCFS or priority order with a
  :class:`~workbench.serving.scheduler.PriorityProcess` of changes. :mod:`workbench.serving.preemption` names
  FastSwitch's mechanisms as such policies.
* :mod:`workbench.serving.metrics`: one definition of each latency statistic (nearest-rank quantiles; TTFT with
  rejected requests infinitely late; TBT per request; every inter-token gap, ITL).
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
from .cost import CostModel, CostTable, swap_seconds
from .engine import PREEMPTIONS, SCHEDULERS, Scheduler, simulate_replica
from .gpus import GpuCapacity, capacity_gpus
from .linear import ServerConfig
from .linear_fit import fit_linear
from .roofline import EFFICIENCY, Deployment, Efficiency
from .scheduler import PriorityProcess

__all__ = [
    "BALANCERS",
    "EFFICIENCY",
    "SCHEDULERS",
    "SLO",
    "CapacityResult",
    "CostModel",
    "CostTable",
    "Deployment",
    "GpuCapacity",
    "Efficiency",
    "PREEMPTIONS",
    "PriorityProcess",
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
    "swap_seconds",
]
