"""Packet-level simulation: exact queue bookkeeping, agreement with the fluid model, PRED's controllers, FCT."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.aqm import (
    PRED_DEFAULT,
    STATIC_DEFAULT,
    PredConfig,
    RedMarking,
    dumbbell,
    fct_summary,
    leaf_spine_fct,
    steady_state,
)
from workbench.aqm.packet import Network
from workbench.aqm.trains import TrainQueue as _Link
from workbench.fabric.topology import leaf_spine


def test_link_fluid_is_exact_for_paced_trains():
    link = _Link(1.0e6, 1000.0, None)  # 1 packet per us
    link.add_train(0.0, 1.0e6, 10e-6)  # two trains of one packet per us each, for 10 us
    link.add_train(0.0, 1.0e6, 10e-6)
    link.advance(30e-6)
    # queue grows 1/us for 10 us then drains 1/us: empty at 20 us; served = 10 + 10 packets
    assert link.q == 0.0
    assert link.served == pytest.approx(20.0)
    assert link.area * 1e6 == pytest.approx(100.0)  # two triangles of height 10, width 10 us
    assert link.rate == 0.0 and not link.ends


def test_link_schedules_future_trains():
    link = _Link(1.0e6, 1000.0, None)
    link.add_train(5e-6, 3.0e6, 10e-6)  # starts later: nothing happens before 5 us
    link.advance(5e-6)
    assert link.q == 0.0 and link.served == 0.0
    link.advance(10e-6)
    assert link.q == pytest.approx(10.0)  # 3 in, 1 out per us for 5 us


def test_single_sender_cannot_queue_at_a_link_of_its_own_rate():
    r = dumbbell(1, STATIC_DEFAULT, duration_s=0.01, seed=0)
    assert r.links.utilization.iloc[0] > 0.99 and r.links.mean_queue_pkts.iloc[0] < 1.0


@pytest.mark.parametrize("n", [2, 4, 8])
def test_packet_static_queue_agrees_with_fluid(n):
    r = dumbbell(n, STATIC_DEFAULT, duration_s=0.04, seed=n)
    fluid = steady_state([n], STATIC_DEFAULT)[0]
    assert r.links.mean_queue_pkts.iloc[0] == pytest.approx(fluid, rel=0.15)
    assert r.links.utilization.iloc[0] == pytest.approx(1.0, abs=0.01)


def test_pred_holds_a_lower_queue_than_static():
    q = {
        name: dumbbell(16, s, duration_s=0.03, seed=1).links.mean_queue_pkts.iloc[0]
        for name, s in (("static", STATIC_DEFAULT), ("pred", PRED_DEFAULT))
    }
    assert q["pred"] < 0.25 * q["static"]


def test_fcs_counts_the_long_flows_and_scales_the_slope():
    cfg = PredConfig(qla=False, slope_per_pkt=0.01)
    r = dumbbell(12, cfg, duration_s=0.02, seed=2)
    steady = r.control[r.control.time_s > 0.005]
    # every period sees (nearly) all 12 flows: a period is 1.25 base RTTs, a flow sends once per (queued) RTT
    assert steady.n_flows.between(8, 12).all() and steady.n_flows.median() >= 11
    np.testing.assert_allclose(steady.slope_per_pkt, 0.01 * steady.n_flows)
    assert (steady.min_k_pkts == cfg.min_k_pkts).all()


def test_fcs_sqrt_scaling():
    cfg = PredConfig(qla=False, fcs_scaling="sqrt")
    r = dumbbell(9, cfg, duration_s=0.01, seed=4)
    np.testing.assert_allclose(r.control.slope_per_pkt, 0.01 * np.sqrt(r.control.n_flows))


def test_qla_moves_the_slope_in_steps_and_stays_in_bounds():
    cfg = PredConfig(fcs=True, qla=True)
    r = dumbbell(8, cfg, load=0.3, duration_s=0.05, seed=3)
    free = r.control[r.control.slope_per_pkt > cfg.slope_per_pkt]  # rows not held at the one-flow floor
    offsets = free.slope_per_pkt - cfg.slope_per_pkt * free.n_flows
    steps = np.round(offsets / cfg.slope_step, 6)
    assert np.allclose(steps, np.round(steps))  # multiples of the 0.025 step
    assert offsets.abs().max() <= cfg.max_slope_offset + 1e-12
    assert offsets.abs().max() > 0  # it did probe


def test_same_seed_same_result_and_fct_lower_bound():
    a = dumbbell(2, STATIC_DEFAULT, load=0.4, duration_s=0.05, seed=7)
    b = dumbbell(2, STATIC_DEFAULT, load=0.4, duration_s=0.05, seed=7)
    assert a.flows.equals(b.flows) and a.queue.equals(b.queue)
    short = a.flows[~a.flows.is_long & a.flows.finished]
    assert len(short) > 5
    # a flow takes at least one base RTT plus its own serialization at 10 Gbit/s
    lower = 100e-6 + short.size_bytes * 8 / 10e9
    assert (short.fct_s >= lower * 0.999).all()


def test_leaf_spine_ecmp_and_spray():
    topo = leaf_spine(2, 2, 4, host_gbps=10.0, uplink_gbps=20.0)
    for routing in ("ecmp", "spray"):
        r = leaf_spine_fct(0.5, STATIC_DEFAULT, topology=topo, routing=routing, duration_s=0.01, seed=0)
        s = fct_summary(r.flows)
        assert s.loc[0, "unfinished"] == 0 and s.loc[0, "count"] > 10
        assert (r.links.utilization <= 1.0 + 1e-9).all()
        assert set(r.queue.link) == {int(topo.leaf_up(0, 0)), topo.n_hosts}


def test_spraying_spreads_a_flow_over_all_spines():
    topo = leaf_spine(2, 4, 1, host_gbps=10.0, uplink_gbps=10.0)
    paths = tuple(
        tuple(int(x) for x in row)
        for row in np.asarray([[0, topo.leaf_up(0, p), topo.spine_down(p, 1), topo.n_hosts + 1] for p in range(4)])
    )
    net = Network(topo.capacity_gbps, np.asarray(topo.link_kind) != 0, STATIC_DEFAULT, monitor_links=(), seed=0)
    net.run(duration_s=0.01, short_starts_s=[0.0], short_sizes_bytes=[3_000_000], short_paths=[paths])
    used = [net.links[int(topo.leaf_up(0, p))].pkts for p in range(4)]
    assert min(used) > 0.2 * sum(used)
    with pytest.raises(RuntimeError, match="runs once"):
        net.run(duration_s=0.01)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: dumbbell(-1, STATIC_DEFAULT), ValueError, "n_long_flows"),
        (lambda: dumbbell(2, STATIC_DEFAULT, load=1.0), ValueError, "load"),
        (lambda: dumbbell(2, STATIC_DEFAULT, capacity_gbps=0.0), ValueError, "capacity"),
        (lambda: dumbbell(2, "red"), TypeError, "marking"),
        (lambda: leaf_spine_fct(0.95, STATIC_DEFAULT, routing="flowlet"), ValueError, "routing"),
        (lambda: leaf_spine_fct(1.0, STATIC_DEFAULT), ValueError, "load"),
        (lambda: leaf_spine_fct(0.5, STATIC_DEFAULT, topology="fat-tree"), TypeError, "topology"),
        (lambda: PredConfig(throughput_weight=1.5), ValueError, "throughput_weight"),
        (lambda: PredConfig(slope_per_pkt=0.0), ValueError, "slope_per_pkt"),
        (lambda: RedMarking(100, 20, 0.1), ValueError, "min_k_pkts"),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
