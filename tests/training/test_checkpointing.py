"""Checkpoint stall, save, load and ETTR: hand-computed cases."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench import experiments as ex
from workbench.training import checkpointing as ck
from workbench.training import failures as fl

ST = ck.Storage(pcie_gbs=50.0, serialise_gbs=5.0, node_gbs=20.0, aggregate_gbs=1e6, plan_s_per_rank=0.0,
                gpus_per_node=8)  # fmt: skip


def test_one_rank_copy_is_bytes_over_pcie():
    lay = ck.Layout(1, 1, 1)
    t = ck.save_time(1e9, lay, "bytecheckpoint", ST)
    assert t["bytes"] == pytest.approx(14e9)
    assert t["copy"] == pytest.approx(14e9 / 50e9)
    assert t["stall"] == pytest.approx(t["copy"])


def test_default_pcie_is_the_hardware_tables_one_direction():
    assert ck.Storage().pcie_gbs == pytest.approx(64.0)  # H100 PCIe Gen5 x16: 128 GB/s both ways


def test_upload_bandwidth_is_shared_by_a_nodes_ranks():
    one = ck.save_time(8e9, ck.Layout(1, 1, 1), "bytecheckpoint", ST)  # 112 GB on one rank
    eight = ck.save_time(8e9, ck.Layout(1, 1, 8), "bytecheckpoint", ST)  # 14 GB x 8 ranks on one node
    assert one["upload"] == pytest.approx(112e9 / 20e9)
    assert eight["upload"] == pytest.approx(one["upload"])  # same node bytes, same link
    # the storage aggregate caps each node at aggregate / nodes
    st = ck.Storage(pcie_gbs=50.0, node_gbs=20.0, aggregate_gbs=40.0, gpus_per_node=8)
    assert st.upload_gbs(64) == pytest.approx(5.0)


def test_dcps_first_replica_uploads_alone_once_the_other_nodes_are_done():
    # 405B at tp 8 x pp 16: the first replica's 16 nodes hold the weights (6.3 GB per rank more than the others)
    st = ck.Storage(pcie_gbs=50.0, node_gbs=25.0, aggregate_gbs=2000.0, plan_s_per_rank=0.0, gpus_per_node=8)
    up = {n: ck.save_time(405e9, ck.Layout.for_gpus(n), "dcp", st)["upload"] for n in (1024, 4096, 16384, 65536)}
    for n, t in up.items():
        lay = ck.Layout.for_gpus(n)
        big = 8 * ck.shard_bytes(405e9, lay, balanced=False)
        # no faster than the busiest node at its link or all bytes at the aggregate; no slower than the busiest
        # node held to an equal share of the aggregate the whole time (what every node got before)
        assert max(big / 25e9, 14 * 405e9 / 2000e9) <= t * (1 + 1e-12)
        assert t <= big / (st.upload_gbs(n) * 1e9) * (1 + 1e-12)
    # more GPUs, fewer optimizer bytes each and the same weights on the first replica: never a longer upload (the
    # equal share had made it 5.7 s at 1,024 GPUs and 54 s at 16,384)
    assert list(up.values()) == sorted(up.values(), reverse=True) and up[16384] < 5.0


def test_baselines_block_on_every_phase():
    lay = ck.Layout(1, 1, 8)
    m = ck.save_time(8e9, lay, "mcp", ST)
    b = ck.save_time(8e9, lay, "bytecheckpoint", ST)
    assert m["stall"] == pytest.approx(m["copy"] + m["serialise"] + m["upload"] + m["plan"])
    assert b["save"] == pytest.approx(b["copy"] + max(b["serialise"], b["upload"]))
    assert m["stall"] / b["stall"] == pytest.approx(1 + (1 / 5 + 8 / 20) * 50)
    # DCP: the first replica saves the replicated weights
    d = ck.save_time(8e9, lay, "dcp", ST)
    assert d["bytes"] == pytest.approx(16e9 + 12e9)


def test_first_save_plans_once():
    st = ck.Storage(pcie_gbs=50.0, plan_s_per_rank=1e-3)
    lay = ck.Layout(1, 1, 8)
    first = ck.save_time(1e9, lay, "bytecheckpoint", st, first=True)
    later = ck.save_time(1e9, lay, "bytecheckpoint", st)
    assert first["stall"] - later["stall"] == pytest.approx(8e-3)


def test_load_resharding_reads_only_what_it_needs():
    a, b = ck.Layout(2, 2, 4), ck.Layout(4, 2, 2)
    bc = ck.load_time(1e9, a, b, "bytecheckpoint", ST)
    base = ck.load_time(1e9, a, b, "mcp", ST)
    assert bc["bytes"] == pytest.approx(2e9 / 8 + 12e9 / 16)
    assert base["amplification"] == 2.0 and bc["amplification"] == 1.0
    assert bc["load"] == pytest.approx(max(bc["download"], bc["deserialise"], bc["copy"]))
    assert base["load"] > bc["load"]


def test_young_daly_moves_as_sqrt_of_save_cost():
    mtbf = 3 * 3600.0
    assert fl.young_daly_s(60, mtbf) / fl.young_daly_s(15, mtbf) == pytest.approx(2.0)
    rate = 1 / mtbf
    a = fl.optimal_interval_s(rate, fl.Recovery(checkpoint_s=40.0))
    b = fl.optimal_interval_s(rate, fl.Recovery(checkpoint_s=10.0))
    assert a / b == pytest.approx(2.0, rel=0.05)


def test_checkpoint_lag_closed_form_matches_monte_carlo():
    r = fl.Recovery(interval_s=1800, checkpoint_s=30, checkpoint_lag_s=300)
    cf = fl.ettr(1 / 3600, r)["ettr"]
    mc = fl.simulate(1 / 3600, r, replicas=400, seed=1)
    assert abs(cf - mc["ettr"]) < 4 * mc["ettr_se"]
    assert cf < fl.ettr(1 / 3600, fl.Recovery(interval_s=1800, checkpoint_s=30))["ettr"]
    # E[S] gains exp(-lambda d): the lag costs d of saved work per failure, to first order
    assert math.isclose(fl._moments(1e-4, 100, 10, 50)[0], fl._moments(1e-4, 100, 10)[0] * math.exp(-5e-3))


def test_ettr_table_less_stall_more_ettr_and_shorter_interval():
    t = ck.ettr_table(70e9, [1024], tp=8, pp=8).set_index("method")
    assert t.ettr["bytecheckpoint"] > t.ettr["mcp"]
    assert t.interval_s["bytecheckpoint"] < t.interval_s["mcp"]
    assert np.all(t.interval_s >= 10.0)


def test_experiment_small_grid_and_errors():
    df = ex.sweep("checkpoint", ex.get("checkpoint").small, client=False, progress=False)
    s = df.set_index(["gpus", "method"])
    for n in (1024, 4096):
        assert s.stall_s[(n, "bytecheckpoint")] < s.stall_s[(n, "mcp")] / 10
    with pytest.raises(ValueError, match="method"):
        ck.save_time(1e9, ck.Layout(1, 1, 1), "nope")
    with pytest.raises(ValueError, match="multiple"):
        ck.Layout.for_gpus(1000, 8, 16)


def test_panel_number_is_the_experiment_number():
    import ipywidgets as W

    from workbench.widgets.checkpointing import checkpoint_panel, panel_model

    rows, curve = panel_model(params_b=70.0, gpus=2048)
    for m in ck.METHODS:
        want = ex.run_point("checkpoint", {"params_b": 70.0, "gpus": 2048, "method": m}).iloc[0]
        got = rows.set_index("method").loc[m]
        assert got.ettr == pytest.approx(float(want.ettr), rel=1e-12)
        assert got.stall_s == pytest.approx(float(want.stall_s), rel=1e-12)
        # the curve peaks near the reported optimum
        c = curve[curve.method == m]
        assert c.ettr.max() <= got.ettr + 1e-9
    assert isinstance(checkpoint_panel(), W.Box)


@settings(max_examples=150)
@given(
    method=st.sampled_from(ck.METHODS),
    params_b=st.floats(0.5, 2000.0),
    tp=st.sampled_from([1, 2, 4, 8]),
    pp=st.sampled_from([1, 2, 4, 8, 16, 32]),
    dp=st.integers(1, 256),
    more=st.integers(2, 64),
    node_gbs=st.floats(1.0, 100.0),
    aggregate_gbs=st.floats(10.0, 10_000.0),
)
def test_a_larger_job_of_the_same_layout_never_uploads_longer(method, params_b, tp, pp, dp, more, node_gbs,
                                                               aggregate_gbs):  # fmt: skip
    # more replicas: each rank saves fewer optimizer bytes and the first replica the same weights (the property whose
    # violation found DCP's equal-share upload)
    st_ = ck.Storage(pcie_gbs=50.0, node_gbs=node_gbs, aggregate_gbs=aggregate_gbs, plan_s_per_rank=0.0)
    small, large = (ck.save_time(params_b * 1e9, ck.Layout(tp, pp, d), method, st_)["upload"] for d in (dp, dp * more))
    assert large <= small * (1 + 1e-9)
