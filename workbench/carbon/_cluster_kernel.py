"""The executor cluster's event loop, compiled, for the built-in schedulers (:mod:`workbench.carbon.cluster`).

:func:`~workbench.carbon.cluster.simulate` runs this loop when its scheduler is one of the package's own rules
(FIFO or critical path, alone, under CAP or under PCAPS); a scheduler of another kind (fair sharing, a user's
subclass of :class:`~workbench.carbon.schedulers.Scheduler`) runs the same loop written in Python over its methods.
Both give the same bytes (``tests/carbon/test_cluster.py`` checks every built-in rule against the Python loop):
the same event order (time, then finish < arrival < wake, then the order pushed), the same candidates in the same
order (active jobs by arrival, each job's runnable stages by stage number), the same draws (two uniforms per task,
in the order tasks start) and the same arithmetic.

A job's stages are numbered globally here: stage ``s`` of job ``j`` is ``g = stage_off[j] + s``, whose row in its
DAG's tables (critical paths, children, pools; each distinct DAG is packed once) is ``dstage[g]``. Task-duration
pools are one flat array: the pool of (stage ``g``, kind ``w``, executor-key index ``k``) is
``durations[pool_start[i] : pool_start[i] + pool_len[i]]`` with ``i = pool_base[dstage[g]] + w * nkeys + k``.
"""

from __future__ import annotations

import math

import numpy as np

from .._eventheap import heap_pop, heap_push
from .._jit import njit

#: The base rules and the wrappers the loop knows (``cluster._compiled_rule`` maps a scheduler to a pair of them).
BASE_FIFO, BASE_CP = 0, 1
WRAP_NONE, WRAP_CAP, WRAP_PCAPS = 0, 1, 2
#: The event kinds, in the order events at one instant leave the queue.
_FINISH, _ARRIVAL, _WAKE = 0, 1, 2
_KIND_SHIFT = 1 << 40  # an event's order key: kind x 2^40 + the number of events pushed before it


