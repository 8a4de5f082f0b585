"""Balls into bins, exactly: the maximum load when ``m`` flows are hashed uniformly onto ``n`` paths.

ECMP hashes each flow to one of ``n`` equal paths independently and uniformly, so the number of flows on the busiest
path is the maximum bin load of ``m`` balls thrown into ``n`` bins. Its distribution is known in closed form through
Poissonization: if ``X_1..X_n`` are iid Poisson(``lambda = m/n``) then, conditioned on ``sum X_i = m``, they are the
bin loads, so

    P(max <= k) = P(X <= k)^n * P(Y_1 + ... + Y_n = m) / P(Poisson(m) = m),

where ``Y_i`` are iid Poisson(``lambda``) truncated to ``0..k``. The n-fold convolution is evaluated at the single
point ``m`` with an FFT of length at least ``n*k + 1`` (the whole support of the sum, so there is no aliasing), for
every ``k`` at once; everything else is in log space. ``E[max] = sum_k (1 - P(max <= k))``. This is exact up to
floating point (checked against exact rational arithmetic in the tests), not a simulation; :func:`simulate_max_load`
is the Monte-Carlo counterpart. Known values: 16 flows on 16 paths 3.078, 8 on 8 2.597, 64 on 16 7.880 (Addanki et
al.).

Size. The FFT's work grows like ``n * K^2`` (``K`` the largest likely load). Beyond ``2**24`` FFT points (about
``m = n = 10**4``) the conditioning probability ``P(Y_1 + ... + Y_n = m)`` is taken from the local central limit
theorem instead, in ``O(K)`` work, with a relative error of order ``1/n`` (see :func:`max_load_cdf`); so
``expected_max_load(10**6, 10**6)`` takes milliseconds.

``groups`` generalizes to the maximum over ``G`` independent such experiments (e.g. the uplinks of ``G`` leaves):
``P(max <= k)^G``.

Examples
--------
>>> from workbench.fabric import expected_max_load
>>> round(expected_max_load(16, 16), 3)
3.078
"""

from __future__ import annotations

import math

import numpy as np

from .._contracts import accepts
from .._rng import Seed, generator
from .._validate import integer, one_of

__all__ = [
    "max_load_cdf",
    "max_load_pmf",
    "expected_max_load",
    "expected_effective_bandwidth",
    "simulate_max_load",
]

_TAIL = 1e-18  # n * P(Bin(m, 1/n) > k) below this: P(max <= k) == 1 to double precision
_AUTO_EXACT_POINTS = 2**24  # "auto": exact FFT up to this many points in all (a few seconds), normal beyond
_EXACT_MAX_POINTS = 2**27  # "exact" refuses more (minutes of CPU)
_CHUNK_POINTS = 2**22  # FFT rows per chunk: about 100 MB of working arrays
#: The most balls :func:`simulate_max_load` draws in all (``m x groups x samples``): about 10 s at 2e8 balls/s.
MAX_SIMULATED_BALLS = 2_000_000_000


def _check(m: int, n: int, groups: int = 1) -> tuple[int, int, int]:
    m = integer("m", m, minimum=0)
    n = integer("n", n, minimum=1)
    groups = integer("groups", groups, minimum=1)
    return m, n, groups


