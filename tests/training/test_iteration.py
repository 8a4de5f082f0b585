"""Iteration-time model: breakdown arithmetic, hand-computed cases, fabric routing and named errors."""

from dataclasses import replace

import numpy as np
import pytest

from workbench import fabric as fb
from workbench.training import (
    COMPONENTS,
    GPUS,
    MODELS,
    Plan,
    PlanError,
    check_plan,
    iteration_table,
    iteration_time,
    kernels,
)
from workbench.training.iteration import CALIBRATION, Calibration, iteration_parts, stage_loads
from workbench.training.specs import efficiency

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
    # one GPU, no parallelism, the constant form: iteration = tokens * flops/token / (peak * efficiency) + optimizer
    m = MODELS["gpt-1.7b"]
    g = GPUS["H100"]
    t = iteration_table(m, [Plan(1, 1, 1, 4)], g, compute="constant").iloc[0]
    compute = 4 * m.seq_len * m.flops_per_token / (g.bf16_tflops * 1e12 * efficiency(g))
    assert t.compute_s == pytest.approx(compute, rel=1e-12)
    assert t.tp_comm_s == t.pp_p2p_s == t.bubble_s == t.dp_comm_s == 0.0
    assert t.mfu == pytest.approx(efficiency(g) * compute / t.iteration_s, rel=1e-12)


def test_measured_compute_by_hand():
    """The default compute on one A100, GPT 1.7B (24 layers, h 2304, FFN 9216, s 2048, vocabulary 51,200),
    micro-batch 1, no recomputation, 2024 kernels, every term written out: each GEMM at the measured efficiency of its
    FLOPs (the ampere rows of kernel_curves.csv), FlashAttention-2's 0.50 of 312 TFLOP/s on causal FLOPs (half of
    4 s^2 d per head), the measured element-wise kernels (operator_curves.csv: c0 = 1.12821e-05 s, 13.2052 passes
    over tokens x hidden, 7.69914 over tokens x FFN, 2 bytes each, at 2.039 TB/s); backward twice the GEMMs and the
    attention, 1.5x the element-wise kernels; then over the A100's sustained fraction."""
    m, g = MODELS["gpt-1.7b"], GPUS["A100"]
    eff = lambda w: float(kernels.gemm_efficiency("ampere", w))  # noqa: E731
    gemm = lambda a, b, c: 2 * a * b * c / (312e12 * eff(2 * a * b * c))  # noqa: E731
    t = 2048.0
    layer = gemm(t, 2304, 3 * 2304) + gemm(t, 2304, 2304) + gemm(t, 2304, 9216) + gemm(t, 9216, 2304)
    head = gemm(t, 2304, 51200)
    gemm_fwd = 24 * layer + head
    attention = 24 * (2 * 2048 * 2048 * 96 * 24) / (312e12 * 0.50)
    elementwise = 24 * (1.12821e-05 + (13.2052 * t * 2304 + 7.69914 * t * 9216) * 2 / 2.039e12)
    p = kernels.compute_parts(m, g, 1, 1, 1, False, "2024")
    assert float(p["gemm_fwd_s"]) == pytest.approx(gemm_fwd, rel=1e-9)
    assert float(p["attention_fwd_s"]) == pytest.approx(attention, rel=1e-9)
    assert float(p["elementwise_fwd_s"]) == pytest.approx(elementwise, rel=1e-5)  # the CSV's 6 digits
    per_mb = 3 * gemm_fwd + 3 * attention + 2.5 * elementwise
    assert float(p["total_s"]) == pytest.approx(per_mb, rel=1e-5)
    row = iteration_table(m, [Plan(1, 1, 1, 4)], g).iloc[0]
    assert row.compute_s == pytest.approx(4 * per_mb / CALIBRATION.sustained_ampere, rel=1e-5)
    # the projections of GPT 1.7B at 2,048 tokens reach ~0.65-0.69 of A100 peak (19-87 GFLOP per call)
    assert 0.6 < eff(2 * t * 2304 * 2304) < eff(2 * t * 2304 * 9216) < 0.72
    # full recomputation adds one forward of the layers (not of the output layer)
    full = kernels.compute_parts(m, g, 1, 1, 1, True, "2024")
    assert float(full["total_s"] - p["total_s"]) == pytest.approx(gemm_fwd - head + attention + elementwise, rel=1e-9)


