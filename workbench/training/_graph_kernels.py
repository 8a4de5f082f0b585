"""Compiled kernels of :mod:`workbench.training.exec_graph`: building one pipeline's execution graph from its
per-rank template (1F1B order, per-layer kernels, launches and synchronisations) and simulating it (a topological
pass over fixed per-stream FIFO orders, i.e. list scheduling with each processor's order given by the program, which
is how CUDA streams and a CPU thread execute), with cycle detection and the critical predecessor of every node."""

from __future__ import annotations

import numpy as np

from .._jit import njit

# node kinds
CPU_LAUNCH, CPU_SYNC, COMPUTE, TP_COMM, PP_COMM, DP_COMM, OPTIMIZER = 0, 1, 2, 3, 4, 5, 6
# edge kinds (Lumos §3: CPU->GPU launch, GPU->CPU synchronisation, same-stream order, cross-stream event)
E_LAUNCH, E_SYNC, E_STREAM, E_CROSS = 0, 1, 2, 3
# streams per rank
R_CPU, R_COMPUTE, R_TP, R_PP, R_DP = 0, 1, 2, 3, 4
N_RES = 5


@njit(cache=True)
def _node(nd, eg, cnt, last, d, k, r, s, j, lay):  # pragma: no cover
    """Append a node (returns its id) with its same-stream edge from the stream's previous node."""
    n = cnt[0]
    nd[n, 0], nd[n, 1], nd[n, 2], nd[n, 3], nd[n, 4], nd[n, 5] = d, k, r, s, j, lay
    if last[r] >= 0:
        _edge(eg, cnt, last[r], n, np.int64(E_STREAM))
    last[r] = n
    cnt[0] = n + 1
    return n


@njit(cache=True)
def _edge(eg, cnt, a, b, k):  # pragma: no cover
    e = cnt[1]
    eg[e, 0], eg[e, 1], eg[e, 2] = a, b, k
    cnt[1] = e + 1


@njit(cache=True)
def _launched(nd, eg, cnt, last, launch_s, rcpu, d, k, r, s, j, lay, prev, cross):  # pragma: no cover
    """A CPU launch then its kernel (launch edge), with a cross-stream edge from ``prev`` when ``cross``."""
    ln = _node(nd, eg, cnt, last, launch_s, np.int64(CPU_LAUNCH), rcpu, s, j, lay)
    x = _node(nd, eg, cnt, last, d, k, r, s, j, lay)
    _edge(eg, cnt, ln, x, np.int64(E_LAUNCH))
    if cross and prev >= 0:
        _edge(eg, cnt, prev, x, np.int64(E_CROSS))
    return x


def graph_rows(p, m, ls, n_tf, n_tb, n_tr):
    """Rows :func:`build` allocates for ``p`` stages of ``m`` micro-batches in ``ls`` chunks (numbers or arrays): at
    least its node count; the edge array has four times as many rows."""
    per_layer = 2 * (2 + np.maximum(n_tf, 1)) + 2 * (2 + np.maximum(n_tb, 1)) + 2 * (2 + np.maximum(n_tr, 1)) + 4
    return p * (m * (ls * per_layer + 12) + 8) + 8


