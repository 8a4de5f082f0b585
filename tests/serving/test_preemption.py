"""FastSwitch's mechanisms as policies of the one engine: the one swap cost by hand, sync vs async stall, reuse sending
only new blocks, the scheduler's victim choice, determinism, bad input, the panel's numbers, and the proof that there
is one engine (no second event loop; a FastSwitch run is an engine run; notebooks 10 and 14 charge one swap cost)."""

from __future__ import annotations

import importlib
import math
import pkgutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numba.core.registry import CPUDispatcher

import workbench.serving
from workbench import experiments as ex
from workbench.serving import Deployment, Scheduler, serve, swap_seconds
from workbench.serving.conversations import conversations
from workbench.serving.cost import COPY_CALL_S, PCIE_EFFICIENCY
from workbench.serving.preemption import MECHANISMS, PriorityProcess, fastswitch_scheduler, run, summary

DEP = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=1024)  # 64 blocks of 16 tokens
KV = DEP.model.kv_bytes_per_token  # 128 KiB
TENSORS = 2 * DEP.model.layers  # K and V per layer
BW = DEP.gpu.pcie_bytes_per_s * PCIE_EFFICIENCY  # 32 GB/s x 0.8
STILL = PriorityProcess("reshuffle", 0.0, 8)


def table(rows, priorities=None) -> pd.DataFrame:
    """Single-turn requests: (arrival, prompt, output) per row."""
    a, p, o = (np.array(c) for c in zip(*rows, strict=True))
    n = len(a)
    df = pd.DataFrame(
        {"conversation": np.arange(n), "turn": 0, "arrival_s": a.astype(float), "input_tokens": p,
         "new_tokens": p, "output_tokens": o, "think_s": 1.0, "next": -1}
    )  # fmt: skip
    if priorities is not None:
        df["priority"] = priorities
    return df


def test_the_one_swap_cost_by_hand_per_block_and_per_group():
    # 64 tokens = 4 blocks; 64 tensors; 10 us per call; 128 KiB per token at 25.6 GB/s
    data = 64 * KV / BW
    assert swap_seconds(DEP, 64) == pytest.approx(4 * TENSORS * COPY_CALL_S + data)
    assert swap_seconds(DEP, 64, group_blocks=64) == pytest.approx(TENSORS * COPY_CALL_S + data)
    # a partly filled block moves whole: 20 tokens = 2 blocks = 32 tokens of bytes
    assert swap_seconds(DEP, 20) == pytest.approx(2 * TENSORS * COPY_CALL_S + 32 * KV / BW)
    # the figure: 1,024 tokens of Llama-3.1-8B one way on an A100, vLLM's per-block copies
    assert swap_seconds(Deployment("Llama-3.1-8B", "A100-80GB"), 1024) == pytest.approx(
        64 * 64 * 10e-6 + 1024 * KV / BW
    )
    with pytest.raises(ValueError, match="tokens"):
        swap_seconds(DEP, -1)


def one_preemption(mech, priority=STILL):
    # A (low priority) runs; B (high) arrives when A's context no longer leaves room: A is swapped out, B runs, A
    # comes back
    reqs = table([(0.0, 600, 300), (1.0, 600, 20)], priorities=[1, 5])
    return run(reqs, DEP, fastswitch_scheduler(mech, priority), seed=0)


def test_sync_swap_stalls_the_iteration_by_the_one_swap_cost():
    r = one_preemption("vllm")
    s = r.swaps
    assert (s.swap_outs, s.swap_ins) == (1, 1)
    assert r.table["preemptions"].tolist() == [1, 0]
    blocks = s.copy_tokens / (2 * 16)  # the same context out and back in
    assert blocks == int(blocks) and 38 < blocks <= 64
    assert s.copies == 2 * blocks * TENSORS
    assert s.stall_s == pytest.approx(2 * float(swap_seconds(DEP, int(blocks) * 16)), rel=1e-9)
    # block groups: one call per tensor for the whole context
    g = one_preemption("+block-groups").swaps
    assert g.copies == 2 * TENSORS
    assert g.stall_s == pytest.approx(2 * float(swap_seconds(DEP, int(blocks) * 16, group_blocks=64)), rel=1e-9)


