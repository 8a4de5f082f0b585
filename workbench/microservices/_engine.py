"""The compiled event loop behind :func:`workbench.microservices.simulate` (one function, numba).

Events: request arrivals (pre-drawn, sorted), call arrivals at a service (same instant as the caller's launch: no
network delay; processed from a FIFO before the next timed event), service completions (the one compiled event
heap, :mod:`workbench._eventheap`, ordered by time then sequence number) and the controller tick every ``update_s``. A call instance is
``request * max_nodes + (node - root of the request's type)``. A service takes the oldest queued call when a worker
frees (FIFO), the queueing delay of each dequeued call is the overload signal; a worker is not held while a call
waits for its downstream calls. Statuses: 0 completed, 1 held back at the client, 2 dropped at a service,
3 queue overflow, 4 unfinished at the end of the run.
"""

from __future__ import annotations

import numpy as np

from .._eventheap import heap_pop, heap_push
from .._jit import njit
from .controllers import _breakwater_credits, _dagor_level, _rajomon_price


@njit(cache=True)
def _total_price(n, own, known, node_service, node_child_off, child_node):
    """Own price of node n's service plus the last known prices of its calls."""
    p = own[node_service[n]]
    for j in range(node_child_off[n], node_child_off[n + 1]):
        p += known[child_node[j]]
    return p


