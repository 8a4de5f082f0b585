"""Empirical distributions of samples: one home for the CDFs, tail functions, quantiles and window counts.

Every function takes plain arrays and returns arrays; figures plot what they return. Each name means one thing:

* :func:`ecdf` -- ``(x, P(X <= x))`` of samples, thinned for plotting; :func:`weighted_cdf` the same with a weight
  per sample, and :func:`weighted_quantile` its inverse.
* :func:`ccdf` -- ``(x, P(X > x))`` at tail probabilities spaced log-uniformly (compact on log axes, for
  continuous samples such as waiting times).
* :func:`survival_at_values` -- every distinct value with ``P(X >= value)`` (for integer lengths: a Zipf law is a
  straight line on log-log axes).
* :func:`pmf_ccdf` -- ``(values, P(X > value))`` of a probability mass function.
* :func:`density_histogram` -- a histogram normalized to a probability density (log-spaced bins by default).
* :func:`counts_per_window` -- the number of arrivals in each complete window of a time span.

Examples
--------
>>> import numpy as np
>>> x, p = ecdf(np.array([3.0, 1.0, 2.0]))
>>> x.tolist(), p.tolist()
([1.0, 2.0, 3.0], [0.3333333333333333, 0.6666666666666666, 1.0])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _validate as V
from ._contracts import AnyOf, Array, Real, accepts

__all__ = [
    "ecdf",
    "weighted_cdf",
    "weighted_quantile",
    "ccdf",
    "survival_at_values",
    "pmf_ccdf",
    "density_histogram",
    "counts_per_window",
]


@accepts(x=Array(finite=False, allow_nan=True))
def ecdf(x: np.ndarray, *, points: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF of ``x`` (NaN dropped; +inf kept at the top), thinned to about ``points``.

    Examples
    --------
    >>> ecdf(np.array([2.0, np.nan, np.inf, 1.0]))[1].tolist()
    [0.3333333333333333, 0.6666666666666666, 1.0]
    """
    x = np.asarray(x, dtype=float)
    x = x[~np.isnan(x)]
    return weighted_cdf(x, np.ones(x.size), points=points)