@njit(cache=True)
def build(
    p, m, ls, t_cf, t_cb, t_cr, n_tf, n_tb, n_tr, t_tp, t_pp, t_dp, t_opt, launch_s, serial, cap
):  # pragma: no cover
    """One pipeline's graph. Per layer and micro-batch: forward = 2 compute kernels each followed by ``n_tf / 2`` TP
    all-reduces; backward = (recompute forward if ``t_cr > 0``) then 2 compute kernels each followed by TP
    all-reduces; every kernel has a CPU launch before it. ``t_cf, t_cb, t_cr`` are per-layer compute seconds
    (forward, backward, recompute), ``t_tp`` one all-reduce, ``t_pp`` one stage-boundary transfer, ``t_dp`` the whole
    DP collective (split into per-layer buckets on the last micro-batch's backward), ``t_opt`` the optimizer step.
    ``serial`` puts every kernel of a rank on its compute stream and starts the DP collective after the backward.
    ``cap`` is :func:`graph_rows` of the same arguments. Returns node rows ``(dur, kind, res, stage, mb, layer)`` and
    edge rows ``(src, dst, kind)``."""
    nd = np.zeros((cap, 6))
    eg = np.zeros((4 * cap, 3), np.int64)
    cnt = np.zeros(2, np.int64)
    send = -np.ones((2, p, m), np.int64)  # transfer node of stage s's forward (0) / backward (1) of micro-batch j
    first = -np.ones((2, p, m), np.int64)  # first compute kernel of each op
    sync = -np.ones((2, p, m), np.int64)  # CPU sync before each op
    last = -np.ones(N_RES * p, np.int64)
    # The kinds, -1 ("none") and the flags as int64 and bool values: numba compiles a callee once per literal
    # argument value (11 versions of _node, 9 of _launched and 5 of _edge: a first compile of 4.2 s, now 2.2 s).
    none, yes, no = np.int64(-1), np.bool_(True), np.bool_(False)
    k_sync, k_compute, k_tp, k_pp = np.int64(CPU_SYNC), np.int64(COMPUTE), np.int64(TP_COMM), np.int64(PP_COMM)
    k_dp, k_opt, e_sync, e_cross = np.int64(DP_COMM), np.int64(OPTIMIZER), np.int64(E_SYNC), np.int64(E_CROSS)
    for s in range(p):
        base = s * N_RES
        rc, rcpu = base + R_COMPUTE, base + R_CPU
        rt, rp, rd = (rc, rc, rc) if serial else (base + R_TP, base + R_PP, base + R_DP)
        w = min(p - s - 1, m)
        for o in range(2 * m):
            # 1F1B order: w forwards, then (F, B) pairs, then the remaining backwards
            if o < w:
                fwd, j = True, o
            elif o < w + 2 * (m - w):
                q = o - w
                fwd = q % 2 == 0
                j = w + q // 2 if fwd else q // 2
            else:
                fwd, j = False, m - w + (o - w - 2 * (m - w))
            d = 0 if fwd else 1
            prev = none  # last GPU node of this op on the data path
            if p > 1:  # Megatron's p2p exchange ends with a device synchronisation (GPU -> CPU)
                sy = _node(nd, eg, cnt, last, 0.0, k_sync, rcpu, s, j, none)
                if last[rc] >= 0:
                    _edge(eg, cnt, last[rc], sy, e_sync)
                if rp != rc and last[rp] >= 0:
                    _edge(eg, cnt, last[rp], sy, e_sync)
                sync[d, s, j] = sy
            passes = 1 if fwd else (2 if t_cr > 0 else 1)
            for ps in range(passes):
                recomp = (not fwd) and passes == 2 and ps == 0
                if fwd or recomp:
                    tc, nt = (t_cf if fwd else t_cr), (n_tf if fwd else n_tr)
                else:
                    tc, nt = t_cb, n_tb
                for li in range(ls):
                    lay = li if (fwd or recomp) else ls - 1 - li
                    for _half in range(2):
                        c = _launched(nd, eg, cnt, last, launch_s, rcpu, tc / 2, k_compute, rc, s, j, lay, prev,
                                      prev >= 0 and nd[prev, 2] != rc)  # fmt: skip
                        if first[d, s, j] < 0:
                            first[d, s, j] = c
                        prev = c
                        for _ in range(nt // 2):
                            prev = _launched(nd, eg, cnt, last, launch_s, rcpu, t_tp, k_tp, rt, s, j, lay, prev,
                                             rt != rc)  # fmt: skip
                    if (not fwd) and (not recomp) and j == m - 1 and t_dp > 0 and not serial:
                        _launched(nd, eg, cnt, last, launch_s, rcpu, t_dp / ls, k_dp, rd, s, j, lay, prev, yes)
            if (fwd and s < p - 1) or ((not fwd) and s > 0):  # stage-boundary transfer
                send[d, s, j] = _launched(nd, eg, cnt, last, launch_s, rcpu, t_pp, k_pp, rp, s, j, none, prev,
                                          rp != rc)  # fmt: skip
        # end of iteration: DP collective (serial: after the backward), sync, optimizer
        if t_dp > 0 and serial:
            _launched(nd, eg, cnt, last, launch_s, rcpu, t_dp, k_dp, rd, s, none, none, none, no)
        sy = _node(nd, eg, cnt, last, 0.0, k_sync, rcpu, s, none, none)
        for r in (rc, base + R_TP, base + R_PP, base + R_DP):
            if last[r] >= 0 and (r == rc or not serial):
                _edge(eg, cnt, last[r], sy, e_sync)
        _launched(nd, eg, cnt, last, launch_s, rcpu, t_opt, k_opt, rc, s, none, none, none, no)
    # cross-rank: a stage's op waits (CPU sync and first kernel) for the neighbour's transfer
    for s in range(p):
        for j in range(m):
            if s > 0:
                _edge(eg, cnt, send[0, s - 1, j], first[0, s, j], e_cross)
                _edge(eg, cnt, send[0, s - 1, j], sync[0, s, j], e_sync)
            if s < p - 1:
                _edge(eg, cnt, send[1, s + 1, j], first[1, s, j], e_cross)
                _edge(eg, cnt, send[1, s + 1, j], sync[1, s, j], e_sync)
    return nd[: cnt[0]], eg[: cnt[1]]


@njit(cache=True)
def simulate(dur, src, dst, n):  # pragma: no cover
    """Earliest start of every node given its predecessors (Kahn's order). Returns ``start, end, critical
    predecessor (-1 for none), number of nodes scheduled`` (fewer than ``n`` means a cycle)."""
    indeg = np.zeros(n, np.int64)
    for e in range(src.shape[0]):
        indeg[dst[e]] += 1
    off = np.zeros(n + 1, np.int64)
    for e in range(src.shape[0]):
        off[src[e] + 1] += 1
    for i in range(n):
        off[i + 1] += off[i]
    fill = off[:-1].copy()
    succ = np.empty(src.shape[0], np.int64)
    for e in range(src.shape[0]):
        succ[fill[src[e]]] = dst[e]
        fill[src[e]] += 1
    start = np.zeros(n)
    end = np.zeros(n)
    crit = -np.ones(n, np.int64)
    queue = np.empty(n, np.int64)
    head, tail = 0, 0
    for i in range(n):
        if indeg[i] == 0:
            queue[tail] = i
            tail += 1
    while head < tail:
        u = queue[head]
        head += 1
        end[u] = start[u] + dur[u]
        for q in range(off[u], off[u + 1]):
            v = succ[q]
            if crit[v] < 0 or end[u] > start[v]:
                start[v] = end[u]
                crit[v] = u
            indeg[v] -= 1
            if indeg[v] == 0:
                queue[tail] = v
                tail += 1
    return start, end, crit, tail


@njit(cache=True)
def critical_path(end, crit, sink):  # pragma: no cover
    """Node ids on the critical path ending at ``sink``, source first."""
    out = np.empty(end.shape[0], np.int64)
    k = 0
    v = sink
    while v >= 0:
        out[k] = v
        k += 1
        v = crit[v]
    return out[:k][::-1].copy()


@njit(cache=True)
def coverage(start, end, kind, stage, p, t_end):  # pragma: no cover
    """Per stage: seconds of compute only, compute and communication both, communication only, neither."""
    out = np.zeros((p, 4))
    n = start.shape[0]
    cnt = np.zeros(p, np.int64)
    for i in range(n):
        if kind[i] >= COMPUTE:
            cnt[stage[i]] += 2
    for s in range(p):
        t = np.empty(cnt[s])
        dc = np.zeros(cnt[s])
        dm = np.zeros(cnt[s])
        k = 0
        for i in range(n):
            if stage[i] != s or kind[i] < COMPUTE:
                continue
            comp = kind[i] == COMPUTE or kind[i] == OPTIMIZER
            t[k], t[k + 1] = start[i], end[i]
            if comp:
                dc[k], dc[k + 1] = 1.0, -1.0
            else:
                dm[k], dm[k + 1] = 1.0, -1.0
            k += 2
        o = np.argsort(t, kind="mergesort")
        c, m_ = 0.0, 0.0
        for q in range(k):
            i = o[q]
            c += dc[i]
            m_ += dm[i]
            nxt = t[o[q + 1]] if q + 1 < k else t_end
            seg = nxt - t[i]
            if c > 0.5 and m_ > 0.5:
                out[s, 1] += seg
            elif c > 0.5:
                out[s, 0] += seg
            elif m_ > 0.5:
                out[s, 2] += seg
        out[s, 3] = t_end - out[s, 0] - out[s, 1] - out[s, 2]
    return out
