"""Compiled kernels of :mod:`workbench.training.fused_pipeline`: the list-scheduling decoder (Giffler-Thompson
with per-GPU buckets and an optional activation-memory cap), the as-soon-as-possible timing of fixed per-GPU task
sequences, and the simulated-annealing loop over per-GPU priority orders (random draws made beforehand with a seeded
numpy Generator, so a run is deterministic for a seed and an iteration count)."""

from __future__ import annotations

import numpy as np

from .._jit import njit


@njit(cache=True)
def _gpu_ect(g, bucket, count, chain_start, pos, ready, gfree, task_dur, task_mem, mem, cap):  # pragma: no cover
    """Earliest completion among the tasks waiting on GPU ``g`` that fit under the memory cap."""
    best = np.int64(1) << 62
    for k in range(count[g]):
        c = bucket[g, k]
        t = chain_start[c] + pos[c]
        if task_mem[t] > 0.0 and mem[g] + task_mem[t] > cap:
            continue
        est = ready[c] if ready[c] > gfree[g] else gfree[g]
        if est + task_dur[t] < best:
            best = est + task_dur[t]
    return best


@njit(cache=True)
def _decode(prio, chain_start, chain_len, task_gpu, task_dur, task_mem, n_gpus, cap, start_out):  # pragma: no cover
    """Giffler-Thompson list scheduling: repeatedly take the earliest-completing ready task, and on its GPU start the
    highest-priority ready task that could start before that completion. A forward that would lift its GPU's
    activation memory above ``cap`` waits; if every waiting task is held back so (the cap deadlocks), the cap is
    lifted for the rest of the schedule. Returns makespan, peak memory and the sum of chain completion times; fills
    ``start_out``.

    Waiting tasks are kept in one bucket per GPU with each GPU's earliest completion cached, so a step costs the
    chosen GPU's bucket plus the number of GPUs. The steps are :func:`_decode_replay`'s (one decoder for both), run
    from scratch with only the initial state kept."""
    n = task_dur.shape[0]
    n_chains = chain_start.shape[0]
    sel = np.zeros(n, np.int64)
    snap_i = np.zeros((1, 2 * n_chains + 3 * n_gpus + 3), np.int64)
    snap_f = np.zeros((1, n_gpus + 2))
    snap_b = np.zeros((1, n_chains), np.int64)
    # np.int64 values, not literals: numba would compile _decode_replay again for the literal -1 and 0 (1.2 s)
    makespan, peak, completion, _, _ = _decode_replay(
        prio, chain_start, chain_len, task_gpu, task_dur, task_mem, n_gpus, cap, n + 1,
        sel, snap_i, snap_f, snap_b, np.int64(-1), np.int64(0), sel, snap_i, snap_f, snap_b, start_out,
    )  # fmt: skip
    return makespan, peak, completion


@njit(cache=True)
def _times_from_orders(order, order_ptr, chain_of, first_of_chain, task_dur, start_out):  # pragma: no cover
    """Start times (as soon as possible) of fixed per-GPU task sequences; -1 makespan if they deadlock."""
    n_gpus = order_ptr.shape[0] - 1
    n = task_dur.shape[0]
    end = np.full(n, -1, np.int64)
    nxt = order_ptr[:-1].copy()
    gfree = np.zeros(n_gpus, np.int64)
    left = order.shape[0]
    while left > 0:
        progress = False
        for g in range(n_gpus):
            while nxt[g] < order_ptr[g + 1]:
                t = order[nxt[g]]
                if t != first_of_chain[chain_of[t]] and end[t - 1] < 0:
                    break
                ready = 0 if t == first_of_chain[chain_of[t]] else end[t - 1]
                s = ready if ready > gfree[g] else gfree[g]
                start_out[t] = s
                end[t] = s + task_dur[t]
                gfree[g] = end[t]
                nxt[g] += 1
                left -= 1
                progress = True
        if not progress:
            return -1
    return end.max()


