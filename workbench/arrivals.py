"""Arrival processes and their statistics: the request clock every workload generator reuses.

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
:func:`cv` of gaps, :func:`counts_per_window`, :func:`index_of_dispersion` of counts (IDC; for a renewal process
it tends to CV^2 as the window grows, while it is 1 at every window for Poisson), and :func:`fit_gamma`, the
maximum-likelihood Gamma fit with a likelihood-ratio test and Kolmogorov-Smirnov distances against the exponential.

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

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Union

import numpy as np
from scipy import optimize, special, stats

from . import _validate as V
from ._rng import Seed, generator, spawn

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Poisson",
    "Gamma",
    "Weibull",
    "Deterministic",
    "Process",
    "renewal",
    "weibull_shape_from_cv",
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
    "empirical_ccdf",
    "compare_waits",
]

Family = Literal["gamma", "weibull"]
_FAMILIES = ("gamma", "weibull")


# --------------------------------------------------------------------------------------------------------------------
# Processes
# --------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Renewal:
    """What every renewal process here shares: a validated mean rate and the mean gap."""

    rate_rps: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rate_rps", V.positive("rate_rps", self.rate_rps))

    @property
    def mean_s(self) -> float:
        return 1.0 / self.rate_rps


@dataclass(frozen=True)
class Poisson(_Renewal):
    """Poisson arrivals: exponential gaps with mean ``1/rate_rps``.

    Examples
    --------
    >>> Poisson(2.0).interarrivals(3, seed=0).round(3)
    array([0.34, 0.51, 0.01])
    """

    @property
    def cv(self) -> float:
        return 1.0

    def interarrivals(self, n: int, seed: Seed = None) -> np.ndarray:
        """``n`` i.i.d. gaps in seconds."""
        n = V.integer("n", n, minimum=0)
        return generator(seed).exponential(self.mean_s, n)

    def pdf(self, x_s: np.ndarray) -> np.ndarray:
        """Probability density of a gap of ``x_s`` seconds."""
        return stats.expon.pdf(x_s, scale=self.mean_s)


@dataclass(frozen=True)
class Gamma(_Renewal):
    """Gamma-renewal arrivals with mean rate ``rate_rps`` and shape ``shape`` (CV = 1/sqrt(shape)).

    ``shape = inf`` is constant spacing. Build it with :meth:`from_burstiness` (vLLM) or :meth:`from_cv` (Vidur).

    Examples
    --------
    >>> g = Gamma.from_burstiness(4.0, burstiness=0.5)
    >>> g.shape, g.scale_s, round(g.cv, 4)
    (0.5, 0.5, 1.4142)
    >>> Gamma.from_cv(4.0, cv=2.0).shape
    0.25
    """

    shape: float

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "shape", V.positive("shape", self.shape, allow_inf=True))

    @classmethod
    def from_burstiness(cls, rate_rps: float, burstiness: float) -> Gamma:
        """vLLM's convention: shape = burstiness, scale = 1/(rate x burstiness); 1 is Poisson, ``inf`` constant."""
        return cls(rate_rps, V.positive("burstiness", burstiness, allow_inf=True))

    @classmethod
    def from_cv(cls, rate_rps: float, cv: float) -> Gamma:
        """Vidur's convention: shape = 1/cv^2 (``cv = 0`` is constant spacing)."""
        cv = V.nonnegative("cv", cv)
        return cls(rate_rps, math.inf if cv == 0 else 1.0 / cv**2)

    @property
    def burstiness(self) -> float:
        return self.shape

    @property
    def scale_s(self) -> float:
        return 0.0 if math.isinf(self.shape) else 1.0 / (self.rate_rps * self.shape)

    @property
    def cv(self) -> float:
        return 1.0 / math.sqrt(self.shape)

    def interarrivals(self, n: int, seed: Seed = None) -> np.ndarray:
        """``n`` i.i.d. gaps in seconds."""
        n = V.integer("n", n, minimum=0)
        if math.isinf(self.shape):
            return np.full(n, self.mean_s)
        return generator(seed).gamma(self.shape, self.scale_s, n)

    def pdf(self, x_s: np.ndarray) -> np.ndarray:
        """Probability density of a gap of ``x_s`` seconds (not defined for constant spacing)."""
        if math.isinf(self.shape):
            raise ValueError("constant spacing (shape = inf) has no density")
        return stats.gamma.pdf(x_s, self.shape, scale=self.scale_s)


