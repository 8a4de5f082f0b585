"""Fluid model: steady state solves its equation, the ODE settles on it, FCS makes the queue flat."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.aqm import RedMarking, bdp_pkts, simulate_fluid, steady_state

STATIC = RedMarking(20, 200, 0.1)
PRED = RedMarking.from_slope(5, 0.01)


def test_steady_state_solves_the_balance_equation():
    n = np.array([1, 2, 3, 5, 8, 13])
    q = steady_state(n, STATIC)
    bdp = bdp_pkts(10.0, 100e-6)
    w = (bdp + q) / n
    p = STATIC.probability(q)
    cut = 1 - (1 - p) ** w
    # 1 - P = P * W * p / 2: growth in unmarked windows balances the cuts in marked ones
    np.testing.assert_allclose(1 - cut, cut * w * p / 2, rtol=1e-6)


def test_static_queue_grows_and_fcs_is_flat():
    n = np.arange(1, 41)
    qs = steady_state(n, STATIC)
    assert (np.diff(qs) >= 0).all() and qs[-1] > 3 * qs[0]
    qp = steady_state(n, PRED, scale_with_flows=True)
    assert np.ptp(qp) < 0.5


def test_min_window_regime():
    # 2N - BDP exceeds the FCS queue: DCTCP's two-packet floor sets the queue
    q = steady_state([100], PRED, scale_with_flows=True)
    assert q[0] == pytest.approx(2 * 100 - bdp_pkts(10.0, 100e-6))


def test_buffer_caps_the_queue():
    assert steady_state([64], STATIC, buffer_pkts=50)[0] == 50


def test_ode_settles_on_the_steady_state():
    n = np.array([2, 4, 8])
    r = simulate_fluid(n, STATIC, duration_rtts=300)
    np.testing.assert_allclose(r.mean_queue_pkts, steady_state(n, STATIC), rtol=0.03)
    assert (r.utilization > 0.99).all()
    assert r.queue_pkts.shape == (3, 400) and r.time_s.shape == (400,)


def test_ode_vectorized_matches_single_points():
    both = simulate_fluid([3, 9], STATIC, duration_rtts=60)
    one = simulate_fluid([9], STATIC, duration_rtts=60)
    np.testing.assert_allclose(both.queue_pkts[1], one.queue_pkts[0])


def test_shallow_threshold_loses_utilization_in_the_ode():
    # a step at 1 packet with a huge slope starves the link for a few long flows (DCTCP needs K ~ BDP/7)
    r = simulate_fluid([2], RedMarking.from_slope(0, 1.0), duration_rtts=200)
    assert r.utilization[0] < 0.99


@pytest.mark.parametrize(
    "kwargs, match",
    [({"n_flows": [0, 2]}, "n_flows"), ({"capacity_gbps": 0.0}, "capacity_gbps"), ({"rtt_s": -1.0}, "rtt_s")],
)
def test_invalid_inputs(kwargs, match):
    args = {"n_flows": [1, 2], "marking": STATIC} | kwargs
    with pytest.raises(ValueError, match=match):
        steady_state(args.pop("n_flows"), args.pop("marking"), **args)


def test_marking_type_is_checked():
    with pytest.raises(TypeError, match="marking"):
        steady_state([1], (20, 200, 0.1))


def test_sqrt_scaling_sits_between_static_and_linear():
    n = np.array([1, 4, 16, 32])
    lin = steady_state(n, PRED, scale_with_flows=True)
    sq = steady_state(n, PRED, scale_with_flows=True, scaling="sqrt")
    fixed = steady_state(n, PRED)
    assert lin[0] == sq[0] == fixed[0]
    assert (lin[1:] < sq[1:]).all() and (sq[1:] < fixed[1:]).all()
    with pytest.raises(ValueError, match="scaling"):
        steady_state(n, PRED, scale_with_flows=True, scaling="log")
