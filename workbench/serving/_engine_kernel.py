"""The compiled event loop of the one serving engine (:mod:`workbench.serving.engine` documents the model).

It is longer than a module should be because it is one loop: every scheduling policy (vLLM, Sarathi-Serve, Orca, the
reservation), paged KV accounting with a residue histogram, prefix sharing, preemption by recompute or swap (sync or
async, per block or per block group, with or without KV reuse), priority order and its change process, multi-turn
follow-ups, inter-token gap records and the least-outstanding router share its state.

State (all allocated once, nothing per event): per request, one integer row of ``Q`` and one float row of ``G`` (the
``Q_*`` and ``G_*`` columns: its input, its progress, its links in the waiting queue, the running set and the list of
known arrivals, its slot in the finish heap, its times); per replica simulated at once (the least-outstanding router
runs all replicas together; otherwise one row serves the replicas one after another), one row of ``si`` (integers)
and ``sf`` (floats), its residue histogram, finish heap, Sarathi prefill list, prefix-block reference counts,
follow-up heap, the rings of asynchronous copies and the free-block queue of a cache of freed blocks. Helpers are
top-level compiled functions taking the few arrays they touch (closures would be inlined at every call and make the
compile take minutes).
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import njit
from ._common import steps_to_reach
from ._cost_eval import combine, line, pf_cost

# kinds
VLLM, SARATHI, ORCA, RESERVE = 0, 1, 2, 3
# where a request's KV is
NOWHERE, HOST, SWAPPING_IN = 0, 1, 2
# per request, integers (Q[i, .])
(Q_INP, Q_OUT, Q_BIG, Q_PRE, Q_PRIO, Q_NXT, Q_LATER, Q_CONV, Q_HFULL, Q_HOFF0, Q_HOFF1, Q_GEN, Q_OFF, Q_JOIN, Q_WHERE,
 Q_WNEXT, Q_WPREV, Q_RNEXT, Q_RPREV, Q_ANEXT, Q_HPOS, Q_FKEY, Q_PIT, Q_PREEMPT, Q_PREFILL, Q_REJ, Q_REP, Q_SEG,
 Q_CFULL) = range(29)  # fmt: skip
NQ = 29
# per request, floats (G[i, .])
G_ARR, G_THINK, G_ADMIT, G_FIRST, G_FINISH, G_STALLT, G_LASTTOK, G_LASTST, G_STARR, G_READY = range(10)
NG = 10
# per replica row, integers (si[row, .])
(T_, NRUN, SUMOFF, SHARED, QBLK, CAPB, RESV, HELD, WHEAD, WTAIL, WLEN, RHEAD, RTAIL, NPREF, AHEAD, ATAIL, HEAPN, FUN,
 OHEAD, OTAIL, IHEAD, ITAIL, PEND, SIN, NIN, ITER, NEXTCHG, LASTRESH, FREED, HITS, POPS, SHEAD,
 STAIL) = range(33)  # fmt: skip
NI = 33
# per replica row, floats (sf[row, .])
TIME, BUSY, STALL, OUTBUSY, INBUSY, SEEN = range(6)
NF = 6
# policy integers (pi[.]) and floats (pf[.])
(P_KIND, P_SEQS, P_BUDGET, P_B, P_WATER, P_NBLOCKS, P_CAPTOK, P_SWAP, P_GROUP, P_ASYNC, P_REUSE, P_PRIO, P_CHG,
 P_LEVELS, P_CALLS, P_RECORD, P_RING, P_OVC, P_ALLOWED, P_PCACHE) = range(20)  # fmt: skip
NPI = 20
F_RATE, F_CALL, F_TOKS, F_LIMIT, F_CPRE, F_CDEC, F_CPU0, F_PERSEQ, F_PFFLOOR, F_PFTILE = range(10)
NPF = 10
# totals
TOT_STALL, TOT_COPY_TOKENS, TOT_COPIES, TOT_OUTS, TOT_INS, TOT_ITER, TOT_OUT_S, TOT_IN_S, TOT_BUSY, TOT_VIO = range(10)
TOT_GAPS = 10
NTOT = 11


# ------------------------------------------------------------------------- random draws (SplitMix64, the kernel's own)
@njit(cache=True)
def _uniform(rs):
    rs[0] += np.uint64(0x9E3779B97F4A7C15)
    z = rs[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _geometric(rs, p):
    """Iterations until the next success of a Bernoulli(``p``) per iteration (>= 1)."""
    if p >= 1.0:
        return 1
    return 1 + int(math.log(1.0 - _uniform(rs)) / math.log(1.0 - p))


@njit(cache=True)
def _level(si, Q, rs, pi, pf, row, i):
    """Request ``i``'s priority level now: the change process applied lazily (exact in law: a reshuffle redraws it if
    a realised reshuffle happened since its last update; a walk moves it +-1 at each of the Bernoulli successes
    since)."""
    it = si[row, ITER]
    kind, levels, rate = pi[P_CHG], pi[P_LEVELS], pf[F_RATE]
    if kind == 1:
        while si[row, NEXTCHG] <= it:
            si[row, LASTRESH] = si[row, NEXTCHG]
            si[row, NEXTCHG] += _geometric(rs, rate)
        if Q[i, Q_PIT] < si[row, LASTRESH]:
            Q[i, Q_PRIO] = min(int(_uniform(rs) * levels), levels - 1)
    elif kind == 2 and rate > 0 and it > Q[i, Q_PIT]:
        k = Q[i, Q_PIT] + _geometric(rs, rate)
        while k <= it:
            p = Q[i, Q_PRIO] + (1 if _uniform(rs) < 0.5 else -1)
            if p < 0:
                p = 1 if levels > 1 else 0
            if p >= levels:
                p = levels - 2 if levels > 1 else 0
            Q[i, Q_PRIO] = p
            k += _geometric(rs, rate)
    Q[i, Q_PIT] = it
    return Q[i, Q_PRIO]


# ----------------------------------------------------------------------------------------------- linked lists
@njit(cache=True)
def _w_push(si, Q, row, i, front):
    if front:
        h = si[row, WHEAD]
        Q[i, Q_WPREV], Q[i, Q_WNEXT] = -1, h
        if h >= 0:
            Q[h, Q_WPREV] = i
        else:
            si[row, WTAIL] = i
        si[row, WHEAD] = i
    else:
        t = si[row, WTAIL]
        Q[i, Q_WPREV], Q[i, Q_WNEXT] = t, -1
        if t >= 0:
            Q[t, Q_WNEXT] = i
        else:
            si[row, WHEAD] = i
        si[row, WTAIL] = i
    si[row, WLEN] += 1


@njit(cache=True)
def _w_remove(si, Q, row, i):
    p, q = Q[i, Q_WPREV], Q[i, Q_WNEXT]
    if p >= 0:
        Q[p, Q_WNEXT] = q
    else:
        si[row, WHEAD] = q
    if q >= 0:
        Q[q, Q_WPREV] = p
    else:
        si[row, WTAIL] = p
    si[row, WLEN] -= 1


# ------------------------------------------------------------------ finish heap (indexed, by decode step; ties by id)
# (an indexed heap with removal by slot, not an event queue: workbench._eventheap does not apply)
@njit(cache=True)
def _h_less(Q, heap, row, a, b):
    ia, ib = heap[row, a], heap[row, b]
    return Q[ia, Q_FKEY] < Q[ib, Q_FKEY] or (Q[ia, Q_FKEY] == Q[ib, Q_FKEY] and ia < ib)


@njit(cache=True)
def _h_sift(si, Q, heap, row, k):
    while k > 0:  # up
        p = (k - 1) >> 1
        if not _h_less(Q, heap, row, k, p):
            break
        ia, ib = heap[row, k], heap[row, p]
        heap[row, k], heap[row, p] = ib, ia
        Q[ib, Q_HPOS], Q[ia, Q_HPOS] = k, p
        k = p
    nh = si[row, HEAPN]
    while True:  # down
        c = 2 * k + 1
        if c >= nh:
            break
        if c + 1 < nh and _h_less(Q, heap, row, c + 1, c):
            c += 1
        if not _h_less(Q, heap, row, c, k):
            break
        ia, ib = heap[row, k], heap[row, c]
        heap[row, k], heap[row, c] = ib, ia
        Q[ib, Q_HPOS], Q[ia, Q_HPOS] = k, c
        k = c


@njit(cache=True)
def _h_push(si, Q, heap, row, i):
    k = si[row, HEAPN]
    heap[row, k] = i
    Q[i, Q_HPOS] = k
    si[row, HEAPN] = k + 1
    _h_sift(si, Q, heap, row, k)


@njit(cache=True)
def _h_remove(si, Q, heap, row, i):
    k = Q[i, Q_HPOS]
    last = si[row, HEAPN] - 1
    si[row, HEAPN] = last
    Q[i, Q_HPOS] = -1
    if k != last:
        j = heap[row, last]
        heap[row, k] = j
        Q[j, Q_HPOS] = k
        _h_sift(si, Q, heap, row, k)


# ---------------------------------------------------------------------- follow-up arrivals: a min-heap by time
# (its own, not workbench._eventheap's: it lives in one row per replica of 2-D arrays, ties broken by request id, and
# handing the shared helper a row view per event would cost numba's atomic reference counting in the hot loop)
@njit(cache=True)
def _fu_push(si, fu_t, fu_i, row, tt, i):
    k = si[row, FUN]
    si[row, FUN] = k + 1
    while k > 0:
        p = (k - 1) >> 1
        if fu_t[row, p] < tt or (fu_t[row, p] == tt and fu_i[row, p] < i):
            break
        fu_t[row, k], fu_i[row, k] = fu_t[row, p], fu_i[row, p]
        k = p
    fu_t[row, k], fu_i[row, k] = tt, i


@njit(cache=True)
def _fu_pop(si, fu_t, fu_i, row):
    nfu = si[row, FUN] - 1
    si[row, FUN] = nfu
    tt, ii = fu_t[row, nfu], fu_i[row, nfu]
    k = 0
    while True:
        c = 2 * k + 1
        if c >= nfu:
            break
        if c + 1 < nfu and (fu_t[row, c + 1] < fu_t[row, c] or (fu_t[row, c + 1] == fu_t[row, c] and
                                                                fu_i[row, c + 1] < fu_i[row, c])):  # fmt: skip
            c += 1
        if fu_t[row, c] > tt or (fu_t[row, c] == tt and fu_i[row, c] > ii):
            break
        fu_t[row, k], fu_i[row, k] = fu_t[row, c], fu_i[row, c]
        k = c
    fu_t[row, k], fu_i[row, k] = tt, ii


@njit(cache=True)
def _next_arrival(si, Q, G, fu_t, fu_i, row):
    """The earliest pending arrival of replica ``row`` (known or follow-up), -1 if none."""
    a = si[row, AHEAD]
    if si[row, FUN] > 0:
        f = fu_i[row, 0]
        if a < 0 or fu_t[row, 0] < G[a, G_ARR] or (fu_t[row, 0] == G[a, G_ARR] and f < a):
            return f
    return a


# ----------------------------------------------------------------------------------------------------- KV blocks
@njit(cache=True)
def _blocks_at(si, cnt, row, step, B):
    q = si[row, QBLK]
    for r in range(B):
        c = cnt[row, r]
        if c:
            q += c * ((r + step + B - 1) // B)
    return q


@njit(cache=True)
def _free_at(si, cnt, row, step, B):
    """Blocks free once every running request holds its context at ``step`` (less those held besides)."""
    return si[row, CAPB] - _blocks_at(si, cnt, row, step, B) - si[row, RESV] - si[row, PEND] - si[row, SIN]


@njit(cache=True)
def _fits(si, cnt, row, step, B):
    used = (si[row, SUMOFF] + si[row, NRUN] * step) // B + si[row, NRUN] + si[row, RESV] + si[row, PEND] + si[row, SIN]
    return used <= si[row, CAPB] or _free_at(si, cnt, row, step, B) >= 0


# ------------------------------------------------------------------------------ the free-block queue (prefix cache)
# With ``P_PCACHE`` (vLLM V1's prefix caching) freed blocks keep their KV until they are handed out again. vLLM's
# BlockPool keeps the free blocks in one queue: an allocation pops its head, freed blocks are appended to its tail (a
# request's in reverse order, "so that the tail blocks are evicted first"), and a re-admitted request takes its cached
# leading blocks out of the queue without a pop. The queue is held as segments, in order: one per preempted request
# (its blocks: the block of its last token first, then its full blocks from the last to the first) and anonymous ones
# (blocks whose content nobody asks for again: finished requests', swapped-out ones). Pops are applied lazily: every
# block in use or freed was popped once, except those taken from the cache, so the pops so far are
# used + FREED - HITS, and the head is moved on by the difference from the pops already applied (POPS).
@njit(cache=True)
def _q_reset(si, seg, pi, row):
    si[row, SHEAD], si[row, STAIL] = 0, 0
    if pi[P_PCACHE]:  # the empty cache: every block free, none holding anything
        seg[row, 0, 0], seg[row, 0, 1] = -1, pi[P_NBLOCKS]
        si[row, STAIL] = 1


@njit(cache=True)
def _q_free(si, seg, pi, row, owner, blocks):
    """``blocks`` blocks freed to the queue's tail: preempted request ``owner``'s (its segment), or anonymous (-1).
    Returns the segment's number (-1: anonymous, or no cache)."""
    si[row, FREED] += blocks
    if not pi[P_PCACHE] or blocks <= 0:
        return -1
    S, t = seg.shape[1], si[row, STAIL]
    if owner < 0 and t > si[row, SHEAD] and seg[row, (t - 1) % S, 0] < 0:
        seg[row, (t - 1) % S, 1] += blocks
        return -1
    if t - si[row, SHEAD] >= S:  # no room for a segment (never reached: see run_engine): merged, content dropped
        seg[row, (t - 1) % S, 0] = -1
        seg[row, (t - 1) % S, 1] += blocks
        return -1
    seg[row, t % S, 0], seg[row, t % S, 1] = owner, blocks
    si[row, STAIL] = t + 1
    return t if owner >= 0 else -1