@njit(cache=True)
def _decode_replay(  # pragma: no cover
    prio, chain_start, chain_len, task_gpu, task_dur, task_mem, n_gpus, cap0, every,
    src_sel, snap_i, snap_f, snap_bucket, s_from, s_last,
    dst_sel, dst_i, dst_f, dst_bucket, start_out,
):  # fmt: skip
    """The decoder of :func:`_decode`, recorded for annealing so that a move can replay only the part of the
    decoding it may change (``start_out``: each task's start, for the steps it decodes).

    A step picks one task; ``*_sel[s]`` is the task picked at step ``s``, and every ``every`` steps the decoder's whole
    state is kept (``snap_i``: per chain position and ready time, per GPU free time, bucket size and earliest
    completion, then makespan, completion sum, chains left; ``snap_f``: per GPU memory, then peak and cap;
    ``snap_bucket``: the buckets, concatenated). A task's priority is consulted only while it waits in its GPU's
    bucket, so when only the priorities of ``a`` and ``b`` changed, every step before ``s_from`` (the first step
    either waits) picks what it picked before, and if the steps up to ``s_last`` (the last step either waits) pick
    the same tasks again, the whole schedule is the same. With ``s_from >= 0`` the decoding starts from the last
    state kept at or before ``s_from`` (of ``src``); it stops at ``s_last`` if nothing changed, else it runs to the
    end writing the new steps and states (from the first changed step on) into ``dst``. ``s_from < 0``: a full
    decoding from scratch, all recorded into ``dst``.

    After a change, each kept state at a later step than ``s_last`` is compared with ``src``'s: if equal, the rest
    of the decoding is ``src``'s and it stops there.

    Returns makespan, peak memory, completion sum, the first changed step (``-1``: none) and the step it stopped at
    (``n``: it ran to the end). Unless it ran to the end, the schedule is ``src``'s and the first three returns are
    partial."""
    n_chains = chain_start.shape[0]
    n = task_dur.shape[0]
    big = np.int64(1) << 62
    pos = np.zeros(n_chains, np.int64)
    ready = np.zeros(n_chains, np.int64)
    gfree = np.zeros(n_gpus, np.int64)
    mem = np.zeros(n_gpus)
    bucket = np.empty((n_gpus, n_chains), np.int64)
    count = np.zeros(n_gpus, np.int64)
    gect = np.empty(n_gpus, np.int64)
    o_ready = n_chains
    o_gfree = 2 * n_chains
    o_count = o_gfree + n_gpus
    o_gect = o_count + n_gpus
    o_scal = o_gect + n_gpus
    if s_from >= 0:
        k = s_from // every
        step = k * every
        for c in range(n_chains):
            pos[c] = snap_i[k, c]
            ready[c] = snap_i[k, o_ready + c]
        q = 0
        for g in range(n_gpus):
            gfree[g] = snap_i[k, o_gfree + g]
            count[g] = snap_i[k, o_count + g]
            gect[g] = snap_i[k, o_gect + g]
            mem[g] = snap_f[k, g]
            for m in range(count[g]):
                bucket[g, m] = snap_bucket[k, q]
                q += 1
        makespan = snap_i[k, o_scal]
        completion = snap_i[k, o_scal + 1]
        n_left = snap_i[k, o_scal + 2]
        peak = snap_f[k, n_gpus]
        cap = snap_f[k, n_gpus + 1]
        changed = -1
    else:
        step = 0
        for c in range(n_chains):
            g = task_gpu[chain_start[c]]
            bucket[g, count[g]] = c
            count[g] += 1
        cap = cap0
        for g in range(n_gpus):
            gect[g] = _gpu_ect(g, bucket, count, chain_start, pos, ready, gfree, task_dur, task_mem, mem, cap)
        n_left = n_chains
        makespan = 0
        peak = 0.0
        completion = 0
        changed = 0
    kept = -1
    while n_left > 0:
        if changed >= 0 and step % every == 0 and kept != step:  # keep the state before this step
            kept = step
            k = step // every
            if s_from >= 0 and step > s_last and cap == snap_f[k, n_gpus + 1]:  # back on the recorded path?
                same = (
                    makespan == snap_i[k, o_scal] and completion == snap_i[k, o_scal + 1] and peak == snap_f[k, n_gpus]
                )
                for c in range(n_chains):
                    if not same:
                        break
                    same = pos[c] == snap_i[k, c] and ready[c] == snap_i[k, o_ready + c]
                q = 0
                for g in range(n_gpus):
                    if not same:
                        break
                    same = gfree[g] == snap_i[k, o_gfree + g] and count[g] == snap_i[k, o_count + g]
                    same = same and gect[g] == snap_i[k, o_gect + g] and mem[g] == snap_f[k, g]
                    for m in range(count[g]):
                        if not same:
                            break
                        same = bucket[g, m] == snap_bucket[k, q]
                        q += 1
                if same:  # the same state with both tasks placed: the rest is the recorded decoding
                    return makespan, peak, completion, changed, step
            for c in range(n_chains):
                dst_i[k, c] = pos[c]
                dst_i[k, o_ready + c] = ready[c]
            q = 0
            for g in range(n_gpus):
                dst_i[k, o_gfree + g] = gfree[g]
                dst_i[k, o_count + g] = count[g]
                dst_i[k, o_gect + g] = gect[g]
                dst_f[k, g] = mem[g]
                for m in range(count[g]):
                    dst_bucket[k, q] = bucket[g, m]
                    q += 1
            dst_i[k, o_scal] = makespan
            dst_i[k, o_scal + 1] = completion
            dst_i[k, o_scal + 2] = n_left
            dst_f[k, n_gpus] = peak
            dst_f[k, n_gpus + 1] = cap
        gstar = 0
        for g in range(1, n_gpus):
            if gect[g] < gect[gstar]:
                gstar = g
        best_ect = gect[gstar]
        if best_ect >= big:  # the memory cap holds every waiting task back: lift it
            cap = np.inf
            for g in range(n_gpus):
                gect[g] = _gpu_ect(g, bucket, count, chain_start, pos, ready, gfree, task_dur, task_mem, mem, cap)
            continue
        bk = -1
        bestp = -np.inf
        for k in range(count[gstar]):
            c = bucket[gstar, k]
            t = chain_start[c] + pos[c]
            if task_mem[t] > 0.0 and mem[gstar] + task_mem[t] > cap:
                continue
            est = ready[c] if ready[c] > gfree[gstar] else gfree[gstar]
            if est < best_ect and prio[t] > bestp:
                bestp = prio[t]
                bk = k
        c = bucket[gstar, bk]
        t = chain_start[c] + pos[c]
        if changed < 0:
            if t != src_sel[step]:
                changed = step
            elif step >= s_last:  # the two tasks are placed as before: so is everything after them
                return makespan, peak, completion, -1, step
        if changed >= 0:
            dst_sel[step] = t
        step += 1
        s = ready[c] if ready[c] > gfree[gstar] else gfree[gstar]
        e = s + task_dur[t]
        start_out[t] = s
        gfree[gstar] = e
        ready[c] = e
        pos[c] += 1
        mem[gstar] += task_mem[t]
        if mem[gstar] > peak:
            peak = mem[gstar]
        if e > makespan:
            makespan = e
        count[gstar] -= 1
        last = bucket[gstar, count[gstar]]
        bucket[gstar, bk] = last
        if pos[c] == chain_len[c]:
            completion += e
            n_left -= 1
        else:
            h = task_gpu[t + 1]
            bucket[h, count[h]] = c
            count[h] += 1
            if h != gstar:
                tn = t + 1
                if not (task_mem[tn] > 0.0 and mem[h] + task_mem[tn] > cap):
                    est = e if e > gfree[h] else gfree[h]
                    if est + task_dur[tn] < gect[h]:
                        gect[h] = est + task_dur[tn]
        gect[gstar] = _gpu_ect(gstar, bucket, count, chain_start, pos, ready, gfree, task_dur, task_mem, mem, cap)
    return makespan, peak, completion, changed, n