def test_async_swap_does_not_stall_but_the_waiting_request_waits_for_its_blocks():
    sync, asyn = one_preemption("vllm"), one_preemption("+async")
    assert asyn.swaps.stall_s == 0.0 and asyn.swaps.swap_outs == 1
    out_copy = asyn.swaps.out_copy_s
    assert out_copy > 0.02  # ~44 blocks x 64 calls x 10 us
    assert asyn.table["ttft_s"].iloc[1] >= out_copy  # B needs the blocks A's copy is still moving
    # A's token gaps never include a synchronous stall under async; under sync the gap spanning it does
    assert asyn.gaps.stall.max() == 0.0 and sync.gaps.stall.max() > 0.0
    assert sync.table["stall_ttft_s"].iloc[1] > 0.0  # sync: every request in the system waits through the stall


def test_reuse_sends_only_the_blocks_past_the_host_copy():
    # A (low priority) is swapped out for B, comes back, and is swapped out again for C: with reuse its second
    # swap-out sends only the blocks past the host copy of the first
    reqs = table([(0.0, 600, 300), (1.0, 600, 20), (2.5, 600, 20)], priorities=[1, 5, 5])
    plain, reuse = (run(reqs, DEP, fastswitch_scheduler(m, STILL)).swaps for m in ("vllm", "+reuse"))
    assert (plain.swap_outs, plain.swap_ins) == (reuse.swap_outs, reuse.swap_ins) == (2, 2)
    saved = plain.copy_tokens - reuse.copy_tokens
    assert saved > 0 and saved % 16 == 0
    assert saved < plain.copy_tokens / 4  # only the second swap-out is shorter: by the first one's full blocks


def test_the_scheduler_preempts_the_lowest_priority_for_the_highest():
    rows = [(0.0, 300, 200), (0.0, 300, 200), (0.5, 400, 10)]
    sch = fastswitch_scheduler("vllm", STILL)
    assert run(table(rows, [1, 3, 5]), DEP, sch).table["preemptions"].tolist() == [1, 0, 0]
    assert run(table(rows, [3, 1, 5]), DEP, sch).table["preemptions"].tolist() == [0, 1, 0]
    # a newcomer of lower priority than everyone running waits instead of preempting
    t = run(table(rows, [3, 3, 0]), DEP, sch).table
    assert t["preemptions"].tolist() == [0, 0, 0]
    assert t["arrival_s"].iloc[2] + t["ttft_s"].iloc[2] > (t["arrival_s"] + t["e2e_s"]).iloc[:2].min()


def test_every_request_finishes_and_mechanisms_share_the_workload():
    reqs = conversations(40, 2.0, seed=3)
    d = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=8192)
    runs = {m: run(reqs, d, fastswitch_scheduler(m, PriorityProcess("markov", 0.05)), seed=1) for m in MECHANISMS}
    for r in runs.values():
        t = r.table
        assert t["e2e_s"].notna().all() and (t["e2e_s"] >= t["ttft_s"]).all()
        assert r.gaps.size == int((t["output_tokens"] - 1).sum())  # every gap between tokens, once
    s = {m: summary(r) for m, r in runs.items()}
    assert s["fastswitch"]["p99_tbt_s"] < s["vllm"]["p99_tbt_s"]
    assert s["+reuse"]["copy_gb"] < s["vllm"]["copy_gb"]
    assert s["+async"]["stall_share_tbt"] == 0.0 < s["vllm"]["stall_share_tbt"]
    # later turns arrive after the previous turn ends, by its pause
    t = runs["vllm"].table
    nxt = reqs["next"].to_numpy()
    has = nxt >= 0
    end = (t["arrival_s"] + t["e2e_s"]).to_numpy()
    np.testing.assert_allclose(t["arrival_s"].to_numpy()[nxt[has]], end[has] + reqs["think_s"].to_numpy()[has])


def test_deterministic_per_seed():
    reqs = conversations(30, 2.0, seed=0)
    d = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=8192)
    sch = fastswitch_scheduler("vllm", PriorityProcess("reshuffle", 0.05))
    a, b, c = run(reqs, d, sch, seed=7), run(reqs, d, sch, seed=7), run(reqs, d, sch, seed=8)
    pd.testing.assert_frame_equal(a.table, b.table)
    np.testing.assert_array_equal(a.gaps.first, b.gaps.first)
    assert not a.table["e2e_s"].equals(c.table["e2e_s"])
    pd.testing.assert_frame_equal(conversations(30, 2.0, seed=0), reqs)


