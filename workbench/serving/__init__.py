"""LLM serving models: one simulation entry point over two replica models, SLOs and one capacity search.

* :func:`serve` (:mod:`workbench.serving.cluster`): a request table on ``n_replicas`` replicas behind a load balancer
  (``balancer``: round-robin, random, or least-outstanding on hardware replicas), arrivals compressed by
  ``rate_scale``; returns a :class:`ServeResult` (the per-request table: TTFT, TBT, end-to-end latency, queueing
  delay; beside it the GPUs, busy fraction and early stop). The replica is either model below; the request
  validator, the balancer and the table are shared (:mod:`workbench.serving._common`).
* :mod:`workbench.serving.engine`: a replica on real hardware (a :class:`Deployment`): paged KV cache growing token by
  token with preemption by recompute or swap, prefix sharing over ``hash_ids``, and the vLLM, Sarathi-Serve and Orca
  schedulers.
* :mod:`workbench.serving.linear`: the linear-cost server (a :class:`ServerConfig`): a linear iteration cost (prefill
  tokens, decode batch, resident KV tokens), a KV-cache token budget in which each request reserves its full context
  on admission (an oracle of its output length), FCFS admission mixing prefills with decodes.
* :mod:`workbench.serving.capacity`: SLOs (a TTFT and optionally a TBT quantile) and the capacity search: the largest
  rate scale a server meets an SLO at, by bracketing and bisection (:func:`max_rate_scale`), in req/s averaged over
  seeds (:func:`capacity_search`).
* :mod:`workbench.serving.specs`: GPU and model specification tables (a source per row; user rows by dict or CSV).
* :mod:`workbench.serving.roofline`: a replica (model, GPU, tensor parallelism) and its per-operator roofline
  iteration cost, sequential or overlapped (NanoFlow), tensor- and pipeline-parallel; the linear model derived from
  it by least squares.
* :mod:`workbench.serving.disagg`: prefill/decode disaggregation (separate pools, KV transfer over the network) and
  the fewest prefill and decode replicas meeting an SLO.
* :mod:`workbench.serving.servegen_gpus`: ServeGen's under-provisioning use case sized in GPUs.
* :mod:`workbench.serving.validation`: the models against published measurements (model, published, error).
* :mod:`workbench.serving.gpus`: capacity in GPUs (the cheapest TP degree and replica count meeting an SLO, with the
  same search), and NanoFlow's optimal-throughput bound with the resource that binds.
"""

from ._common import BALANCERS, ReplicaRun, ServeResult, balance, latency_summary
from .capacity import SLO, CapacityResult, ScaleSearch, capacity_search, max_rate_scale, meets_slo, server_for
from .cluster import serve
from .engine import PREEMPTIONS, SCHEDULERS, Scheduler, simulate_replica
from .linear import ServerConfig
from .linear_fit import fit_linear
from .roofline import EFFICIENCY, Deployment, Efficiency

__all__ = [
    "BALANCERS",
    "EFFICIENCY",
    "SCHEDULERS",
    "SLO",
    "CapacityResult",
    "Deployment",
    "Efficiency",
    "PREEMPTIONS",
    "ReplicaRun",
    "ScaleSearch",
    "Scheduler",
    "ServeResult",
    "ServerConfig",
    "balance",
    "capacity_search",
    "fit_linear",
    "latency_summary",
    "max_rate_scale",
    "meets_slo",
    "serve",
    "server_for",
    "simulate_replica",
]
