"""One definition of each latency statistic of a served table, used by every caller (summaries, SLO checks, capacity
searches, experiments, FastSwitch's tails, panels).

* **Quantile** (:func:`quantile`): the nearest rank, the value at rank ``ceil(q n)`` of the sorted values (numpy's
  ``inverted_cdf``), optionally weighted. It is what an SLO means: "p99 TTFT <= 2 s" holds exactly when at most
  ``floor((1 - q) n)`` requests are slower (:meth:`~workbench.serving.capacity.SLO.allowed_violations`).
* **TTFT** (:func:`ttft_values`): first token minus arrival; a request that was rejected, or never produced a token,
  counts as infinitely late.
* **TBT** (:func:`tbt_values`, vLLM's *TPOT*): a request's mean time between output tokens, ``(finish - first token) /
  (output tokens - 1)``, for finished requests of two or more tokens (the served table's ``tbt_s``).
* **ITL** (:class:`TokenGaps`, :func:`itl_quantile`): every gap between consecutive tokens of every request (vLLM's
  inter-token latency; FastSwitch's "TBT"), spans of preemption included. Recorded by the engine on request
  (``record_gaps=True``), compactly: a run of ``k`` decode iterations of ``n`` requests is one record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._contracts import Array, Frame, Real, accepts, same_length

__all__ = ["OVERLOAD_QUEUED", "TokenGaps", "backlog", "itl_quantile", "quantile", "tbt_values", "ttft_values"]

#: A run is overloaded when more than this share of its requests were still queued (not admitted) when the arrivals
#: stopped: its p99 statistics then measure that backlog (a replica that keeps up leaves a handful, 2 of 17,795 in the
#: serving-hardware panel's 8B model at 30 req/s; at 60 req/s 45% were still queued).
OVERLOAD_QUEUED = 0.01


@accepts(
    same_length("values", "weights"),
    values=Array(finite=False, allow_nan=True),
    weights=Array(ge=0.0, optional=True),
    q=Real(ge=0.0, le=1.0),
)
def quantile(values, q: float, weights=None) -> float:
    """The ``q`` quantile of ``values`` by nearest rank (NaN values are left out, infinities kept; NaN if empty).

    Examples
    --------
    >>> quantile([1.0, 2.0, 3.0, 4.0], 0.5), quantile([1.0, 2.0, 3.0, 4.0], 0.51)
    (2.0, 3.0)
    >>> quantile([1.0, 5.0], 0.5, weights=[3, 1])
    1.0
    """
    if not 0 <= q <= 1:
        raise ValueError(f"q must be in [0, 1], got {q}")
    v = np.asarray(values, dtype=float)
    keep = ~np.isnan(v)
    v = v[keep]
    if v.size == 0:
        return math.nan
    o = np.argsort(v, kind="stable")
    if weights is None:
        return float(v[o][max(0, math.ceil(q * v.size - 1e-9) - 1)])
    w = np.asarray(weights, dtype=float)[keep][o]
    cum = np.cumsum(w)
    k = int(np.searchsorted(cum, q * cum[-1] - 1e-9 * cum[-1], side="left"))
    return float(v[o][min(k, v.size - 1)])


@accepts()
def ttft_values(table: pd.DataFrame) -> np.ndarray:
    """Time to first token of every request of a served table; rejected requests and requests without a first
    token count as infinitely late."""
    ttft = table["ttft_s"].to_numpy(dtype=float)
    return np.where(table["rejected"].to_numpy(bool) | np.isnan(ttft), np.inf, ttft)


@accepts()
def tbt_values(table: pd.DataFrame) -> np.ndarray:
    """Mean time between output tokens of every finished request of two or more tokens (vLLM's TPOT)."""
    tbt = table["tbt_s"].to_numpy(dtype=float)
    return tbt[np.isfinite(tbt)]


@accepts()
@dataclass(frozen=True)
class TokenGaps:
    """Every gap between consecutive output tokens of a run, compactly: record ``r`` stands for ``count[r]`` gaps of
    durations ``first[r] + inc[r] x j`` (``j = 0 .. count - 1``), each occurring ``weight[r]`` times (one per request
    decoding then), of which ``stall[r]`` seconds (on the first gap only) were synchronous swap stall.

    Examples
    --------
    >>> g = TokenGaps(np.array([0.5, 0.01]), np.array([0.0, 0.001]), np.array([1, 3]), np.array([1, 2]),
    ...               np.array([0.4, 0.0]))
    >>> g.size, round(itl_quantile(g, 0.99), 3)
    (7, 0.5)
    """

    first: np.ndarray
    inc: np.ndarray
    count: np.ndarray
    weight: np.ndarray
    stall: np.ndarray

    @property
    def size(self) -> int:
        """Gaps in all."""
        return int((self.count * self.weight).sum())

    @accepts()
    def expanded(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(duration, weight, stall)`` per distinct gap (one entry per iteration of each record)."""
        n = self.count.astype(np.int64)
        rec = np.repeat(np.arange(n.size), n)
        j = np.arange(rec.size) - np.repeat(np.cumsum(n) - n, n)
        dur = self.first[rec] + self.inc[rec] * j
        stall = np.where(j == 0, self.stall[rec], 0.0)
        return dur, self.weight[rec].astype(float), stall


@accepts()
def itl_quantile(gaps: TokenGaps, q: float) -> float:
    """The ``q`` quantile of every inter-token gap (nearest rank over the weighted gaps)."""
    dur, w, _ = gaps.expanded()
    return quantile(dur, q, weights=w)


@accepts(table=Frame(columns=("arrival_s", "queue_s", "e2e_s", "rejected")))
def backlog(table: pd.DataFrame) -> dict[str, float]:
    """The queue a served table leaves when its arrivals stop: ``queued_at_end`` (requests admitted after the last
    arrival), ``queued_fraction`` (of all requests), ``drain_s`` (the last finish after the last arrival), ``rejected``
    (never served: a context larger than the cache or the batch budget) and ``overloaded`` (1.0 when
    ``queued_fraction`` exceeds :data:`OVERLOAD_QUEUED`, else 0.0). A deployment offered more than it serves leaves a
    queue that grows with the run's length; latency percentiles then measure the backlog, not the service.

    Examples
    --------
    >>> t = pd.DataFrame({"arrival_s": [0.0, 1.0, 2.0], "queue_s": [0.0, 0.5, 3.0], "e2e_s": [1.0, 1.5, 4.0],
    ...                   "rejected": [False, False, False]})
    >>> b = backlog(t)
    >>> b["queued_at_end"], b["drain_s"], b["overloaded"]
    (1.0, 4.0, 1.0)
    """
    arrival = table["arrival_s"].to_numpy(dtype=float)
    served = ~table["rejected"].to_numpy(bool)
    n = arrival.size
    if n == 0:
        return {"queued_at_end": 0.0, "queued_fraction": 0.0, "drain_s": 0.0, "rejected": 0.0, "overloaded": 0.0}
    last = float(np.nanmax(arrival))
    admit = arrival + table["queue_s"].to_numpy(dtype=float)
    finish = arrival + table["e2e_s"].to_numpy(dtype=float)
    queued = float(np.count_nonzero(served & (admit > last)))
    done = served & np.isfinite(finish)
    drain = max(0.0, float(finish[done].max()) - last) if done.any() else 0.0
    fraction = queued / n
    return {
        "queued_at_end": queued,
        "queued_fraction": fraction,
        "drain_s": drain,
        "rejected": float(n - np.count_nonzero(served)),
        "overloaded": float(fraction > OVERLOAD_QUEUED),
    }
