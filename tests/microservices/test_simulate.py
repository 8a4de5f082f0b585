"""The event simulation against hand computation and queueing theory; shedding, determinism and errors."""

import math

import numpy as np
import pytest

from workbench.microservices import (
    CallGraph,
    Load,
    RequestType,
    Service,
    chain,
    hotel_reservation,
    make_controller,
    simulate,
)


def _erlang_c(c: int, a: float) -> float:
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


def test_single_service_matches_mmc_theory():
    # M/M/2, mean service 1 ms, 1,000 req/s: rho 0.5, Erlang C 1/3, mean wait 1/3 ms, mean latency 4/3 ms
    g = CallGraph("one", (Service("s", 2, 1.0),), (RequestType("t", "s"),), 100.0)
    r = simulate(g, Load(1000.0, 1000.0, 40.0), "none", seed=3)
    lat = r.latency_s[r.status == 0]
    theory = 1e-3 + _erlang_c(2, 1.0) / (2000.0 - 1000.0)
    assert _erlang_c(2, 1.0) == pytest.approx(1 / 3)
    assert lat.mean() == pytest.approx(theory, rel=0.05)
    assert (r.status == 0).mean() > 0.999


def test_chain_latency_is_the_sum_and_fanout_the_max():
    svcs = (Service("a", 8, 1.0, "const"), Service("b", 8, 2.0, "const"), Service("c", 8, 3.0, "const"))
    seq = RequestType("seq", "a", {"a": [["b"], ["c"]]})
    par = RequestType("par", "a", {"a": [["b", "c"]]})
    for t, want in ((seq, 6.0), (par, 4.0)):
        g = CallGraph("g", svcs, (t,), 100.0)
        r = simulate(g, Load(5.0, 5.0, 2.0), "none", seed=1)  # never two requests at once
        assert (r.status == 0).all()
        assert r.latency_s * 1e3 == pytest.approx(np.full(r.latency_s.size, want))
        assert r.work_s.sum() == pytest.approx(6e-3 * r.latency_s.size)


def test_rajomon_sheds_at_the_first_hop_per_service_at_the_bottleneck():
    g = chain(4)  # the last service (depth 3) is the bottleneck
    load = Load(0.5 * g.capacity_rps(), 2.0 * g.capacity_rps(), 3.0, 0.5, 2.0)
    raj = simulate(g, load, make_controller("rajomon", client_limit=0.0), seed=2)
    bw = simulate(g, load, "breakwater", seed=2)
    d_raj = raj.drop_depth[raj.status == 2]
    d_bw = bw.drop_depth[bw.status == 2]
    # the entry's price includes the bottleneck's: Rajomon drops at the first hop, Breakwater where the queue is
    assert (d_raj == 0).mean() > 0.9
    assert (d_bw == 3).mean() > 0.9  # (the upper services, at their own capacity in the spike, drop a few)
    assert raj.summary()["wasted_work_frac"] < 0.2 * bw.summary()["wasted_work_frac"]


def test_rajomon_keeps_the_tail_near_the_slo_and_none_does_not():
    g = hotel_reservation()
    load = Load(4000.0, 12000.0, 3.0, 0.5, 2.0)
    assert simulate(g, load, "rajomon", seed=1).summary()["p99_ms"] < 1.5 * g.slo_ms
    assert simulate(g, load, "none", seed=1).summary()["p99_ms"] > 10 * g.slo_ms


def test_deterministic_per_seed():
    g = hotel_reservation("mixed")
    load = Load(4000.0, 15000.0, 1.0, 0.2, 0.5)
    a, b = simulate(g, load, "rajomon", seed=5), simulate(g, load, "rajomon", seed=5)
    assert np.array_equal(a.status, b.status) and np.array_equal(a.latency_s, b.latency_s, equal_nan=True)
    c = simulate(g, load, "rajomon", seed=6)
    assert a.arrival_s.size != c.arrival_s.size or not np.array_equal(a.arrival_s, c.arrival_s)


def test_timeseries_is_tidy_and_adds_up():
    g = chain(2)
    load = Load(5000.0, 30000.0, 1.0, 0.2, 0.4)
    r = simulate(g, load, "breakwater", seed=1)
    ts = r.timeseries(0.1)
    assert list(ts.columns) == ["t_s", "offered_rps", "goodput_rps", "drops_rps", "p95_ms"]
    assert len(ts) == 10
    assert (ts.offered_rps.sum() * 0.1) == pytest.approx(r.arrival_s.size)
    assert (ts.goodput_rps <= ts.offered_rps + 1e-9).all()


def test_bad_load_is_named():
    with pytest.raises(ValueError, match="base_rps"):
        Load(-1.0, 10.0, 1.0)
    with pytest.raises(ValueError, match="spike_rps"):
        Load(1.0, -10.0, 1.0)
    with pytest.raises(ValueError, match="duration_s"):
        Load(1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match=r"spike_start_s = 2 must be before duration_s = 1: lower spike_start_s"):
        Load(1.0, 1.0, 1.0, 2.0)
