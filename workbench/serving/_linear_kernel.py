"""The serving engine's compiled fast path for one pair, linear cost (:class:`~workbench.serving.linear.ServerConfig`)
under the reservation policy (``Scheduler("reserve")``), run through :func:`workbench.serving.linear.simulate_linear`.
The general loop (:mod:`workbench.serving.engine`) takes the same steps in the same floating-point order, so the
per-request times agree (``tests/serving/test_fast_path.py`` checks both paths on edge cases and composed ServeGen
spans); a capacity search runs this one tens of times per workload."""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

from ._common import steps_to_reach


@njit(cache=True)
def simulate_linear_kernel(  # pragma: no cover - compiled; exercised through simulate_linear
    arr, inp, out, base, pf, dec, kvs, budget, max_batch, max_pf, limit, allowed, admit, first, finish, rejected
):
    """One replica's continuous batching over requests sorted by arrival; fills ``admit``, ``first``, ``finish``
    (NaN-initialised) and ``rejected``. ``allowed < 0``: no early stop. Returns (stopped, violations, busy seconds)."""
    n = arr.shape[0]
    violations = 0
    busy = 0.0
    t = 0.0
    T = 0  # iterations run so far (= tokens produced by a request running since the start)
    heap = [(np.int64(0), np.int64(0))]  # (iteration count at which it finishes, request); typed, then emptied
    heap.pop()
    n_run = 0
    kv_used = 0
    S = 0  # sum over running of (input_tokens - admission count): resident KV = S + n_run * T
    q = 0  # head of the FCFS queue
    new = np.empty(n, np.int64)
    while q < n or len(heap) > 0:
        prefill = 0
        n_new = 0
        while q < n and arr[q] <= t:
            nq = inp[q] + out[q]
            if nq > budget:
                rejected[q] = True
                violations += 1
                q += 1
                continue
            if n_run + n_new >= max_batch or kv_used + nq > budget or (n_new > 0 and prefill + inp[q] > max_pf):
                break
            new[n_new] = q
            n_new += 1
            kv_used += nq
            prefill += inp[q]
            admit[q] = t
            if t - arr[q] > limit:
                violations += 1
            q += 1
        if allowed >= 0 and violations > allowed:
            break
        if n_new > 0:
            dt = base + pf * prefill + dec * n_run + kvs * (S + n_run * T)
            t += dt
            busy += dt
            for m in range(n_new):
                i = new[m]
                first[i] = t
                if out[i] == 1:
                    finish[i] = t
                    kv_used -= inp[i] + out[i]
                else:
                    heapq.heappush(heap, (np.int64(T + out[i]), np.int64(i)))
                    S += inp[i] - T
                    n_run += 1
            T += 1
        elif n_run == 0:
            if q >= n:
                break
            t = max(t, arr[q])  # idle until the next arrival
            continue
        else:
            # a run of pure decode iterations, until the next completion or the next admissible arrival
            k = heap[0][0] - T
            per = base + dec * n_run + kvs * (S + n_run * T)
            inc = kvs * n_run
            if q < n:
                nq = inp[q] + out[q]
                if nq > budget or (n_run < max_batch and kv_used + nq <= budget):
                    k = min(k, steps_to_reach(per, inc, arr[q] - t))
            dt = k * per + inc * k * (k - 1) / 2
            t += dt
            busy += dt
            T += k
        while len(heap) > 0 and heap[0][0] <= T:
            i = heapq.heappop(heap)[1]
            finish[i] = t
            kv_used -= inp[i] + out[i]
            S -= inp[i] - (T - out[i])
            n_run -= 1
    return allowed >= 0 and violations > allowed, violations, busy
