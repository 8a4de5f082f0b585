"""Leaf-spine (two-tier Clos) topology: a networkx graph for inspection and a compact array form for the fast path.

A leaf-spine fabric has ``leaves`` top-of-rack switches, each with ``hosts_per_leaf`` hosts attached by a NIC link of
``host_gbps``, and ``spines`` spine switches; every leaf has one link of ``uplink_gbps`` to every spine. Its
oversubscription is ``hosts_per_leaf * host_gbps / (spines * uplink_gbps)``. A flow between hosts on different leaves
has exactly ``spines`` paths, one per spine; a rack-local flow has one path through its leaf and never touches a
spine.

Compact array form
------------------
Every *directed* link has an integer id. With ``N = leaves * hosts_per_leaf`` hosts, ``L`` leaves and ``s`` spines:

======================  =====================================  ==========================
link                    id                                     count
======================  =====================================  ==========================
host h -> its leaf      ``h``                                  ``N``   (host uplink, NIC tx)
leaf -> host h          ``N + h``                              ``N``   (host downlink, NIC rx)
leaf l -> spine p       ``2N + l*s + p``                       ``L*s`` (leaf uplink)
spine p -> leaf l       ``2N + L*s + l*s + p``                 ``L*s`` (spine downlink)
======================  =====================================  ==========================

so ``n_links = 2N + 2Ls`` and ``capacity_gbps[link_id]`` is the capacity of every link. A flow from host ``a`` to host
``b`` routed through spine ``p`` traverses, in order, ``[a, 2N + leaf(a)*s + p, 2N + Ls + leaf(b)*s + p, N + b]``;
a rack-local flow traverses ``[a, N + b]``. :func:`path_links` maps arrays of ``(src, dst, spine)`` to these ids with
integer arithmetic only (no per-flow Python), which is what every load computation in :mod:`workbench.fabric` builds
on: loads are ``np.bincount(link_ids, weights=bytes, minlength=n_links)``.

Failures
--------
A failed leaf-spine cable removes both directions (``leaf -> spine`` and ``spine -> leaf``); its capacity becomes 0.
:meth:`LeafSpine.live_paths` says which spines a (src leaf, dst leaf) pair can still use.

Examples
--------
>>> from workbench.fabric import leaf_spine, path_links
>>> topo = leaf_spine(leaves=2, spines=2, hosts_per_leaf=2, host_gbps=100, uplink_gbps=100)
>>> topo.n_hosts, topo.n_links, topo.oversubscription
(4, 16, 1.0)
>>> path_links(topo, [0], [2], [1]).tolist()   # host 0 (leaf 0) -> host 2 (leaf 1) via spine 1
[[0, 9, 15, 6]]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .._contracts import INDICES, AnyOf, Array, Int, Opaque, accepts
from .._validate import integer, positive

__all__ = [
    "LeafSpine",
    "leaf_spine",
    "Topology",
    "path_links",
    "LINK_KINDS",
]

#: Spine indices, -1 for a rack-local flow (which crosses no spine; its link ids are masked by the caller).
_SPINES = AnyOf(Int(ge=-1), Array(integer=True, ge=-1))

#: Link kinds in id order (see the module docstring).
LINK_KINDS = ("host_up", "host_down", "leaf_up", "spine_down")


class Topology:
    """What every fabric topology is (a :class:`LeafSpine`, a :class:`~workbench.fabric.fattree.FatTree`): hosts under
    leaves (``n_hosts``, ``leaves``, ``hosts_per_leaf``) and directed links (``n_links``). A topology other than a
    leaf-spine routes flows on its own paths: it implements ``routed_link_loads(src, dst, size, routing, seed)`` and
    ``routed_connections(src, dst, size, routing)``, which :mod:`workbench.fabric.routing` calls, so the routing code
    never dispatches on a topology's type."""

    __slots__ = ()


Topology.__accepts_as__ = Topology  # type: ignore[attr-defined]  # an annotated LeafSpine accepts any topology


