"""Routing in a leaf-spine fabric (how each flow's paths are chosen) and the per-link loads it produces, as arrays.

Routings (Addanki, Goyal, Marinos 2024; Dong et al. 2024 for planned paths), named by the strings of
:data:`ROUTINGS` and parsed once by :func:`parse_routing` into a :class:`Routing` record:

- ``"ecmp"``: each flow is hashed uniformly to one live spine (one path, one connection).
- ``"mp-x"`` (e.g. ``"mp-8"``): each flow is split into ``x`` equal subflows (``x`` connections), each hashed
  independently, as multipath transports (MP-RDMA, MPTCP) do.
- ``"spray"``: ideal packet spraying, fluid: each flow is spread in equal shares over all live paths of its leaf pair.
- ``"minimal"``: the paper's minimal splitting rule. For the ``n`` equal flows (size ``f``) that one source host
  sends to one destination leaf in a step, with ``s`` live paths, ``q = n div s``, ``r = n mod s``,
  ``g = gcd(r, s)``: ``q`` whole flows go on every spine and each of the ``r`` leftover flows is split into ``s/g``
  equal pieces, ``r/g`` pieces per spine (piece ``t`` of leftover flow ``j`` on spine ``(j*s/g + t) mod s``). Every
  uplink and downlink then carries exactly what ideal spraying puts there, with ``n + r(s/g - 1)`` subflows, and
  ``s/g`` is the smallest equal split that can do so (``r*k`` pieces spread evenly need ``s | r*k``).
- ``"planned"``: C4P-style global planning of *unsplit* flows: a spine per flow that minimizes the most-loaded
  uplink and downlink. For equal-size flows without failures it is optimal: ``floor(c/s)`` flows of each leaf pair
  go on every spine and the leftovers are an equitable edge colouring of the bipartite (src leaf, dst leaf)
  multigraph with ``s`` colours (split every vertex into copies of degree <= s, then Konig's alternating-path
  colouring), so each uplink of leaf ``a`` carries ``ceil(U_a/s)`` or fewer flows (the lower bound). With failed
  links it falls back to a greedy least-loaded assignment. The planner is a sequential combinatorial algorithm over
  the leftover flows, run once per step like C4P's controller; it is not on the hot path of the load computation.

Rack-local flows never touch a spine under any routing. Failed cables: every routing uses only live paths (routing
has converged and withdrawn dead next hops); hashing routings still hash uniformly over those
(:func:`hash_spines`), blind to the asymmetry the failure creates, while ``spray``/``minimal``/``planned`` spread or
plan over them.

Loads are bytes per directed link (see :mod:`workbench.fabric.topology` for the ids), computed with
``np.bincount`` over flow -> link index arrays: host links from the flows themselves, spine links from the
(subflow, spine) assignment.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._contracts import INDICES, AnyOf, Array, Choice, Int, accepts
from .._rng import Seed, generator
from .._validate import integer
from ._colouring import equitable_colours
from ._greedy import greedy_spines
from ._routing_kinds import ROUTINGS, Routing, parse_routing
from ._splitting import check_minimal_demand, live_spines, min_split_pieces, minimal_split_subflows
from .collectives import Step, place_ranks
from .topology import LeafSpine, Topology

__all__ = [
    "ROUTINGS",
    "Routing",
    "parse_routing",
    "as_host_step",
    "assign_paths",
    "hash_spines",
    "link_loads",
    "subflow_loads",
    "connections_per_host",
    "minimal_split_subflows",
    "min_split_pieces",
]


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def as_host_step(topology: LeafSpine, demand: Step, placement: Any = None, seed: Seed = None) -> Step:
    """Validate ``demand`` against ``topology`` and map its ranks to hosts.

    ``placement`` is ``None`` (ids are host ids), ``"linear"``/``"strided"``/``"random"`` (see
    :func:`~workbench.fabric.collectives.place_ranks`) or an array giving the host of each rank.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> ring = collective_steps("ring", 4, 400)[0]
    >>> as_host_step(leaf_spine(2, 2, 2), ring, "strided").src.tolist()
    [0, 2, 1, 3]
    """
    if not isinstance(topology, Topology):
        raise TypeError(f"topology must be a LeafSpine or FatTree, got {type(topology).__name__}")
    if not isinstance(demand, Step):
        raise TypeError(f"demand must be a Step (from collective_steps or Step(...)), got {type(demand).__name__}")
    if demand.src.shape != demand.dst.shape or demand.src.shape != demand.size_bytes.shape:
        raise ValueError("demand.src, demand.dst and demand.size_bytes must have the same length")
    if demand.n_flows:
        if not np.all(np.isfinite(demand.size_bytes)) or demand.size_bytes.min() < 0:
            raise ValueError("demand.size_bytes must be finite and >= 0")
        top = int(max(demand.src.max(), demand.dst.max()))
        if min(int(demand.src.min()), int(demand.dst.min())) < 0:
            raise ValueError("demand rank/host ids must be >= 0")
    else:
        top = -1
    if placement is None:
        if top >= topology.n_hosts:
            raise ValueError(
                f"demand uses host/rank {top} but the topology has {topology.n_hosts} hosts (more ranks than hosts)"
            )
        step = demand
    else:
        if isinstance(placement, str):
            hosts = place_ranks(topology, top + 1, placement, seed=seed)
        else:
            hosts = np.asarray(placement, dtype=np.int64)
            if hosts.ndim != 1 or (hosts.size and (hosts.min() < 0 or hosts.max() >= topology.n_hosts)):
                raise ValueError(f"placement must be a 1-D array of host ids in [0, {topology.n_hosts - 1}]")
            if np.unique(hosts).size != hosts.size:
                raise ValueError("placement must map ranks to distinct hosts")
        step = demand.on_hosts(hosts)
    if step.n_flows and np.any(step.src == step.dst):
        raise ValueError("demand has a flow from a host to itself")
    return step


# ---------------------------------------------------------------------------------------------------------------
# path choice helpers


def _planned_spines(topology: LeafSpine, sl: np.ndarray, dl: np.ndarray, size_bytes: np.ndarray) -> np.ndarray:
    """Spine per cross-leaf flow for the planned routing (see the module docstring)."""
    if sl.size == 0:
        return np.zeros(0, dtype=np.int64)
    if topology.failed or np.any(size_bytes != size_bytes[0]):
        return _greedy_spines(topology, sl, dl, size_bytes)
    return equitable_colours(sl, dl, topology.spines)


def _greedy_spines(topology: LeafSpine, sl: np.ndarray, dl: np.ndarray, size_bytes: np.ndarray) -> np.ndarray:
    """Greedy planned assignment: largest flows first, most constrained pairs first, onto the least-loaded path."""
    count, order = live_spines(topology, sl, dl)
    ranked = np.lexsort((count, -size_bytes))
    return greedy_spines(
        sl, dl, np.asarray(size_bytes, dtype=float), count, order.by_pair, order.pair, ranked, topology.leaves,
        topology.spines, float(topology.uplink_gbps),
    )  # fmt: skip


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def assign_paths(
    topology: LeafSpine, demand: Step, routing: str | Routing, seed: Seed = None, placement: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The subflows a routing creates for the cross-leaf flows: ``(flow index, spine, bytes)`` arrays.

    ``flow index`` refers to the flows of ``demand`` (after placement). ``ecmp`` gives one subflow per flow on its
    hashed spine, ``mp-x`` ``x`` hashed subflows of ``1/x`` the bytes, ``spray`` one fluid share per live spine,
    ``minimal`` the pieces of the splitting rule and ``planned`` one subflow per flow on its planned spine.
    Rack-local flows are not listed (they use no spine). ``seed`` drives the hashing (and a ``"random"``
    placement).

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> topo = leaf_spine(2, 4, 4)
    >>> step = collective_steps("halving_doubling", 8, 8_000_000)[0]   # crosses leaves
    >>> flow, spine, nbytes = assign_paths(topo, step, "minimal")
    >>> np.bincount(spine, weights=nbytes).tolist()                       # 8 flows of 4 MB over 4 spines
    [8000000.0, 8000000.0, 8000000.0, 8000000.0]
    """
    routing = parse_routing(routing)
    kind, x = routing.kind, routing.split
    if not isinstance(topology, LeafSpine):
        raise TypeError(
            f"assign_paths needs a LeafSpine (use link_loads for a fat-tree), got {type(topology).__name__}"
        )
    step = as_host_step(topology, demand, placement, seed)
    sl, dl = topology.host_leaf(step.src), topology.host_leaf(step.dst)
    cross = np.flatnonzero(sl != dl)
    size = step.size_bytes[cross]
    csl, cdl = sl[cross], dl[cross]
    if kind == "minimal":
        f, sp, b = minimal_split_subflows(topology, step.src[cross], step.dst[cross], size)
        return cross[f], sp, b
    if kind == "planned":
        return cross, _planned_spines(topology, csl, cdl, size), size
    if kind == "spray":
        if topology.failed:
            count, live = live_spines(topology, csl, cdl)
        else:
            count = np.full(cross.size, topology.spines)
        reps = np.repeat(np.arange(cross.size), count)
        slot = np.arange(reps.size) - np.repeat(np.cumsum(count) - count, count)
        spine = live[reps, slot].astype(np.int64) if topology.failed else slot
        return cross[reps], spine, size[reps] / count[reps]
    spines = hash_spines(topology, csl, cdl, x, seed)
    return np.repeat(cross, x), spines.ravel(), np.repeat(size / x, x)


