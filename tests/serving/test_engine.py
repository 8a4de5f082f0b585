"""Hardware-grounded replica: an independent iteration-by-iteration reference (paged blocks, preemption by recompute,
vLLM's prefill-only iterations), Sarathi's chunking, Orca's mixing, and bad input."""

from __future__ import annotations

import collections
import math

import numpy as np
import pandas as pd
import pytest

from workbench.serving import serve
from workbench.serving.engine import Scheduler, simulate_replica
from workbench.serving.roofline import Deployment

D7 = Deployment("Llama-2-7B", "A100-80GB")


def reference(arr, inp, out, dep: Deployment, sch: Scheduler):
    """One loop turn per iteration, per-request block counts: no jumps, no residue histogram. An engine scheduling
    one step ahead (``overlap_cpu``) sees, when busy, only the arrivals up to the start of the step that just ended;
    the API server's ``frontend_s`` is added to every first and last token. With ``prefix_cache`` the free blocks are
    one explicit queue of blocks (vLLM's BlockPool): allocations pop its head, a finished request's blocks are appended
    holding nothing anyone asks for, a preempted request's are appended last block first, each full block of computed
    tokens labelled with its owner and position, and a re-admitted request takes out its longest labelled prefix still
    in the queue and prefills only the rest. Returns first and last token times, preemptions and prefilled tokens."""
    B, nb = sch.block_tokens, dep.kv_capacity_tokens // sch.block_tokens
    water = max(1 if sch.watermark > 0 else 0, int(sch.watermark * nb))
    ahead = dep.profile.overlap_cpu
    n = len(arr)
    first, finish, npre, prefilled = [math.nan] * n, [math.nan] * n, [0] * n, [0] * n
    gen = [0] * n
    held = [0] * n  # blocks each request holds
    free = collections.deque([None] * nb)  # the free-block queue: None, or (owner, preemption, block position)
    owed = 0  # blocks taken while the cache was over-full (a prefilled request's next token, until a preemption)

    def take(i, blocks):  # request i holds `blocks` blocks: the new ones are popped from the queue's head
        nonlocal owed
        for _ in range(blocks - held[i]):
            if free:
                free.popleft()
            else:
                owed += 1
        held[i] = max(held[i], blocks)

    def release(i, labelled):  # request i's blocks go to the queue's tail, its last block first
        nonlocal owed
        full = (inp[i] + gen[i] - 1) // B if labelled else 0
        free.extend((i, npre[i], j) if j < full else None for j in reversed(range(held[i])))
        held[i] = 0
        while owed and free:
            free.popleft()
            owed -= 1

    running: list[int] = []  # admission order
    waiting: list[int] = []
    t, q, start = 0.0, 0, 0.0  # start: the start of the step that just ended
    while True:
        seen = start if ahead and (running or waiting) else t
        while q < n and arr[q] <= seen:
            waiting.append(q)
            q += 1
        if not waiting and not running:
            if q >= n:
                break
            t = start = max(t, arr[q])
            continue
        start = t
        for i in running:
            take(i, -(-(inp[i] + gen[i]) // B))
        used = sum(held[i] for i in running)
        new, tok, skip = [], 0, []
        while waiting and len(running) + len(new) < sch.max_num_seqs:
            i = waiting[0]
            need = inp[i] + gen[i]
            blk = -(-need // B)
            hit = 0
            if sch.prefix_cache and npre[i]:  # its longest prefix of blocks still in the queue
                while (i, npre[i], hit) in free:
                    hit += 1
            k = min(hit * B, need - 1)  # the budget counts the tokens not cached
            if (new and tok + need - k > sch.max_num_batched_tokens) or nb - used - blk < water:
                break
            waiting.pop(0)
            for j in range(hit):
                free.remove((i, npre[i], j))
            held[i] = hit
            take(i, blk)
            used += blk
            tok += need - k
            new.append(i)
            skip.append(k)
        if new:  # vLLM: a prefill iteration, no decodes
            lens = [inp[i] + gen[i] - k for i, k in zip(new, skip)]
            pairs = sum(x * k + x * (x + 1) / 2 for x, k in zip(lens, skip))
            tiles = sum(-(-x // 128) for x in lens)  # the prompts' 128-token query tiles (one attention launch)
            t += dep.iteration_s(sum(lens), pairs, 0, 0, len(new), prefill_tiles=tiles)
            for i, x in zip(new, lens):
                prefilled[i] += x
                gen[i] += 1
                if math.isnan(first[i]):
                    first[i] = t
                if gen[i] >= out[i]:
                    finish[i] = t
                    release(i, False)
                else:
                    running.append(i)
            continue
        while sum(-(-(inp[i] + gen[i] + 1) // B) for i in running) > nb:
            v = running.pop()
            npre[v] += 1
            release(v, sch.prefix_cache)
            waiting.insert(0, v)
        for i in running:
            take(i, -(-(inp[i] + gen[i] + 1) // B))
        kv = sum(inp[i] + gen[i] for i in running)
        t += dep.iteration_s(0, 0, len(running), kv, len(running))
        for i in list(running):
            gen[i] += 1
            if gen[i] >= out[i]:
                finish[i] = t
                running.remove(i)
                release(i, False)
    first_s, finish_s = np.array(first) + dep.frontend_s, np.array(finish) + dep.frontend_s
    return first_s, finish_s, np.array(npre), np.array(prefilled)


@pytest.mark.parametrize("cap", [None, 3000])
@pytest.mark.parametrize("engine", ["vllm", "vllm-v0"])
def test_vllm_matches_the_iteration_by_iteration_reference(cap, engine):
    """Both the engine scheduling one step ahead behind an API server (a current vLLM) and the eager one."""
    rng = np.random.default_rng(1)
    n = 150
    arr = np.sort(rng.uniform(0, 20, n))
    inp = rng.integers(1, 700, n)
    out = rng.integers(1, 300, n)
    dep = Deployment("Llama-2-7B", "A100-80GB", max_kv_tokens=cap, engine=engine)
    got = served_as_the_reference(arr, inp, out, dep, Scheduler("vllm", max_num_seqs=32, max_num_batched_tokens=2048))
    assert (got.preemptions.sum() > 0) == (cap is not None)  # the small cache preempts, the real one does not


def served_as_the_reference(arr, inp, out, dep, sch):
    """The engine's run, asserted equal to the reference's: times, preemptions and prefilled tokens."""
    got = simulate_replica(arr, inp, out, dep, sch)
    first, finish, npre, prefilled = reference(arr.tolist(), inp.tolist(), out.tolist(), dep, sch)
    np.testing.assert_allclose(got.first_token_s, first, rtol=1e-9)
    np.testing.assert_allclose(got.finish_s, finish, rtol=1e-9)
    assert got.preemptions.tolist() == npre.tolist()
    assert got.prefill_tokens.tolist() == prefilled.tolist()
    return got


@pytest.mark.parametrize(("watermark", "budget"), [(0.0, 4096), (0.01, 4096), (0.05, 1500)])
def test_a_preempted_request_resumes_from_its_blocks_still_cached(watermark, budget):
    """vLLM V1's prefix caching on re-admission, against the reference's explicit queue of blocks: the same times,
    preemptions and prefilled tokens, and fewer tokens prefilled again than without the cache. A small token budget
    checks that the budget counts only the tokens not cached."""
    rng = np.random.default_rng(7)
    n = 120
    arr = np.sort(rng.uniform(0, 10, n))
    inp = rng.integers(1, 900, n)
    out = rng.integers(1, 400, n)
    dep = Deployment("Llama-2-7B", "A100-80GB", max_kv_tokens=4000, engine="vllm")
    runs = {}
    for cached in (False, True):
        sch = Scheduler(
            "vllm", max_num_seqs=48, max_num_batched_tokens=budget, watermark=watermark, prefix_cache=cached
        )
        runs[cached] = served_as_the_reference(arr, inp, out, dep, sch)
    again = {k: int(r.prefill_tokens.sum() - inp.sum()) for k, r in runs.items()}
    assert runs[True].preemptions.sum() > 10 and 0 < again[True] < 0.9 * again[False]


def test_vllm_prefill_stalls_decodes_and_sarathi_does_not():
    # a decode with a few tokens left when a 4k-token prompt arrives: vLLM pauses it for the whole prefill,
    # Sarathi-Serve finishes it within a few 512-token chunks
    step = D7.iteration_s(0, 0, 1, 150)  # one decode step of the first request alone
    n_out = int(0.5 / step) + 3  # still decoding, three tokens to go, when the long prompt arrives at 0.5 s
    arr, inp, out = [0.0, 0.5], [100, 4000], [n_out, 5]
    r_v = simulate_replica(arr, inp, out, D7, Scheduler("vllm"))
    r_s = simulate_replica(arr, inp, out, D7, Scheduler("sarathi", max_num_batched_tokens=512))
    prefill_alone = D7.iteration_s(4000, 4000 * 4001 / 2, 0, 0, 1)
    assert r_v.finish_s[0] > 0.5 + prefill_alone  # stalled behind the prefill
    assert r_s.finish_s[0] < 0.5 + 0.5 * prefill_alone
    assert r_s.first_token_s[1] > r_v.first_token_s[1]  # ... at the price of the new request's TTFT


def test_schedulers_conserve_requests_and_order_times():
    rng = np.random.default_rng(2)
    n = 3000
    reqs = pd.DataFrame(
        {
            "arrival_s": np.cumsum(rng.exponential(0.05, n)),
            "input_tokens": rng.integers(10, 3000, n),
            "output_tokens": rng.integers(1, 500, n),
        }
    )
    dep = Deployment("Llama-3.1-8B", "H100-SXM", max_kv_tokens=60_000)
    for kind, budget in (("vllm", 8192), ("sarathi", 1024), ("orca", 8192)):
        run = serve(reqs, dep, Scheduler(kind, max_num_batched_tokens=budget), n_replicas=2, balancer="random", seed=0)
        m = run.table
        assert not m["rejected"].any() and m["e2e_s"].notna().all(), kind
        assert (m["e2e_s"] >= m["ttft_s"]).all() and (m["ttft_s"] > m["queue_s"]).all() and (m["queue_s"] >= 0).all()
        assert run.gpus == 2 and 0 < run.busy_fraction <= 1


def test_overlap_is_faster_and_early_stop_marks_the_result():
    rng = np.random.default_rng(3)
    n = 2000
    reqs = pd.DataFrame(
        {
            "arrival_s": np.cumsum(rng.exponential(0.02, n)),
            "input_tokens": rng.integers(100, 1000, n),
            "output_tokens": rng.integers(50, 300, n),
        }
    )
    seq = serve(reqs, Deployment("Llama-2-70B", "A100-80GB", tp=4), Scheduler("sarathi", max_num_batched_tokens=1024))
    ovl = serve(
        reqs,
        Deployment("Llama-2-70B", "A100-80GB", tp=4, overlap=True),
        Scheduler("sarathi", max_num_batched_tokens=1024),
    )
    assert ovl.table["e2e_s"].mean() < seq.table["e2e_s"].mean()
    stopped = serve(reqs, D7, rate_scale=50.0, ttft_limit_s=0.1, max_violations=10)
    assert stopped.stopped and not seq.stopped


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="kind"):
        Scheduler("fifo")
    with pytest.raises(ValueError, match="must exceed"):
        Scheduler("sarathi", max_num_seqs=256, max_num_batched_tokens=256)
    with pytest.raises(
        TypeError, match=r"server must be a CostModel \(an object with cost_table, gpus, kv_capacity_tokens\)"
    ):
        simulate_replica([0.0], [1], [1], "Llama-2-7B")
    r = simulate_replica([0.0, 0.0], [100, 100], [10_000, 5], Deployment("Llama-2-7B", "A100-80GB", max_kv_tokens=1024))
    assert r.rejected.tolist() == [True, False] and np.isfinite(r.finish_s[1])


def test_disaggregated_pools_remove_the_prefill_stall():
    from workbench.serving.disagg import disaggregation_plan, serve_disaggregated

    rng = np.random.default_rng(4)
    n = 1500
    reqs = pd.DataFrame(
        {
            "arrival_s": np.sort(rng.uniform(0, 100, n)),
            "input_tokens": rng.integers(500, 4000, n),
            "output_tokens": rng.integers(20, 300, n),
        }
    )
    dep = Deployment("Llama-3.1-8B", "H100-SXM")
    colo_run = serve(reqs, dep, Scheduler("vllm"), n_replicas=2)
    dis_run = serve_disaggregated(reqs, dep, dep, n_prefill=1, n_decode=1, transfer_gbps=100.0)
    assert dis_run.gpus == colo_run.gpus == 2 and 0 < dis_run.busy_fraction <= 1
    colo, dis = colo_run.table, dis_run.table
    assert dis["e2e_s"].notna().all() and (dis["e2e_s"] >= dis["ttft_s"]).all()
    assert dis["tbt_s"].quantile(0.99) < 0.75 * colo["tbt_s"].quantile(0.99)  # decodes never wait for a prefill
    # a prefilled request joins the decode batch at once: one decode replica, one request, no prefill iteration
    r = simulate_replica([1.0], [1000], [3], dep, prefilled=np.array([True]))
    assert np.isnan(r.first_token_s[0]) and r.finish_s[0] == pytest.approx(
        1.0 + 2 * dep.iteration_s(0, 0, 1, 1001.5, 1), rel=0.01
    )
    plan = disaggregation_plan(reqs, "Llama-3.1-8B", "H100-SXM", max_replicas=8)
    assert plan["gpus"] == plan["prefill_replicas"] + plan["decode_replicas"] >= 2


def test_disaggregated_random_balancers_draw_independent_keyed_streams():
    """The decode pool's random balancer draws ``keyed(seed, "decode")``, not ``seed + 1`` (which is the prefill
    stream of the next seed: neighbouring seeds' runs would share placements)."""
    from workbench._rng import keyed
    from workbench.serving import balance
    from workbench.serving.disagg import serve_disaggregated

    reqs = pd.DataFrame({"arrival_s": np.arange(40) * 0.5, "input_tokens": 300, "output_tokens": 20})
    d = Deployment("Llama-3.1-8B", "H100-SXM")
    t = serve_disaggregated(reqs, d, d, n_prefill=3, n_decode=3, balancer="random", seed=5).table
    assert t["prefill_replica"].tolist() == balance(40, 3, "random", seed=5).tolist()
    assert t["decode_replica"].tolist() == balance(40, 3, "random", seed=keyed(5, "decode")).tolist()
    nxt = serve_disaggregated(reqs, d, d, n_prefill=3, n_decode=3, balancer="random", seed=6).table
    assert t["decode_replica"].tolist() != nxt["prefill_replica"].tolist()


def test_a_cache_smaller_than_one_block_is_refused_by_the_knobs_that_grow_it():
    """A random probe's point (serving-replica at max_kv_tokens=8) was refused as "the KV cache of 8 tokens is smaller
    than one block of 16", naming none of the knobs; the message now names them."""
    from workbench.serving.specs import model

    dep = Deployment(model("Llama-3.1-8B"), "H100-SXM", tp=1, max_kv_tokens=8)
    with pytest.raises(ValueError, match=r"KV cache of 8 tokens .* raise max_kv_tokens .* block_tokens"):
        simulate_replica([0.0], [10], [5], dep, Scheduler("vllm"))
    assert simulate_replica([0.0], [3], [2], dep, Scheduler("vllm", block_tokens=8)).finish_s.size == 1  # one block
