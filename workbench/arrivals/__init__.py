"""Arrival processes and their statistics: the request clock every workload generator reuses.

Submodules follow the headings below (:mod:`.processes`, :mod:`.statistics`, :mod:`.fitting`, :mod:`.queues`); every
public name is importable from ``workbench.arrivals``.

Processes
---------
Renewal processes are described by a mean rate and a coefficient of variation (CV) of the inter-arrival gaps:

* :class:`Poisson` -- exponential gaps, CV 1.
* :class:`Gamma` -- the process LLM-serving benchmarks use. vLLM's convention (``--burstiness``): shape = burstiness,
  scale = 1/(rate x burstiness), so burstiness 1 is Poisson, burstiness < 1 is burstier, and ``inf`` is constant
  spacing; CV = 1/sqrt(burstiness) (:meth:`Gamma.from_burstiness`). Vidur's convention gives the CV directly:
  shape = 1/cv^2 (:meth:`Gamma.from_cv`).
* :class:`Weibull` -- a given rate and CV (the shape is found by solving the Weibull CV equation); ServeGen fits
  Weibull to some clients' windows.
* :class:`Deterministic` -- constant spacing, CV 0.

:func:`arrival_times` draws ``n`` arrivals either as plain i.i.d. gaps or with vLLM's normalization (gaps rescaled so
the last arrival lands exactly at ``n / rate``); :func:`arrivals_until` fills a time span.
:func:`piecewise_arrivals` is the vectorized workhorse for non-stationary workloads: one row per (stream, window) with
its own rate, CV and family, all generated in a handful of array operations. Each window starts the renewal process
in equilibrium (the first gap is a stationary excess: a uniform fraction of a length-biased gap), so window
boundaries leave no artefact. :func:`superpose` merges independent streams.

Statistics
----------
:func:`cv` of gaps and :func:`index_of_dispersion` of counts per window (IDC; for a renewal process it tends to
CV^2 as the window grows, while it is 1 at every window for Poisson); the window counts themselves and the other
empirical distributions live in :mod:`workbench.distributions` (re-exported here: :func:`counts_per_window`,
:func:`density_histogram`).

Fitting
-------
:func:`fit_gamma` is the maximum-likelihood Gamma fit with a likelihood-ratio test and Kolmogorov-Smirnov distances
against the exponential; :func:`gamma_shape_mle` is its vectorized shape estimator.

Queues
------
:func:`lindley_waits` runs the single-server FIFO queue's Lindley recursion ``W[i] = max(0, W[i-1] + S[i-1] - A[i])``
in closed form (a cumulative sum minus its running minimum), so a million customers take milliseconds.
:func:`gim1_wait` is the exact GI/M/1 waiting time for Gamma, Poisson or deterministic arrivals (an independent check
of the simulation), and :func:`kingman_mean_wait` / :func:`kingman_wait_quantile` are Kingman's heavy-traffic
approximation, which burstiness pushes out of its comfort zone.

Examples
--------
>>> from workbench import arrivals
>>> p = arrivals.Gamma.from_burstiness(rate_rps=10.0, burstiness=0.25)
>>> round(p.cv, 3)
2.0
>>> t = arrivals.arrival_times(p, 100_000, seed=1)
>>> round(arrivals.cv(np.diff(t)), 1)
2.0
"""

from ..distributions import counts_per_window, density_histogram
from .fitting import GammaFit, fit_gamma, gamma_shape_mle
from .processes import (  # noqa: F401 (Family is a public type alias)
    MAX_CV,
    Deterministic,
    Family,
    Gamma,
    Poisson,
    Process,
    Weibull,
    arrival_times,
    arrivals_until,
    piecewise_arrivals,
    renewal,
    superpose,
    weibull_shape_from_cv,
)
from .queues import (
    GIM1Wait,
    compare_waits,
    gim1_wait,
    kingman_mean_wait,
    kingman_wait_quantile,
    lindley_waits,
    queue_waits,
)
from .statistics import cv, index_of_dispersion, interarrival_cv

__all__ = [
    "Poisson",
    "Gamma",
    "Weibull",
    "Deterministic",
    "Process",
    "renewal",
    "weibull_shape_from_cv",
    "MAX_CV",
    "arrival_times",
    "arrivals_until",
    "piecewise_arrivals",
    "superpose",
    "cv",
    "interarrival_cv",
    "counts_per_window",
    "index_of_dispersion",
    "GammaFit",
    "fit_gamma",
    "gamma_shape_mle",
    "density_histogram",
    "lindley_waits",
    "queue_waits",
    "GIM1Wait",
    "gim1_wait",
    "kingman_mean_wait",
    "kingman_wait_quantile",
    "compare_waits",
]
