"""The execution graph: equals the formula's sum when everything is serialised, list-schedules hand-built graphs as
computed by hand, over-states overlap without cross-stream dependencies (dPRO), and names bad input."""

from dataclasses import replace

import numpy as np
import pytest

from workbench.training import GPUS, MODELS, Plan, PlanError
from workbench.training import _graph_kernels as gk
from workbench.training.exec_graph import (
    EDGE_KINDS,
    ExecGraph,
    GraphCycleError,
    add_dependencies,
    build_graph,
    simulate,
    what_if,
)

H100 = GPUS["H100"]
GPT175 = MODELS["gpt3-175b"]


@pytest.mark.parametrize("compute", ["constant", "measured"])
@pytest.mark.parametrize(
    "model, plan",
    [
        ("gpt-1.7b", Plan(1, 1, 4, 16)),
        ("gpt-18b", Plan(8, 1, 4, 32, recompute="full")),
        ("gpt-39b", Plan(8, 1, 16, 64, recompute="full")),
    ],
)
def test_serialised_graph_equals_formula_sum(model, plan, compute):
    """Every kernel on one stream, DP after the backward, no launch cost: the graph is the formula with no DP
    overlap, to float precision (single-stage pipelines, where the formula's per-stage transfers are exact), with
    either compute form (the graph splits the micro-batch's compute at the formula's forward pass)."""
    g = build_graph(MODELS[model], plan, GPUS["A100"], mode="serial", launch_s=0.0, dp_overlap=0.0, compute=compute)
    r = simulate(g)
    assert r.iteration_s == pytest.approx(g.formula["iteration_s"], rel=1e-9)
    assert r.breakdown["overlapped_s"] == 0.0


def test_serialised_two_stage_pipeline_pays_one_transfer_per_stage():
    """With 2 stages each stage sends only one way (forward from stage 0, backward from stage 1), where the formula
    charges both directions on every stage: the graph is shorter by exactly (m + p - 1) transfers."""
    plan = Plan(1, 2, 4, 16)
    g = build_graph(MODELS["gpt-1.7b"], plan, GPUS["A100"], mode="serial", launch_s=0.0, dp_overlap=0.0)
    f = g.formula
    transfer = f["pp_p2p_s"] / f["micro_batches"] / 2
    expected = f["iteration_s"] - (f["micro_batches"] + plan.pp - 1) * transfer
    assert simulate(g).iteration_s == pytest.approx(expected, rel=1e-9)


def _tiny(dur, kind, res, src, dst, ekind):
    g = build_graph(MODELS["gpt-1.7b"], Plan(1, 1, 1, 1), GPUS["A100"])
    n = len(dur)
    z = np.zeros(n, np.int32)
    return replace(
        g,
        dur=np.asarray(dur, float),
        kind=np.asarray(kind, np.int8),
        res=np.asarray(res, np.int32),
        stage=z,
        mb=z,
        layer=z,
        src=np.asarray(src, np.int64),
        dst=np.asarray(dst, np.int64),
        ekind=np.asarray(ekind, np.int8),
    )


def test_hand_built_graph_schedule_breakdown_and_critical_path():
    """A (compute, 1 s) and B (TP comm, 2 s) start together; C (compute, 1 s) needs both: C starts at 2, ends at 3.
    Compute runs alone 2-3 s, with comm 0-1 s; comm alone 1-2 s. Critical path B -> C."""
    g = _tiny([1.0, 2.0, 1.0], [gk.COMPUTE, gk.TP_COMM, gk.COMPUTE], [1, 2, 1], [0, 1], [2, 2], [2, 3])
    r = simulate(g)
    assert r.iteration_s == pytest.approx(3.0)
    assert r.start.tolist() == [0.0, 0.0, 2.0]
    assert r.critical.tolist() == [1, 2]
    bd = r.breakdown
    assert (bd["exposed_compute_s"], bd["overlapped_s"], bd["exposed_comm_s"], bd["other_s"]) == pytest.approx(
        (1.0, 1.0, 1.0, 0.0)
    )


