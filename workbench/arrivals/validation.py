"""The simulated FIFO queue against queueing theory: the Lindley recursion the panels run vs the exact GI/M/1 wait.

What the arrivals panels and the ``arrivals-queue-wait`` experiment show is a simulation: ``customers`` arrivals of
a process into one FIFO server (:func:`~workbench.arrivals.queues.queue_waits`). Its independent check is theory, not
a measurement: for Poisson, Gamma and constant-spacing arrivals at an exponential server the waiting time is known
exactly (GI/M/1, :func:`~workbench.arrivals.queues.gim1_wait`: ``P(W > t) = sigma exp(-mu (1 - sigma) t)``, e.g.
Kleinrock, *Queueing Systems* Vol. 1, 1975, section 6.4; M/M/1 is its Poisson case). The error of a point is the
simulation's finite-sample error at the size a panel runs: it grows with utilization and with the burstiness of the
gaps (the queue's relaxation time grows as ``(ca^2 + cs^2) / (1 - rho)^2``). Weibull arrivals and deterministic
service have no exact form here (Kingman's heavy-traffic formula is an approximation, not a reference): they lie
outside the validated envelope.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._contracts import Int, accepts
from .._rng import keyed
from .._validate import integer
from .processes import Deterministic, Gamma, Poisson
from .queues import gim1_wait, queue_waits

__all__ = ["CVS", "UTILIZATIONS", "CITATION", "validation_points"]

#: The gap CVs of the Gamma arrivals checked (1/sqrt(burstiness): 3 is vLLM's burstiness 1/9).
CVS = (0.5, 2.0, 3.0)
#: The utilizations checked.
UTILIZATIONS = (0.5, 0.7, 0.9)
#: Where the exact form is stated.
CITATION = "GI/M/1 waiting time, Kleinrock, Queueing Systems Vol. 1 (1975), section 6.4; M/M/1 its Poisson case"
_RATE_RPS = 10.0


@accepts(customers=Int(ge=1000, le=10**8))
def validation_points(customers: int = 100_000, seed: int = 0) -> pd.DataFrame:
    """The simulated mean and p99 wait against the exact GI/M/1 values, one row per (process, utilization, metric).

    ``customers`` per simulated point (the experiment's default, 100,000, is what a panel runs); each point's stream
    is ``keyed(seed, process, cv, utilization)``.

    Returns
    -------
    DataFrame
        ``source`` (``"GI/M/1 exact"``), ``metric`` (``mean_wait_s``, ``p99_wait_s``), ``reference`` (exact),
        ``model`` (simulated), ``error`` (``model / reference - 1``), the envelope ``process, cv, utilization,
        service, customers`` and ``citation``.

    Examples
    --------
    >>> p = validation_points(customers=20_000)
    >>> sorted(p.process.unique()), len(p)
    (['deterministic', 'gamma', 'poisson'], 30)
    """
    n = integer("customers", customers, minimum=1000)
    seed = integer("seed", seed, minimum=0)
    cases: list[tuple[str, float]] = [("poisson", 1.0), ("deterministic", 0.0)] + [("gamma", cv) for cv in CVS]
    rows = []
    for process, cv in cases:
        for rho in UTILIZATIONS:
            if process == "poisson":
                proc: Poisson | Gamma | Deterministic = Poisson(_RATE_RPS)
            elif process == "deterministic":
                proc = Deterministic(_RATE_RPS)
            else:
                proc = Gamma.from_cv(_RATE_RPS, cv)
            waits = queue_waits(proc, rho, n, seed=keyed(seed, process, int(round(cv * 100)), int(round(rho * 100))))
            exact = gim1_wait(proc, rho)
            for metric, model, ref in (
                ("mean_wait_s", float(waits.mean()), exact.mean_s),
                ("p99_wait_s", float(np.quantile(waits, 0.99)), float(exact.quantile(0.99))),
            ):
                rows.append((metric, ref, model, process, cv, rho))
    out = pd.DataFrame(rows, columns=["metric", "reference", "model", "process", "cv", "utilization"])
    out.insert(0, "source", "GI/M/1 exact")
    out.insert(4, "error", out.model / out.reference - 1.0)
    out["service"] = "exponential"
    out["customers"] = n
    out["citation"] = CITATION
    return out