def test_bad_input_names_what_is_wrong():
    with pytest.raises(ValueError, match="priority change rate"):
        PriorityProcess("markov", -0.1)
    with pytest.raises(ValueError, match="priority kind"):
        PriorityProcess("lottery", 0.1)
    with pytest.raises(ValueError, match="priority levels"):
        PriorityProcess("markov", 0.1, 0)
    with pytest.raises(ValueError, match="mechanism"):
        fastswitch_scheduler("teleport")
    with pytest.raises(ValueError, match="group_blocks"):
        fastswitch_scheduler("fastswitch", group_blocks=0)
    with pytest.raises(ValueError, match="exceeds the KV cache"):
        run(table([(0.0, 2000, 10)]), DEP, fastswitch_scheduler())
    with pytest.raises(ValueError, match="pcie_gbs"):
        Deployment("Llama-3.1-8B", "A100-80GB", pcie_gbs=-1.0)
    with pytest.raises(ValueError, match="priority"):
        run(table([(0.0, 10, 10)], [9]), DEP, fastswitch_scheduler())
    with pytest.raises(ValueError, match="truncated"):
        run(conversations(20, 1.0, max_context=1000, seed=0).iloc[:5], DEP, fastswitch_scheduler())
    with pytest.raises(ValueError, match="think_s"):
        conversations(5, 1.0, think_s=-1.0)
    with pytest.raises(ValueError, match="priority_changes needs"):
        Scheduler(priority_changes=STILL)


def test_gap_records_beyond_memory_are_refused_before_the_run():
    # 21 requests of 10 M output tokens could need 2.1e8 gap records (8.4 GB): refused by name before allocating;
    # the same requests served without gap records are not refused
    reqs = table([(float(i), 100, 10_000_000) for i in range(21)])
    d = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=1024)
    with pytest.raises(ValueError, match=r"record_gaps: the 21 requests' 210,000,000 output tokens .* serve fewer"):
        serve(reqs, d, Scheduler(), record_gaps=True)
    assert serve(reqs, d, Scheduler()).table["rejected"].all()  # each longer than the 1,024-token cache


def test_conversation_prompts_grow_by_the_previous_turn():
    df = conversations(200, 1.0, max_context=4096, seed=2)
    assert (df.input_tokens + df.output_tokens <= 4096).all()
    nxt = df[df["next"] >= 0]
    later = df.loc[nxt["next"].to_numpy()]
    expect = nxt.input_tokens.to_numpy() + nxt.output_tokens.to_numpy() + later.new_tokens.to_numpy()
    np.testing.assert_array_equal(later.input_tokens.to_numpy(), expect)
    assert df.arrival_s[df.turn == 0].is_monotonic_increasing and df.arrival_s[df.turn > 0].isna().all()


# ------------------------------------------------------------------------------------------------- one engine
def test_a_fastswitch_run_is_a_direct_engine_run():
    reqs = conversations(40, 2.0, seed=5)
    d = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=8192)
    for mech in MECHANISMS:
        sch = fastswitch_scheduler(mech, PriorityProcess("reshuffle", 0.05))
        a = run(reqs, d, sch, seed=3)
        b = serve(reqs, d, sch, record_gaps=True, seed=3)
        pd.testing.assert_frame_equal(a.table, b.table)
        assert a.swaps == b.swaps and a.busy_fraction == b.busy_fraction


def test_the_engine_is_the_only_event_loop_of_serving():
    here = Path(workbench.serving.__file__).parent
    assert not (here / "_preemption_kernel.py").exists() and not (here / "_linear_kernel.py").exists()
    compiled = {}
    for info in pkgutil.iter_modules([str(here)]):
        mod = importlib.import_module(f"workbench.serving.{info.name}")
        for name, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == mod.__name__:
                compiled.setdefault(info.name, []).append(name)
    # the loop; the one evaluation of a cost table; the closed form of a decode run
    assert set(compiled) == {"_engine_kernel", "_cost_eval", "_common"}, compiled
    assert compiled["_common"] == ["steps_to_reach"]
    assert [n for n in compiled["_engine_kernel"] if "engine" in n or "advance" in n] == ["_advance", "run_engine"]


def test_notebooks_10_and_14_charge_the_same_swap_for_the_same_deployment():
    # notebook 10's swap preemption (the engine's default per-block copies) and notebook 14's vLLM mechanism:
    # one preemption of the same request, the same stall, and both the one swap cost
    reqs = table([(0.0, 600, 300), (1.0, 600, 20)], priorities=[1, 5])
    nb14 = run(reqs, DEP, fastswitch_scheduler("vllm", STILL)).swaps
    nb10 = serve(reqs, DEP, Scheduler("vllm", preemption="swap", priority="priority")).swaps
    assert nb10 == nb14
    blocks = nb10.copy_tokens // 32
    assert nb10.stall_s == pytest.approx(2 * float(swap_seconds(DEP, blocks * 16)), rel=1e-9)


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