def test_the_2021_era_runs_unfused_attention_by_hand():
    """era="2021" on GPT 1.7B (24 heads of 96, s 2048), one A100, micro-batch 1, full recomputation: the QK^T and
    PV products as batched GEMMs over all s x s pairs at the measured efficiency of the batched call, and 13 + 19 + 13
    bytes per score element (forward, backward, recompute forward) of 24 heads x 2048^2 per layer at 2.039 TB/s."""
    m, g = MODELS["gpt-1.7b"], GPUS["A100"]
    u = kernels.compute_parts(m, g, 1, 1, 1, True, "2021")
    w = 2 * 2048 * 96 * 2048 * 24.0
    core = 2 * w / (312e12 * float(kernels.gemm_efficiency("ampere", w)))
    scores = 24 * 2048**2 / 2.039e12
    fwd, bwd = kernels.UNFUSED_ATTENTION_BYTES
    assert (fwd, bwd) == (13.0, 19.0)
    assert float(u["attention_fwd_s"]) == pytest.approx(24 * (core + 13 * scores), rel=1e-9)
    modern = kernels.compute_parts(m, g, 1, 1, 1, True, "2024")
    assert float(u["gemm_fwd_s"]) == pytest.approx(float(modern["gemm_fwd_s"]), rel=1e-12)
    # 24 layers x 24 heads x 2048^2 x 45 bytes = 109 GB through HBM: 53 ms per micro-batch, a fifth of the total
    assert 24 * 45 * scores == pytest.approx(0.0533, rel=0.01)
    assert 0.15 < 24 * 45 * scores / float(u["total_s"]) < 0.3
    with pytest.raises(ValueError, match="era"):
        kernels.compute_parts(m, g, 1, 1, 1, True, "2023")


def test_measured_compute_falls_back_without_curves_and_names_bad_forms():
    m = MODELS["gpt3-175b"]
    plan = Plan(8, 8, 16, 1536, recompute="full")
    a = iteration_table(m, [plan], GPUS["B200"]).compute_s.iloc[0]  # blackwell: no measured kernels
    b = iteration_table(m, [plan], GPUS["B200"], compute="constant").compute_s.iloc[0]
    assert a == pytest.approx(b, rel=1e-12)
    h200 = iteration_table(m, [plan], GPUS["H200"]).compute_s.iloc[0]  # hopper: the H100's measured kernels
    h100 = iteration_table(m, [plan], GPUS["H100"]).compute_s.iloc[0]
    assert h200 == pytest.approx(h100, rel=0.02)
    with pytest.raises(ValueError, match="compute"):
        iteration_table(m, [plan], GPUS["A100"], compute="unfused")
    with pytest.raises(ValueError, match="era"):
        iteration_table(m, [plan], GPUS["A100"], era="2022")


def test_calibration_divides_the_kernels_only():
    """The sustained fraction scales the kernels' time and nothing else; the constant form ignores it."""
    m, plan = MODELS["gpt3-175b"], Plan(8, 8, 16, 512)
    a = iteration_table(m, [plan], GPUS["H100"], calibration=Calibration(sustained_hopper=1.0)).iloc[0]
    b = iteration_table(m, [plan], GPUS["H100"], calibration=Calibration(sustained_hopper=0.5)).iloc[0]
    assert b.compute_s == pytest.approx(2 * a.compute_s, rel=1e-12)
    assert (b.tp_comm_s, b.pp_p2p_s, b.dp_comm_s) == (a.tp_comm_s, a.pp_p2p_s, a.dp_comm_s)
    c = [iteration_table(m, [plan], GPUS["H100"], compute="constant", calibration=Calibration(sustained_hopper=f))
         for f in (0.5, 1.0)]  # fmt: skip
    assert c[0].iteration_s.iloc[0] == c[1].iteration_s.iloc[0]
    with pytest.raises(ValueError, match="sustained_hopper"):
        Calibration(sustained_hopper=0.0)


def test_send_recv_is_the_measured_curve_capped_by_the_nic():
    """NCCL send/recv across two DGX nodes (Vidur's profiles): A100 ~15.5 GB/s for large messages (62% of its
    200 Gb/s NIC) with a 24 us floor; H100 ~72 GB/s measured alone, capped at its 400 Gb/s NIC when every GPU sends."""
    a100 = kernels.send_recv_s("ampere", np.array([4096.0, 134_217_728.0]), 25e9)
    assert a100[0] == pytest.approx(24e-6, rel=0.01)
    assert 134_217_728 / a100[1] / 1e9 == pytest.approx(15.6, rel=0.02)
    h100 = float(kernels.send_recv_s("hopper", 134_217_728.0, 50e9))
    assert h100 == pytest.approx(17e-6 + 134_217_728 / 50e9, rel=0.01)
    within = float(kernels.send_recv_s("ampere", 134_217_728.0, 25e9, inter_node=False))
    assert within < a100[1] / 10  # NVLink


