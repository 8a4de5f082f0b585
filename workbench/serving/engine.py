"""The serving engine: one replica's event loop over any cost model and any scheduling policy.

A replica is a **cost model** (:class:`~workbench.serving.cost.CostModel`: its one cost table, KV capacity in tokens,
GPUs, swap cost) run by a **scheduling policy** (:class:`~workbench.serving.scheduler.Scheduler`: vLLM,
Sarathi-Serve, Orca, or Orca's reservation; what a preemption does with the KV; the order of requests). The cost
models are the hardware :class:`~workbench.serving.roofline.Deployment` and the abstract linear-cost
:class:`~workbench.serving.linear.ServerConfig`; each names its default policy (a Deployment its engine profile's:
chunked prefill under V1's budget for a current vLLM, else vLLM's classic scheduler; the reservation for a
ServerConfig). The loop is compiled (:mod:`workbench.serving._engine_kernel`); it is the only event loop of
serving: FastSwitch's mechanisms (:mod:`workbench.serving.preemption`), disaggregated pools
(:mod:`workbench.serving.disagg`) and the least-outstanding router (:func:`workbench.serving.serve`) all run in it.

**Paged KV** (``"vllm"``, ``"sarathi"``, ``"orca"``): the cache holds ``kv_capacity_tokens // block_tokens`` blocks of
``block_tokens`` (16) tokens. A request's allocation grows token by token: ``ceil(context / 16)`` blocks for a context
of prompt plus generated tokens; the engine never knows a request's output length. When the cache cannot hold one
more token for every decoding request, the most recently admitted running request (with priority order: the lowest
level) is **preempted**. By recompute (vLLM's default) its blocks are freed, it goes back to the front of the queue,
and when re-admitted it prefills its prompt and the tokens it had generated, then continues; with
``Scheduler(prefix_cache=True)`` (vLLM V1's prefix caching) freed blocks keep their KV until handed out again, from one
free queue in vLLM's order (oldest freed first; a request's blocks freed last block first), and the re-admitted request
prefills only what follows its leading blocks still cached. By swap
(``Scheduler(preemption="swap")``) its blocks are copied to host memory and, on re-admission, back at the cost model's
one swap cost (:func:`~workbench.serving.cost.swap_seconds`: copy calls per block or per block group, plus bytes over
PCIe); synchronously, the engine waits for each copy (every request stalls; the stall is recorded per request and
per token gap); asynchronously (``swap_async``), copies queue on the outbound and inbound links beside compute, a
swapped-out request's blocks return when its copy ends and a swapped-in request joins the batch when its copy ends.
With ``kv_reuse`` a conversation's host copy stays valid, so a swap-out sends only the blocks past it. Host memory is
not bounded. **Reserved KV** (``"reserve"``): each admitted request holds ``input + output`` tokens of the capacity
until it finishes (the true output length: an oracle), so nothing is preempted.

**Priorities** (``Scheduler(priority="priority")``, levels per request, higher first): the highest waiting request (the
first in queue order on ties: preempted requests, then arrivals) is admitted first and preempts running requests of
strictly lower level when it does not fit (victims: the lowest level, latest arrival on ties); ``priority_changes``
(reshuffles of every level, or a random walk of each) is applied exactly in law but lazily: levels are drawn when the
scheduler reads them, and a run of decode iterations is cut where a change could reorder a non-empty queue.

**Multi-turn conversations**: a request with a follow-up (``follow_up``, the row of the next turn, and ``think_s``)
sets its successor's arrival to its own finish plus the think time (that turn's ``arrival_s`` is NaN on input); the
served arrivals are returned. **Prefix sharing** (``hash_ids``, paged policies: per request, the ids of its prompt's
512-token blocks, as in Mooncake's traces; equal ids mean equal KV): a request's full prompt blocks are held once per
replica, by reference count, while any admitted request holds them (no cache of freed blocks). On admission a request
skips the prefill of its leading blocks already resident (keeping at least its last token, which yields the first
output token) and allocates blocks only for the blocks not yet resident plus its private tail.

**Scheduling one step ahead** (an engine whose profile overlaps its CPU work with the GPU, ``overlap_cpu``: vLLM V1's
async scheduling, SGLang's overlap scheduler, TensorRT-LLM's overlap scheduler): step N + 1 is scheduled when step N
starts, so a request arriving while step N runs is first seen when step N + 2 is scheduled (at the end of step N) and
joins step N + 2: one step later than under synchronous scheduling (vLLM's ``EngineCore.step_with_batch_queue``: the
next batch is scheduled before the running one's output is taken). An idle engine schedules at once.
**The API server** (the cost model's ``frontend_s``, e.g. the engine profile's HTTP latency): every request's first
and last token reach the client that much later; the time between tokens is unchanged (streaming is pipelined) and a
follow-up turn is sent that much later.

Between events (an admission, a completion, the cache filling up, a copy ending, a change of levels that matters)
the batch is fixed and the resident KV grows by one token per request per iteration, so a run of pure decode
iterations has a closed-form duration (the cost table's decode line, linear in the KV total within a segment of its
context grid) and the block count after ``k`` iterations is exact from a histogram of the contexts' residues modulo
the block size: the loop is over events, never over iterations of a decode run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._contracts import Array, Opaque, accepts, output
from .._rng import Seed, generator, keyed
from .._validate import integer
from . import _engine_kernel as _kernel
from ._common import ReplicaRun, check_requests
from .cost import CostModel, check_cost_model
from .metrics import TokenGaps
from .scheduler import PREEMPTIONS, SCHEDULERS, Scheduler

__all__ = ["HASH_BLOCK_TOKENS", "PREEMPTIONS", "SCHEDULERS", "Scheduler", "ReplicaRun", "SwapTotals",
           "simulate_replica"]  # fmt: skip

#: Tokens per prefix block of a ``hash_ids`` sequence (Mooncake's traces hash 512-token blocks).
HASH_BLOCK_TOKENS = 512
#: The most inter-token gap records a run with ``record_gaps`` allocates (40 bytes each: 8 GB of address space, of
#: which only the records written are touched).
MAX_RECORDED_GAPS = 200_000_000
_KINDS = {"vllm": 0, "sarathi": 1, "orca": 2, "reserve": 3}
_CHANGES = {None: 0, "reshuffle": 1, "markov": 2}


@output
@dataclass(frozen=True)
class SwapTotals:
    """What a run's swaps moved: ``swap_outs``, ``swap_ins``, ``copy_tokens`` (whole blocks) and ``copy_bytes``,
    ``copies`` (calls), ``stall_s`` (synchronous stall: every request waited), ``out_copy_s`` and ``in_copy_s``
    (seconds of copies per direction), ``iterations``."""

    swap_outs: int
    swap_ins: int
    copy_tokens: int
    copy_bytes: float
    copies: int
    stall_s: float
    out_copy_s: float
    in_copy_s: float
    iterations: int


def policy(server, scheduler: Scheduler | None) -> Scheduler:
    """The scheduler a replica runs: ``scheduler``, else the cost model's own (``server.scheduler``), else vLLM's."""
    if scheduler is None:
        scheduler = getattr(server, "scheduler", None) or Scheduler()
    if not isinstance(scheduler, Scheduler):
        raise TypeError(f"scheduler must be a Scheduler, got {type(scheduler).__name__}")
    return scheduler


@accepts(
    hash_ids=Opaque("per request, its prefix blocks' hash ids (a list of int lists), or None"),
    priority=Array(integer=True, ge=0, optional=True),
    follow_up=Array(integer=True, ge=-1, optional=True),
    conversation=Array(integer=True, ge=-1, optional=True),
)
def simulate_replica(
    arrival_s,
    input_tokens,
    output_tokens,
    server: CostModel,
    scheduler: Scheduler | None = None,
    *,
    prefilled: np.ndarray | None = None,
    hash_ids=None,
    priority=None,
    follow_up=None,
    think_s=None,
    conversation=None,
    record_gaps: bool = False,
    seed: Seed = 0,
    ttft_limit_s: float = math.inf,
    max_violations: int | None = None,
) -> ReplicaRun:
    """Serve requests (sorted by arrival) on one replica; see the module docstring for the model.

    ``server`` is the replica's cost model (:class:`~workbench.serving.roofline.Deployment`,
    :class:`~workbench.serving.linear.ServerConfig`, or any :class:`~workbench.serving.cost.CostModel`), run by
    ``scheduler`` (default: the cost model's own, a Deployment's engine profile's, ``Scheduler()`` where it
    states none; the reservation for a ServerConfig).

    ``prefilled`` marks requests whose KV cache arrives with them (prefill/decode disaggregation: the prefill pool
    produced their first token): on admission they take their blocks and join the decoding batch without a prefill
    iteration (``first_token_s`` stays NaN for them); preempted later, they recompute like any other request.
    ``hash_ids`` (one sequence of prefix-block ids per request, Mooncake's 512-token blocks of
    :data:`HASH_BLOCK_TOKENS`) turns on prefix sharing (paged policies). ``priority`` gives each request's initial
    level (``Scheduler(priority="priority")``; drawn uniformly over the change process's levels from ``seed`` when
    not given). ``follow_up``, ``think_s`` and ``conversation`` describe multi-turn conversations (the next turn's row
    or -1; the pause after this turn; the conversation of each row, whose host KV copy ``kv_reuse`` keeps); later
    turns have NaN arrivals. ``record_gaps`` records every inter-token gap (:class:`~workbench.serving.metrics
    .TokenGaps`). ``seed`` drives the priority levels and their changes.

    A request whose full context (prompt plus output) needs more blocks than the whole cache, or whose prompt exceeds
    a vLLM/Orca ``max_num_batched_tokens``, is rejected on arrival (a real engine would abort it); under the
    reservation, one whose context exceeds the capacity in tokens is rejected when it reaches the head of the queue.

    Examples
    --------
    >>> from workbench.serving import Deployment, ServerConfig
    >>> d = Deployment("Llama-2-7B", "A100-80GB")
    >>> r = simulate_replica([0.0, 0.0], [1000, 200], [3, 2], d)
    >>> bool(r.first_token_s[0] == r.first_token_s[1]), int(r.preemptions.sum())  # one prefill iteration for both
    (True, 0)
    >>> cfg = ServerConfig(kv_budget_tokens=1100)  # the reservation (1003 + 202 tokens): the second waits
    >>> a = simulate_replica([0.0, 0.0], [1000, 200], [3, 2], cfg)
    >>> bool(a.admit_s[1] == a.finish_s[0])
    True
    """
    scheduler = policy(server, scheduler)
    return _run(
        arrival_s, input_tokens, output_tokens, server, scheduler, prefilled=prefilled, hash_ids=hash_ids,
        priority=priority, follow_up=follow_up, think_s=think_s, conversation=conversation, record_gaps=record_gaps,
        seed=seed, ttft_limit_s=ttft_limit_s, max_violations=max_violations,
    )[0]  # fmt: skip


def _requests(arrival_s, input_tokens, output_tokens, follow_up, think_s):
    """Validated requests; with follow-ups, later turns (NaN arrivals) are validated through their first turns."""
    if follow_up is None:
        return (*check_requests(arrival_s, input_tokens, output_tokens), np.full(len(np.asarray(input_tokens)), -1))
    arr = np.asarray(arrival_s, dtype=float).copy()
    nxt = np.asarray(follow_up, dtype=np.int64)
    n = arr.size
    if nxt.shape != (n,) or np.asarray(input_tokens).shape != (n,) or np.asarray(output_tokens).shape != (n,):
        raise ValueError(f"follow_up, input_tokens and output_tokens must each give one value per request ({n})")
    linked = nxt >= 0
    if (nxt >= n).any() or (nxt < -1).any() or (nxt[linked] <= np.flatnonzero(linked)).any():
        raise ValueError("follow_up must be -1 or the row of a later turn in the table (was it truncated?)")
    later = np.zeros(n, bool)
    later[nxt[linked]] = True
    first = ~later
    if np.isnan(arr[first]).any():
        raise ValueError("every first turn needs an arrival_s (later turns arrive after the previous one ends)")
    check_requests(arr[first], np.asarray(input_tokens)[first], np.asarray(output_tokens)[first])  # validates
    inp_all = np.asarray(input_tokens).astype(np.int64)
    out_all = np.maximum(np.asarray(output_tokens).astype(np.int64), 1)
    if (inp_all < 0).any():
        raise ValueError("input_tokens must be >= 0")
    arr[later] = np.inf
    if think_s is None:
        raise ValueError("follow_up needs think_s (the pause after each turn)")
    think = np.asarray(think_s, dtype=float)
    if think.shape != (n,) or not np.isfinite(think[linked]).all() or (think[linked] < 0).any():
        raise ValueError("think_s must give a finite pause >= 0 for every turn with a follow-up")
    return arr, inp_all, out_all, nxt


def _run(arrival_s, input_tokens, output_tokens, server, scheduler: Scheduler, *, n_replicas: int = 1, rep=None,
         router: bool = False, prefilled=None, hash_ids=None, priority=None, follow_up=None, think_s=None,
         conversation=None, record_gaps: bool = False, seed: Seed = 0, ttft_limit_s: float = math.inf,
         max_violations: int | None = None):  # fmt: skip
    """Run the compiled engine over ``n_replicas`` replicas (each request on ``rep``, or placed by the
    least-outstanding ``router``): ``(ReplicaRun of all requests, each request's replica)``."""
    check_cost_model(server)
    arr, inp, out, nxt = _requests(arrival_s, input_tokens, output_tokens, follow_up, think_s)
    n = arr.size
    sch = scheduler
    B = sch.block_tokens
    cap = integer("kv_capacity_tokens", server.kv_capacity_tokens, minimum=1)
    nb = cap // B
    reserve = sch.kind == "reserve"
    if nb < 1 and not reserve:
        raise ValueError(
            f"the KV cache of {cap} tokens (the cost model's kv_capacity_tokens: a Deployment's max_kv_tokens, or the "
            f"memory beside its weights) is smaller than one block of {B} tokens: raise max_kv_tokens (or give the "
            "cache more memory), or use smaller blocks (the scheduler's block_tokens)"
        )
    if reserve and hash_ids is not None:
        raise ValueError("hash_ids (prefix sharing) needs a paged scheduler (vllm, sarathi, orca), not 'reserve'")
    if router and follow_up is not None:
        raise ValueError("multi-turn follow-ups need a placement on arrival (balancer round_robin or random)")
    later = np.zeros(n, bool)
    if follow_up is not None:
        later[nxt[nxt >= 0]] = True
    budget = sch.max_num_batched_tokens
    if reserve:
        big = inp + out > cap
        rejected = np.zeros(n, dtype=bool)
    else:
        prompt = (inp > budget) if sch.kind != "sarathi" else np.zeros(n, bool)
        big = ((inp + out + B - 1) // B > nb) | prompt
        rejected = big.copy()
    pre = np.zeros(n, bool) if prefilled is None else np.asarray(prefilled, dtype=bool).copy()
    if pre.shape != (n,):
        raise ValueError(f"prefilled must have one flag per request ({n}), got {pre.size}")
    # prefix sharing: each request's full prompt blocks as indices into the distinct block ids
    hfull = np.zeros(n, np.int64)
    hoff = np.zeros(n + 1, np.int64)
    hidx = np.zeros(0, np.int64)
    n_unique = 0
    if hash_ids is not None:
        hash_ids = list(hash_ids)
        if len(hash_ids) != n:
            raise ValueError(f"hash_ids must have one sequence per request ({n}), got {len(hash_ids)}")
        if HASH_BLOCK_TOKENS % B:
            raise ValueError(f"block_tokens={B} must divide the {HASH_BLOCK_TOKENS}-token hash blocks")
        full = np.minimum([len(h) for h in hash_ids], inp // HASH_BLOCK_TOKENS).astype(np.int64)
        hfull = full * HASH_BLOCK_TOKENS
        hoff[1:] = np.cumsum(full)
        flat = [x for h, k in zip(hash_ids, full.tolist(), strict=True) for x in list(h)[:k]]  # one pass over ids
        if flat:
            ids = np.asarray(flat)
            if ids.dtype.kind not in "iu":  # ids of any hashable kind: number them in order of appearance
                index: dict = {}
                ids = np.array([index.setdefault(x, len(index)) for x in flat], dtype=np.int64)
            hidx = np.unique(ids, return_inverse=True)[1].astype(np.int64)
            n_unique = int(hidx.max()) + 1
    # priorities and their changes
    use_prio = sch.priority == "priority"
    chg = sch.priority_changes
    levels = chg.levels if chg is not None else 1
    if priority is not None:
        prio = np.asarray(priority, dtype=np.int64).copy()
        if prio.shape != (n,) or (prio < 0).any() or (chg is not None and (prio >= levels).any()):
            raise ValueError(f"priority must give one level in [0, {levels if chg else 'inf'}) per request ({n})")
    elif chg is not None:
        prio = generator(keyed(seed, "levels")).integers(0, levels, n).astype(np.int64)
    else:
        prio = np.zeros(n, np.int64)
    if chg is None:
        levels = int(prio.max()) + 1 if n else 1
    conv = np.arange(n, dtype=np.int64) if conversation is None else np.asarray(conversation, dtype=np.int64)
    if conv.shape != (n,) or (conv < 0).any():
        raise ValueError(f"conversation must give an id >= 0 per request ({n})")
    conv = np.unique(conv, return_inverse=True)[1].astype(np.int64)
    think = np.zeros(n) if think_s is None else np.asarray(think_s, dtype=float)
    # swap costs: only a swap asks for them
    swap = sch.preemption == "swap" and not reserve
    call_s, calls, tok_s = 0.0, 1, 0.0
    if swap:
        tok_s = float(server.swap_s_per_token)
        call_s, calls = float(server.swap_call_s), int(server.swap_calls_per_copy)
    table = server.cost_table(max(budget + sch.max_num_seqs, 2048), max(sch.max_num_seqs, 1))
    front = float(getattr(server, "frontend_s", 0.0) or 0.0)
    if front:  # the client sees each finish later, so it sends a follow-up turn later
        think = np.where(nxt >= 0, think + front, think)
    n_rep = integer("n_replicas", n_replicas, minimum=1)
    rep_arr = np.zeros(n, np.int64) if rep is None else np.asarray(rep, dtype=np.int64).copy()
    if follow_up is not None and rep is not None:  # a conversation stays on its first turn's replica
        for i in np.flatnonzero(nxt >= 0):
            rep_arr[nxt[i]] = rep_arr[i]
    allowed = 2**62 if max_violations is None else integer("max_violations", max_violations, minimum=0)
    K = _kernel
    Q = np.zeros((n, K.NQ), np.int64)
    Q[:, K.Q_INP], Q[:, K.Q_OUT], Q[:, K.Q_BIG], Q[:, K.Q_PRE] = inp, out, big, pre
    Q[:, K.Q_PRIO], Q[:, K.Q_NXT], Q[:, K.Q_LATER], Q[:, K.Q_CONV] = prio, nxt, later, conv
    Q[:, K.Q_HFULL], Q[:, K.Q_HOFF0], Q[:, K.Q_HOFF1] = hfull, hoff[:-1], hoff[1:]
    Q[:, K.Q_GEN] = pre  # a prefilled request brings its first token
    Q[:, K.Q_REJ], Q[:, K.Q_REP], Q[:, K.Q_HPOS], Q[:, K.Q_SEG] = rejected, rep_arr, -1, -1
    G = np.full((n, K.NG), np.nan)
    G[:, K.G_ARR], G[:, K.G_THINK] = arr, think
    G[:, [K.G_STALLT, K.G_LASTTOK, K.G_LASTST, K.G_STARR, K.G_READY]] = 0.0
    pi = np.zeros(K.NPI, np.int64)
    pi[K.P_KIND], pi[K.P_SEQS], pi[K.P_BUDGET], pi[K.P_B] = _KINDS[sch.kind], sch.max_num_seqs, budget, B
    water = max(1 if sch.watermark > 0 else 0, int(sch.watermark * nb))
    pi[K.P_WATER], pi[K.P_NBLOCKS], pi[K.P_CAPTOK] = water, nb, cap
    pi[K.P_SWAP], pi[K.P_GROUP], pi[K.P_ASYNC], pi[K.P_REUSE] = (
        swap,
        sch.swap_group_blocks,
        sch.swap_async,
        sch.kv_reuse,
    )
    pi[K.P_PRIO], pi[K.P_CHG], pi[K.P_LEVELS], pi[K.P_CALLS] = (
        use_prio,
        _CHANGES[chg.kind if chg else None],
        levels,
        calls,
    )
    pi[K.P_RECORD], pi[K.P_RING], pi[K.P_OVC] = (
        record_gaps,
        n + 1 if (swap and sch.swap_async) else 1,
        table.overlap_cpu,
    )
    pi[K.P_ALLOWED], pi[K.P_PCACHE] = allowed, sch.prefix_cache
    pf = np.zeros(K.NPF)
    pf[K.F_RATE], pf[K.F_CALL], pf[K.F_TOKS] = (chg.rate if chg else 0.0), call_s, tok_s
    pf[K.F_LIMIT], pf[K.F_CPRE], pf[K.F_CDEC] = float(ttft_limit_s) - front, table.c_prefill, table.c_decode
    pf[K.F_CPU0], pf[K.F_PERSEQ] = table.cpu0, table.per_seq
    pf[K.F_PFFLOOR], pf[K.F_PFTILE] = table.pf_floor, table.pf_tile
    rows = int(out.sum()) + n + 16 if record_gaps else 1  # at most one record per token, plus one per request
    if rows > MAX_RECORDED_GAPS:
        raise ValueError(
            f"record_gaps: the {n:,} requests' {int(out.sum()):,} output tokens could need {rows:,} gap records "
            f"({rows * 40 / 1e9:.1f} GB); at most {MAX_RECORDED_GAPS:,} are kept: serve fewer requests, or serve "
            "without record_gaps (TTFT and mean TBT need no gap records)"
        )
    gaps = np.zeros((rows, 5))
    totals = np.zeros(K.NTOT)
    host = np.zeros(n, np.int64)
    kseed = int(generator(keyed(seed, "priority-changes")).integers(0, 2**62))
    stopped = K.run_engine(
        Q, G, hidx, n_unique, host, n_rep, int(router), kseed, pi, pf, table.tok, table.head, table.pf_logc,
        table.pf_prefix, table.pf_rate, table.da_len, table.da, gaps, totals,
    )  # fmt: skip
    served = G[:, K.G_ARR].copy()
    served[np.isinf(served)] = np.nan
    G[:, K.G_FIRST] += front
    G[:, K.G_FINISH] += front
    kv_bytes = getattr(getattr(server, "model", None), "kv_bytes_per_token", math.nan)
    swaps = SwapTotals(int(totals[K.TOT_OUTS]), int(totals[K.TOT_INS]), int(totals[K.TOT_COPY_TOKENS]),
                       totals[K.TOT_COPY_TOKENS] * kv_bytes, int(totals[K.TOT_COPIES]), float(totals[K.TOT_STALL]), float(totals[K.TOT_OUT_S]),
                       float(totals[K.TOT_IN_S]), int(totals[K.TOT_ITER]))  # fmt: skip
    token_gaps = None
    if record_gaps:
        g = gaps[: int(totals[K.TOT_GAPS])]
        token_gaps = TokenGaps(g[:, 0].copy(), g[:, 1].copy(), g[:, 2].astype(np.int64), g[:, 3].astype(np.int64),
                               g[:, 4].copy())  # fmt: skip
    run = ReplicaRun(
        G[:, K.G_ADMIT].copy(), G[:, K.G_FIRST].copy(), G[:, K.G_FINISH].copy(), Q[:, K.Q_REJ].astype(bool),
        Q[:, K.Q_PREEMPT].copy(), Q[:, K.Q_PREFILL].copy(), float(totals[K.TOT_BUSY]), bool(stopped),
        int(totals[K.TOT_VIO]), arrival_s=served, stall_ttft_s=G[:, K.G_STALLT].copy(), swaps=swaps, gaps=token_gaps,
    )  # fmt: skip
    rep_arr = Q[:, K.Q_REP].copy()
    return run, rep_arr
