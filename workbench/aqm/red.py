"""RED/ECN marking on a switch queue, in the classic and in PRED's parameterization.

RED (Floyd and Jacobson, 1993) marks an arriving packet with a probability that rises linearly with the queue length
between a minimum threshold ``min_k`` and a maximum threshold ``max_k``, where it reaches ``max_p``; datacenter
switches configured for DCTCP mark every packet once the instantaneous queue is at or above ``max_k``. PRED (NSDI
2025) describes the same ramp by its start point ``min_k`` and its slope ``lambda = max_p / (max_k - min_k)`` (marking
probability per packet of queue), because its controllers move the slope and the start point independently. The two
forms describe the same curve: :meth:`RedMarking.from_slope` builds the ramp that starts at ``min_k`` and reaches
probability 1 at ``min_k + 1/lambda``.

Queue lengths are in packets throughout (the unit PRED and switch ECN configurations use).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._contracts import Real, accepts
from .._validate import nonnegative, positive, probability

__all__ = ["RedMarking", "STATIC_DEFAULT", "mark_probability"]


@accepts()
@dataclass(frozen=True)
class RedMarking:
    """A RED/ECN marking ramp on the instantaneous queue length.

    Parameters
    ----------
    min_k_pkts : float
        Queue length (packets) below which nothing is marked; ``>= 0``.
    max_k_pkts : float
        Queue length (packets) at and above which every packet is marked; ``> min_k_pkts``.
    max_p : float
        Marking probability just below ``max_k_pkts``; in ``(0, 1]``.

    Examples
    --------
    >>> m = RedMarking(20, 200, 0.1)
    >>> round(m.slope_per_pkt, 6)
    0.000556
    >>> float(m.probability(110))
    0.05
    >>> RedMarking.from_slope(5, 0.05).max_k_pkts
    25.0
    """

    min_k_pkts: float
    max_k_pkts: float
    max_p: float = 1.0

    def __post_init__(self) -> None:
        lo = nonnegative("min_k_pkts", self.min_k_pkts)
        hi = positive("max_k_pkts", self.max_k_pkts)
        p = probability("max_p", self.max_p)
        if not lo < hi:
            raise ValueError(f"min_k_pkts must be < max_k_pkts, got min_k_pkts={lo:g} and max_k_pkts={hi:g}")
        if p <= 0:
            raise ValueError(f"max_p must be in (0, 1], got {p}")
        object.__setattr__(self, "min_k_pkts", lo)
        object.__setattr__(self, "max_k_pkts", hi)
        object.__setattr__(self, "max_p", p)

    @classmethod
    @accepts(slope_per_pkt=Real(gt=0.0))
    def from_slope(cls, min_k_pkts: float, slope_per_pkt: float) -> RedMarking:
        """PRED's form: the ramp starting at ``min_k_pkts`` with slope ``slope_per_pkt`` up to probability 1."""
        min_k = nonnegative("min_k_pkts", min_k_pkts)
        slope = positive("slope_per_pkt", slope_per_pkt)
        return cls(min_k, min_k + 1.0 / slope, 1.0)

    @classmethod
    @accepts()
    def step(cls, k_pkts: float) -> RedMarking:
        """DCTCP's step marking: every packet arriving to a queue of ``k_pkts`` or more packets is marked, none below
        (on whole-packet queues; the ramp from ``k_pkts - 1`` to ``k_pkts`` is the step).

        Examples
        --------
        >>> RedMarking.step(15).probability([14, 15]).tolist()
        [0.0, 1.0]
        """
        k = positive("k_pkts", k_pkts)
        if k < 1:
            raise ValueError(f"k_pkts must be >= 1, got {k}")
        return cls(k - 1.0, k, 1.0)

    @property
    def slope_per_pkt(self) -> float:
        """PRED's lambda: marking probability added per packet of queue above ``min_k_pkts``."""
        return self.max_p / (self.max_k_pkts - self.min_k_pkts)

    @accepts()
    def probability(self, queue_pkts: float | np.ndarray) -> np.ndarray:
        """Marking probability of a packet arriving to ``queue_pkts`` packets (vectorized)."""
        return mark_probability(queue_pkts, self.min_k_pkts, self.max_k_pkts, self.max_p)

    @accepts(factor=Real(gt=0.0))
    def scaled(self, factor: float) -> RedMarking:
        """The ramp with the same start and ``factor`` times the slope (PRED's Flow Concurrent Stabilizer)."""
        factor = positive("factor", factor)
        return RedMarking(self.min_k_pkts, self.min_k_pkts + (self.max_k_pkts - self.min_k_pkts) / factor, self.max_p)


#: The static baseline used throughout: ECN marking from 20 to 200 packets, probability up to 0.1, then 1.
STATIC_DEFAULT = RedMarking(20.0, 200.0, 0.1)


@accepts()
def mark_probability(
    queue_pkts: float | np.ndarray,
    min_k_pkts: float | np.ndarray,
    max_k_pkts: float | np.ndarray,
    max_p: float | np.ndarray = 1.0,
) -> np.ndarray:
    """RED/ECN marking probability: 0 below ``min_k``, linear to ``max_p`` at ``max_k``, 1 at and above ``max_k``.

    All arguments broadcast, so a sweep over queue lengths and over thresholds is one call. Thresholds must satisfy
    ``min_k_pkts <= max_k_pkts`` (equal thresholds are a step at ``max_k``); :class:`RedMarking` validates a whole
    configuration.

    Examples
    --------
    >>> mark_probability([0, 20, 110, 200, 500], 20, 200, 0.1).round(3).tolist()
    [0.0, 0.0, 0.05, 1.0, 1.0]
    >>> mark_probability([14, 15], 15, 15).tolist()
    [0.0, 1.0]
    """
    q = np.asarray(queue_pkts, dtype=float)
    lo = np.asarray(min_k_pkts, dtype=float)
    hi = np.asarray(max_k_pkts, dtype=float)
    bad = np.broadcast_to(~(lo <= hi), np.broadcast_shapes(lo.shape, hi.shape))
    if bad.any():
        i = np.unravel_index(int(np.argmax(bad)), bad.shape)
        raise ValueError(
            f"min_k_pkts must be <= max_k_pkts, got min_k_pkts={np.broadcast_to(lo, bad.shape)[i]} "
            f"and max_k_pkts={np.broadcast_to(hi, bad.shape)[i]}"
        )
    return _ramp(q, lo, hi, np.asarray(max_p, dtype=float))


def _ramp(q: np.ndarray, lo: np.ndarray, hi: np.ndarray, max_p: np.ndarray) -> np.ndarray:
    """:func:`mark_probability` on float arrays already checked (``lo <= hi``): the fluid models' solvers call it
    once per iteration, where the public function's checks cost more than the arithmetic."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ramp = max_p * np.clip((q - lo) / (hi - lo), 0.0, 1.0)
    return np.where(q >= hi, 1.0, np.where(q < lo, 0.0, ramp))


def _scalar_probability(q: float, lo: float, hi: float, max_p: float) -> float:
    """Scalar fast path used inside the packet simulation."""
    if q < lo:
        return 0.0
    if q >= hi:
        return 1.0
    return max_p * (q - lo) / (hi - lo)
