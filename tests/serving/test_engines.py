"""Engine profiles: each engine's host work per iteration, with its source, and how it combines with the GPU step."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from workbench.serving import Deployment, Scheduler, simulate_replica
from workbench.serving.engines import ENGINES_CSV, engine, engines
from workbench.testing import requires_data

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "datasets" / ENGINES_CSV


def test_the_four_profiles_exist_with_sources():
    for name in ("vllm", "vllm-v0", "sglang", "trtllm"):
        e = engine(name)
        assert e.source and e.description
    assert Deployment("Llama-2-7B", "A100-80GB").engine == "vllm"  # the default
    assert Deployment("Llama-2-7B", "A100-80GB", overlap=True).engine == "nanoflow"


def test_unknown_engine_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown engine 'vllm-v9'; engines.csv has: vllm, vllm-v0"):
        Deployment("Llama-2-7B", "A100-80GB", engine="vllm-v9")
    with pytest.raises(ValueError, match="not both"):
        Deployment("Llama-2-7B", "A100-80GB", engine="vllm", overhead_s=0.001)


def test_eager_engine_adds_its_host_step_and_ray_at_tp2():
    """vLLM 0.x: GPU + CPU; the CPU step grows by a per-sequence cost, and at TP >= 2 by Ray's ~6 ms (Vidur)."""
    d1 = Deployment("Llama-2-13B", "A100-80GB", engine="vllm-v0")
    d2 = Deployment("Llama-2-13B", "A100-80GB", tp=2, engine="vllm-v0")
    for d in (d1, d2):
        gpu = d.gpu_s(0, 0, 32, 32 * 1000)
        assert d.iteration_s(0, 0, 32, 32 * 1000) == pytest.approx(gpu + d.cpu_s(32))
    e = engine("vllm-v0")
    assert d1.cpu_s(32) == pytest.approx(e.iteration_s + 32 * e.per_seq_s)
    assert d2.cpu_s(32) - d1.cpu_s(32) == pytest.approx(e.tp_iteration_s + e.tp_rpc_s)
    assert 0.005 < e.tp_rpc_s < 0.008


def test_overlapping_engines_hide_the_host_step_until_it_is_longer():
    d = Deployment("Llama-2-7B", "A100-80GB", engine="sglang")
    small = d.iteration_s(0, 0, 8, 8000)
    assert small == pytest.approx(d.gpu_s(0, 0, 8, 8000))  # GPU-bound: CPU hidden
    huge = d.cpu_s(5000)
    assert d.iteration_s(0, 0, 5000, 0) == pytest.approx(max(d.gpu_s(0, 0, 5000, 0), huge))


def test_decode_line_matches_iteration_on_both_sides_of_the_crossing():
    """The simulator's fast decode stepping uses the binding line; it must equal iteration_s wherever it is valid."""
    for eng in ("vllm", "vllm-v0"):
        d = Deployment("Llama-2-7B", "A100-80GB", engine=eng)
        for kv in (0.0, 1e3, 5e4, 2e5):
            a, s, limit = d.decode_line(64, kv)
            assert kv <= limit
            assert a + s * kv == pytest.approx(d.iteration_s(0, 0, 64, kv), rel=1e-9)


def test_engine_choice_moves_latency_the_right_way():
    import numpy as np

    arr, inp, out = np.zeros(16), np.full(16, 512), np.full(16, 128)
    sched = Scheduler(kind="vllm", max_num_batched_tokens=8192, block_tokens=16)
    fast = simulate_replica(arr, inp, out, Deployment("Llama-2-7B", "A100-80GB", tp=2, engine="vllm"), sched)
    slow = simulate_replica(arr, inp, out, Deployment("Llama-2-7B", "A100-80GB", tp=2, engine="vllm-v0"), sched)
    assert np.max(slow.finish_s) > 1.3 * np.max(fast.finish_s)  # Ray and the exposed host step at TP 2


def _shadow_engines(tmp_path, monkeypatch, text: str) -> None:
    """Put ``text`` first on the data search path as ``serving_specs/engines.csv``."""
    bad = tmp_path / "serving_specs" / "engines.csv"
    bad.parent.mkdir(parents=True)
    bad.write_text(text, encoding="utf-8")
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))


def test_malformed_engine_table_names_the_line(tmp_path, monkeypatch):
    _shadow_engines(tmp_path, monkeypatch, SHIPPED.read_text().replace("0.00624,0,false", "lots,0,false", 1))
    with pytest.raises(ValueError, match=r"engines.csv:3: malformed engine row"):
        engines()
    monkeypatch.delenv("WORKBENCH_DATA")
    assert "vllm" in engines()


