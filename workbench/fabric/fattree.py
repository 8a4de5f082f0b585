"""Three-tier k-ary fat-tree (Al-Fares et al. 2008): topology, compact link numbering and routing by path index.

A k-ary fat-tree (k even) has ``k`` pods; each pod has ``k/2`` edge (top-of-rack) switches with ``k/2`` hosts each
and ``k/2`` aggregation switches, every edge switch linked to every aggregation switch of its pod. There are
``(k/2)^2`` core switches: core ``a*(k/2) + i`` links to aggregation switch ``a`` of every pod. Hosts: ``k^3/4``.

Paths. A flow between two hosts under the same edge switch has 1 path; within a pod, ``k/2`` (one per aggregation
switch); between pods, ``(k/2)^2``: path index ``p`` picks aggregation switch ``a = p div (k/2)`` in both pods and
core ``a*(k/2) + p mod (k/2)``. Every routing of :mod:`workbench.fabric.routing` is expressed over this path index:
ECMP/MP-x hash it, spraying spreads over all of them, and the minimal splitting rule is applied per (source host,
destination edge switch) group with ``s`` = the group's path count (all its flows share one path set, so equal
pieces per path again equal spraying on every link). ``planned`` assigns unsplit flows by two levels of equitable
edge colouring (aggregation switch, then core) for equal-size flows, and greedily (least-congested path, largest
flows first) otherwise. Failures are not modelled on the fat-tree.

Compact array form (``N`` hosts, ``h = k/2``, ``E = A = k^2/2`` edge and aggregation switches):

============================  ======================================  =========
link                          id                                      count
============================  ======================================  =========
host -> edge                  ``host``                                ``N``
edge -> host                  ``N + host``                            ``N``
edge e -> agg a (its pod)     ``2N + e*h + a``                        ``E*h``
agg a -> edge e               ``2N + E*h + e*h + a``                  ``E*h``
agg g -> core (g's row, i)    ``2N + 2E*h + g*h + i``                 ``A*h``
core -> agg g                 ``2N + 2E*h + A*h + g*h + i``           ``A*h``
============================  ======================================  =========

Examples
--------
>>> from workbench.fabric import fat_tree
>>> ft = fat_tree(4)
>>> ft.n_hosts, ft.n_links, ft.n_core
(16, 96, 4)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from .._contracts import INDICES, Array, Opaque, accepts
from .._rng import Seed, generator
from .._validate import integer, positive
from ._colouring import equitable_colours
from ._greedy import greedy_fat_tree_paths
from ._groups import group_ranks
from .topology import Topology

if TYPE_CHECKING:
    from ._routing_kinds import Routing

__all__ = [
    "FatTree",
    "fat_tree",
    "fat_tree_path_links",
    "fat_tree_n_paths",
    "fat_tree_link_loads",
    "fat_tree_connections",
]


@accepts()
@dataclass(frozen=True)
class FatTree(Topology):
    """A k-ary fat-tree; build it with :func:`fat_tree`."""

    k: int
    host_gbps: float
    link_gbps: float

    @property
    def half(self) -> int:
        return self.k // 2

    @property
    def n_hosts(self) -> int:
        return self.k**3 // 4

    @property
    def n_edge(self) -> int:
        return self.k * self.half

    @property
    def n_core(self) -> int:
        return self.half**2

    @property
    def n_links(self) -> int:
        return 2 * self.n_hosts + 4 * self.n_edge * self.half

    @property
    def leaves(self) -> int:
        """Edge (top-of-rack) switches, the fat-tree's leaves."""
        return self.n_edge

    @property
    def hosts_per_leaf(self) -> int:
        return self.half

    @accepts(hosts=INDICES)
    def host_leaf(self, hosts: Any) -> np.ndarray:
        return self.host_edge(hosts)

    @property
    def hosts_per_pod(self) -> int:
        return self.half**2

    @accepts(hosts=INDICES)
    def host_edge(self, hosts: Any) -> np.ndarray:
        return np.asarray(hosts, dtype=np.int64) // self.half

    @accepts(hosts=INDICES)
    def host_pod(self, hosts: Any) -> np.ndarray:
        return np.asarray(hosts, dtype=np.int64) // self.hosts_per_pod

    @cached_property
    def capacity_gbps(self) -> np.ndarray:
        cap = np.full(self.n_links, self.link_gbps)
        cap[: 2 * self.n_hosts] = self.host_gbps
        cap.flags.writeable = False
        return cap

    @cached_property
    def _bases(self) -> tuple[int, int, int, int]:
        n, eh = self.n_hosts, self.n_edge * self.half
        return 2 * n, 2 * n + eh, 2 * n + 2 * eh, 2 * n + 3 * eh

    @accepts()
    def to_networkx(self) -> Any:
        """``networkx.DiGraph`` with nodes ``("host", i)``, ``("edge", e)``, ``("agg", g)``, ``("core", c)``."""
        import networkx as nx

        g = nx.DiGraph()
        n, h = self.n_hosts, self.half
        eu, ad, ac, cd = self._bases
        for host in range(n):
            e = host // h
            g.add_edge(("host", host), ("edge", e), link_id=host, capacity_gbps=self.host_gbps)
            g.add_edge(("edge", e), ("host", host), link_id=n + host, capacity_gbps=self.host_gbps)
        for e in range(self.n_edge):
            pod = e // h
            for a in range(h):
                agg = pod * h + a
                g.add_edge(("edge", e), ("agg", agg), link_id=eu + e * h + a, capacity_gbps=self.link_gbps)
                g.add_edge(("agg", agg), ("edge", e), link_id=ad + e * h + a, capacity_gbps=self.link_gbps)
        for agg in range(self.n_edge):
            a = agg % h
            for i in range(h):
                core = a * h + i
                g.add_edge(("agg", agg), ("core", core), link_id=ac + agg * h + i, capacity_gbps=self.link_gbps)
                g.add_edge(("core", core), ("agg", agg), link_id=cd + agg * h + i, capacity_gbps=self.link_gbps)
        return g

    @accepts(
        src=Array(integer=True, ge=0),
        dst=Array(integer=True, ge=0),
        size=Array(ge=0),
        routing=Opaque("a parsed Routing"),
    )
    def routed_link_loads(
        self, src: np.ndarray, dst: np.ndarray, size: np.ndarray, routing: Routing, seed: Seed = None
    ) -> np.ndarray:
        """Bytes per link under a parsed ``routing`` (:func:`fat_tree_link_loads`)."""
        return fat_tree_link_loads(self, src, dst, size, routing, seed)

    @accepts(
        src=Array(integer=True, ge=0),
        dst=Array(integer=True, ge=0),
        size=Array(ge=0),
        routing=Opaque("a parsed Routing"),
    )
    def routed_connections(self, src: np.ndarray, dst: np.ndarray, size: np.ndarray, routing: Routing) -> np.ndarray:
        """Connections per host under a parsed ``routing`` (:func:`fat_tree_connections`)."""
        return fat_tree_connections(self, src, dst, size, routing)


