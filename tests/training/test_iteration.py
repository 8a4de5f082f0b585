"""Iteration-time model: breakdown arithmetic, hand-computed cases, fabric routing and named errors."""

from dataclasses import replace

import numpy as np
import pytest

from workbench import fabric as fb
from workbench.training import COMPONENTS, GPUS, MODELS, Plan, PlanError, check_plan, iteration_table, iteration_time
from workbench.training.iteration import stage_loads
from workbench.training.specs import efficiency
from workbench.training.validation import validation_table

GPT = MODELS["gpt3-175b"]


def test_components_sum_and_bubble_fraction():
    plans = [Plan(8, pp, 16, 512, recompute="full") for pp in (2, 4, 8)]
    t = iteration_table(GPT, plans, GPUS["A100"])
    np.testing.assert_allclose(t[list(COMPONENTS)].sum(axis=1), t.iteration_s, rtol=1e-12)
    m, p = t.micro_batches.to_numpy(), t.pp.to_numpy()
    # the last rank (layers + output layer) runs m micro-batches; the other ranks' (p - 1) fill and drain
    loads = [stage_loads(GPT, int(q)) for q in p]
    worst, rest = np.array([x[-1] for x in loads]), np.array([x[:-1].mean() for x in loads])
    assert (worst > 1).all() and np.allclose([x[:-1].std() for x in loads], 0)
    per_mb = (t.tp_comm_s + t.pp_p2p_s).to_numpy() / m
    np.testing.assert_allclose(t.bubble_s, (p - 1) * (t.compute_s / m * rest / worst + per_mb), rtol=1e-12)
    # with even ranks (no output layer) this is the textbook fraction (p - 1) / (m + p - 1)
    even = (p - 1) * (t.compute_s / m / worst + per_mb)
    np.testing.assert_allclose(even / (even + m * (t.compute_s / m / worst + per_mb)), (p - 1) / (m + p - 1))


def test_pure_compute_by_hand():
    # one GPU, no parallelism: iteration = tokens * flops/token / (peak * efficiency) + optimizer step
    m = MODELS["gpt-1.7b"]
    g = GPUS["H100"]
    t = iteration_table(m, [Plan(1, 1, 1, 4)], g).iloc[0]
    compute = 4 * m.seq_len * m.flops_per_token / (g.bf16_tflops * 1e12 * efficiency(g))
    assert t.compute_s == pytest.approx(compute, rel=1e-12)
    assert t.tp_comm_s == t.pp_p2p_s == t.bubble_s == t.dp_comm_s == 0.0
    assert t.mfu == pytest.approx(efficiency(g) * compute / t.iteration_s, rel=1e-12)