@requires_data("vidur-profiles/cpu_overheads/a100.csv")
def test_vllm_v0_profile_is_what_the_script_derives_from_vidur():
    spec = importlib.util.spec_from_file_location("derive_engine_costs", ROOT / "scripts" / "derive_engine_costs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0


def test_an_unknown_all_reduce_kind_is_named_with_its_line(tmp_path, monkeypatch):
    text = SHIPPED.read_text(encoding="utf-8").splitlines()
    head = text[0].split(",")
    col = head.index("allreduce")
    import csv
    import io

    rows = list(csv.reader(io.StringIO("\n".join(text))))
    rows[2][col] = "mpi"
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    _shadow_engines(tmp_path, monkeypatch, out.getvalue())
    with pytest.raises(ValueError, match=r"engines.csv:3: malformed engine row .*allreduce"):
        engines()


def test_decode_attention_kernels_by_era_and_an_unknown_one_named(tmp_path, monkeypatch):
    # the 2023 vLLM runs its own PagedAttention kernel, TensorRT-LLM before XQA its MMHA kernel (a thread block per
    # query head, both); every other profile a GQA-aware one (FlashAttention/FlashInfer, XQA)
    assert engine("vllm-2023").decode_attention == "paged-v1"
    assert engine("trtllm-v0.5").decode_attention == "mmha"
    assert {e.decode_attention for n, e in engines().items() if n not in ("vllm-2023", "trtllm-v0.5")} == {"gqa"}
    # the 2023 row differs from the eager engine's in its decode kernel only
    a, b = engine("vllm-2023"), engine("vllm-v0")
    assert (a.iteration_s, a.per_seq_s, a.tp_iteration_s, a.tp_rpc_s, a.overlap_cpu, a.allreduce, a.attention) == (
        b.iteration_s,
        b.per_seq_s,
        b.tp_iteration_s,
        b.tp_rpc_s,
        b.overlap_cpu,
        b.allreduce,
        b.attention,
    )
    import csv
    import io

    rows = list(csv.reader(io.StringIO(SHIPPED.read_text(encoding="utf-8"))))
    rows[2][rows[0].index("decode_attention")] = "paged-v9"
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    _shadow_engines(tmp_path, monkeypatch, out.getvalue())
    with pytest.raises(ValueError, match=r"engines.csv:3: malformed engine row .*decode_attention"):
        engines()


def test_vllm_2023_pays_ray_serialization_per_sequence_and_worker():
    # before vLLM PR #2221 every sequence's metadata went to each Ray worker every step: a host cost per running
    # sequence and worker at TP >= 2, none on one GPU and none for the engine that keeps sequences on its workers
    old, eager = engine("vllm-2023"), engine("vllm-v0")
    assert old.rpc_per_seq_s > 0 and eager.rpc_per_seq_s == 0
    assert old.cpu_s(64, tp=1) == pytest.approx(eager.cpu_s(64, tp=1))
    for tp in (2, 8):
        extra = old.cpu_s(64, tp=tp) - eager.cpu_s(64, tp=tp)
        assert extra == pytest.approx(64 * tp * old.rpc_per_seq_s)
        assert old.cpu_s(0, tp=tp) == pytest.approx(eager.cpu_s(0, tp=tp))
    # on the cost table: the decode step of the 2023 engine at TP 8 grows with the batch by that much more
    d_old = Deployment("Llama-2-70B", "H100-SXM", tp=8, engine="vllm-2023")
    d_new = Deployment("Llama-2-70B", "H100-SXM", tp=8, engine="vllm-v0")
    grow_old = d_old.iteration_s(0, 0, 64, 64 * 1024) - d_old.iteration_s(0, 0, 1, 1024)
    grow_new = d_new.iteration_s(0, 0, 64, 64 * 1024) - d_new.iteration_s(0, 0, 1, 1024)
    assert grow_old - grow_new > 63 * 8 * old.rpc_per_seq_s


@pytest.mark.slow
def test_vllm_2023_rpc_cost_is_what_the_script_derives_from_pr_2221():
    spec = importlib.util.spec_from_file_location("derive_vllm2023_rpc", ROOT / "scripts" / "derive_vllm2023_rpc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0
    # the replay's speed-up at the derived cost is the PR's measured one
    c = engine("vllm-2023").rpc_per_seq_s
    assert mod.throughput(0.0) / mod.throughput(c) == pytest.approx(3.48 / 2.48, rel=0.02)