def _k_range(m: int, n: int) -> tuple[int, int]:
    from scipy import stats  # lazy: scipy.stats costs seconds at import, and most users of fabric never call this

    lo = -(-m // n)  # below ceil(m/n) the maximum cannot fit
    hi = lo
    p = 1.0 / n
    # union bound on the upper tail; search upward (the tail falls super-exponentially)
    while hi < m and n * stats.binom.sf(hi, m, p) > _TAIL:
        hi += 1 if hi - lo < 64 else max(1, (hi - lo) // 8)
    return lo, min(hi, m)


@accepts()
def max_load_cdf(m: int, n: int, method: str = "auto") -> np.ndarray:
    """``P(max load <= k)`` for ``k = 0..K`` where ``P(max <= K) == 1`` to double precision.

    Parameters
    ----------
    m : int
        Number of balls (flows), >= 0.
    n : int
        Number of bins (paths), >= 1.
    method : {"auto", "exact", "normal"}
        ``"exact"``: the FFT convolution of the module docstring; its work is ``(K - ceil(m/n) + 1) * n * K`` FFT
        points, and it refuses more than ``2**27`` of them (``ValueError``: minutes of CPU). ``"normal"``: the
        conditioning probability ``P(Y_1 + ... + Y_n = m)`` by the local central limit theorem (the normal density
        at ``m`` with the truncated Poisson's mean and variance), ``O(K)`` work; the relative error of ``E[max]``
        falls like ``1/n`` (measured against the exact form: 3e-4 at ``n = 10**3``, 3e-5 at ``10**4``, 1e-5 at
        ``3 * 10**4``). ``"auto"`` (default) is exact up to ``2**24`` FFT points (a few seconds; e.g.
        ``m = n = 10**4`` or ``m = 10**5, n = 10**2``) and normal beyond.

    Returns
    -------
    numpy.ndarray
        ``cdf[k] = P(max <= k)``; non-decreasing, last element 1.

    Examples
    --------
    >>> max_load_cdf(2, 2).round(3).tolist()   # two flows on two paths collide with probability 1/2
    [0.0, 0.5, 1.0]
    """
    from scipy import special, stats

    m, n, _ = _check(m, n)
    one_of("method", method, ("auto", "exact", "normal"))
    if m == 0:
        return np.ones(1)
    if n == 1:
        out = np.zeros(m + 1)
        out[m] = 1.0
        return out
    lo, hi = _k_range(m, n)
    ks = np.arange(lo, hi + 1)
    lam = m / n
    log_cdf_k = np.log1p(-stats.poisson.sf(ks, lam))  # log P(X <= k)
    work = ks.size * (n * hi + 1)
    if method == "exact" and work > _EXACT_MAX_POINTS:
        raise ValueError(
            f"max_load_cdf(m={m}, n={n}, method='exact') needs {work:.3g} FFT points, more than "
            f"{_EXACT_MAX_POINTS:.3g}; use method='normal' or 'auto'"
        )
    if method == "normal" or (method == "auto" and work > _AUTO_EXACT_POINTS):
        log_sum = _log_sum_at_m_normal(m, n, ks, log_cdf_k)
    else:
        log_sum = _log_sum_at_m_fft(m, n, ks, hi, log_cdf_k)
    log_pm = m * math.log(m) - m - special.gammaln(m + 1)  # log P(Poisson(m) = m)
    p = np.minimum(np.exp(n * log_cdf_k + log_sum - log_pm), 1.0)
    p = np.maximum.accumulate(p)  # remove round-off wiggles in the (monotone) cdf
    p[ks >= m] = 1.0
    out = np.zeros(hi + 1)
    out[lo:] = p
    out[-1] = 1.0
    return out


def _log_sum_at_m_fft(m: int, n: int, ks: np.ndarray, hi: int, log_cdf_k: np.ndarray) -> np.ndarray:
    """``log P(Y_1 + ... + Y_n = m)`` per ``k`` by an FFT of the truncated Poisson pmf (rows in chunks of bounded
    memory)."""
    from scipy import special
    from scipy.fft import next_fast_len

    lam = m / n
    j = np.arange(hi + 1)
    log_pois = j * math.log(lam) - lam - special.gammaln(j + 1)
    size = next_fast_len(n * hi + 1, real=True)  # >= the support of the n-fold sum: no aliasing at m
    conv_at_m = np.empty(ks.size)
    step = max(1, _CHUNK_POINTS // size)
    for a in range(0, ks.size, step):
        kk, lc = ks[a : a + step], log_cdf_k[a : a + step]
        # truncated Poisson pmfs, one row per k (zero beyond k), normalized
        rows = np.where(j[None, :] <= kk[:, None], np.exp(log_pois[None, :] - lc[:, None]), 0.0)
        phi = np.fft.rfft(rows, n=size, axis=1)
        conv_at_m[a : a + step] = np.fft.irfft(phi**n, n=size, axis=1)[:, m]
    with np.errstate(divide="ignore"):
        return np.log(np.clip(conv_at_m, 0.0, None))


def _log_sum_at_m_normal(m: int, n: int, ks: np.ndarray, log_cdf_k: np.ndarray) -> np.ndarray:
    """``log P(Y_1 + ... + Y_n = m)`` per ``k`` by the local central limit theorem (normal density at ``m``)."""
    from scipy import stats

    lam = m / n
    c0 = np.exp(log_cdf_k)
    mean = lam * stats.poisson.cdf(ks - 1, lam) / c0
    var = lam**2 * stats.poisson.cdf(ks - 2, lam) / c0 + mean - mean**2
    var = np.maximum(var, np.finfo(float).tiny)
    return -((m - n * mean) ** 2) / (2 * n * var) - 0.5 * np.log(2 * np.pi * n * var)


@accepts()
def max_load_pmf(m: int, n: int) -> np.ndarray:
    """``P(max load == k)`` for ``k = 0..K`` (see :func:`max_load_cdf`).

    Examples
    --------
    >>> max_load_pmf(2, 2).round(12).tolist()
    [0.0, 0.5, 0.5]
    """
    cdf = max_load_cdf(m, n)
    return np.diff(cdf, prepend=0.0)


@accepts()
def expected_max_load(m: int, n: int, groups: int = 1, method: str = "auto") -> float:
    """Expected maximum load of ``m`` balls thrown uniformly into ``n`` bins: exact, or for large ``n`` by the
    local central limit theorem (``method``, see :func:`max_load_cdf`: exact up to about ``m = n = 10**4``).

    Parameters
    ----------
    m : int
        Balls (flows), 0 <= m.
    n : int
        Bins (paths), n >= 1.
    groups : int
        Take the maximum over this many independent experiments (default 1).
    method : {"auto", "exact", "normal"}
        See :func:`max_load_cdf`.

    Returns
    -------
    float

    Examples
    --------
    >>> round(expected_max_load(8, 8), 3), round(expected_max_load(64, 16), 3)
    (2.597, 7.88)
    """
    m, n, groups = _check(m, n, groups)
    cdf = max_load_cdf(m, n, method)
    return float(np.sum(1.0 - cdf**groups))


@accepts()
def expected_effective_bandwidth(m: int, n: int) -> float:
    """Expected fraction of ideal bandwidth when ``m`` equal long-lived flows are hashed onto ``n`` equal links.

    The collective finishes when the busiest link drains, so the effective bandwidth is ``(m/n) / max_load`` of the
    ideal (fluid, perfectly balanced) one; this returns its expectation over the hash. Two flows on two bonded
    ports give ``0.5 * 1 + 0.5 * 0.5 = 0.75`` (C4, Dong et al. 2024).

    Examples
    --------
    >>> expected_effective_bandwidth(2, 2)
    0.75
    """
    m, n, _ = _check(m, n)
    if m == 0:
        raise ValueError("m must be >= 1 for an effective bandwidth, got 0")
    pmf = max_load_pmf(m, n)
    k = np.arange(pmf.size)
    nz = k > 0
    return float(np.sum(pmf[nz] * (m / n) / k[nz]))


@accepts()
def simulate_max_load(m: int, n: int, samples: int = 10_000, seed: Seed = None, groups: int = 1) -> np.ndarray:
    """Monte-Carlo maximum loads: ``samples`` draws of the max over ``groups`` experiments of ``m`` balls in ``n`` bins.

    Vectorized, per chunk of about four million balls: one ``bincount`` over the chunk's bins, or, with more bins than
    balls (``n > m``), each experiment's balls sorted and its longest run of equal bins counted, so memory follows the
    balls and not the bins (a million paths). Both give the same maxima from the same draws.

    Examples
    --------
    >>> x = simulate_max_load(16, 16, samples=20_000, seed=1)
    >>> bool(abs(x.mean() - expected_max_load(16, 16)) < 0.03)
    True
    """
    m, n, groups = _check(m, n, groups)
    samples = integer("samples", samples, minimum=1)
    if m * groups * samples > MAX_SIMULATED_BALLS:
        raise ValueError(
            f"m x groups x samples = {m:,} x {groups:,} x {samples:,} = {m * groups * samples:.3g} balls to draw; at "
            f"most {MAX_SIMULATED_BALLS:.0e} are simulated (about 10 s): lower samples (at most "
            f"{max(1, MAX_SIMULATED_BALLS // max(1, m * groups)):,} here) or use expected_max_load, which is exact"
        )
    rng = generator(seed)
    out = np.empty(samples, dtype=np.int64)
    chunk = max(1, 4_000_000 // max(1, groups * m))  # bounded memory: chunks of about 4M balls
    for start in range(0, samples, chunk):
        k = min(chunk, samples - start)
        rows = k * groups
        if n > m:
            out[start : start + k] = (
                _longest_runs(np.sort(rng.integers(0, n, size=(rows, m)), axis=1)).reshape(k, groups).max(axis=1)
            )
            continue
        bins = rng.integers(0, n, size=(rows, m)) + (np.arange(rows) * n)[:, None]
        loads = np.bincount(bins.ravel(), minlength=rows * n).reshape(k, groups * n)
        out[start : start + k] = loads.max(axis=1)
    return out


def _longest_runs(sorted_rows: np.ndarray) -> np.ndarray:
    """The longest run of equal values in each row of a row-sorted 2-D integer array (the row's maximum load)."""
    rows, m = sorted_rows.shape
    if m == 0:  # no balls: every bin empty
        return np.zeros(rows, dtype=np.int64)
    starts = np.ones((rows, m), dtype=bool)
    starts[:, 1:] = sorted_rows[:, 1:] != sorted_rows[:, :-1]
    where = np.flatnonzero(starts.ravel())  # every row's column 0 starts a run: no run crosses rows
    lengths = np.diff(np.append(where, rows * m))
    return np.maximum.reduceat(lengths, np.searchsorted(where, np.arange(rows) * m))