@njit(cache=True)
def _q_pop(si, seg, row, used):
    """Move the queue's head on by the pops made since the last call (``used``: blocks in use now)."""
    d = used + si[row, FREED] - si[row, HITS] - si[row, POPS]
    if d <= 0:
        return
    si[row, POPS] += d
    S, h = seg.shape[1], si[row, SHEAD]
    while d > 0 and h < si[row, STAIL]:
        k = h % S
        m = seg[row, k, 1] if seg[row, k, 1] < d else d
        seg[row, k, 1] -= m
        d -= m
        if seg[row, k, 1] == 0:
            h += 1
    si[row, SHEAD] = h
    si[row, POPS] -= d  # pops beyond the queue's end (a block taken while the cache is over-full): owed to the next


@njit(cache=True)
def _q_cached(si, cnt, seg, Q, pi, row, i, B, step, adm):
    """How many of preempted request ``i``'s leading blocks are still cached (``step``: the step whose blocks the
    running requests hold at admission; ``adm``: blocks of the requests admitted before it this round)."""
    _q_pop(si, seg, row, pi[P_NBLOCKS] - _free_at(si, cnt, row, step, B) + adm)
    s = Q[i, Q_SEG]
    if s < si[row, SHEAD]:  # (s = -1: it left no segment)
        return 0
    c = seg[row, s % seg.shape[1], 1]
    return c if c < Q[i, Q_CFULL] else Q[i, Q_CFULL]


