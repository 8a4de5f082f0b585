"""The compiled event loop of the per-packet engine (:func:`workbench.aqm.perpacket.simulate_packets`, which
documents the model): one binary heap of events, per-flow DCTCP state and per-link FIFO state in arrays, and PRED's
two controllers (:mod:`workbench.aqm.pred`) on every switch port when PRED marks.
"""

from __future__ import annotations

import math

import numpy as np

from .._eventheap import heap_grown, heap_pop, heap_push
from .._jit import njit

# ---- the event loop (compiled) ---------------------------------------------------------------------------------
# An event is a time and one int64: kind (3 bits), CE (1 bit), hop index (4 bits), flow (24 bits), and the packet's
# sequence number (or, for a timeout, its loss record) above bit 32.
_DATA, _ACK, _START, _RTO, _TICK = 0, 1, 2, 3, 4
#: Entries of the ``pred`` parameter array of :func:`simulate` (empty: static marking).
(
    P_SLOPE, P_FCS, P_SQRT, P_QLA, P_PERIOD_S, P_QLA_EVERY, P_WEIGHT, P_SLOPE_STEP, P_MIN_K_STEP, P_MIN_SLOPE,
    P_MAX_MIN_K, P_MAX_OFFSET, P_MIN_K,
) = range(13)  # fmt: skip
_LOST, _RESEND, _GONE = 1, 2, 0
#: Arrivals a port remembers for marking on departure.
_RING = 64


@njit(cache=True, inline="always")
def _pack(kind, ce, h, f, s):
    """One event's int64 (the layout above)."""
    return (s << 32) | (f << 8) | (h << 4) | (ce << 3) | kind


@njit(cache=True, inline="always")
def _unpack(p):
    """``(kind, ce, hop, flow, number)`` of an event's int64 (:func:`_pack`'s inverse)."""
    return p & 7, (p >> 3) & 1, (p >> 4) & 15, (p >> 8) & 0xFFFFFF, p >> 32


@njit(cache=True)
def _account(busy, served, area, acc_t, mtu_s, li, t):
    """Add the busy time and the time integral of the queue (packets x s) of link ``li`` up to ``t``."""
    b, tl = busy[li], acc_t[li]
    if b > tl:
        e = b if b < t else t
        served[li] += e - tl
        area[li] += 0.5 * ((b - tl) + (b - e)) * (e - tl) / mtu_s[li]
    acc_t[li] = t


@njit(cache=True)
def _pred_tick(links, ctl, utils, nseen, switch, mtu_s, qref, pred, tick, now):
    """PRED's controllers on every switch port at the end of FCS period ``tick`` (the logic of
    :func:`workbench.aqm.pred.pred_controller`). ``ctl`` rows: slope offset, min_k, QLA phase, mode (0 slope,
    1 min_k), base parameter, busy time, queue integral and time at the last QLA period."""
    busy, lo, hi, maxp, served, area, acc_t = links[0], links[1], links[2], links[3], links[4], links[5], links[6]
    unit = pred[P_SLOPE]
    qla_now = pred[P_QLA] > 0 and tick % int(pred[P_QLA_EVERY]) == 0
    for li in range(switch.size):
        if not switch[li]:
            continue
        nf = max(1, nseen[li])
        nseen[li] = 0
        fac = 1.0 if pred[P_FCS] == 0 else (math.sqrt(nf) if pred[P_SQRT] > 0 else float(nf))
        if qla_now:
            _account(busy, served, area, acc_t, mtu_s, li, now)
            span = now - ctl[7, li]
            util = (served[li] - ctl[5, li]) / span
            qmean = (area[li] - ctl[6, li]) / span
            ctl[5, li], ctl[6, li], ctl[7, li] = served[li], area[li], now
            phase = int(ctl[2, li])
            utils[phase, li] = pred[P_WEIGHT] * util - (1.0 - pred[P_WEIGHT]) * qmean / qref[li]
            if phase == 0:
                ctl[3, li] = 0.0 if unit * fac >= pred[P_MIN_SLOPE] else 1.0
                if ctl[3, li] == 1.0:
                    ctl[0, li] = 0.0
                ctl[4, li] = ctl[0, li] if ctl[3, li] == 0.0 else ctl[1, li]
                ctl[2, li] = 1.0
                step = 1.0
            elif phase == 1:
                ctl[2, li] = 2.0
                step = -1.0
            else:
                best = np.argmax(utils[:, li])
                step = 0.0 if best == 0 else (1.0 if best == 1 else -1.0)
                ctl[2, li] = 0.0
            if ctl[3, li] == 0.0:
                v = ctl[4, li] + step * pred[P_SLOPE_STEP]
                ctl[0, li] = min(max(v, -pred[P_MAX_OFFSET]), pred[P_MAX_OFFSET])
            else:
                v = ctl[4, li] + step * pred[P_MIN_K_STEP]
                ctl[1, li] = min(max(0.0, v), pred[P_MAX_MIN_K])
        slope = max(unit * fac + ctl[0, li], unit)
        lo[li] = ctl[1, li]
        hi[li] = ctl[1, li] + 1.0 / slope
        maxp[li] = 1.0