@accepts()
def fat_tree(k: int, host_gbps: float = 100.0, link_gbps: float | None = None) -> FatTree:
    """Build a k-ary fat-tree (``k`` even, >= 2); ``link_gbps`` (switch-to-switch) defaults to ``host_gbps``.

    Examples
    --------
    >>> fat_tree(8).n_hosts
    128
    """
    k = integer("k", k, minimum=2)
    if k % 2:
        raise ValueError(f"k must be even, got {k}")
    host_gbps = positive("host_gbps", host_gbps)
    link_gbps = host_gbps if link_gbps is None else positive("link_gbps", link_gbps)
    return FatTree(k, host_gbps, link_gbps)


@accepts(src=INDICES, dst=INDICES)
def fat_tree_n_paths(topo: FatTree, src: Any, dst: Any) -> np.ndarray:
    """Number of shortest paths of each flow: 1 (same edge), k/2 (same pod) or (k/2)^2 (across pods).

    Examples
    --------
    >>> fat_tree_n_paths(fat_tree(4), [0, 0, 0], [1, 2, 15]).tolist()
    [1, 2, 4]
    """
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    same_edge = topo.host_edge(src) == topo.host_edge(dst)
    same_pod = topo.host_pod(src) == topo.host_pod(dst)
    return np.where(same_edge, 1, np.where(same_pod, topo.half, topo.half**2)).astype(np.int64)