def weibull_shape_from_cv(cv: float | np.ndarray) -> np.ndarray:
    """The Weibull shape ``k`` whose CV is ``cv``: solves ``Gamma(1+2/k)/Gamma(1+1/k)^2 - 1 = cv^2``.

    Vectorized bisection in log k (the CV decreases monotonically in k); ``cv = 1`` gives k = 1 (exponential).
    Valid for 1e-5 <= cv <= 1e4.

    Examples
    --------
    >>> weibull_shape_from_cv([1.0, 0.5]).round(4)
    array([1.    , 2.1013])
    """
    cvs = V.array_1d("cv", cv, low=1e-5)
    if (cvs > 1e4).any():
        raise ValueError(f"cv must be <= 1e4 for a Weibull process, got {cvs.max()}")
    target = np.log(cvs)
    lo = np.full(cvs.shape, math.log(0.02))  # cv(0.02) ~ 3e14
    hi = np.full(cvs.shape, math.log(2e5))  # cv(2e5) ~ 6e-6
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        k = np.exp(mid)
        log_cv = 0.5 * np.log(np.expm1(special.gammaln(1 + 2 / k) - 2 * special.gammaln(1 + 1 / k)))
        too_bursty = log_cv > target  # k too small
        lo = np.where(too_bursty, mid, lo)
        hi = np.where(too_bursty, hi, mid)
    return np.exp(0.5 * (lo + hi))


@dataclass(frozen=True)
class Weibull(_Renewal):
    """Weibull-renewal arrivals with mean rate ``rate_rps`` and gap CV ``cv`` (shape from :func:`weibull_shape_from_cv`).

    Examples
    --------
    >>> w = Weibull(10.0, cv=1.0)
    >>> round(w.shape, 6), round(w.scale_s, 6)
    (1.0, 0.1)
    """

    cv: float

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "cv", V.in_range("cv", self.cv, 1e-5, 1e4))

    @property
    def shape(self) -> float:
        return float(weibull_shape_from_cv(self.cv)[0])

    @property
    def scale_s(self) -> float:
        return self.mean_s / math.exp(special.gammaln(1 + 1 / self.shape))

    def interarrivals(self, n: int, seed: Seed = None) -> np.ndarray:
        """``n`` i.i.d. gaps in seconds."""
        n = V.integer("n", n, minimum=0)
        return self.scale_s * generator(seed).weibull(self.shape, n)

    def pdf(self, x_s: np.ndarray) -> np.ndarray:
        """Probability density of a gap of ``x_s`` seconds."""
        return stats.weibull_min.pdf(x_s, self.shape, scale=self.scale_s)


@dataclass(frozen=True)
class Deterministic(_Renewal):
    """Constant spacing ``1/rate_rps`` (CV 0)."""

    @property
    def cv(self) -> float:
        return 0.0

    def interarrivals(self, n: int, seed: Seed = None) -> np.ndarray:
        """``n`` gaps of exactly ``1/rate_rps`` seconds (``seed`` is accepted and unused)."""
        n = V.integer("n", n, minimum=0)
        return np.full(n, self.mean_s)


Process = Union[Poisson, Gamma, Weibull, Deterministic]


def renewal(rate_rps: float, cv: float, family: Family = "gamma") -> Process:
    """A renewal process with the given mean rate and gap CV: ``cv = 0`` is :class:`Deterministic`; otherwise
    :class:`Gamma` (shape 1/cv^2) or :class:`Weibull`.

    Examples
    --------
    >>> renewal(5.0, 0.5)
    Gamma(rate_rps=5.0, shape=4.0)
    """
    V.one_of("family", family, _FAMILIES)
    cv = V.nonnegative("cv", cv)
    if cv == 0:
        return Deterministic(rate_rps)
    return Gamma.from_cv(rate_rps, cv) if family == "gamma" else Weibull(rate_rps, cv)


def _check_process(process: object) -> Process:
    if not isinstance(process, (Poisson, Gamma, Weibull, Deterministic)):
        raise TypeError(
            f"process must be Poisson, Gamma, Weibull or Deterministic, got {type(process).__name__}"
        )
    return process


def arrival_times(
    process: Process,
    n: int,
    *,
    seed: Seed = None,
    normalize: bool = False,
    start_s: float = 0.0,
) -> np.ndarray:
    """Arrival times (seconds, ascending) of ``n`` requests: ``start_s`` plus the cumulative sum of the gaps.

    With ``normalize=True`` the times are rescaled so that the last arrival is exactly at ``start_s + n / rate``
    (vLLM's benchmark normalization: the sample's realized rate equals the requested one; the CV is unchanged).

    Examples
    --------
    >>> t = arrival_times(Gamma.from_burstiness(2.0, 0.5), 1000, seed=3, normalize=True)
    >>> float(t[-1])
    500.0
    """
    process = _check_process(process)
    n = V.integer("n", n, minimum=1)
    start_s = V.finite("start_s", start_s)
    times = np.cumsum(process.interarrivals(n, seed))
    if normalize:
        times *= (n / process.rate_rps) / times[-1]
    return times + start_s if start_s else times