@njit(cache=True)
def _hour_error(t, sph, start_hour, size):
    """The trace hour of simulated time ``t`` when it lies past the intensity's ``size`` hours, else -1."""
    h = start_hour + int(t // sph)
    return h if h >= size else -1


@njit(cache=True)
def run_cluster(
    arrival,
    order,
    stage_off,
    num_tasks,
    nparents,
    dstage,
    job_dag,
    child_ptr,
    child_idx,
    cp,
    key_ptr,
    keys,
    pool_base,
    pool_start,
    pool_len,
    durations,
    uniforms,
    executors,
    job_cap,
    base,
    wrap,
    gamma,
    allowed_h,
    inten,
    low,
    high,
    sph,
    start_hour,
):
    """Run the cluster; returns ``(status, completion, rec_start, rec_end, rec_exec, rec_job, rec_stage)`` with the
    task records in the order tasks finished. ``status`` is 0, or the trace hour (>= the intensity's length) at
    which a carbon-aware rule asked for an intensity the trace does not hold (the Python loop's ``TraceError``)."""
    n_jobs = arrival.size
    n_stages = num_tasks.size
    total = 0
    for g in range(n_stages):
        total += num_tasks[g]
    size = inten.size
    to_launch = num_tasks.copy()
    left = num_tasks.copy()
    waiting = nparents.copy()
    runnable = np.zeros(n_stages, np.bool_)
    frontier = np.zeros(n_stages, np.bool_)
    stages_left = np.empty(n_jobs, np.int64)
    for j in range(n_jobs):
        stages_left[j] = stage_off[j + 1] - stage_off[j]
    job_exec = np.zeros(n_jobs, np.int64)
    completion = np.full(n_jobs, np.nan)
    active = np.empty(n_jobs, np.int64)
    n_active = 0
    ex_job = np.full(executors, -1, np.int64)
    ex_stage = np.full(executors, -1, np.int64)
    ex_start = np.zeros(executors)
    free = np.empty(executors, np.int64)
    for i in range(executors):
        free[i] = executors - 1 - i
    n_free = executors
    busy = 0
    rec_start = np.empty(total)
    rec_end = np.empty(total)
    rec_exec = np.empty(total, np.int64)
    rec_job = np.empty(total, np.int64)
    rec_stage = np.empty(total, np.int64)
    n_rec = 0
    pos = 0
    cand_j = np.empty(n_stages, np.int64)
    cand_s = np.empty(n_stages, np.int64)
    cand_p = np.empty(n_stages)
    cap = n_jobs + executors + 4
    ht = np.empty(cap)
    hs = np.empty(cap, np.int64)
    hp = np.empty(cap, np.int64)
    n = 0
    seq = 0

    def start(e, j, s, g, t, pos, seq, n):
        """Executor ``e`` starts a task of stage ``s`` (global ``g``) of job ``j`` at ``t``: its duration drawn from
        the pool of the job's executor count and the executor's history; returns ``(pos, seq, n)`` advanced."""
        k0, k1 = key_ptr[job_dag[j]], key_ptr[job_dag[j] + 1]
        held = job_exec[j]
        k = -1  # bisect_right(keys, held) - 1
        for i in range(k0, k1):
            if keys[i] <= held:
                k = i - k0
            else:
                break
        u1 = uniforms[pos]
        u2 = uniforms[pos + 1]
        nk = k1 - k0
        if k < 0:
            k = 0
        elif k < nk - 1 and u1 < (held - keys[k0 + k]) / (keys[k0 + k + 1] - keys[k0 + k]):
            k += 1
        if ex_job[e] != j:
            w = 2
        elif ex_stage[e] == s:
            w = 1
        else:
            w = 0
        i = pool_base[dstage[g]] + w * nk + k
        dur = durations[pool_start[i] + int(u2 * pool_len[i])]
        ex_job[e] = j
        ex_stage[e] = s
        ex_start[e] = t
        to_launch[g] -= 1
        if to_launch[g] == 0:
            runnable[g] = False
        n = heap_push(ht, hs, hp, n, t + dur, _FINISH * _KIND_SHIFT + seq, e * 4 + _FINISH)
        return pos + 2, seq + 1, n

    for j in order:
        n = heap_push(ht, hs, hp, n, arrival[j], _ARRIVAL * _KIND_SHIFT + seq, j * 4 + _ARRIVAL)
        seq += 1
    wake_at = -1.0
    while n > 0:
        t, p, n = heap_pop(ht, hs, hp, n)
        kind = p & 3
        x = p >> 2
        if kind == _ARRIVAL:
            j = x
            active[n_active] = j
            n_active += 1
            for g in range(stage_off[j], stage_off[j + 1]):
                if waiting[g] == 0:
                    runnable[g] = True
                    frontier[g] = True
        elif kind == _FINISH:
            e = x
            j = ex_job[e]
            s = ex_stage[e]
            g = stage_off[j] + s
            rec_start[n_rec] = ex_start[e]
            rec_end[n_rec] = t
            rec_exec[n_rec] = e
            rec_job[n_rec] = j
            rec_stage[n_rec] = s
            n_rec += 1
            left[g] -= 1
            if left[g] == 0:
                stages_left[j] -= 1
                frontier[g] = False
                for c in range(child_ptr[dstage[g]], child_ptr[dstage[g] + 1]):
                    cg = stage_off[j] + child_idx[c]
                    waiting[cg] -= 1
                    if waiting[cg] == 0:
                        runnable[cg] = True
                        frontier[cg] = True
                if stages_left[j] == 0:
                    completion[j] = t
                    k = 0
                    while active[k] != j:
                        k += 1
                    for i in range(k, n_active - 1):
                        active[i] = active[i + 1]
                    n_active -= 1
            keep = to_launch[g] > 0
            if keep and wrap == WRAP_CAP:  # CAP releases the executor when busy ones exceed the allowance
                h = _hour_error(t, sph, start_hour, size)
                if h >= 0:
                    return h, completion, rec_start, rec_end, rec_exec, rec_job, rec_stage
                keep = busy <= allowed_h[start_hour + int(t // sph)]
            if keep:
                pos, seq, n = start(e, j, s, g, t, pos, seq, n)
            else:
                job_exec[j] -= 1
                busy -= 1
                free[n_free] = e
                n_free += 1
        if n_free > 0 and (n == 0 or ht[0] > t):  # decide once all events at this instant are in
            while n_free > 0:
                allowed = 0
                if wrap == WRAP_CAP:  # CAP asks for the hour's allowance first (PCAPS only once it has candidates)
                    h = _hour_error(t, sph, start_hour, size)
                    if h >= 0:
                        return h, completion, rec_start, rec_end, rec_exec, rec_job, rec_stage
                    allowed = allowed_h[start_hour + int(t // sph)]
                got = -1
                m = 0
                if wrap == WRAP_CAP and busy >= allowed:  # blocked: nothing may start this hour
                    anything = False
                    for a in range(n_active):
                        j = active[a]
                        for g in range(stage_off[j], stage_off[j + 1]):
                            if runnable[g]:
                                anything = True
                                break
                        if anything:
                            break
                    if not anything:
                        break
                else:
                    nc = 0
                    for a in range(n_active):
                        j = active[a]
                        if job_exec[j] >= job_cap:
                            continue
                        for g in range(stage_off[j], stage_off[j + 1]):
                            if runnable[g]:
                                cand_j[nc] = j
                                cand_s[nc] = g - stage_off[j]
                                cand_p[nc] = (
                                    -arrival[j] * 1e4 - (g - stage_off[j]) if base == BASE_FIFO else cp[dstage[g]]
                                )
                                nc += 1
                    if nc == 0:
                        break
                    if wrap == WRAP_PCAPS:
                        h = _hour_error(t, sph, start_hour, size)
                        if h >= 0:
                            return h, completion, rec_start, rec_end, rec_exec, rec_job, rec_stage
                        hh = start_hour + int(t // sph)
                        c_now, lo, hi = inten[hh], low[hh], high[hh]
                        top = cand_p[0]
                        for i in range(1, nc):
                            top = max(top, cand_p[i])
                        front = -math.inf
                        for a in range(n_active):
                            j = active[a]
                            for g in range(stage_off[j], stage_off[j + 1]):
                                if frontier[g]:
                                    pf = -arrival[j] * 1e4 - (g - stage_off[j]) if base == BASE_FIFO else cp[dstage[g]]
                                    front = max(front, pf)
                        top = max(top, front if front > -math.inf else 0.0)
                        g_base = gamma * lo + (1.0 - gamma) * hi
                        g_scale = (hi - g_base) / math.expm1(gamma) if gamma > 0 else 0.0
                        eps = 1e-9 * max(hi, 1.0)
                        best_p = -math.inf
                        for i in range(nc):
                            pi = cand_p[i]
                            if pi <= best_p:
                                continue
                            r = min(max(pi / top, 0.0), 1.0) if top > 0 else 1.0
                            psi = hi if gamma == 0.0 else g_base + g_scale * math.expm1(gamma * r)
                            if c_now <= psi + eps:
                                got = i
                                best_p = pi
                    else:
                        got = 0
                        for i in range(1, nc):
                            if cand_p[i] > cand_p[got]:
                                got = i
                        if wrap == WRAP_CAP and allowed - busy <= 0:
                            got = -1
                    if got >= 0:
                        j = cand_j[got]
                        g = stage_off[j] + cand_s[got]
                        m = min(n_free, to_launch[g], job_cap - job_exec[j])
                        if wrap == WRAP_CAP:
                            m = min(m, allowed - busy)
                if got < 0 or m <= 0:
                    nxt = (int(t // sph) + 1) * sph
                    if nxt > wake_at:
                        wake_at = nxt
                        n = heap_push(ht, hs, hp, n, nxt, _WAKE * _KIND_SHIFT + seq, _WAKE)
                        seq += 1
                    break
                j = cand_j[got]
                s = cand_s[got]
                g = stage_off[j] + s
                for _ in range(m):
                    n_free -= 1
                    e = free[n_free]
                    job_exec[j] += 1
                    busy += 1
                    pos, seq, n = start(e, j, s, g, t, pos, seq, n)
    return 0, completion, rec_start, rec_end, rec_exec, rec_job, rec_stage


def pack_jobs(jobs) -> dict:
    """The jobs' stages, precedence, executor keys, critical paths and duration pools as the flat arrays
    :func:`run_cluster` reads. Per stage of each job: ``stage_off``, ``num_tasks``, ``nparents`` and ``dstage`` (the
    stage's row in the tables of its DAG); per job ``job_dag``; per DAG (each distinct one once, however many jobs
    run it) its critical paths, children, executor keys and duration pools."""
    dag_of: dict[int, int] = {}
    dags: list = []
    for d in jobs:
        if id(d) not in dag_of:
            dag_of[id(d)] = len(dags)
            dags.append(d)
    job_dag = np.array([dag_of[id(d)] for d in jobs], np.int64)
    dag_off = np.concatenate([[0], np.cumsum([d.num_stages for d in dags])]).astype(np.int64)
    n_stages = np.array([d.num_stages for d in jobs], np.int64)
    stage_off = np.concatenate([[0], np.cumsum(n_stages)]).astype(np.int64)
    children = [c for d in dags for c in d.children]
    pools: list[np.ndarray] = []
    pool_base = np.empty(int(dag_off[-1]), np.int64)
    g = 0
    for d in dags:
        for s in range(d.num_stages):
            pool_base[g] = len(pools)
            pools.extend(d.pools[w][s][k] for w in range(3) for k in range(d.keys.size))
            g += 1
    pool_len = np.array([p.size for p in pools], np.int64)
    return {
        "stage_off": stage_off,
        "num_tasks": np.concatenate([d.num_tasks for d in jobs]).astype(np.int64),
        "nparents": np.array([len(p) for d in jobs for p in d.parents], np.int64),
        "dstage": np.concatenate([dag_off[k] + np.arange(n) for k, n in zip(job_dag, n_stages, strict=True)]),
        "job_dag": job_dag,
        "child_ptr": np.concatenate([[0], np.cumsum([len(c) for c in children])]).astype(np.int64),
        "child_idx": np.array([x for c in children for x in c], np.int64),
        "cp": np.concatenate([d.critical_path_s() for d in dags]),
        "key_ptr": np.concatenate([[0], np.cumsum([d.keys.size for d in dags])]).astype(np.int64),
        "keys": np.concatenate([d.keys for d in dags]).astype(np.int64),
        "pool_base": pool_base,
        "pool_start": np.concatenate([[0], np.cumsum(pool_len)[:-1]]).astype(np.int64),
        "pool_len": pool_len,
        "durations": np.concatenate(pools).astype(float),
    }


@njit(cache=True)
def busy_seconds_per_hour(start, end, seconds_per_hour, hours):
    """Busy executor-seconds in each of ``hours`` hours of ``seconds_per_hour`` simulated seconds from time 0: each
    interval ``[start[i], end[i])`` adds its overlap with every hour it covers."""
    tot = np.zeros(hours)
    for i in range(start.size):
        a, b = start[i], end[i]
        h = max(int(a // seconds_per_hour), 0)
        while h < hours and h * seconds_per_hour < b:
            lo, hi = h * seconds_per_hour, (h + 1) * seconds_per_hour
            tot[h] += max(min(b, hi) - max(a, lo), 0.0)
            h += 1
    return tot