@accepts(x=Array(min_size=1, finite=False), w=Array(ge=0.0, min_size=1))
def weighted_cdf(x: np.ndarray, w: np.ndarray, *, points: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """``(x_sorted, cumulative weight fraction)`` of weighted samples, thinned to about ``points`` for plotting.

    Examples
    --------
    >>> weighted_cdf([3.0, 1.0, 2.0], [1.0, 1.0, 2.0])[1].tolist()
    [0.25, 0.75, 1.0]
    """
    x = np.asarray(x, dtype=float)
    w = np.asarray(w, dtype=float)
    order = np.argsort(x, kind="stable")
    xs, c = x[order], np.cumsum(w[order])
    c = c / c[-1] if c.size and c[-1] > 0 else c
    if xs.size > points:
        keep = np.unique(np.linspace(0, xs.size - 1, points).astype(np.int64))
        xs, c = xs[keep], c[keep]
    return xs, c


@accepts(q=AnyOf(Real(ge=0.0, le=1.0), Array(ge=0.0, le=1.0)))
def weighted_quantile(x: np.ndarray, w: np.ndarray, q: Any) -> np.ndarray:
    """Quantiles ``q`` of values ``x`` with weights ``w`` (lower weighted quantile; NaN when no weight).

    Examples
    --------
    >>> weighted_quantile([1.0, 2.0, 3.0], [1.0, 2.0, 1.0], [0.25, 0.5, 0.9]).tolist()
    [1.0, 2.0, 3.0]
    """
    x = np.asarray(x, dtype=float)
    w = np.asarray(w, dtype=float)
    q = np.atleast_1d(np.asarray(q, dtype=float))
    if x.size == 0 or w.sum() <= 0:
        return np.full(q.size, np.nan)
    order = np.argsort(x, kind="stable")
    c = np.cumsum(w[order])
    return x[order][np.minimum(np.searchsorted(c, q * c[-1], side="left"), x.size - 1)]


@accepts()
def ccdf(values: np.ndarray, *, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """``(x, P(X > x))`` at ``points`` quantiles spaced log-uniformly in the tail probability (compact for plots).

    For samples without ties (continuous quantities such as waiting times); with ties the probability is the
    rank-based tail. Use :func:`survival_at_values` for integer data.

    Examples
    --------
    >>> x, p = ccdf(np.arange(1000.0), points=3)
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


@accepts(x=Array())
def survival_at_values(x) -> tuple[np.ndarray, np.ndarray]:
    """Unique values and ``P(X >= value)``; plotted on log-log axes a Zipf law is a straight line.

    Examples
    --------
    >>> v, c = survival_at_values(np.array([1, 1, 2, 4]))
    >>> v.tolist(), c.tolist()
    ([1.0, 2.0, 4.0], [1.0, 0.5, 0.25])
    """
    a = V.array_1d("x", x)
    vals, cnt = np.unique(a, return_counts=True)
    ccdf = 1.0 - np.concatenate([[0.0], np.cumsum(cnt)[:-1]]) / a.size
    return vals.astype(float), ccdf


@accepts(values=Array(min_size=1), probs=Array(ge=0.0, min_size=1))
def pmf_ccdf(values: np.ndarray, probs: np.ndarray, *, points: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """``(values, P(X > value))`` of a PMF at about ``points`` log-spaced values (for log-log plots).

    Examples
    --------
    >>> pmf_ccdf([1.0, 2.0, 4.0], [0.5, 0.25, 0.25])[1].tolist()
    [0.5, 0.25]
    """
    v = np.asarray(values, dtype=float)
    p = np.asarray(probs, dtype=float)
    order = np.argsort(v, kind="stable")
    v = v[order]
    tail = 1.0 - np.cumsum(p[order]) / p.sum()
    keep = tail > 1e-6  # below one in a million the pooled tail is a handful of rare client-windows
    v, tail = v[keep], tail[keep]
    if v.size > points:
        grid = np.geomspace(max(v[0], 1.0), v[-1], points)
        idx = np.unique(np.minimum(np.searchsorted(v, grid, side="right") - 1, v.size - 1).clip(0))
        v, tail = v[idx], tail[idx]
    return v, tail


@accepts()
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


#: The most windows :func:`counts_per_window` returns (one int64 each: 800 MB).
MAX_WINDOWS = 100_000_000


@accepts()
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
    window = V.positive("window_s", window_s)
    b, n_win = _window_index(times_s, window, start_s, end_s)
    if n_win > MAX_WINDOWS:
        raise ValueError(
            f"window_s={window} cuts the span into {n_win:.3g} windows; at most {MAX_WINDOWS:,} are counted: "
            "use a longer window"
        )
    return np.bincount(b, minlength=n_win)


def _window_index(
    times_s: np.ndarray, window_s: float, start_s: float | None, end_s: float | None
) -> tuple[np.ndarray, int]:
    """The complete window (from 0) of each time inside the complete windows of ``window_s`` seconds from ``start_s``
    (default: the first time) to ``end_s`` (default: the last), and how many complete windows there are (>= 1).
    The one rule of :func:`counts_per_window` and :func:`workbench.arrivals.index_of_dispersion`."""
    t = V.array_1d("times_s", times_s, min_size=1)
    lo = float(t.min()) if start_s is None else V.finite("start_s", start_s)
    hi = float(t.max()) if end_s is None else V.finite("end_s", end_s)
    n_win = int(math.floor((hi - lo) / window_s + 1e-9))
    if n_win < 1:
        raise ValueError(f"window_s={window_s} is longer than the span {hi - lo} s: no complete window")
    b = np.floor((t - lo) / window_s).astype(np.int64)
    return b[(b >= 0) & (b < n_win)], n_win