@accepts(src=INDICES, dst=INDICES, path=INDICES)
def fat_tree_path_links(topo: FatTree, src: Any, dst: Any, path: Any) -> np.ndarray:
    """Link ids of each flow on its path index ``path`` (``0 <= path < n_paths``), shape ``(F, 6)``, -1 padded.

    Columns: host up, edge->agg, agg->core, core->agg, agg->edge, host down (unused hops are -1).

    Examples
    --------
    >>> ft = fat_tree(4)
    >>> fat_tree_path_links(ft, [0], [15], [3]).tolist()
    [[0, 33, 67, 95, 63, 31]]
    """
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    path = np.broadcast_to(np.asarray(path, dtype=np.int64), src.shape)
    n, h = topo.n_hosts, topo.half
    if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        raise ValueError(f"host ids must be in [0, {n - 1}]")
    if np.any(src == dst):
        raise ValueError("src and dst must differ for every flow")
    npaths = fat_tree_n_paths(topo, src, dst)
    if np.any((path < 0) | (path >= npaths)):
        raise ValueError("path must be in [0, n_paths) for every flow")
    eu, ad, ac, cd = topo._bases
    se, de = topo.host_edge(src), topo.host_edge(dst)
    sp, dp = topo.host_pod(src), topo.host_pod(dst)
    inter = npaths == h * h
    intra = npaths == h
    a = np.where(inter, path // h, path)
    i = path % h
    out = np.full((src.size, 6), -1, dtype=np.int64)
    out[:, 0] = src
    out[:, 5] = n + dst
    up_pod = inter | intra
    out[:, 1] = np.where(up_pod, eu + se * h + a, -1)
    out[:, 4] = np.where(up_pod, ad + de * h + a, -1)
    out[:, 2] = np.where(inter, ac + (sp * h + a) * h + i, -1)
    out[:, 3] = np.where(inter, cd + (dp * h + a) * h + i, -1)
    return out


def _bincount_paths(topo: FatTree, links: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
    w = np.broadcast_to(nbytes[:, None], links.shape)
    ok = links >= 0
    return np.bincount(links[ok], weights=w[ok], minlength=topo.n_links).astype(float)


def _minimal_subflows(topo: FatTree, src: np.ndarray, dst: np.ndarray, size: np.ndarray):
    """Minimal splitting per (source host, destination edge) group over the group's paths: (flow, path, bytes)."""
    F = src.size
    key = src * topo.n_edge + topo.host_edge(dst)
    order, starts, counts, group, rank = group_ranks(key)
    size_sorted = size[order]
    if np.any(size_sorted != size_sorted[starts][group]):
        raise ValueError("minimal splitting needs equal-size flows from a source host to a destination edge switch")
    s = fat_tree_n_paths(topo, src[order], dst[order])
    n = counts[group]
    q, r = n // s, n % s
    g = np.gcd(r, s)
    whole = rank < q * s
    pieces = np.where(whole, 1, s // np.where(g == 0, 1, g))
    flow_rep = np.repeat(np.arange(F), pieces)
    t = np.arange(flow_rep.size) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    k = pieces[flow_rep]
    s_rep = s[flow_rep]
    j = (rank - q * s)[flow_rep]
    path = np.where(whole[flow_rep], rank[flow_rep] % s_rep, (j * k + t) % s_rep)
    return order[flow_rep], path, size_sorted[flow_rep] / k


def _greedy_paths(topo: FatTree, src: np.ndarray, dst: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Planned: largest flows first, each on the path whose busiest link would be least loaded (relative)."""
    npaths = fat_tree_n_paths(topo, src, dst)
    ranked = np.lexsort((-npaths, -size))
    bases = np.array(topo._bases, dtype=np.int64)
    return greedy_fat_tree_paths(
        topo.host_edge(src), topo.host_edge(dst), topo.host_pod(src), topo.host_pod(dst), npaths,
        np.asarray(size, dtype=float), ranked, topo.half, bases, topo.capacity_gbps.astype(float),
    )  # fmt: skip


def _planned_paths(topo: FatTree, src: np.ndarray, dst: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Planned path index per flow: two levels of equitable edge colouring for equal-size flows, else greedy.

    Level 1 colours the (source edge, destination edge) multigraph of every flow that leaves its edge switch with
    the ``k/2`` aggregation switches, balancing edge<->aggregation links; level 2 colours the (source aggregation,
    destination aggregation) multigraph of the inter-pod flows with the ``k/2`` cores of that aggregation row.
    """
    if src.size == 0:
        return np.zeros(0, dtype=np.int64)
    if np.any(size != size[0]):
        return _greedy_paths(topo, src, dst, size)
    h = topo.half
    npaths = fat_tree_n_paths(topo, src, dst)
    path = np.zeros(src.size, dtype=np.int64)
    up = np.flatnonzero(npaths > 1)
    agg = equitable_colours(topo.host_edge(src[up]), topo.host_edge(dst[up]), h)
    path[up] = agg
    inter = npaths[up] == h * h
    if inter.any():
        iu = up[inter]
        a = agg[inter]
        core = equitable_colours(topo.host_pod(src[iu]) * h + a, topo.host_pod(dst[iu]) * h + a, h)
        path[iu] = a * h + core
    return path


def _hashed_loads(
    topo: FatTree, src: np.ndarray, dst: np.ndarray, size: np.ndarray, split: int, streams: list
) -> Iterator[np.ndarray]:
    """Bytes per link of one hashing per seed of ``streams`` (each hashing draws its flows' paths from its own
    stream; :func:`fat_tree_link_loads` is the one-stream case), as ``(k, n_links)`` blocks of about 500,000 hop
    entries (larger blocks ran slower: arrays past the processor's cache). The hashings of a block are routed and
    summed in one pass, each link's sum in the same order as one hashing at a time (the same bytes). For
    :func:`workbench.fabric.metrics.sample_max_congestion`: one hashing at a time cost 0.6-0.8 ms on a k = 8 fat-tree
    for a step of 128 flows, now 0.03-0.2 ms (an all-to-all step's 16,256 flows fill a block by themselves and cost
    what they did)."""
    npaths = fat_tree_n_paths(topo, src, dst)
    rep_src, rep_dst = np.repeat(src, split), np.repeat(dst, split)
    nbytes = np.repeat(size / split, split)
    nl = topo.n_links
    chunk = max(1, 500_000 // max(1, rep_src.size * 6))
    for start in range(0, len(streams), chunk):
        block = streams[start : start + chunk]
        k = len(block)
        u = np.stack([generator(r).random((src.size, split)) for r in block])
        path = (u * npaths[None, :, None]).astype(np.int64)
        links = fat_tree_path_links(topo, np.tile(rep_src, k), np.tile(rep_dst, k), path.ravel())
        links = links.reshape(k, rep_src.size, 6)
        ok = links >= 0
        w = np.broadcast_to(nbytes[None, :, None], links.shape)
        shifted = links + (np.arange(k) * nl)[:, None, None]
        yield np.bincount(shifted[ok], weights=w[ok], minlength=k * nl).astype(float).reshape(k, nl)


@accepts(
    topo=Opaque("a FatTree"),
    src=Array(integer=True, ge=0),
    dst=Array(integer=True, ge=0),
    size=Array(ge=0),
    routing=Opaque("a parsed Routing"),
)
def fat_tree_link_loads(
    topo: FatTree, src: np.ndarray, dst: np.ndarray, size: np.ndarray, routing: Routing, seed: Seed = None
) -> np.ndarray:
    """Bytes per link of the flows under a parsed ``routing`` on a fat-tree (see the module docstring).

    Examples
    --------
    >>> from workbench.fabric.routing import parse_routing
    >>> t, src, dst = fat_tree(4), np.array([0, 1]), np.array([8, 15])
    >>> float(fat_tree_link_loads(t, src, dst, np.array([1e6, 2e6]), parse_routing("ecmp"), seed=0).sum())
    18000000.0
    """
    kind, x = routing.kind, routing.split
    if routing.hashed:
        return next(_hashed_loads(topo, src, dst, size, x, [seed]))[0]
    npaths = fat_tree_n_paths(topo, src, dst)
    if kind == "spray":
        rep = np.repeat(np.arange(src.size), npaths)
        path = np.arange(rep.size) - np.repeat(np.cumsum(npaths) - npaths, npaths)
        links = fat_tree_path_links(topo, src[rep], dst[rep], path)
        return _bincount_paths(topo, links, size[rep] / npaths[rep])
    if kind == "minimal":
        f, path, b = _minimal_subflows(topo, src, dst, size)
        return _bincount_paths(topo, fat_tree_path_links(topo, src[f], dst[f], path), b)
    if kind == "planned":
        path = _planned_paths(topo, src, dst, size)
        return _bincount_paths(topo, fat_tree_path_links(topo, src, dst, path), size)
    raise ValueError(f"unknown routing kind {kind!r}")


@accepts(
    topo=Opaque("a FatTree"),
    src=Array(integer=True, ge=0),
    dst=Array(integer=True, ge=0),
    size=Array(ge=0),
    routing=Opaque("a parsed Routing"),
)
def fat_tree_connections(
    topo: FatTree, src: np.ndarray, dst: np.ndarray, size: np.ndarray, routing: Routing
) -> np.ndarray:
    """Connections per host under a parsed ``routing`` (see :func:`workbench.fabric.connections_per_host`).

    Examples
    --------
    >>> from workbench.fabric.routing import parse_routing
    >>> fat_tree_connections(fat_tree(4), np.array([0, 1]), np.array([8, 15]), np.array([1e6, 2e6]),
    ...                      parse_routing("ecmp")).tolist()[:3]
    [1, 1, 0]
    """
    n = topo.n_hosts
    per_flow = np.bincount(src, minlength=n)
    if routing.kind == "mp":
        return per_flow * routing.split
    if routing.kind != "minimal":
        return per_flow
    f, _, _ = _minimal_subflows(topo, src, dst, size)
    return np.bincount(src[f], minlength=n)
