"""Congestion and completion-time metrics over link loads.

The fluid model: in a step all flows start together and every link drains its bytes at its capacity, so the step
ends when the most loaded link (relative to its capacity) drains. That time is the step's *max congestion*

    T = max over links of load_bytes * 8 / (capacity_gbps * 1e9)  seconds,

which includes the NIC links (the NIC bound). Ideal packet spraying gives the smallest T any routing can reach in
a leaf-spine with equal paths; a routing's *congestion ratio* is its T over the sprayed T. A collective's time is
``sum over steps of repeat * (T_step + latency_s)``. Hashing routings are random; :func:`sample_max_congestion` draws
many independent hashings at once (one ``bincount`` over ``samples x spine links``) so expectations over the hash
are Monte-Carlo means. For a step whose leaves are independent balls-into-bins experiments the expectation is also
exact, by :func:`workbench.fabric.expected_max_load` with ``groups`` (:func:`exact_congestion_ratio`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._contracts import AnyOf, Array, Choice, accepts
from .._rng import Seed, generator, spawn
from .._validate import integer, nonnegative
from .ballsbins import max_load_cdf
from .collectives import Step, collective_steps, place_ranks
from .fattree import FatTree, _hashed_loads
from .routing import Routing, as_host_step, hash_spines, link_loads, parse_routing
from .topology import LeafSpine

__all__ = [
    "link_times_s",
    "max_congestion",
    "sample_max_congestion",
    "congestion_ratio",
    "worst_step_ratio",
    "collective_time_s",
    "collective_time_vs_size",
    "exact_congestion_ratio",
    "has_exact_ratio",
    "busiest_step",
    "spine_link_matrix",
    "uplink_load_table",
]

_BITS = 8.0 / 1e9  # bytes -> Gbit


def _drain_s(loads: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Seconds to drain ``loads`` (bytes, last axis one per link) over links of ``cap`` Gbit/s: 0 when idle, ``inf``
    for load on a failed (0 Gbit/s) link."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(loads > 0, loads * _BITS / cap, 0.0)


@accepts()
def link_times_s(topology: LeafSpine, loads: np.ndarray) -> np.ndarray:
    """Seconds each link needs to drain its load (``inf`` for load on a failed link, 0 for an idle one).

    Examples
    --------
    >>> from workbench.fabric import leaf_spine
    >>> topo = leaf_spine(1, 1, 2, host_gbps=8)
    >>> link_times_s(topo, np.array([1e9, 0, 0, 1e9, 0, 0])).tolist()
    [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    """
    loads = np.asarray(loads, dtype=float)
    if loads.shape != (topology.n_links,):
        raise ValueError(f"loads must have shape ({topology.n_links},), got {loads.shape}")
    if np.any(loads < 0) or not np.all(np.isfinite(loads)):
        raise ValueError("loads must be finite and >= 0")
    return _drain_s(loads, topology.capacity_gbps)


@accepts()
def max_congestion(topology: LeafSpine, loads: np.ndarray) -> float:
    """Max over links of load / capacity, in seconds: the fluid completion time of the step that made ``loads``.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps, link_loads
    >>> topo = leaf_spine(16, 16, 16, host_gbps=100)
    >>> step = collective_steps("halving_doubling", 256, 2**30)[0]
    >>> ideal = max_congestion(topo, link_loads(topo, step, "spray"))
    >>> round(max_congestion(topo, link_loads(topo, step, "minimal")) / ideal, 12)
    1.0
    """
    return float(link_times_s(topology, loads).max(initial=0.0))


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def sample_max_congestion(
    topology: LeafSpine,
    demand: Step,
    routing: str | Routing,
    samples: int = 1000,
    seed: Seed = None,
    placement: Any = None,
) -> np.ndarray:
    """Max congestion (seconds) of ``samples`` independent hashings of ``demand`` (vectorized over samples).

    Deterministic routings (``spray``, ``minimal``, ``planned``) return the same value ``samples`` times.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> topo = leaf_spine(16, 16, 16)
    >>> step = collective_steps("halving_doubling", 256, 2**30)[0]
    >>> t = sample_max_congestion(topo, step, "ecmp", samples=2000, seed=0)
    >>> ideal = sample_max_congestion(topo, step, "spray", samples=1)[0]
    >>> bool(4.3 < (t / ideal).mean() < 4.7)                                # exact: 4.514
    True
    """
    routing = parse_routing(routing)
    x = routing.split
    samples = integer("samples", samples, minimum=1)
    step = as_host_step(topology, demand, placement, seed)
    if not routing.hashed:
        return np.full(samples, max_congestion(topology, link_loads(topology, step, routing)))
    if isinstance(topology, FatTree):  # path-index routing: each hashing from its own stream, in blocks of hashings
        blocks = _hashed_loads(topology, step.src, step.dst, step.size_bytes, x, spawn(seed, samples))
        return np.concatenate([_drain_s(b, topology.capacity_gbps).max(axis=1, initial=0.0) for b in blocks])
    rng = generator(seed)
    n, s, ls = topology.n_hosts, topology.spines, topology.leaves * topology.spines
    host = np.concatenate(
        [
            np.bincount(step.src, weights=step.size_bytes, minlength=n),
            np.bincount(step.dst, weights=step.size_bytes, minlength=n),
        ]
    )
    host_t = float((host * _BITS / topology.host_gbps).max(initial=0.0))
    sl, dl = topology.host_leaf(step.src), topology.host_leaf(step.dst)
    cross = sl != dl
    csl, cdl, w = sl[cross], dl[cross], step.size_bytes[cross] / x
    out = np.full(samples, host_t)
    if csl.size == 0:
        return out
    cap = topology.capacity_gbps[2 * n :]
    chunk = max(1, 4_000_000 // max(1, csl.size * x))
    up_base = (csl * s)[:, None]
    down_base = ls + (cdl * s)[:, None]
    wb = np.broadcast_to(w[:, None], (csl.size, x))
    for start in range(0, samples, chunk):
        k = min(chunk, samples - start)
        sp = hash_spines(topology, csl, cdl, x, rng, samples=k)  # (k, F, x)
        off = (np.arange(k) * 2 * ls)[:, None, None]
        ww = np.broadcast_to(wb, sp.shape).ravel()
        loads = np.bincount((off + up_base + sp).ravel(), weights=ww, minlength=2 * ls * k)
        loads += np.bincount((off + down_base + sp).ravel(), weights=ww, minlength=2 * ls * k)
        loads = loads.reshape(k, 2 * ls)
        out[start : start + k] = np.maximum(host_t, _drain_s(loads, cap).max(axis=1))
    return out


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def congestion_ratio(
    topology: LeafSpine,
    demand: Step,
    routing: str | Routing,
    samples: int = 1000,
    seed: Seed = None,
    placement: Any = None,
) -> float:
    """Mean over hashings of the routing's max congestion divided by ideal spraying's (1.0 means ideal).

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> topo = leaf_spine(16, 16, 16)
    >>> ring = collective_steps("ring", 256, 2**30)[0]
    >>> congestion_ratio(topo, ring, "ecmp", samples=100, seed=0)    # rank-ordered ring: ideal under any routing
    1.0
    """
    step = as_host_step(topology, demand, placement, seed)
    ideal = max_congestion(topology, link_loads(topology, step, "spray"))
    if ideal == 0:
        return 1.0
    return float(np.mean(sample_max_congestion(topology, step, routing, samples, seed) / ideal))


def _leaf_matching(topology: LeafSpine, step: Step) -> tuple[int, int, float] | None:
    """``(flows per leaf pair, leaf pairs, flow bytes)`` when ``step``'s cross-leaf flows pair the leaves (every
    sending leaf sends all of them to one leaf, every receiving leaf hears from one leaf, equal counts and sizes) on a
    leaf-spine without failures; otherwise ``None``."""
    if isinstance(topology, FatTree) or topology.failed:
        return None
    sl, dl = topology.host_leaf(step.src), topology.host_leaf(step.dst)
    cross = sl != dl
    size = step.size_bytes[cross]
    if size.size == 0 or np.any(size != size[0]):
        return None
    pairs, counts = np.unique(sl[cross] * topology.leaves + dl[cross], return_counts=True)
    a, b = pairs // topology.leaves, pairs % topology.leaves
    if np.unique(a).size != a.size or np.unique(b).size != b.size or np.any(counts != counts[0]):
        return None
    return int(counts[0]), int(pairs.size), float(size[0])


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def has_exact_ratio(topology: LeafSpine, demand: Step, routing: str | Routing, placement: Any = None) -> bool:
    """Whether :func:`exact_congestion_ratio` applies: a deterministic routing, or a hashed one on a step whose
    cross-leaf flows pair the leaves of a leaf-spine without failures.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> topo = leaf_spine(4, 4, 4)
    >>> [has_exact_ratio(topo, collective_steps(c, 16, 1)[0], "ecmp") for c in ("halving_doubling", "all_to_all")]
    [True, False]
    """
    if not parse_routing(routing).hashed:
        return True
    return _leaf_matching(topology, as_host_step(topology, demand, placement)) is not None


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def exact_congestion_ratio(topology: LeafSpine, demand: Step, routing: str | Routing, placement: Any = None) -> float:
    """The expectation over hashings that :func:`congestion_ratio` estimates, exactly (balls into bins).

    Deterministic routings (``spray``, ``minimal``, ``planned``) have one value, returned as it is. For ``ecmp`` and
    ``mp-x`` the step's cross-leaf flows must pair the leaves (each sending leaf sends its ``m`` equal flows to one
    other leaf, each receiving leaf hears from one leaf, e.g. a crossing halving-doubling step) on a leaf-spine
    without failures: then every pair's uplinks (and the mirrored downlinks) are an independent experiment of
    ``m*x`` subflows on ``s`` spines, the max over ``G`` pairs has ``P(max <= k) = max_load_cdf(m*x, s)[k]^G``, and
    ``E[max(host time, k/x * flow time)] / ideal`` is summed over that law. Other steps raise ``ValueError``.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps, expected_max_load
    >>> topo = leaf_spine(16, 16, 16)
    >>> step = collective_steps("halving_doubling", 256, 2**30)[0]     # leaf a <-> leaf a XOR 8, 16 flows each
    >>> round(exact_congestion_ratio(topo, step, "ecmp"), 3), round(expected_max_load(16, 16, groups=16), 3)
    (4.514, 4.514)
    """
    routing = parse_routing(routing)
    step = as_host_step(topology, demand, placement)
    ideal = max_congestion(topology, link_loads(topology, step, "spray"))
    if not routing.hashed:
        return max_congestion(topology, link_loads(topology, step, routing)) / ideal if ideal > 0 else 1.0
    match = _leaf_matching(topology, step)
    if match is None:
        raise ValueError(
            f"exact_congestion_ratio for routing {str(routing)!r} needs a step whose cross-leaf flows pair the leaves "
            "with equal counts and sizes on a leaf-spine without failures"
        )
    m, pairs, flow_bytes = match
    x = routing.split
    n = topology.n_hosts
    host = np.concatenate(
        [
            np.bincount(step.src, weights=step.size_bytes, minlength=n),
            np.bincount(step.dst, weights=step.size_bytes, minlength=n),
        ]
    )
    host_t = float((host * _BITS / topology.host_gbps).max(initial=0.0))
    pmf = np.diff(max_load_cdf(m * x, topology.spines) ** pairs, prepend=0.0)
    spine_t = np.arange(pmf.size) / x * (flow_bytes * _BITS / topology.uplink_gbps)
    return float(np.sum(pmf * np.maximum(host_t, spine_t))) / ideal


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def worst_step_ratio(
    topology: LeafSpine,
    steps: Sequence[Step],
    routing: str | Routing,
    samples: int = 1000,
    seed: Seed = None,
    placement: Any = None,
) -> float:
    """The collective's worst step: the largest :func:`congestion_ratio` over ``steps`` (1.0 means ideal).

    ``seed`` is passed to every step as it is: an int gives each step the same hashing stream, a Generator is
    consumed step after step.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> topo = leaf_spine(4, 4, 4)
    >>> worst_step_ratio(topo, collective_steps("halving_doubling", 16, 2**20), "minimal", samples=10, seed=0)
    1.0
    """
    if len(steps) == 0:
        raise ValueError("steps must hold at least one step of a collective")
    routing = parse_routing(routing)
    return max(congestion_ratio(topology, st, routing, samples, seed, placement) for st in steps)


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def collective_time_s(
    topology: LeafSpine,
    steps: Sequence[Step],
    routing: str | Routing,
    seed: Seed = None,
    latency_s: float = 5e-6,
    placement: Any = None,
) -> float:
    """Fluid completion time of a collective: ``sum(repeat * (max congestion + latency_s))`` over its steps.

    Each step is hashed independently (one draw per step; repeats keep their connections and hence their paths).

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> topo = leaf_spine(2, 2, 2, host_gbps=100)
    >>> steps = collective_steps("ring", 4, 100_000_000)     # 6 steps of 25 MB at 100 Gb/s = 2 ms each
    >>> round(collective_time_s(topo, steps, "spray", latency_s=0.0), 6)
    0.012
    """
    latency_s = nonnegative("latency_s", latency_s)
    routing = parse_routing(routing)
    steps = list(steps)
    seeds = spawn(seed, len(steps) + 1)
    hosts = placement
    if isinstance(placement, str) and steps:
        top = max(int(max(st.src.max(), st.dst.max())) for st in steps if st.n_flows)
        hosts = place_ranks(topology, top + 1, placement, seed=seeds[-1])
    total = 0.0
    for st, rng in zip(steps, seeds):
        loads = link_loads(topology, st, routing, seed=rng, placement=hosts)
        total += st.repeat * (max_congestion(topology, loads) + latency_s)
    return total


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def collective_time_vs_size(
    topology: LeafSpine,
    name: str,
    n_ranks: int,
    sizes_bytes: Any,
    routing: str | Routing,
    seed: Seed = None,
    latency_s: float = 5e-6,
    placement: Any = None,
) -> np.ndarray:
    """Collective time (seconds) at each message size, for one hashing (loads scale linearly with the size).

    Examples
    --------
    >>> from workbench.fabric import leaf_spine
    >>> topo = leaf_spine(4, 4, 4)
    >>> t = collective_time_vs_size(topo, "halving_doubling", 16, [2**20, 2**30], "spray")
    >>> bool(t[1] > t[0])
    True
    """
    from .._validate import array_1d

    sizes = array_1d("sizes_bytes", sizes_bytes, min_size=1, low=1)
    latency_s = nonnegative("latency_s", latency_s)
    base = 2**20
    steps = collective_steps(name, n_ranks, base, seed=seed)
    per_byte = collective_time_s(topology, steps, routing, seed=seed, latency_s=0.0, placement=placement) / base
    hops = sum(st.repeat for st in steps)
    return sizes * per_byte + hops * latency_s


@accepts()
def spine_link_matrix(topology: LeafSpine, loads: np.ndarray, direction: str = "up") -> np.ndarray:
    """Loads of the leaf->spine (``"up"``) or spine->leaf (``"down"``) links as a ``(leaves, spines)`` matrix.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine
    >>> topo = leaf_spine(2, 3, 1)
    >>> spine_link_matrix(topo, np.arange(topo.n_links, dtype=float)).tolist()
    [[4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
    """
    from .._validate import one_of

    one_of("direction", direction, ("up", "down"))
    loads = np.asarray(loads, dtype=float)
    if loads.shape != (topology.n_links,):
        raise ValueError(f"loads must have shape ({topology.n_links},), got {loads.shape}")
    base = topology.leaf_up_base if direction == "up" else topology.spine_down_base
    ls = topology.leaves * topology.spines
    return loads[base : base + ls].reshape(topology.leaves, topology.spines)


@accepts()
def uplink_load_table(topology: LeafSpine, loads: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Leaf->spine link loads of several routings as a tidy table (one row per routing, leaf and spine).

    ``loads`` maps a routing name to its per-link bytes (from :func:`~workbench.fabric.link_loads`).

    Returns
    -------
    pandas.DataFrame with columns ``routing, leaf, spine, load_bytes``.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine
    >>> topo = leaf_spine(2, 3, 1)
    >>> uplink_load_table(topo, {"x": np.arange(topo.n_links, dtype=float)}).load_bytes.tolist()
    [4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    """
    leaf, spine = np.divmod(np.arange(topology.leaves * topology.spines), topology.spines)
    frames = [
        pd.DataFrame(
            {"routing": name, "leaf": leaf, "spine": spine, "load_bytes": spine_link_matrix(topology, v, "up").ravel()}
        )
        for name, v in loads.items()
    ]
    return pd.concat(frames, ignore_index=True)


@accepts()
def busiest_step(topology: LeafSpine, steps: Sequence[Step]) -> Step:
    """The step with the most cross-leaf bytes (the one whose balance across spines matters most); the first wins
    ties.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> busiest_step(leaf_spine(2, 2, 2), collective_steps("halving_doubling", 4, 2**20)).label
    'reduce-scatter d=2'
    """
    steps = list(steps)
    if not steps:
        raise ValueError("steps must hold at least one step")
    cross = [float(st.size_bytes[topology.host_leaf(st.src) != topology.host_leaf(st.dst)].sum()) for st in steps]
    return steps[int(np.argmax(cross))]
