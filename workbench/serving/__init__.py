"""LLM serving capacity models: a continuous-batching server simulation, SLOs and capacity search.

* :mod:`workbench.serving.simulator`: iteration-level continuous batching (cost model of prefill tokens, decode batch
  size and resident KV tokens; KV-cache token budget; FCFS admission), several instances behind a load balancer,
  per-request TTFT, TBT, end-to-end latency and queueing delay.
* :mod:`workbench.serving.capacity`: SLOs and the highest request rate that meets one, by bisection over a rate
  scale, averaged over seeds.
"""

from .capacity import SLO, CapacityResult, capacity_search, meets_slo, summarize_at
from .simulator import ROUTING, ServerConfig, latency_summary, route, simulate, simulate_instance

__all__ = [
    "ROUTING",
    "SLO",
    "CapacityResult",
    "ServerConfig",
    "capacity_search",
    "latency_summary",
    "meets_slo",
    "route",
    "simulate",
    "simulate_instance",
    "summarize_at",
]