def test_blocking_exchanges_and_the_deepspeed_engine():
    """Megatron-LM: two blocking exchanges per micro-batch and chunk, each the measured send/recv of the 2 b s h / tp
    activation; DeepSpeed's engine four, and its DP gradients reduced only after the pipeline drains."""
    m, g = MODELS["gpt3-175b"], GPUS["A100"]
    base = Plan(8, 8, 16, 512, virtual_stages=2)
    t = iteration_table(m, [base, replace(base, pipeline="deepspeed"), replace(base, overlap_p2p=True)], g)
    x = float(kernels.send_recv_s("ampere", 2 * 2048 * 12288 / 8, 25e9))
    assert t.pp_p2p_s[0] == pytest.approx(t.micro_batches[0] * 2 * 2 * x, rel=1e-12)
    assert t.pp_p2p_s[1] == pytest.approx(2 * t.pp_p2p_s[0], rel=1e-12) and t.pp_p2p_s[2] == 0.0
    assert t.dp_exposed_s[1] - t.embedding_sync_s[1] == pytest.approx(t.dp_comm_s[1], rel=1e-12)
    assert t.dp_exposed_s[1] > t.dp_exposed_s[0]
    with pytest.raises(ValueError, match="pipeline"):
        Plan(1, 1, 1, 1, pipeline="gpipe")


def test_dp_rings_use_every_nic_of_the_node():
    """With TP 1 a DP group has 8 ranks on every node and NCCL's rings use the node's 8 NICs; with TP 8 each group
    has one rank per node and one NIC. TP 1 holds 8x the gradients per GPU, so both take about as long (not 8x)."""
    m, g = MODELS["gpt-1.7b"], GPUS["A100"]
    dp_s = {}
    for tp in (1, 8):
        cols = {k: np.array([v]) for k, v in Plan(tp, 1, 64, 64).as_dict().items()}
        dp_s[tp] = iteration_parts(m, cols, g)["dp_comm_s"][0]
    assert dp_s[1] / dp_s[8] == pytest.approx(1.0, rel=0.1)


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


def test_schedule_options_take_their_terms_off_the_critical_path():
    base = Plan(8, 8, 16, 512, virtual_stages=2)
    plans = [base, *(replace(base, **{k: True}) for k in ("overlap_tp", "overlap_p2p", "overlap_dp"))]
    t = iteration_table(GPT, plans, GPUS["A100"])
    assert t.tp_comm_s[0] > 0 and t.tp_comm_s[1] == 0.0 and t.pp_p2p_s[0] > 0 and t.pp_p2p_s[2] == 0.0
    # MegaScale Sec. 3.2: every chunk's all-gather and reduce-scatter hidden but the last reduce-scatter, 1 / (2 v)
    cols = {k: np.array([v]) for k, v in plans[3].as_dict().items()}
    emb = iteration_parts(GPT, cols, GPUS["A100"])["embedding_sync_s"][0]  # GPT's tied embeddings: never hidden
    assert emb > 0 and t.dp_exposed_s[3] - emb == pytest.approx(t.dp_comm_s[3] / 4, rel=1e-12)
    assert t.dp_comm_s[3] == t.dp_comm_s[0]
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
    experts of the micro-batch's), one call per local expert, its dense part at the micro-batch's tokens."""
    moe, g = MODELS["moe-8x22b"], GPUS["H100"]
    eff = lambda w: float(kernels.gemm_efficiency("hopper", w))  # noqa: E731
    gemm = lambda a, b, c, n=1: n * 2 * a * b * c / (989e12 * eff(2 * a * b * c))  # noqa: E731
    p = kernels.compute_parts(moe, g, 1, 1, 1, False, "2024", ep=2)
    t, h, f = 4096.0, 6144, 16_384
    routed = t * 2 * 2 / 8  # top-2 of 8 experts, the tokens of the 2 EP ranks: 2,048 tokens per expert
    attn = gemm(t, h, (48 + 16) * 128) + gemm(t, 48 * 128, h)
    ffn = gemm(routed, h, 2 * f, 4) + gemm(routed, f, h, 4)  # gated: gate and up fused; 4 local experts
    assert kernels.layout(moe) == (3, False)
    assert float(p["gemm_fwd_s"]) == pytest.approx(56 * (attn + ffn) + gemm(t, h, 32_000), rel=1e-9)
    # at EP 8 the one local expert sees all 8,192 routed tokens in one call
    p8 = kernels.compute_parts(moe, g, 1, 1, 1, False, "2024", ep=8)
    ffn8 = gemm(4 * routed, h, 2 * f) + gemm(4 * routed, f, h)
    assert float(p8["gemm_fwd_s"]) == pytest.approx(56 * (attn + ffn8) + gemm(t, h, 32_000), rel=1e-9)