def test_measured_compute_by_hand():
    """compute="measured" on one A100, GPT 1.7B (24 layers, h 2304, FFN 9216, s 2048), micro-batch 1, no
    recomputation, every number written out: the ampere curve rows of datasets/serving_specs/operator_curves.csv
    (GEMM 0.714029 at 1877.73 tokens, 0.715664 at 2236.79, interpolated in log tokens at 2048; element-wise
    c0 = 1.12821e-05 s, 13.2052 passes over tokens x hidden, 7.69914 over tokens x FFN / tp, 2 bytes each, at
    2.039 TB/s), FlashAttention-2's 0.50 of 312 TFLOP/s for attention; backward 2x GEMMs and attention, 1.5x the
    element-wise kernels."""
    m = MODELS["gpt-1.7b"]
    g = GPUS["A100"]
    t = iteration_table(m, [Plan(1, 1, 1, 4)], g, compute="measured").iloc[0]
    tokens = 2048.0
    frac = (np.log(2048) - np.log(1877.73)) / (np.log(2236.79) - np.log(1877.73))
    eff = 0.714029 + frac * (0.715664 - 0.714029)
    gemm = 2 * m.params * tokens / (312e12 * eff)
    attention = 4 * 24 * 2304 * 2048 * tokens / (312e12 * 0.50)
    elementwise = 24 * (1.12821e-05 + (13.2052 * tokens * 2304 + 7.69914 * tokens * 9216) * 2 / 2.039e12)
    per_micro_batch = 3 * (gemm + attention) + 2.5 * elementwise
    assert t.compute_s == pytest.approx(4 * per_micro_batch, rel=1e-5)  # the CSV holds 6 significant digits
    assert t.compute_fwd_s == pytest.approx(gemm + attention + elementwise, rel=1e-5)
    # 1.652e9 parameters: 6.77e12 GEMM FLOPs at 71.5% of 312 TFLOP/s = 30.3 ms; 9.28e11 attention FLOPs at 50% =
    # 5.95 ms; per layer 11.3 us + 415 MB / 2.039 TB/s = 215 us, x 24 = 5.16 ms element-wise
    assert (gemm, attention, elementwise) == pytest.approx((0.0303, 0.00595, 0.00516), rel=0.01)
    # the constant form is the old formula, still reachable; full recomputation adds one forward of everything
    assert iteration_table(m, [Plan(1, 1, 1, 4)], g, compute="constant").compute_s.iloc[0] == pytest.approx(
        4 * 3 * tokens * m.flops_per_token / 3 / (312e12 * efficiency(g)), rel=1e-12
    )
    full = iteration_table(m, [Plan(1, 1, 1, 4, recompute="full")], g, compute="measured").iloc[0]
    assert full.compute_s - t.compute_s == pytest.approx(4 * t.compute_fwd_s, rel=1e-9)


def test_measured_compute_falls_back_without_curves_and_names_bad_forms():
    m = MODELS["gpt3-175b"]
    plan = Plan(8, 8, 16, 1536, recompute="full")
    for gpu in ("B200", "H200"):
        kw = {"compute": "measured"} if gpu == "B200" else {}
        a = iteration_table(m, [plan], GPUS[gpu], **kw).compute_s.iloc[0]
        b = iteration_table(m, [plan], GPUS[gpu], compute="constant").compute_s.iloc[0]
        assert a == b if gpu == "B200" else a == pytest.approx(b)
    with pytest.raises(ValueError, match="compute"):
        iteration_table(m, [plan], GPUS["A100"], compute="fitted")


def test_dp_on_fabric_matches_nic_bound_when_ideal_and_ecmp_is_slower():
    topo = fb.leaf_spine(8, 8, 16, host_gbps=200)
    plan = Plan(8, 2, 8, 256, recompute="full")
    ideal = iteration_table(GPT, [plan], GPUS["A100"], latency_s=0.0).iloc[0]
    spray = iteration_table(GPT, [plan], GPUS["A100"], topo, "spray", latency_s=0.0).iloc[0]
    assert spray.dp_comm_s == pytest.approx(ideal.dp_comm_s, rel=1e-9)
    ecmp = [
        iteration_table(GPT, [plan], GPUS["A100"], topo, "ecmp", seed=s, placement="linear").iloc[0].dp_comm_s
        for s in range(5)
    ]
    planned = iteration_table(GPT, [plan], GPUS["A100"], topo, "planned", placement="linear").iloc[0].dp_comm_s
    assert min(ecmp) >= planned - 1e-12 and max(ecmp) > 1.2 * planned


def test_moe_all_to_all_goes_on_the_fabric_beyond_a_node():
    moe = MODELS["moe-8x22b"]
    topo = fb.leaf_spine(4, 4, 16)
    t = iteration_table(moe, [Plan(2, 1, 32, 256, ep=4), Plan(2, 1, 32, 256, ep=8)], GPUS["H100"], topo, "ecmp")
    assert (t.moe_a2a_s > 0).all() and t.moe_a2a_s.iloc[1] > t.moe_a2a_s.iloc[0]


def test_validation_errors_are_reported_not_fitted():
    t = validation_table()
    assert set(t.source.str.split().str[0]) == {"Megatron-LM", "Llama", "MegaScale", "Lumos"}
    lumos = t.source.str.startswith("Lumos")
    assert t.error[~lumos].abs().max() < 0.35
    # Lumos's deep pipelines are far slower than the model (exposed communication and idle time it does not have)
    assert t.error[lumos & (t.pp >= 8)].min() > 0.25


