"""Flow-size distributions: a piecewise-linear CDF sampled by inverse transform, and DCTCP's web-search one.

The web-search distribution is the flow-size CDF measured in a production web-search cluster and published with DCTCP
(Alizadeh et al., SIGCOMM 2010); the piecewise-linear table below is the version that later datacenter transport
papers (pFabric, HPCC, PRED) use in simulation. It lives in ``fabric`` (the lowest network layer) because both the
flow-level models here (:mod:`workbench.fabric.mitigation`) and the packet engine above
(:mod:`workbench.aqm.workload`, which draws Poisson flows from it) use it.
"""

from __future__ import annotations

import numpy as np

from .._contracts import AnyOf, Array, Real, accepts
from .._rng import Seed, generator
from .._validate import integer

__all__ = ["WEB_SEARCH_CDF", "FlowSizeCDF", "web_search"]


@accepts(size_bytes=Array(ge=0.0, min_size=2), cdf=Array(ge=0.0, le=1.0, min_size=2))
class FlowSizeCDF:
    """A piecewise-linear flow-size CDF (sizes in bytes) that samples by inverse transform.

    Parameters
    ----------
    size_bytes, cdf : array-like
        Break points: increasing sizes and non-decreasing cumulative probabilities ending at 1.

    Examples
    --------
    >>> d = web_search()
    >>> round(d.mean_bytes / 1e6, 2)
    1.71
    >>> d.sample(3, seed=0).dtype
    dtype('int64')
    """

    def __init__(self, size_bytes, cdf) -> None:
        size = np.asarray(size_bytes, dtype=float)
        prob = np.asarray(cdf, dtype=float)
        if size.ndim != 1 or size.shape != prob.shape or size.size < 2:
            raise ValueError("size_bytes and cdf must be 1-D arrays of the same length >= 2")
        if (np.diff(size) <= 0).any() or size[0] < 0:
            raise ValueError("size_bytes must be non-negative and strictly increasing")
        if (np.diff(prob) < 0).any() or prob[0] < 0 or abs(prob[-1] - 1.0) > 1e-12:
            raise ValueError("cdf must be non-decreasing from >= 0 to exactly 1")
        self.size_bytes = size
        self.cdf = prob
        # mean of the piecewise-linear (uniform within a segment) distribution, plus the atom at size[0]
        mids = 0.5 * (size[1:] + size[:-1])
        self.mean_bytes = float(prob[0] * size[0] + np.sum(np.diff(prob) * mids))

    @accepts()
    def sample(self, n: int, seed: Seed = None) -> np.ndarray:
        """``n`` flow sizes in bytes (at least 1 byte), by inverse transform of the piecewise-linear CDF."""
        n = integer("n", n, minimum=0)
        u = generator(seed).random(n)
        return np.maximum(1, np.interp(u, self.cdf, self.size_bytes)).astype(np.int64)

    @accepts(q=AnyOf(Real(ge=0.0, le=1.0), Array(ge=0.0, le=1.0)))
    def quantile(self, q) -> np.ndarray:
        """Size in bytes at cumulative probability ``q``."""
        return np.interp(np.asarray(q, dtype=float), self.cdf, self.size_bytes)


#: DCTCP web-search flow-size CDF: (size in bytes, cumulative probability).
WEB_SEARCH_CDF = (
    (0, 0.0),
    (10_000, 0.15),
    (20_000, 0.20),
    (30_000, 0.30),
    (50_000, 0.40),
    (80_000, 0.53),
    (200_000, 0.60),
    (1_000_000, 0.70),
    (2_000_000, 0.80),
    (5_000_000, 0.90),
    (10_000_000, 0.97),
    (30_000_000, 1.00),
)


@accepts()
def web_search() -> FlowSizeCDF:
    """The DCTCP web-search flow-size distribution (mean about 1.7 MB)."""
    table = np.asarray(WEB_SEARCH_CDF, dtype=float)
    return FlowSizeCDF(table[:, 0], table[:, 1])