@njit(cache=True)
def run(
    arr_t,
    arr_type,
    importance,
    node_service,
    node_parent,
    node_nstages,
    node_stage_off,
    stage_start,
    child_node,
    node_child_off,
    type_root,
    svc_workers,
    svc_mean_s,
    svc_dist,
    max_nodes,
    kind,
    prm,
    update_s,
    horizon_s,
    queue_cap,
    seed,
):
    np.random.seed(seed)  # noqa: NPY002 (numba: the compiled stream, seeded per run)
    n_req = arr_t.shape[0]
    n_svc = svc_workers.shape[0]
    n_nodes = node_service.shape[0]
    n_inst = n_req * max_nodes
    n_ticks = int(horizon_s / update_s) + 1
    # per request
    status = np.full(n_req, 4, np.int8)
    done_t = np.full(n_req, np.nan)
    work = np.zeros(n_req)
    drop_node = np.full(n_req, -1, np.int64)
    # per call instance
    tokens = np.zeros(n_inst, np.float32)
    pending = np.zeros(n_inst, np.int16)
    stage = np.zeros(n_inst, np.int16)
    failed = np.zeros(n_inst, np.int8)
    # per service
    busy = np.zeros(n_svc, np.int64)
    outstanding = np.zeros(n_svc, np.int64)
    qbuf = np.zeros((n_svc, queue_cap), np.int64)
    qt = np.zeros((n_svc, queue_cap))
    qhead = np.zeros(n_svc, np.int64)
    qlen = np.zeros(n_svc, np.int64)
    w_max = np.zeros(n_svc)
    w_sum = np.zeros(n_svc)
    w_n = np.zeros(n_svc)
    w_arr = np.zeros(n_svc)
    w_start = np.zeros(n_svc)
    svc_busy_s = np.zeros(n_svc)
    svc_calls = np.zeros(n_svc, np.int64)
    svc_drops = np.zeros(n_svc, np.int64)
    # controller state
    level = np.ones(n_svc)
    credits = np.zeros(n_svc)
    for s in range(n_svc):
        credits[s] = prm[3] * svc_workers[s]
    own = np.zeros(n_svc)
    known = np.zeros(n_nodes)
    client_price = np.zeros(type_root.shape[0])
    balance = 0.0
    ctl = np.zeros((n_ticks, n_svc))  # level / credits / own price per tick
    qlen_t = np.zeros((n_ticks, n_svc), np.int64)
    # heap of completions (at most one per busy worker)
    cap = int(svc_workers.sum()) + 1
    ht = np.zeros(cap)
    hs = np.zeros(cap, np.int64)
    hi = np.zeros(cap, np.int64)
    hn = 0
    seq = 0
    # immediate call arrivals (FIFO ring)
    fcap = 1024
    fifo = np.zeros(fcap, np.int64)
    fh = 0
    fl = 0
    next_arr = 0
    tick = 0
    next_tick = update_s
    while True:
        t_ev = ht[0] if hn > 0 else np.inf
        t_a = arr_t[next_arr] if next_arr < n_req else np.inf
        now = min(t_ev, t_a, next_tick)
        if now > horizon_s or now == np.inf:
            break
        if next_tick <= t_ev and next_tick <= t_a:
            # controller tick
            for s in range(n_svc):
                d = w_max[s]
                if qlen[s] > 0:
                    d = max(d, now - qt[s, qhead[s]])
                if kind == 1:
                    w_arr_done = w_arr[s] >= prm[4] or now - w_start[s] >= prm[3] - 1e-12
                    if w_arr_done:
                        mean = w_sum[s] / w_n[s] if w_n[s] > 0 else 0.0
                        if qlen[s] > 0:
                            mean = max(mean, now - qt[s, qhead[s]])
                        level[s] = _dagor_level(level[s], mean, prm[0], prm[1], prm[2])
                        w_sum[s] = 0.0
                        w_n[s] = 0.0
                        w_arr[s] = 0.0
                        w_start[s] = now
                    ctl[tick, s] = level[s]
                elif kind == 2:
                    credits[s] = _breakwater_credits(credits[s], d, prm[0], prm[1], prm[2], float(svc_workers[s]))
                    ctl[tick, s] = credits[s]
                elif kind == 3:
                    own[s] = _rajomon_price(own[s], d, prm[0], prm[1], prm[2])
                    ctl[tick, s] = own[s]
                qlen_t[tick, s] = qlen[s]
                w_max[s] = 0.0
            tick += 1
            next_tick = (tick + 1) * update_s
            continue
        if t_a <= t_ev:
            r = next_arr
            next_arr += 1
            k = arr_type[r]
            if kind == 3:
                tokens[r * max_nodes] = importance[r] * prm[3]
                if prm[4] > 0.5:
                    # the client's token balance: a held-back request's tokens stay with the client, the next
                    # request sent carries them all (the authors' "all" token strategy)
                    balance += importance[r] * prm[3]
                    if balance < client_price[k]:
                        status[r] = 1
                        done_t[r] = now
                        continue
                    tokens[r * max_nodes] = balance
                    balance = 0.0
            fifo[fl % fcap] = r * max_nodes
            fl += 1
        else:
            _, i, hn = heap_pop(ht, hs, hi, hn)
            r = i // max_nodes
            n = type_root[arr_type[r]] + i % max_nodes
            s = node_service[n]
            busy[s] -= 1
            outstanding[s] -= 1
            if qlen[s] > 0:
                j = qbuf[s, qhead[s]]
                d = now - qt[s, qhead[s]]
                qhead[s] = (qhead[s] + 1) % queue_cap
                qlen[s] -= 1
                w_max[s] = max(w_max[s], d)
                w_sum[s] += d
                w_n[s] += 1.0
                st = svc_mean_s[s] * (np.random.exponential(1.0) if svc_dist[s] == 0 else 1.0)  # noqa: NPY002
                busy[s] += 1
                work[j // max_nodes] += st
                svc_busy_s[s] += st
                hn = heap_push(ht, hs, hi, hn, now + st, seq, j)
                seq += 1
            # the call's own work is done: launch its first stage, or finish
            up = i
            launch = node_nstages[n] > 0
            while True:
                if launch:
                    ru = up // max_nodes
                    nu = type_root[arr_type[ru]] + up % max_nodes
                    base = ru * max_nodes - type_root[arr_type[ru]]
                    js = node_stage_off[nu] + stage[up]
                    a, b = stage_start[js], stage_start[js + 1]
                    pending[up] = b - a
                    extra = 0.0
                    if kind == 3:
                        ca, cb = node_child_off[nu], node_child_off[nu + 1]
                        tot = 0.0
                        for c in range(ca, cb):
                            tot += known[child_node[c]]
                        extra = (tokens[up] - own[node_service[nu]] - tot) / (cb - ca)
                    for c in range(a, b):
                        ch = child_node[c]
                        ci = base + ch
                        tokens[ci] = known[ch] + extra
                        failed[ci] = 0
                        stage[ci] = 0
                        if fl - fh >= fcap:
                            nf = np.zeros(2 * fcap, np.int64)
                            for q in range(fh, fl):
                                nf[q - fh] = fifo[q % fcap]
                            fl -= fh
                            fh = 0
                            fcap *= 2
                            fifo = nf
                        fifo[fl % fcap] = ci
                        fl += 1
                    break
                # finish instance `up`: report to its parent
                ru = up // max_nodes
                nu = type_root[arr_type[ru]] + up % max_nodes
                p = node_parent[nu]
                if p < 0:
                    done_t[ru] = now
                    if status[ru] == 4:
                        status[ru] = 0 if failed[up] == 0 else 2
                    client_price[arr_type[ru]] = _total_price(nu, own, known, node_service, node_child_off, child_node)
                    break
                known[nu] = _total_price(nu, own, known, node_service, node_child_off, child_node)
                pi = ru * max_nodes + (p - type_root[arr_type[ru]])
                if failed[up]:
                    failed[pi] = 1
                pending[pi] -= 1
                if pending[pi] > 0:
                    break
                up = pi
                stage[pi] += 1
                launch = failed[pi] == 0 and stage[pi] < node_nstages[p]
        # call arrivals at this instant
        while fh < fl:
            i = fifo[fh % fcap]
            fh += 1
            r = i // max_nodes
            n = type_root[arr_type[r]] + i % max_nodes
            s = node_service[n]
            svc_calls[s] += 1
            w_arr[s] += 1.0
            admit = True
            if kind == 1:
                admit = importance[r] >= 1.0 - level[s]
            elif kind == 2:
                admit = outstanding[s] < credits[s]
            elif kind == 3:
                admit = tokens[i] >= _total_price(n, own, known, node_service, node_child_off, child_node)
            if admit and qlen[s] >= queue_cap:
                admit = False
                if status[r] == 4:
                    status[r] = 3
            if admit:
                outstanding[s] += 1
                if busy[s] < svc_workers[s]:
                    st = svc_mean_s[s] * (np.random.exponential(1.0) if svc_dist[s] == 0 else 1.0)  # noqa: NPY002
                    busy[s] += 1
                    work[r] += st
                    svc_busy_s[s] += st
                    w_n[s] += 1.0
                    hn = heap_push(ht, hs, hi, hn, now + st, seq, i)
                    seq += 1
                else:
                    q = (qhead[s] + qlen[s]) % queue_cap
                    qbuf[s, q] = i
                    qt[s, q] = now
                    qlen[s] += 1
                continue
            # dropped here: the call answers with an error at once
            svc_drops[s] += 1
            if drop_node[r] < 0:
                drop_node[r] = n
            if status[r] == 4:
                status[r] = 2
            up = i
            while True:
                ru = up // max_nodes
                nu = type_root[arr_type[ru]] + up % max_nodes
                p = node_parent[nu]
                if p < 0:
                    done_t[ru] = now
                    client_price[arr_type[ru]] = _total_price(nu, own, known, node_service, node_child_off, child_node)
                    break
                if up == i:
                    known[nu] = _total_price(nu, own, known, node_service, node_child_off, child_node)
                pi = ru * max_nodes + (p - type_root[arr_type[ru]])
                failed[pi] = 1
                pending[pi] -= 1
                if pending[pi] > 0:
                    break
                stage[pi] += 1
                if stage[pi] < node_nstages[p] and failed[pi] == 0:
                    break  # unreachable (failed is set), kept for symmetry
                up = pi
    return status, done_t, work, drop_node, svc_busy_s, svc_calls, svc_drops, ctl[:tick], qlen_t[:tick]
