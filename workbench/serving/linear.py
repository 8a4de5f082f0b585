"""The linear-cost server: a replica whose iteration cost is linear and whose KV cache is a token budget.

It follows how Orca/vLLM-style servers work, with the least machinery. The server runs *iterations*; in each iteration
every running request produces one token, and requests admitted at the iteration's start are prefilled in it (their
prompt is processed and their first token produced). The iteration's duration comes from a linear cost model
(:class:`ServerConfig`)::

    iteration_s = base_s + prefill_token_s * (prompt tokens prefilled) + decode_seq_s * (decoding requests)
                  + kv_token_s * (KV-cache tokens resident in the decoding batch)

Admission is FCFS at iteration boundaries: the head of the queue is admitted while the batch has fewer than
``max_batch`` requests, the iteration's prompt tokens stay within ``max_prefill_tokens`` (the first admitted request
is always allowed), and the KV cache can hold the request's full context: each admitted request *reserves*
``input_tokens + output_tokens`` of the ``kv_budget_tokens`` budget until it finishes (an oracle of the output length:
no preemption; a request whose context alone exceeds the budget is rejected). Between events (an arrival that can be
admitted, a completion) the batch is constant, so the loop jumps over whole runs of decode iterations in closed form
(the KV term grows by one token per request per iteration, so the run's duration is a quadratic in its length). The
work is a loop over events, O(requests) in all, with no per-iteration Python work.

It is one of the two replica models of :func:`workbench.serving.serve` (pass a :class:`ServerConfig` where a
:class:`~workbench.serving.roofline.Deployment` would go); the request validator, the balancer, the per-request table
and the capacity search are the same for both. The default costs are illustrative (the order of magnitude of a
13B-parameter model on one 80 GB GPU); what the workbench compares with it is workloads on the same server, not
absolute numbers. Costs derived from real hardware come from :func:`workbench.serving.linear_fit.fit_linear` (a
least-squares fit of the roofline model over a grid), and the hardware replica with a paged KV cache and real
schedulers is :mod:`workbench.serving.engine`.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from .._validate import integer, nonnegative, positive
from ._common import ReplicaRun, check_requests, steps_to_reach

__all__ = ["ServerConfig", "simulate_linear"]


@dataclass(frozen=True)
class ServerConfig:
    """Cost model and limits of one linear-cost replica.

    Parameters
    ----------
    base_s : float
        Fixed cost of one iteration (kernel launches, sampling, scheduling), seconds.
    prefill_token_s : float
        Seconds per prompt token prefilled in an iteration.
    decode_seq_s : float
        Seconds per decoding request in an iteration.
    kv_token_s : float
        Seconds per KV-cache token resident in the decoding batch (attention reads), per iteration.
    kv_budget_tokens : int
        KV-cache capacity in tokens; each running request reserves ``input + output`` tokens.
    max_batch : int
        Most requests running at once.
    max_prefill_tokens : int
        Prompt-token budget of one iteration (one request is always admitted if it fits the KV cache).
    gpus : int
        GPUs one replica occupies (what :attr:`ServeResult.gpus <workbench.serving.ServeResult>` counts).

    Examples
    --------
    >>> ServerConfig().iteration_s(prefill_tokens=1000, decode_seqs=10, kv_tokens=20000)
    0.1329
    """

    base_s: float = 0.010
    prefill_token_s: float = 1.2e-4
    decode_seq_s: float = 2.5e-4
    kv_token_s: float = 2.0e-8
    kv_budget_tokens: int = 150_000
    max_batch: int = 256
    max_prefill_tokens: int = 16_384
    gpus: int = 1

    def __post_init__(self) -> None:
        positive("base_s", self.base_s)
        nonnegative("prefill_token_s", self.prefill_token_s)
        nonnegative("decode_seq_s", self.decode_seq_s)
        nonnegative("kv_token_s", self.kv_token_s)
        integer("kv_budget_tokens", self.kv_budget_tokens, minimum=1)
        integer("max_batch", self.max_batch, minimum=1)
        integer("max_prefill_tokens", self.max_prefill_tokens, minimum=1)
        integer("gpus", self.gpus, minimum=1)

    def iteration_s(self, prefill_tokens: float = 0, decode_seqs: float = 0, kv_tokens: float = 0) -> float:
        """Duration of one iteration."""
        return round(
            self.base_s
            + self.prefill_token_s * prefill_tokens
            + self.decode_seq_s * decode_seqs
            + self.kv_token_s * kv_tokens,
            12,
        )


def simulate_linear(
    arrival_s: np.ndarray,
    input_tokens: np.ndarray,
    output_tokens: np.ndarray,
    config: ServerConfig = ServerConfig(),
    *,
    ttft_limit_s: float = math.inf,
    max_violations: int | None = None,
) -> ReplicaRun:
    """Serve requests (sorted by arrival) on one linear-cost replica; return per-request times (what
    :func:`workbench.serving.simulate_replica` does when given a :class:`ServerConfig`).

    ``output_tokens`` below 1 count as 1 (every request produces at least its first token).

    Parameters
    ----------
    arrival_s, input_tokens, output_tokens : array
    config : ServerConfig
    ttft_limit_s, max_violations : optional early stop
        When more than ``max_violations`` requests are certain to miss ``ttft_limit_s`` (their queueing delay alone
        exceeds it, or they are rejected), stop: an SLO check has already failed (``stopped`` is True).

    Returns
    -------
    ReplicaRun
        ``admit_s``, ``first_token_s``, ``finish_s`` (NaN for rejected requests), ``rejected`` (bool),
        ``preemptions`` (0: the reservation never preempts), ``prefill_tokens`` (the prompt, once, for admitted
        requests), ``busy_s``, ``stopped`` and ``violations`` (requests certain to miss ``ttft_limit_s``).

    Examples
    --------
    >>> r = simulate_linear([0.0], [100], [3], ServerConfig(base_s=0.01, prefill_token_s=0.0, decode_seq_s=0.0,
    ...                     kv_token_s=0.0))
    >>> r.first_token_s.tolist(), r.finish_s.tolist()
    ([0.01], [0.03])
    """
    arr, inp, out = check_requests(arrival_s, input_tokens, output_tokens)
    n = arr.size
    base, pf, dec, kvs = config.base_s, config.prefill_token_s, config.decode_seq_s, config.kv_token_s
    budget, max_batch, max_pf = config.kv_budget_tokens, config.max_batch, config.max_prefill_tokens
    need = (inp + out).tolist()
    arr_l, inp_l, out_l = arr.tolist(), inp.tolist(), out.tolist()
    admit = [math.nan] * n
    first = [math.nan] * n
    finish = [math.nan] * n
    rejected = [False] * n
    limit = float(ttft_limit_s)
    allowed = math.inf if max_violations is None else int(max_violations)
    violations = 0
    busy = 0.0

    t = 0.0
    T = 0  # iterations run so far (= tokens produced by a request running since the start)
    heap: list[tuple[int, int]] = []  # (iteration count at which it finishes, request)
    n_run = 0
    kv_used = 0
    S = 0  # sum over running of (input_tokens - admission count): resident KV = S + n_run * T
    q = 0  # head of the FCFS queue (requests before q are admitted or rejected)
    while q < n or heap:
        # --- admission at this iteration boundary
        prefill = 0
        new: list[int] = []
        while q < n and arr_l[q] <= t:
            nq = need[q]
            if nq > budget:
                rejected[q] = True
                violations += 1
                q += 1
                continue
            if n_run + len(new) >= max_batch or kv_used + nq > budget or (new and prefill + inp_l[q] > max_pf):
                break
            new.append(q)
            kv_used += nq
            prefill += inp_l[q]
            admit[q] = t
            if t - arr_l[q] > limit:
                violations += 1
            q += 1
        if violations > allowed:
            break
        if new:
            dt = base + pf * prefill + dec * n_run + kvs * (S + n_run * T)
            t += dt
            busy += dt
            for i in new:
                first[i] = t
                if out_l[i] == 1:
                    finish[i] = t
                    kv_used -= need[i]
                else:
                    heapq.heappush(heap, (T + out_l[i], i))
                    S += inp_l[i] - T
                    n_run += 1
            T += 1
        elif n_run == 0:
            if q >= n:
                break
            t = max(t, arr_l[q])  # idle until the next arrival
            continue
        else:
            # a run of pure decode iterations, until the next completion or the next admissible arrival
            k = heap[0][0] - T
            per = base + dec * n_run + kvs * (S + n_run * T)
            inc = kvs * n_run
            # the next arrival matters if it can be admitted, or if it is oversized (it is rejected on arrival and
            # must not hold up the queue behind it)
            if q < n and (need[q] > budget or (n_run < max_batch and kv_used + need[q] <= budget)):
                k = min(k, steps_to_reach(per, inc, arr_l[q] - t))
            dt = k * per + inc * k * (k - 1) / 2
            t += dt
            busy += dt
            T += k
        while heap and heap[0][0] <= T:
            _, i = heapq.heappop(heap)
            finish[i] = t
            kv_used -= need[i]
            S -= inp_l[i] - (T - out_l[i])
            n_run -= 1
    admitted = ~np.isnan(np.array(admit))
    return ReplicaRun(
        np.array(admit),
        np.array(first),
        np.array(finish),
        np.array(rejected, dtype=bool),
        np.zeros(n, dtype=np.int64),
        np.where(admitted, inp, 0),
        busy,
        violations > allowed,
        violations,
    )
