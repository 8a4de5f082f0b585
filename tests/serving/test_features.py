"""Swap preemption, prefix sharing over ``hash_ids``, pipeline-parallel replicas and the least-outstanding balancer:
hand-computed small cases and orderings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.serving import Deployment, Scheduler, balance, serve, simulate_replica, swap_seconds
from workbench.serving.specs import register_gpu


def test_swap_time_is_copy_calls_plus_kv_bytes_over_pcie():
    d = Deployment("Llama-2-7B", "A100-80GB", tp=2)
    # 32 layers x 2 x 4096 x 2 bytes = 512 KiB per token over 2 PCIe Gen4 links of 32 GB/s each (one direction) at
    # 80% of the datasheet; every GPU copies its shard with one call per block and per K/V tensor of each layer
    assert d.swap_s_per_token == pytest.approx(524288 / (2 * 32e9 * 0.8))
    assert (d.swap_calls_per_copy, d.swap_call_s) == (64, 10e-6)
    assert float(swap_seconds(d, 100)) == pytest.approx(7 * 64 * 10e-6 + 112 * d.swap_s_per_token)
    assert float(swap_seconds(d, 100, group_blocks=4)) == pytest.approx(2 * 64 * 10e-6 + 112 * d.swap_s_per_token)


def test_a_gpu_without_a_pcie_figure_serves_with_recompute_and_names_it_for_swap():
    bare = {k: v for k, v in _fields("H100-SXM").items() if k != "pcie_gbps"}
    dep = Deployment("Llama-3.1-8B", register_gpu({**bare, "gpu": "no-pcie"}), max_kv_tokens=20_000)
    arr, inp, out = _overloaded()
    run = simulate_replica(arr, inp, out, dep, Scheduler("vllm"))  # recompute: PCIe not needed (it raised before)
    assert run.preemptions.sum() > 0 and np.isfinite(run.finish_s).all()
    with pytest.raises(ValueError, match="no pcie_gbps"):
        simulate_replica(arr, inp, out, dep, Scheduler("vllm", preemption="swap"))


def _overloaded(n=60):
    rng = np.random.default_rng(1)
    return np.sort(rng.uniform(0, 2.0, n)), rng.integers(1500, 2500, n), rng.integers(300, 600, n)


def test_swap_beats_recompute_when_pcie_is_fast_and_loses_when_slow():
    arr, inp, out = _overloaded()
    dep = Deployment("Llama-2-7B", "A100-80GB", max_kv_tokens=20_000)
    grouped = Scheduler("vllm", preemption="swap", swap_group_blocks=64)
    runs = {p: simulate_replica(arr, inp, out, dep, Scheduler("vllm", preemption=p)) for p in ("recompute", "swap")}
    runs["grouped"] = simulate_replica(arr, inp, out, dep, grouped)
    assert all(r.preemptions.sum() > 0 for r in runs.values())
    # a contiguous copy costs ~20 us per token each way (bytes; 64 calls per 1,024 tokens) against ~60 us per token
    # of prefill: swapping finishes sooner; vLLM's per-block copies add 64 calls of 10 us per 16-token block (40 us
    # per token) and lose the advantage
    assert np.nanmax(runs["grouped"].finish_s) < np.nanmax(runs["recompute"].finish_s)
    assert np.nanmax(runs["grouped"].finish_s) < np.nanmax(runs["swap"].finish_s)
    slow = register_gpu({**_fields("A100-80GB"), "gpu": "A100-slow-host", "pcie_gbps": 0.5})
    dep_slow = Deployment("Llama-2-7B", slow, max_kv_tokens=20_000)
    swap_slow = simulate_replica(arr, inp, out, dep_slow, grouped)
    recompute = simulate_replica(arr, inp, out, dep_slow, Scheduler("vllm"))
    assert np.nanmax(swap_slow.finish_s) > np.nanmax(recompute.finish_s)


def _fields(name):
    from dataclasses import asdict

    from workbench.serving.specs import gpu

    return asdict(gpu(name))


def _two(hashes_b, max_kv_tokens=None):
    """A at 0 and B at 0.3 s (A still decoding), prompts of 1,536 tokens (3 Mooncake blocks), 64 output tokens; vLLM
    0.x (prefill-first, no API server) on Llama-2-7B."""
    dep = Deployment("Llama-2-7B", "A100-80GB", max_kv_tokens=max_kv_tokens, engine="vllm-v0")
    return dep, simulate_replica(
        [0.0, 0.3], [1536, 1536], [64, 64], dep, hash_ids=None if hashes_b is None else [[1, 2, 3], hashes_b]
    )


def test_prefix_sharing_prefills_only_the_unshared_tokens():
    dep, shared = _two([1, 2, 9])  # B shares A's first two 512-token blocks
    _, alone = _two(None)
    # B's prefill iteration (vLLM: alone, decodes stalled) processes 512 tokens over a 1,536-token context
    expect = dep.iteration_s(512, 1536 * 1537 / 2 - 1024 * 1025 / 2, 0, 0, sampled=1)
    assert shared.first_token_s[1] - shared.admit_s[1] == pytest.approx(expect, rel=1e-12)
    full = dep.iteration_s(1536, 1536 * 1537 / 2, 0, 0, sampled=1)
    assert alone.first_token_s[1] - alone.admit_s[1] == pytest.approx(full, rel=1e-12)
    assert shared.prefill_tokens.tolist() == [1536, 512] and alone.prefill_tokens.tolist() == [1536, 1536]


def test_prefix_sharing_saves_the_shared_blocks():
    # 150 blocks of 16 tokens: A and B need 100 blocks each alone, 136 together when B shares A's 1,536 tokens
    _, shared = _two([1, 2, 3], max_kv_tokens=150 * 16)
    _, alone = _two(None, max_kv_tokens=150 * 16)
    assert alone.admit_s[1] >= alone.finish_s[0]  # B waits for A's blocks
    assert shared.admit_s[1] < shared.finish_s[0]  # B fits beside A
    assert shared.preemptions.sum() == 0


def test_prefix_sharing_needs_hash_ids_and_serves_a_mooncake_like_table():
    reqs = pd.DataFrame(
        {
            "arrival_s": [0.0, 0.5, 1.0],
            "input_tokens": [2048, 2048, 600],
            "output_tokens": [300, 20, 20],  # the first still decodes when the second arrives
            "hash_ids": [[7, 8, 9, 10], [7, 8, 9, 11], [5, 6]],
        }
    )
    dep = Deployment("Llama-3.1-8B", "H100-SXM")
    with pytest.raises(ValueError, match="hash_ids"):
        serve(reqs.drop(columns="hash_ids"), dep, prefix_sharing=True)
    on, off = serve(reqs, dep, prefix_sharing=True).table, serve(reqs, dep).table
    assert on.loc[1, "ttft_s"] < off.loc[1, "ttft_s"]
    # nothing of the third's prompt is resident: it prefills all 600 tokens
    assert on.loc[2, "ttft_s"] >= dep.iteration_s(600, 600 * 601 / 2, 0, 0, sampled=1)


def test_pipeline_iteration_is_micro_batched_stages_plus_bubbles():
    one = Deployment("Llama-2-7B", "A100-80GB")
    two = Deployment("Llama-2-7B", "A100-80GB", pp=2)  # 16 of 32 layers per stage, 2 micro-batches
    P, pairs, dec, kv, sampled = 2048.0, 2048 * 2049 / 2, 64.0, 64 * 1000.0, 66.0
    # a stage is half the layers: every per-layer operator at half its full-model cost, on half the work
    res = one.resources(P / 2, pairs / 2, dec / 2, kv / 2, sampled=0)
    stage = sum(max(v) for k, v in res.items() if k != "lm_head") / 2
    c = one._c
    head = max(c["head_flops"] * sampled * c["flop_s"], c["head_bytes"] * c["byte_s"])
    p2p = (P + dec) / 2 * 4096 * 2 / (300e9 * one.efficiency.network) + one.efficiency.allreduce_latency_s
    gpu = head + (2 + 2 - 1) * stage + p2p
    assert two.gpu_s(P, pairs, dec, kv, sampled) == pytest.approx(gpu, rel=1e-12)
    # the engine's host step, once per iteration, over the running sequences (vLLM V1 hides it behind the GPU)
    assert two.iteration_s(P, pairs, dec, kv, sampled) == pytest.approx(max(gpu, two.cpu_s(sampled)), rel=1e-12)
    eager = Deployment("Llama-2-7B", "A100-80GB", pp=2, engine="vllm-v0")  # its host step added after the GPU's
    gpu_eager = eager.gpu_s(P, pairs, dec, kv, sampled)
    assert eager.iteration_s(P, pairs, dec, kv, sampled) == pytest.approx(gpu_eager + eager.cpu_s(sampled), rel=1e-12)
    # the memory split: 2 stages hold what TP 2 holds
    assert two.kv_capacity_tokens == Deployment("Llama-2-7B", "A100-80GB", tp=2).kv_capacity_tokens
    assert two.gpus == 2


def test_pipeline_lets_a_model_fit_and_serves():
    with pytest.raises(ValueError, match="does not fit"):
        Deployment("Llama-3.1-70B", "H100-SXM", tp=1)
    dep = Deployment("Llama-3.1-70B", "H100-SXM", tp=2, pp=2)
    reqs = pd.DataFrame({"arrival_s": [0.0, 0.2], "input_tokens": [800, 300], "output_tokens": [30, 40]})
    run = serve(reqs, dep, Scheduler("sarathi", max_num_batched_tokens=512))
    assert run.gpus == 4 and (run.table["ttft_s"] > 0).all()
    with pytest.raises(ValueError, match="sequential"):
        Deployment("Llama-3.1-70B", "H100-SXM", tp=2, pp=2, overlap=True)


def test_least_outstanding_beats_round_robin_on_a_skewed_workload():
    n = 400
    heavy = np.arange(n) % 2 == 0  # round-robin sends every long request to replica 0
    reqs = pd.DataFrame(
        {
            "arrival_s": np.arange(n) * 0.05,
            "input_tokens": np.where(heavy, 3000, 100),
            "output_tokens": np.where(heavy, 600, 10),
        }
    )
    dep = Deployment("Llama-3.1-8B", "H100-SXM")
    rr = serve(reqs, dep, n_replicas=2, balancer="round_robin").table
    lo = serve(reqs, dep, n_replicas=2, balancer="least_outstanding").table
    assert (rr["replica"] == np.arange(n) % 2).all()
    assert lo["ttft_s"].quantile(0.99) < rr["ttft_s"].quantile(0.99)
    assert lo["replica"].nunique() == 2 and lo["ttft_s"].notna().all()


def test_least_outstanding_places_on_the_emptiest_replica():
    dep = Deployment("Llama-3.1-8B", "H100-SXM")
    # three at once: 0, 1, then 0 (ties to the lowest index); the fourth comes after the 10-token request on
    # replica 1 finished while replica 0 still decodes 500 tokens
    reqs = pd.DataFrame(
        {"arrival_s": [0.0, 0.0, 0.0, 2.0], "input_tokens": [100] * 4, "output_tokens": [500, 10, 500, 5]}
    )
    assert serve(reqs, dep, n_replicas=2, balancer="least_outstanding").table["replica"].tolist() == [0, 1, 0, 1]
    with pytest.raises(ValueError, match="least_outstanding"):
        balance(4, 2, "least_outstanding")