@njit(cache=True)
def _anneal_kernel(  # pragma: no cover
    prio,
    orders,
    counts,
    chain_start,
    chain_len,
    task_gpu,
    task_dur,
    task_mem,
    n_gpus,
    draw_g,
    draw_i,
    draw_j,
    draw_u,
    t0,
    t1,
    weight,
    memory_limit,
    memory_penalty,
):
    """Metropolis over per-GPU priority swaps with pre-drawn random numbers (one row of draws per iteration).

    A move is evaluated by :func:`_decode_replay` from the current state's recorded decoding: only the steps while
    one of the two swapped tasks waits are decoded again, and the rest only if they picked differently. The result
    is the full decoding's, step for step (same costs, same acceptances)."""
    iterations = draw_g.shape[0]
    n = task_dur.shape[0]
    n_chains = chain_start.shape[0]
    every = max(8, int(np.sqrt(n)))
    n_snap = n // every + 1
    width = 2 * n_chains + 3 * n_gpus + 3
    sel = np.zeros(n, np.int64)
    snap_i = np.zeros((n_snap, width), np.int64)
    snap_f = np.zeros((n_snap, n_gpus + 2))
    snap_b = np.zeros((n_snap, n_chains), np.int64)
    new_sel = np.zeros(n, np.int64)
    new_i = np.zeros((n_snap, width), np.int64)
    new_f = np.zeros((n_snap, n_gpus + 2))
    new_b = np.zeros((n_snap, n_chains), np.int64)
    at = np.zeros(n, np.int64)  # the step that picks each task (current state)
    head = np.zeros(n, np.bool_)
    starts = np.zeros(n, np.int64)  # scratch: the decoder's start times, unused here
    for c in range(n_chains):
        head[chain_start[c]] = True
    # int64 values, not literals, as in _decode (one compiled version for every call)
    ms, peak, comp, _, _ = _decode_replay(
        prio, chain_start, chain_len, task_gpu, task_dur, task_mem, n_gpus, memory_limit, every,
        sel, snap_i, snap_f, snap_b, np.int64(-1), np.int64(0), sel, snap_i, snap_f, snap_b, starts,
    )  # fmt: skip
    for s in range(n):
        at[sel[s]] = s
    over = peak - memory_limit if peak > memory_limit else 0.0
    cur = ms + weight * comp + memory_penalty * over
    best = cur
    best_prio = prio.copy()
    accepted = 0
    for it in range(iterations):
        temp = t0 * (t1 / t0) ** (it / max(iterations - 1, 1))
        g = draw_g[it]
        cnt = counts[g]
        i = int(draw_i[it] * (cnt - 1))
        j = i + draw_j[it]
        if j >= cnt:
            j = cnt - 1
        a = orders[g, i]
        b = orders[g, j]
        prio[a], prio[b] = prio[b], prio[a]
        orders[g, i], orders[g, j] = b, a
        s_from = min(0 if head[a] else at[a - 1] + 1, 0 if head[b] else at[b - 1] + 1)
        s_last = max(at[a], at[b])
        ms, peak, comp, changed, until = _decode_replay(
            prio, chain_start, chain_len, task_gpu, task_dur, task_mem, n_gpus, memory_limit, every,
            sel, snap_i, snap_f, snap_b, s_from, s_last, new_sel, new_i, new_f, new_b, starts,
        )  # fmt: skip
        if changed < 0 or until < n:  # the recorded schedule again, or back on it after the change
            new = cur
        else:
            over = peak - memory_limit if peak > memory_limit else 0.0
            new = ms + weight * comp + memory_penalty * over
        if new <= cur or draw_u[it] < np.exp((cur - new) / temp):
            cur = new
            accepted += 1
            if changed >= 0:  # the new decoding becomes the recorded one from its first changed step
                for s in range(changed, until):
                    sel[s] = new_sel[s]
                    at[new_sel[s]] = s
                for k in range(changed // every + 1, n_snap):
                    if k * every < until:
                        snap_i[k, :] = new_i[k, :]
                        snap_f[k, :] = new_f[k, :]
                        snap_b[k, :] = new_b[k, :]
            if new < best:
                best = new
                best_prio[:] = prio
        else:
            prio[a], prio[b] = prio[b], prio[a]
            orders[g, i], orders[g, j] = a, b
    return best_prio, accepted
