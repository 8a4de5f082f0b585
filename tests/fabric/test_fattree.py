"""Three-tier fat-tree: networkx path enumeration, spraying, minimal splitting, conservation, bad input."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.fabric import (
    Step,
    collective_steps,
    congestion_ratio,
    connections_per_host,
    fat_tree,
    fat_tree_n_paths,
    fat_tree_path_links,
    link_loads,
    place_ranks,
    random_destinations,
)


@pytest.mark.parametrize("k", [2, 4, 6])
def test_paths_match_networkx_enumeration(k):
    ft = fat_tree(k)
    g = ft.to_networkx()
    ids = sorted(d["link_id"] for _, _, d in g.edges(data=True))
    assert ids == list(range(ft.n_links))
    n = ft.n_hosts
    rng = np.random.default_rng(k)
    pairs = [(s, d) for s in range(n) for d in range(n) if s != d]
    for idx in rng.choice(len(pairs), size=min(len(pairs), 60), replace=False):
        s, d = pairs[idx]
        expected = sorted(
            tuple(g.edges[a, b]["link_id"] for a, b in itertools.pairwise(p))
            for p in nx.all_shortest_paths(g, ("host", s), ("host", d))
        )
        m = int(fat_tree_n_paths(ft, [s], [d])[0])
        got = fat_tree_path_links(ft, np.full(m, s), np.full(m, d), np.arange(m))
        got = sorted(tuple(int(v) for v in row if v >= 0) for row in got)
        assert got == expected


def _nx_spray(ft, step):
    g = ft.to_networkx()
    loads = np.zeros(ft.n_links)
    for s, d, b in zip(step.src.tolist(), step.dst.tolist(), step.size_bytes.tolist()):
        paths = list(nx.all_shortest_paths(g, ("host", s), ("host", d)))
        for p in paths:
            for a, c in itertools.pairwise(p):
                loads[g.edges[a, c]["link_id"]] += b / len(paths)
    return loads


@pytest.mark.parametrize("name", ["all_to_all", "permutation", "halving_doubling"])
def test_spray_matches_networkx(name):
    ft = fat_tree(4)
    step = collective_steps(name, 16, 16_000, seed=1)[0]
    assert np.allclose(link_loads(ft, step, "spray"), _nx_spray(ft, step))


@settings(max_examples=30)
@given(k=st.sampled_from([2, 4, 6, 8]), seed=st.integers(0, 2**16), per_host=st.integers(1, 20))
def test_minimal_equals_spray_and_conservation(k, seed, per_host):
    ft = fat_tree(k)
    rng = np.random.default_rng(seed)
    n = ft.n_hosts
    src = np.repeat(np.arange(n), per_host)
    dst = random_destinations(src, n, seed=rng)
    size = np.repeat(rng.integers(1, 1000, size=n).astype(float), per_host)
    step = Step(src, dst, size)
    sp = link_loads(ft, step, "spray")
    assert np.allclose(link_loads(ft, step, "minimal"), sp, rtol=1e-12, atol=1e-9)
    for routing in ("ecmp", "mp-4", "planned"):
        loads = link_loads(ft, step, routing, seed=seed)
        assert np.all(loads >= 0)
        assert loads[:n].sum() == pytest.approx(size.sum())
        # bytes climbing to the core equal bytes descending from it
        base = 2 * n + 2 * ft.n_edge * ft.half
        half = ft.n_edge * ft.half
        assert loads[base : base + half].sum() == pytest.approx(loads[base + half :].sum())
        assert loads[base : base + half].sum() == pytest.approx(sp[base : base + half].sum())


def test_hashing_congests_and_planning_helps():
    ft = fat_tree(8)
    step = collective_steps("halving_doubling", 128, 2**20)[0]  # crosses pods
    ecmp = congestion_ratio(ft, step, "ecmp", samples=50, seed=0)
    assert ecmp > 2.0
    assert congestion_ratio(ft, step, "minimal") == pytest.approx(1.0)
    assert congestion_ratio(ft, step, "planned") == pytest.approx(1.0)
    a2a = collective_steps("all_to_all", 128, 2**20)[0]
    assert connections_per_host(ft, a2a, "mp-8").max() == 127 * 8
    assert place_ranks(ft, 8, "strided").tolist() == [0, 4, 8, 12, 16, 20, 24, 28]  # one rank per edge switch


def test_bad_fat_tree_input():
    with pytest.raises(ValueError, match="even"):
        fat_tree(5)
    with pytest.raises(ValueError, match="k"):
        fat_tree(0)
    with pytest.raises(ValueError, match="link_gbps"):
        fat_tree(4, link_gbps=0)
    ft = fat_tree(4)
    with pytest.raises(ValueError, match="path"):
        fat_tree_path_links(ft, [0], [15], [4])
    with pytest.raises(ValueError, match="differ"):
        fat_tree_path_links(ft, [1], [1], [0])
    with pytest.raises(ValueError, match="more ranks than hosts"):
        link_loads(ft, collective_steps("ring", 32, 100)[0], "ecmp")


@settings(max_examples=25)
@given(k=st.sampled_from([4, 6, 8]), seed=st.integers(0, 2**16), per_host=st.integers(1, 6))
def test_planned_balances_edge_uplinks(k, seed, per_host):
    ft = fat_tree(k)
    n = ft.n_hosts
    src = np.repeat(np.arange(n), per_host)
    dst = random_destinations(src, n, seed=seed)
    step = Step(src, dst, np.ones(src.size))
    loads = link_loads(ft, step, "planned")
    h = ft.half
    leaves_edge = ft.host_edge(src) != ft.host_edge(dst)
    up_flows = np.bincount(ft.host_edge(src[leaves_edge]), minlength=ft.n_edge)
    base = 2 * n
    edge_up = loads[base : base + ft.n_edge * h].reshape(ft.n_edge, h)
    assert np.all(edge_up.max(axis=1) <= np.ceil(up_flows / h) + 1e-9)
    assert np.allclose(loads[:n].sum(), src.size)


@pytest.mark.parametrize(("k", "collective", "routing"), [(4, "all_to_all", "mp-2"), (8, "halving_doubling", "ecmp"),
                                                          (8, "permutation", "mp-8"), (8, "all_to_all", "ecmp")])  # fmt: skip
def test_sampled_hashings_in_blocks_are_the_hashings_one_at_a_time(k, collective, routing):
    """``sample_max_congestion`` on a fat-tree routes its hashings in blocks: each sample is the one ``link_loads``
    gives from that sample's own stream (small steps many to a block, all-to-all one per block)."""
    from workbench._rng import spawn
    from workbench.fabric.metrics import max_congestion, sample_max_congestion

    topo = fat_tree(k)
    step = collective_steps(collective, topo.n_hosts, 2**24, seed=3)[0]
    one_at_a_time = [max_congestion(topo, link_loads(topo, step, routing, seed=r)) for r in spawn(5, 40)]
    np.testing.assert_allclose(
        sample_max_congestion(topo, step, routing, samples=40, seed=5), one_at_a_time, rtol=1e-12
    )
