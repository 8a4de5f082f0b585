"""Marking ramps and the web-search workload."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.aqm import RedMarking, mark_probability, poisson_flows, size_class, web_search


def test_classic_ramp_values():
    m = RedMarking(10, 110, 0.2)
    q = np.array([0, 9.99, 10, 60, 109.9, 110, 1000])
    p = m.probability(q)
    assert p[:3].tolist() == [0.0, 0.0, 0.0]
    assert p[3] == pytest.approx(0.1)
    assert p[4] == pytest.approx(0.2 * 99.9 / 100)
    assert p[5:].tolist() == [1.0, 1.0]  # DCTCP-style: every packet at and above max_k
    assert m.slope_per_pkt == pytest.approx(0.002)


def test_pred_form_round_trip():
    m = RedMarking.from_slope(5, 0.05)
    assert (m.min_k_pkts, m.max_k_pkts, m.max_p) == (5.0, 25.0, 1.0)
    assert m.slope_per_pkt == pytest.approx(0.05)
    assert m.scaled(4).slope_per_pkt == pytest.approx(0.2)
    assert m.scaled(4).min_k_pkts == 5.0


@pytest.mark.parametrize(
    "args, match",
    [
        ((50, 50, 0.1), "min_k_pkts must be < max_k_pkts"),
        ((60, 50, 0.1), "min_k_pkts must be < max_k_pkts"),
        ((10, 50, 1.5), "max_p"),
        ((10, 50, 0.0), "max_p"),
        ((-1, 50, 0.1), "min_k_pkts"),
        ((10, 0, 0.1), "max_k"),
    ],
)
def test_invalid_thresholds(args, match):
    with pytest.raises(ValueError, match=match):
        RedMarking(*args)


def test_invalid_slope():
    with pytest.raises(ValueError, match="slope_per_pkt"):
        RedMarking.from_slope(5, 0.0)


@settings(max_examples=60, deadline=None)
@given(lo=st.floats(0, 100), width=st.floats(1, 500), p=st.floats(0.01, 1.0))
def test_ramp_is_monotone_probability(lo, width, p):
    q = np.linspace(0, lo + 2 * width, 200)
    prob = mark_probability(q, lo, lo + width, p)
    assert ((prob >= 0) & (prob <= 1)).all()
    assert (np.diff(prob) >= -1e-12).all()


def test_web_search_distribution():
    d = web_search()
    assert d.mean_bytes == pytest.approx(1_711_250)
    x = d.sample(200_000, seed=0)
    # empirical CDF at the table's break points matches the table
    for size, cdf in [(10_000, 0.15), (80_000, 0.53), (1_000_000, 0.70), (10_000_000, 0.97)]:
        assert (x <= size).mean() == pytest.approx(cdf, abs=0.005)
    assert x.mean() == pytest.approx(d.mean_bytes, rel=0.03)
    assert size_class([5_000, 500_000, 20_000_000]).tolist() == [
        "small (<100KB)",
        "medium (100KB-10MB)",
        "large (>=10MB)",
    ]


def test_poisson_flows_offer_the_load():
    f = poisson_flows(0.6, 10.0, 20.0, seed=3)
    offered = f.size_bytes.sum() * 8 / (10e9 * 20.0)
    assert offered == pytest.approx(0.6, rel=0.1)
    assert (np.diff(f.start_s) >= 0).all() and f.start_s.max() < 20.0
    same = poisson_flows(0.6, 10.0, 20.0, seed=3)
    assert f.equals(same)


@pytest.mark.parametrize("load", [0.0, 1.0, 1.2, -0.1])
def test_poisson_flows_rejects_loads_without_steady_state(load):
    with pytest.raises(ValueError, match="load"):
        poisson_flows(load, 10.0, 1.0)


def test_poisson_flows_rejects_zero_capacity():
    with pytest.raises(ValueError, match="capacity_gbps"):
        poisson_flows(0.5, 0.0, 1.0)


def test_mark_probability_rejects_inverted_thresholds_and_takes_a_step():
    with pytest.raises(ValueError, match="min_k_pkts must be <= max_k_pkts"):
        mark_probability([10.0], [30.0, 5.0], [20.0, 50.0])
    assert mark_probability([14.0, 15.0, 99.0], 15.0, 15.0).tolist() == [0.0, 1.0, 1.0]
    assert RedMarking.step(15).probability([14.0, 15.0]).tolist() == [0.0, 1.0]


@pytest.mark.parametrize("bad", [[np.nan], [1000.0, -1.0], [np.inf]])
def test_size_class_rejects_sizes_that_are_not_sizes(bad):
    with pytest.raises(ValueError, match="size_bytes"):
        size_class(bad)


def test_websearch_matrix_draws_the_readme_workload_per_host():
    from workbench.aqm.workload import websearch_matrix

    m = websearch_matrix(0.6, 0.2, seed=3, leaves=4, hosts_per_leaf=4, spines=2)
    assert m.equals(websearch_matrix(0.6, 0.2, seed=3, leaves=4, hosts_per_leaf=4, spines=2))
    assert not m.equals(websearch_matrix(0.6, 0.2, seed=4, leaves=4, hosts_per_leaf=4, spines=2))
    assert m.flow_id.tolist() == list(range(1, len(m) + 1)) and m.start_s.is_monotonic_increasing
    assert np.allclose(m.start_s * 1e12, np.round(m.start_s * 1e12), atol=1e-3)  # whole picoseconds
    assert (m.src != m.dst).all() and m.dst.between(0, 15).all()
    local = m.src // 4 == m.dst // 4
    assert ((m.spine == -1) == local).all() and set(m.spine[~local]) == {0, 1}
    # every host offers the load: ~0.6 x 10 Gbit/s each over 0.2 s (heavy-tailed sizes: within 30%)
    per_host = m.groupby("src").size_bytes.sum() * 8 / 0.2 / 10e9
    assert len(per_host) == 16 and per_host.mean() == pytest.approx(0.6, rel=0.3)
    # a host's flows do not depend on how many hosts there are
    small = websearch_matrix(0.6, 0.2, seed=3, leaves=2, hosts_per_leaf=4, spines=2)
    assert np.array_equal(small[small.src == 0].start_s, m[m.src == 0].start_s)
    with pytest.raises(ValueError, match="load"):
        websearch_matrix(1.0, 0.1, seed=1)
