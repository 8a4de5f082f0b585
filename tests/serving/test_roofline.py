"""Spec tables and the roofline iteration cost: sources, user rows, hand-computed costs, MoE weights, the fit to
the linear model, and what does not fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.serving import specs
from workbench.serving.linear_fit import fit_linear
from workbench.serving.roofline import EFFICIENCY, Deployment


def test_tables_have_a_source_per_row_and_user_rows_register(tmp_path):
    g, m = specs.gpus(), specs.models()
    shipped = [pd.read_csv(specs.SPECS_DIR / f) for f in ("gpus.csv", "models.csv", "published.csv")]
    assert all((t["source"].str.len() > 20).all() for t in shipped)  # a source per number's row
    assert {"A100-40GB", "A100-80GB", "H100-SXM", "H100-PCIe", "H200", "B200", "L40S", "MI300X"} <= set(g["gpu"])
    assert {"Llama-2-70B", "Llama-3.1-405B", "Mixtral-8x7B", "Qwen2-72B", "DeepSeek-R1"} <= set(m["model"])
    mix = specs.model("Mixtral-8x7B")
    assert mix.shared_params + 8 * mix.expert_params == pytest.approx(mix.params)
    assert mix.shared_params + 2 * mix.expert_params == pytest.approx(mix.active_params)
    assert specs.model("DeepSeek-V3").kv_bytes_per_token == 61 * 576 * 2
    path = tmp_path / "mine.csv"
    path.write_text(
        "gpu,generation,bf16_tflops,fp8_tflops,hbm_gb,hbm_tbps,scaleup_gbps,source\nX1,hopper,100,,24,1.0,64,my bench\n"
    )
    assert specs.load_specs(path) == 1 and np.isnan(specs.gpu("X1").fp8_tflops)
    assert specs.gpu("X1").peak_flops("fp8") == 100e12  # no FP8: falls back to BF16
    with pytest.raises(ValueError, match=r"unknown GPU 'V100'.*H100-SXM"):
        specs.gpu("V100")
    with pytest.raises(ValueError, match="unknown model"):
        specs.model("GPT-5")
    with pytest.raises(ValueError, match="unknown Model field"):
        specs.register_model({"model": "m", "layer": 3})


def from_resources(d, *work):
    """One iteration from the operators of ``resources()`` (sequential: each at its binding resource, summed;
    overlapped: the busiest resource), plus the engine's host step: what the cost table must give."""
    res = d.resources(*work)
    gpu = max(sum(r[k] for r in res.values()) for k in range(3)) if d.overlap else sum(max(r) for r in res.values())
    return d.profile.combine(gpu, d.cpu_s(max(work[2], work[4])))


def test_decode_of_one_request_reads_the_weights_and_prefill_is_compute_bound():
    d = Deployment("Llama-2-7B", "A100-80GB", costs="stated")
    eff = EFFICIENCY["ampere"]
    m = specs.model("Llama-2-7B")
    weights = (m.params - 2 * m.vocab * m.hidden) * 2
    bw = 2.039e12 * eff.memory
    b = d.breakdown(decode_seqs=1, kv_tokens=0)
    assert b.set_index("operator").loc["linear", "memory_s"] == pytest.approx(weights / bw)
    assert b.set_index("operator").loc["linear", "bound"] == "memory"
    p = d.breakdown(prefill_tokens=4096, prefill_pairs=4096 * 4097 / 2).set_index("operator")
    assert p.loc["linear", "bound"] == "compute"
    assert p.loc["linear", "compute_s"] == pytest.approx(
        2 * (m.params - 2 * m.vocab * m.hidden) * 4096 / 312e12 / eff.compute
    )
    args = (512, 512 * 300.0, 64, 64 * 900, 65)
    assert d.iteration_s(*args) == pytest.approx(from_resources(d, *args))
    ovl = Deployment("Llama-2-7B", "A100-80GB", overlap=True, costs="stated")
    assert ovl.iteration_s(*args) == pytest.approx(from_resources(ovl, *args))
    assert ovl.iteration_s(*args) < d.iteration_s(*args)
    a, s, _lim = ovl.decode_line(64, 64 * 900)
    assert a + s * 64 * 900 == pytest.approx(ovl.iteration_s(0, 0, 64, 64 * 900))


