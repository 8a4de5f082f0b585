"""The SWARM-style estimator: max-min fair sharing by hand, the Mathis bound, the fluid FCT of one flow, the
routing of each mitigation, the operators' rule and a ranking whose answer is obvious."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.fabric.mitigation import (
    Fabric,
    LinkFailure,
    choose_spines,
    combined_order,
    estimate_flows,
    failure_scenario,
    mathis_rate_bps,
    max_min_fair,
    operator_rule,
    rank_mitigations,
    rank_table,
    routing_weights,
)


def test_two_flows_share_one_link_equally():
    assert max_min_fair([10.0], [[0], [0]]).tolist() == pytest.approx([5.0, 5.0])


def test_bottleneck_chain():
    # flow 0 crosses links 0 (10) and 1 (4); flow 1 only link 0; flow 2 only link 1.
    # link 1 saturates first at 2 each; flow 1 takes the rest of link 0: 10 - 2 = 8.
    assert max_min_fair([10.0, 4.0], [[0, 1], [0], [1]]).tolist() == pytest.approx([2.0, 8.0, 2.0])


def test_parking_lot():
    # a long flow over three unit links, one short flow on each: everybody gets 1/2
    r = max_min_fair([1.0, 1.0, 1.0], [[0, 1, 2], [0], [1], [2]])
    assert r.tolist() == pytest.approx([0.5, 0.5, 0.5, 0.5])


def test_a_flow_ceiling_frees_capacity_for_the_others():
    assert max_min_fair([10.0], [[0], [0]], flow_cap=[3.0, np.inf]).tolist() == pytest.approx([3.0, 7.0])


def test_max_min_fair_rejects_bad_paths():
    with pytest.raises(ValueError, match="link ids"):
        max_min_fair([1.0], [[1]])


def test_mathis_rate():
    # 1460 B * 8 / 100 us * sqrt(1.5) / sqrt(0.01) = 116.8 Mbit/s * 1.2247 * 10 = 1.4305 Gbit/s
    assert float(mathis_rate_bps(1460, 100e-6, 0.01)) == pytest.approx(1.4305e9, rel=1e-3)
    # a quarter of the loss doubles the rate; no loss, no bound
    assert float(mathis_rate_bps(1460, 100e-6, 0.0025) / mathis_rate_bps(1460, 100e-6, 0.01)) == pytest.approx(2.0)
    assert np.isinf(mathis_rate_bps(1460, 100e-6, 0.0))


def _one(src, dst, size, start=0.0, u=0.5):
    return pd.DataFrame({"src": [src], "dst": [dst], "start_s": [start], "size_bytes": [size], "u": [u]})


def test_one_flow_on_an_idle_fabric():
    fab = Fabric(leaves=2, spines=2, hosts_per_leaf=2, host_gbps=10.0, uplink_gbps=10.0)
    out = estimate_flows(fab, (), "none", _one(0, 3, 15_000))
    # 11 packets of 1460 B: 2 slow-start rounds of RTT 4 x (2 x 1 us + 1.2 us) = 12.8 us, plus 12 us at 10 Gbit/s
    assert out.fct_s.iloc[0] == pytest.approx(12e-6 + 2 * 12.8e-6, rel=1e-6)
    assert out.timeouts.iloc[0] == 0


def test_two_flows_from_one_host_share_its_nic():
    fab = Fabric(leaves=2, spines=2, hosts_per_leaf=2, host_gbps=10.0, uplink_gbps=10.0)
    flows = pd.concat([_one(0, 2, 1_250_000), _one(0, 3, 1_250_000)], ignore_index=True)
    out = estimate_flows(fab, (), "none", flows, epoch_s=1.0)
    # both at 5 Gbit/s: 10 Mbit each takes 2 ms
    assert (out.fct_s - fab.rtt_s() * 7).tolist() == pytest.approx([2e-3, 2e-3], rel=1e-6)


def test_a_lossy_path_costs_timeouts_only_when_losses_are_likely():
    fab = Fabric(leaves=2, spines=1, hosts_per_leaf=1)
    flows = pd.concat([_one(0, 1, 20_000)] * 400, ignore_index=True).assign(start_s=np.arange(400) * 1e-3)
    lossy = estimate_flows(fab, (LinkFailure(0, 0, drop_rate=0.2),), "none", flows)
    clean = estimate_flows(fab, (), "none", flows)
    assert lossy.timeouts.sum() > 50 and clean.timeouts.sum() == 0
    assert lossy.fct_s.max() > fab.rto_s > clean.fct_s.max()


def test_mitigations_route_around_the_failure():
    fab = Fabric(leaves=2, spines=4, hosts_per_leaf=1)
    scen = (LinkFailure(0, 1, drop_rate=0.01),)
    u = np.linspace(0, 0.999, 200)
    src, dst = np.zeros(200, int), np.ones(200, int)
    for mit in ("disable", "drain"):
        w, _, _ = routing_weights(fab, scen, mit)
        assert 1 not in set(choose_spines(fab, src, dst, u, w))
    w, _, _ = routing_weights(fab, scen, "reweight", lossy_weight=0.1)
    share = np.mean(choose_spines(fab, src, dst, u, w) == 1)
    assert share == pytest.approx(0.1 / 3.1, abs=0.01)
    w, _, _ = routing_weights(fab, scen, "drain")
    assert w[:, 1].sum() == 0 and w[:, [0, 2, 3]].min() == 1


def test_operator_rule_keeps_three_quarters_of_the_uplinks():
    fab = Fabric(leaves=2, spines=4, hosts_per_leaf=1)
    assert operator_rule(fab, (LinkFailure(0, 0, drop_rate=0.01),)) == "disable"
    two = (LinkFailure(0, 0, drop_rate=0.01), LinkFailure(0, 1, drop_rate=0.05))
    assert operator_rule(fab, two) == "disable:0,1"  # the worse one; the second would leave 2 of 4
    assert operator_rule(fab, (LinkFailure(0, 0, capacity_fraction=0.5),)) == "none"
    assert operator_rule(fab, two, threshold=0.5) == "disable"


def test_combined_order_breaks_near_ties_by_throughput():
    assert combined_order([1.0, 1.05, 3.0], [5.0, 9.0, 9.9]).tolist() == [1, 0, 2]
    assert combined_order([1.0, 2.0], [9.0, 1.0]).tolist() == [0, 1]
    assert combined_order([np.nan, 2.0], [9.0, np.nan]).tolist() == [1, 0]  # nothing measured: last
    t = pd.DataFrame({"mitigation": ["a", "b"], "small_p99_fct_ms": [2.0, 1.0], "long_tput_gbps": [1.0, 1.0]})
    assert rank_table(t).mitigation.tolist() == ["b", "a"]


def test_a_badly_lossy_link_at_low_load_is_taken_out():
    """Trivial case: 20% loss on one cable of a lightly loaded fabric: leaving it costs timeouts, removing or
    re-weighting it costs nothing."""
    fab = Fabric(leaves=4, spines=4, hosts_per_leaf=4)
    r = rank_mitigations(fab, (LinkFailure(0, 0, drop_rate=0.2),), load=0.1, duration_s=0.05, seeds=(0,))
    assert r.mitigation.iloc[-1] == "none" or r.set_index("mitigation").loc["none", "rank_fct"] == 4
    best = r.iloc[0]
    assert best.mitigation in ("disable", "reweight", "drain")
    assert r.set_index("mitigation").loc["none", "small_p99_fct_ms"] > 5 * best.small_p99_fct_ms


def test_scenarios_and_bad_input():
    assert len(failure_scenario("lossy", 0.02)) == 1 and failure_scenario("lossy", 0.02)[0].drop_rate == 0.02
    assert failure_scenario("capacity", capacity_fraction=0.3)[0].capacity_fraction == 0.3
    with pytest.raises(ValueError, match="failure"):
        failure_scenario("flood")
    with pytest.raises(ValueError, match="drop_rate"):
        LinkFailure(0, 0, drop_rate=1.5)
    with pytest.raises(ValueError, match="outside"):
        routing_weights(Fabric(leaves=2, spines=2, hosts_per_leaf=1), (LinkFailure(5, 0, drop_rate=0.1),), "none")
    with pytest.raises(ValueError, match="mitigation"):
        routing_weights(Fabric(leaves=2, spines=2, hosts_per_leaf=1), (), "reboot")
