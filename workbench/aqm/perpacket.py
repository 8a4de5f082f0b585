"""Per-packet ground truth: every data packet and every ACK through every hop's FIFO, ACK-clocked DCTCP senders.

This is the reference the chunked engine (:mod:`workbench.aqm.packet`, which moves trains of packets over fluid
queues) is validated against on the same flows and network (:func:`workbench.aqm.replay.replay` with
``chunk_pkts=1``). It is a plain event-heap simulation (no simpy) of the network described by a leaf-spine
connection-matrix study such as ``fabric-websearch-128``:

* **Links.** Every directed link is a FIFO output queue with a capacity and a propagation delay; a packet arriving at
  time ``t`` leaves at ``max(t, busy_until) + size / capacity`` (store and forward) and reaches the next hop one
  propagation delay later. The packets in a queue (the one in service counted whole) decide marking and dropping:
  a switch port drops a packet that finds ``buffer_pkts`` packets there (drop-tail) and marks it with the RED/ECN
  probability of that count (:meth:`~workbench.aqm.red.RedMarking.step` is DCTCP's step marking). Host NICs are
  FIFO queues too (a host's flows share its NIC) that neither mark nor drop.
* **Packets.** A flow of ``size_bytes`` is ``ceil(size / packet_bytes)`` packets, the last one carrying the remainder
  (its serialization is shorter). The receiver acknowledges every packet at once with an ``ack_bytes`` packet that
  echoes the CE mark and travels the reverse path through the same queues as data (it is never dropped).
* **Senders (DCTCP).** No connection set-up (the flow starts sending at its start time; the network description
  states none). Initial window ``init_cwnd_pkts``; per ACK, ``cwnd += 1`` in slow start and ``1/cwnd`` after; an ACK
  with ECE cuts ``cwnd`` to ``cwnd (1 - alpha/2)`` at most once per window of data, and ``alpha`` is updated once per
  window with gain ``g`` from the fraction of marked ACKs. A packet is sent whenever the packets in flight are fewer
  than ``cwnd`` (ACK clocking); windows are never below one packet.
* **Losses.** A dropped packet is detected when three later packets of its flow have been acknowledged (fast
  retransmit, as with SACK): ``cwnd`` halves (once per window) and the packet is sent again. A loss with fewer than
  three later packets is detected by the retransmission timeout, ``min_rto_s`` after the drop, which resets
  ``cwnd`` to one packet.
* **Completion.** A flow completes when the ACK of its last outstanding packet reaches the sender; its FCT is that
  time minus its start.

Cost: about ten heap events per packet on a four-link path. Python processes about a million events in a few
seconds, so a 25 ms workload of a loaded 128-host fabric (2.4 million packets) takes minutes; use the chunked engine
for sweeps and this one to validate it.
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import pandas as pd

from .._rng import Seed, generator
from .._validate import integer, nonnegative, positive
from .red import RedMarking

__all__ = ["simulate_packets"]

_DATA, _ACK, _START, _RTO = 0, 1, 2, 3


def simulate_packets(
    capacity_gbps,
    marking_links,
    marking: RedMarking,
    data_paths,
    ack_paths,
    starts_s,
    sizes_bytes,
    *,
    link_delay_s: float,
    buffer_pkts: int,
    packet_bytes: int = 1500,
    ack_bytes: int = 40,
    init_cwnd_pkts: int = 10,
    dctcp_g: float = 1.0 / 16.0,
    min_rto_s: float = 0.25,
    seed: Seed = None,
) -> pd.DataFrame:
    """Run flows packet by packet and return their completion times.

    Parameters
    ----------
    capacity_gbps : array-like
        Capacity of every directed link (Gbit/s).
    marking_links : array-like of bool
        Switch output ports (mark and drop); the others are host NICs (FIFO only).
    marking : RedMarking
        Marking of every switch port, on the number of packets in the queue.
    starts_s, sizes_bytes : array-like
        Start time and size of every flow.
    link_delay_s : float
        Propagation delay of every link.
    buffer_pkts : int
        Packets a switch port holds (drop-tail beyond).
    packet_bytes, ack_bytes, init_cwnd_pkts : int
    dctcp_g : float
        DCTCP's EWMA gain.
    min_rto_s : float
        Retransmission timeout.
    seed : int, Generator or None
        Random stream of the marking draws (only a ramp with probabilities below 1 uses it).

    Returns
    -------
    DataFrame
        ``flow_id, size_bytes, start_s, fct_s, finished, retransmits``, one row per flow.

    Examples
    --------
    One 15 kB flow over one 10 Gbit/s link with 1 us delay: ten packets in the first window, each 1.2 us of
    serialization; the last ACK returns 10 x 1.2 + 1 + 0.032 + 1 us after the start.

    >>> fl = simulate_packets([10.0, 10.0], [False, False], RedMarking.step(15), [((0,),)], [((1,),)], [0.0], [15_000],
    ...                       link_delay_s=1e-6, buffer_pkts=100)
    >>> round(float(fl.fct_s.iloc[0]) * 1e6, 3)
    14.032
    """
    if not isinstance(marking, RedMarking):
        raise TypeError(
            f"marking must be a RedMarking (the per-packet engine runs static marking), got {type(marking).__name__}"
        )
    cap = np.asarray(capacity_gbps, dtype=float)
    if cap.ndim != 1 or cap.size == 0 or not (cap > 0).all() or not np.isfinite(cap).all():
        raise ValueError("capacity_gbps must be a non-empty 1-D array of positive, finite capacities")
    mask = np.broadcast_to(np.asarray(marking_links, dtype=bool), cap.shape)
    delay = nonnegative("link_delay_s", link_delay_s)
    buffer = integer("buffer_pkts", buffer_pkts, minimum=1)
    mtu = integer("packet_bytes", packet_bytes, minimum=64)
    ackb = integer("ack_bytes", ack_bytes, minimum=1)
    iw = integer("init_cwnd_pkts", init_cwnd_pkts, minimum=1)
    g = positive("dctcp_g", dctcp_g)
    rto = positive("min_rto_s", min_rto_s)
    starts = np.asarray(starts_s, dtype=float)
    sizes = np.asarray(sizes_bytes, dtype=np.int64)
    n = starts.size
    if sizes.shape != starts.shape or len(data_paths) != n or len(ack_paths) != n:
        raise ValueError("starts_s, sizes_bytes, data_paths and ack_paths must have one entry per flow")
    if n and (sizes.min() < 1 or not np.isfinite(starts).all() or starts.min() < 0):
        raise ValueError("sizes_bytes must be >= 1 and starts_s finite and >= 0")
    rng = generator(seed)

    byte_s = (8.0 / (cap * 1e9)).tolist()  # seconds per byte, per link
    marks = mask.tolist()
    lo, hi, maxp = marking.min_k_pkts, marking.max_k_pkts, marking.max_p
    busy = [0.0] * cap.size
    mtu_s = [mtu * b for b in byte_s]  # a full packet's serialization per link: the unit of queue counting
    dpath = [tuple(tuple(int(x) for x in p) for p in alts) for alts in data_paths]
    apath = [tuple(tuple(int(x) for x in p) for p in alts) for alts in ack_paths]
    if any(len(a) != len(b) or not a for a, b in zip(dpath, apath)):
        raise ValueError("every flow needs as many ACK paths as data paths, and at least one")
    npk = (-(-sizes // mtu)).tolist()
    last_bytes = (sizes - (sizes - 1) // mtu * mtu).tolist()
    # sender state
    nxt = [0] * n  # next new packet to send
    acked = [0] * n  # packets acknowledged
    inflight = [0] * n  # sent, neither acknowledged nor known lost
    cwnd = [float(iw)] * n
    ssth = [math.inf] * n
    alpha = [1.0] * n
    win_end = [0] * n  # alpha is updated when the ACK of this packet (or a later one) arrives
    win_acks = [0] * n
    win_marks = [0] * n
    cut_end = [-1] * n  # no further ECN/loss cut until a packet at or after this one is acknowledged
    lost: list[dict] = [dict() for _ in range(n)]  # seq -> later ACKs seen since the loss
    resend: list[list] = [[] for _ in range(n)]
    retx = [0] * n
    done_t = [math.nan] * n
    heap: list = []
    push = heapq.heappush
    pop = heapq.heappop
    cnt = 0
    u = rng.random(4096).tolist()
    ui = 0

    def hop(li: int, t: float, nbytes: int, ce: int, mark_here: bool) -> tuple[float, int, bool]:
        """Enqueue at link ``li`` at ``t``: (arrival at the next hop, CE, dropped)."""
        nonlocal ui, u
        b = busy[li]
        if b > t:
            qp = math.ceil((b - t) / mtu_s[li] - 1e-9)
            if mark_here:
                if qp >= buffer:
                    return 0.0, ce, True
                if qp >= lo:
                    if qp >= hi:
                        ce = 1
                    else:
                        if ui >= len(u):
                            u = rng.random(4096).tolist()
                            ui = 0
                        if u[ui] < maxp * (qp - lo) / (hi - lo):
                            ce = 1
                        ui += 1
            d = b + nbytes * byte_s[li]
        else:
            d = t + nbytes * byte_s[li]
        busy[li] = d
        return d + delay, ce, False

    def send(f: int, t: float) -> None:
        """Send what the window allows (retransmissions first) into the flow's NIC at ``t``."""
        nonlocal cnt
        alts = dpath[f]
        k = len(alts)
        while inflight[f] < int(cwnd[f]):
            if resend[f]:
                s = resend[f].pop()
            elif nxt[f] < npk[f]:
                s = nxt[f]
                nxt[f] += 1
            else:
                return
            size = last_bytes[f] if s == npk[f] - 1 else mtu
            inflight[f] += 1
            first = alts[s % k][0]
            ta, ce, _ = hop(first, t, size, 0, marks[first])
            cnt += 1
            push(heap, (ta, cnt, _DATA, f, 1, s, ce))

    for f in range(n):
        cnt += 1
        push(heap, (float(starts[f]), cnt, _START, f, 0, 0, 0))

    while heap:
        t, _, kind, f, h, s, ce = pop(heap)
        if kind == _DATA:
            alts = dpath[f]
            p = alts[s % len(alts)]
            if h < len(p):
                li = p[h]
                size = last_bytes[f] if s == npk[f] - 1 else mtu
                ta, ce, dropped = hop(li, t, size, ce, marks[li])
                if dropped:
                    lost[f][s] = 0
                    cnt += 1
                    push(heap, (t + rto, cnt, _RTO, f, 0, s, 0))
                    continue
                cnt += 1
                push(heap, (ta, cnt, _DATA, f, h + 1, s, ce))
            else:  # at the receiver: acknowledge at once, through the receiver's NIC
                a = apath[f][s % len(alts)]
                ta, _, _ = hop(a[0], t, ackb, ce, False)
                cnt += 1
                push(heap, (ta, cnt, _ACK, f, 1, s, ce))
        elif kind == _ACK:
            alts = apath[f]
            a = alts[s % len(alts)]
            if h < len(a):
                li = a[h]
                ta, _, _ = hop(li, t, ackb, ce, False)  # ACKs queue behind data but are never marked or dropped
                cnt += 1
                push(heap, (ta, cnt, _ACK, f, h + 1, s, ce))
                continue
            # the ACK of packet s reaches the sender
            acked[f] += 1
            inflight[f] -= 1
            if acked[f] == npk[f]:
                done_t[f] = t
                continue
            win_acks[f] += 1
            if ce:
                win_marks[f] += 1
                if s >= cut_end[f]:
                    cwnd[f] = max(1.0, cwnd[f] * (1.0 - alpha[f] / 2.0))
                    ssth[f] = cwnd[f]
                    cut_end[f] = nxt[f]
            elif cwnd[f] < ssth[f]:
                cwnd[f] += 1.0
            else:
                cwnd[f] += 1.0 / cwnd[f]
            if s >= win_end[f]:
                alpha[f] += g * (win_marks[f] / win_acks[f] - alpha[f])
                win_acks[f] = win_marks[f] = 0
                win_end[f] = nxt[f]
            lf = lost[f]
            if lf:
                for q in [q for q in lf if q < s]:
                    lf[q] += 1
                    if lf[q] >= 3:  # fast retransmit
                        del lf[q]
                        inflight[f] -= 1
                        retx[f] += 1
                        resend[f].append(q)
                        if q >= cut_end[f]:
                            cwnd[f] = max(1.0, cwnd[f] / 2.0)
                            ssth[f] = cwnd[f]
                            cut_end[f] = nxt[f]
            send(f, t)
        elif kind == _START:
            send(f, t)
        else:  # retransmission timeout of packet s
            if s in lost[f]:
                del lost[f][s]
                inflight[f] -= 1
                retx[f] += 1
                resend[f].append(s)
                cwnd[f] = 1.0
                ssth[f] = max(2.0, ssth[f] / 2.0) if math.isfinite(ssth[f]) else 2.0
                send(f, t)

    fct = np.asarray(done_t) - starts
    return pd.DataFrame(
        {
            "flow_id": np.arange(n),
            "size_bytes": sizes,
            "start_s": starts,
            "fct_s": fct,
            "finished": np.isfinite(fct),
            "retransmits": np.asarray(retx, dtype=np.int64),
        }
    )
