"""The piecewise-linear fluid queue the chunked packet engine (:mod:`workbench.aqm.packet`) keeps per link.

Paced trains of packets add their rate ``1/spacing`` from their first to their last packet's arrival; between rate
changes the queue integrates ``arrival rate - capacity`` clipped to ``[0, buffer]``, so utilization and the
time-average queue are exact for paced trains. Trains booked for a later time (downstream hops) are scheduled rate
changes, applied in time order when the queue advances or is projected.
"""

from __future__ import annotations

import heapq
import math

from .red import RedMarking

__all__ = ["TrainQueue"]

#: Rate changes within this of a time count as before it (train ends computed along different float paths).
_EPS_S = 1e-12


class TrainQueue:
    """One output queue: a fluid of paced trains plus marking state and counters.

    Examples
    --------
    >>> q = TrainQueue(1.0e6, 1000.0, None)        # serves one packet per microsecond
    >>> q.add_train(0.0, 2.0e6, 10e-6)             # a train at twice that rate for 10 us
    >>> round(q.queue_at(10e-6), 6)
    10.0
    """

    __slots__ = (
        "area",
        "buffer",
        "c",
        "drops",
        "ends",
        "flows",
        "hi",
        "lo",
        "marking",
        "marks",
        "maxp",
        "pkts",
        "q",
        "rate",
        "s",
        "served",
        "t",
        "t0",
    )

    def __init__(self, capacity_pps: float, buffer_pkts: float, marking: RedMarking | None) -> None:
        self.c = capacity_pps
        self.s = 1.0 / capacity_pps
        self.q = 0.0
        self.t = 0.0
        self.rate = 0.0
        self.ends: list[tuple[float, float]] = []
        self.buffer = buffer_pkts
        self.marking = marking is not None
        if marking is None:
            self.lo, self.hi, self.maxp = math.inf, math.inf, 0.0
        else:
            self.lo, self.hi, self.maxp = marking.min_k_pkts, marking.max_k_pkts, marking.max_p
        self.served = 0.0
        self.area = 0.0
        self.pkts = 0
        self.marks = 0
        self.drops = 0.0
        self.flows: set[int] = set()
        self.t0 = 0.0

    def integrate(self, t: float) -> None:
        """Advance the fluid queue from ``self.t`` to ``t`` at the current arrival rate."""
        dt = t - self.t
        if dt <= 0.0:
            return
        q = self.q
        net = self.rate - self.c
        if net >= 0.0:
            q1 = q + net * dt
            if q1 > self.buffer:
                tf = (self.buffer - q) / net if net > 0 else dt
                self.area += 0.5 * (q + self.buffer) * tf + self.buffer * (dt - tf)
                self.drops += q1 - self.buffer
                q1 = self.buffer
            else:
                self.area += 0.5 * (q + q1) * dt
            self.served += self.c * dt
        else:
            tdrain = q / -net
            if tdrain >= dt:
                q1 = q + net * dt
                self.area += 0.5 * (q + q1) * dt
                self.served += self.c * dt
            else:
                self.area += 0.5 * q * tdrain
                self.served += self.c * tdrain + self.rate * (dt - tdrain)
                q1 = 0.0
        self.q = q1
        self.t = t

    def advance(self, t: float) -> None:
        """Integrate to ``t``, applying the rate changes (train starts and ends) due before it in time order."""
        events = self.ends
        while events and events[0][0] <= t + _EPS_S:
            te, dr = heapq.heappop(events)
            self.integrate(te)
            self.rate += dr
        if not events:
            self.rate = 0.0
        self.integrate(t)

    def add_train(self, t: float, rate: float, end: float) -> None:
        """A paced train arriving at ``rate`` from ``t`` (now or later) until ``end``."""
        if t <= self.t:
            self.rate += rate
        else:
            heapq.heappush(self.ends, (t, rate))
        heapq.heappush(self.ends, (end, -rate))

    def queue_at(self, t: float) -> float:
        self.advance(t)
        return self.q

    def project(self, t: float) -> tuple[float, float]:
        """Queue and arrival rate at a future ``t`` with the trains already booked (their scheduled starts and ends
        applied in time order), without changing the state."""
        q, rate, t0, c, buf = self.q, self.rate, self.t, self.c, self.buffer
        for te, dr in sorted(e for e in self.ends if e[0] <= t + _EPS_S):
            q += (rate - c) * (te - t0)
            q = 0.0 if q < 0.0 else (buf if q > buf else q)
            rate += dr
            t0 = te
        q += (rate - c) * (t - t0)
        return (0.0 if q < 0.0 else (buf if q > buf else q)), (rate if rate > 1e-9 else 0.0)