def test_hand_built_launch_then_sync_chain():
    """CPU launch (0.5 s) -> kernel (2 s) -> CPU sync (0 s) -> launch (0.5 s) -> kernel (1 s): 4 s, 0.5 s of
    'other' (the exposed launch after the sync) plus the first launch."""
    kinds = [gk.CPU_LAUNCH, gk.COMPUTE, gk.CPU_SYNC, gk.CPU_LAUNCH, gk.COMPUTE]
    g = _tiny(
        [0.5, 2.0, 0.0, 0.5, 1.0], kinds, [0, 1, 0, 0, 1], [0, 1, 0, 2, 3, 1], [1, 2, 2, 3, 4, 4], [0, 1, 2, 2, 0, 2]
    )
    r = simulate(g)
    assert r.iteration_s == pytest.approx(4.0)
    assert r.breakdown["other_s"] == pytest.approx(1.0)
    assert r.critical.tolist() == [0, 1, 2, 3, 4]


def test_graph_has_four_edge_kinds_and_pipeline_size_is_independent_of_dp():
    g1 = build_graph(GPT175, Plan(8, 8, 8, 512, recompute="full"), H100)
    counts = g1.edge_counts()
    assert set(counts) == set(EDGE_KINDS) and all(v > 0 for v in counts.values())
    g2 = build_graph(GPT175, Plan(8, 8, 256, 16384, recompute="full"), H100)  # 16,384 GPUs, same micro-batches
    assert g2.n_nodes == g1.n_nodes
    assert simulate(g2).iteration_s > simulate(g1).iteration_s  # a longer DP ring on the same NIC


def test_lumos_graph_is_close_to_formula_and_dpro_understates_time():
    """On GPT-3 175B (TP 8, PP 8, DP 8, 512 H100): the full graph is within 2% of the formula; dropping the
    comm -> compute cross-stream waits (dPRO) over-states overlap and under-states the iteration time."""
    plan = Plan(8, 8, 8, 512, recompute="full")
    full = simulate(build_graph(GPT175, plan, H100))
    dpro = simulate(build_graph(GPT175, plan, H100, mode="dpro"))
    formula = build_graph(GPT175, plan, H100).formula["iteration_s"]
    assert abs(full.iteration_s / formula - 1) < 0.02
    assert dpro.breakdown["overlapped_s"] > 5 * full.breakdown["overlapped_s"]
    assert 0.1 < 1 - dpro.iteration_s / full.iteration_s < 0.3


def test_what_if_dp_changes_only_dp_kernels_and_the_sharded_optimizer():
    g = build_graph(GPT175, Plan(8, 8, 8, 512, recompute="full"), H100)
    g2 = what_if(g, dp=16, global_batch=1024)  # same micro-batches per pipeline
    assert g2.n_nodes == g.n_nodes
    same = (g.kind != gk.DP_COMM) & (g.kind != gk.OPTIMIZER)  # distributed optimizer: sharded over DP
    np.testing.assert_allclose(g2.dur[same], g.dur[same])
    assert (g2.dur[g.kind == gk.DP_COMM] > g.dur[g.kind == gk.DP_COMM]).all()
    emb = g.formula["embedding_sync_s"]  # the tied embeddings' all-reduce before the step: not sharded
    np.testing.assert_allclose(g2.dur[g.kind == gk.OPTIMIZER] - emb, (g.dur[g.kind == gk.OPTIMIZER] - emb) / 2)
    g3 = what_if(g, layers=48)
    assert simulate(g3).iteration_s < simulate(g).iteration_s
    with pytest.raises(ValueError, match="unknown edit"):
        what_if(g, heads=3)


def test_bad_input_named():
    g = build_graph(MODELS["gpt-1.7b"], Plan(1, 2, 4, 16), GPUS["A100"])
    with pytest.raises(GraphCycleError, match=r"cycle: .* nodes can never start"):
        simulate(add_dependencies(g, [g.n_nodes - 1], [0]))
    with pytest.raises(PlanError, match=r"does not fit in H100-SXM memory.*over by"):
        build_graph(GPT175, Plan(8, 1, 8, 64), H100)
    with pytest.raises(PlanError, match="off by"):
        build_graph(GPT175, Plan(8, 8, 8, 512, recompute="full"), H100, n_gpus=500)
    with pytest.raises(PlanError, match="virtual_stages"):
        build_graph(GPT175, Plan(8, 8, 8, 512, virtual_stages=2, recompute="full"), H100)
    with pytest.raises(ValueError, match="mode"):
        build_graph(GPT175, Plan(8, 8, 8, 512, recompute="full"), H100, mode="x")
    assert isinstance(g, ExecGraph)