def test_stated_schedules_close_the_at_scale_rows():
    """Llama 3's stated schedule (V = 8, balanced ends, asynchronous p2p) and MegaScale's stated plan and overlaps
    bring the at-scale rows closer, and Llama 3's drop from 8k to 16k GPUs is the paper's within a point (the
    bubble was what grew at scale: Llama 3 Sec. 3.3.2 attributes the drop to the smaller batch per DP group)."""
    t = validation_table()
    llama = t[t.source.str.startswith("Llama")].set_index("gpus")
    drop = llama.model_value[16384] / llama.model_value[8192] - 1
    assert drop == pytest.approx(0.41 / 0.43 - 1, abs=0.01)
    assert (t.error[t.source.str.startswith("Llama")] > -0.15).all()
    # MegaScale Table 2 at its stated plan (v = 6, vocabulary 64,000): the Megatron-LM baseline within 11% at every
    # scale; MegaScale itself under-predicted (its parallel block, sliding-window attention and operators are not
    # modelled), least at 12,288 GPUs (-26% there before, as an MFU row with an assumed non-interleaved plan)
    ms = t[t.source.str.startswith("MegaScale")]
    baseline = ms.source.str.contains("Megatron-LM")
    assert ms.error[baseline].abs().max() < 0.11
    assert (ms.error[~baseline] < 0).all() and ms.error[~baseline & (ms.gpus == 12288)].iloc[0] > -0.1


def test_schedule_options_take_their_terms_off_the_critical_path():
    base = Plan(8, 8, 16, 512, virtual_stages=2)
    plans = [base, *(replace(base, **{k: True}) for k in ("overlap_tp", "overlap_p2p", "overlap_dp"))]
    t = iteration_table(GPT, plans, GPUS["A100"])
    assert t.tp_comm_s[0] > 0 and t.tp_comm_s[1] == 0.0 and t.pp_p2p_s[0] > 0 and t.pp_p2p_s[2] == 0.0
    # MegaScale Sec. 3.2: every chunk's all-gather and reduce-scatter hidden but the last reduce-scatter, 1 / (2 v)
    assert t.dp_exposed_s[3] == pytest.approx(t.dp_comm_s[3] / 4, rel=1e-12) and t.dp_comm_s[3] == t.dp_comm_s[0]
    assert (t.iteration_s[1:] <= t.iteration_s[0]).all()


def test_output_layer_on_the_last_rank_and_balanced_ends():
    """GPT-3 15B at PP 16: 3 layers a rank and the output layer (6 V h = 1.9 GFLOP per token, a layer ~2 GFLOP) on
    the last; Llama 3's balanced ends give 128 slots for PP 16 x V 8, which plain 126 layers do not allow."""
    m15 = MODELS["gpt3-15b"]
    loads = stage_loads(m15, 16)
    head, layer = 6 * m15.vocab * m15.hidden, (m15.flops_per_token - 6 * m15.vocab * m15.hidden) / m15.layers
    assert loads[-1] / loads[0] == pytest.approx((3 * layer + head) / (3 * layer), rel=1e-12)
    assert stage_loads(m15, 1) == pytest.approx([1.0])
    llama = MODELS["llama3-405b"]
    check_plan(llama, Plan(8, 16, 64, 2048, virtual_stages=8, balanced_ends=True), GPUS["B200"])
    with pytest.raises(PlanError, match=r"pp\*virtual_stages = 128 exceeds the model's 126 layers \(by 2\)"):
        check_plan(llama, Plan(8, 16, 64, 2048, virtual_stages=8), GPUS["B200"])
    with pytest.raises(TypeError, match="overlap_tp must be a bool"):
        Plan(1, 1, 1, 1, overlap_tp="yes")