@accepts(src_leaf=INDICES, dst_leaf=INDICES, split=Int(ge=1, le=1024), samples=Int(ge=1, le=10**6, optional=True))
def hash_spines(
    topology: LeafSpine, src_leaf: Any, dst_leaf: Any, split: int = 1, seed: Seed = None, samples: int | None = None
) -> np.ndarray:
    """Spines drawn by hashing: each of ``split`` subflows of every flow uniformly on one live path of its leaf pair.

    This is the path choice of ``ecmp`` (``split=1``) and ``mp-x`` (``split=x``), shared by :func:`assign_paths`,
    :func:`link_loads` and :func:`~workbench.fabric.sample_max_congestion` (which draws ``samples`` independent
    hashings at once).

    Returns
    -------
    numpy.ndarray of int64
        Shape ``(F, split)``, or ``(samples, F, split)`` when ``samples`` is given.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine
    >>> topo = leaf_spine(2, 4, 1, failed_links=[(0, 0), (0, 1)])
    >>> sorted(set(hash_spines(topo, np.zeros(100, int), np.ones(100, int), seed=0).ravel().tolist()))
    [2, 3]
    """
    sl = np.asarray(src_leaf, dtype=np.int64)
    dl = np.asarray(dst_leaf, dtype=np.int64)
    if sl.ndim != 1 or sl.shape != dl.shape:
        raise ValueError(f"src_leaf and dst_leaf must be 1-D of equal length, got shapes {sl.shape} and {dl.shape}")
    if sl.size and (min(sl.min(), dl.min()) < 0 or max(sl.max(), dl.max()) >= topology.leaves):
        raise ValueError(f"src_leaf and dst_leaf must be leaf ids in [0, {topology.leaves - 1}]")
    split = integer("split", split, minimum=1)
    shape = (sl.size, split) if samples is None else (integer("samples", samples, minimum=1), sl.size, split)
    u = generator(seed).random(shape)
    if not topology.failed:
        return (u * topology.spines).astype(np.int64)
    count, order = live_spines(topology, sl, dl)
    idx = (u * count[:, None]).astype(np.int64)
    rows = np.arange(sl.size)[:, None]
    return order[rows, idx].astype(np.int64)


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def link_loads(
    topology: LeafSpine, demand: Step, routing: str | Routing, seed: Seed = None, placement: Any = None
) -> np.ndarray:
    """Bytes carried by every directed link when ``demand`` is routed with ``routing``.

    Parameters
    ----------
    topology : LeafSpine or FatTree
    demand : Step
        Flows (one step of a collective, or any ``Step``).
    routing : str or Routing
        ``"ecmp"``, ``"mp-x"``, ``"spray"``, ``"minimal"`` or ``"planned"`` (see the module docstring).
    seed : int, Generator or None
        Hashing randomness for ``ecmp``/``mp-x`` (and ``"random"`` placement).
    placement : None, str or array
        Rank -> host mapping (see :func:`as_host_step`).

    Returns
    -------
    numpy.ndarray, shape ``(topology.n_links,)``
        Bytes per link id. Every flow's bytes appear once on each link of its path(s).

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> topo = leaf_spine(2, 2, 2)
    >>> step = collective_steps("permutation", 4, 1000, seed=0)[0]
    >>> loads = link_loads(topo, step, "spray")
    >>> float(loads[: topo.n_hosts].sum())          # each host sends 1000 bytes
    4000.0
    """
    routing = parse_routing(routing)
    kind, x = routing.kind, routing.split
    step = as_host_step(topology, demand, placement, seed)
    if not isinstance(topology, LeafSpine):  # another topology routes on its own paths
        return topology.routed_link_loads(step.src, step.dst, step.size_bytes, routing, seed)
    nl = topology.n_links
    n = topology.n_hosts
    loads = _host_loads(step, n)
    ls = topology.leaves * topology.spines
    sl, dl = topology.host_leaf(step.src), topology.host_leaf(step.dst)
    cross = sl != dl
    if kind == "spray":
        spine_part = _spray_spine_loads(topology, sl[cross], dl[cross], step.size_bytes[cross])
    else:
        if routing.hashed:
            csl, cdl, csize = sl[cross], dl[cross], step.size_bytes[cross]
            spines = hash_spines(topology, csl, cdl, x, seed)
            up = (csl * topology.spines)[:, None] + spines
            down = ls + (cdl * topology.spines)[:, None] + spines
            w = np.broadcast_to((csize / x)[:, None], spines.shape)
            spine_part = np.bincount(up.ravel(), weights=w.ravel(), minlength=2 * ls).astype(float)
            spine_part += np.bincount(down.ravel(), weights=w.ravel(), minlength=2 * ls)
        elif kind == "minimal":
            # the rule puts, on each of a group's s live spines, q whole flows and r/g pieces of g/s of a flow: n/s of
            # the group's bytes (its definition, _splitting's notes). So its spine loads are the groups' bytes spread
            # over their live spines, summed per leaf pair, without listing the pieces: there are up to F x s of them
            # (82 M for one all-to-all step of 448 hosts over 409 spines, which passed 12 GB). The pieces themselves
            # are assign_paths'; tests check that they carry these loads.
            check_minimal_demand(topology, step.src[cross], dl[cross], step.size_bytes[cross])
            spine_part = _spray_spine_loads(topology, sl[cross], dl[cross], step.size_bytes[cross])
        else:
            spine_part = _subflow_spine_loads(topology, step, routing)
    out = np.concatenate([loads, spine_part])
    assert out.size == nl
    return out