@pytest.mark.parametrize("plan", [Plan(1, 4, 1, 2), Plan(1, 4, 1, 16)])
def test_device_sync_after_each_exchange_serialises_pipeline_transfers(plan):
    """Megatron-LM synchronises the device after each pipeline exchange, so without TP or DP nothing can overlap:
    the stream-separated graph equals the serial one (also with fewer micro-batches than stages)."""
    kw = {"launch_s": 0.0}
    lumos = simulate(build_graph(MODELS["gpt-1.7b"], plan, GPUS["A100"], **kw))
    serial = simulate(build_graph(MODELS["gpt-1.7b"], plan, GPUS["A100"], mode="serial", **kw))
    assert lumos.iteration_s == pytest.approx(serial.iteration_s, rel=1e-12)
    assert lumos.breakdown["overlapped_s"] == pytest.approx(0.0, abs=1e-12)


def test_a_graph_too_large_to_hold_is_refused_before_allocating_and_the_dse_ranks_around_it(monkeypatch):
    import workbench.training.exec_graph as eg
    from workbench.training.dse import explore
    from workbench.training.exec_graph import MAX_GRAPH_ROWS, _plan_graph_rows

    # 125,000 micro-batches on 8 stages: 1.2e8 node rows (~17 GB with the edges), refused by name
    with pytest.raises(PlanError, match=r"8 stages x 125,000 micro-batches .* lower global_batch"):
        build_graph(GPT175, Plan(8, 8, 8, 1_000_000, recompute="full"), H100)
    # the size the guard checks is what the graph allocates, at least its nodes; the limit is exact
    for model, plan in (("gpt-1.7b", Plan(1, 2, 4, 16)), ("gpt3-175b", Plan(8, 8, 8, 512, recompute="full"))):
        monkeypatch.setattr(eg, "MAX_GRAPH_ROWS", MAX_GRAPH_ROWS)
        m, g = MODELS[model], build_graph(MODELS[model], plan, H100)
        rows = int(
            _plan_graph_rows(m.layers, plan.pp, g.formula["micro_batches"], plan.tp > 1, plan.recompute == "full")
        )
        assert rows >= g.n_nodes
        monkeypatch.setattr(eg, "MAX_GRAPH_ROWS", rows)
        build_graph(m, plan, H100)
        monkeypatch.setattr(eg, "MAX_GRAPH_ROWS", rows - 1)
        with pytest.raises(PlanError, match="node rows"):
            build_graph(m, plan, H100)
    monkeypatch.setattr(eg, "MAX_GRAPH_ROWS", MAX_GRAPH_ROWS)
    # a million sequences on 512 GPUs: the deepest plans' graphs are too large; the rest are re-ranked
    r = explore(GPT175, H100, 512, 1_000_000, top_k=3)
    assert (r.plans.graph_rows > MAX_GRAPH_ROWS).any() and (r.top.graph_s > 0).all() and 0 < len(r.top) <= 3
    assert set(r.top.pp) <= set(r.plans.pp[r.plans.graph_rows <= MAX_GRAPH_ROWS])


def test_the_dse_offers_only_tensor_parallel_degrees_that_divide_the_heads():
    # found at a random point of training-dse's ranges: 406 GPUs (2 x 7 x 29) of gpt-310b (128 heads) enumerated
    # tp=7, which the formula ranked first and build_graph then refused; the search crashed instead of ranking
    from workbench.training.dse import explore, plan_space

    model = MODELS["gpt-310b"]
    assert set(plan_space(model, H100, 406, 406)["tp"].tolist()) == {1, 2}
    r = explore(model, H100, 336, 336, top_k=3, compute="constant", era="2021")  # 336 = 2^4 x 3 x 7
    assert 0 < len(r.top) <= 3 and set(r.plans.tp) == {1, 2, 4, 8}
    assert set(plan_space(GPT175, H100, 96, 96)["tp"].tolist()) == {1, 2, 3, 4, 6, 8}  # 96 heads: 3 and 6 divide
