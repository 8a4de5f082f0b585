"""Packet-level discrete-event simulation (simpy) of DCTCP flows through RED/ECN or PRED switch queues.

What is simulated
-----------------
Every flow is a simpy process running DCTCP: an initial window of 10 packets in slow start, an EWMA ``alpha`` of the
fraction of marked packets per window (gain 1/16), a cut of ``cwnd * alpha / 2`` in a window that saw a mark, plus one
packet per window otherwise; a dropped packet halves the window and is sent again. A window is sent *ack-clocked*: the
next window starts when the first acknowledgement of the previous one returns (one base RTT after that packet left the
last queue) and its packets are paced at the spacing at which the previous window's packets left the bottleneck
(acks return at that spacing), at host line rate in the first round.

Where the time goes (aggregation)
---------------------------------
To reach hundreds of thousands of packets per second of wall time in simpy, a window is sent in *chunks* of at most
``chunk_pkts`` packets (a TSO-sized train, 16 by default), one simpy event per chunk rather than per packet. Each
switch output queue is kept as an exact piecewise-linear fluid of the paced chunks that are crossing it: a chunk adds
its rate ``1/spacing`` until its last packet has arrived, and the queue between events integrates
``arrival rate - capacity`` clipped to ``[0, buffer]`` (so utilization and the time-average queue are exact for paced
trains). A packet of a chunk sees the queue projected to its own arrival time at the current aggregate rate, is marked
with the RED probability of that queue (one Bernoulli draw per packet) and leaves after the packets ahead of it
(FIFO). The approximation is that a chunk's later packets do not see chunks that *start* while it is arriving: at most
``chunk_pkts`` packets of projection per flow. Downstream hops are booked when the chunk enters the fabric (cut-through
at the first packet's departure from the previous hop): the chunk's rate is scheduled to start at its arrival there,
and the queue it meets is the present queue projected to that time at the present net rate. Queue state never runs
ahead of simpy's clock, so one delayed chunk cannot hold up the trains of other flows.

PRED's controllers
------------------
On each marking queue, :class:`PredConfig` runs the paper's two control loops as simpy processes:

* **Flow Concurrent Stabilizer (FCS)**: every ``fcs_period_rtts`` (1.25 RTT) it counts the distinct flows that sent
  packets into the queue during the period and sets the marking slope to ``unit_slope_per_pkt * N`` (linear scaling,
  the variant the paper settles on over square-root scaling).
* **Queue Length Adjuster (QLA)**: every ``qla_period_rtts`` (5 RTT) it scores the period with the utility
  ``U = 0.4 * throughput / capacity - 0.6 * mean queue / queue_ref`` and hill-climbs: one period at the current
  setting, one with the slope offset raised by ``slope_step`` (0.025), one with it lowered, then keeps the best of the
  three. When the FCS slope is below ``min_slope_for_slope_tuning`` (0.05) it tunes the start point ``min_k``
  instead, in 5-packet steps (and drops its slope offset). The paper gives no bounds for these walks; here ``min_k``
  stays within ``[0, 40]`` packets, the offset within ``+-0.25`` and the slope at or above one flow's slope, because
  an unbounded hill climb on a noisy utility drifts.

Static thresholds (a fixed :class:`~workbench.aqm.red.RedMarking`) are the baseline.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import simpy

from .._rng import Seed, generator
from .._validate import in_range, integer, nonnegative, one_of, positive
from .fluid import DCTCP_G, MIN_CWND_PKTS, bdp_pkts
from .red import RedMarking
from .workload import FlowSizeCDF, poisson_flows

__all__ = [
    "PredConfig",
    "SimResult",
    "Network",
    "dumbbell",
    "leaf_spine_fct",
    "fct_summary",
]

INIT_CWND_PKTS = 10
#: Receive-window cap on the congestion window (a lone sender whose NIC is the bottleneck never sees a mark).
MAX_CWND_PKTS = 4096.0


@dataclass(frozen=True)
class PredConfig:
    """PRED's adaptive marking: Flow Concurrent Stabilizer (FCS) and Queue Length Adjuster (QLA).

    Parameters
    ----------
    unit_slope_per_pkt : float
        Marking slope per concurrent flow; FCS sets the slope to ``unit_slope_per_pkt * N``.
    min_k_pkts : float
        Initial start point of the marking ramp (packets).
    fcs, qla : bool
        Turn either controller off (``fcs=False`` keeps the slope at ``unit_slope_per_pkt``).
    fcs_scaling : {"linear", "sqrt"}
        Slope ``unit * N`` (the paper's choice) or ``unit * sqrt(N)``.
    fcs_period_rtts, qla_period_rtts : float
        Control periods in base RTTs (paper: about 1.25 and 5).
    throughput_weight : float
        Weight of the throughput share in the QLA utility (paper: 0.4); the queue penalty gets the rest.
    slope_step, min_k_step_pkts : float
        QLA's probing steps (paper: 0.025 and 5 packets).
    min_slope_for_slope_tuning : float
        Below this slope QLA tunes ``min_k`` instead of the slope (paper: 0.05).
    queue_ref_pkts : float or None
        Queue length that costs a full unit of utility; default the link's bandwidth-delay product.
    max_min_k_pkts, max_slope_offset : float
        Bounds on what QLA may do (the paper does not give them): ``min_k`` stays in ``[0, max_min_k_pkts]`` and
        QLA's offset to the FCS slope in ``[-max_slope_offset, max_slope_offset]``; the slope never drops below one
        flow's ``unit_slope_per_pkt``.

    Examples
    --------
    >>> PredConfig().unit_slope_per_pkt
    0.01
    """

    unit_slope_per_pkt: float = 0.01
    min_k_pkts: float = 5.0
    fcs: bool = True
    qla: bool = True
    fcs_period_rtts: float = 1.25
    qla_period_rtts: float = 5.0
    throughput_weight: float = 0.4
    slope_step: float = 0.025
    min_k_step_pkts: float = 5.0
    min_slope_for_slope_tuning: float = 0.05
    queue_ref_pkts: float | None = None
    max_min_k_pkts: float = 40.0
    max_slope_offset: float = 0.25
    fcs_scaling: str = "linear"

    def __post_init__(self) -> None:
        positive("unit_slope_per_pkt", self.unit_slope_per_pkt)
        nonnegative("min_k_pkts", self.min_k_pkts)
        positive("fcs_period_rtts", self.fcs_period_rtts)
        positive("qla_period_rtts", self.qla_period_rtts)
        in_range("throughput_weight", self.throughput_weight, 0.0, 1.0)
        positive("slope_step", self.slope_step)
        positive("min_k_step_pkts", self.min_k_step_pkts)
        nonnegative("min_slope_for_slope_tuning", self.min_slope_for_slope_tuning)
        if self.queue_ref_pkts is not None:
            positive("queue_ref_pkts", self.queue_ref_pkts)
        nonnegative("max_min_k_pkts", self.max_min_k_pkts)
        one_of("fcs_scaling", self.fcs_scaling, ("linear", "sqrt"))
        nonnegative("max_slope_offset", self.max_slope_offset)


class _Link:
    """One switch output queue: a fluid of paced chunks plus marking state and counters."""

    __slots__ = (
        "c", "s", "q", "t", "rate", "ends", "lo", "hi", "maxp", "buffer", "served", "area", "pkts", "marks",
        "drops", "flows", "marking", "t0",
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
        while events and events[0][0] <= t:
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


@dataclass(frozen=True)
class SimResult:
    """Outputs of a packet-level run.

    Attributes
    ----------
    flows : DataFrame
        One row per flow: ``flow_id, size_bytes, start_s, fct_s`` (NaN if unfinished), ``finished``, ``is_long``,
        ``delivered_pkts``.
    queue : DataFrame
        Sampled queue lengths of the monitored links: ``time_s, link, queue_pkts``.
    links : DataFrame
        Per marking link over the measurement window: ``link, utilization, mean_queue_pkts, pkts, marks, drops``.
    control : DataFrame
        PRED controller trace on the monitored links: ``time_s, link, n_flows, slope_per_pkt, min_k_pkts``.
    packets : int
        Packets sent by all senders (the figure of merit for simulation speed).
    duration_s : float
        Simulated time.
    """

    flows: pd.DataFrame
    queue: pd.DataFrame
    links: pd.DataFrame
    control: pd.DataFrame
    packets: int
    duration_s: float


class Network:
    """A set of switch queues and the DCTCP flows crossing them (the simpy engine behind the experiments).

    Build one per experiment and call :meth:`run` once (the simpy clock does not rewind); :func:`dumbbell` and
    :func:`leaf_spine_fct` do both.

    Parameters
    ----------
    capacity_gbps : array-like
        Capacity of every link (Gbit/s).
    marking_links : array-like of bool
        Which links are switch queues with ECN marking (host NICs are not).
    scheme : RedMarking or PredConfig
        Static thresholds on every marking link, or PRED.
    rtt_s : float
        Base (propagation) round-trip time of every path.
    host_gbps : float
        NIC rate: the spacing of a window's first round.
    buffer_pkts : float
        Buffer of every queue (tail drop).
    packet_bytes, chunk_pkts : int
        Packet size and the largest train sent as one event.
    monitor_links : sequence of int
        Links whose queue is sampled every ``sample_s`` and whose PRED state is traced.
    nic_marking : RedMarking or None
        Fixed ramp on the non-switch links (host NICs). A host's flows share its NIC's FIFO; Linux's TCP small
        queues keep that queue short, which a shallow fixed ramp stands in for. ``None``: no marking there.
    seed : int, Generator or None
    """

    def __init__(
        self,
        capacity_gbps,
        marking_links,
        scheme: RedMarking | PredConfig,
        *,
        rtt_s: float = 100e-6,
        host_gbps: float = 10.0,
        buffer_pkts: float = 1000.0,
        packet_bytes: int = 1500,
        chunk_pkts: int = 16,
        monitor_links=(0,),
        sample_s: float | None = None,
        nic_marking: RedMarking | None = None,
        seed: Seed = None,
    ) -> None:
        cap = np.asarray(capacity_gbps, dtype=float)
        if cap.ndim != 1 or cap.size == 0 or not (cap > 0).all() or not np.isfinite(cap).all():
            raise ValueError("capacity_gbps must be a non-empty 1-D array of positive, finite capacities")
        marking_mask = np.broadcast_to(np.asarray(marking_links, dtype=bool), cap.shape)
        if not isinstance(scheme, (RedMarking, PredConfig)):
            raise TypeError(f"scheme must be a RedMarking or a PredConfig, got {type(scheme).__name__}")
        self.rtt_s = positive("rtt_s", rtt_s)
        host_gbps = positive("host_gbps", host_gbps)
        buffer_pkts = positive("buffer_pkts", buffer_pkts)
        self.packet_bytes = integer("packet_bytes", packet_bytes, minimum=64)
        self.chunk = integer("chunk_pkts", chunk_pkts, minimum=1)
        self.scheme = scheme
        pps = cap * 1e9 / (8.0 * self.packet_bytes)
        static = scheme if isinstance(scheme, RedMarking) else RedMarking.from_slope(
            scheme.min_k_pkts, scheme.unit_slope_per_pkt
        )
        if nic_marking is not None and not isinstance(nic_marking, RedMarking):
            raise TypeError(f"nic_marking must be a RedMarking or None, got {type(nic_marking).__name__}")
        # host NICs queue in the host stack, which does not drop; they may signal a fixed, shallow ramp
        self.links = [
            _Link(float(c), buffer_pkts if m else math.inf, static if m else nic_marking)
            for c, m in zip(pps, marking_mask)
        ]
        self.scheme_links = marking_mask.copy()
        self.host_s = 8.0 * self.packet_bytes / (host_gbps * 1e9)
        self.monitor = [integer("monitor_links", m, minimum=0, maximum=len(self.links) - 1) for m in monitor_links]
        self.sample_s = self.rtt_s / 4 if sample_s is None else positive("sample_s", sample_s)
        self.rng = generator(seed)
        self._u: list[float] = []
        self._ui = 0
        self.env = simpy.Environment()
        self.packets = 0
        self.records: list[tuple] = []
        self.queue_samples: list[tuple] = []
        self.control: list[tuple] = []
        self.stop_s = math.inf
        if isinstance(scheme, PredConfig):
            for i, m in enumerate(marking_mask):
                if m:
                    self.env.process(self._pred(i))
        if self.monitor:
            self.env.process(self._sampler())

    # ---- random numbers: drawn in blocks, consumed as Python floats ------------------------------------------
    def _uniform(self) -> float:
        if self._ui >= len(self._u):
            self._u = self.rng.random(65536).tolist()
            self._ui = 0
        u = self._u[self._ui]
        self._ui += 1
        return u

    # ---- one chunk through its path --------------------------------------------------------------------------
    def _send(self, fid: int, path: tuple[int, ...], t: float, c: int, g: float) -> tuple[float, float, int, int]:
        """Book ``c`` packets spaced ``g`` entering ``path`` at ``t``; return first/last departure, marks, drops."""
        marks = 0
        drops = 0
        links = self.links
        now = self.env.now
        for li in path:
            L = links[li]
            L.advance(now)
            if t > L.t:
                # a downstream hop (or a later sub-train): project the present queue to the arrival time
                q0 = L.q + (L.rate - L.c) * (t - L.t)
                q0 = 0.0 if q0 < 0.0 else (L.buffer if q0 > L.buffer else q0)
            else:
                q0 = L.q
            rin = 1.0 / g
            growth = (L.rate + rin - L.c) * g  # queue change per packet slot of this chunk
            q_last = q0 + growth * (c - 1)
            if q_last < 0.0:
                q_last = 0.0
            if L.marking and (q0 >= L.lo or q_last >= L.lo):
                lo, hi, maxp = L.lo, L.hi, L.maxp
                m = 0
                for k in range(c):
                    qk = q0 + growth * k
                    if qk < lo:
                        continue
                    if qk >= hi or self._uniform() < maxp * (qk - lo) / (hi - lo):
                        m += 1
                L.marks += m
                marks += m
            if q_last >= L.buffer - 1.0:
                # packets that find the buffer full are dropped (projected on the same line)
                full = L.buffer - 1.0
                first_full = 0 if q0 >= full else (math.ceil((full - q0) / growth) if growth > 0 else c)
                d = max(0, c - first_full)
                drops += d
            L.pkts += c
            L.flows.add(fid)
            L.add_train(t, rin, t + c * g)
            s = L.s
            d_first = t + (q0 + 1.0) * s
            d_last = t + (c - 1) * g + (q_last + 1.0) * s
            # the next hop sees the chunk leaving this queue: first packet at d_first, spacing at least s
            t = d_first
            if g < s:
                g = s
        if marks > c:
            marks = c
        if drops > c:
            drops = c
        return d_first, d_last, marks, drops

    # ---- a DCTCP flow ------------------------------------------------------------------------------------------
    def flow(self, fid: int, size_pkts: float, paths, is_long: bool = False):
        """simpy process of one DCTCP flow; ``paths`` is a tuple of link-id tuples (several: sprayed per chunk)."""
        env = self.env
        start = env.now
        prop = self.rtt_s
        cwnd = float(INIT_CWND_PKTS)
        ssthresh = math.inf
        alpha = 1.0
        remaining = size_pkts
        g = self.host_s
        chunk = self.chunk
        npaths = len(paths)
        pi = int(self._uniform() * npaths)
        delivered_total = 0
        d_last = start
        tx_free = start
        while remaining > 0 and (not is_long or env.now < self.stop_s):
            w = int(cwnd)
            if w > remaining:
                w = int(remaining)
            if w < 1:
                w = 1
            sent = marks = drops = 0
            d_first = -1.0
            while sent < w:
                c = w - sent if w - sent < chunk else chunk
                if npaths == 1:
                    df, dl, m, dr = self._send(fid, paths[0], env.now, c, g)
                else:
                    # spraying: the chunk's packets are spread over the paths, one sub-train per path
                    df = math.inf
                    dl = -math.inf
                    m = dr = 0
                    k = min(npaths, c)
                    base, extra = divmod(c, k)
                    for j in range(k):
                        cj = base + (1 if j < extra else 0)
                        a, b, mj, dj = self._send(fid, paths[(pi + j) % npaths], env.now + j * g, cj, g * k)
                        df = a if a < df else df
                        dl = b if b > dl else dl
                        m += mj
                        dr += dj
                    pi = (pi + k) % npaths
                if d_first < 0.0:
                    d_first = df
                if dl > d_last:
                    d_last = dl
                marks += m
                drops += dr
                sent += c
                if sent < w:
                    yield env.timeout(c * g)
            tx_free = env.now + c * g  # the NIC is busy with this flow's last train until then
            self.packets += w
            delivered = w - drops
            remaining -= delivered
            delivered_total += delivered
            alpha += DCTCP_G * (marks / w - alpha)
            if drops:
                cwnd = max(MIN_CWND_PKTS, cwnd / 2.0)
                ssthresh = cwnd
            elif marks:
                cwnd = max(MIN_CWND_PKTS, cwnd * (1.0 - alpha / 2.0))
                ssthresh = cwnd
            elif cwnd < ssthresh:
                cwnd += w
            else:
                cwnd += w / cwnd
            if cwnd > MAX_CWND_PKTS:
                cwnd = MAX_CWND_PKTS
            if remaining <= 0:
                break
            nxt = int(cwnd) if cwnd < remaining else int(remaining)
            span = d_last - d_first
            g = span / max(nxt, 1)
            if g < self.host_s:
                g = self.host_s
            wake = d_first + prop
            if wake < tx_free:
                wake = tx_free
            if wake > env.now:
                yield env.timeout(wake - env.now)
        done = remaining <= 0
        end = d_last + prop
        if done and end > env.now:
            yield env.timeout(end - env.now)
        self.records.append(
            (fid, start, (end - start) if done else math.nan, done, is_long, delivered_total)
        )

    # ---- PRED's controllers on one link ----------------------------------------------------------------------
    def _pred(self, li: int):
        cfg: PredConfig = self.scheme  # type: ignore[assignment]
        env = self.env
        L = self.links[li]
        fcs_dt = cfg.fcs_period_rtts * self.rtt_s
        qla_every = max(1, round(cfg.qla_period_rtts / cfg.fcs_period_rtts))
        qref = cfg.queue_ref_pkts or L.c * self.rtt_s
        offset = 0.0
        min_k = cfg.min_k_pkts
        phase = 0
        utils = [0.0, 0.0, 0.0]
        mode = "slope"
        base_param = 0.0
        n_flows = 1
        tick = 0
        served0, area0, t0 = L.served, L.area, env.now
        monitored = li in self.monitor

        def fcs_factor(n: int) -> float:
            if not cfg.fcs:
                return 1.0
            return float(n) if cfg.fcs_scaling == "linear" else math.sqrt(n)

        def apply() -> float:
            slope = cfg.unit_slope_per_pkt * fcs_factor(n_flows) + offset
            slope = max(slope, cfg.unit_slope_per_pkt)
            L.lo = min_k
            L.hi = min_k + 1.0 / slope
            L.maxp = 1.0
            return slope

        while True:
            yield env.timeout(fcs_dt)
            now = env.now
            n_flows = max(1, len(L.flows))
            L.flows.clear()
            tick += 1
            if cfg.qla and tick % qla_every == 0:
                L.advance(now)
                span = now - t0
                util = (L.served - served0) / (L.c * span)
                qmean = (L.area - area0) / span
                served0, area0, t0 = L.served, L.area, now
                utils[phase] = cfg.throughput_weight * util - (1.0 - cfg.throughput_weight) * qmean / qref
                if phase == 0:
                    fcs_slope = cfg.unit_slope_per_pkt * fcs_factor(n_flows)
                    mode = "slope" if fcs_slope >= cfg.min_slope_for_slope_tuning else "min_k"
                    if mode == "min_k":
                        offset = 0.0
                    base_param = offset if mode == "slope" else min_k
                    phase = 1
                    step = +1
                elif phase == 1:
                    phase = 2
                    step = -1
                else:
                    best = int(np.argmax(utils))
                    step = (0, +1, -1)[best]
                    phase = 0
                if mode == "slope":
                    offset = min(max(base_param + step * cfg.slope_step, -cfg.max_slope_offset),
                                 cfg.max_slope_offset)
                else:
                    min_k = min(max(0.0, base_param + step * cfg.min_k_step_pkts), cfg.max_min_k_pkts)
            slope = apply()
            if monitored:
                self.control.append((now, li, n_flows, slope, min_k))

    def _sampler(self):
        env = self.env
        while True:
            for li in self.monitor:
                self.queue_samples.append((env.now, li, self.links[li].queue_at(env.now)))
            yield env.timeout(self.sample_s)

    # ---- running -----------------------------------------------------------------------------------------------
    def _arrivals(self, starts, sizes_pkts, paths, first_id: int):
        env = self.env
        for i, (t, n, p) in enumerate(zip(starts, sizes_pkts, paths)):
            if t > env.now:
                yield env.timeout(t - env.now)
            env.process(self.flow(first_id + i, n, p))

    def run(
        self,
        *,
        duration_s: float,
        long_paths=(),
        short_starts_s=(),
        short_sizes_bytes=(),
        short_paths=(),
        warmup_s: float = 0.0,
        drain_s: float = 0.0,
    ) -> SimResult:
        """Run long flows (from time 0, staggered over one RTT) and short flows (given start times) and collect.

        Long flows stop at ``duration_s``; short flows keep running until ``duration_s + drain_s``. Link statistics
        cover ``[warmup_s, duration_s]``.
        """
        if self.env.now > 0 or self.records:
            raise RuntimeError("a Network runs once; build a new one for another run")
        duration_s = positive("duration_s", duration_s)
        warmup_s = in_range("warmup_s", warmup_s, 0.0, duration_s, high_inclusive=False)
        drain_s = nonnegative("drain_s", drain_s)
        env = self.env
        n_long = len(long_paths)
        offsets = self.rng.uniform(0.0, self.rtt_s, n_long)

        def delayed(fid, paths, t):
            yield env.timeout(t)
            yield from self.flow(fid, math.inf, paths, True)

        for i, p in enumerate(long_paths):
            env.process(delayed(i, p, float(offsets[i])))
        sizes_bytes = np.asarray(short_sizes_bytes, dtype=np.int64)
        sizes_pkts = np.maximum(1, -(-sizes_bytes // self.packet_bytes))
        starts = np.asarray(short_starts_s, dtype=float)
        if starts.size:
            env.process(self._arrivals(starts.tolist(), sizes_pkts.tolist(), list(short_paths), n_long))
        self.stop_s = duration_s
        if warmup_s > 0:
            env.run(until=warmup_s)
            for L in self.links:
                L.advance(warmup_s)
                L.served = L.area = 0.0
                L.pkts = L.marks = 0
                L.drops = 0.0
                L.t0 = warmup_s
        env.run(until=duration_s)
        span = duration_s - warmup_s
        link_rows = []
        for i, L in enumerate(self.links):
            if not self.scheme_links[i]:
                continue
            L.advance(duration_s)
            link_rows.append((i, L.served / (L.c * span), L.area / span, L.pkts, L.marks, L.drops))
        if drain_s > 0:
            env.run(until=duration_s + drain_s)
        rec = pd.DataFrame(
            self.records, columns=["flow_id", "start_s", "fct_s", "finished", "is_long", "delivered_pkts"]
        )
        ids = np.arange(n_long + starts.size)
        size = np.concatenate([np.full(n_long, -1, dtype=np.int64), sizes_bytes])
        start = np.concatenate([offsets, starts])
        flows = pd.DataFrame({"flow_id": ids, "size_bytes": size, "start_s": start, "is_long": ids < n_long})
        flows = flows.merge(rec[["flow_id", "fct_s", "finished", "delivered_pkts"]], on="flow_id", how="left")
        flows["finished"] = flows["finished"].fillna(False).astype(bool)
        flows["delivered_pkts"] = flows["delivered_pkts"].fillna(0).astype(np.int64)
        return SimResult(
            flows=flows,
            queue=pd.DataFrame(self.queue_samples, columns=["time_s", "link", "queue_pkts"]),
            links=pd.DataFrame(
                link_rows, columns=["link", "utilization", "mean_queue_pkts", "pkts", "marks", "drops"]
            ),
            control=pd.DataFrame(self.control, columns=["time_s", "link", "n_flows", "slope_per_pkt", "min_k_pkts"]),
            packets=self.packets,
            duration_s=float(env.now),
        )


def dumbbell(
    n_long_flows: int,
    scheme: RedMarking | PredConfig,
    *,
    load: float = 0.0,
    capacity_gbps: float = 10.0,
    rtt_s: float = 100e-6,
    duration_s: float = 0.05,
    warmup_s: float | None = None,
    buffer_pkts: float = 1000.0,
    packet_bytes: int = 1500,
    sizes: FlowSizeCDF | None = None,
    chunk_pkts: int = 16,
    seed: Seed = None,
) -> SimResult:
    """One bottleneck shared by ``n_long_flows`` long DCTCP flows and Poisson web-search flows at ``load``.

    Every sender has its own NIC at the bottleneck's rate, so the only queue is the bottleneck's (link 0).

    Parameters
    ----------
    n_long_flows : int
        Long-lived flows (>= 0).
    scheme : RedMarking or PredConfig
        Static thresholds or PRED on the bottleneck.
    load : float
        Offered load of short flows, fraction of capacity in ``[0, 1)``.
    capacity_gbps, rtt_s, buffer_pkts, packet_bytes : float
        Bottleneck capacity, base RTT, buffer and packet size.
    duration_s, warmup_s : float
        Simulated time and the initial part excluded from link statistics (default: a fifth).
    sizes : FlowSizeCDF, optional
        Short-flow size distribution (default web search).
    chunk_pkts : int
        Largest train per simpy event.
    seed : int, Generator or None

    Returns
    -------
    SimResult

    Examples
    --------
    >>> r = dumbbell(4, RedMarking(20, 200, 0.1), duration_s=0.01, seed=0)
    >>> bool(r.links.utilization.iloc[0] > 0.9)
    True
    """
    n_long_flows = integer("n_long_flows", n_long_flows, minimum=0)
    load = in_range("load", load, 0.0, 1.0, high_inclusive=False)
    duration_s = positive("duration_s", duration_s)
    warmup_s = duration_s / 5 if warmup_s is None else warmup_s
    rng = generator(seed)
    net = Network(
        [capacity_gbps], [True], scheme, rtt_s=rtt_s, host_gbps=capacity_gbps, buffer_pkts=buffer_pkts,
        packet_bytes=packet_bytes, chunk_pkts=chunk_pkts, monitor_links=(0,), seed=rng,
    )
    if load > 0:
        flows = poisson_flows(load, capacity_gbps, duration_s, sizes=sizes, seed=rng)
    else:
        flows = pd.DataFrame({"start_s": np.zeros(0), "size_bytes": np.zeros(0, dtype=np.int64)})
    one = ((0,),)
    return net.run(
        duration_s=duration_s,
        long_paths=[one] * n_long_flows,
        short_starts_s=flows["start_s"].to_numpy(),
        short_sizes_bytes=flows["size_bytes"].to_numpy(),
        short_paths=[one] * len(flows),
        warmup_s=warmup_s,
        drain_s=0.0,
    )


def leaf_spine_fct(
    load: float,
    scheme: RedMarking | PredConfig,
    *,
    topology=None,
    routing: str = "ecmp",
    rtt_s: float = 100e-6,
    duration_s: float = 0.02,
    drain_s: float | None = None,
    warmup_s: float | None = None,
    buffer_pkts: float = 1000.0,
    packet_bytes: int = 1500,
    sizes: FlowSizeCDF | None = None,
    chunk_pkts: int = 16,
    nic_marking: RedMarking | None = RedMarking(5, 20, 1.0),
    seed: Seed = None,
) -> SimResult:
    """Fabric-wide FCT: Poisson web-search flows between random host pairs of a leaf-spine fabric.

    Every switch output (leaf uplinks, spine downlinks, leaf-to-host ports) runs ``scheme``. The flows of one host
    share its NIC, whose queue a fixed shallow ramp (``nic_marking``, 5 to 20 packets) keeps short, standing in for
    the host stack's TCP small queues.
    The topology and the flow -> link-id mapping come from :mod:`workbench.fabric.topology`.

    Parameters
    ----------
    load : float
        Offered load per host NIC, fraction in ``(0, 1)``.
    scheme : RedMarking or PredConfig
    topology : LeafSpine, optional
        Default ``leaf_spine(8, 4, 16, host_gbps=10, uplink_gbps=40)``: 128 hosts, non-blocking.
    routing : {"ecmp", "spray"}
        ECMP hashes each flow to one spine; spraying spreads every train over all spines.
    rtt_s, duration_s, drain_s, buffer_pkts, packet_bytes : float
        Base RTT, arrival window, extra time for flows to finish (default ``duration_s``), buffer, packet size.
    warmup_s : float, optional
        Start of the window for link statistics (default a fifth of ``duration_s``); pass the same value as
        ``min_start_s`` to :func:`fct_summary` to leave out flows that started into an empty fabric.
    sizes : FlowSizeCDF, optional
        Flow sizes (default web search).
    chunk_pkts : int
    seed : int, Generator or None

    Returns
    -------
    SimResult
        Monitored links are the first leaf uplink and the first host downlink.

    Examples
    --------
    >>> from workbench.fabric.topology import leaf_spine
    >>> topo = leaf_spine(2, 2, 4, host_gbps=10, uplink_gbps=20)
    >>> r = leaf_spine_fct(0.3, RedMarking(20, 200, 0.1), topology=topo, duration_s=0.005, seed=0)
    >>> bool(r.flows.finished.any())
    True
    """
    from ..fabric.collectives import random_destinations
    from ..fabric.topology import LeafSpine, leaf_spine, path_links

    load = in_range("load", load, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    routing = one_of("routing", routing, ("ecmp", "spray"))
    topo = leaf_spine(8, 4, 16, host_gbps=10.0, uplink_gbps=40.0) if topology is None else topology
    if not isinstance(topo, LeafSpine):
        raise TypeError(f"topology must be a LeafSpine, got {type(topo).__name__}")
    if topo.n_hosts < 2:
        raise ValueError(f"topology must have at least 2 hosts, got {topo.n_hosts}")
    duration_s = positive("duration_s", duration_s)
    drain_s = duration_s if drain_s is None else nonnegative("drain_s", drain_s)
    warmup_s = duration_s / 5 if warmup_s is None else warmup_s
    rng = generator(seed)
    n = topo.n_hosts
    flows = poisson_flows(load, topo.host_gbps * n, duration_s, sizes=sizes, seed=rng)
    f = len(flows)
    src = rng.integers(0, n, f)
    dst = random_destinations(src, n, seed=rng)
    cap = np.asarray(topo.capacity_gbps, dtype=float)
    marking = np.asarray(topo.link_kind) != 0  # every switch output marks; host NIC (host_up) does not
    if (cap <= 0).any():
        raise ValueError("topology has failed links; leaf_spine_fct needs a fabric without failures")
    if routing == "ecmp":
        spine = rng.integers(0, topo.spines, f)
        links = path_links(topo, src, dst, spine)
        paths = [(tuple(int(x) for x in row if x >= 0),) for row in links]
    else:
        per_spine = [path_links(topo, src, dst, np.full(f, p)) for p in range(topo.spines)]
        stacked = np.stack(per_spine, axis=1)  # (F, spines, 4)
        local = topo.host_leaf(src) == topo.host_leaf(dst)
        paths = []
        for i in range(f):
            rows = stacked[i, :1] if local[i] else stacked[i]
            paths.append(tuple(tuple(int(x) for x in row if x >= 0) for row in rows))
    monitor = (int(topo.leaf_up(0, 0)), n + 0)
    net = Network(
        cap, marking, scheme, rtt_s=rtt_s, host_gbps=topo.host_gbps, buffer_pkts=buffer_pkts,
        packet_bytes=packet_bytes, chunk_pkts=chunk_pkts, monitor_links=monitor, nic_marking=nic_marking, seed=rng,
    )
    return net.run(
        duration_s=duration_s,
        short_starts_s=flows["start_s"].to_numpy(),
        short_sizes_bytes=flows["size_bytes"].to_numpy(),
        short_paths=paths,
        warmup_s=warmup_s,
        drain_s=drain_s,
    )


def fct_summary(flows: pd.DataFrame, quantiles=(0.5, 0.99), *, min_start_s: float = 0.0) -> pd.DataFrame:
    """FCT percentiles (seconds) of finished short flows by size class, plus the count and unfinished count.

    Only flows that started at or after ``min_start_s`` count (to leave out the warm-up of an empty network).

    Examples
    --------
    >>> df = pd.DataFrame({"size_bytes": [1000, 2000, 5_000_000], "fct_s": [1e-4, 2e-4, 5e-3],
    ...                    "start_s": [0.0, 0.1, 0.2], "finished": [True, True, True],
    ...                    "is_long": [False, False, False]})
    >>> fct_summary(df)["count"].tolist()
    [2, 1, 0]
    """
    from .workload import SIZE_CLASSES, size_class

    short = flows[~flows["is_long"].astype(bool) & (flows["start_s"] >= min_start_s)]
    cls = size_class(short["size_bytes"].to_numpy())
    rows = []
    for label, _, _ in SIZE_CLASSES:
        sel = short[(cls == label)]
        done = sel[sel["finished"].astype(bool)]["fct_s"].to_numpy(dtype=float)
        row = {"size_class": label, "count": int(done.size), "unfinished": int(len(sel) - done.size)}
        for q in quantiles:
            row[f"p{round(q * 100):g}_s"] = float(np.quantile(done, q)) if done.size else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