def test_tp_adds_allreduce_and_moe_reads_more_experts_with_batch():
    d1 = Deployment("Llama-3.1-8B", "H100-SXM")
    d4 = Deployment("Llama-3.1-8B", "H100-SXM", tp=4)
    assert d4.breakdown(decode_seqs=8).set_index("operator").loc["allreduce", "bound"] == "network"
    assert d4.kv_capacity_tokens > 4 * d1.kv_capacity_tokens  # the weights are split, the HBM adds up
    mix = Deployment("Mixtral-8x7B", "H100-SXM", tp=2)
    one = mix.breakdown(decode_seqs=1).set_index("operator").loc["linear", "memory_s"]
    many = mix.breakdown(decode_seqs=64).set_index("operator").loc["linear", "memory_s"]
    assert many / one == pytest.approx(46.7 / 12.9, rel=0.15)  # all experts touched vs two


def test_fit_linear_tracks_the_roofline_and_misfits_are_named():
    d = Deployment("Llama-2-13B", "A100-80GB")
    cfg = fit_linear(d)
    for p, b, kv in ((2048, 0, 0), (0, 128, 60_000), (512, 64, 30_000)):
        lin = cfg.iteration_s(p, b, kv)
        assert lin == pytest.approx(d.iteration_s(p, p * 257, b, kv, b + p / 512), rel=0.35)
    with pytest.raises(ValueError, match=r"Llama-3.1-405B .* does not fit on 4 x H100-SXM .*short by"):
        Deployment("Llama-3.1-405B", "H100-SXM", tp=4)
    with pytest.raises(ValueError, match="dtype"):
        Deployment("Llama-2-7B", "A100-80GB", dtype="int4")


def test_measured_curves_divide_the_roofline_by_the_fraction_measured_at_that_shape():
    from workbench.serving.opcurves import curves

    d = Deployment("Llama-2-70B", "A100-80GB", tp=8)
    assert d.costs == "curves"
    cur = curves("ampere")
    m = specs.model("Llama-2-70B")
    lin = 2 * (m.params - 2 * m.vocab * m.hidden)
    one = d.breakdown(decode_seqs=1, kv_tokens=0).set_index("operator")
    assert one.loc["linear", "memory_s"] == pytest.approx(lin / 8 / 2.039e12 / float(cur.gemm_efficiency(1)))
    big = d.breakdown(prefill_tokens=4096, prefill_pairs=4096 * 4097 / 2).set_index("operator")
    assert big.loc["linear", "compute_s"] == pytest.approx(lin * 4096 / 8 / 312e12 / float(cur.gemm_efficiency(4096)))
    c0, ch, ci = cur.elementwise
    assert big.loc["elementwise", "memory_s"] == pytest.approx(
        80 * (c0 + (ch * 4096 * m.hidden + ci * 4096 * m.ffn / 8) * 2 / 2.039e12)
    )
    ar = float(cur.allreduce_s(4096 * m.hidden * 2, tp=8, topology="nvswitch"))
    assert big.loc["allreduce", "network_s"] == pytest.approx(2 * 80 * ar)
    # near the ridge the GEMMs run far below both peaks: 140 tokens take longer per token than 4096
    ridge = d.breakdown(prefill_tokens=140, prefill_pairs=140 * 141 / 2).set_index("operator")
    assert ridge.loc["linear", "time_s"] / 140 > big.loc["linear", "time_s"] / 4096
    # the all-reduce latency floor: ~60 us per call at TP 8, far above 10 us
    assert float(cur.allreduce_s(2 * m.hidden, tp=8, topology="nvswitch")) > 30e-6
    # beyond the largest measured message (134 MB) a message moves at that message's bandwidth: twice the bytes,
    # twice the time (the H100 curve's last two points are equal, so a slope between them would make it free)
    for gen in ("ampere", "hopper"):
        for tp in (2, 4, 8):
            c = curves(gen)
            top = float(c.allreduce_s(134e6, tp=tp, topology="nvswitch"))
            assert float(c.allreduce_s(268e6, tp=tp, topology="nvswitch")) == pytest.approx(top * 268 / 134, rel=0.02)
    # the engine's cost table is the operators summed inside its token range (exactly) and beyond it (extrapolated
    # with the slope of its last tokens)
    for work in [(0, 0, 32, 32_000, 32), (2048, 2048 * 2049 / 2, 0, 0, 4)]:
        assert d.iteration_s(*work[:4], sampled=work[4]) == pytest.approx(from_resources(d, *work), rel=1e-9)
    far = (20_000, 20_000 * 10_000.5, 0, 0, 1)
    assert d.iteration_s(*far[:4], sampled=far[4]) == pytest.approx(from_resources(d, *far), rel=5e-3)


