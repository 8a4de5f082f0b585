"""Queueing wait vs load x arrival process: how much burstier arrivals cost a single server.

One point draws ``customers`` arrivals of ``process`` (Poisson, or a renewal process with gap CV ``cv``: Gamma as in
vLLM's burstiness convention, or Weibull) at ``rate_rps`` into one FIFO server loaded to ``utilization``
(:func:`workbench.arrivals.queue_waits`, the Lindley recursion) and reports the simulated mean and tail waits next to
Kingman's heavy-traffic mean. ``process`` is a treatment (not seeded): every process at a point uses the same
streams.

``arrivals-burstiness`` is the study of one vLLM-style Gamma process (``rate_rps`` and ``burstiness``, gap CV
``1/sqrt(burstiness)``): ``customers`` arrivals, their gap density against the model's, the arrivals per ``window_s``
window, the gap CV, index of dispersion of counts and Gamma fit, and the waiting-time percentiles of one FIFO server
at ``utilization`` under it and under Poisson arrivals at the same rate (:func:`workbench.arrivals.compare_waits`:
simulated, exact GI/M/1 and Kingman). Its rows are tidy by ``kind``: one ``summary`` row, one ``gaps`` row per
histogram bin, one ``counts`` row per window (the first :data:`COUNTS_SHOWN`) and one ``waits`` row per process.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import arrivals as arr
from ..arrivals import Poisson, kingman_mean_wait, queue_waits, renewal
from ..arrivals.processes import MAX_CV
from ._space import Param, experiment

__all__ = ["arrivals_queue_wait", "arrivals_burstiness", "COUNTS_SHOWN", "MIN_WINDOWS"]

#: Windows of counts an ``arrivals-burstiness`` point returns (the first ones: a figure's worth).
COUNTS_SHOWN = 200
#: Fewest complete windows the sample must hold for its counts (and their index of dispersion) to mean anything.
MIN_WINDOWS = 4


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


@experiment(
    "arrivals-burstiness",
    version="1",
    small={"burstiness": [0.25, 4.0], "customers": 5000, "window_s": 1.0},
    params=[
        Param("rate_rps", 10.0, "rps", low=0.1, high=1000.0, log=True, label="rate", doc="arrival rate"),
        Param(
            "burstiness",
            0.25,
            "",
            low=0.02,
            high=50.0,
            log=True,
            doc="vLLM's burstiness: the Gamma shape (1 is Poisson; below 1 burstier, gap CV 1/sqrt(burstiness))",
        ),
        Param(
            "window_s",
            10.0,
            "s",
            low=0.01,
            high=1000.0,
            log=True,
            label="window",
            doc=f"window of the counts (at most 1/{MIN_WINDOWS} of the sample's span, customers / rate)",
        ),
        Param.fraction("utilization", 0.7, "server utilization (arrival rate x mean service time)"),
        Param(
            "customers",
            100_000,
            "",
            low=1000,
            high=10**7,
            doc="arrivals drawn (100,000: stable percentiles in about 50 ms)",
        ),
    ],
)
def arrivals_burstiness(*, rate_rps, burstiness, window_s, utilization, customers, seed):
    """Gaps, counts and waits of one Gamma arrival process (vLLM's burstiness) against Poisson at the same rate."""
    span_s = customers / rate_rps
    if window_s > span_s / MIN_WINDOWS:
        raise ValueError(
            f"window_s={window_s:g} s leaves fewer than {MIN_WINDOWS} windows in {customers:,} arrivals at "
            f"{rate_rps:g} req/s ({span_s:,.4g} s): at most {span_s / MIN_WINDOWS:,.4g} s"
        )
    process = arr.Gamma.from_burstiness(rate_rps, burstiness)
    times = arr.arrival_times(process, customers, seed=seed)
    gaps = np.diff(times, prepend=0.0)
    positive = gaps[gaps > 0]
    edges, density = arr.density_histogram(positive, bins=60)
    x = np.sqrt(edges[:-1] * edges[1:])
    counts = arr.counts_per_window(times, window_s, start_s=0.0)
    idc = counts.var(ddof=1) / counts.mean() if counts.size > 1 and counts.mean() > 0 else float("nan")
    fit = arr.fit_gamma(positive)
    waits = arr.compare_waits(rate_rps, burstiness, utilization, n=customers, seed=seed)
    summary = {
        "gap_cv": float(arr.cv(gaps)),
        "cv_theory": float(process.cv),
        "idc": float(idc),
        "gamma_shape": float(fit.shape),
        "gamma_p_value": float(fit.p_value),
    }
    shown = counts[:COUNTS_SHOWN]
    return pd.concat(
        [
            pd.DataFrame([{"kind": "summary", **summary}]),
            pd.DataFrame(
                {
                    "kind": "gaps",
                    "edge_low_s": edges[:-1],
                    "edge_high_s": edges[1:],
                    "density": density,
                    "model_density": process.pdf(x) if np.isfinite(process.shape) else np.nan,
                }
            ),
            pd.DataFrame({"kind": "counts", "window_start_s": np.arange(shown.size) * window_s, "count": shown}),
            waits.rename_axis("process").reset_index().assign(kind="waits"),
        ],
        ignore_index=True,
    )
