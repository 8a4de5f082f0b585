"""Priority preemption with a context-switch cost model (FastSwitch): copy costs by hand, sync vs async stall,
reuse sending only new blocks, the scheduler's victim choice, determinism, bad input, the panel's numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from workbench import experiments as ex
from workbench.serving import _preemption_kernel as K
from workbench.serving.conversations import conversations
from workbench.serving.preemption import (
    LAUNCH_S,
    MECHANISMS,
    PCIE_EFFICIENCY,
    Mechanism,
    PriorityProcess,
    copy_seconds,
    iteration_seconds,
    simulate_preemption,
)
from workbench.serving.roofline import Deployment

DEP = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=1024)  # 64 blocks of 16 tokens
KV = DEP.model.kv_bytes_per_token  # 128 KiB
TENSORS = 2 * DEP.model.layers  # K and V per layer
BW = DEP.gpu.pcie_bytes_per_s * PCIE_EFFICIENCY  # 32 GB/s x 0.8
STILL = PriorityProcess("reshuffle", 0.0, 8)


def table(rows) -> pd.DataFrame:
    """Single-turn requests: (arrival, prompt, output) per row."""
    a, p, o = (np.array(c) for c in zip(*rows, strict=True))
    n = len(a)
    return pd.DataFrame(
        {"conversation": np.arange(n), "turn": 0, "arrival_s": a.astype(float), "input_tokens": p,
         "new_tokens": p, "output_tokens": o, "think_s": 1.0, "next": -1}
    )  # fmt: skip


def test_copy_cost_by_hand_per_block_vs_grouped():
    # 64 tokens = 4 blocks; 64 tensors; 10 us per call; 128 KiB per token at 25.6 GB/s
    per_block = copy_seconds(64, tensors=64, launch_s=10e-6, bytes_per_token=KV, bandwidth_bps=25.6e9)
    grouped = copy_seconds(64, group_blocks=64, tensors=64, launch_s=10e-6, bytes_per_token=KV, bandwidth_bps=25.6e9)
    data = 64 * KV / 25.6e9
    assert per_block == pytest.approx(4 * 64 * 10e-6 + data)
    assert grouped == pytest.approx(1 * 64 * 10e-6 + data)
    # a partly filled block moves whole: 20 tokens = 2 blocks = 32 tokens of bytes
    assert copy_seconds(20, tensors=1, launch_s=1e-6, bytes_per_token=1e3, bandwidth_bps=1e9) == pytest.approx(
        2e-6 + 32e-6
    )
    # the compiled kernel's cost agrees with the public function
    dt, copies = K.copy_s(5, 16, 2, 64, 10e-6, KV / 25.6e9)
    assert copies == 3 * 64
    assert dt == pytest.approx(copy_seconds(80, group_blocks=2, tensors=64, bytes_per_token=KV, bandwidth_bps=25.6e9))


def test_reuse_sends_only_blocks_past_the_host_copy():
    assert K.blocks_to_send(100, 40, 16, True) == 7 - 2  # 7 blocks; the host holds 2 full ones (40 = 2 x 16 + 8)
    assert K.blocks_to_send(100, 40, 16, False) == 7
    assert K.blocks_to_send(100, 100, 16, True) == 1  # only the partly filled last block goes out again
    assert K.blocks_to_send(96, 96, 16, True) == 0


def one_preemption(mech):
    # A (low priority) runs; B (high) arrives when A's context no longer leaves room: A is swapped out, B runs, A
    # comes back
    reqs = table([(0.0, 600, 300), (1.0, 600, 20)])
    return simulate_preemption(reqs, DEP, mech, STILL, priorities=[1, 5], seed=0)


def test_sync_swap_stalls_the_iteration_by_the_hand_computed_copy_time():
    run = one_preemption("vllm")
    t = run.totals
    assert (t["swap_outs"], t["swap_ins"]) == (1, 1)
    assert run.requests.preemptions.tolist() == [1, 0]
    blocks = t["copy_bytes"] / (2 * 16 * KV)  # the same context out and back in
    assert blocks == int(blocks) and 38 < blocks <= 64
    token_s = KV / BW
    one_way = blocks * TENSORS * LAUNCH_S + blocks * 16 * token_s
    assert t["copies"] == 2 * blocks * TENSORS
    assert t["stall_s"] == pytest.approx(2 * one_way, rel=1e-9)
    # block groups: one call per tensor for the whole context
    g = one_preemption("+block-groups").totals
    assert g["copies"] == 2 * TENSORS
    assert g["stall_s"] == pytest.approx(2 * (TENSORS * LAUNCH_S + blocks * 16 * token_s), rel=1e-9)


def test_async_swap_does_not_stall_but_the_waiting_request_waits_for_its_blocks():
    sync, asyn = one_preemption("vllm"), one_preemption("+async")
    assert asyn.totals["stall_s"] == 0.0 and asyn.totals["swap_outs"] == 1
    out_copy = asyn.totals["out_copy_s"]
    assert out_copy > 0.02  # ~44 blocks x 64 calls x 10 us
    b = asyn.requests.iloc[1]
    assert b.ttft_s >= out_copy  # B needs the blocks A's copy is still moving
    # A's own token gaps never include a synchronous stall under async; under sync the gap spanning it does
    assert asyn.tbt_stall_s.max() == 0.0 and sync.tbt_stall_s.max() > 0.0
    # sync: every request in the system at the time waits through the stall
    assert sync.requests.stall_ttft_s.iloc[1] > 0.0


def test_scheduler_preempts_the_lowest_priority_for_the_highest():
    reqs = table([(0.0, 300, 200), (0.0, 300, 200), (0.5, 400, 10)])
    run = simulate_preemption(reqs, DEP, "vllm", STILL, priorities=[1, 3, 5], seed=0)
    assert run.requests.preemptions.tolist() == [1, 0, 0]
    run = simulate_preemption(reqs, DEP, "vllm", STILL, priorities=[3, 1, 5], seed=0)
    assert run.requests.preemptions.tolist() == [0, 1, 0]
    # a newcomer of lower priority than everyone running waits instead of preempting
    run = simulate_preemption(reqs, DEP, "vllm", STILL, priorities=[3, 3, 0], seed=0)
    assert run.requests.preemptions.tolist() == [0, 0, 0]
    assert run.requests.first_token_s.iloc[2] > run.requests.finish_s.iloc[:2].min()


def test_every_request_finishes_and_mechanisms_share_the_workload():
    reqs = conversations(40, 2.0, seed=3)
    d = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=8192)
    runs = {m: simulate_preemption(reqs, d, m, PriorityProcess("markov", 0.05), seed=1) for m in MECHANISMS}
    for r in runs.values():
        assert r.totals["finished"] == len(reqs)
        assert (r.requests.finish_s >= r.requests.first_token_s).all()
        assert np.isfinite(r.tbt_s).all()
    s = {m: r.summary() for m, r in runs.items()}
    assert s["fastswitch"]["p99_tbt_s"] < s["vllm"]["p99_tbt_s"]
    assert s["+reuse"]["copy_gb"] < s["vllm"]["copy_gb"]
    assert s["+async"]["stall_share_tbt"] == 0.0 < s["vllm"]["stall_share_tbt"]


def test_deterministic_per_seed():
    reqs = conversations(30, 2.0, seed=0)
    d = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=8192)
    pp = PriorityProcess("reshuffle", 0.05)
    a = simulate_preemption(reqs, d, "vllm", pp, seed=7)
    b = simulate_preemption(reqs, d, "vllm", pp, seed=7)
    c = simulate_preemption(reqs, d, "vllm", pp, seed=8)
    pd.testing.assert_frame_equal(a.requests, b.requests)
    np.testing.assert_array_equal(a.tbt_s, b.tbt_s)
    assert not a.requests.finish_s.equals(c.requests.finish_s)
    pd.testing.assert_frame_equal(conversations(30, 2.0, seed=0), reqs)


def test_iteration_cost_is_the_deployments_roofline():
    d = Deployment("Llama-3.1-8B", "A100-80GB")
    for work in [(0, 0, 32, 32_000, 32), (2048, 2048 * 2049 / 2, 0, 0, 4), (1000, 500_500, 64, 64_000, 65)]:
        assert iteration_seconds(d, *work) == pytest.approx(d.iteration_s(*work[:4], sampled=work[4]), rel=0.01)


def test_bad_input_names_what_is_wrong():
    with pytest.raises(ValueError, match="priority change rate"):
        PriorityProcess("markov", -0.1)
    with pytest.raises(ValueError, match="priority kind"):
        PriorityProcess("lottery", 0.1)
    with pytest.raises(ValueError, match="priority levels"):
        PriorityProcess("markov", 0.1, 0)
    with pytest.raises(ValueError, match="mechanism"):
        simulate_preemption(table([(0.0, 10, 10)]), DEP, "teleport")
    with pytest.raises(ValueError, match="group_blocks"):
        Mechanism(group_blocks=0)
    with pytest.raises(ValueError, match="exceeds the KV cache"):
        simulate_preemption(table([(0.0, 2000, 10)]), DEP)
    with pytest.raises(ValueError, match="pcie_gbs"):
        simulate_preemption(table([(0.0, 10, 10)]), DEP, pcie_gbs=-1.0)
    with pytest.raises(ValueError, match="priorities"):
        simulate_preemption(table([(0.0, 10, 10)]), DEP, priorities=[9])
    with pytest.raises(ValueError, match="truncated"):
        simulate_preemption(conversations(20, 1.0, max_context=1000, seed=0).iloc[:5], DEP)
    with pytest.raises(ValueError, match="think_s"):
        conversations(5, 1.0, think_s=-1.0)


def test_conversation_prompts_grow_by_the_previous_turn():
    df = conversations(200, 1.0, max_context=4096, seed=2)
    assert (df.input_tokens + df.output_tokens <= 4096).all()
    nxt = df[df["next"] >= 0]
    later = df.loc[nxt["next"].to_numpy()]
    expect = nxt.input_tokens.to_numpy() + nxt.output_tokens.to_numpy() + later.new_tokens.to_numpy()
    np.testing.assert_array_equal(later.input_tokens.to_numpy(), expect)
    assert df.arrival_s[df.turn == 0].is_monotonic_increasing and df.arrival_s[df.turn > 0].isna().all()


def test_panel_numbers_are_the_experiments(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    from workbench.widgets.preemption import PANEL_CONVERSATIONS, panel_model

    rows = panel_model(("fastswitch",), rate=0.05, block_tokens=16)
    assert rows.mechanism.tolist() == ["vllm", "fastswitch"]
    grid = [{"mechanism": m, "rate": 0.05, "n_conversations": PANEL_CONVERSATIONS} for m in ("vllm", "fastswitch")]
    direct = ex.sweep("llm-preemption", grid, client=False, progress=False, cache=False)
    for col in ("p99_ttft_s", "p99_tbt_s", "throughput_tok_s", "stall_share_tbt"):
        np.testing.assert_allclose(rows[col].to_numpy(), direct[col].to_numpy(), rtol=1e-12)
    assert math.isfinite(rows.p99_tbt_s.iloc[0])


def _widgets(w):
    yield w
    for c in getattr(w, "children", ()):
        yield from _widgets(c)


def test_panel_builds_and_redraws_on_a_control_change(tmp_path, monkeypatch):
    import ipywidgets as W

    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    from workbench.widgets.preemption import preemption_panel

    ws = list(_widgets(preemption_panel()))
    rate = next(w for w in ws if getattr(w, "param_name", "") == "rate")
    info = next(w for w in ws if isinstance(w, W.HTML) and "p99 TBT" in w.value)
    before = info.value
    assert "fastswitch" in before and "+reuse" in before
    rate.value = 0.05
    assert info.value != before