def test_cost_sources_are_validated_and_named():
    with pytest.raises(ValueError, match="costs"):
        Deployment("Llama-2-7B", "A100-80GB", costs="measured")
    with pytest.raises(ValueError, match="blackwell"):
        Deployment("Llama-2-7B", "B200", costs="curves")
    assert Deployment("Llama-2-7B", "B200").costs == "stated"  # no profile of that generation
    assert Deployment("Llama-2-7B", "A100-80GB", efficiency=EFFICIENCY["ampere"]).costs == "stated"
    with pytest.raises(ValueError, match="A100-80GB, H100-SXM"):
        Deployment("Llama-2-7B", "A100-40GB", costs="profiled")


@pytest.fixture
def vidur_profiles():
    from workbench.serving.opcurves import profiles_available

    if not profiles_available():
        pytest.skip("vidur-profiles not on the data search path")


def test_profiled_costs_agree_with_the_curves_and_refuse_what_is_not_profiled(vidur_profiles):
    for gpu, tp in [("A100-80GB", 4), ("H100-SXM", 8)]:
        p = Deployment("Llama-2-70B", gpu, tp=tp, costs="profiled")
        c = Deployment("Llama-2-70B", gpu, tp=tp)
        for work in [(0, 0, 1, 1000), (0, 0, 64, 64_000), (2048, 2048 * 2049 / 2, 0, 0)]:
            assert p.iteration_s(*work) == pytest.approx(c.iteration_s(*work), rel=0.15)
        work = (512, 512 * 300.0, 64, 64 * 900, 65)
        assert p.iteration_s(*work) == pytest.approx(from_resources(p, *work))
    # Llama-3.1-8B has the architecture of the profiled Meta-Llama-3-8B (A100 only)
    assert Deployment("Llama-3.1-8B", "A100-80GB", costs="profiled").iteration_s(0, 0, 1, 100) > 0
    # a layer is matched by its shape: Llama-2-13B's layers are InternLM-20B's (hidden 5120, ffn 13824, 40 heads)
    assert "internlm-20b" in Deployment("Llama-2-13B", "A100-80GB", costs="profiled")._profile.path
    with pytest.raises(ValueError, match="Llama-2-7b-hf"):
        Deployment("GPT-J-6B", "A100-80GB", costs="profiled")
    with pytest.raises(ValueError, match=r"tp in \[1, 2, 4, 8\]"):
        Deployment("Llama-2-7B", "A100-80GB", tp=16, costs="profiled")


def test_committed_curves_are_what_the_script_derives_from_vidur(vidur_profiles):
    import importlib.util

    from workbench.data import PROJECT_ROOT

    path = PROJECT_ROOT / "scripts" / "derive_operator_curves.py"
    spec = importlib.util.spec_from_file_location("derive_operator_curves", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _table, report = mod.derive()
    assert mod.main(["--check"]) == 0
    # the curves predict each held-out model's measured layers (median over its token counts and TP degrees)
    assert (report["median_abs_error"] < 0.1).all()


def test_a_malformed_profile_names_its_file_and_line(tmp_path, monkeypatch):
    from workbench.serving import opcurves

    d = tmp_path / "vidur-profiles" / "compute" / "a100" / "org" / "model"
    d.mkdir(parents=True)
    ops = [f"time_stats.{op}.median" for op in (*opcurves.GEMM_OPS, "emb")]
    head = ["n_embd", "n_expanded_embd", "n_head", "n_kv_head", "num_tensor_parallel_workers", "num_tokens", *ops]
    rows = [[4096, 11008, 32, 32, 1, t, *([0.01 * t] * len(ops))] for t in (1, 2, 4)]
    rows[2][-1] = -1.0  # a negative time on the file's fourth line
    (d / "mlp.csv").write_text("\n".join(",".join(map(str, r)) for r in [head, *rows]) + "\n")
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    opcurves._profile_index.cache_clear()
    opcurves._load_profile.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"mlp.csv:4: non-finite or negative"):
            Deployment("Llama-2-7B", "A100-80GB", costs="profiled")
        (d / "mlp.csv").write_text("n_embd,num_tokens\n4096,1\n")
        opcurves._profile_index.cache_clear()
        with pytest.raises(ValueError, match=r"mlp.csv"):
            Deployment("Llama-2-7B", "A100-80GB", costs="profiled")
    finally:
        opcurves._profile_index.cache_clear()
        opcurves._load_profile.cache_clear()


