"""A serving replica on real hardware: roofline iteration costs, a paged KV cache and vLLM/Sarathi/Orca scheduling.

One replica is a :class:`~workbench.serving.roofline.Deployment` (a model on ``tp`` GPUs). Its KV cache holds
``kv_capacity_tokens // block_tokens`` blocks of ``block_tokens`` (16) tokens. A request's allocation grows token by
token: ``ceil(context / 16)`` blocks for a context of prompt plus generated tokens; the engine never knows a request's
output length. When the cache cannot hold one more token for every decoding request, the most recently admitted
running request is **preempted by recompute** (vLLM's default): its blocks are freed, it goes back to the front of the
queue, and when re-admitted it prefills its prompt and the tokens it had generated, then continues.

Schedulers (:class:`Scheduler`):

* ``"vllm"``: vLLM's classic scheduler (v0.x default): prefill-prioritised. At an iteration boundary it admits waiting
  requests FCFS while ``max_num_seqs``, ``max_num_batched_tokens`` (whole prompts) and the free blocks (less a 1%
  watermark) allow; an iteration that prefills carries **no decodes**, so every admission stalls the running batch.
* ``"sarathi"``: Sarathi-Serve's stall-free batching (Agrawal et al., OSDI'24): every iteration decodes all running
  requests and fills the rest of a ``max_num_batched_tokens`` token budget with prompt *chunks* (FCFS).
* ``"orca"``: iteration-level scheduling (Yu et al., OSDI'22): whole prompts join the running decodes in one
  iteration under the token budget.

Iteration durations come from the deployment's roofline (:meth:`Deployment.iteration_s`, sequential or overlapped).
Between events (an admission, a completion, the cache filling up) the batch is fixed and the resident KV grows by one
token per request per iteration, so a run of pure decode iterations has a closed-form duration and the block count
after ``k`` iterations is exact from a histogram of the contexts' residues modulo the block size: the loop is over
events, never over iterations of a decode run, and has no per-request numpy work.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._rng import Seed
from .._validate import integer, one_of
from .roofline import Deployment
from .simulator import _check_requests, _metrics_table, _request_arrays, balance

__all__ = ["SCHEDULERS", "Scheduler", "ReplicaRun", "simulate_replica", "serve"]

SCHEDULERS = ("vllm", "sarathi", "orca")


@dataclass(frozen=True)
class Scheduler:
    """Batching policy of a replica.

    Parameters
    ----------
    kind : {"vllm", "sarathi", "orca"}
    max_num_seqs : int
        Most requests running (decoding or prefilling) at once.
    max_num_batched_tokens : int
        Tokens one iteration may process: whole prompts for vLLM and Orca, the chunk budget (decodes included) for
        Sarathi-Serve (its papers use 512-2048).
    block_tokens : int
        Tokens per KV-cache block.
    watermark : float
        Fraction of the blocks kept free when admitting (vLLM's 0.01).
    """

    kind: str = "vllm"
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    block_tokens: int = 16
    watermark: float = 0.01

    def __post_init__(self) -> None:
        one_of("kind", self.kind, SCHEDULERS)
        integer("max_num_seqs", self.max_num_seqs, minimum=1)
        integer("max_num_batched_tokens", self.max_num_batched_tokens, minimum=1)
        integer("block_tokens", self.block_tokens, minimum=1)
        if not 0 <= self.watermark < 1:
            raise ValueError(f"watermark must be in [0, 1), got {self.watermark}")
        if self.kind == "sarathi" and self.max_num_batched_tokens <= self.max_num_seqs:
            raise ValueError(
                f"a Sarathi token budget (max_num_batched_tokens={self.max_num_batched_tokens}) must exceed "
                f"max_num_seqs={self.max_num_seqs}, or decodes alone fill it"
            )


@dataclass(frozen=True)
class ReplicaRun:
    """Per-request times of one replica (NaN where a request was rejected or not reached by an early stop)."""

    admit_s: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    rejected: np.ndarray
    preemptions: np.ndarray
    busy_s: float
    stopped: bool
    violations: int


def simulate_replica(
    arrival_s,
    input_tokens,
    output_tokens,
    deployment: Deployment,
    scheduler: Scheduler = Scheduler(),
    *,
    prefilled: np.ndarray | None = None,
    ttft_limit_s: float = math.inf,
    max_violations: int | None = None,
) -> ReplicaRun:
    """Serve requests (sorted by arrival) on one replica; see the module docstring for the model.

    ``prefilled`` marks requests whose KV cache arrives with them (prefill/decode disaggregation: the prefill pool
    produced their first token): on admission they take their blocks and join the decoding batch without a prefill
    iteration (``first_token_s`` stays NaN for them); preempted later, they recompute like any other request.

    A request whose full context (prompt plus output) needs more blocks than the whole cache, or whose prompt exceeds
    a vLLM/Orca ``max_num_batched_tokens``, is rejected on arrival (a real engine would abort it).

    Examples
    --------
    >>> d = Deployment("Llama-2-7B", "A100-80GB")
    >>> r = simulate_replica([0.0, 0.0], [1000, 200], [3, 2], d)
    >>> bool(r.first_token_s[0] == r.first_token_s[1]), int(r.preemptions.sum())  # one prefill iteration for both
    (True, 0)
    """
    arr, inp, out = _check_requests(arrival_s, input_tokens, output_tokens)
    if not isinstance(deployment, Deployment):
        raise TypeError(f"deployment must be a Deployment, got {type(deployment).__name__}")
    n = arr.size
    B = scheduler.block_tokens
    nb = deployment.kv_capacity_tokens // B
    if nb < 1:
        raise ValueError(f"the KV cache of {deployment.kv_capacity_tokens} tokens is smaller than one block of {B}")
    kind = scheduler.kind
    vllm, sarathi = kind == "vllm", kind == "sarathi"
    max_seqs, budget = scheduler.max_num_seqs, scheduler.max_num_batched_tokens
    water = max(1, int(scheduler.watermark * nb))  # at least a block: a just-preempted request must not re-enter
    cost = deployment.sequential_cost() or deployment.iteration_s
    lines: dict[int, tuple[float, float, float]] = {}  # sequential decode lines depend on the batch size only
    arr_l, inp_l, out_l = arr.tolist(), inp.tolist(), out.tolist()
    too_big = ((inp + out + B - 1) // B > nb) | ((inp > budget) if not sarathi else np.zeros(n, bool))
    big_l = too_big.tolist()
    pre_l = [False] * n if prefilled is None else np.asarray(prefilled, dtype=bool).tolist()
    if len(pre_l) != n:
        raise ValueError(f"prefilled must have one flag per request ({n}), got {len(pre_l)}")
    admit = [math.nan] * n
    first = [math.nan] * n
    finish = [math.nan] * n
    preempt = [0] * n
    gen = [1 if p else 0 for p in pre_l]  # tokens generated so far (a prefilled request brings its first)
    off = [0] * n  # running request's context = off + T
    join_t = [0] * n  # decode step at which it joined the running batch
    epoch = [0] * n  # bumps on preemption: stale heap entries are skipped
    limit = float(ttft_limit_s)
    allowed = math.inf if max_violations is None else int(max_violations)
    violations = 0

    t = 0.0
    busy = 0.0
    T = 0  # decode steps so far
    heap: list[tuple[int, int, int]] = []  # (decode step at which it finishes, request, epoch)
    order: list[tuple[int, int]] = []  # (request, epoch) in admission order: LIFO victims, stale ones skipped
    running = [False] * n
    n_run = 0
    S = 0  # sum of offsets: resident KV tokens = S + n_run * T
    Q = 0  # block count = Q + sum_r cnt[r] * ((r + T + B - 1) // B)
    cnt = [0] * B
    waiting: deque[int] = deque()  # arrived, not admitted (preempted requests at the front)
    prefilling: list[list[int]] = []  # Sarathi: [request, prompt tokens done, prompt length]
    reserved = 0  # blocks held by requests being prefilled
    q = 0  # next arrival

    def blocks_at(step: int) -> int:
        return Q + sum(c * ((r + step + B - 1) // B) for r, c in enumerate(cnt) if c)

    def bound_at(step: int) -> int:  # an upper bound of blocks_at (each context rounds up by less than a block)
        return (S + n_run * step) // B + n_run

    def join(i: int) -> None:  # request i starts decoding with its context resident
        nonlocal S, Q, n_run
        o = inp_l[i] + gen[i] - T
        off[i], join_t[i] = o, T
        qq, rr = divmod(o, B)
        Q += qq
        cnt[rr] += 1
        S += o
        n_run += 1
        running[i] = True
        order.append((i, epoch[i]))
        heapq.heappush(heap, (T + out_l[i] - gen[i], i, epoch[i]))

    def preempt_latest() -> None:  # free the most recently admitted running request; it re-queues at the front
        v, ep = order.pop()
        while ep != epoch[v]:
            v, ep = order.pop()
        gen[v] += T - join_t[v]
        leave(v)
        pre_l[v] = False  # its KV is gone: it recomputes on re-admission
        preempt[v] += 1
        waiting.appendleft(v)

    def leave(i: int) -> None:
        nonlocal S, Q, n_run
        qq, rr = divmod(off[i], B)
        Q -= qq
        cnt[rr] -= 1
        S -= off[i]
        n_run -= 1
        running[i] = False
        epoch[i] += 1

    while True:
        while q < n and arr_l[q] <= t:  # arrivals join the queue (or are rejected)
            if big_l[q]:
                violations += 1
            else:
                waiting.append(q)
            q += 1
        if violations > allowed:
            break
        decodes = n_run > 0 and (not vllm or not waiting)
        # vLLM: decodes run only when nothing can be admitted; decide admission first
        new: list[int] = []
        if waiting or prefilling:
            step = T + (1 if n_run and not vllm else 0)
            used, exact = (S + n_run * step) // B + n_run, False  # a bound first; the exact count if it decides
            room = budget - (n_run if sarathi else 0)
            tok = sum([it[2] - it[1] for it in prefilling]) if prefilling else 0
            taken = reserved
            direct: list[int] = []  # prefilled requests: straight into the decoding batch
            while waiting and n_run + len(prefilling) + len(new) + len(direct) < max_seqs:
                i = waiting[0]
                need = inp_l[i] + gen[i]
                blk = (need + B - 1) // B
                if not pre_l[i] and ((tok >= room) if sarathi else (new and tok + need > room)):
                    break
                if nb - used - taken - blk < water:
                    if exact:
                        break
                    used, exact = blocks_at(step), True
                    continue
                waiting.popleft()
                taken += blk
                if math.isnan(admit[i]):
                    admit[i] = t
                    if t - arr_l[i] > limit:
                        violations += 1
                if pre_l[i]:
                    direct.append(i)
                else:
                    new.append(i)
                    tok += need
            if violations > allowed:
                break
            for i in direct:
                join(i)
            if direct and not vllm:
                decodes = n_run > 0
            if vllm:
                decodes = n_run > 0 and not new
        if new or prefilling:
            # an iteration with prefill work
            if sarathi:
                reserved += sum((inp_l[i] + gen[i] + B - 1) // B for i in new)
                prefilling.extend([i, 0, inp_l[i] + gen[i]] for i in new)
                room = budget - n_run
                chunks = []
                for item in prefilling:  # FCFS chunks under the budget (a handful of prompts)
                    if room <= 0:
                        break
                    c = min(room, item[2] - item[1])
                    chunks.append((item, c))
                    room -= c
                P = sum(c for _, c in chunks)
                pairs = sum(c * (it[1] + (c + 1) / 2) for it, c in chunks)
                done = [it[0] for it, c in chunks if it[1] + c >= it[2]]
                for it, c in chunks:
                    it[1] += c
            else:
                lens = [inp_l[i] + gen[i] for i in new]
                P = sum(lens)
                pairs = sum([x * (x + 1) / 2 for x in lens])
                done = new
            if decodes:
                while n_run and bound_at(T + 1) + reserved > nb and blocks_at(T + 1) + reserved > nb:
                    preempt_latest()  # LIFO until every decode fits
                dt = cost(P, pairs, n_run, S + n_run * T, n_run + len(done))
            else:
                dt = cost(P, pairs, 0, 0, len(done))
            t += dt
            busy += dt
            if decodes:
                T += 1
            for i in done:
                gen[i] += 1
                if math.isnan(first[i]):
                    first[i] = t
                if sarathi:
                    reserved -= (inp_l[i] + gen[i] - 1 + B - 1) // B
                if gen[i] >= out_l[i]:
                    finish[i] = t
                else:
                    join(i)
            if sarathi:
                prefilling = [it for it in prefilling if it[1] < it[2]]
        elif n_run:
            # a run of pure decode iterations until the next completion, admissible arrival or full cache; when
            # not even one more token fits for everyone, preempt (LIFO) and decode at once, as vLLM does
            while (S + n_run * (T + 1)) // B + n_run > nb and blocks_at(T + 1) > nb:
                preempt_latest()
            while heap and heap[0][2] != epoch[heap[0][1]]:
                heapq.heappop(heap)
            k = heap[0][0] - T
            K0 = S + n_run * T
            if deployment.overlap:
                a, s, lim = deployment.decode_line(n_run, K0)
            else:
                if n_run not in lines:
                    lines[n_run] = deployment.decode_line(n_run, K0)
                a, s, lim = lines[n_run]
            if lim < math.inf:
                k = min(k, max(1, int((lim - K0) // n_run) + 1))
            per, inc = a + s * K0, s * n_run
            if q < n and not waiting and n_run < max_seqs:
                gap = arr_l[q] - t
                if inc > 0:
                    b = per - inc / 2
                    k_arr = math.ceil((-b + math.sqrt(b * b + 2 * inc * gap)) / inc - 1e-12)
                else:
                    k_arr = math.ceil(gap / per - 1e-12)
                k = min(k, max(k_arr, 1))
            if (S + n_run * (T + k)) // B + n_run > nb and blocks_at(T + k) > nb:  # the cache fills up first
                lo, hi = 1, k  # blocks_at(T + lo) fits, blocks_at(T + hi) does not
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    if blocks_at(T + mid) <= nb:
                        lo = mid
                    else:
                        hi = mid
                k = lo
            dt = k * per + inc * k * (k - 1) / 2
            t += dt
            busy += dt
            T += k
        elif q < n:
            t = max(t, arr_l[q])  # idle until the next arrival
            continue
        else:
            break
        while heap and heap[0][0] <= T:
            _, i, ep = heapq.heappop(heap)
            if ep != epoch[i]:
                continue
            gen[i] = out_l[i]
            finish[i] = t
            leave(i)
    return ReplicaRun(
        np.array(admit),
        np.array(first),
        np.array(finish),
        too_big.copy(),
        np.array(preempt),
        busy,
        violations > allowed,
        violations,
    )


def serve(
    requests: pd.DataFrame,
    deployment: Deployment,
    scheduler: Scheduler = Scheduler(),
    *,
    n_replicas: int = 1,
    balancer: str = "round_robin",
    seed: Seed = None,
    time_scale: float = 1.0,
    ttft_limit_s: float = math.inf,
    max_violations: int | None = None,
) -> pd.DataFrame:
    """Serve a request table on ``n_replicas`` replicas of ``deployment``; one row per request.

    Parameters mirror :func:`workbench.serving.simulate`; the table has ``replica``, ``queue_s``, ``ttft_s``,
    ``tbt_s``, ``e2e_s``, ``rejected`` and ``preemptions``, and ``attrs`` holds ``gpus``, ``busy_fraction`` and
    ``stopped`` (an early stop).

    Examples
    --------
    >>> reqs = pd.DataFrame({"arrival_s": [0.0, 0.1, 0.2], "input_tokens": [500, 800, 100],
    ...                      "output_tokens": [50, 20, 80]})
    >>> m = serve(reqs, Deployment("Llama-3.1-8B", "H100-SXM"), Scheduler("sarathi", max_num_batched_tokens=512))
    >>> bool((m["ttft_s"] > 0).all()), m.attrs["gpus"]
    (True, 1)
    """
    arr, inp, out = _request_arrays(requests, time_scale)
    rep = balance(arr.size, n_replicas, balancer, seed=seed)
    cols = {k: np.full(arr.size, np.nan) for k in ("admit", "first", "finish")}
    rejected = np.zeros(arr.size, dtype=bool)
    pre = np.zeros(arr.size, dtype=np.int64)
    budget, stopped, busy = max_violations, False, 0.0
    for k in range(n_replicas):  # a loop over replicas (a handful)
        sel = np.flatnonzero(rep == k)
        r = simulate_replica(
            arr[sel], inp[sel], out[sel], deployment, scheduler, ttft_limit_s=ttft_limit_s, max_violations=budget
        )
        cols["admit"][sel], cols["first"][sel], cols["finish"][sel] = r.admit_s, r.first_token_s, r.finish_s
        rejected[sel], pre[sel] = r.rejected, r.preemptions
        busy += r.busy_s
        if r.stopped:
            stopped = True
            break
        if budget is not None:
            budget -= r.violations
    table = _metrics_table(arr, "replica", rep, inp, out, cols["admit"], cols["first"], cols["finish"], rejected)
    table["preemptions"] = pre
    span = float(np.nanmax(cols["finish"])) if np.isfinite(cols["finish"]).any() else math.nan
    table.attrs.update(
        {
            "stopped": stopped,
            "gpus": n_replicas * deployment.tp,
            "busy_fraction": busy / (n_replicas * span) if span and span > 0 else math.nan,
        }
    )
    return table
