"""Statistics of arrival streams: the CV of gaps and the index of dispersion of counts per window.

Window counts themselves are :func:`workbench.distributions.counts_per_window`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import _validate as V
from .._contracts import accepts
from ..distributions import _window_index

if TYPE_CHECKING:
    pass


@accepts()
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


@accepts()
def interarrival_cv(times_s: np.ndarray) -> float:
    """CV of the gaps between consecutive (sorted) arrival times.

    Examples
    --------
    >>> round(interarrival_cv(np.array([0.0, 1.0, 2.0, 4.0])), 3)
    0.433
    """
    return cv(np.diff(_sorted_times("times_s", times_s, 3)))


#: Beyond this many windows :func:`index_of_dispersion` counts only the non-empty ones (memory follows the arrivals,
#: not the windows: windows of a millionth of a mean gap over two million arrivals are 2e12 windows).
_DENSE_WINDOWS = 10_000_000


@accepts()
def index_of_dispersion(
    times_s: np.ndarray, window_s: float | np.ndarray, *, start_s: float | None = None, end_s: float | None = None
) -> float | np.ndarray:
    """Index of dispersion of counts, Var[N(w)] / E[N(w)], over complete windows of ``window_s`` seconds.

    It is 1 for Poisson at every window; for a renewal process it tends to CV^2 as the window grows. ``window_s``
    may be an array (returns an array). At least 2 complete windows are needed.

    Examples
    --------
    >>> from workbench.arrivals import Poisson, arrival_times
    >>> t = arrival_times(Poisson(10.0), 200_000, seed=0)
    >>> round(float(index_of_dispersion(t, 10.0)), 1)
    1.0
    """
    windows = V.array_1d("window_s", window_s, min_size=1, low=0.0, low_inclusive=False)
    t = V.array_1d("times_s", times_s, min_size=1)
    out = np.empty(windows.size)
    for i, w in enumerate(windows):  # a handful of window sizes; each is one count of the windows
        b, n_win = _window_index(t, float(w), start_s, end_s)
        if n_win < 2:
            raise ValueError(f"window_s={w} leaves {n_win} complete window(s); need at least 2")
        if n_win > _DENSE_WINDOWS:  # windows far shorter than the gaps: count the non-empty ones only
            _, nonzero = np.unique(b, return_counts=True)
            total = int(nonzero.sum())
            mean = total / n_win
            var = (float(np.dot(nonzero, nonzero)) - total * mean) / (n_win - 1)  # zeros add nothing to the sum
            out[i] = var / mean if mean > 0 else np.nan
            continue
        counts = np.bincount(b, minlength=n_win)
        mean = counts.mean()
        out[i] = counts.var(ddof=1) / mean if mean > 0 else np.nan
    return float(out[0]) if np.ndim(window_s) == 0 else out
