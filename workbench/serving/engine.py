"""The serving engine: one replica's event loop over any cost model and any scheduling policy.

A replica is a **cost model** (:class:`~workbench.serving.cost.CostModel`: iteration durations, KV capacity in
tokens, GPUs, swap cost) run by a **scheduling policy** (:class:`~workbench.serving.scheduler.Scheduler`: vLLM,
Sarathi-Serve, Orca, or Orca's reservation). The cost models are the hardware
:class:`~workbench.serving.roofline.Deployment` (roofline costs) and the abstract linear-cost
:class:`~workbench.serving.linear.ServerConfig`; each names its default policy (vLLM for a Deployment, the reservation
for a ServerConfig). For the pair (linear cost, reservation) the engine runs its **compiled fast path**
(:func:`~workbench.serving.linear.simulate_linear`, the same loop compiled; ``fast_path=False`` runs this one).

**Paged KV** (``"vllm"``, ``"sarathi"``, ``"orca"``): the cache holds ``kv_capacity_tokens // block_tokens`` blocks of
``block_tokens`` (16) tokens. A request's allocation grows token by token: ``ceil(context / 16)`` blocks for a context
of prompt plus generated tokens; the engine never knows a request's output length. When the cache cannot hold one
more token for every decoding request, the most recently admitted running request is **preempted by recompute**
(vLLM's default): its blocks are freed, it goes back to the front of the queue, and when re-admitted it prefills its
prompt and the tokens it had generated, then continues. With ``Scheduler(preemption="swap")`` its blocks are instead
copied to host memory and, on re-admission, back (vLLM's swap mode): each copy costs its KV bytes at the cost model's
``swap_s_per_token``, during which the engine waits; it then rejoins the decoding batch without a prefill. Host memory
is not bounded. **Reserved KV** (``"reserve"``): each admitted request holds ``input + output`` tokens of the capacity
until it finishes (the true output length: an oracle), so nothing is preempted.

**Prefix sharing** (``hash_ids``, paged policies: per request, the ids of its prompt's 512-token blocks, as in
Mooncake's traces; equal ids mean equal KV): a request's full prompt blocks are held once per replica, by reference
count, while any admitted request holds them (no cache of freed blocks). On admission a request skips the prefill of
its leading blocks already resident (keeping at least its last token, which yields the first output token) and
allocates blocks only for the blocks not yet resident plus its private tail; decode attention still reads the whole
context.

Between events (an admission, a completion, the cache filling up) the batch is fixed and the resident KV grows by one
token per request per iteration, so a run of pure decode iterations has a closed-form duration (the cost model's
``decode_line``) and the block count after ``k`` iterations is exact from a histogram of the contexts' residues modulo
the block size: the loop is over events, never over iterations of a decode run, and has no per-request numpy work.
The loop is a generator so that several replicas can run side by side and pause at each arrival for a router (the
least-outstanding balancer of :func:`workbench.serving.serve`).
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import replace

import numpy as np

from .._validate import integer
from ._common import ReplicaRun, check_requests, steps_to_reach
from .cost import CostModel, check_cost_model
from .linear import ServerConfig, simulate_linear
from .scheduler import PREEMPTIONS, SCHEDULERS, Scheduler

__all__ = ["HASH_BLOCK_TOKENS", "PREEMPTIONS", "SCHEDULERS", "Scheduler", "ReplicaRun", "simulate_replica"]

#: Tokens per prefix block of a ``hash_ids`` sequence (Mooncake's traces hash 512-token blocks).
HASH_BLOCK_TOKENS = 512


def policy(server, scheduler: Scheduler | None) -> Scheduler:
    """The scheduler a replica runs: ``scheduler``, else the cost model's own (``server.scheduler``), else vLLM's."""
    if scheduler is None:
        scheduler = getattr(server, "scheduler", None) or Scheduler()
    if not isinstance(scheduler, Scheduler):
        raise TypeError(f"scheduler must be a Scheduler, got {type(scheduler).__name__}")
    return scheduler


def compiled(server, scheduler: Scheduler) -> ServerConfig | None:
    """The :class:`ServerConfig` the compiled fast path runs for this pair (linear cost, reservation policy, the
    scheduler's limits), or None when the general loop must run."""
    if not isinstance(server, ServerConfig) or scheduler.kind != "reserve":
        return None
    if (server.max_batch, server.max_prefill_tokens) == (scheduler.max_num_seqs, scheduler.max_num_batched_tokens):
        return server
    return replace(server, max_batch=scheduler.max_num_seqs, max_prefill_tokens=scheduler.max_num_batched_tokens)


def simulate_replica(
    arrival_s,
    input_tokens,
    output_tokens,
    server: CostModel,
    scheduler: Scheduler | None = None,
    *,
    prefilled: np.ndarray | None = None,
    hash_ids=None,
    ttft_limit_s: float = math.inf,
    max_violations: int | None = None,
    fast_path: bool = True,
) -> ReplicaRun:
    """Serve requests (sorted by arrival) on one replica; see the module docstring for the model.

    ``server`` is the replica's cost model (:class:`~workbench.serving.roofline.Deployment`,
    :class:`~workbench.serving.linear.ServerConfig`, or any :class:`~workbench.serving.cost.CostModel`), run by
    ``scheduler`` (default: the cost model's own, ``Scheduler()`` for a Deployment, the reservation for a
    ServerConfig). A ServerConfig under the reservation runs the compiled fast path unless ``fast_path=False`` (or
    ``prefilled`` or ``hash_ids`` are given): the same numbers, from the general loop.

    ``prefilled`` marks requests whose KV cache arrives with them (prefill/decode disaggregation: the prefill pool
    produced their first token): on admission they take their blocks and join the decoding batch without a prefill
    iteration (``first_token_s`` stays NaN for them); preempted later, they recompute like any other request.

    ``hash_ids`` (one sequence of prefix-block ids per request, Mooncake's 512-token blocks of
    :data:`HASH_BLOCK_TOKENS`) turns on prefix sharing (paged policies): see the module docstring.

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
    >>> b = simulate_replica([0.0, 0.0], [1000, 200], [3, 2], cfg, fast_path=False)
    >>> bool(a.admit_s[1] == a.finish_s[0]), a.finish_s.tolist() == b.finish_s.tolist()
    (True, True)
    """
    scheduler = policy(server, scheduler)
    fast = compiled(server, scheduler) if fast_path and prefilled is None and hash_ids is None else None
    if fast is not None:
        return simulate_linear(
            arrival_s, input_tokens, output_tokens, fast, ttft_limit_s=ttft_limit_s, max_violations=max_violations
        )
    arr, inp, out = check_requests(arrival_s, input_tokens, output_tokens)
    st = _State(arr, inp, out, server, scheduler, prefilled, hash_ids)
    limit = float(ttft_limit_s)
    allowed = math.inf if max_violations is None else integer("max_violations", max_violations, minimum=0)
    loop = _replica_loop(st, list(range(arr.size)), [math.inf], limit, allowed)
    for _ in loop:  # a lone replica never pauses: its horizon is infinite
        pass
    return st.run()


class _State:
    """Per-request lists shared by the replicas of one run (each request belongs to one replica)."""

    def __init__(self, arr, inp, out, server, scheduler, prefilled, hash_ids) -> None:
        check_cost_model(server)
        scheduler = policy(server, scheduler)
        n = arr.size
        B = scheduler.block_tokens
        cap = self.cap_tokens = integer("kv_capacity_tokens", server.kv_capacity_tokens, minimum=1)
        self.nb = cap // B
        self.reserve = scheduler.kind == "reserve"
        if self.nb < 1 and not self.reserve:
            raise ValueError(f"the KV cache of {cap} tokens is smaller than one block of {B}")
        if self.reserve and hash_ids is not None:
            raise ValueError("hash_ids (prefix sharing) needs a paged scheduler (vllm, sarathi, orca), not 'reserve'")
        self.dep, self.sch = server, scheduler
        budget = scheduler.max_num_batched_tokens
        if self.reserve:  # rejected when it reaches the head of the queue
            self.too_big = inp + out > cap
            self.rejected = np.zeros(n, dtype=bool)
        else:
            prompt = (inp > budget) if scheduler.kind != "sarathi" else np.zeros(n, bool)
            self.too_big = ((inp + out + B - 1) // B > self.nb) | prompt
            self.rejected = self.too_big.copy()
        self.arr_l, self.inp_l, self.out_l = arr.tolist(), inp.tolist(), out.tolist()
        self.big_l = self.too_big.tolist()
        self.pre_l = [False] * n if prefilled is None else np.asarray(prefilled, dtype=bool).tolist()
        if len(self.pre_l) != n:
            raise ValueError(f"prefilled must have one flag per request ({n}), got {len(self.pre_l)}")
        self.admit = [math.nan] * n
        self.first = [math.nan] * n
        self.finish = [math.nan] * n
        self.preempt = [0] * n
        self.prefill = [0] * n  # prompt (and recomputed) tokens each request had prefilled
        self.gen = [1 if p else 0 for p in self.pre_l]  # tokens generated so far (a prefilled request brings one)
        self.off = [0] * n  # a running request's private context = off + T (its replica's decode step)
        self.join_t = [0] * n  # decode step at which it joined the running batch
        self.epoch = [0] * n  # bumps on preemption or completion: stale heap entries are skipped
        self.share = hash_ids is not None
        self.hid: list[tuple] = []
        self.hfull = [0] * n  # prompt tokens in full shareable blocks
        if self.share:
            hash_ids = list(hash_ids)
            if len(hash_ids) != n:
                raise ValueError(f"hash_ids must have one sequence per request ({n}), got {len(hash_ids)}")
            if HASH_BLOCK_TOKENS % B:
                raise ValueError(f"block_tokens={B} must divide the {HASH_BLOCK_TOKENS}-token hash blocks")
            full = np.minimum([len(h) for h in hash_ids], inp // HASH_BLOCK_TOKENS)
            self.hid = [tuple(h[:k]) for h, k in zip(hash_ids, full.tolist(), strict=True)]
            self.hfull = (full * HASH_BLOCK_TOKENS).tolist()
        self.busy = 0.0
        self.violations = 0
        self.stopped = False

    def run(self) -> ReplicaRun:
        """The :class:`ReplicaRun` of every request."""
        return ReplicaRun(
            np.array(self.admit),
            np.array(self.first),
            np.array(self.finish),
            self.rejected.copy(),
            np.array(self.preempt),
            np.array(self.prefill),
            self.busy,
            self.stopped,
            self.violations,
        )


def _replica_loop(st: _State, mine: list[int], horizon: list[float], limit: float, allowed: float):
    """The event loop of one replica over the requests ``mine`` (global ids, in arrival order; the list may grow).

    A generator: whenever its clock reaches ``horizon[0]`` (the next arrival a router must place), it yields the
    number of requests it holds (waiting, prefilling or decoding) and resumes when the router has placed that arrival.
    With an infinite horizon it runs to the end without pausing.
    """
    dep, sch = st.dep, st.sch
    B, nb = sch.block_tokens, st.nb
    kind = sch.kind
    vllm, sarathi, reserve = kind == "vllm", kind == "sarathi", kind == "reserve"
    paged = not reserve
    swap = sch.preemption == "swap" and paged  # the reservation never preempts
    swap_tok = dep.swap_s_per_token if swap else 0.0  # only swapping needs the PCIe bandwidth
    max_seqs, budget = sch.max_num_seqs, sch.max_num_batched_tokens
    water = max(1, int(sch.watermark * nb))  # at least a block: a just-preempted request must not re-enter
    cost = dep.iteration_cost()
    fixed = dep.decode_lines_fixed
    lines: dict[int, tuple[float, float, float]] = {}  # fixed decode lines depend on the batch size only
    cap_tok, held = st.cap_tokens, 0  # the reservation: tokens reserved by the admitted requests
    arr_l, inp_l, out_l, big_l, pre_l = st.arr_l, st.inp_l, st.out_l, st.big_l, st.pre_l
    admit, first, finish, preempt, gen = st.admit, st.first, st.finish, st.preempt, st.gen
    share, hid, hfull = st.share, st.hid, st.hfull
    hb_per = HASH_BLOCK_TOKENS // B
    off, join_t, epoch = st.off, st.join_t, st.epoch
    refs: dict = {}  # resident prefix block -> requests holding it
    swapped: set[int] = set()  # preempted by swap: their KV waits in host memory

    t = 0.0
    T = 0  # decode steps so far
    heap: list[tuple[int, int, int]] = []  # (decode step at which it finishes, request, epoch)
    order: list[tuple[int, int]] = []  # (request, epoch) in admission order: LIFO victims, stale ones skipped
    n_run = 0
    S = 0  # sum of private offsets: private resident KV tokens = S + n_run * T
    SH = 0  # shared-prefix tokens the running requests attend to
    cap = nb  # blocks not held by shared prefixes
    Q = 0  # private block count = Q + sum_r cnt[r] * ((r + T + B - 1) // B)
    cnt = [0] * B
    waiting: deque[int] = deque()  # arrived, not admitted (preempted requests at the front)
    prefilling: list[list[int]] = []  # Sarathi: [request, prompt tokens done, prompt length, reserved blocks]
    reserved = 0  # blocks held by requests being prefilled
    q = 0  # next arrival (index into mine)

    def blocks_at(step: int) -> int:
        return Q + sum(c * ((r + step + B - 1) // B) for r, c in enumerate(cnt) if c)

    def bound_at(step: int) -> int:  # an upper bound of blocks_at (each context rounds up by less than a block)
        return (S + n_run * step) // B + n_run

    def hold(i: int) -> tuple[int, int]:  # request i takes its prefix blocks: (tokens already resident, new blocks)
        nonlocal cap
        lead, new, miss = 0, 0, False
        for h in hid[i]:
            c = refs.get(h, 0)
            if c:
                if not miss:
                    lead += HASH_BLOCK_TOKENS
            else:
                miss = True
                new += 1
            refs[h] = c + 1
        cap -= new * hb_per
        return lead, new

    def release(i: int) -> None:
        nonlocal cap
        for h in hid[i]:
            c = refs[h] - 1
            if c:
                refs[h] = c
            else:
                del refs[h]
                cap += hb_per

    def join(i: int) -> None:  # request i starts decoding with its context resident
        nonlocal S, Q, n_run, SH
        o = inp_l[i] + gen[i] - hfull[i] - T
        off[i], join_t[i] = o, T
        qq, rr = divmod(o, B)
        Q += qq
        cnt[rr] += 1
        S += o
        SH += hfull[i]
        n_run += 1
        ep = epoch[i]
        order.append((i, ep))
        heapq.heappush(heap, (T + out_l[i] - gen[i], i, ep))

    def leave(i: int) -> None:
        nonlocal S, Q, n_run, SH, held
        if reserve:
            held -= inp_l[i] + out_l[i]
        o = off[i]
        qq, rr = divmod(o, B)
        Q -= qq
        cnt[rr] -= 1
        S -= o
        SH -= hfull[i]
        n_run -= 1
        epoch[i] += 1
        if share:
            release(i)

    def preempt_latest() -> None:  # free the most recently admitted running request; it re-queues at the front
        nonlocal t
        v, ep = order.pop()
        while ep != epoch[v]:
            v, ep = order.pop()
        gen[v] += T - join_t[v]
        if swap:  # its private KV goes to host memory over PCIe (the engine waits for the copy)
            dt = (inp_l[v] + gen[v] - hfull[v]) * swap_tok
            t += dt
            st.busy += dt
            swapped.add(v)
            pre_l[v] = True
        else:
            pre_l[v] = False  # its KV is gone: it recomputes on re-admission
        leave(v)
        preempt[v] += 1
        waiting.appendleft(v)

    while True:
        n = len(mine)
        while q < n and arr_l[mine[q]] <= t:  # arrivals join the queue (or are rejected)
            i = mine[q]
            if big_l[i] and paged:
                st.violations += 1
            else:
                waiting.append(i)
            q += 1
        if st.violations > allowed:
            st.stopped = True
            break
        hz = horizon[0]
        if t >= hz:
            yield n_run + len(waiting) + len(prefilling)
            continue
        nxt = arr_l[mine[q]] if q < n else math.inf
        if hz < nxt:
            nxt = hz
        decodes = n_run > 0 and (not vllm or not waiting)
        # vLLM: decodes run only when nothing can be admitted; decide admission first
        new: list[int] = []
        skip: list[int] = []  # prompt tokens of each new request already resident (a shared prefix)
        pairs = 0.0  # causal (query, key) pairs of the new prompts (vLLM, Orca)
        if waiting or prefilling:
            step = T + (1 if n_run and not vllm else 0)
            used, exact = (S + n_run * step) // B + n_run, False  # a bound first; the exact count if it decides
            room = budget - (n_run if sarathi else 0)
            tok = sum([it[2] - it[1] for it in prefilling]) if prefilling else 0
            taken = reserved
            direct: list[int] = []  # prefilled or swapped-out requests: straight into the decoding batch
            slots = max_seqs - n_run - len(prefilling)
            while waiting:
                i = waiting[0]
                if reserve and big_l[i]:  # the reservation rejects at the head of the queue
                    waiting.popleft()
                    st.rejected[i] = True
                    st.violations += 1
                    continue
                if slots <= 0:
                    break
                need = inp_l[i] + gen[i]
                if not pre_l[i] and ((tok >= room) if sarathi else (new and tok + need > room)):
                    break
                if reserve:  # its full context, or wait
                    own = 0
                    if held + inp_l[i] + out_l[i] > cap_tok:
                        break
                    held += inp_l[i] + out_l[i]
                else:
                    own = (need - hfull[i] + B - 1) // B
                    blk = own + sum([hb_per for h in hid[i] if h not in refs]) if share else own
                    if cap - used - taken - blk < water:  # (prefix blocks not resident yet: an upper bound)
                        if exact:
                            break
                        used, exact = blocks_at(step), True
                        continue
                waiting.popleft()
                slots -= 1
                taken += own
                if math.isnan(admit[i]):
                    admit[i] = t
                    if t - arr_l[i] > limit:
                        st.violations += 1
                lead = hold(i)[0] if share else 0
                if pre_l[i]:
                    direct.append(i)
                else:
                    new.append(i)
                    sk = lead if lead < need else need - 1
                    skip.append(sk)
                    tok += need - sk
                    st.prefill[i] += need - sk
                    pairs += need * (need + 1) / 2 - sk * (sk + 1) / 2
            if st.violations > allowed:
                st.stopped = True
                break
            for i in direct:
                if i in swapped:  # its KV comes back from host memory
                    swapped.discard(i)
                    dt = (inp_l[i] + gen[i] - hfull[i]) * swap_tok
                    t += dt
                    st.busy += dt
                join(i)
            if direct and not vllm:
                decodes = n_run > 0
            if vllm:
                decodes = n_run > 0 and not new
        if new or prefilling:
            # an iteration with prefill work
            if sarathi:
                for i, sk in zip(new, skip, strict=True):
                    r = (inp_l[i] + gen[i] - hfull[i] + B - 1) // B
                    reserved += r
                    prefilling.append([i, sk, inp_l[i] + gen[i], r])
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
                reserved -= sum([it[3] for it, c in chunks if it[1] + c >= it[2]])
                for it, c in chunks:
                    it[1] += c
            else:
                P = tok
                done = new
            if decodes:
                while paged and n_run and bound_at(T + 1) + reserved > cap and blocks_at(T + 1) + reserved > cap:
                    preempt_latest()  # LIFO until every decode fits
                dt = cost(P, pairs, n_run, S + n_run * T + SH, n_run + len(done))
            else:
                dt = cost(P, pairs, 0, 0, len(done))
            t += dt
            st.busy += dt
            if decodes:
                T += 1
            for i in done:
                g = gen[i] = gen[i] + 1
                if math.isnan(first[i]):
                    first[i] = t
                if g >= out_l[i]:
                    finish[i] = t
                    if share:
                        release(i)
                    if reserve:
                        held -= inp_l[i] + out_l[i]
                else:  # join(i), inlined on the hot path
                    h = hfull[i]
                    o = off[i] = inp_l[i] + g - h - T
                    join_t[i] = T
                    Q += o // B
                    cnt[o % B] += 1
                    S += o
                    SH += h
                    n_run += 1
                    ep = epoch[i]
                    order.append((i, ep))
                    heapq.heappush(heap, (T + out_l[i] - g, i, ep))
            if sarathi:
                prefilling = [it for it in prefilling if it[1] < it[2]]
        elif n_run:
            # a run of pure decode iterations until the next completion, arrival (or router horizon) or full cache;
            # when not even one more token fits for everyone, preempt (LIFO) and decode at once, as vLLM does
            while paged and (S + n_run * (T + 1)) // B + n_run > cap and blocks_at(T + 1) > cap:
                preempt_latest()
            while heap and heap[0][2] != epoch[heap[0][1]]:
                heapq.heappop(heap)
            k = heap[0][0] - T
            K0 = S + n_run * T + SH
            if not fixed:
                a, s, lim = dep.decode_line(n_run, K0)
            else:
                if n_run not in lines:
                    lines[n_run] = dep.decode_line(n_run, K0)
                a, s, lim = lines[n_run]
            if lim < math.inf:
                k = min(k, max(1, int((lim - K0) // n_run) + 1))
            per, inc = a + s * K0, s * n_run
            if reserve and q < n:  # the next arrival is admissible (or rejected: a violation)
                j = mine[q]
                room_next = big_l[j] or (n_run < max_seqs and held + inp_l[j] + out_l[j] <= cap_tok)
            else:
                room_next = n_run < max_seqs
            if nxt < math.inf and ((not waiting and room_next) or nxt == horizon[0]):
                k = min(k, steps_to_reach(per, inc, nxt - t))
            if paged and (S + n_run * (T + k)) // B + n_run > cap and blocks_at(T + k) > cap:  # the cache fills first
                lo, hi = 1, k  # blocks_at(T + lo) fits, blocks_at(T + hi) does not
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    if blocks_at(T + mid) <= cap:
                        lo = mid
                    else:
                        hi = mid
                k = lo
            dt = k * per + inc * k * (k - 1) / 2
            t += dt
            st.busy += dt
            T += k
        elif nxt < math.inf:
            t = max(t, nxt)  # idle until the next arrival (or the router's next placement)
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