@njit(cache=True)
def _window_edge(busy, st, switch, mtu_s, edge, t):
    """Open (``edge`` 0) or close (1) the statistics window at ``t``: ``st`` rows are each switch port's busy time
    and queue integral (packets x s) inside the window, and the time they are accounted up to."""
    for li in range(switch.size):
        if switch[li]:
            if edge == 0:
                st[2, li] = t
            else:
                _account(busy, st[0], st[1], st[2], mtu_s, li, t)


@njit(cache=True)
def _grown_records(r_seq, r_cnt, r_state, r_next):
    """The loss records' arrays doubled (called only from the loop's outer level)."""
    n = r_seq.size
    return (
        np.concatenate((r_seq, np.empty(n, np.int64))),
        np.concatenate((r_cnt, np.empty(n, np.int64))),
        np.concatenate((r_state, np.empty(n, np.int64))),
        np.concatenate((r_next, np.empty(n, np.int64))),
    )


@njit(cache=True)
def simulate(
    byte_s, mtu_s, switch, delay, buffer, ramp, pred, qref, dlinks, dlen, dslot, alinks, alen, path0, npaths,
    starts, npk, last_bytes, mtu, ackb, iw, g, alpha0, rto, dequeue, window, rng, lossp,
):  # fmt: skip
    """Run every flow to completion: (completion time, retransmissions, timeouts, CE-echoing ACKs) per flow, then
    (drops, marks, busy time and queue integral in packets x s inside ``window``) per link.

    ``ramp`` is the marking (start, end, top) of every switch port (PRED's: its one-flow ramp until the first
    period ends), ``pred`` PRED's parameters (``P_*``; empty: static) with
    ``qref`` its reference queue per link; ``dslot`` numbers each (data path, hop) by its (flow, link) pair, for
    PRED's count of the flows crossing a port. ``window`` (start, end) is where each switch port's busy time and
    queue integral are kept (only there: the statistics never change the run).

    The per-event helpers are closures over the state arrays (numba inlines them; only scalars pass, except to the
    shared heap of :mod:`workbench._eventheap`), and the heap's and loss records' arrays are reassigned only in an
    outer loop that the event loop leaves when they are full: numba counts references to an array passed to a helper
    or reassigned in the loop with atomic operations, which had made this loop about three times slower per packet
    than the NewReno one (:mod:`workbench.aqm.perpacket_tcp`)."""
    n = starts.size
    nl = byte_s.size
    links = np.zeros((7, nl))
    links[1, :], links[2, :], links[3, :] = ramp[0], ramp[1], ramp[2]
    busy, lo, hi, maxp, served, area, acc_t = links[0], links[1], links[2], links[3], links[4], links[5], links[6]
    drops = np.zeros(nl, np.int64)
    marks = np.zeros(nl, np.int64)
    use_pred = pred.size > 0
    ctl = np.zeros((8, nl))
    utils = np.zeros((3, nl))
    nseen = np.zeros(nl, np.int64)
    seen = np.full(dslot.max() + 1 if use_pred and dslot.size else 1, -1, np.int64)  # no flow: no slot
    tick = 0
    # marking on departure: each port's recent arrivals (time, busy-until after it) in a ring
    hist_t = np.zeros((nl if dequeue else 1, _RING))
    hist_b = np.zeros((nl if dequeue else 1, _RING))
    hist_n = np.zeros(nl if dequeue else 1, np.int64)
    nxt = np.zeros(n, np.int64)
    acked = np.zeros(n, np.int64)
    inflight = np.zeros(n, np.int64)
    cwnd = np.full(n, float(iw))
    ssth = np.full(n, np.inf)
    alpha = np.full(n, alpha0)
    win_end = np.zeros(n, np.int64)
    win_acks = np.zeros(n, np.int64)
    win_marks = np.zeros(n, np.int64)
    cut_end = np.full(n, -1, np.int64)
    retx = np.zeros(n, np.int64)
    timeouts = np.zeros(n, np.int64)
    echoed = np.zeros(n, np.int64)
    done_t = np.full(n, np.nan)
    # loss records: per flow a list of lost packets (awaiting detection) and a stack of packets to send again; at
    # most one record per drop, and a port drops only a packet sent: grown with the heap, in the outer loop
    lost_head = np.full(n, -1, np.int64)
    resend_head = np.full(n, -1, np.int64)
    r_seq = np.empty(64, np.int64)
    r_cnt = np.empty(64, np.int64)
    r_state = np.empty(64, np.int64)
    r_next = np.empty(64, np.int64)
    nrec = 0
    ht = np.empty(max(1024, 2 * n + 4), np.float64)  # room for the starts (and the heap grows below)
    hs = np.empty(ht.size, np.int64)
    hp = np.empty(ht.size, np.int64)
    ctr = np.zeros(1, np.int64)
    nh = 0
    st = np.zeros((3, nl))
    st_busy, st_area, st_t = st[0], st[1], st[2]
    edge = 0  # the window's next edge (2: closed)

    def push(size, t, p):
        """Add event ``p`` at ``t`` to the heap of ``size`` events (the caller makes room); events at equal times
        leave in the order they were added (``ctr`` counts the additions)."""
        seq = ctr[0]
        ctr[0] += 1
        return heap_push(ht, hs, hp, size, t, seq, p)

    def pop(size):
        """The earliest event (time, payload) and the heap's new size."""
        return heap_pop(ht, hs, hp, size)

    def account(li, t, win):
        """:func:`_account` (inlined: it is called per packet) on the statistics window's busy time and queue
        integral if ``win``, else on PRED's."""
        tl = st_t[li] if win else acc_t[li]
        b = busy[li]
        if b > tl:
            e = b if b < t else t
            ds = e - tl
            da = 0.5 * ((b - tl) + (b - e)) * (e - tl) / mtu_s[li]
            if win:
                st_busy[li] += ds
                st_area[li] += da
            else:
                served[li] += ds
                area[li] += da
        if win:
            st_t[li] = t
        else:
            acc_t[li] = t

    def ecn(q, l0, l1, top):
        """CE (0 or 1) for a queue of ``q`` packets on the ramp from ``l0`` to ``l1`` topping at ``top``."""
        ce = 0
        if not q < l0:
            if q >= l1:
                ce = 1
            else:
                pr = top * (q - l0) / (l1 - l0)
                ce = 1 if pr > 0.0 and rng.random() < pr else 0
        return ce

    def hop(li, t, nbytes, ce, port, data, mark):
        """A packet of ``nbytes`` into output queue ``li`` at ``t``: its arrival at the next hop and CE, or -1 if the
        switch port drops it. The queue is counted in whole packets, the one in service included. Only ``data``
        packets at a switch ``port`` are dropped, and marked if ``mark`` (marking on arrival); with PRED the port's
        busy time and queue integral are kept. A ``data`` packet is also lost with probability ``lossp[li]`` (a
        lossy link: a seeded draw, only on links whose probability is above 0; never at the sender's own NIC, whose
        hop the send loop passes as not ``data``)."""
        if port and use_pred:
            account(li, t, False)
        ta = -1.0
        if not (data and lossp[li] > 0.0 and rng.random() < lossp[li]):
            b = busy[li]
            d = 0.0
            dropped = False
            if b > t:
                if port and data:
                    qp = math.ceil((b - t) / mtu_s[li] - 1e-9)
                    if qp >= buffer:
                        dropped = True
                    elif mark and ce == 0:
                        ce = ecn(qp, lo[li], hi[li], maxp[li])
                        marks[li] += ce
                d = b + nbytes * byte_s[li]
            else:
                d = t + nbytes * byte_s[li]
            if not dropped:
                busy[li] = d
                ta = d + delay
        return ta, ce

    def remember(li, t, busy_until):
        """Port ``li``'s arrival at ``t``, leaving it busy until ``busy_until``, into its ring."""
        k = hist_n[li] % _RING
        hist_t[li, k] = t
        hist_b[li, k] = busy_until
        hist_n[li] += 1

    def behind(li, d):
        """Work (seconds) queued at port ``li`` behind the packet that finished leaving it at ``d``: what the last
        arrival before ``d`` left the port busy until, minus ``d`` (the ring goes back far enough: only the arrivals
        of one propagation delay came after ``d``)."""
        k = hist_n[li] - 1
        stop = max(hist_n[li] - _RING, 0)
        while k > stop and hist_t[li, k % _RING] >= d:
            k -= 1
        return max(hist_b[li, k % _RING] - d, 0.0)

    for f in range(n):
        nh = push(nh, starts[f], _pack(_START, 0, 0, f, 0))
    if use_pred:
        ctl[1, :] = pred[P_MIN_K]
        nh = push(nh, pred[P_PERIOD_S], _pack(_TICK, 0, 0, 0, 0))
    sending = False  # flow f's send loop was interrupted for room in the heap
    f, t = 0, 0.0
    while nh > 0 or sending:
        # the heap and the loss records grow out here, so that their arrays are never reassigned in the loop below
        # (numba would then count references to them on every event)
        if nh + 2 > ht.size:
            ht, hs, hp = heap_grown(ht, hs, hp)
        if nrec + 1 > r_seq.size:
            r_seq, r_cnt, r_state, r_next = _grown_records(r_seq, r_cnt, r_state, r_next)
        while (nh > 0 or sending) and nh + 2 <= ht.size and nrec + 1 <= r_seq.size:
            send = False
            if sending:
                sending = False
                send = True
            else:
                t, p, nh = pop(nh)
                while edge < 2 and t >= window[edge]:
                    _window_edge(busy, st, switch, mtu_s, edge, window[edge])
                    edge += 1
                kind, ce, h, f, s = _unpack(p)
                if kind <= _ACK:  # a data packet or an ACK arriving at a hop
                    path = path0[f] + s % npaths[f]
                    if dequeue and kind == _DATA and h > 0 and ce == 0 and switch[dlinks[path, h - 1]]:
                        # marked as it left the previous port, on the queue it left behind
                        prev = dlinks[path, h - 1]
                        q = behind(prev, t - delay) / mtu_s[prev]
                        ce = ecn(q, lo[prev], hi[prev], maxp[prev])
                        marks[prev] += ce
                    if h < (dlen[path] if kind == _DATA else alen[path]):
                        li = dlinks[path, h] if kind == _DATA else alinks[path, h]
                        nbytes = ackb if kind == _ACK else (last_bytes[f] if s == npk[f] - 1 else mtu)
                        if use_pred and kind == _DATA and switch[li] and seen[dslot[path, h]] != tick:
                            seen[dslot[path, h]] = tick
                            nseen[li] += 1
                        data = kind == _DATA
                        if edge == 1 and switch[li]:
                            account(li, t, True)
                        ta, ce = hop(li, t, nbytes, ce, switch[li], data, data and not dequeue)
                        if ta < 0.0:  # dropped: detected by fast retransmit or, failing that, the timeout
                            drops[li] += 1
                            r_seq[nrec] = s
                            r_cnt[nrec] = 0
                            r_state[nrec] = _LOST
                            r_next[nrec] = lost_head[f]
                            lost_head[f] = nrec
                            nh = push(nh, t + rto, _pack(_RTO, 0, 0, f, nrec))
                            nrec += 1
                        else:
                            if dequeue and switch[li]:
                                remember(li, t, ta - delay)
                            nh = push(nh, ta, _pack(kind, ce, h + 1, f, s))
                        continue
                    if kind == _DATA:
                        # at the receiver: acknowledged at once, the ACK echoing CE, through the receiver's NIC
                        li = alinks[path, 0]
                        ta, _ = hop(li, t, ackb, 0, switch[li], False, False)
                        nh = push(nh, ta, _pack(_ACK, ce, 1, f, s))
                        continue
                    # the ACK of packet s reaches the sender
                    acked[f] += 1
                    echoed[f] += ce
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
                    # a lost packet with three later packets acknowledged is sent again (fast retransmit, as with
                    # SACK)
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
                elif kind == _TICK:
                    tick += 1
                    _pred_tick(links, ctl, utils, nseen, switch, mtu_s, qref, pred, tick, t)
                    if nh > 0:  # while anything else is under way
                        nh = push(nh, t + pred[P_PERIOD_S], _pack(_TICK, 0, 0, 0, 0))
                elif r_state[s] == _LOST:  # the timeout of loss record s, unless fast retransmit found it first
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
                    if nh + 2 > ht.size:  # no room for the packet: resumed once the heap has grown
                        sending = True
                        break
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
                    ta, _ = hop(li, t, nbytes, 0, switch[li], False, False)
                    nh = push(nh, ta, _pack(_DATA, 0, 1, f, q))
    while edge < 2:
        _window_edge(busy, st, switch, mtu_s, edge, window[edge])
        edge += 1
    return done_t, retx, timeouts, echoed, drops, marks, st[0], st[1]