@njit(cache=True)
def _q_take(si, seg, Q, row, i, c):
    """Re-admitted request ``i`` takes its ``c`` cached blocks out of the queue."""
    s = Q[i, Q_SEG]
    if s >= si[row, SHEAD]:
        k = s % seg.shape[1]
        seg[row, k, 0] = -1  # what is left of it (the block of its last token) holds nothing reusable
        seg[row, k, 1] -= c
        si[row, HITS] += c
    Q[i, Q_SEG] = -1


@njit(cache=True)
def _hold(si, Q, refs, hidx, row, i, B):
    """Request ``i`` takes its prefix blocks: the tokens of its leading blocks already resident."""
    lead, miss, new = 0, False, 0
    for x in range(Q[i, Q_HOFF0], Q[i, Q_HOFF1]):
        h = hidx[x]
        if refs[row, h] > 0:
            if not miss:
                lead += 512
        else:
            miss = True
            new += 1
        refs[row, h] += 1
    si[row, CAPB] -= new * (512 // B)
    return lead


@njit(cache=True)
def _release(si, Q, refs, seg, pi, hidx, row, i, B):
    for x in range(Q[i, Q_HOFF0], Q[i, Q_HOFF1]):
        h = hidx[x]
        refs[row, h] -= 1
        if refs[row, h] == 0:
            si[row, CAPB] += 512 // B
            _q_free(si, seg, pi, row, -1, 512 // B)


@njit(cache=True)
def _new_prefix_blocks(Q, refs, hidx, row, i, B):
    c = 0
    for x in range(Q[i, Q_HOFF0], Q[i, Q_HOFF1]):
        if refs[row, hidx[x]] == 0:
            c += 512 // B
    return c


@njit(cache=True)
def _join(si, cnt, heap, Q, row, i, B):
    """Request ``i`` starts decoding with its context resident (appended to the running set, its finish step in the
    heap)."""
    T = si[row, T_]
    o = Q[i, Q_INP] + Q[i, Q_GEN] - Q[i, Q_HFULL] - T
    Q[i, Q_OFF], Q[i, Q_JOIN] = o, T
    si[row, QBLK] += o // B
    cnt[row, o % B] += 1
    si[row, SUMOFF] += o
    si[row, SHARED] += Q[i, Q_HFULL]
    si[row, NRUN] += 1
    t = si[row, RTAIL]
    Q[i, Q_RPREV], Q[i, Q_RNEXT] = t, -1
    if t >= 0:
        Q[t, Q_RNEXT] = i
    else:
        si[row, RHEAD] = i
    si[row, RTAIL] = i
    Q[i, Q_FKEY] = T + Q[i, Q_OUT] - Q[i, Q_GEN]
    _h_push(si, Q, heap, row, i)


@njit(cache=True)
def _leave(si, cnt, heap, Q, refs, seg, pi, hidx, row, i, B, done):
    """Request ``i`` stops decoding (finished, or preempted)."""
    o = Q[i, Q_OFF]
    si[row, QBLK] -= o // B
    cnt[row, o % B] -= 1
    si[row, SUMOFF] -= o
    si[row, SHARED] -= Q[i, Q_HFULL]
    si[row, NRUN] -= 1
    p, q = Q[i, Q_RPREV], Q[i, Q_RNEXT]
    if p >= 0:
        Q[p, Q_RNEXT] = q
    else:
        si[row, RHEAD] = q
    if q >= 0:
        Q[q, Q_RPREV] = p
    else:
        si[row, RTAIL] = p
    if Q[i, Q_HPOS] >= 0:
        _h_remove(si, Q, heap, row, i)
    if done:
        _q_free(si, seg, pi, row, -1, (o + si[row, T_] + B - 1) // B)
        if Q[i, Q_HOFF1] > Q[i, Q_HOFF0]:
            _release(si, Q, refs, seg, pi, hidx, row, i, B)


@njit(cache=True)
def _victim(si, Q, G, rs, pi, pf, row, need_block):
    """The running request to preempt: the most recently admitted, or (priority order) the lowest level, latest
    arrival on ties; with ``need_block`` only among those that need a new block for their next token."""
    T, B, use_prio = si[row, T_], pi[P_B], pi[P_PRIO]
    v = -1
    i = si[row, RTAIL]
    while i >= 0:
        if not need_block or (Q[i, Q_OFF] + T) % B == 0:
            if not use_prio:
                return i
            if v < 0:
                v = i
            else:
                li, lv = _level(si, Q, rs, pi, pf, row, i), _level(si, Q, rs, pi, pf, row, v)
                if li < lv or (li == lv and G[i, G_ARR] > G[v, G_ARR]):
                    v = i
        i = Q[i, Q_RPREV]
    return v


@njit(cache=True)
def _copy_s(pi, pf, blocks):
    """The one swap cost of ``blocks`` blocks (see :func:`workbench.serving.cost.swap_seconds`)."""
    if blocks <= 0:
        return 0.0
    g = pi[P_GROUP]
    return ((blocks + g - 1) // g) * pi[P_CALLS] * pf[F_CALL] + blocks * pi[P_B] * pf[F_TOKS]


@njit(cache=True)
def _preempt(si, sf, cnt, heap, Q, refs, seg, hidx, host, out_t, out_b, totals, pi, pf, row, v):
    """Free running request ``v``; it re-queues at the front (swap: its KV goes to host memory first)."""
    B = pi[P_B]
    if pi[P_PCACHE]:  # the pops so far first (this keeps the queue's segments within the blocks' count)
        _q_pop(si, seg, row, pi[P_NBLOCKS] - _free_at(si, cnt, row, si[row, T_], B))
    T = si[row, T_]
    Q[v, Q_GEN] += T - Q[v, Q_JOIN]
    ctx = Q[v, Q_INP] + Q[v, Q_GEN] - Q[v, Q_HFULL]
    own = (ctx + B - 1) // B
    if pi[P_SWAP]:
        c = Q[v, Q_CONV]
        have = host[c] // B if pi[P_REUSE] else 0
        send = own - have if own > have else 0
        dt = _copy_s(pi, pf, send)
        totals[TOT_COPY_TOKENS] += send * B
        totals[TOT_COPIES] += ((send + pi[P_GROUP] - 1) // pi[P_GROUP]) * pi[P_CALLS]
        totals[TOT_OUTS] += 1
        totals[TOT_OUT_S] += dt
        host[c] = Q[v, Q_INP] + Q[v, Q_GEN]
        if pi[P_ASYNC]:  # its blocks return when its copy on the outbound link ends
            st = sf[row, OUTBUSY] if sf[row, OUTBUSY] > sf[row, TIME] else sf[row, TIME]
            sf[row, OUTBUSY] = st + dt
            k = si[row, OTAIL]
            out_t[row, k % pi[P_RING]] = st + dt
            out_b[row, k % pi[P_RING]] = own
            si[row, OTAIL] = k + 1
            si[row, PEND] += own
        else:
            sf[row, TIME] += dt
            sf[row, BUSY] += dt
            sf[row, STALL] += dt
            totals[TOT_STALL] += dt
            _q_free(si, seg, pi, row, -1, own)
        Q[v, Q_WHERE] = HOST
        Q[v, Q_PRE] = 1
    else:  # its KV is freed: it recomputes on re-admission (what is left of it in the cache, if cached, excepted)
        Q[v, Q_PRE] = 0
        Q[v, Q_CFULL] = (ctx - 1) // B  # its full blocks of computed tokens (its last token's KV is not computed yet)
        Q[v, Q_SEG] = _q_free(si, seg, pi, row, v, own)
    _leave(si, cnt, heap, Q, refs, seg, pi, hidx, row, v, B, False)
    Q[v, Q_PREEMPT] += 1
    _w_push(si, Q, row, v, True)


@njit(cache=True)
def _record(si, sf, Q, G, gaps, totals, row, i, tt):
    """Request ``i`` emits a token at ``tt``: the gap since its last one (and the stall in it) is one record."""
    k = int(totals[TOT_GAPS])
    gaps[k, 0] = tt - G[i, G_LASTTOK]
    gaps[k, 1] = 0.0
    gaps[k, 2] = 1.0
    gaps[k, 3] = 1.0
    gaps[k, 4] = sf[row, STALL] - G[i, G_LASTST]
    totals[TOT_GAPS] = k + 1
    G[i, G_LASTTOK] = tt
    G[i, G_LASTST] = sf[row, STALL]


@njit(cache=True)
def _finish(si, Q, G, fu_t, fu_i, row, i, tt):
    """Request ``i`` has produced its last token at ``tt`` (its follow-up turn, if any, arrives a pause later)."""
    G[i, G_FINISH] = tt
    j = Q[i, Q_NXT]
    if j >= 0:
        G[j, G_ARR] = tt + G[i, G_THINK]
        _fu_push(si, fu_t, fu_i, row, G[j, G_ARR], j)


@njit(cache=True)
def _reset(si, sf, cnt, rs, pi, pf, row):
    for x in range(NI):
        si[row, x] = 0
    for x in range(NF):
        sf[row, x] = 0.0
    for x in range(cnt.shape[1]):
        cnt[row, x] = 0
    for x in (WHEAD, WTAIL, RHEAD, RTAIL, AHEAD, ATAIL):
        si[row, x] = -1
    si[row, CAPB] = pi[P_NBLOCKS]
    si[row, NEXTCHG] = _geometric(rs, pf[F_RATE]) if pi[P_CHG] == 1 and pf[F_RATE] > 0 else 1 << 62
    si[row, LASTRESH] = -1


@njit(cache=True)
def _place(si, Q, row, i):
    """Append a known arrival to replica ``row``'s list (arrival order)."""
    Q[i, Q_ANEXT] = -1
    t = si[row, ATAIL]
    if t >= 0:
        Q[t, Q_ANEXT] = i
    else:
        si[row, AHEAD] = i
    si[row, ATAIL] = i


@njit(cache=True)
def _held(si, Q, row):
    """Requests replica ``row`` holds: waiting, prefilling, decoding, being swapped in, or placed and not yet taken."""
    h = si[row, NRUN] + si[row, WLEN] + si[row, NPREF] + si[row, NIN]
    a = si[row, AHEAD]
    while a >= 0:
        h += 1
        a = Q[a, Q_ANEXT]
    return h


@njit(cache=True)
def _advance(si, sf, cnt, heap, pref, refs, seg, fu_t, fu_i, out_t, out_b, in_i, Q, G, hidx, host, rs, pi, pf, tok,
             head, pf_logc, pf_pre, pf_rate, da_len, da, buf, gaps, totals, row, horizon):  # fmt: skip
    """Run replica ``row`` until its clock reaches ``horizon`` (returns 0), it has no work left (1) or the run stops
    early (2)."""
    kind, max_seqs, budget, B, water = pi[P_KIND], pi[P_SEQS], pi[P_BUDGET], pi[P_B], pi[P_WATER]
    paged, use_prio, record, ring = kind != RESERVE, pi[P_PRIO] == 1, pi[P_RECORD] == 1, pi[P_RING]
    async_swap = pi[P_SWAP] == 1 and pi[P_ASYNC] == 1
    c_pre, c_dec, cpu0, per_seq, ovc = pf[F_CPRE], pf[F_CDEC], pf[F_CPU0], pf[F_PERSEQ], pi[P_OVC] == 1
    limit, allowed = pf[F_LIMIT], pi[P_ALLOWED]
    lanes = tok.shape[0]
    while True:
        t = sf[row, TIME]
        # arrivals the scheduler has seen: all up to now, or, scheduling one step ahead (ovc), those up to the start
        # of the step that just ended (a later one joins the step after next), unless the engine is idle
        seen = t
        if ovc and (si[row, NRUN] > 0 or si[row, NPREF] > 0 or si[row, WLEN] > 0 or si[row, NIN] > 0):
            seen = sf[row, SEEN]
        while True:  # arrivals join the queue (or are rejected)
            i = _next_arrival(si, Q, G, fu_t, fu_i, row)
            if i < 0 or G[i, G_ARR] > seen:
                break
            if si[row, FUN] > 0 and fu_i[row, 0] == i:
                _fu_pop(si, fu_t, fu_i, row)
            else:
                si[row, AHEAD] = Q[i, Q_ANEXT]
                if Q[i, Q_ANEXT] < 0:
                    si[row, ATAIL] = -1
            if Q[i, Q_BIG] and paged:
                totals[TOT_VIO] += 1
                Q[i, Q_REJ] = 1
            else:
                _w_push(si, Q, row, i, False)
                G[i, G_STARR] = sf[row, STALL]
                G[i, G_LASTTOK] = G[i, G_ARR]
                G[i, G_LASTST] = sf[row, STALL]
                Q[i, Q_PIT] = si[row, ITER]
        if totals[TOT_VIO] > allowed:
            return 2
        # asynchronous copies that ended: blocks back from a swap-out; a swapped-in request joins
        while si[row, OHEAD] < si[row, OTAIL] and out_t[row, si[row, OHEAD] % ring] <= t:
            si[row, PEND] -= out_b[row, si[row, OHEAD] % ring]
            _q_free(si, seg, pi, row, -1, out_b[row, si[row, OHEAD] % ring])
            si[row, OHEAD] += 1
        while si[row, IHEAD] < si[row, ITAIL] and G[in_i[row, si[row, IHEAD] % ring], G_READY] <= t:
            i = in_i[row, si[row, IHEAD] % ring]
            si[row, IHEAD] += 1
            si[row, SIN] -= (Q[i, Q_INP] + Q[i, Q_GEN] - Q[i, Q_HFULL] + B - 1) // B
            si[row, NIN] -= 1
            Q[i, Q_WHERE] = NOWHERE
            _join(si, cnt, heap, Q, row, i, B)
        if t >= horizon:
            return 0
        n_run = si[row, NRUN]
        T = si[row, T_]
        nx = horizon
        a = _next_arrival(si, Q, G, fu_t, fu_i, row)
        if a >= 0 and G[a, G_ARR] < nx:
            nx = G[a, G_ARR]
        decodes = n_run > 0 and (kind != VLLM or si[row, WLEN] == 0)
        nnew, ndir = 0, 0
        tokq = 0
        if si[row, WLEN] > 0 or si[row, NPREF] > 0:
            step = T + (1 if n_run > 0 and kind != VLLM else 0)
            used = (si[row, SUMOFF] + si[row, NRUN] * step) // B + si[row, NRUN]  # a bound first; exact if it decides
            exact = False
            room = budget - (n_run if kind == SARATHI else 0)
            for x in range(si[row, NPREF]):
                tokq += pref[row, x, 2] - pref[row, x, 1]
            taken = si[row, RESV] + si[row, PEND] + si[row, SIN]
            adm = 0  # blocks of the requests admitted so far this round (they join after the loop)
            slots = max_seqs - si[row, NRUN] - si[row, NPREF] - si[row, NIN]
            while si[row, WLEN] > 0:
                i = si[row, WHEAD]
                if use_prio:  # the highest level waiting (the first in queue order on ties)
                    li = _level(si, Q, rs, pi, pf, row, i)
                    j = Q[i, Q_WNEXT]
                    top = pi[P_LEVELS] - 1
                    while j >= 0 and li < top:
                        lj = _level(si, Q, rs, pi, pf, row, j)
                        if lj > li:
                            i, li = j, lj
                        j = Q[j, Q_WNEXT]
                if kind == RESERVE and Q[i, Q_BIG]:  # the reservation rejects at the head of the queue
                    _w_remove(si, Q, row, i)
                    Q[i, Q_REJ] = 1
                    totals[TOT_VIO] += 1
                    continue
                need = Q[i, Q_INP] + Q[i, Q_GEN]
                hit = 0  # a preempted request's leading blocks still cached: their tokens are not computed again
                if Q[i, Q_SEG] >= 0:
                    hit = _q_cached(si, cnt, seg, Q, pi, row, i, B, step, adm)
                fresh = need - (hit * B if hit * B < need else need - 1)  # the tokens the budget counts
                own, blk, ok = 0, 0, True
                if slots <= 0:
                    ok = False
                elif not Q[i, Q_PRE] and ((tokq >= room) if kind == SARATHI else (nnew > 0 and tokq + fresh > room)):
                    break
                elif kind == RESERVE:
                    if si[row, HELD] + Q[i, Q_INP] + Q[i, Q_OUT] > pi[P_CAPTOK]:
                        break
                else:
                    own = (need - Q[i, Q_HFULL] + B - 1) // B
                    blk = own
                    if Q[i, Q_HOFF1] > Q[i, Q_HOFF0]:
                        blk += _new_prefix_blocks(Q, refs, hidx, row, i, B)
                    if si[row, CAPB] - used - taken - blk < water:
                        if not exact:
                            used, exact = _blocks_at(si, cnt, row, step, B), True
                            continue
                        ok = False
                if not ok:
                    if (
                        slots > 0
                        and si[row, PEND] > 0
                        and si[row, CAPB] - used - (taken - si[row, PEND]) - blk >= water
                    ):
                        break  # asynchronous swap-outs in flight will make room: wait for them
                    if use_prio and si[row, NRUN] > 0:  # a running request of strictly lower level makes room
                        v = _victim(si, Q, G, rs, pi, pf, row, False)
                        if v >= 0 and _level(si, Q, rs, pi, pf, row, v) < _level(si, Q, rs, pi, pf, row, i):
                            _preempt(si, sf, cnt, heap, Q, refs, seg, hidx, host, out_t, out_b, totals, pi, pf, row, v)
                            n_run = si[row, NRUN]
                            slots = max_seqs - si[row, NRUN] - si[row, NPREF] - si[row, NIN] - nnew - ndir
                            used = (si[row, SUMOFF] + si[row, NRUN] * step) // B + si[row, NRUN]
                            exact = False
                            taken = si[row, RESV] + si[row, PEND] + si[row, SIN] + adm
                            continue
                    break
                _w_remove(si, Q, row, i)
                slots -= 1
                taken += own
                adm += own
                if kind == RESERVE:
                    si[row, HELD] += Q[i, Q_INP] + Q[i, Q_OUT]
                if math.isnan(G[i, G_ADMIT]):
                    G[i, G_ADMIT] = sf[row, TIME]
                    if sf[row, TIME] - G[i, G_ARR] > limit:
                        totals[TOT_VIO] += 1
                lead = _hold(si, Q, refs, hidx, row, i, B) if Q[i, Q_HOFF1] > Q[i, Q_HOFF0] else 0
                if Q[i, Q_PRE]:
                    buf[2, ndir] = i
                    ndir += 1
                else:
                    if Q[i, Q_SEG] >= 0:
                        if lead < Q[i, Q_HFULL]:  # its shared prefix is not resident: nothing after it is reused
                            hit = 0
                        _q_take(si, seg, Q, row, i, hit)
                        lead += hit * B
                    sk = lead if lead < need else (need - 1 if need > 0 else 0)
                    buf[0, nnew] = i
                    buf[1, nnew] = sk
                    nnew += 1
                    tokq += need - sk
                    Q[i, Q_PREFILL] += need - sk
            if totals[TOT_VIO] > allowed:
                return 2
            for x in range(ndir):  # straight into the decoding batch (a swapped-out KV comes back first)
                i = buf[2, x]
                if Q[i, Q_WHERE] == HOST:
                    own = (Q[i, Q_INP] + Q[i, Q_GEN] - Q[i, Q_HFULL] + B - 1) // B
                    dt = _copy_s(pi, pf, own)
                    totals[TOT_COPY_TOKENS] += own * B
                    totals[TOT_COPIES] += ((own + pi[P_GROUP] - 1) // pi[P_GROUP]) * pi[P_CALLS]
                    totals[TOT_INS] += 1
                    totals[TOT_IN_S] += dt
                    if not pi[P_REUSE]:
                        host[Q[i, Q_CONV]] = 0  # vLLM frees the host blocks on swap-in
                    if async_swap:
                        st = sf[row, INBUSY] if sf[row, INBUSY] > sf[row, TIME] else sf[row, TIME]
                        sf[row, INBUSY] = st + dt
                        G[i, G_READY] = st + dt
                        k = si[row, ITAIL]
                        in_i[row, k % ring] = i
                        si[row, ITAIL] = k + 1
                        si[row, SIN] += own
                        si[row, NIN] += 1
                        Q[i, Q_WHERE] = SWAPPING_IN
                        continue
                    sf[row, TIME] += dt
                    sf[row, BUSY] += dt
                    sf[row, STALL] += dt
                    totals[TOT_STALL] += dt
                    Q[i, Q_WHERE] = NOWHERE
                _join(si, cnt, heap, Q, row, i, B)
            n_run = si[row, NRUN]
            if ndir > 0 and kind != VLLM:
                decodes = n_run > 0
            if kind == VLLM:
                decodes = n_run > 0 and nnew == 0
        copy_end = np.inf  # the next asynchronous copy to end (after this round's preemptions and swap-ins)
        if si[row, OHEAD] < si[row, OTAIL]:
            copy_end = out_t[row, si[row, OHEAD] % ring]
        if si[row, IHEAD] < si[row, ITAIL] and G[in_i[row, si[row, IHEAD] % ring], G_READY] < copy_end:
            copy_end = G[in_i[row, si[row, IHEAD] % ring], G_READY]
        if nnew > 0 or si[row, NPREF] > 0:
            # an iteration with prefill work
            ndone = 0
            P = 0
            pairs, tiles = 0.0, 0.0
            if kind == SARATHI:
                for x in range(nnew):
                    i = buf[0, x]
                    r = (Q[i, Q_INP] + Q[i, Q_GEN] - Q[i, Q_HFULL] + B - 1) // B
                    si[row, RESV] += r
                    k = si[row, NPREF]
                    pref[row, k, 0], pref[row, k, 1] = i, buf[1, x]
                    pref[row, k, 2], pref[row, k, 3] = Q[i, Q_INP] + Q[i, Q_GEN], r
                    si[row, NPREF] = k + 1
                room = budget - n_run
                for x in range(si[row, NPREF]):  # FCFS chunks under the budget (a handful of prompts)
                    if room <= 0:
                        break
                    c = pref[row, x, 2] - pref[row, x, 1]
                    if c > room:
                        c = room
                    room -= c
                    P += c
                    pairs += c * pref[row, x, 1] + c * (c + 1) / 2.0
                    tiles += (c + 127) // 128
                    pref[row, x, 1] += c
                    if pref[row, x, 1] >= pref[row, x, 2]:
                        buf[0, ndone] = pref[row, x, 0]
                        ndone += 1
                        si[row, RESV] -= pref[row, x, 3]
            else:
                for x in range(nnew):
                    i = buf[0, x]
                    c = Q[i, Q_INP] + Q[i, Q_GEN] - buf[1, x]
                    P += c
                    pairs += c * buf[1, x] + c * (c + 1) / 2.0
                    tiles += (c + 127) // 128
                ndone = nnew
            pf0 = pf_cost(pf_logc, pf_pre, pf_rate, pf[F_PFFLOOR], pf[F_PFTILE], 0, P, pairs, tiles)
            pf1 = (
                pf_cost(pf_logc, pf_pre, pf_rate, pf[F_PFFLOOR], pf[F_PFTILE], 1, P, pairs, tiles) if lanes > 1 else 0.0
            )
            pf2 = (
                pf_cost(pf_logc, pf_pre, pf_rate, pf[F_PFFLOOR], pf[F_PFTILE], 2, P, pairs, tiles) if lanes > 2 else 0.0
            )
            if decodes:
                while paged and si[row, NRUN] > 0 and not _fits(si, cnt, row, si[row, T_] + 1, B):  # LIFO until all fit
                    v = _victim(si, Q, G, rs, pi, pf, row, async_swap)
                    if v < 0:
                        break
                    _preempt(si, sf, cnt, heap, Q, refs, seg, hidx, host, out_t, out_b, totals, pi, pf, row, v)
                n_run = si[row, NRUN]
                decodes = n_run > 0
            if decodes:
                kv = si[row, SUMOFF] + n_run * si[row, T_] + si[row, SHARED]
                dt = combine(tok, head, da_len, da, c_pre, c_dec, cpu0, per_seq, ovc, P, pf0, pf1, pf2, n_run, kv,
                             n_run + ndone)  # fmt: skip
            else:
                dt = combine(tok, head, da_len, da, c_pre, c_dec, cpu0, per_seq, ovc, P, pf0, pf1, pf2, 0, 0.0, ndone)
            tt = sf[row, TIME] + dt
            sf[row, SEEN] = sf[row, TIME]
            sf[row, TIME] = tt
            sf[row, BUSY] += dt
            si[row, ITER] += 1
            if decodes:
                if record:
                    i = si[row, RHEAD]
                    while i >= 0:
                        _record(si, sf, Q, G, gaps, totals, row, i, tt)
                        i = Q[i, Q_RNEXT]
                si[row, T_] += 1
            for x in range(ndone):
                i = buf[0, x]
                g = Q[i, Q_GEN] + 1
                Q[i, Q_GEN] = g
                if math.isnan(G[i, G_FIRST]):
                    G[i, G_FIRST] = tt
                    G[i, G_STALLT] = sf[row, STALL] - G[i, G_STARR]
                    G[i, G_LASTTOK] = tt
                    G[i, G_LASTST] = sf[row, STALL]
                elif record:  # a recomputed request's token after its gap
                    _record(si, sf, Q, G, gaps, totals, row, i, tt)
                if g >= Q[i, Q_OUT]:
                    _finish(si, Q, G, fu_t, fu_i, row, i, tt)
                    _q_free(si, seg, pi, row, -1, (Q[i, Q_INP] + g - 1 - Q[i, Q_HFULL] + B - 1) // B)
                    if Q[i, Q_HOFF1] > Q[i, Q_HOFF0]:
                        _release(si, Q, refs, seg, pi, hidx, row, i, B)
                    if kind == RESERVE:
                        si[row, HELD] -= Q[i, Q_INP] + Q[i, Q_OUT]
                else:
                    _join(si, cnt, heap, Q, row, i, B)
            if kind == SARATHI:
                k = 0
                for x in range(si[row, NPREF]):
                    if pref[row, x, 1] < pref[row, x, 2]:
                        for y in range(4):
                            pref[row, k, y] = pref[row, x, y]
                        k += 1
                si[row, NPREF] = k
        elif n_run > 0:
            # a run of pure decode iterations until the next completion, arrival (or router horizon), copy end, change
            # of levels that could reorder the queue, or full cache; when not even one more token fits for everyone,
            # preempt and decode at once, as vLLM does
            freed = False
            while paged and si[row, NRUN] > 0 and not _fits(si, cnt, row, si[row, T_] + 1, B):
                v = _victim(si, Q, G, rs, pi, pf, row, async_swap)
                if v < 0:
                    break
                _preempt(si, sf, cnt, heap, Q, refs, seg, hidx, host, out_t, out_b, totals, pi, pf, row, v)
                freed = True
            n_run = si[row, NRUN]
            if n_run == 0:
                continue
            if si[row, OHEAD] < si[row, OTAIL] and out_t[row, si[row, OHEAD] % ring] < copy_end:
                copy_end = out_t[row, si[row, OHEAD] % ring]  # a copy those preemptions just queued
            T = si[row, T_]
            k = Q[heap[row, 0], Q_FKEY] - T
            S0 = si[row, SUMOFF]
            K0 = S0 + n_run * T + si[row, SHARED]
            a, s, lim = line(tok, head, pf_logc, pf_pre, pf_rate, pf[F_PFFLOOR], pf[F_PFTILE], da_len, da, c_pre, c_dec,
                             cpu0, per_seq, ovc, float(n_run), float(K0))  # fmt: skip
            if lim < np.inf:
                kk = int((lim - K0) // n_run) + 1
                if kk < 1:
                    kk = 1
                if kk < k:
                    k = kk
            per, inc = a + s * K0, s * n_run
            if freed and si[row, WLEN] > 0:  # the blocks just freed may admit the queue's head after this step
                k = 1
            room_next = n_run < max_seqs
            if kind == RESERVE:
                j = _next_arrival(si, Q, G, fu_t, fu_i, row)
                if j >= 0:
                    room_next = Q[j, Q_BIG] == 1 or (
                        n_run < max_seqs and si[row, HELD] + Q[j, Q_INP] + Q[j, Q_OUT] <= pi[P_CAPTOK]
                    )
            if nx < np.inf and ((si[row, WLEN] == 0 and room_next) or nx == horizon or use_prio):
                # (an arrival not yet seen by a scheduler one step ahead: one more step)
                kk = steps_to_reach(per, inc, nx - sf[row, TIME]) if nx > sf[row, TIME] else 1
                if kk < k:
                    k = kk
            if copy_end < np.inf:
                kk = steps_to_reach(per, inc, copy_end - sf[row, TIME])
                if kk < k:
                    k = kk
            if use_prio and pi[P_CHG] > 0 and si[row, WLEN] > 0:  # a change of levels may reorder the queue
                if pi[P_CHG] == 2:
                    k = 1
                else:
                    _level(si, Q, rs, pi, pf, row, si[row, WHEAD])  # realises the reshuffles up to now
                    kk = si[row, NEXTCHG] - si[row, ITER]
                    if kk < 1:
                        kk = 1
                    if kk < k:
                        k = kk
            extra = si[row, RESV] + si[row, PEND] + si[row, SIN]
            if (S0 + n_run * (T + k)) // B + n_run + extra > si[row, CAPB] and _free_at(si, cnt, row, T + k, B) < 0:
                lo, hi = 1, k  # the cache fills first: T + lo fits, T + hi does not
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    if _free_at(si, cnt, row, T + mid, B) >= 0:
                        lo = mid
                    else:
                        hi = mid
                k = lo
            dt = k * per + inc * k * (k - 1) / 2
            t0 = sf[row, TIME]
            sf[row, SEEN] = t0 + dt - (per + inc * (k - 1))  # the start of the run's last step
            sf[row, TIME] = t0 + dt
            sf[row, BUSY] += dt
            si[row, ITER] += k
            if record:
                i = si[row, RHEAD]
                while i >= 0:
                    _record(si, sf, Q, G, gaps, totals, row, i, t0 + per)
                    if k > 1:
                        G[i, G_LASTTOK] = t0 + dt
                    i = Q[i, Q_RNEXT]
                if k > 1:
                    g = int(totals[TOT_GAPS])
                    gaps[g, 0] = per + inc
                    gaps[g, 1] = inc
                    gaps[g, 2] = k - 1
                    gaps[g, 3] = n_run
                    gaps[g, 4] = 0.0
                    totals[TOT_GAPS] = g + 1
            si[row, T_] = T + k
        elif nx < np.inf or copy_end < np.inf:
            nt = nx if nx < copy_end else copy_end
            if nt > sf[row, TIME]:
                sf[row, TIME] = nt  # idle until the next arrival, copy end (or the router's next placement)
                sf[row, SEEN] = nt
            continue
        else:
            return 1
        T = si[row, T_]
        while si[row, HEAPN] > 0 and Q[heap[row, 0], Q_FKEY] <= T:
            i = heap[row, 0]
            Q[i, Q_GEN] = Q[i, Q_OUT]
            _leave(si, cnt, heap, Q, refs, seg, pi, hidx, row, i, B, True)
            _finish(si, Q, G, fu_t, fu_i, row, i, sf[row, TIME])
            if kind == RESERVE:
                si[row, HELD] -= Q[i, Q_INP] + Q[i, Q_OUT]


@njit(cache=True)
def run_engine(Q, G, hidx, n_unique, host, n_rep, router, seed, pi, pf, tok, head, pf_logc, pf_pre, pf_rate, da_len,
               da, gaps, totals):  # fmt: skip
    """Serve every request of ``Q``/``G`` (see the column constants; outputs written in place) on ``n_rep`` replicas:
    each request on ``Q[:, Q_REP]``, or placed by the least-outstanding ``router`` (then ``Q_REP`` is filled in).
    Returns whether the run stopped early."""
    n = Q.shape[0]
    rows = n_rep if router == 1 else 1
    max_seqs, B, ring = pi[P_SEQS], pi[P_B], pi[P_RING]
    si = np.zeros((rows, NI), np.int64)
    sf = np.zeros((rows, NF))
    cnt = np.zeros((rows, B), np.int64)
    heap = np.zeros((rows, max_seqs + 2), np.int64)
    pref = np.zeros((rows, max_seqs + 1, 4), np.int64)
    refs = np.zeros((rows, max(n_unique, 1)), np.int64)
    # the free-block queue's segments (owner, blocks left): every segment but the head's holds a block, at most all the
    # blocks are free, and the pops are applied at every preemption, so the blocks' count plus a few always fit
    seg = np.zeros((rows, pi[P_NBLOCKS] + 8 if pi[P_PCACHE] else 1, 2), np.int64)
    n_fu = 0
    for i in range(n):
        if Q[i, Q_NXT] >= 0:
            n_fu += 1
    fu_t = np.zeros((rows, n_fu + 1))
    fu_i = np.zeros((rows, n_fu + 1), np.int64)
    out_t = np.zeros((rows, ring))
    out_b = np.zeros((rows, ring), np.int64)
    in_i = np.zeros((rows, ring), np.int64)
    buf = np.zeros((3, max_seqs + 1), np.int64)
    held = np.zeros(n_rep, np.int64)
    rs = np.full(1, np.uint64(seed))
    stopped = False
    busy = 0.0
    args = (si, sf, cnt, heap, pref, refs, seg, fu_t, fu_i, out_t, out_b, in_i, Q, G, hidx, host, rs, pi, pf, tok, head,
            pf_logc, pf_pre, pf_rate, da_len, da, buf, gaps, totals)  # fmt: skip
    if router == 1:  # least outstanding: every replica advances to each arrival, which goes to the emptiest
        for r in range(rows):
            _reset(si, sf, cnt, rs, pi, pf, r)
            _q_reset(si, seg, pi, r)
        for j in range(n):
            for r in range(rows):
                if _advance(*args, r, G[j, G_ARR]) == 2:
                    stopped = True
                    break
                held[r] = _held(si, Q, r)
            if stopped:
                break
            k = 0
            for r in range(1, rows):
                if held[r] < held[k]:
                    k = r
            Q[j, Q_REP] = k
            _place(si, Q, k, j)
        if not stopped:
            for r in range(rows):
                if _advance(*args, r, np.inf) == 2:
                    stopped = True
                    break
        for r in range(rows):
            busy += sf[r, BUSY]
            totals[TOT_ITER] += si[r, ITER]
    else:
        for r in range(n_rep):  # one replica after another, on one row of state
            _reset(si, sf, cnt, rs, pi, pf, 0)
            _q_reset(si, seg, pi, 0)
            for i in range(n):
                if Q[i, Q_REP] == r and Q[i, Q_LATER] == 0:
                    _place(si, Q, 0, i)
            if _advance(*args, 0, np.inf) == 2:
                stopped = True
            busy += sf[0, BUSY]
            totals[TOT_ITER] += si[0, ITER]
            if stopped:
                break
    totals[TOT_BUSY] = busy
    return stopped
