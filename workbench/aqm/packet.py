"""Packet-level discrete-event simulation (simpy) of DCTCP flows through RED/ECN or PRED switch queues.

What is simulated
-----------------
Every flow is a simpy process running DCTCP: an initial window of 10 packets in slow start, an EWMA ``alpha`` of the
fraction of marked packets per window (gain 1/16), a cut of ``cwnd * alpha / 2`` in a window that saw a mark, plus one
packet per window otherwise; a dropped packet halves the window and is sent again. A window is sent *ack-clocked*: the
next window starts when the first acknowledgement of the previous one returns (one base RTT after that packet left the
last queue) and its packet ``i`` may leave when the ACK clock allows it: the previous window's ACKs return at the
spacing at which its packets left the last queue and release the new window at ``cwnd`` packets per that span. A
sender behind its clock (its previous window took longer to send than an RTT) sends at host line rate until it
catches up, as a TCP sender with fewer packets in flight than its window does; the first round goes at line rate.

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

How far that is from per-packet truth
-------------------------------------
Lightly loaded, the trains reproduce the per-packet engine (:mod:`workbench.aqm.perpacket`) flow by flow. On the
90%-loaded ``fabric-websearch-128`` fabric they do not: small- and medium-flow FCT p99s come out 1.8-6.8x the
per-packet ones, large flows 10-30% high, only small-flow medians within 10% (``benchmarks/bench_aqm.py``).
Trains miss the trains that start while they arrive, and marks and drops (hence the 250 ms timeouts) are read off
the projected fluid queue, not the packets queued. Replays use the per-packet engine (also the faster one).

PRED's two controllers run on every marking queue as simpy processes (:mod:`workbench.aqm.pred`); static
thresholds (a fixed :class:`~workbench.aqm.red.RedMarking`) are the baseline. Scenarios built on this engine (one
bottleneck, a leaf-spine fabric) are in :mod:`workbench.aqm.scenarios`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import simpy

from .._rng import Seed, generator
from .._validate import in_range, integer, nonnegative, positive
from .fluid import DCTCP_G, MIN_CWND_PKTS
from .pred import PredConfig, pred_controller
from .red import RedMarking
from .trains import TrainQueue

__all__ = ["SimResult", "Network"]

INIT_CWND_PKTS = 10
#: Receive-window cap on the congestion window (a lone sender whose NIC is the bottleneck never sees a mark).
MAX_CWND_PKTS = 4096.0


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

    Build one per experiment and call :meth:`run` once (the simpy clock does not rewind); :func:`~workbench.aqm.scenarios.dumbbell` and
    :func:`~workbench.aqm.scenarios.leaf_spine_fct` do both.

    Parameters
    ----------
    capacity_gbps : array-like
        Capacity of every link (Gbit/s).
    marking_links : array-like of bool
        Which links are switch queues with ECN marking (host NICs are not).
    marking : RedMarking or PredConfig
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
    hop_rtt_s : float or None
        If given, a flow's base RTT is this times the number of links on its path (both-way propagation and the ACK's
        serialization per link) instead of ``rtt_s`` for every path.
    ack_bytes : int
        With ACK paths given to :meth:`run`, every train of data is answered by a train of ACKs of this size on the
        reverse path, which loads those queues, and each window's ACK clock waits for the queues it meets there.
        0: ACKs take no capacity and return after the base RTT.
    min_rto_s : float or None
        If given, a window that loses packets of its flow's last train (no later packets to trigger fast
        retransmit) waits this retransmission timeout and restarts from one packet; ``None``: every loss is
        recovered by fast retransmit.
    seed : int, Generator or None
    """

    def __init__(
        self,
        capacity_gbps,
        marking_links,
        marking: RedMarking | PredConfig,
        *,
        rtt_s: float = 100e-6,
        host_gbps: float = 10.0,
        buffer_pkts: float = 1000.0,
        packet_bytes: int = 1500,
        chunk_pkts: int = 16,
        monitor_links=(0,),
        sample_s: float | None = None,
        nic_marking: RedMarking | None = None,
        hop_rtt_s: float | None = None,
        ack_bytes: int = 0,
        min_rto_s: float | None = None,
        seed: Seed = None,
    ) -> None:
        cap = np.asarray(capacity_gbps, dtype=float)
        if cap.ndim != 1 or cap.size == 0 or not (cap > 0).all() or not np.isfinite(cap).all():
            raise ValueError("capacity_gbps must be a non-empty 1-D array of positive, finite capacities")
        marking_mask = np.broadcast_to(np.asarray(marking_links, dtype=bool), cap.shape)
        if not isinstance(marking, (RedMarking, PredConfig)):
            raise TypeError(f"marking must be a RedMarking or a PredConfig, got {type(marking).__name__}")
        self.rtt_s = positive("rtt_s", rtt_s)
        self.hop_rtt_s = None if hop_rtt_s is None else positive("hop_rtt_s", hop_rtt_s)
        self.ack_frac = integer("ack_bytes", ack_bytes, minimum=0) / float(packet_bytes)
        self.min_rto_s = None if min_rto_s is None else positive("min_rto_s", min_rto_s)
        host_gbps = positive("host_gbps", host_gbps)
        buffer_pkts = positive("buffer_pkts", buffer_pkts)
        self.packet_bytes = integer("packet_bytes", packet_bytes, minimum=64)
        self.chunk = integer("chunk_pkts", chunk_pkts, minimum=1)
        self.marking = marking
        pps = cap * 1e9 / (8.0 * self.packet_bytes)
        static = marking if isinstance(marking, RedMarking) else marking.fluid_marking().marking
        if nic_marking is not None and not isinstance(nic_marking, RedMarking):
            raise TypeError(f"nic_marking must be a RedMarking or None, got {type(nic_marking).__name__}")
        # host NICs queue in the host stack, which does not drop; they may signal a fixed, shallow ramp
        self.links = [
            TrainQueue(float(c), buffer_pkts if m else math.inf, static if m else nic_marking)
            for c, m in zip(pps, marking_mask)
        ]
        self.marking_links = marking_mask.copy()
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
        if isinstance(marking, PredConfig):
            for i, m in enumerate(marking_mask):
                if m:
                    self.env.process(pred_controller(self, i))
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
                # a downstream hop (or a later sub-train): project the queue to the arrival time through the
                # trains already booked there
                q0, rate = L.project(t)
            else:
                q0, rate = L.q, L.rate
            rin = 1.0 / g
            growth = (rate + rin - L.c) * g  # queue change per packet slot of this chunk
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
            # the next hop sees the chunk as it left this queue: first packet at d_first, then at the spacing of its
            # departures (stretched by the queue it built here, never below this link's serialization)
            t = d_first
            if c > 1:
                g = (d_last - d_first) / (c - 1)
            if g < s:
                g = s
        if marks > c:
            marks = c
        if drops > c:
            drops = c
        return d_first, d_last, marks, drops

    # ---- a DCTCP flow ------------------------------------------------------------------------------------------
    def _ack_delay(self, path: tuple[int, ...], t: float) -> float:
        """Queueing an ACK leaving the receiver at ``t`` meets on the reverse ``path`` (the queues projected to ``t``)."""
        wait = 0.0
        for li in path:
            L = self.links[li]
            q = L.project(t)[0] if t > L.t else L.q
            wait += q * L.s
        return wait

    def _book_acks(self, path: tuple[int, ...], t: float, c: int, g: float) -> None:
        """The ACK train of ``c`` data packets leaving the last hop from ``t`` at spacing ``g``."""
        now = self.env.now
        rate = self.ack_frac / g
        for li in path:
            L = self.links[li]
            L.advance(now)
            L.add_train(t if t > now else now, rate, (t if t > now else now) + c * g)

    def flow(self, fid: int, size_pkts: float, paths, is_long: bool = False, ack_paths=None):
        """simpy process of one DCTCP flow; ``paths`` is a tuple of link-id tuples (several: sprayed per chunk),
        ``ack_paths`` the matching reverse paths (or ``None``)."""
        env = self.env
        start = env.now
        prop = self.rtt_s if self.hop_rtt_s is None else self.hop_rtt_s * len(paths[0])
        acks = ack_paths if (ack_paths is not None and self.ack_frac > 0) else None
        cwnd = float(INIT_CWND_PKTS)
        ssthresh = math.inf
        alpha = 1.0
        remaining = size_pkts
        host_s = g = self.host_s
        ack0, g_ack = start, 0.0  # the first window leaves at line rate
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
            first_mark = -1  # index in the window of its first marked packet (marks fall at a train's tail)
            d_first = -1.0
            while sent < w:
                c = w - sent if w - sent < chunk else chunk
                # packet i of the window may leave once the ACK clock allows it (ack0 + i * g_ack), at line rate
                # when the clock is ahead (the sender is behind its window); the chunk spreads evenly up to the
                # time its last packet is allowed
                now = env.now
                if c > 1:
                    g = (ack0 + (sent + c - 1) * g_ack - now) / (c - 1)
                    if g < host_s:
                        g = host_s
                else:
                    g = host_s
                if npaths == 1:
                    df, dl, m, dr = self._send(fid, paths[0], env.now, c, g)
                    if acks is not None:
                        self._book_acks(acks[0], df, c, (dl - df) / (c - 1) if c > 1 else g)
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
                        if acks is not None:
                            self._book_acks(acks[(pi + j) % npaths], a, cj, (b - a) / (cj - 1) if cj > 1 else g * k)
                        df = a if a < df else df
                        dl = b if b > dl else dl
                        m += mj
                        dr += dj
                    pi = (pi + k) % npaths
                if d_first < 0.0:
                    d_first = df
                if dl > d_last:
                    d_last = dl
                if m and first_mark < 0:
                    first_mark = sent + c - m
                marks += m
                drops += dr
                sent += c
                if sent < w:
                    nxt = ack0 + sent * g_ack
                    if nxt < now + c * g:
                        nxt = now + c * g
                    yield env.timeout(nxt - now)
            tx_free = env.now + c * g  # the NIC is busy with this flow's last train until then
            # a loss in the flow's last train leaves no later packets to signal it: the retransmission timeout
            timeout = self.min_rto_s is not None and dr > 0 and w >= remaining
            self.packets += w
            delivered = w - drops
            remaining -= delivered
            delivered_total += delivered
            alpha += DCTCP_G * (marks / w - alpha)
            if timeout:
                ssthresh = max(MIN_CWND_PKTS, cwnd / 2.0)
                cwnd = 1.0
            elif drops:
                cwnd = max(MIN_CWND_PKTS, cwnd / 2.0)
                ssthresh = cwnd
            elif marks:
                # ACK by ACK: slow start up to the first ECE, then one cut (no growth for the rest of the window)
                if cwnd < ssthresh:
                    cwnd += first_mark
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
            # the previous window's ACKs return over ``span`` and release ``cwnd`` packets at that clock (a last,
            # partial window goes out at the same clock, not stretched over the span)
            span = d_last - d_first
            g_ack = span / max(int(cwnd), 1)
            ack0 = d_first + prop
            if acks is not None:
                ack0 += self._ack_delay(acks[0], d_first)
            wake = ack0 if ack0 > tx_free else tx_free
            if timeout:
                assert self.min_rto_s is not None  # timeout is only set when a retransmission timeout is modelled
                wake = ack0 = env.now + self.min_rto_s
                g_ack = 0.0
            if wake > env.now:
                yield env.timeout(wake - env.now)
        done = remaining <= 0
        end = d_last + prop
        if acks is not None:
            end += self._ack_delay(acks[0], d_last)
        if done and end > env.now:
            yield env.timeout(end - env.now)
        self.records.append((fid, start, (end - start) if done else math.nan, done, is_long, delivered_total))

    def _sampler(self):
        env = self.env
        while True:
            for li in self.monitor:
                self.queue_samples.append((env.now, li, self.links[li].queue_at(env.now)))
            yield env.timeout(self.sample_s)

    # ---- running -----------------------------------------------------------------------------------------------
    def _arrivals(self, starts, sizes_pkts, paths, ack_paths, first_id: int):
        env = self.env
        for i, (t, n, p) in enumerate(zip(starts, sizes_pkts, paths)):
            if t > env.now:
                yield env.timeout(t - env.now)
            env.process(self.flow(first_id + i, n, p, False, ack_paths[i] if ack_paths else None))

    def run(
        self,
        *,
        duration_s: float,
        long_paths=(),
        short_starts_s=(),
        short_sizes_bytes=(),
        short_paths=(),
        short_ack_paths=(),
        warmup_s: float = 0.0,
        drain_s: float = 0.0,
    ) -> SimResult:
        """Run long flows (from time 0, staggered over one RTT) and short flows (given start times) and collect.

        ``short_ack_paths`` (optional) holds the reverse paths matching ``short_paths`` (see ``ack_bytes``).

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
            env.process(
                self._arrivals(starts.tolist(), sizes_pkts.tolist(), list(short_paths), list(short_ack_paths), n_long)
            )
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
            if not self.marking_links[i]:
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
            links=pd.DataFrame(link_rows, columns=["link", "utilization", "mean_queue_pkts", "pkts", "marks", "drops"]),
            control=pd.DataFrame(self.control, columns=["time_s", "link", "n_flows", "slope_per_pkt", "min_k_pkts"]),
            packets=self.packets,
            duration_s=float(env.now),
        )