def arrivals_until(process: Process, duration_s: float, *, seed: Seed = None, start_s: float = 0.0) -> np.ndarray:
    """All arrival times in ``[start_s, start_s + duration_s)``, the process started in equilibrium at ``start_s``.

    Examples
    --------
    >>> t = arrivals_until(Poisson(100.0), 60.0, seed=0)
    >>> bool(5400 < t.size < 6600 and t.max() < 60.0)
    True
    """
    process = _check_process(process)
    duration_s = V.positive("duration_s", duration_s)
    family = "weibull" if isinstance(process, Weibull) else "gamma"
    times, _ = piecewise_arrivals(start_s, duration_s, process.rate_rps, process.cv, family=family, seed=seed)
    return times


def _stationary_excess(shape: np.ndarray, scale: np.ndarray, is_weibull: np.ndarray, u: np.ndarray,
                       rng: np.random.Generator) -> np.ndarray:
    """First gap of a renewal process in equilibrium: a uniform fraction ``u`` of a length-biased gap.

    Length-biased Gamma(k, theta) is Gamma(k + 1, theta); for Weibull(k, lam), (X/lam)^k length-biased is
    Gamma(1 + 1/k), so X = lam * G^(1/k). Constant spacing (shape inf) gives u * mean.
    """
    out = np.empty(shape.size)
    det = np.isinf(shape)
    gam = ~is_weibull & ~det
    wei = is_weibull & ~det
    out[det] = scale[det]  # for constant spacing `scale` holds the gap itself
    if gam.any():
        out[gam] = rng.gamma(shape[gam] + 1.0, scale[gam])
    if wei.any():
        out[wei] = scale[wei] * rng.gamma(1.0 + 1.0 / shape[wei]) ** (1.0 / shape[wei])
    return u * out


