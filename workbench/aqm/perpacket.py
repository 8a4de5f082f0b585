"""Per-packet ground truth: every data packet and every ACK through every hop's FIFO, ACK-clocked DCTCP senders.

This is the reference the chunked engine (:mod:`workbench.aqm.packet`, which moves trains of packets over fluid
queues) is validated against on the same flows and network (:func:`workbench.aqm.replay.replay` with
``chunk_pkts=1``). It is an event-heap simulation, compiled with numba, of the network described by a leaf-spine
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

Cost: one heap event per packet per hop, data and ACK (about ten per packet on a four-link path), compiled: the
50 ms ``fabric-websearch-128`` workload (about five million packets) runs in seconds (``benchmarks/bench_aqm.py``).
The compiled loop is cached on disk (numba's ``cache=True``), so only the first run in a fresh environment pays the
compilation (a few seconds).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numba import njit

from .._rng import Seed, generator
from .._validate import integer, nonnegative, positive
from .red import RedMarking

__all__ = ["simulate_packets"]


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
        ``flow_id, size_bytes, start_s, fct_s, finished, retransmits, timeouts``, one row per flow (``timeouts``:
        retransmissions sent after a retransmission timeout rather than by fast retransmit).

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
    dpath = [tuple(tuple(int(x) for x in p) for p in alts) for alts in data_paths]
    apath = [tuple(tuple(int(x) for x in p) for p in alts) for alts in ack_paths]
    if any(len(a) != len(b) or not a for a, b in zip(dpath, apath)):
        raise ValueError("every flow needs as many ACK paths as data paths, and at least one")
    npk = -(-sizes // mtu)
    if n >= 1 << 24 or (n and npk.max() >= 1 << 31):
        raise ValueError("at most 2**24 flows of at most 2**31 packets each")
    dlinks, dlen = _path_table(dpath, cap.size)
    alinks, alen = _path_table(apath, cap.size)
    npaths = np.array([len(a) for a in dpath], dtype=np.int64)
    path0 = np.concatenate([[0], np.cumsum(npaths)[:-1]]).astype(np.int64)
    byte_s = 8.0 / (cap * 1e9)  # seconds per byte, per link
    done_t, retx, timeouts, _, _ = _simulate(
        byte_s,
        mtu * byte_s,
        np.ascontiguousarray(mask),
        delay,
        buffer,
        float(marking.min_k_pkts),
        float(marking.max_k_pkts),
        float(marking.max_p),
        dlinks,
        dlen,
        alinks,
        alen,
        path0,
        npaths,
        starts,
        npk.astype(np.int64),
        (sizes - (sizes - 1) // mtu * mtu).astype(np.int64),
        mtu,
        ackb,
        iw,
        g,
        rto,
        generator(seed),
    )
    fct = done_t - starts
    return pd.DataFrame(
        {
            "flow_id": np.arange(n),
            "size_bytes": sizes,
            "start_s": starts,
            "fct_s": fct,
            "finished": np.isfinite(fct),
            "retransmits": retx,
            "timeouts": timeouts,
        }
    )


def _path_table(paths: list[tuple], n_links: int) -> tuple[np.ndarray, np.ndarray]:
    """Every flow's alternative paths, one row each (padded with -1), and their lengths."""
    flat = [p for alts in paths for p in alts]
    lens = np.array([len(p) for p in flat], dtype=np.int64)
    if lens.size and (lens.min() < 1 or lens.max() > 31):
        raise ValueError("every path needs 1 to 31 links")
    table = np.full((len(flat), int(lens.max()) if lens.size else 1), -1, dtype=np.int64)
    for i, p in enumerate(flat):
        table[i, : len(p)] = p
    if table.size and (table.max() >= n_links or table[table >= 0].min() < 0):
        raise ValueError(f"path links must be in 0..{n_links - 1}")
    return table, lens


# ---- the event loop (compiled) ---------------------------------------------------------------------------------
# An event is a time and one int64: kind (2 bits), CE (1 bit), hop index (5 bits), flow (24 bits), and the packet's
# sequence number (or, for a timeout, its loss record) above bit 32.
_DATA, _ACK, _START, _RTO = 0, 1, 2, 3
_LOST, _RESEND, _GONE = 1, 2, 0


@njit(cache=True)
def _pack(kind, ce, h, f, s):
    return (s << 32) | (f << 8) | (h << 3) | (ce << 2) | kind


