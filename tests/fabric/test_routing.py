"""Routings and link loads: networkx cross-check, conservation, minimal splitting == spraying, planning."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import networkx as nx
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench.fabric import (
    ROUTINGS,
    Routing,
    Step,
    assign_paths,
    collective_steps,
    connections_per_host,
    hash_spines,
    leaf_spine,
    link_loads,
    min_split_pieces,
    minimal_split_subflows,
    parse_routing,
    random_destinations,
    subflow_loads,
)


def nx_loads(topo, step, routes):
    """Loads by walking networkx paths: routes maps flow -> list of (spine or None, bytes)."""
    g = topo.to_networkx()
    loads = np.zeros(topo.n_links)
    for i, (s, d) in enumerate(zip(step.src.tolist(), step.dst.tolist())):
        paths = {}
        for p in nx.all_shortest_paths(g, ("host", s), ("host", d)):
            sp = [n[1] for n in p if n[0] == "spine"]
            paths[sp[0] if sp else None] = [g.edges[a, b]["link_id"] for a, b in itertools.pairwise(p)]
        for spine, nbytes in routes[i]:
            for lid in paths[spine]:
                loads[lid] += nbytes
    return loads


def nx_spray_routes(topo, step):
    g = topo.to_networkx()
    routes = {}
    for i, (s, d) in enumerate(zip(step.src.tolist(), step.dst.tolist())):
        ps = list(nx.all_shortest_paths(g, ("host", s), ("host", d)))
        spines = [[n[1] for n in p if n[0] == "spine"] for p in ps]
        routes[i] = [(sp[0] if sp else None, step.size_bytes[i] / len(ps)) for sp in spines]
    return routes


def routes_from_assignment(topo, step, routing, seed=0):
    routes = defaultdict(list)
    f, sp, b = assign_paths(topo, step, routing, seed=seed)
    for i, p, nbytes in zip(f.tolist(), sp.tolist(), b.tolist()):
        routes[i].append((p, nbytes))
    local = topo.host_leaf(step.src) == topo.host_leaf(step.dst)
    for i in np.flatnonzero(local).tolist():
        routes[i].append((None, float(step.size_bytes[i])))
    return routes


FABRICS = [leaf_spine(3, 4, 3), leaf_spine(4, 3, 2, failed_links=[(0, 1), (2, 2)]), leaf_spine(2, 5, 4)]


@pytest.mark.parametrize("topo", FABRICS, ids=["3x4x3", "failures", "2x5x4"])
@pytest.mark.parametrize("name", ["all_to_all", "permutation", "double_binary_tree"])
def test_spray_matches_networkx_path_enumeration(topo, name):
    step = collective_steps(name, topo.n_hosts, 12_000, seed=3)[0]
    assert np.allclose(link_loads(topo, step, "spray"), nx_loads(topo, step, nx_spray_routes(topo, step)))


@pytest.mark.parametrize("topo", FABRICS, ids=["3x4x3", "failures", "2x5x4"])
@pytest.mark.parametrize("routing", ["ecmp", "mp-3", "minimal", "planned"])
def test_routings_match_networkx_walk_of_their_assignment(topo, routing):
    step = collective_steps("all_to_all", topo.n_hosts, 12_000)[0]
    expected = nx_loads(topo, step, routes_from_assignment(topo, step, routing, seed=5))
    assert np.allclose(link_loads(topo, step, routing, seed=5), expected)


@pytest.mark.parametrize("routing", ROUTINGS)
def test_conservation_and_nonnegativity(routing):
    topo = leaf_spine(4, 4, 4, failed_links=[(3, 0)])
    step = collective_steps("permutation", 16, 10_000, seed=2)[0]
    loads = link_loads(topo, step, routing, seed=1)
    n = topo.n_hosts
    cross = topo.host_leaf(step.src) != topo.host_leaf(step.dst)
    assert np.all(loads >= 0)
    assert loads[:n].sum() == pytest.approx(step.total_bytes)
    assert loads[n : 2 * n].sum() == pytest.approx(step.total_bytes)
    up = loads[topo.leaf_up_base : topo.spine_down_base]
    down = loads[topo.spine_down_base :]
    assert up.sum() == pytest.approx(step.size_bytes[cross].sum()) and down.sum() == pytest.approx(up.sum())
    assert np.all(loads[topo.capacity_gbps == 0] == 0)  # nothing on a failed link
    # per leaf: bytes leaving on uplinks == bytes of its cross-leaf flows
    per_leaf = np.bincount(topo.host_leaf(step.src[cross]), weights=step.size_bytes[cross], minlength=4)
    assert np.allclose(up.reshape(4, 4).sum(axis=1), per_leaf)


def test_same_seed_same_bytes():
    topo = leaf_spine(4, 4, 4)
    step = collective_steps("all_to_all", 16, 10_000)[0]
    a = link_loads(topo, step, "mp-4", seed=9)
    assert np.array_equal(a, link_loads(topo, step, "mp-4", seed=9))
    assert not np.array_equal(a, link_loads(topo, step, "mp-4", seed=10))


@st.composite
def equal_demands(draw):
    leaves = draw(st.integers(2, 5))
    spines = draw(st.integers(1, 12))
    hosts = draw(st.integers(1, 6))
    n_hosts = leaves * hosts
    counts = draw(st.lists(st.integers(0, 3 * spines), min_size=n_hosts, max_size=n_hosts))
    sizes = draw(st.lists(st.integers(1, 10**6), min_size=n_hosts, max_size=n_hosts))
    fails = draw(st.lists(st.tuples(st.integers(0, leaves - 1), st.integers(0, spines - 1)), max_size=spines - 1))
    seed = draw(st.integers(0, 2**16))
    return leaves, spines, hosts, counts, sizes, fails, seed


@settings(max_examples=60)
@given(equal_demands())
def test_minimal_splitting_equals_spraying_on_every_link(case):
    leaves, spines, hosts, counts, sizes, fails, seed = case
    topo = leaf_spine(leaves, spines, hosts)
    # never isolate a leaf pair: keep spine 0 alive everywhere
    topo = topo.with_failures([(a, b) for a, b in fails if b != 0])
    n = topo.n_hosts
    src = np.repeat(np.arange(n), counts)
    assume(n >= 2 and src.size > 0)
    dst = random_destinations(src, n, seed=seed)
    step = Step(src, dst, np.repeat(np.asarray(sizes, dtype=float), counts))
    a, b = subflow_loads(topo, step, "minimal"), link_loads(topo, step, "spray")
    assert np.allclose(a, b, rtol=1e-12, atol=1e-9 * max(1.0, b.max()))
    assert np.allclose(link_loads(topo, step, "minimal"), a, rtol=1e-12, atol=1e-9 * max(1.0, b.max()))


@settings(max_examples=60)
@given(n=st.integers(1, 100), s=st.integers(1, 40))
def test_subflow_count_formula(n, s):
    topo = leaf_spine(2, s, n)
    src = np.zeros(n, dtype=np.int64)
    dst = n + np.arange(n, dtype=np.int64)
    f, sp, b = minimal_split_subflows(topo, src, dst, np.full(n, 6.0))
    _q, r = divmod(n, s)
    g = math.gcd(r, s)
    assert f.size == n + r * (s // g - 1) == min_split_pieces(n, s)[1]
    assert np.allclose(np.bincount(sp, weights=b, minlength=s), n * 6.0 / s)
    assert np.allclose(np.bincount(f, weights=b), 6.0)  # every flow delivered in full
    if r:
        pieces = np.bincount(f)
        assert set(pieces.tolist()) <= {1, s // g}
        # minimality: no k < s/g lets r flows in k equal pieces load every spine equally
        for k in range(1, s // g):
            assert (r * k) % s != 0


def test_minimal_split_small_exhaustive_optimality():
    """For tiny s, exhaustively check no assignment with fewer equal pieces balances the leftovers."""
    import itertools

    for s in range(1, 5):
        for r in range(1, s):
            k_min = min_split_pieces(r, s)[0]
            for k in range(1, k_min):
                ok = False
                for assign in itertools.product(range(s), repeat=r * k):
                    if len(set(np.bincount(assign, minlength=s).tolist())) == 1:
                        ok = True
                        break
                assert not ok, (s, r, k)


def test_minimal_needs_equal_sizes():
    topo = leaf_spine(2, 2, 2)
    step = Step(np.array([0, 0]), np.array([2, 3]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="equal-size"):
        link_loads(topo, step, "minimal")


@settings(max_examples=40)
@given(equal_demands())
def test_planned_meets_the_lower_bound_without_failures(case):
    leaves, spines, hosts, counts, _, _, seed = case
    topo = leaf_spine(leaves, spines, hosts)
    n = topo.n_hosts
    src = np.repeat(np.arange(n), counts)
    assume(n >= 2 and src.size > 0)
    dst = random_destinations(src, n, seed=seed)
    step = Step(src, dst, np.ones(src.size))
    loads = link_loads(topo, step, "planned")
    sl, dl = topo.host_leaf(src), topo.host_leaf(dst)
    cross = sl != dl
    up_flows = np.bincount(sl[cross], minlength=leaves)
    down_flows = np.bincount(dl[cross], minlength=leaves)
    up = loads[topo.leaf_up_base : topo.spine_down_base].reshape(leaves, spines)
    down = loads[topo.spine_down_base :].reshape(leaves, spines)
    assert np.all(up.max(axis=1) <= np.ceil(up_flows / spines) + 1e-9)
    assert np.all(down.max(axis=1) <= np.ceil(down_flows / spines) + 1e-9)


def test_connections_per_host():
    topo = leaf_spine(4, 4, 4)
    step = collective_steps("all_to_all", 16, 1600)[0]
    assert np.all(connections_per_host(topo, step, "ecmp") == 15)
    assert np.all(connections_per_host(topo, step, "mp-8") == 120)
    assert np.all(connections_per_host(topo, step, "spray") == 15)
    assert np.all(connections_per_host(topo, step, "minimal") == 15)  # 4 flows per leaf, 4 spines
    topo6 = leaf_spine(4, 6, 4)  # n=4 flows per destination leaf on 6 spines: r=4, g=2, 3 pieces each
    assert np.all(connections_per_host(topo6, step, "minimal") == 3 + 3 * 12)


def test_parse_routing_and_bad_input():
    assert parse_routing("mp1") == Routing("ecmp") and parse_routing(" Spray ") == Routing("spray")
    assert parse_routing("MP-8") == Routing("mp", 8) and str(parse_routing("mp8")) == "mp-8"
    r = Routing("mp", 4)
    assert parse_routing(r) is r and r.hashed and not Routing("minimal").hashed
    assert [str(parse_routing(x)) for x in ROUTINGS] == list(ROUTINGS)
    with pytest.raises(ValueError, match="routing"):
        parse_routing("valiant")
    with pytest.raises(TypeError, match="routing"):
        parse_routing(8)
    with pytest.raises(ValueError, match="split"):
        Routing("mp", 1)
    with pytest.raises(ValueError, match="split"):
        Routing("ecmp", 2)
    with pytest.raises(ValueError, match="routing kind"):
        Routing("valiant")


def test_bad_demand():
    topo = leaf_spine(2, 2, 2)
    step = collective_steps("ring", 8, 100)[0]
    with pytest.raises(ValueError, match="more ranks than hosts"):
        link_loads(topo, step, "ecmp")
    with pytest.raises(TypeError, match="Step"):
        link_loads(topo, [(0, 1)], "ecmp")
    with pytest.raises(ValueError, match="itself"):
        link_loads(topo, Step(np.array([1]), np.array([1]), np.array([1.0])), "ecmp")
    with pytest.raises(ValueError, match="placement"):
        link_loads(topo, collective_steps("ring", 4, 100)[0], "ecmp", placement=[0, 1, 1, 2])
    cut = leaf_spine(2, 2, 2, failed_links=[(0, 0), (1, 1)])
    with pytest.raises(ValueError, match="no live path"):
        link_loads(cut, collective_steps("all_to_all", 4, 100)[0], "ecmp")
    with pytest.raises(ValueError, match="no live path"):
        link_loads(cut, collective_steps("all_to_all", 4, 100)[0], "spray")


def test_failures_route_around_and_raise_congestion():
    topo = leaf_spine(16, 16, 16)
    failed = topo.with_failures([(0, s) for s in range(8)])  # leaf 0 keeps 8 of 16 uplinks
    step = collective_steps("halving_doubling", 256, 2**20)[0]
    for routing in ("spray", "minimal", "planned", "ecmp"):
        loads = link_loads(failed, step, routing, seed=0)
        assert np.all(loads[failed.capacity_gbps == 0] == 0)
    sp = link_loads(failed, step, "spray")
    assert np.allclose(sp, link_loads(failed, step, "minimal")) and np.allclose(
        sp, subflow_loads(failed, step, "minimal")
    )
    # leaf 0's 16 flows now share 8 uplinks: 2 flows' worth each
    up0 = sp[failed.leaf_up(0, np.arange(8, 16))]
    assert np.allclose(up0, 2 * step.size_bytes[0])


@settings(max_examples=40)
@given(
    leaves=st.integers(2, 6),
    spines=st.integers(1, 20),
    hosts=st.integers(1, 8),
    name=st.sampled_from(["ring", "halving_doubling", "double_binary_tree", "all_to_all", "permutation"]),
    placement=st.sampled_from(["linear", "strided", "random"]),
    seed=st.integers(0, 1000),
)
def test_minimal_equals_spraying_for_every_collective(leaves, spines, hosts, name, placement, seed):
    topo = leaf_spine(leaves, spines, hosts)
    n = topo.n_hosts
    if name == "halving_doubling":
        n = 1 << (n.bit_length() - 1)
    assume(n >= 2)
    for step in collective_steps(name, n, 10**6, seed=seed):
        a = subflow_loads(topo, step, "minimal", placement=placement, seed=seed)  # the rule's pieces
        b = link_loads(topo, step, "spray", placement=placement, seed=seed)
        assert np.allclose(a, b, rtol=1e-12, atol=1e-6)
        assert np.allclose(link_loads(topo, step, "minimal", placement=placement, seed=seed), a, rtol=1e-12, atol=1e-6)


def test_hash_spines_uses_live_paths_and_shapes():
    topo = leaf_spine(3, 4, 1, failed_links=[(0, 1)])
    sl, dl = np.array([0, 0, 1]), np.array([1, 2, 2])
    sp = hash_spines(topo, sl, dl, split=2, seed=3, samples=500)
    assert sp.shape == (500, 3, 2)
    assert not np.any(sp[:, :2] == 1) and set(np.unique(sp[:, 2]).tolist()) == {0, 1, 2, 3}
    assert np.array_equal(hash_spines(topo, sl, dl, seed=4), hash_spines(topo, sl, dl, seed=4))
    with pytest.raises(ValueError, match="leaf ids"):
        hash_spines(topo, [0], [3])
    with pytest.raises(ValueError, match="split"):
        hash_spines(topo, sl, dl, split=0)


def test_min_split_pieces_rejects_bad_arguments():
    assert min_split_pieces(0, 4) == (1, 0) and min_split_pieces(6, 4) == (2, 8)
    with pytest.raises(ValueError, match="s must be >= 1"):
        min_split_pieces(5, 0)
    with pytest.raises(ValueError, match="n must be >= 0"):
        min_split_pieces(-1, 2)


def test_live_spines_are_held_once_per_leaf_pair():
    """The live-spine table every routing over failed links reads is one row per leaf pair, not per flow (a per-flow
    table was ~400 MiB for one all-to-all step of 371 hosts over 393 spines), and reads as the per-flow table did."""
    from workbench.fabric._splitting import live_spines

    topo = leaf_spine(6, 8, 3, failed_links=[(0, 0), (0, 3), (2, 5), (4, 0)])
    rng = np.random.default_rng(0)
    sl, dl = rng.integers(0, 6, 5000), rng.integers(0, 6, 5000)
    count, order = live_spines(topo, sl, dl)
    per_flow = topo.live_paths(sl, dl)
    assert order.by_pair.shape[0] == np.unique(sl * 6 + dl).size <= 36
    assert count.tolist() == per_flow.sum(axis=1).tolist()
    expected = np.argsort(~per_flow, axis=1, kind="stable")
    rows = np.arange(sl.size)[:, None]
    assert np.array_equal(order[rows, np.arange(8)[None, :]], expected)