def _subflow_spine_loads(topology: LeafSpine, step: Step, routing: Routing) -> np.ndarray:
    f, sp, b = assign_paths(topology, step, routing)
    ls = topology.leaves * topology.spines
    up = topology.host_leaf(step.src)[f] * topology.spines + sp
    down = ls + topology.host_leaf(step.dst)[f] * topology.spines + sp
    return (np.bincount(up, weights=b, minlength=2 * ls) + np.bincount(down, weights=b, minlength=2 * ls)).astype(float)


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def subflow_loads(
    topology: LeafSpine, demand: Step, routing: str | Routing, seed: Seed = None, placement: Any = None
) -> np.ndarray:
    """Bytes on every link of a leaf-spine, added up from the routing's explicit subflows (:func:`assign_paths`):
    what :func:`link_loads` computes in closed form where it can (spraying and the minimal rule per leaf pair,
    hashing per flow). Checks of a rule's loads (``minimal-split-vs-spray``) read its pieces through this.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> topo = leaf_spine(2, 3, 2)
    >>> step = collective_steps("all_to_all", 4, 6_000)[0]
    >>> bool(np.allclose(subflow_loads(topo, step, "minimal"), link_loads(topo, step, "spray")))
    True
    """
    routing = parse_routing(routing)
    if not isinstance(topology, LeafSpine):
        raise TypeError(f"subflow_loads needs a LeafSpine, got {type(topology).__name__}")
    step = as_host_step(topology, demand, placement, seed)
    return np.concatenate([_host_loads(step, topology.n_hosts), _subflow_spine_loads(topology, step, routing)])