def piecewise_arrivals(
    start_s: float | np.ndarray,
    duration_s: float | np.ndarray,
    rate_rps: float | np.ndarray,
    cv: float | np.ndarray,
    *,
    family: Family | np.ndarray = "gamma",
    seed: Seed = None,
    sort: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Arrivals of a piecewise-stationary renewal process, vectorized over rows.

    Each row ``r`` is a window ``[start_s[r], start_s[r] + duration_s[r])`` of one stream with mean rate
    ``rate_rps[r]`` (0 allowed: no arrivals), gap CV ``cv[r]`` (0 = constant spacing) and ``family[r]`` (``"gamma"``
    or ``"weibull"``). Rows are independent: several streams, several windows each, all at once. Inside a window the
    renewal process starts in equilibrium, so a constant-rate process split into windows has the statistics of the
    unsplit one (up to the independence across boundaries).

    Parameters
    ----------
    start_s, duration_s, rate_rps, cv : float or array
        Broadcast to a common length ``R``; ``duration_s > 0``, ``rate_rps >= 0``, ``cv >= 0``, all finite.
    family : str or array of str
        ``"gamma"`` (default) or ``"weibull"``, per row or for all.
    seed : int, Generator or None
    sort : bool
        Sort the output by time (default). Otherwise rows come out one after another, each in time order.

    Returns
    -------
    times_s : ndarray of float
        Arrival times.
    row : ndarray of int64
        The row each arrival came from (index into the broadcast inputs).

    Examples
    --------
    >>> t, row = piecewise_arrivals([0, 600], 600, [1.0, 5.0], [3.0, 1.0], seed=7)
    >>> np.bincount(row).tolist()  # about 600 and 3000
    [665, 3027]
    >>> bool(np.all(np.diff(t) >= 0))
    True
    """
    start, dur, rate, cvs = np.broadcast_arrays(
        V.array_1d("start_s", start_s),
        V.array_1d("duration_s", duration_s, low=0.0, low_inclusive=False),
        V.array_1d("rate_rps", rate_rps, low=0.0),
        V.array_1d("cv", cv, low=0.0, high=1e4),
    )
    R = start.size
    fam = np.asarray(family)
    if fam.ndim == 0:
        V.one_of("family", str(fam), _FAMILIES)
        is_weibull = np.full(R, str(fam) == "weibull")
    else:
        if fam.shape != (R,):
            raise ValueError(f"family must be a string or have one entry per row ({R}), got shape {fam.shape}")
        bad = ~np.isin(fam, _FAMILIES)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"family must be 'gamma' or 'weibull'; row {i} is {fam[i]!r}")
        is_weibull = fam == "weibull"
    rng = generator(seed)

    # Per-row gap distribution: shape and scale (for constant spacing, shape = inf and scale = the gap).
    det = cvs == 0
    is_weibull = is_weibull & ~det
    with np.errstate(divide="ignore"):
        shape = np.where(det, np.inf, 1.0 / np.where(det, 1.0, cvs) ** 2)
    mean = np.divide(1.0, rate, out=np.full(R, np.inf), where=rate > 0)
    if is_weibull.any():
        shape[is_weibull] = weibull_shape_from_cv(cvs[is_weibull])
    with np.errstate(invalid="ignore"):
        scale = np.where(det, mean, mean / shape)
    if is_weibull.any():
        k = shape[is_weibull]
        scale[is_weibull] = mean[is_weibull] / np.exp(special.gammaln(1 + 1 / k))

    active = rate > 0
    expected = np.where(active, rate * dur, 0.0)
    need = np.where(active, np.ceil(expected + 3 * np.sqrt(expected * np.maximum(cvs**2, 1.0)) + 4), 0).astype(np.int64)

    times_parts, row_parts = [], []
    todo = np.flatnonzero(active)
    while todo.size:
        k_draws = need[todo]
        idx = np.repeat(todo, k_draws)
        first = np.zeros(idx.size, dtype=bool)
        offsets = np.concatenate(([0], np.cumsum(k_draws)[:-1]))
        first[offsets] = True
        gaps = np.empty(idx.size)
        s, sc, w = shape[idx], scale[idx], is_weibull[idx]
        d = np.isinf(s)
        g = ~w & ~d
        gaps[d] = sc[d]
        if g.any():
            gaps[g] = rng.gamma(s[g], sc[g])
        if w.any():
            gaps[w] = sc[w] * rng.weibull(s[w])
        gaps[first] = _stationary_excess(shape[todo], scale[todo], is_weibull[todo], rng.random(todo.size), rng)
        total = np.cumsum(gaps)
        base = np.repeat(total[offsets] - gaps[offsets], k_draws)
        within = total - base
        ends = offsets + k_draws - 1
        enough = within[ends] >= dur[todo]
        ok_rows = np.repeat(enough, k_draws)
        keep = ok_rows & (within < dur[idx])
        times_parts.append(start[idx[keep]] + within[keep])
        row_parts.append(idx[keep])
        # Rows whose draws ran out before the window's end are redrawn whole with twice as many gaps.
        todo = todo[~enough]
        need[todo] *= 2
    if times_parts:
        times = np.concatenate(times_parts)
        rows = np.concatenate(row_parts).astype(np.int64)
    else:
        times, rows = np.empty(0), np.empty(0, dtype=np.int64)
    order = np.argsort(times, kind="stable") if sort else np.lexsort((times, rows))
    return times[order], rows[order]


def superpose(*streams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge independent arrival-time arrays into one sorted stream; returns ``(times_s, stream_index)``.

    Examples
    --------
    >>> superpose(np.array([0.0, 2.0]), np.array([1.0]))
    (array([0., 1., 2.]), array([0, 1, 0]))
    """
    if not streams:
        raise ValueError("superpose needs at least one stream")
    arrays = [V.array_1d(f"streams[{i}]", s) for i, s in enumerate(streams)]
    times = np.concatenate(arrays)
    label = np.repeat(np.arange(len(arrays)), [a.size for a in arrays])
    order = np.argsort(times, kind="stable")
    return times[order], label[order]


# --------------------------------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------------------------------


def cv(gaps_s: np.ndarray) -> float:
    """Coefficient of variation (std / mean, sample std with ddof=1) of inter-arrival gaps.

    Examples
    --------
    >>> cv(np.array([1.0, 1.0, 1.0]))
    0.0
    """
    g = V.array_1d("gaps_s", gaps_s, min_size=2, low=0.0)
    mean = g.mean()
    if mean == 0:
        raise ValueError("gaps_s are all zero: the CV is undefined")
    return float(g.std(ddof=1) / mean)


def _sorted_times(name: str, times_s: np.ndarray, min_size: int) -> np.ndarray:
    t = V.array_1d(name, times_s, min_size=min_size)
    d = np.diff(t)
    if (d < 0).any():
        i = int(np.argmax(d < 0)) + 1
        raise ValueError(f"{name} must be non-decreasing; element {i} ({t[i]}) < element {i - 1} ({t[i - 1]})")
    return t


def interarrival_cv(times_s: np.ndarray) -> float:
    """CV of the gaps between consecutive (sorted) arrival times."""
    return cv(np.diff(_sorted_times("times_s", times_s, 3)))


def counts_per_window(
    times_s: np.ndarray, window_s: float, *, start_s: float | None = None, end_s: float | None = None
) -> np.ndarray:
    """Number of arrivals in each complete window of ``window_s`` seconds from ``start_s`` (default: first arrival)
    to ``end_s`` (default: last arrival); a trailing partial window is dropped.

    Examples
    --------
    >>> counts_per_window(np.array([0.1, 0.2, 1.5, 2.5, 2.6, 2.7]), 1.0, start_s=0.0, end_s=3.0).tolist()
    [2, 1, 3]
    """
    t = V.array_1d("times_s", times_s, min_size=1)
    window_s = V.positive("window_s", window_s)
    lo = float(t.min()) if start_s is None else V.finite("start_s", start_s)
    hi = float(t.max()) if end_s is None else V.finite("end_s", end_s)
    n_win = int(math.floor((hi - lo) / window_s + 1e-9))
    if n_win < 1:
        raise ValueError(f"window_s={window_s} is longer than the span {hi - lo} s: no complete window")
    b = np.floor((t - lo) / window_s).astype(np.int64)
    b = b[(b >= 0) & (b < n_win)]
    return np.bincount(b, minlength=n_win)


def index_of_dispersion(
    times_s: np.ndarray, window_s: float | np.ndarray, *, start_s: float | None = None, end_s: float | None = None
) -> float | np.ndarray:
    """Index of dispersion of counts, Var[N(w)] / E[N(w)], over complete windows of ``window_s`` seconds.

    It is 1 for Poisson at every window; for a renewal process it tends to CV^2 as the window grows. ``window_s``
    may be an array (returns an array). At least 2 complete windows are needed.

    Examples
    --------
    >>> t = arrival_times(Poisson(10.0), 200_000, seed=0)
    >>> round(float(index_of_dispersion(t, 10.0)), 1)
    1.0
    """
    windows = V.array_1d("window_s", window_s, min_size=1, low=0.0, low_inclusive=False)
    out = np.empty(windows.size)
    for i, w in enumerate(windows):  # a handful of window sizes; each is one bincount
        counts = counts_per_window(times_s, float(w), start_s=start_s, end_s=end_s)
        if counts.size < 2:
            raise ValueError(f"window_s={w} leaves {counts.size} complete window(s); need at least 2")
        mean = counts.mean()
        out[i] = counts.var(ddof=1) / mean if mean > 0 else np.nan
    return float(out[0]) if np.ndim(window_s) == 0 else out


@dataclass(frozen=True)
class GammaFit:
    """Maximum-likelihood Gamma fit of gaps, with goodness of fit against the exponential (Poisson arrivals).

    ``lr_statistic`` = 2 (loglik - loglik_exponential) is asymptotically chi-square(1) when the gaps are exponential
    (shape 1); ``p_value`` is its tail probability, so a small p-value rejects Poisson in favour of Gamma.
    ``ks_gamma`` and ``ks_exponential`` are Kolmogorov-Smirnov distances of the two fitted models (on at most
    ``ks_max_samples`` evenly strided gaps).
    """

    shape: float
    rate_rps: float
    n: int
    loglik: float
    loglik_exponential: float
    lr_statistic: float
    p_value: float
    ks_gamma: float
    ks_exponential: float

    @property
    def cv(self) -> float:
        """CV of the fitted Gamma, 1/sqrt(shape)."""
        return 1.0 / math.sqrt(self.shape)

    @property
    def scale_s(self) -> float:
        return 1.0 / (self.rate_rps * self.shape)

    @property
    def gamma_preferred(self) -> bool:
        """Gamma fits significantly better than exponential (p < 0.05) and has the smaller KS distance."""
        return self.p_value < 0.05 and self.ks_gamma < self.ks_exponential


def gamma_shape_mle(log_mean_minus_mean_log: np.ndarray) -> np.ndarray:
    """Maximum-likelihood Gamma shape for each entry of ``s = log(mean(x)) - mean(log(x))`` (``s > 0``).

    Solves ``log k - digamma(k) = s`` by Newton steps from Minka's closed-form start, vectorized over entries (one
    entry per window or group of gaps). :func:`fit_gamma` and per-window fits share it.

    Examples
    --------
    >>> gamma_shape_mle(np.array([np.log(2.0) - special.digamma(2.0)])).round(6)
    array([2.])
    """
    s = V.array_1d("log_mean_minus_mean_log", log_mean_minus_mean_log, low=0.0, low_inclusive=False)
    k = (3 - s + np.sqrt((s - 3) ** 2 + 24 * s)) / (12 * s)
    for _ in range(50):  # quadratic convergence: a handful of steps
        f = np.log(k) - special.digamma(k) - s
        fp = 1 / k - special.polygamma(1, k)
        k_new = k - f / fp
        k_new = np.where(k_new <= 0, k / 2, k_new)
        done = np.all(np.abs(k_new - k) <= 1e-12 * k)
        k = k_new
        if done:
            break
    return k


def fit_gamma(gaps_s: np.ndarray, *, ks_max_samples: int = 200_000) -> GammaFit:
    """Maximum-likelihood Gamma fit (shape, rate) of strictly positive gaps.

    Newton iterations on ``log k - digamma(k) = log(mean) - mean(log x)`` from Minka's closed-form start; the mean
    rate is ``k / mean`` (the MLE keeps the sample mean). Gaps of zero (e.g. from 1-second timestamps) are rejected:
    dequantize them first.

    Examples
    --------
    >>> g = Gamma.from_burstiness(1.0, 0.5).interarrivals(200_000, seed=2)
    >>> f = fit_gamma(g)
    >>> round(f.shape, 2), round(f.rate_rps, 2), f.p_value < 1e-6
    (0.5, 1.0, True)
    """
    x = V.array_1d("gaps_s", gaps_s, min_size=2, low=0.0)
    zeros = int(np.count_nonzero(x == 0))
    if zeros:
        raise ValueError(
            f"gaps_s must be strictly positive for a Gamma fit; {zeros} of {x.size} are zero "
            "(quantized timestamps? dequantize them first)"
        )
    V.integer("ks_max_samples", ks_max_samples, minimum=10)
    n = x.size
    mean = float(x.mean())
    mean_log = float(np.log(x).mean())
    s = math.log(mean) - mean_log
    if s <= 1e-12:  # all gaps (nearly) equal: the fit degenerates to constant spacing
        raise ValueError("gaps_s are (nearly) constant: the Gamma shape is unbounded")
    k = float(gamma_shape_mle(np.array([s]))[0])
    rate = k / mean  # the Gamma's rate parameter beta; the mean arrival rate is 1/mean
    loglik = n * (k * math.log(rate) - special.gammaln(k)) + (k - 1) * n * mean_log - rate * n * mean
    loglik_exp = -n * math.log(mean) - n
    lr = max(0.0, 2 * (loglik - loglik_exp))
    p = float(stats.chi2.sf(lr, 1))
    stride = max(1, math.ceil(n / ks_max_samples))
    sub = np.sort(x[::stride])
    m = sub.size
    ecdf_hi = np.arange(1, m + 1) / m
    ecdf_lo = np.arange(0, m) / m
    cdf_g = special.gammainc(k, rate * sub)
    cdf_e = -np.expm1(-sub / mean)
    ks_g = float(max((ecdf_hi - cdf_g).max(), (cdf_g - ecdf_lo).max()))
    ks_e = float(max((ecdf_hi - cdf_e).max(), (cdf_e - ecdf_lo).max()))
    return GammaFit(float(k), 1.0 / mean, n, float(loglik), float(loglik_exp), float(lr), p, ks_g, ks_e)


def density_histogram(values: np.ndarray, *, bins: int = 60, log: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Histogram as a probability density, on log-spaced bins by default; returns ``(edges, density)``.

    Examples
    --------
    >>> edges, dens = density_histogram(np.array([1.0, 2.0, 3.0, 4.0]), bins=3, log=False)
    >>> float((dens * np.diff(edges)).sum())
    1.0
    """
    x = V.array_1d("values", values, min_size=1, low=0.0)
    bins = V.integer("bins", bins, minimum=1)
    positive = x[x > 0]
    if log and positive.size:
        lo, hi = positive.min(), x.max()
        edges = np.geomspace(lo, hi if hi > lo else lo * 10, bins + 1)
    else:
        edges = np.linspace(x.min(), x.max() if x.max() > x.min() else x.min() + 1, bins + 1)
    counts, edges = np.histogram(x, bins=edges)
    density = counts / (x.size * np.diff(edges))
    return edges, density


# --------------------------------------------------------------------------------------------------------------------
# Queues
# --------------------------------------------------------------------------------------------------------------------


def lindley_waits(interarrival_s: np.ndarray, service_s: np.ndarray) -> np.ndarray:
    """Waiting times in a single-server FIFO queue, by the Lindley recursion in closed form.

    ``interarrival_s[i]`` is the gap between customer ``i - 1`` and customer ``i`` (``interarrival_s[0]`` is
    ignored: customer 0 finds the queue empty); ``service_s[i]`` is customer ``i``'s service time. With
    ``X[i] = S[i-1] - A[i]`` and ``U`` their cumulative sum (``U[0] = 0``), the recursion
    ``W[i] = max(0, W[i-1] + X[i])`` has the solution ``W = U - running_min(U)``.

    Examples
    --------
    >>> lindley_waits(np.array([0.0, 1.0, 1.0, 5.0]), np.array([3.0, 3.0, 1.0, 1.0]))
    array([0., 2., 4., 0.])
    """
    a = V.array_1d("interarrival_s", interarrival_s, min_size=1, low=0.0)
    s = V.array_1d("service_s", service_s, min_size=1, low=0.0)
    if a.size != s.size:
        raise ValueError(f"interarrival_s and service_s must have the same length, got {a.size} and {s.size}")
    u = np.empty(a.size)
    u[0] = 0.0
    np.cumsum(s[:-1] - a[1:], out=u[1:])
    return u - np.minimum.accumulate(np.minimum(u, 0.0))


def queue_waits(
    process: Process,
    utilization: float,
    n: int,
    *,
    service: Literal["exponential", "deterministic"] = "exponential",
    seed: Seed = None,
) -> np.ndarray:
    """Waiting times of ``n`` customers arriving by ``process`` at a single server loaded to ``utilization``.

    The mean service time is ``utilization / rate``; service times are exponential (CV 1) or deterministic (CV 0).

    Examples
    --------
    >>> w = queue_waits(Poisson(1.0), 0.5, 200_000, seed=0)   # M/M/1: E[W] = rho / (mu - lambda) = 0.5
    >>> round(float(w.mean()), 1)
    0.5
    """
    process = _check_process(process)
    rho = V.in_range("utilization", utilization, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    n = V.integer("n", n, minimum=1)
    V.one_of("service", service, ("exponential", "deterministic"))
    arrivals_rng, service_rng = spawn(seed, 2)
    mean_service = rho / process.rate_rps
    gaps = process.interarrivals(n, arrivals_rng)
    if service == "exponential":
        svc = service_rng.exponential(mean_service, n)
    else:
        svc = np.full(n, mean_service)
    return lindley_waits(gaps, svc)


@dataclass(frozen=True)
class GIM1Wait:
    """Exact waiting time of a GI/M/1 queue: ``P(W > t) = sigma * exp(-decay_per_s * t)``.

    ``sigma`` is the probability of waiting (the root of ``sigma = A*(mu (1 - sigma))``, with ``A*`` the Laplace
    transform of the inter-arrival distribution); for Poisson arrivals ``sigma`` equals the utilization.
    """

    sigma: float
    decay_per_s: float

    @property
    def mean_s(self) -> float:
        return self.sigma / self.decay_per_s

    def quantile(self, q: float | np.ndarray) -> np.ndarray:
        """Waiting-time quantile(s): 0 below ``1 - sigma``, else ``log(sigma / (1 - q)) / decay``."""
        q = np.asarray(q, dtype=float)
        if ((q < 0) | (q >= 1)).any():
            raise ValueError(f"q must be in [0, 1), got {q}")
        with np.errstate(divide="ignore"):
            return np.maximum(0.0, np.log(self.sigma / (1 - q)) / self.decay_per_s)

    def ccdf(self, t_s: np.ndarray) -> np.ndarray:
        """``P(W > t)`` for ``t >= 0``."""
        return self.sigma * np.exp(-self.decay_per_s * np.asarray(t_s, dtype=float))


def gim1_wait(process: Poisson | Gamma | Deterministic, utilization: float) -> GIM1Wait:
    """Exact FIFO waiting time for Poisson, Gamma or constant-spacing arrivals at an exponential server.

    Examples
    --------
    >>> w = gim1_wait(Poisson(1.0), 0.7)          # M/M/1: sigma = rho, decay = mu - lambda
    >>> round(w.sigma, 6), round(w.decay_per_s, 6)
    (0.7, 0.428571)
    """
    rho = V.in_range("utilization", utilization, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    if not isinstance(process, (Poisson, Gamma, Deterministic)):
        raise TypeError(f"gim1_wait supports Poisson, Gamma or Deterministic arrivals, got {type(process).__name__}")
    lam = process.rate_rps
    mu = lam / rho
    if isinstance(process, Poisson) or (isinstance(process, Gamma) and process.shape == 1.0):
        sigma = rho
    else:
        if isinstance(process, Deterministic) or math.isinf(getattr(process, "shape", math.inf)):
            def lst(s: float) -> float:
                return math.exp(-s / lam)
        else:
            k, theta = process.shape, process.scale_s

            def lst(s: float) -> float:
                return math.exp(-k * math.log1p(s * theta))

        sigma = optimize.brentq(lambda x: lst(mu * (1 - x)) - x, 1e-300, 1 - 1e-15, xtol=1e-15, rtol=1e-14)
    return GIM1Wait(float(sigma), float(mu * (1 - sigma)))


def kingman_mean_wait(utilization: float, ca2: float, cs2: float, mean_service_s: float) -> float:
    """Kingman's approximation of the mean FIFO wait: ``rho/(1-rho) * (ca^2 + cs^2)/2 * E[S]``.

    Examples
    --------
    >>> round(kingman_mean_wait(0.7, 1.0, 1.0, 1.0), 4)     # exact for M/M/1
    2.3333
    """
    rho = V.in_range("utilization", utilization, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    ca2 = V.nonnegative("ca2", ca2)
    cs2 = V.nonnegative("cs2", cs2)
    mean_service_s = V.positive("mean_service_s", mean_service_s)
    return rho / (1 - rho) * (ca2 + cs2) / 2 * mean_service_s


def kingman_wait_quantile(q: float, utilization: float, ca2: float, cs2: float, mean_service_s: float) -> float:
    """Quantile of the FIFO wait under the heavy-traffic approximation: exponential with Kingman's mean.

    Examples
    --------
    >>> round(kingman_wait_quantile(0.99, 0.7, 1.0, 1.0, 1.0), 3)   # 2.333 * ln(100)
    10.745
    """
    q = V.in_range("q", q, 0.0, 1.0, high_inclusive=False)
    return -math.log1p(-q) * kingman_mean_wait(utilization, ca2, cs2, mean_service_s)


def empirical_ccdf(values: np.ndarray, *, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """``(x, P(X > x))`` at ``points`` quantiles spaced log-uniformly in the tail probability (compact for plots).

    Examples
    --------
    >>> x, p = empirical_ccdf(np.arange(1000.0), points=3)
    >>> p.round(3).tolist()
    [0.998, 0.031, 0.001]
    """
    v = np.sort(V.array_1d("values", values, min_size=2))
    points = V.integer("points", points, minimum=2)
    n = v.size
    tail = np.unique(np.geomspace(1.0 / n, 1.0 - 1.0 / n, points))[::-1]
    idx = np.clip(np.ceil((1.0 - tail) * n).astype(np.int64) - 1, 0, n - 1)
    x = v[idx]
    return x, (n - 1 - idx) / n


def compare_waits(
    rate_rps: float,
    burstiness: float,
    utilization: float,
    *,
    n: int = 200_000,
    percentiles: tuple[float, ...] = (50.0, 90.0, 99.0, 99.9),
    seed: Seed = None,
) -> "pd.DataFrame":
    """Waiting-time percentiles (seconds) of Poisson vs vLLM-Gamma arrivals at the same rate and utilization.

    Exponential service with mean ``utilization / rate_rps``. One row per arrival process with the simulated
    percentiles (Lindley recursion over ``n`` customers), the exact GI/M/1 percentiles and Kingman's heavy-traffic
    percentiles.

    Examples
    --------
    >>> df = compare_waits(10.0, 1 / 9, 0.7, n=100_000, seed=0)
    >>> df.index.tolist(), df.columns[:2].tolist()
    (['poisson', 'gamma'], ['sim_p50_s', 'sim_p90_s'])
    """
    import pandas as pd

    rho = V.in_range("utilization", utilization, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    q = V.array_1d("percentiles", percentiles, min_size=1, low=0.0, high=100.0) / 100.0
    if (q >= 1).any():
        raise ValueError("percentiles must be < 100")
    processes = {"poisson": Poisson(rate_rps), "gamma": Gamma.from_burstiness(rate_rps, burstiness)}
    streams = spawn(seed, len(processes))
    mean_service = rho / processes["poisson"].rate_rps
    rows = {}
    for (name, proc), rng in zip(processes.items(), streams):
        waits = queue_waits(proc, rho, n, seed=rng)
        exact = gim1_wait(proc, rho)
        row = {f"sim_p{p:g}_s": v for p, v in zip(q * 100, np.quantile(waits, q))}
        row |= {f"exact_p{p:g}_s": float(v) for p, v in zip(q * 100, exact.quantile(q))}
        row |= {
            f"kingman_p{p:g}_s": kingman_wait_quantile(float(qq), rho, proc.cv**2, 1.0, mean_service)
            for p, qq in zip(q * 100, q)
        }
        row |= {"sim_mean_s": float(waits.mean()), "exact_mean_s": exact.mean_s, "cv": proc.cv}
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")
