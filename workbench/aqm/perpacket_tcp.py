"""The compiled event loop of the per-packet engine with TCP NewReno senders, cumulative ACKs and byte-counted
queues (:func:`workbench.aqm.perpacket.simulate_packets` with ``loss_recovery="newreno"``, which documents the model).

Per switch port and host NIC, a FIFO ring of the packets queued (the time each finishes leaving, the bytes that
entered the port before it, its arrival time) gives the queue in bytes with the packet in service counted whole,
and, looked back at when a packet reaches the next hop, the queue it left behind (marking on departure). Per flow,
the sender's NewReno state, its RTT estimator and retransmission timer, and the receiver's next expected packet
(out-of-order packets are remembered in one bit array of every flow's packets). Allocation-free per packet: the
event heap (the shared one of :mod:`workbench._eventheap`) grows by doubling, everything else is allocated once. Free
of reference counting per event too: the per-event helpers are closures over the state arrays (numba inlines them;
only scalars pass, but for the heap's three arrays), no array is sliced or returned in the loop, and the heap's arrays
are reassigned only in an outer loop that the event loop leaves when the heap is full. Numba counts references to an
array passed to a helper (inlined or not) or reassigned in a loop with atomic operations, which had taken about half of
the loop's time.
"""

from __future__ import annotations

import math

import numpy as np

from .._eventheap import heap_grown, heap_pop, heap_push
from .._jit import njit
from .perpacket_loop import (
    _ACK,
    _DATA,
    _RTO,
    _START,
    _TICK,
    P_MIN_K,
    P_PERIOD_S,
    _account,
    _pack,
    _pred_tick,
    _unpack,
    _window_edge,
)

# An event is a time, one int64 (the SACK-like loop's: :func:`~workbench.aqm.perpacket_loop._pack`; above bit 32 the
# data packet's number or the ACK's cumulative number) and 16 more bits: for a data packet its slot in the previous
# port's ring, for an ACK the path alternative it travels.

#: The longest RTO after back-off (RFC 6298 allows a cap of 60 s or more).
MAX_RTO_S = 60.0


@njit(cache=True, inline="always")
def _rto_check_at(deadline, tick):
    """The first timer check (every ``tick`` seconds from 0) after ``deadline``."""
    c = deadline
    if tick > 0.0:
        c = (math.floor(deadline / tick) + 1.0) * tick
    return c


