"""Metrics: fluid step times, Monte-Carlo congestion against exact balls-into-bins, collective time, C4 model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.fabric import (
    Step,
    c4_gain_table,
    collective_steps,
    collective_time_s,
    collective_time_vs_size,
    congestion_ratio,
    exact_congestion_ratio,
    expected_max_load,
    fabric_slowdown,
    has_exact_ratio,
    iteration_gain,
    leaf_spine,
    link_loads,
    link_times_s,
    max_congestion,
    nic_bond_slowdown,
    sample_max_congestion,
    spine_link_matrix,
    uplink_load_table,
)


def test_fluid_step_time_by_hand():
    topo = leaf_spine(2, 2, 1, host_gbps=100, uplink_gbps=50)
    step = Step(np.array([0]), np.array([1]), np.array([1.25e9]))  # 10 Gbit
    assert max_congestion(topo, link_loads(topo, step, "ecmp", seed=0)) == pytest.approx(0.2)  # uplink at 50 Gb/s
    assert max_congestion(topo, link_loads(topo, step, "spray")) == pytest.approx(0.1)  # NIC bound, 2 x 25 Gbit/s
    with pytest.raises(ValueError, match="shape"):
        link_times_s(topo, np.zeros(3))
    with pytest.raises(ValueError, match=">= 0"):
        link_times_s(topo, -np.ones(topo.n_links))


@pytest.mark.parametrize("x", [1, 2, 8])
def test_monte_carlo_congestion_matches_exact_balls_into_bins(x):
    topo = leaf_spine(8, 8, 8)
    step = collective_steps("halving_doubling", 64, 2**20)[0]  # every leaf sends its 8 flows to one other leaf
    t = sample_max_congestion(topo, step, "ecmp" if x == 1 else f"mp-{x}", samples=6000, seed=x)
    ideal = sample_max_congestion(topo, step, "spray", samples=1)[0]
    r = t / ideal
    exact = expected_max_load(8 * x, 8, groups=8) / x
    assert abs(r.mean() - exact) < 4 * r.std(ddof=1) / math.sqrt(r.size) + 1e-9


def test_batched_samples_agree_with_single_draws_in_distribution():
    topo = leaf_spine(4, 4, 4)
    step = collective_steps("permutation", 16, 10**6, seed=0)[0]
    batched = sample_max_congestion(topo, step, "ecmp", samples=3000, seed=1)
    single = np.array([max_congestion(topo, link_loads(topo, step, "ecmp", seed=s)) for s in range(3000)])
    se = math.sqrt(batched.var() / 3000 + single.var() / 3000)
    assert abs(batched.mean() - single.mean()) < 4 * se


def test_ratios():
    topo = leaf_spine(16, 16, 16)
    ring = collective_steps("ring", 256, 2**30)[0]
    assert congestion_ratio(topo, ring, "ecmp", samples=50, seed=0) == 1.0
    hd = collective_steps("halving_doubling", 256, 2**30)[0]
    assert congestion_ratio(topo, hd, "minimal") == pytest.approx(1.0, abs=1e-12)
    assert congestion_ratio(topo, hd, "planned") == pytest.approx(1.0, abs=1e-12)


def test_collective_time():
    topo = leaf_spine(2, 2, 2, host_gbps=100)
    steps = collective_steps("ring", 4, 100_000_000)
    t = collective_time_s(topo, steps, "spray", latency_s=1e-3)
    assert t == pytest.approx(6 * (0.002 + 0.001))
    sizes = np.array([1e6, 1e8])
    curve = collective_time_vs_size(topo, "ring", 4, sizes, "spray", latency_s=1e-3)
    assert curve[1] == pytest.approx(t)
    with pytest.raises(ValueError, match="latency_s"):
        collective_time_s(topo, steps, "spray", latency_s=-1)


def test_spine_link_matrix():
    topo = leaf_spine(2, 2, 2)
    step = collective_steps("all_to_all", 4, 400)[0]
    m = spine_link_matrix(topo, link_loads(topo, step, "spray"))
    assert m.shape == (2, 2) and np.allclose(m, 200)


def test_c4_model():
    assert nic_bond_slowdown(1) == pytest.approx(1.5)
    assert nic_bond_slowdown(2) == pytest.approx(expected_max_load(2, 2, groups=2))
    assert iteration_gain(0.3, 1.5) == pytest.approx(0.15)
    assert np.allclose(iteration_gain([0.0, 0.5], 3.0), [0.0, 1.0])
    with pytest.raises(ValueError, match="comm_share"):
        iteration_gain(1.5, 2.0)
    with pytest.raises(ValueError, match="slowdown"):
        iteration_gain(0.5, 0.5)
    topo = leaf_spine(4, 4, 4)
    assert fabric_slowdown(topo, "ring", 16, samples=10, seed=0) == 1.0
    assert fabric_slowdown(topo, "halving_doubling", 16, samples=200, seed=0) > 1.5
    t = c4_gain_table([4, 32], [0.1, 0.3], samples=10)
    assert len(t) == 4 and (t.gain >= 0).all()
    assert t.loc[t.gpus == 4, "nic_slowdown"].iloc[0] < t.loc[t.gpus == 32, "nic_slowdown"].iloc[0]
    with pytest.raises(ValueError, match="multiples"):
        c4_gain_table([40], [0.1])


def test_worst_step_ratio_is_the_limiting_step():
    from workbench.fabric import collective_steps, congestion_ratio, leaf_spine, worst_step_ratio

    topo = leaf_spine(8, 8, 8)
    steps = collective_steps("halving_doubling", 64, 2**20)
    per_step = [congestion_ratio(topo, st, "ecmp", samples=50, seed=3) for st in steps]
    assert worst_step_ratio(topo, steps, "ecmp", samples=50, seed=3) == max(per_step)
    assert max(per_step) > 1.5  # the cross-leaf steps collide under hashing
    assert worst_step_ratio(topo, steps, "minimal", samples=50, seed=3) == pytest.approx(1.0)
    ring = collective_steps("ring", 64, 2**20)
    assert worst_step_ratio(topo, ring, "ecmp", samples=50, seed=3) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least one step"):
        worst_step_ratio(topo, [], "ecmp")


def test_exact_congestion_ratio_matches_monte_carlo_and_rejects_other_steps():
    step = collective_steps("halving_doubling", 64, 2**20)[0]  # 4 leaves pair up, 16 flows each on 4 spines
    for uplink in (None, 800.0):  # spine-bound, and partly NIC-bound (E[max(host, spine)])
        topo = leaf_spine(4, 4, 16, host_gbps=100, uplink_gbps=uplink)
        mc = sample_max_congestion(topo, step, "ecmp", samples=4000, seed=1)
        ideal = max_congestion(topo, link_loads(topo, step, "spray"))
        se = (mc / ideal).std(ddof=1) / np.sqrt(mc.size)
        exact = {r: exact_congestion_ratio(topo, step, r) for r in ("ecmp", "mp-2", "minimal")}
        assert abs(exact["ecmp"] - (mc / ideal).mean()) < 4 * se + 1e-12
        assert exact["minimal"] == 1.0 and 1.0 <= exact["mp-2"] <= exact["ecmp"]
    assert exact_congestion_ratio(
        leaf_spine(16, 16, 16), collective_steps("halving_doubling", 256, 2**30)[0], "ecmp"
    ) == pytest.approx(expected_max_load(16, 16, groups=16), rel=1e-12)
    a2a = collective_steps("all_to_all", 16, 2**20)[0]
    with pytest.raises(ValueError, match="pair the leaves"):
        exact_congestion_ratio(leaf_spine(4, 4, 4), a2a, "ecmp")
    assert not has_exact_ratio(leaf_spine(4, 4, 4), a2a, "ecmp")


def test_uplink_load_table_is_tidy():
    topo = leaf_spine(4, 4, 4)
    step = collective_steps("halving_doubling", 16, 2**20)[0]
    up = uplink_load_table(topo, {"spray": link_loads(topo, step, "spray")})
    assert list(up.columns) == ["routing", "leaf", "spine", "load_bytes"] and len(up) == 16
