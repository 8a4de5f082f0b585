"""Characterization of ServeGen client pools: the statistics behind the paper's findings, as array functions.

* concentration: the Lorenz curve of requests over clients and the top-k share;
* who drives the aggregate's variation: each client's share of the variance of the aggregate rate across windows
  (``Cov(r_c, A) / Var(A)``, which sums to 1 over clients);
* burstiness: the rate-weighted distribution of per-client inter-arrival CVs and how often each family fits;
* the diurnal profile: mean aggregate rate per hour of day, its peak and trough hours and their ratio;
* length shapes: the request-weighted Kolmogorov-Smirnov distance between each client-window PMF and an exponential
  of the same mean, the drift of the mean length across 6-hour windows, and Sarle's bimodality coefficient.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._contracts import accepts, output
from ..._validate import integer, one_of
from .pool import ClientPool

__all__ = [
    "lorenz_curve",
    "top_share",
    "variance_share",
    "PoolBurstiness",
    "burstiness",
    "diurnal_profile",
    "exponential_ks",
    "window_means",
    "bimodality_coefficient",
]


@accepts()
def lorenz_curve(pool: ClientPool) -> tuple[np.ndarray, np.ndarray]:
    """``(client_fraction, request_fraction)``: clients sorted from busiest, cumulative share of requests.

    Examples
    --------
    >>> from workbench.workloads.servegen import load_pool
    >>> x, y = lorenz_curve(load_pool("m-small"))
    >>> float(x[-1]), round(float(y[-1]), 6)
    (1.0, 1.0)
    """
    req = np.sort(pool.rate_rps.sum(axis=1))[::-1]
    total = req.sum()
    y = np.concatenate([[0.0], np.cumsum(req) / (total if total > 0 else 1.0)])
    x = np.arange(req.size + 1) / req.size
    return x, y


@accepts()
def top_share(pool: ClientPool, k: int = 10) -> float:
    """Share of the pool's requests carried by its ``k`` busiest clients.

    Examples
    --------
    >>> from workbench.workloads.servegen import load_pool
    >>> round(top_share(load_pool("m-small"), 10), 3)
    0.928
    """
    k = integer("k", k, minimum=1)
    _, y = lorenz_curve(pool)
    return float(y[min(k, y.size - 1)])


@accepts()
def variance_share(pool: ClientPool) -> np.ndarray:
    """Each client's share of the variance of the aggregate rate across windows (sums to 1).

    Examples
    --------
    >>> from workbench.workloads.servegen import load_pool
    >>> round(float(variance_share(load_pool("m-small")).sum()), 6)
    1.0
    """
    r = pool.rate_rps
    a = r.sum(axis=0)
    da = a - a.mean()
    var = (da * da).sum()
    if var <= 0:
        return np.zeros(pool.n_clients)
    return ((r - r.mean(axis=1, keepdims=True)) * da).sum(axis=1) / var


@output
@dataclass(frozen=True)
class PoolBurstiness:
    """How bursty a pool's clients are (:func:`burstiness`).

    Attributes
    ----------
    cv_p25, cv_median, cv_p75 : float
        Quartiles of the per-client inter-arrival CV over active client-windows, weighted by rate.
    weibull_fraction, gamma_fraction : float
        Shares of active client-windows whose inter-arrivals are fitted by a Weibull and by a Gamma (0 for both when
        no window is active).
    """

    cv_p25: float
    cv_median: float
    cv_p75: float
    weibull_fraction: float
    gamma_fraction: float


@accepts()
def burstiness(pool: ClientPool) -> PoolBurstiness:
    """Rate-weighted CV quartiles over active client-windows, and the fraction of windows fitted by each family.

    Examples
    --------
    >>> from workbench.workloads.servegen import load_pool
    >>> b = burstiness(load_pool("m-small"))
    >>> b.cv_p25 <= b.cv_median <= b.cv_p75, round(b.weibull_fraction + b.gamma_fraction, 9)
    (True, 1.0)
    """
    q25, q50, q75 = pool.weighted_cv_quantiles([0.25, 0.5, 0.75])
    active = pool.family > 0
    weib = float((pool.family == 2).sum() / max(active.sum(), 1))
    return PoolBurstiness(
        cv_p25=float(q25),
        cv_median=float(q50),
        cv_p75=float(q75),
        weibull_fraction=weib,
        gamma_fraction=1.0 - weib if active.any() else 0.0,
    )


@accepts()
def diurnal_profile(pool: ClientPool) -> pd.Series:
    """Mean aggregate rate (req/s) per hour of day (0-23) over the pool's span; hours with no data are NaN.

    Examples
    --------
    >>> from workbench.workloads.servegen import load_pool
    >>> diurnal_profile(load_pool("m-small")).shape
    (24,)
    """
    hours = ((pool.window_start_s % 86400) // 3600).astype(np.int64)
    agg = pool.aggregate_rate().to_numpy()
    cnt = np.bincount(hours, minlength=24)
    with np.errstate(invalid="ignore", divide="ignore"):
        prof = np.bincount(hours, weights=agg, minlength=24) / cnt
    return pd.Series(prof, index=pd.Index(np.arange(24), name="hour"), name="rate_rps")


def _own_weights(pool: ClientPool) -> np.ndarray:
    """Expected requests behind every PMF of the pool's tables that is some client's own."""
    req = pool._requests_per_length_window()
    n = pool.tables[pool.fields[0]].n
    return np.bincount(pool.length_index[pool.own_lengths], weights=req[pool.own_lengths], minlength=n)


@accepts()
def exponential_ks(pool: ClientPool, field: str) -> float:
    """Request-weighted mean KS distance between each client-window PMF of ``field`` and an exponential of its mean.

    0 means exactly exponential; a distribution with CV far from 1 or a spiky (templated) one is far from it.

    Examples
    --------
    >>> from workbench.workloads.servegen import load_pool
    >>> round(exponential_ks(load_pool("m-small", source="summary"), "input_tokens"), 3)  # with or without the raw data
    0.547
    """
    one_of("field", field, pool.fields)
    t = pool.tables[field]
    mu = t.means()
    which = np.repeat(np.arange(t.n), np.diff(t.offsets))
    with np.errstate(invalid="ignore", divide="ignore"):
        expo = np.where(mu[which] > 0, 1 - np.exp(-t.values / mu[which]), 1.0)
    before = np.concatenate([[0.0], t.cdf[:-1]])
    before[t.offsets[:-1]] = 0.0
    d = np.maximum(np.abs(t.cdf - expo), np.abs(before - expo))
    ks = np.maximum.reduceat(d, t.offsets[:-1])
    w = _own_weights(pool)
    return float((ks * w).sum() / w.sum()) if w.sum() > 0 else float("nan")


@accepts()
def window_means(pool: ClientPool, field: str) -> np.ndarray:
    """Request-weighted mean of ``field`` in each 6 h window (clients' own PMFs only; NaN where none).

    Examples
    --------
    >>> from workbench.workloads.servegen import load_pool
    >>> window_means(load_pool("m-small", source="summary"), "input_tokens")[:2].round(1).tolist()
    [161.8, 224.0]
    """
    one_of("field", field, pool.fields)
    req = pool._requests_per_length_window() * pool.own_lengths
    m = pool.tables[field].means()[pool.length_index]
    with np.errstate(invalid="ignore", divide="ignore"):
        return (m * req).sum(axis=0) / req.sum(axis=0)


@accepts()
def bimodality_coefficient(x: np.ndarray) -> float:
    """Sarle's bimodality coefficient ``(g^2 + 1) / (k + 3 (n-1)^2 / ((n-2)(n-3)))``; > 5/9 suggests bimodality.

    ``g`` is the sample skewness and ``k`` the sample excess kurtosis. The uniform distribution scores exactly 5/9,
    a normal 1/3, a well-separated two-point mixture close to 1.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> bimodality_coefficient(rng.normal(size=10_000)) < 5 / 9 < bimodality_coefficient(
    ...     np.r_[rng.normal(0, 1, 5000), rng.normal(8, 1, 5000)])
    True
    """
    x = np.asarray(x, dtype=float)
    n = x.size
    if n < 4:
        raise ValueError(f"bimodality_coefficient needs at least 4 values, got {n}")
    d = x - x.mean()
    m2 = (d * d).mean()
    if m2 <= 0:
        return float("nan")
    g = (d**3).mean() / m2**1.5 * np.sqrt(n * (n - 1)) / (n - 2)
    k = (d**4).mean() / m2**2 - 3.0
    k = ((n + 1) * k + 6) * (n - 1) / ((n - 2) * (n - 3))
    return float((g * g + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3))))


def rate_timeline(
    arrival_s: np.ndarray, *, bin_s: float = 10.0, duration_s: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(bin_start_s, rate_rps)``: arrivals counted in ``bin_s`` bins."""
    t = np.asarray(arrival_s, dtype=float)
    end = duration_s if duration_s is not None else (t.max() if t.size else bin_s)
    n = max(int(np.ceil(end / bin_s)), 1)
    counts = np.bincount(np.minimum((t // bin_s).astype(np.int64), n - 1), minlength=n) if t.size else np.zeros(n)
    return np.arange(n) * bin_s, counts / bin_s
