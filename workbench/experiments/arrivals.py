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
* ``arrivals-burstiness`` -- the panel's study of one vLLM-style Gamma process (``rate_rps`` and ``burstiness``, gap CV
  ``1/sqrt(burstiness)``): ``customers`` arrivals, their gap density against the model's, the arrivals per ``window_s``
  window, the gap CV, index of dispersion of counts and Gamma fit, and the waiting-time percentiles of one FIFO server
  at ``utilization`` under it and under Poisson arrivals at the same rate (:func:`workbench.arrivals.compare_waits`:
  simulated, exact GI/M/1 and Kingman). Its rows are tidy by ``kind``: one ``summary`` row, one ``gaps`` row per
  histogram bin, one ``counts`` row per window (the first :data:`COUNTS_SHOWN`) and one ``waits`` row per process.

``arrivals-gap-cv`` to ``arrivals-exact-wait`` are the arrivals reproduction's studies
(:mod:`workbench.reproductions.arrivals`). Their draws come from named streams, ``(job_seed, job_index)`` or ``(job_seed, job_group, run)`` of :func:`workbench._rng.keyed` (the
child ``job_index`` of ``job_seed``), so a study names each of its jobs and keeps its draws; the sweep's seed is not
used.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from .. import arrivals as arr
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

__all__ = [
    "arrivals_queue_wait",
    "arrivals_gap_cv",
    "arrivals_idc",
    "arrivals_pooled_waits",
    "arrivals_exact_wait",
    "arrivals_burstiness",
    "COUNTS_SHOWN",
    "MIN_WINDOWS",
]

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
    if 2 * windows[-1] > arrivals:  # the arrivals span about `arrivals` mean gaps (rate 1/s)
        top = first_decade + decades - 1
        most = arrivals_idc.param("arrivals").high
        raise ValueError(
            f"the longest window, 10^{top} mean gaps (first_decade={first_decade} + decades={decades} - 1), needs 2 "
            f"complete windows in the span of arrivals={arrivals:,} (about {arrivals:,} mean gaps): lower decades or "
            "first_decade" + (f", or raise arrivals to {3 * 10**top:,} or more" if 3 * 10**top <= most else "")
        )
    times = arrival_times(proc, arrivals, seed=keyed(job_seed, job_index))
    idc = np.asarray(index_of_dispersion(times, windows, start_s=0.0))
    return pd.DataFrame({"window_mean_gaps": windows, "idc": idc, "cv_squared": proc.cv**2})


#: The most waiting times ``arrivals-pooled-waits`` pools (its CCDF and p99 are of every one of them).
MAX_POOLED_WAITS = 100_000_000


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
    if runs * customers > MAX_POOLED_WAITS:
        raise ValueError(
            f"runs x customers = {runs:,} x {customers:,} = {runs * customers:.3g} waits to pool; at most "
            f"{MAX_POOLED_WAITS:,} are held (800 MB): lower runs or customers"
        )
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
    # the index over every complete window (counted sparsely where there are too many to hold), the first windows shown
    idc = arr.index_of_dispersion(times, window_s, start_s=0.0)
    shown = arr.counts_per_window(times, window_s, start_s=0.0, end_s=min(COUNTS_SHOWN * window_s, float(times[-1])))
    fit = arr.fit_gamma(positive)
    waits = arr.compare_waits(rate_rps, burstiness, utilization, n=customers, seed=seed)
    summary = {
        "gap_cv": float(arr.cv(gaps)),
        "cv_theory": float(process.cv),
        "idc": float(idc),
        "gamma_shape": float(fit.shape),
        "gamma_p_value": float(fit.p_value),
    }
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
