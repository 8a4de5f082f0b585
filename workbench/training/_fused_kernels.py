"""Compiled kernels of :mod:`workbench.training.fused_pipeline`: the list-scheduling decoder (Giffler-Thompson
with per-GPU buckets and an optional activation-memory cap), the as-soon-as-possible timing of fixed per-GPU task
sequences, and the simulated-annealing loop over per-GPU priority orders (random draws made beforehand with a seeded
numpy Generator, so a run is deterministic for a seed and an iteration count)."""

from __future__ import annotations

import numpy as np
from numba import njit


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
    chosen GPU's bucket plus the number of GPUs."""
    n_chains = chain_start.shape[0]
    big = np.int64(1) << 62
    pos = np.zeros(n_chains, np.int64)
    ready = np.zeros(n_chains, np.int64)
    gfree = np.zeros(n_gpus, np.int64)
    mem = np.zeros(n_gpus)
    bucket = np.empty((n_gpus, n_chains), np.int64)
    count = np.zeros(n_gpus, np.int64)
    for c in range(n_chains):
        g = task_gpu[chain_start[c]]
        bucket[g, count[g]] = c
        count[g] += 1
    gect = np.empty(n_gpus, np.int64)
    for g in range(n_gpus):
        gect[g] = _gpu_ect(g, bucket, count, chain_start, pos, ready, gfree, task_dur, task_mem, mem, cap)
    n_left = n_chains
    makespan = 0
    peak = 0.0
    completion = 0
    while n_left > 0:
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
        # take c out of its bucket
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
    """Metropolis over per-GPU priority swaps with pre-drawn random numbers (one row of draws per iteration)."""
    iterations = draw_g.shape[0]
    n = task_dur.shape[0]
    scratch = np.zeros(n, np.int64)
    ms, peak, comp = _decode(prio, chain_start, chain_len, task_gpu, task_dur, task_mem, n_gpus, memory_limit, scratch)
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
        ms, peak, comp = _decode(
            prio, chain_start, chain_len, task_gpu, task_dur, task_mem, n_gpus, memory_limit, scratch
        )
        over = peak - memory_limit if peak > memory_limit else 0.0
        new = ms + weight * comp + memory_penalty * over
        if new <= cur or draw_u[it] < np.exp((cur - new) / temp):
            cur = new
            accepted += 1
            if new < best:
                best = new
                best_prio[:] = prio
        else:
            prio[a], prio[b] = prio[b], prio[a]
            orders[g, i], orders[g, j] = a, b
    return best_prio, accepted