@njit(cache=True)
def simulate_tcp(
    byte_s, mtu_s, switch, delay, buf_bytes, nic_pkts, ring, ramp, pred, qref, dlinks, dlen, dslot, alinks, alen,
    path0, npaths, starts, npk, last_bytes, mtu, ackb, iw, ssth0, g, alpha0, rto_init, rto_min, rto_tick, dequeue,
    window, rng, lossp, per_ack, cut_every_window,
):  # fmt: skip
    """Run every flow to completion: (completion time, retransmissions, timeouts, CE-echoing ACKs) per flow, then
    (drops, marks, busy time and queue integral in packets x s inside ``window``) per link. Arguments as
    :func:`workbench.aqm.perpacket_loop.simulate`, plus ``buf_bytes`` (switch ports, bytes), ``nic_pkts`` (host
    NICs, packets), ``ring`` (slots per FIFO, a power of two), ``ssth0`` (initial slow-start threshold, packets),
    the RTO's initial value, floor and timer period (``rto_tick``; 0: exact), and ``per_ack``: an RTT sample from
    every ACK (the send time of the packet that triggered it, echoed as a timestamp) rather than from one timed
    packet per window; never from a packet sent twice (Karn); and ``cut_every_window``: DCTCP's cut at the end of
    every window while ``alpha > 0``, not only of a window with marks."""
    n = starts.size
    nl = byte_s.size
    links = np.zeros((7, nl))
    links[1, :], links[2, :], links[3, :] = ramp[0], ramp[1], ramp[2]
    busy = links[0]  # each link's busy-until (a view taken once: slicing in the loop costs reference counting)
    drops = np.zeros(nl, np.int64)
    marks = np.zeros(nl, np.int64)
    use_pred = pred.size > 0
    ctl = np.zeros((8, nl))
    utils = np.zeros((3, nl))
    nseen = np.zeros(nl, np.int64)
    seen = np.full(dslot.max() + 1 if use_pred and dslot.size else 1, -1, np.int64)  # no flow: no slot
    tick = 0
    fifo = np.zeros((nl, ring, 3))
    head = np.zeros(nl, np.int64)
    tail = np.zeros(nl, np.int64)
    cum_in = np.zeros(nl)  # bytes that ever entered each FIFO (exact in a float below 2**53)
    m = ring - 1
    # sender
    una = np.zeros(n, np.int64)  # first unacknowledged packet
    nxt = np.zeros(n, np.int64)  # next packet to send
    hsent = np.zeros(n, np.int64)  # packets ever sent (one past the highest)
    cwnd = np.full(n, float(iw))
    ssth = np.full(n, ssth0)
    dup = np.zeros(n, np.int64)
    inrec = np.zeros(n, np.bool_)
    recover = np.zeros(n, np.int64)
    alpha = np.full(n, alpha0)
    win_end = np.zeros(n, np.int64)
    win_acks = np.zeros(n, np.int64)
    win_marks = np.zeros(n, np.int64)
    srtt = np.zeros(n)
    rttvar = np.zeros(n)
    rto = np.full(n, rto_init)
    rto_at = np.full(n, np.inf)
    chk_at = np.full(n, np.inf)  # the flow's live timer check (inf: none); other checks of the flow are stale
    timed = np.full(n, -1, np.int64)
    timed_at = np.zeros(n)
    retx = np.zeros(n, np.int64)
    timeouts = np.zeros(n, np.int64)
    echoed = np.zeros(n, np.int64)
    done_t = np.full(n, np.nan)
    # receiver
    rcv = np.zeros(n, np.int64)
    off = np.zeros(n + 1, np.int64)
    for f in range(n):
        off[f + 1] = off[f] + npk[f]
    got = np.zeros(off[n], np.bool_)
    sent_at = np.zeros(off[n] if per_ack else 1)
    twice = np.zeros(off[n] if per_ack else 1, np.bool_)
    ht = np.empty(max(1024, 2 * n + 4), np.float64)  # room for the starts (and the heap grows below)
    hs = np.empty(ht.size, np.int64)
    hp = np.empty(ht.size, np.int64)
    ctr = np.zeros(1, np.int64)
    nh = 0
    st = np.zeros((3, nl))
    served, area, acc_t = links[4], links[5], links[6]  # PRED's accounting
    st_busy, st_area, st_t = st[0], st[1], st[2]  # the statistics window's
    edge = 0

    # The per-event helpers are closures over the state arrays (numba inlines them, and only scalars are passed):
    # passing arrays, even to inlined functions, costs numba's atomic reference counting on every call, about half
    # the loop's time. The one exception is the shared event heap (workbench._eventheap), called from push and pop
    # below with its three arrays: measured on three validation workloads, the loop is as fast as with the heap
    # inlined as closures (0.91-2.25 s against 0.97-2.31 s, the same bytes).
    def push(n, t, p, x):
        """Add event ``(p, x)`` at ``t`` to the heap of ``n`` events (the caller makes room:
        :func:`~workbench._eventheap.heap_grown`); equal times leave in the order added. ``x`` (below 2**16) rides in
        the low bits of the word that orders ties."""
        seq = (ctr[0] << 16) | x
        ctr[0] += 1
        return heap_push(ht, hs, hp, n, t, seq, p)

    def pop(n):
        """The earliest event (time, payload, extra) and the heap's new size."""
        x0 = hs[0] & 0xFFFF
        t0, p0, n = heap_pop(ht, hs, hp, n)
        return t0, p0, x0, n

    def ecn(q, lo, hi, maxp):
        """CE (0 or 1) for a queue of ``q`` (bytes / packet size, the packet itself counted): none at or below
        ``lo``, all at or above ``hi`` (a step ``lo == hi`` marks a queue that exceeds it), the ramp's draw between."""
        ce = 0
        if not q <= lo:
            if q >= hi:
                ce = 1
            else:
                pr = maxp * (q - lo) / (hi - lo)
                ce = 1 if rng.random() < pr else 0
        return ce

    def enqueue(li, t, nbytes, limit, by_bytes):
        """A packet of ``nbytes`` into FIFO ``li`` at ``t``: its ring slot and the time it finishes leaving, or slot
        -1 if dropped (random loss, or no room: ``limit`` bytes if ``by_bytes`` else packets, the one in service
        counted whole; a full ring drops too). ``fifo[li, k]`` holds a queued packet's finish time, the bytes that
        entered the FIFO before it, and its arrival time."""
        h = head[li]
        while h < tail[li] and fifo[li, h & m, 0] <= t:
            h += 1
        head[li] = h
        nq = tail[li] - h
        qb = cum_in[li] - fifo[li, h & m, 1] if nq > 0 else 0.0
        k, d = -1, 0.0
        drop = lossp[li] > 0.0 and rng.random() < lossp[li]
        if not drop and not ((qb + nbytes > limit if by_bytes else nq >= limit) or nq >= m - 256):
            b = busy[li]
            d = (b if b > t else t) + nbytes * byte_s[li]
            busy[li] = d
            k = tail[li]
            fifo[li, k & m, 0] = d
            fifo[li, k & m, 1] = cum_in[li]
            fifo[li, k & m, 2] = t
            tail[li] = k + 1
            cum_in[li] += nbytes
        return k, d

    def queued(li, t):
        """Bytes in FIFO ``li`` at ``t`` (the packet in service counted whole)."""
        h = head[li]
        while h < tail[li] and fifo[li, h & m, 0] <= t:
            h += 1
        head[li] = h
        return cum_in[li] - fifo[li, h & m, 1] if h < tail[li] else 0.0

    def left_behind(li, idx):
        """Bytes in FIFO ``li`` as the packet in ring slot ``idx`` finished leaving it, that packet counted: itself
        and every packet that arrived before that instant (the ring is looked back from its newest entry; only the
        arrivals of one propagation delay came after it)."""
        slot = tail[li] - ((tail[li] - idx) & m)
        d = fifo[li, slot & m, 0]
        k = tail[li] - 1
        while k > slot and fifo[li, k & m, 2] >= d:
            k -= 1
        after = fifo[li, (k + 1) & m, 1] if k + 1 < tail[li] else cum_in[li]
        return after - fifo[li, slot & m, 1]

    for f in range(n):
        nh = push(nh, starts[f], _pack(_START, 0, 0, f, 0), 0)
    if use_pred:
        ctl[1, :] = pred[P_MIN_K]
        nh = push(nh, pred[P_PERIOD_S], _pack(_TICK, 0, 0, 0, 0), 0)
    sending = False  # flow f's send loop was interrupted for room in the heap
    f, t, resend = 0, 0.0, -1
    while nh > 0 or sending:
        # the heap grows out here, so that its arrays are never reassigned in the loop below (numba would then count
        # references to them on every event)
        if nh + 2 > ht.size:
            ht, hs, hp = heap_grown(ht, hs, hp)
        while (nh > 0 or sending) and nh + 2 <= ht.size:
            if sending:
                sending = False
            else:
                resend = -1  # a packet to send again at once (fast retransmit, partial ACK)
                t, p, x, nh = pop(nh)
                while edge < 2 and t >= window[edge]:
                    _window_edge(links[0], st, switch, mtu_s, edge, window[edge])
                    edge += 1
                kind, ce, h, f, s = _unpack(p)
                if kind <= _ACK:
                    data = kind == _DATA
                    path = path0[f] + (s % npaths[f] if data else x & 15)
                    nbytes = (last_bytes[f] if s == npk[f] - 1 else mtu) if data else ackb
                    if data and dequeue and ce == 0 and switch[dlinks[path, h - 1]]:
                        prev = dlinks[path, h - 1]  # marked as it left the previous port, on the queue it left
                        ce = ecn(left_behind(prev, x) / mtu, links[1, prev], links[2, prev], links[3, prev])
                        marks[prev] += ce
                    if h < (dlen[path] if data else alen[path]):
                        li = dlinks[path, h] if data else alinks[path, h]
                        port = switch[li]
                        if use_pred and data and port and seen[dslot[path, h]] != tick:
                            seen[dslot[path, h]] = tick
                            nseen[li] += 1
                        if port and use_pred:
                            _account(busy, served, area, acc_t, mtu_s, li, t)
                        if port and edge == 1:
                            _account(busy, st_busy, st_area, st_t, mtu_s, li, t)
                        qb = queued(li, t) if data and port and not dequeue and ce == 0 else -1.0
                        slot, d = enqueue(li, t, nbytes, buf_bytes if port else nic_pkts, port)
                        if slot < 0:
                            drops[li] += 1
                            continue
                        if qb >= 0.0:  # marking on arrival, on the queue it found and itself
                            ce = ecn((qb + nbytes) / mtu, links[1, li], links[2, li], links[3, li])
                            marks[li] += ce
                        nh = push(nh, d + delay, _pack(kind, ce, h + 1, f, s), (slot & m) if data else x)
                        continue
                    if data:  # at the receiver: a cumulative ACK per packet, echoing its CE, through the receiver's NIC
                        o = off[f]
                        if s >= rcv[f] and not got[o + s]:
                            got[o + s] = True
                            while rcv[f] < npk[f] and got[o + rcv[f]]:
                                rcv[f] += 1
                        li = alinks[path, 0]
                        slot, d = enqueue(li, t, ackb, nic_pkts, False)
                        if slot < 0:
                            drops[li] += 1
                        else:
                            # the path alternative, and which packet triggered it (its number relative to the ACK's)
                            rel = s - rcv[f] + 2048
                            tag = (s % npaths[f]) | ((rel if 0 <= rel < 4095 else 4095) << 4)
                            nh = push(nh, d + delay, _pack(_ACK, ce, 1, f, rcv[f]), tag)
                        continue
                    # the ACK (next expected packet s) reaches the sender
                    if not math.isnan(done_t[f]) or s < una[f]:
                        continue
                    echoed[f] += ce
                    win_acks[f] += 1
                    win_marks[f] += ce
                    if (
                        ce and cwnd[f] < ssth[f]
                    ):  # a CE echo ends slow start at once; the cut waits for the window's end
                        ssth[f] = cwnd[f]
                    r = -1.0  # an RTT sample (Karn: never of a packet sent twice)
                    if per_ack:
                        trig = s + (x >> 4) - 2048
                        if (x >> 4) < 4095 and 0 <= trig < npk[f] and not twice[off[f] + trig]:
                            r = t - sent_at[off[f] + trig]
                    elif s > una[f] and timed[f] >= 0 and s > timed[f]:
                        r = t - timed_at[f]
                        timed[f] = -1
                    if r >= 0.0:
                        if srtt[f] == 0.0:
                            srtt[f], rttvar[f] = r, r / 2.0
                        else:
                            rttvar[f] = 0.75 * rttvar[f] + 0.25 * abs(srtt[f] - r)
                            srtt[f] = 0.875 * srtt[f] + 0.125 * r
                        rto[f] = max(rto_min, srtt[f] + 4.0 * rttvar[f])
                    if s > una[f]:  # new data acknowledged
                        newly = s - una[f]
                        una[f] = s
                        if nxt[f] < s:
                            nxt[f] = s
                        if s >= npk[f]:
                            done_t[f] = t
                            rto_at[f] = np.inf
                            continue
                        if inrec[f]:
                            if s >= recover[f]:  # full ACK: recovery ends, the window deflates
                                inrec[f] = False
                                cwnd[f] = min(ssth[f], max(nxt[f] - s, 1) + 1.0)
                            else:  # partial ACK: the next hole is sent again, the window deflated by what was acked
                                resend = s
                                cwnd[f] = max(cwnd[f] - newly + 1.0, 1.0)
                        elif cwnd[f] < ssth[f]:
                            cwnd[f] += 1.0
                        else:
                            cwnd[f] += 1.0 / cwnd[f]
                        dup[f] = 0
                        rto_at[f] = t + rto[f]  # restarted on new data acknowledged
                        c = _rto_check_at(rto_at[f], rto_tick)
                        if c < chk_at[f]:  # the deadline moved before the pending check (the RTO fell from 3 s)
                            chk_at[f] = c
                            nh = push(nh, c, _pack(_RTO, 0, 0, f, 0), 0)
                    elif s < hsent[f]:  # a duplicate ACK
                        if inrec[f]:
                            cwnd[f] += 1.0
                        else:
                            dup[f] += 1
                            if dup[f] == 3 and s >= recover[f]:  # fast retransmit (NewReno, RFC 6582)
                                ssth[f] = max((nxt[f] - s) / 2.0, 2.0)
                                recover[f] = hsent[f]
                                inrec[f] = True
                                cwnd[f] = ssth[f] + 3.0
                                resend = s
                    if s > win_end[f]:  # a window of data acknowledged: DCTCP's alpha and at most one cut
                        alpha[f] += g * (win_marks[f] / win_acks[f] - alpha[f])
                        if (win_marks[f] > 0 or (cut_every_window and alpha[f] > 0.0)) and not inrec[f]:
                            cwnd[f] = max(1.0, cwnd[f] * (1.0 - alpha[f] / 2.0))
                            ssth[f] = cwnd[f]
                        win_acks[f] = 0
                        win_marks[f] = 0
                        win_end[f] = nxt[f]
                elif kind == _START:
                    pass
                elif kind == _TICK:
                    tick += 1
                    _pred_tick(links, ctl, utils, nseen, switch, mtu_s, qref, pred, tick, t)
                    if nh > 0:
                        nh = push(nh, t + pred[P_PERIOD_S], _pack(_TICK, 0, 0, 0, 0), 0)
                    continue
                else:  # a timer check of flow f
                    if t != chk_at[f]:  # superseded by an earlier check
                        continue
                    chk_at[f] = np.inf
                    if not math.isnan(done_t[f]) or rto_at[f] == np.inf:
                        continue
                    if t < rto_at[f]:  # the deadline moved later: check again then
                        c = _rto_check_at(rto_at[f], rto_tick)
                        chk_at[f] = c
                        nh = push(nh, c, _pack(_RTO, 0, 0, f, 0), 0)
                        continue
                    # timeout: back off, restart from the first unacknowledged packet with one packet (go-back-N)
                    timeouts[f] += 1
                    ssth[f] = max((nxt[f] - una[f]) / 2.0, 2.0)
                    cwnd[f] = 1.0
                    inrec[f] = False
                    dup[f] = 0
                    recover[f] = hsent[f]
                    nxt[f] = una[f]
                    timed[f] = -1
                    rto[f] = min(2.0 * rto[f], MAX_RTO_S)
                    rto_at[f] = np.inf  # restarted by the retransmission below
            # send: a packet to resend at once, then what the window allows
            while True:
                if nh + 2 > ht.size:  # no room for a timer check and a packet: resumed once the heap has grown
                    sending = True
                    break
                if resend >= 0:
                    q = resend
                    resend = -1
                elif nxt[f] < npk[f] and nxt[f] - una[f] < int(cwnd[f]):
                    q = nxt[f]
                    nxt[f] += 1
                else:
                    break
                if q < hsent[f]:
                    retx[f] += 1
                    timed[f] = -1
                    if per_ack:
                        twice[off[f] + q] = True
                else:
                    hsent[f] = q + 1
                    if per_ack:
                        sent_at[off[f] + q] = t
                    elif timed[f] < 0:
                        timed[f], timed_at[f] = q, t
                if rto_at[f] == np.inf:
                    rto_at[f] = t + rto[f]
                    c = _rto_check_at(rto_at[f], rto_tick)
                    if c < chk_at[f]:
                        chk_at[f] = c
                        nh = push(nh, c, _pack(_RTO, 0, 0, f, 0), 0)
                path = path0[f] + q % npaths[f]
                li = dlinks[path, 0]
                nbytes = last_bytes[f] if q == npk[f] - 1 else mtu
                slot, d = enqueue(li, t, nbytes, nic_pkts, False)
                if slot < 0:
                    drops[li] += 1
                else:
                    nh = push(nh, d + delay, _pack(_DATA, 0, 1, f, q), slot & m)
    while edge < 2:
        _window_edge(links[0], st, switch, mtu_s, edge, window[edge])
        edge += 1
    return done_t, retx, timeouts, echoed, drops, marks, st[0], st[1]
