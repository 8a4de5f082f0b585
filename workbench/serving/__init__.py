"""LLM serving models: simulated servers (abstract and hardware-grounded), SLOs and capacity searches.

* :mod:`workbench.serving.simulator`: the abstract continuous-batching server. A linear iteration cost (prefill
  tokens, decode batch, resident KV tokens), a KV-cache token budget in which each request reserves its full context
  on admission (an oracle of its output length), FCFS admission mixing prefills with decodes, and instances behind a
  load balancer (``balancer``: round-robin or random; least-outstanding on the hardware replicas). Per-request TTFT,
  TBT, end-to-end latency and queueing delay.
* :mod:`workbench.serving.capacity`: SLOs (a TTFT and optionally a TBT quantile) and the highest request rate that
  meets one on the abstract server, by bisection over a rate scale, averaged over seeds.
* :mod:`workbench.serving.specs`: GPU and model specification tables (a source per row; user rows by dict or CSV).
* :mod:`workbench.serving.roofline`: a replica (model, GPU, tensor parallelism) and its per-operator roofline
  iteration cost, sequential or overlapped (NanoFlow), tensor- and pipeline-parallel; the linear model derived from
  it by least squares.
* :mod:`workbench.serving.engine`: a replica on real hardware: paged KV cache growing token by token with preemption
  by recompute or swap, prefix sharing over ``hash_ids``, and the vLLM, Sarathi-Serve and Orca schedulers.
* :mod:`workbench.serving.cluster`: :func:`serve`, replicas behind a balancer (round-robin, random,
  least-outstanding requests).
* :mod:`workbench.serving.disagg`: prefill/decode disaggregation (separate pools, KV transfer over the network) and
  the fewest prefill and decode replicas meeting an SLO.
* :mod:`workbench.serving.servegen_gpus`: ServeGen's under-provisioning use case sized in GPUs.
* :mod:`workbench.serving.validation`: the models against published measurements (model, published, error).
* :mod:`workbench.serving.gpus`: capacity in GPUs (the cheapest TP degree and replica count meeting an SLO), and
  NanoFlow's optimal-throughput bound with the resource that binds.
"""

from .capacity import SLO, CapacityResult, capacity_search, meets_slo, server_for, summarize_at
from .cluster import serve
from .engine import PREEMPTIONS, SCHEDULERS, ReplicaRun, Scheduler, simulate_replica
from .linear_fit import fit_linear
from .roofline import EFFICIENCY, Deployment, Efficiency
from .simulator import BALANCERS, InstanceRun, ServerConfig, balance, latency_summary, simulate, simulate_instance

__all__ = [
    "BALANCERS",
    "EFFICIENCY",
    "SCHEDULERS",
    "SLO",
    "CapacityResult",
    "Deployment",
    "Efficiency",
    "InstanceRun",
    "PREEMPTIONS",
    "ReplicaRun",
    "Scheduler",
    "ServerConfig",
    "balance",
    "capacity_search",
    "fit_linear",
    "latency_summary",
    "meets_slo",
    "serve",
    "server_for",
    "simulate",
    "simulate_instance",
    "simulate_replica",
    "summarize_at",
]