def test_engines_with_a_custom_all_reduce_use_its_measured_curve_for_small_messages():
    from workbench.serving.opcurves import curves

    cur = curves("hopper")
    v1 = Deployment("Llama-3.1-70B", "H100-SXM", tp=4, engine="vllm")  # custom all-reduce kernel
    v0 = Deployment("Llama-3.1-70B", "H100-SXM", tp=4, engine="vllm-v0")  # NCCL, as Vidur profiled
    assert v1.profile.allreduce == "custom" and v0.profile.allreduce == "nccl"
    ar1 = v1.breakdown(decode_seqs=32, kv_tokens=0).set_index("operator").loc["allreduce", "network_s"]
    ar0 = v0.breakdown(decode_seqs=32, kv_tokens=0).set_index("operator").loc["allreduce", "network_s"]
    size = 32 * 8192 * 2  # 512 KB of activations per call
    assert ar1 == pytest.approx(160 * float(cur.allreduce_s(size, tp=4, topology="nvswitch", custom=True)))
    assert ar0 == pytest.approx(160 * float(cur.allreduce_s(size, tp=4, topology="nvswitch")))
    assert ar1 < ar0 / 2  # ~10-20 us per call instead of NCCL's ~40 us floor
    # above the custom kernel's largest measured message, NCCL's curve
    big = 64e6
    assert float(cur.allreduce_s(big, tp=4, topology="nvswitch", custom=True)) == pytest.approx(
        float(cur.allreduce_s(big, tp=4, topology="nvswitch"))
    )
    # no custom curve measured on Ampere: NCCL's
    a = Deployment("Llama-2-70B", "A100-80GB", tp=4, engine="vllm").breakdown(decode_seqs=8, kv_tokens=0)
    b = Deployment("Llama-2-70B", "A100-80GB", tp=4, engine="vllm-v0").breakdown(decode_seqs=8, kv_tokens=0)
    assert (
        a.set_index("operator").loc["allreduce", "network_s"] == b.set_index("operator").loc["allreduce", "network_s"]
    )


def test_a_card_without_nvlink_is_not_given_an_nvswitch():
    """The L40S has no NVLink (scale-up = its PCIe, 64 GB/s): its GPUs reach each other over PCIe, for which no
    all-reduce was measured. At TP 2 with measured curves the deployment says so and what to use, at construction;
    it asked for an NVSwitch curve of the ada generation at its first iteration before. Stated costs run."""
    from workbench.serving.opcurves import topology

    assert topology(specs.gpu("L40S")) == "pcie" and topology(specs.gpu("H100-SXM")) == "nvswitch"
    with pytest.raises(ValueError, match=r"no measured all-reduce between L40S GPUs.*costs='stated'"):
        Deployment("Llama-3.1-8B", "L40S", tp=2, costs="curves")
    one, two = (Deployment("Llama-3.1-8B", "L40S", tp=tp, costs="stated") for tp in (1, 2))
    work = (512, 512 * 513 / 2, 8, 8000, 9)
    assert 0 < float(two.iteration_s(*work)) < float(one.iteration_s(*work))


@pytest.mark.parametrize(
    "card, profile, peak, bandwidth",
    [("RTX-4090", "rtx4090", 165.2e12, 1.008e12), ("RTX-PRO-6000", "rtxpro6000", 500e12, 1.597e12)],
)
def test_a_gpu_profiled_itself_uses_its_own_curves(card, profile, peak, bandwidth):
    """A card with its own measured profile (LLMServingSim's, vLLM 0.19) runs on its own curves: its layer's four
    projections at 1, 16 and 64 tokens (where a quarter-octave bin of the curve holds that one token count) are the
    profile's kernel times; the L40S keeps its generation's (A40), the B200 has none (stated costs)."""
    from workbench.data import PROJECT_ROOT

    own = Deployment("Llama-3.1-8B", card)._curves
    assert own.generation == card
    assert Deployment("Llama-2-7B", "L40S")._curves.generation == "ada"
    assert Deployment("Llama-3.1-8B", "B200").costs == "stated"
    prof = pd.read_csv(PROJECT_ROOT / f"datasets/serving_specs/profiles/llmservingsim-{profile}-llama31-8b.csv")
    ops = prof[prof.layer.isin(["qkv_proj", "o_proj", "gate_up_proj", "down_proj"])]
    params = 4096 * 6144 + 4096 * 4096 + 3 * 4096 * 14336
    for t in (1, 16, 64):
        measured = ops[ops.tokens == t].time_us.sum() * 1e-6
        ideal = max(2 * t * params / peak, 2 * params / bandwidth)
        assert ideal / float(own.gemm_efficiency(t)) == pytest.approx(measured, rel=0.02)
