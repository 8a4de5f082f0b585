"""Queueing wait vs load x arrival process: how much burstier arrivals cost a single server.

One point draws ``customers`` arrivals of ``process`` (Poisson, or a renewal process with gap CV ``cv``: Gamma as in
vLLM's burstiness convention, or Weibull) at ``rate_rps`` into one FIFO server loaded to ``utilization``
(:func:`workbench.arrivals.queue_waits`, the Lindley recursion) and reports the simulated mean and tail waits next to
Kingman's heavy-traffic mean. ``process`` is a treatment (not seeded): every process at a point uses the same
streams.
"""

from __future__ import annotations

import numpy as np

from ..arrivals import Poisson, kingman_mean_wait, queue_waits, renewal
from ..arrivals.processes import MAX_CV
from ._space import Param, experiment

__all__ = ["arrivals_queue_wait"]


@experiment(
    "arrivals-queue-wait",
    version="1",
    small={"utilization": 0.8, "process": ["poisson", "gamma"], "customers": 5000},
    params=[
        Param.fraction("utilization", 0.7, "server utilization (arrival rate x mean service time)"),
        Param("process", "gamma", choices=("poisson", "gamma", "weibull"), seeded=False, doc="arrival process"),
        Param("cv", 3.0, "", low=0.0, high=MAX_CV, doc="CV of the gaps (gamma, weibull; 3 is vLLM burstiness 1/9)"),
        Param("rate_rps", 10.0, "rps", low=0.0, low_inclusive=False, doc="arrival rate"),
        Param("service", "exponential", choices=("exponential", "deterministic"), doc="service-time distribution"),
        Param("customers", 100_000, "", low=100, high=10**7, doc="arrivals simulated"),
    ],
)
def arrivals_queue_wait(*, utilization, process, cv, rate_rps, service, customers, seed):
    """Mean and tail waiting time of one FIFO server fed by ``process`` at ``utilization``."""
    proc = Poisson(rate_rps) if process == "poisson" else renewal(rate_rps, cv, process)
    waits = queue_waits(proc, utilization, customers, service=service, seed=seed)
    p50, p99 = np.quantile(waits, [0.5, 0.99])
    cs2 = 1.0 if service == "exponential" else 0.0
    return {
        "mean_wait_s": float(waits.mean()),
        "p50_wait_s": float(p50),
        "p99_wait_s": float(p99),
        "kingman_mean_wait_s": float(kingman_mean_wait(utilization, proc.cv**2, cs2, utilization / rate_rps)),
    }