@accepts()
@dataclass(frozen=True)
class LeafSpine(Topology):
    """A leaf-spine fabric; build it with :func:`leaf_spine`.

    Attributes
    ----------
    leaves, spines, hosts_per_leaf : int
    host_gbps, uplink_gbps : float
        NIC and leaf-spine link capacities (each direction).
    failed : tuple of (leaf, spine)
        Failed leaf-spine cables (both directions down), sorted and unique.
    """

    leaves: int
    spines: int
    hosts_per_leaf: int
    host_gbps: float
    uplink_gbps: float
    failed: tuple[tuple[int, int], ...] = field(default=())

    # ---- sizes -----------------------------------------------------------------------------------------------
    @property
    def n_hosts(self) -> int:
        return self.leaves * self.hosts_per_leaf

    @property
    def n_links(self) -> int:
        return 2 * self.n_hosts + 2 * self.leaves * self.spines

    @property
    def oversubscription(self) -> float:
        """``hosts_per_leaf * host_gbps / (spines * uplink_gbps)`` (1.0 is non-blocking)."""
        return self.hosts_per_leaf * self.host_gbps / (self.spines * self.uplink_gbps)

    # ---- id layout ---------------------------------------------------------------------------------------------
    @property
    def leaf_up_base(self) -> int:
        return 2 * self.n_hosts

    @property
    def spine_down_base(self) -> int:
        return 2 * self.n_hosts + self.leaves * self.spines

    @accepts(hosts=INDICES)
    def host_leaf(self, hosts: Any) -> np.ndarray:
        """Leaf index of each host id."""
        return np.asarray(hosts, dtype=np.int64) // self.hosts_per_leaf

    @accepts(leaf=INDICES, spine=_SPINES)
    def leaf_up(self, leaf: Any, spine: Any) -> np.ndarray:
        """Link id of ``leaf -> spine`` (broadcasting arrays)."""
        return self.leaf_up_base + np.asarray(leaf, dtype=np.int64) * self.spines + np.asarray(spine, dtype=np.int64)

    @accepts(spine=_SPINES, leaf=INDICES)
    def spine_down(self, spine: Any, leaf: Any) -> np.ndarray:
        """Link id of ``spine -> leaf`` (broadcasting arrays)."""
        return self.spine_down_base + np.asarray(leaf, dtype=np.int64) * self.spines + np.asarray(spine, dtype=np.int64)

    @cached_property
    def link_kind(self) -> np.ndarray:
        """Kind index (into :data:`LINK_KINDS`) of every link id."""
        n, ls = self.n_hosts, self.leaves * self.spines
        return np.repeat(np.arange(4, dtype=np.int8), [n, n, ls, ls])

    @cached_property
    def live(self) -> np.ndarray:
        """Boolean ``(leaves, spines)``: True where the leaf-spine cable is up."""
        up = np.ones((self.leaves, self.spines), dtype=bool)
        if self.failed:
            f = np.asarray(self.failed, dtype=np.int64)
            up[f[:, 0], f[:, 1]] = False
        return up

    @cached_property
    def capacity_gbps(self) -> np.ndarray:
        """Capacity of every link id in Gbit/s (0 for a failed link)."""
        n = self.n_hosts
        cap = np.empty(self.n_links)
        cap[: 2 * n] = self.host_gbps
        live = self.live.ravel().astype(float)
        cap[2 * n : self.spine_down_base] = self.uplink_gbps * live
        cap[self.spine_down_base :] = self.uplink_gbps * live
        cap.flags.writeable = False
        return cap

    @accepts(src_leaf=INDICES, dst_leaf=INDICES)
    def live_paths(self, src_leaf: Any, dst_leaf: Any) -> np.ndarray:
        """Boolean ``(F, spines)``: spine ``p`` is usable from ``src_leaf`` to ``dst_leaf`` (both cables up)."""
        return self.live[np.asarray(src_leaf, dtype=np.int64)] & self.live[np.asarray(dst_leaf, dtype=np.int64)]

    @accepts()
    def link_table(self) -> Any:
        """A pandas DataFrame describing every link: ``link_id, kind, leaf, spine, host, capacity_gbps``."""
        import pandas as pd

        n, L, s = self.n_hosts, self.leaves, self.spines
        hosts = np.arange(n)
        ls_leaf = np.repeat(np.arange(L), s)
        ls_spine = np.tile(np.arange(s), L)
        leaf = np.concatenate([hosts // self.hosts_per_leaf] * 2 + [ls_leaf] * 2)
        spine = np.concatenate([np.full(2 * n, -1), ls_spine, ls_spine])
        host = np.concatenate([hosts, hosts, np.full(2 * L * s, -1)])
        return pd.DataFrame(
            {
                "link_id": np.arange(self.n_links),
                "kind": np.asarray(LINK_KINDS)[self.link_kind],
                "leaf": leaf,
                "spine": spine,
                "host": host,
                "capacity_gbps": self.capacity_gbps,
            }
        )

    @accepts()
    def to_networkx(self) -> Any:
        """A ``networkx.DiGraph`` of the fabric.

        Nodes are ``("host", h)``, ``("leaf", l)``, ``("spine", p)``; each edge carries ``link_id`` and
        ``capacity_gbps``. Failed cables are absent.
        """
        import networkx as nx

        g = nx.DiGraph()
        n = self.n_hosts
        for h in range(n):
            leaf = h // self.hosts_per_leaf
            g.add_edge(("host", h), ("leaf", leaf), link_id=h, capacity_gbps=self.host_gbps)
            g.add_edge(("leaf", leaf), ("host", h), link_id=n + h, capacity_gbps=self.host_gbps)
        for leaf in range(self.leaves):
            for p in range(self.spines):
                if not self.live[leaf, p]:
                    continue
                g.add_edge(
                    ("leaf", leaf), ("spine", p), link_id=int(self.leaf_up(leaf, p)), capacity_gbps=self.uplink_gbps
                )
                g.add_edge(
                    ("spine", p), ("leaf", leaf), link_id=int(self.spine_down(p, leaf)), capacity_gbps=self.uplink_gbps
                )
        return g

    @accepts(failed=Opaque("(leaf, spine) pairs, checked by leaf_spine"))
    def with_failures(self, failed: Any) -> LeafSpine:
        """A copy with the given ``(leaf, spine)`` cables failed (added to those already failed)."""
        return leaf_spine(
            self.leaves,
            self.spines,
            self.hosts_per_leaf,
            host_gbps=self.host_gbps,
            uplink_gbps=self.uplink_gbps,
            failed_links=list(self.failed) + list(_pairs(failed)),
        )


def _pairs(failed: Any) -> list[tuple[int, int]]:
    arr = np.asarray(failed if failed is not None else [], dtype=float)
    if arr.size == 0:
        return []
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"failed_links must be a sequence of (leaf, spine) pairs, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
        raise TypeError("failed_links must hold integer (leaf, spine) pairs")
    return [(int(a), int(b)) for a, b in arr]


@accepts(failed_links=Opaque("(leaf, spine) pairs, checked against the fabric's size"))
def leaf_spine(
    leaves: int,
    spines: int,
    hosts_per_leaf: int,
    host_gbps: float = 100.0,
    uplink_gbps: float | None = None,
    failed_links: Any = (),
) -> LeafSpine:
    """Build a leaf-spine fabric.

    Parameters
    ----------
    leaves, spines, hosts_per_leaf : int
        Counts, each >= 1.
    host_gbps : float
        NIC capacity per direction (Gbit/s), > 0.
    uplink_gbps : float, optional
        Capacity of each leaf-spine link per direction (Gbit/s), > 0; defaults to ``host_gbps``.
    failed_links : sequence of (leaf, spine)
        Leaf-spine cables that are down (both directions).

    Returns
    -------
    LeafSpine

    Examples
    --------
    >>> topo = leaf_spine(16, 16, 16)            # the paper's 256-GPU fabric, all links equal
    >>> topo.n_hosts, topo.oversubscription
    (256, 1.0)
    >>> leaf_spine(4, 2, 8, host_gbps=100, uplink_gbps=200).oversubscription
    2.0
    """
    leaves = integer("leaves", leaves, minimum=1)
    spines = integer("spines", spines, minimum=1)
    hosts_per_leaf = integer("hosts_per_leaf", hosts_per_leaf, minimum=1)
    host_gbps = positive("host_gbps", host_gbps)
    uplink_gbps = host_gbps if uplink_gbps is None else positive("uplink_gbps", uplink_gbps)
    pairs = sorted(set(_pairs(failed_links)))
    for leaf, spine in pairs:
        if not (0 <= leaf < leaves):
            raise ValueError(f"failed_links: leaf must be in [0, {leaves - 1}], got {leaf}")
        if not (0 <= spine < spines):
            raise ValueError(f"failed_links: spine must be in [0, {spines - 1}], got {spine}")
    return LeafSpine(leaves, spines, hosts_per_leaf, host_gbps, uplink_gbps, tuple(pairs))


@accepts(src=INDICES, dst=INDICES, spine=_SPINES)
def path_links(topology: LeafSpine, src: Any, dst: Any, spine: Any) -> np.ndarray:
    """Link ids traversed by each flow ``src -> dst`` routed through ``spine``; vectorized.

    Parameters
    ----------
    topology : LeafSpine
    src, dst : array of int
        Source and destination host ids, same length ``F``; ``src != dst``.
    spine : array of int
        Spine chosen for each flow (ignored for rack-local flows; may be -1 there).

    Returns
    -------
    numpy.ndarray of int64, shape ``(F, 4)``
        ``[host_up(src), leaf_up(leaf(src), spine), spine_down(spine, leaf(dst)), host_down(dst)]``; the two
        middle entries are ``-1`` for a rack-local flow (it never touches a spine).

    Examples
    --------
    >>> topo = leaf_spine(2, 2, 2)
    >>> path_links(topo, [0, 0], [1, 3], [-1, 0]).tolist()
    [[0, -1, -1, 5], [0, 8, 14, 7]]
    """
    if not isinstance(topology, LeafSpine):
        raise TypeError(f"topology must be a LeafSpine, got {type(topology).__name__}")
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    spine = np.broadcast_to(np.asarray(spine, dtype=np.int64), src.shape).ravel()
    if not (src.shape == dst.shape):
        raise ValueError(f"src and dst must have the same length, got {src.size} and {dst.size}")
    n = topology.n_hosts
    if src.size and (src.min() < 0 or src.max() >= n or dst.min() < 0 or dst.max() >= n):
        raise ValueError(f"host ids must be in [0, {n - 1}]")
    if np.any(src == dst):
        raise ValueError("src and dst must differ for every flow (a host does not send to itself over the fabric)")
    sl, dl = topology.host_leaf(src), topology.host_leaf(dst)
    cross = sl != dl
    if np.any(cross & ((spine < 0) | (spine >= topology.spines))):
        raise ValueError(f"spine must be in [0, {topology.spines - 1}] for every flow that crosses leaves")
    out = np.empty((src.size, 4), dtype=np.int64)
    out[:, 0] = src
    out[:, 3] = n + dst
    out[:, 1] = np.where(cross, topology.leaf_up(sl, spine), -1)
    out[:, 2] = np.where(cross, topology.spine_down(spine, dl), -1)
    return out