def test_measured_compute_on_the_validation_rows():
    """The measured form moves every row (nothing fitted): the SC'21 rows' errors still fall with hidden size, but
    less steeply than with one constant (the element-wise share falls with h), and sit above the published ones (the
    measured GEMM asymptote, 2023-24 kernels, is above SC'21's); the 2024 rows move up."""
    old, new = validation_table(), validation_table(compute="measured")
    meg = new.source.str.startswith("Megatron")
    slope = lambda t: float(t[meg].error.iloc[0] - t[meg].error.iloc[-1])  # noqa: E731
    assert 0 < slope(new) < slope(old)
    assert (new.error[meg] > 0).all() and (new.error[~meg] > old.error[~meg]).all()


@pytest.mark.parametrize(
    "plan, match",
    [
        (Plan(8, 8, 8, 512), "tp\\*pp\\*dp = 8\\*8\\*8 = 512 GPUs but the job has 1024 \\(off by -512\\)"),
        (Plan(8, 128, 1, 512), "pp=128 exceeds the model's 96 layers \\(by 32\\)"),
        (Plan(16, 1, 64, 512), "tp=16 exceeds the NVLink domain of 8 GPUs"),
        (
            Plan(8, 1, 128, 512),
            "does not fit in A100-80GB memory: .* GiB per GPU needed, 74.5 GiB available \\(over by",
        ),
    ],
)
def test_impossible_plans_say_what_and_by_how_much(plan, match):
    with pytest.raises(PlanError, match=match):
        check_plan(GPT, plan, GPUS["A100"], n_gpus=1024 if plan.gpus == 512 else None)


def test_bad_batch_and_fabric_too_small():
    with pytest.raises(PlanError, match="not a multiple of dp x micro_batch = 48 \\(remainder 16"):
        Plan(1, 1, 48, 64)
    with pytest.raises(PlanError, match="short by 448"):
        iteration_time(GPT, Plan(8, 8, 8, 512, recompute="full"), GPUS["A100"], fb.leaf_spine(4, 4, 16), "ecmp")


def test_fat_tree_and_failed_links_are_fabrics_too():
    plan = Plan(8, 1, 16, 128)
    ft = fb.fat_tree(8, host_gbps=400)
    t = {
        r: iteration_table(MODELS["gpt-18b"], [plan], GPUS["H100"], ft, r, seed=0).dp_comm_s.iloc[0]
        for r in ("ecmp", "spray")
    }
    assert t["ecmp"] > t["spray"] > 0
    dead = [(leaf, spine) for leaf in range(8) for spine in range(12)]  # 4 live uplinks for 8 crossing flows
    ok, cut = fb.leaf_spine(8, 16, 16, host_gbps=400), fb.leaf_spine(8, 16, 16, host_gbps=400, failed_links=dead)
    spray = [
        iteration_table(MODELS["gpt-18b"], [plan], GPUS["H100"], topo, "spray", latency_s=0.0).dp_comm_s.iloc[0]
        for topo in (ok, cut)
    ]
    assert spray[1] == pytest.approx(2 * spray[0], rel=1e-9)


def test_measured_compute_moe_experts_see_their_routed_tokens():
    """An MoE's expert GEMMs run at the measured efficiency of the tokens routed to each expert (active_experts x ep /
    experts of the micro-batch's), its dense part at the micro-batch's tokens; more EP ranks feed each expert more tokens."""
    from workbench.serving.opcurves import curves
    from workbench.training.iteration import compute_parts

    moe, g = MODELS["moe-8x22b"], GPUS["H100"]
    c = curves("hopper")
    p = compute_parts(moe, g, 1, 1, 1, False, "measured", ep=2)
    tokens = 4096.0
    expert = moe.active_params - moe.shared_params
    gemm = (2 * (moe.active_params - expert) * tokens / c.gemm_efficiency(tokens)
            + 2 * expert * tokens / c.gemm_efficiency(tokens * 2 * 2 / 8)) / (989e12)  # fmt: skip
    assert float(p["gemm_fwd_s"]) == pytest.approx(float(gemm), rel=1e-12)
    assert compute_parts(moe, g, 1, 1, 1, False, "measured", ep=8)["gemm_fwd_s"] < p["gemm_fwd_s"]
