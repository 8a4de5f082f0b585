"""Topology: link numbering, networkx view (independent path enumeration), failures and bad input."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from workbench.fabric import LINK_KINDS, leaf_spine, path_links


def _nx_path_ids(g, src, dst):
    """Link ids of every simple path host src -> host dst, keyed by the spine used (None if rack-local)."""
    out = {}
    for path in nx.all_simple_paths(g, ("host", src), ("host", dst), cutoff=4):
        if any(n[0] == "host" for n in path[1:-1]):
            continue
        ids = [g.edges[a, b]["link_id"] for a, b in itertools.pairwise(path)]
        spines = [n[1] for n in path if n[0] == "spine"]
        out[spines[0] if spines else None] = ids
    return out


@pytest.mark.parametrize("dims", [(2, 2, 2), (3, 4, 2), (4, 3, 3)])
def test_path_links_match_networkx_enumeration(dims):
    topo = leaf_spine(*dims)
    g = topo.to_networkx()
    n = topo.n_hosts
    for src in range(n):
        for dst in range(n):
            if src == dst:
                continue
            paths = _nx_path_ids(g, src, dst)
            if topo.host_leaf(src) == topo.host_leaf(dst):
                assert list(paths) == [None]
                got = path_links(topo, [src], [dst], [-1])[0]
                assert got[[0, 3]].tolist() == paths[None] and got[1] == got[2] == -1
            else:
                assert sorted(paths) == list(range(topo.spines))
                got = path_links(topo, np.full(topo.spines, src), np.full(topo.spines, dst), np.arange(topo.spines))
                for p in range(topo.spines):
                    assert got[p].tolist() == paths[p]


def test_link_ids_are_a_bijection_with_graph_edges():
    topo = leaf_spine(3, 2, 4, host_gbps=100, uplink_gbps=400)
    g = topo.to_networkx()
    ids = sorted(d["link_id"] for _, _, d in g.edges(data=True))
    assert ids == list(range(topo.n_links))
    for _, _, d in g.edges(data=True):
        assert d["capacity_gbps"] == topo.capacity_gbps[d["link_id"]]
    table = topo.link_table()
    assert len(table) == topo.n_links
    assert (table.kind.value_counts()[list(LINK_KINDS)] == [12, 12, 6, 6]).all()


def test_oversubscription_and_capacity():
    topo = leaf_spine(4, 2, 8, host_gbps=100, uplink_gbps=200)
    assert topo.oversubscription == 2.0
    assert topo.capacity_gbps[: 2 * topo.n_hosts].tolist() == [100.0] * 64
    assert set(topo.capacity_gbps[topo.leaf_up_base :]) == {200.0}
    assert leaf_spine(2, 2, 2).uplink_gbps == 100.0  # defaults to host_gbps


def test_failures_remove_both_directions():
    topo = leaf_spine(3, 2, 2, failed_links=[(1, 0), (1, 0)])
    assert topo.failed == ((1, 0),)
    assert topo.capacity_gbps[topo.leaf_up(1, 0)] == 0 and topo.capacity_gbps[topo.spine_down(0, 1)] == 0
    g = topo.to_networkx()
    assert not g.has_edge(("leaf", 1), ("spine", 0)) and not g.has_edge(("spine", 0), ("leaf", 1))
    assert topo.live_paths([0, 1], [2, 2]).tolist() == [[True, True], [False, True]]
    assert topo.with_failures([(2, 1)]).failed == ((1, 0), (2, 1))


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"leaves": 2, "spines": 0, "hosts_per_leaf": 2}, ValueError, "spines"),
        ({"leaves": 0, "spines": 2, "hosts_per_leaf": 2}, ValueError, "leaves"),
        ({"leaves": 2, "spines": 2, "hosts_per_leaf": 2.5}, TypeError, "hosts_per_leaf"),
        ({"leaves": 2, "spines": 2, "hosts_per_leaf": 2, "host_gbps": 0}, ValueError, "host_gbps"),
        ({"leaves": 2, "spines": 2, "hosts_per_leaf": 2, "uplink_gbps": -1}, ValueError, "uplink_gbps"),
        ({"leaves": 2, "spines": 2, "hosts_per_leaf": 2, "failed_links": [(2, 0)]}, ValueError, "leaf"),
        ({"leaves": 2, "spines": 2, "hosts_per_leaf": 2, "failed_links": [(0, 5)]}, ValueError, "spine"),
        ({"leaves": 2, "spines": 2, "hosts_per_leaf": 2, "failed_links": [0, 1]}, ValueError, "pairs"),
    ],
)
def test_bad_topology_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        leaf_spine(**kwargs)


def test_bad_path_arguments():
    topo = leaf_spine(2, 2, 2)
    with pytest.raises(ValueError, match="differ"):
        path_links(topo, [0], [0], [0])
    with pytest.raises(ValueError, match="host ids"):
        path_links(topo, [0], [4], [0])
    with pytest.raises(ValueError, match="spine"):
        path_links(topo, [0], [2], [2])
    with pytest.raises(TypeError, match="topology must be a Topology"):
        path_links("fabric", [0], [2], [0])
