"""Characterization of request traces: burstiness, time profiles, token lengths, conversations and failures.

These are the measurements of BurstGPT (Wang et al., KDD 2025), written once and reused by the claims, the notebook,
the widget and the generator's fit:

* **Burstiness.** BurstGPT splits the trace into windows (20 minutes by default) and fits the inter-arrival gaps of
  each window with a Gamma distribution by maximum likelihood; a shape below 1 (CV above 1) is burstier than
  Poisson, and in such windows the Gamma fits much better than the exponential. :func:`window_gamma_fits` does every
  window at once: gaps are grouped with ``bincount`` and every window's shape comes from one vectorized call of
  :func:`workbench.arrivals.gamma_shape_mle` (the estimator :func:`workbench.arrivals.fit_gamma` uses, which tests
  check window by window), and the Kolmogorov-Smirnov distances of
  the Gamma and exponential fits come from one lexsort. BurstGPT timestamps have 1-second resolution, so many gaps
  are zero and the Gamma likelihood is undefined; :func:`dequantize` spreads each arrival uniformly over its
  timestamp's resolution interval (the maximum-entropy reconstruction) before gaps are taken.
* **Time profiles.** Requests and tokens per hour of day and per day of week (:func:`time_profile`), and
  :func:`periodicity`, the share of the variance of hourly counts that the hour of day explains (close to 1 for a
  strongly diurnal service, close to 0 for aperiodic traffic).
* **Token lengths.** Empirical distributions and maximum-likelihood fits of a truncated Zipf law (BurstGPT finds request
  lengths Zipf-like), a lognormal and an exponential, all compared as distributions over the integers with a
  Kolmogorov-Smirnov distance and AIC (:func:`fit_lengths`). :func:`request_response` bins requests by length and
  gives the mean and a quantile band of the response length, plus rank correlation.
* **Conversations and failures.** Turns per session and gaps between turns where the trace has sessions
  (BurstGPT v3), and failure rates by model, log type and hour.

One submodule per heading (:mod:`.burstiness`, :mod:`.profiles`, :mod:`.lengths`, :mod:`.sessions`) and
:func:`summarize` (:mod:`.summary`), a :class:`TraceSummary` record of headline statistics per trace; every public name is importable from
``workbench.workloads.characterize``. Empirical distributions (CDFs, CCDFs) are in :mod:`workbench.distributions`.

Examples
--------
>>> import numpy as np
>>> from workbench import arrivals
>>> t = arrivals.arrival_times(arrivals.Gamma(rate_rps=2.0, shape=0.5), 20_000, seed=1)
>>> fits = window_gamma_fits(t, window_s=1200.0, resolution_s=0.0)
>>> bool(abs(np.nanmedian(fits["shape"]) - 0.5) < 0.05)
True
"""

from .burstiness import dequantize, detect_resolution, rate_series, window_gamma_fits
from .lengths import (
    LengthFit,
    RequestResponse,
    fit_exponential,
    fit_lengths,
    fit_lognormal,
    fit_zipf,
    request_response,
    zipf_cdf,
)
from .profiles import periodicity, time_profile, wall_clock
from .sessions import ConversationStats, conversation_stats, failure_rates
from .summary import TraceSummary, summarize

__all__ = [
    "detect_resolution",
    "dequantize",
    "window_gamma_fits",
    "rate_series",
    "time_profile",
    "periodicity",
    "wall_clock",
    "LengthFit",
    "RequestResponse",
    "fit_zipf",
    "fit_lognormal",
    "fit_exponential",
    "fit_lengths",
    "zipf_cdf",
    "request_response",
    "ConversationStats",
    "conversation_stats",
    "failure_rates",
    "TraceSummary",
    "summarize",
]