def _host_loads(step: Step, n: int) -> np.ndarray:
    """Bytes on every host's NIC uplink, then on every host's downlink (link ids ``0 .. 2n - 1``)."""
    return np.concatenate(
        [
            np.bincount(step.src, weights=step.size_bytes, minlength=n),
            np.bincount(step.dst, weights=step.size_bytes, minlength=n),
        ]
    ).astype(float)


def _spray_spine_loads(topology: LeafSpine, sl: np.ndarray, dl: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Fluid spraying on the spine links via the (src leaf, dst leaf) byte matrix: ``live * (W @ live)``."""
    L = topology.leaves
    pair = np.bincount(sl * L + dl, weights=size, minlength=L * L).astype(float).reshape(L, L)
    live = topology.live.astype(float)
    paths = live @ live.T  # live spines per leaf pair
    used = pair > 0
    if np.any(used & (paths == 0)):
        a, b = np.argwhere(used & (paths == 0))[0]
        raise ValueError(f"no live path from leaf {a} to leaf {b} (all its spine links failed)")
    w = np.divide(pair, paths, out=np.zeros_like(pair), where=paths > 0)
    up = live * (w @ live)
    down = live * (w.T @ live)
    return np.concatenate([up.ravel(), down.ravel()])


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def connections_per_host(
    topology: LeafSpine, demand: Step, routing: str | Routing, placement: Any = None
) -> np.ndarray:
    """Connections (queue pairs) each host opens for ``demand`` under ``routing``.

    ``ecmp``, ``spray`` (the NIC sprays packets of one connection) and ``planned``: one per flow; ``mp-x``: ``x`` per
    flow; ``minimal``: one per subflow of the rule, ``n + r(s/g - 1)`` per (source, destination leaf) group (rack-local
    flows: one).

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> topo = leaf_spine(32, 16, 16)                                  # 512 GPUs
    >>> a2a = collective_steps("all_to_all", 512, 2**20)[0]
    >>> int(connections_per_host(topo, a2a, "mp-8").max()), int(connections_per_host(topo, a2a, "minimal").max())
    (4088, 511)
    """
    routing = parse_routing(routing)
    kind, x = routing.kind, routing.split
    step = as_host_step(topology, demand, placement)
    if not isinstance(topology, LeafSpine):
        return topology.routed_connections(step.src, step.dst, step.size_bytes, routing)
    n = topology.n_hosts
    per_flow = np.bincount(step.src, minlength=n)
    if kind == "mp":
        return per_flow * x
    if kind != "minimal":
        return per_flow
    sl, dl = topology.host_leaf(step.src), topology.host_leaf(step.dst)
    cross = sl != dl
    f, _, _ = minimal_split_subflows(topology, step.src[cross], step.dst[cross], step.size_bytes[cross])
    local = np.bincount(step.src[~cross], minlength=n)
    return local + np.bincount(step.src[cross][f], minlength=n)