@njit(cache=True)
def _push(ht, hp, n, t, p):
    if n == ht.size:
        ht2 = np.empty(2 * n, np.float64)
        hp2 = np.empty(2 * n, np.int64)
        ht2[:n] = ht
        hp2[:n] = hp
        ht, hp = ht2, hp2
    i = n
    while i > 0:
        j = (i - 1) >> 1
        if ht[j] <= t:
            break
        ht[i] = ht[j]
        hp[i] = hp[j]
        i = j
    ht[i] = t
    hp[i] = p
    return ht, hp, n + 1


@njit(cache=True)
def _pop(ht, hp, n):
    t0, p0 = ht[0], hp[0]
    n -= 1
    t, p = ht[n], hp[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and ht[c + 1] < ht[c]:
            c += 1
        if ht[c] >= t:
            break
        ht[i] = ht[c]
        hp[i] = hp[c]
        i = c
    ht[i] = t
    hp[i] = p
    return t0, p0, n


@njit(cache=True)
def _hop(busy, marks, byte_s, mtu_s, li, t, nbytes, ce, switch, delay, buffer, lo, hi, maxp, rng):
    """A packet of ``nbytes`` into output queue ``li`` at ``t``: its arrival at the next hop and CE, or -1 if the
    switch port drops it. The queue is counted in whole packets, the one in service included."""
    b = busy[li]
    if b > t:
        if switch:
            qp = math.ceil((b - t) / mtu_s[li] - 1e-9)
            if qp >= buffer:
                return -1.0, ce
            if qp >= lo and ce == 0:
                if qp >= hi:
                    ce = 1
                else:
                    pr = maxp * (qp - lo) / (hi - lo)
                    if pr > 0.0 and rng.random() < pr:
                        ce = 1
                marks[li] += ce
        d = b + nbytes * byte_s[li]
    else:
        d = t + nbytes * byte_s[li]
    busy[li] = d
    return d + delay, ce


@njit(cache=True)
def _simulate(
    byte_s,
    mtu_s,
    switch,
    delay,
    buffer,
    lo,
    hi,
    maxp,
    dlinks,
    dlen,
    alinks,
    alen,
    path0,
    npaths,
    starts,
    npk,
    last_bytes,
    mtu,
    ackb,
    iw,
    g,
    rto,
    rng,
):
    n = starts.size
    nl = byte_s.size
    busy = np.zeros(nl)
    drops = np.zeros(nl, np.int64)
    marks = np.zeros(nl, np.int64)
    nxt = np.zeros(n, np.int64)
    acked = np.zeros(n, np.int64)
    inflight = np.zeros(n, np.int64)
    cwnd = np.full(n, float(iw))
    ssth = np.full(n, np.inf)
    alpha = np.ones(n)
    win_end = np.zeros(n, np.int64)
    win_acks = np.zeros(n, np.int64)
    win_marks = np.zeros(n, np.int64)
    cut_end = np.full(n, -1, np.int64)
    retx = np.zeros(n, np.int64)
    timeouts = np.zeros(n, np.int64)
    done_t = np.full(n, np.nan)
    # loss records: per flow a list of lost packets (awaiting detection) and a stack of packets to send again
    lost_head = np.full(n, -1, np.int64)
    resend_head = np.full(n, -1, np.int64)
    r_seq = np.empty(64, np.int64)
    r_cnt = np.empty(64, np.int64)
    r_state = np.empty(64, np.int64)
    r_next = np.empty(64, np.int64)
    nrec = 0
    ht = np.empty(1024, np.float64)
    hp = np.empty(1024, np.int64)
    nh = 0
    for f in range(n):
        ht, hp, nh = _push(ht, hp, nh, starts[f], _pack(_START, 0, 0, f, 0))
    while nh > 0:
        t, p, nh = _pop(ht, hp, nh)
        kind = p & 3
        ce = (p >> 2) & 1
        h = (p >> 3) & 31
        f = (p >> 8) & 0xFFFFFF
        s = p >> 32
        send = False
        if kind <= _ACK:  # a data packet or an ACK arriving at a hop
            path = path0[f] + s % npaths[f]
            links = dlinks if kind == _DATA else alinks
            if h < (dlen[path] if kind == _DATA else alen[path]):
                li = links[path, h]
                nbytes = ackb if kind == _ACK else (last_bytes[f] if s == npk[f] - 1 else mtu)
                ta, ce = _hop(
                    busy,
                    marks,
                    byte_s,
                    mtu_s,
                    li,
                    t,
                    nbytes,
                    ce,
                    kind == _DATA and switch[li],
                    delay,
                    buffer,
                    lo,
                    hi,
                    maxp,
                    rng,
                )
                if ta < 0.0:  # dropped: detected by fast retransmit or, failing that, the timeout
                    drops[li] += 1
                    if nrec == r_seq.size:
                        r_seq = np.concatenate((r_seq, np.empty(nrec, np.int64)))
                        r_cnt = np.concatenate((r_cnt, np.empty(nrec, np.int64)))
                        r_state = np.concatenate((r_state, np.empty(nrec, np.int64)))
                        r_next = np.concatenate((r_next, np.empty(nrec, np.int64)))
                    r_seq[nrec] = s
                    r_cnt[nrec] = 0
                    r_state[nrec] = _LOST
                    r_next[nrec] = lost_head[f]
                    lost_head[f] = nrec
                    ht, hp, nh = _push(ht, hp, nh, t + rto, _pack(_RTO, 0, 0, f, nrec))
                    nrec += 1
                else:
                    ht, hp, nh = _push(ht, hp, nh, ta, _pack(kind, ce, h + 1, f, s))
                continue
            if kind == _DATA:
                # at the receiver: acknowledged at once, the ACK echoing CE, through the receiver's NIC
                li = alinks[path, 0]
                ta, _ = _hop(busy, marks, byte_s, mtu_s, li, t, ackb, 0, False, delay, buffer, lo, hi, maxp, rng)
                ht, hp, nh = _push(ht, hp, nh, ta, _pack(_ACK, ce, 1, f, s))
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
                win_acks[f] = 0
                win_marks[f] = 0
                win_end[f] = nxt[f]
            # a lost packet with three later packets acknowledged is sent again (fast retransmit, as with SACK)
            prev = -1
            r = lost_head[f]
            while r >= 0:
                nx = r_next[r]
                if r_seq[r] < s:
                    r_cnt[r] += 1
                    if r_cnt[r] >= 3:
                        if prev < 0:
                            lost_head[f] = nx
                        else:
                            r_next[prev] = nx
                        r_state[r] = _RESEND
                        r_next[r] = resend_head[f]
                        resend_head[f] = r
                        inflight[f] -= 1
                        retx[f] += 1
                        if r_seq[r] >= cut_end[f]:
                            cwnd[f] = max(1.0, cwnd[f] / 2.0)
                            ssth[f] = cwnd[f]
                            cut_end[f] = nxt[f]
                        r = nx
                        continue
                prev = r
                r = nx
            send = True
        elif kind == _START:
            send = True
        else:  # retransmission timeout of loss record s, unless fast retransmit found it first
            if r_state[s] == _LOST:
                prev = -1
                r = lost_head[f]
                while r != s:
                    prev = r
                    r = r_next[r]
                if prev < 0:
                    lost_head[f] = r_next[s]
                else:
                    r_next[prev] = r_next[s]
                r_state[s] = _RESEND
                r_next[s] = resend_head[f]
                resend_head[f] = s
                inflight[f] -= 1
                retx[f] += 1
                timeouts[f] += 1
                cwnd[f] = 1.0
                ssth[f] = max(2.0, ssth[f] / 2.0) if ssth[f] < np.inf else 2.0
                send = True
        if send:
            # send what the window allows, retransmissions first, into the flow's NIC
            while inflight[f] < int(cwnd[f]):
                r = resend_head[f]
                if r >= 0:
                    resend_head[f] = r_next[r]
                    r_state[r] = _GONE
                    q = r_seq[r]
                elif nxt[f] < npk[f]:
                    q = nxt[f]
                    nxt[f] += 1
                else:
                    break
                inflight[f] += 1
                path = path0[f] + q % npaths[f]
                li = dlinks[path, 0]
                nbytes = last_bytes[f] if q == npk[f] - 1 else mtu
                ta, _ = _hop(busy, marks, byte_s, mtu_s, li, t, nbytes, 0, False, delay, buffer, lo, hi, maxp, rng)
                ht, hp, nh = _push(ht, hp, nh, ta, _pack(_DATA, 0, 1, f, q))
    return done_t, retx, timeouts, drops, marks
