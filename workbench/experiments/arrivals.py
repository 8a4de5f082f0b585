"""Arrival-process studies: burstiness, dispersion of counts, and what burstier arrivals cost a single server.

* ``arrivals-queue-wait`` -- one point draws ``customers`` arrivals of ``process`` (Poisson, or a renewal process
  with gap CV ``cv``: Gamma as in vLLM's burstiness convention, or Weibull) at ``rate_rps`` into one FIFO server
  loaded to ``utilization`` (:func:`workbench.arrivals.queue_waits`, the Lindley recursion) and reports the
  simulated mean and tail waits next to Kingman's heavy-traffic mean. ``process`` is a treatment (not seeded): every
  process at a point uses the same streams.
* ``arrivals-gap-cv`` -- the measured CV of Gamma gaps at one vLLM burstiness (theory: ``1/sqrt(burstiness)``).
* ``arrivals-idc`` -- the index of dispersion of counts of one process at windows one decade apart (theory: 1 for
  Poisson, tending to CV^2 for a renewal process).
* ``arrivals-pooled-waits`` -- the waiting-time CCDF and p99 of one process into a FIFO server, pooled over ``runs``
  independent runs.
* ``arrivals-exact-wait`` -- the exact GI/M/1 waiting-time quantile (no simulation) and Kingman's approximation.

The last four are the arrivals reproduction's studies (:mod:`workbench.reproductions.arrivals`). Their draws come
from named streams, ``(job_seed, job_index)`` or ``(job_seed, job_group, run)`` of :func:`workbench._rng.keyed` (the
child ``job_index`` of ``job_seed``), so a study names each of its jobs and keeps its draws; the sweep's seed is not
used.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from .._rng import keyed
from ..arrivals import (
    Gamma,
    Poisson,
    arrival_times,
    gim1_wait,
    index_of_dispersion,
    kingman_mean_wait,
    kingman_wait_quantile,
    queue_waits,
    renewal,
)
from ..arrivals import cv as gap_cv
from ..arrivals.processes import MAX_CV, Process
from ..distributions import ccdf
from ._space import Param, experiment

__all__ = ["arrivals_queue_wait", "arrivals_gap_cv", "arrivals_idc", "arrivals_pooled_waits", "arrivals_exact_wait"]


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


_JOB_KEY = "job_seed, job_group and job_index name the stream"
#: The named random stream of a study's job (:func:`workbench._rng.keyed`): a study keeps its draws by naming them,
#: and the sweep's seed is not used.
_JOB_PARAMS = [
    Param("job_seed", 0, "", low=0, high=2**31 - 1, doc="seed of the study's streams"),
    Param("job_group", 0, "", low=0, high=2**31 - 1, doc="group of the job in its study (" + _JOB_KEY + ")"),
]


@experiment(
    "arrivals-gap-cv",
    small={"burstiness": [0.25, 4.0], "gaps": 10_000},
    params=[
        Param(
            "burstiness",
            1.0,
            "",
            low=0.0,
            low_inclusive=False,
            high=1e6,
            log=True,
            doc="vLLM's --burstiness: the Gamma shape (1 is Poisson)",
        ),
        Param("gaps", 500_000, "", low=2, high=10**8, doc="inter-arrival gaps drawn"),
        *_JOB_PARAMS[:1],
        Param("job_index", 0, "", low=0, high=2**31 - 1, doc="index of the job in its study (" + _JOB_KEY + ")"),
    ],
)
def arrivals_gap_cv(*, burstiness, gaps, job_seed, job_index, seed):
    """Measured CV of ``gaps`` Gamma inter-arrival gaps at vLLM's ``burstiness`` (rate 1/s), from stream
    ``(job_seed, job_index)``; theory is ``1/sqrt(burstiness)``."""
    del seed  # the stream is named by job_seed and job_index
    gamma = Gamma.from_burstiness(1.0, burstiness)
    return {"cv": float(gap_cv(gamma.interarrivals(gaps, keyed(job_seed, job_index)))), "cv_theory": float(gamma.cv)}


def _process(process: Literal["poisson", "gamma", "weibull"], cv_: float, rate_rps: float = 1.0) -> Process:
    """Poisson, or the renewal process of gap CV ``cv_`` of that family, at ``rate_rps``."""
    return Poisson(rate_rps) if process == "poisson" else renewal(rate_rps, cv_, process)


@experiment(
    "arrivals-idc",
    small={"process": ["poisson", "gamma"], "arrivals": 20_000, "decades": 3},
    params=[
        Param("process", "gamma", choices=("poisson", "gamma", "weibull"), doc="arrival process (rate 1/s)"),
        Param("cv", 2.0, "", low=0.0, high=MAX_CV, doc="CV of the gaps (gamma, weibull)"),
        Param("arrivals", 2_000_000, "", low=100, high=10**8, doc="arrivals drawn"),
        Param("first_decade", -1, "", low=-6, high=6, doc="the shortest window is 10^first_decade mean gaps"),
        Param("decades", 5, "", low=1, high=12, doc="windows, one per decade"),
        *_JOB_PARAMS[:1],
        Param("job_index", 0, "", low=0, high=2**31 - 1, doc="index of the job in its study (" + _JOB_KEY + ")"),
    ],
)
def arrivals_idc(*, process, cv, arrivals, first_decade, decades, job_seed, job_index, seed):
    """Index of dispersion of counts of one arrival process at windows of 10^first_decade .. mean gaps (one row per
    window), from stream ``(job_seed, job_index)``; for a renewal process it tends to ``cv_squared`` at long
    windows, and is 1 for Poisson."""
    del seed  # the stream is named by job_seed and job_index
    proc = _process(process, cv)
    windows = 10.0 ** np.arange(first_decade, first_decade + decades)
    times = arrival_times(proc, arrivals, seed=keyed(job_seed, job_index))
    idc = np.asarray(index_of_dispersion(times, windows, start_s=0.0))
    return pd.DataFrame({"window_mean_gaps": windows, "idc": idc, "cv_squared": proc.cv**2})


@experiment(
    "arrivals-pooled-waits",
    small={"process": ["poisson", "gamma"], "customers": 5000, "runs": 2, "points": 20},
    params=[
        Param.fraction("utilization", 0.7, "server utilization (arrival rate x mean service time)"),
        Param("process", "gamma", choices=("poisson", "gamma", "weibull"), doc="arrival process (rate 1/s)"),
        Param("cv", 3.0, "", low=0.0, high=MAX_CV, doc="CV of the gaps (gamma, weibull)"),
        Param("customers", 500_000, "", low=100, high=10**7, doc="arrivals simulated per run"),
        Param("runs", 4, "", low=1, high=1000, doc="independent runs pooled"),
        Param("points", 150, "", low=2, high=10_000, doc="points of the waiting-time CCDF"),
        *_JOB_PARAMS,
    ],
)
def arrivals_pooled_waits(*, utilization, process, cv, customers, runs, points, job_seed, job_group, seed):
    """The waiting-time CCDF (``points`` rows: ``wait_s``, ``ccdf``) and p99 of one FIFO server with exponential
    service fed by ``process`` at rate 1/s, pooled over ``runs`` independent runs; run ``r`` draws from stream
    ``(job_seed, job_group, r)``."""
    del seed  # the streams are named by job_seed, job_group and the run
    proc = _process(process, cv)
    waits = np.concatenate(
        [queue_waits(proc, utilization, customers, seed=keyed(job_seed, job_group, r)) for r in range(runs)]
    )
    x, p = ccdf(waits, points=points)
    return pd.DataFrame({"wait_s": x, "ccdf": p, "p99_wait_s": float(np.quantile(waits, 0.99))})


@experiment(
    "arrivals-exact-wait",
    small={"utilization": [0.5, 0.9]},
    params=[
        Param.fraction("utilization", 0.7, "server utilization (arrival rate x mean service time)"),
        Param("process", "gamma", choices=("poisson", "gamma"), doc="arrival process (rate 1/s)"),
        Param("cv", 3.0, "", low=0.0, high=MAX_CV, doc="CV of the gaps (gamma)"),
        Param(
            "quantile",
            0.99,
            "",
            low=0.0,
            high=1.0,
            low_inclusive=False,
            high_inclusive=False,
            doc="quantile of the waiting time",
        ),
    ],
)
def arrivals_exact_wait(*, utilization, process, cv, quantile, seed):
    """Exact GI/M/1 waiting-time quantile of one FIFO server with exponential service (no simulation), next to
    Kingman's heavy-traffic approximation of it."""
    del seed  # exact: nothing is drawn
    proc = _process(process, cv)
    return {
        "wait_s": float(gim1_wait(proc, utilization).quantile(quantile)),
        "kingman_wait_s": float(kingman_wait_quantile(quantile, utilization, proc.cv**2, 1.0, utilization)),
    }
