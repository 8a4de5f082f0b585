"""Collectives as sequences of steps; each step is a set of equal-size flows that start together.

Distributed training moves data in collectives. Following Addanki, Goyal and Marinos (2024), each algorithm is a
sequence of *steps*; in a step every participating rank sends one or more equal-size flows and the step ends when the
last flow ends. A :class:`Step` holds the flows as arrays (``src``, ``dst`` ranks and ``size_bytes``) and how many
times it repeats back to back (``repeat``; the connections persist across repeats, so a hashed path is kept).
``size_bytes`` of :func:`collective_steps` is the per-rank buffer (the all-reduce message, or the all-to-all send
buffer).

Algorithms (``n`` ranks, message ``S`` bytes):

- ``"ring"``: ring all-reduce in rank order; ``2(n-1)`` identical steps, rank ``r`` sends ``S/n`` to ``r+1 mod n``.
- ``"halving_doubling"``: recursive halving reduce-scatter (step ``i`` pairs ``r`` with ``r XOR n/2^(i+1)`` and
  exchanges ``S/2^(i+1)``) followed by recursive doubling all-gather (the same steps reversed); ``n`` must be a power
  of two; ``2 log2 n`` steps.
- ``"double_binary_tree"``: two complementary binary trees (NCCL's double binary tree) each carrying ``S/2``:
  tree A is the heap tree over ranks ``0..n-1``, tree B the same tree over the mirrored ranks ``n-1-r``, so a rank
  that is interior in one tree is a leaf in the other. Pipelined, its steady state is two steps: every child sends
  ``S/2`` to its parent in both trees (reduce), then every parent sends ``S/2`` to each child (broadcast).
- ``"all_to_all"``: direct all-to-all; one step, every rank sends ``S/n`` to each of the ``n-1`` others.
- ``"permutation"``: a random cyclic permutation (no fixed points); one step, every rank sends ``S``.

Ranks are mapped to hosts by :func:`place_ranks` (linear, strided across leaves, or random) and
:func:`Step.on_hosts`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._contracts import Array, Int, accepts
from .._rng import Seed, generator
from .._validate import integer, one_of
from .topology import LeafSpine, Topology

__all__ = [
    "Step",
    "COLLECTIVES",
    "PLACEMENTS",
    "collective_steps",
    "check_ranks",
    "ranks_that_fit",
    "place_ranks",
    "random_destinations",
]

COLLECTIVES = ("ring", "halving_doubling", "double_binary_tree", "all_to_all", "permutation")
PLACEMENTS = ("linear", "strided", "random")


@accepts()
@dataclass(frozen=True, eq=False)
class Step:
    """One step of a collective: flows ``src[i] -> dst[i]`` of ``size_bytes[i]``, repeated ``repeat`` times.

    ``src``/``dst`` are rank ids, or host ids after :meth:`on_hosts`.
    """

    src: np.ndarray
    dst: np.ndarray
    size_bytes: np.ndarray
    repeat: int = 1
    label: str = ""

    @property
    def n_flows(self) -> int:
        return int(self.src.size)

    @property
    def total_bytes(self) -> float:
        return float(self.size_bytes.sum())

    @accepts(hosts=Array(integer=True, ge=0))
    def on_hosts(self, hosts: Any) -> Step:
        """The same step with rank ``r`` replaced by host ``hosts[r]``."""
        hosts = np.asarray(hosts, dtype=np.int64)
        if self.n_flows and max(int(self.src.max()), int(self.dst.max())) >= hosts.size:
            top = int(max(self.src.max(), self.dst.max()))
            raise ValueError(f"placement maps {hosts.size} ranks but the step uses rank {top}")
        return Step(hosts[self.src], hosts[self.dst], self.size_bytes, self.repeat, self.label)


def _step(src: np.ndarray, dst: np.ndarray, size: float, repeat: int = 1, label: str = "") -> Step:
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    return Step(src, dst, np.full(src.size, float(size)), repeat, label)


@accepts(src=Array(integer=True, ge=0), n_hosts=Int(ge=2, le=10**9))
def random_destinations(src: Any, n_hosts: int, seed: Seed = None) -> np.ndarray:
    """Uniform random traffic: for every flow source in ``src``, a destination drawn uniformly from the other
    ``n_hosts - 1`` hosts (never the source itself).

    Examples
    --------
    >>> src = np.repeat(np.arange(4), 1000)
    >>> dst = random_destinations(src, 4, seed=0)
    >>> bool((dst != src).all()), np.bincount(dst[src == 0], minlength=4).tolist()[0]
    (True, 0)
    """
    n = integer("n_hosts", n_hosts, minimum=2)
    src = np.asarray(src)
    if src.ndim != 1 or not np.issubdtype(src.dtype, np.integer) or (src.size and (src.min() < 0 or src.max() >= n)):
        raise ValueError(f"src must be a 1-D integer array of host ids in [0, {n - 1}]")
    return (src + generator(seed).integers(1, n, size=src.size)) % n


@accepts()
def collective_steps(name: str, n_ranks: int, size_bytes: int, seed: Seed = None) -> list[Step]:
    """The steps of collective ``name`` over ``n_ranks`` ranks with a ``size_bytes`` message.

    Parameters
    ----------
    name : {"ring", "halving_doubling", "double_binary_tree", "all_to_all", "permutation"}
    n_ranks : int
        Number of ranks, >= 2 (a power of two for ``halving_doubling``).
    size_bytes : int
        Message (all-reduce) or send buffer (all-to-all, permutation) per rank, an integer >= 1.
    seed : int, Generator or None
        Only used by ``"permutation"``.

    Returns
    -------
    list of Step

    Examples
    --------
    >>> steps = collective_steps("halving_doubling", 8, 2**20)
    >>> len(steps), steps[0].n_flows, float(steps[0].size_bytes[0])
    (6, 8, 524288.0)
    >>> int(steps[0].dst[0])                       # rank 0 first exchanges with rank 4
    4
    """
    name = one_of("name", name, COLLECTIVES)
    n = integer("n_ranks", n_ranks, minimum=2)
    size = integer("size_bytes", size_bytes, minimum=1)
    r = np.arange(n, dtype=np.int64)
    if name == "ring":
        return [_step(r, (r + 1) % n, size / n, repeat=2 * (n - 1), label="ring")]
    if name == "halving_doubling":
        check_ranks(name, n)
        levels = n.bit_length() - 1
        rs = [
            _step(r, r ^ (n >> (i + 1)), size / 2 ** (i + 1), label=f"reduce-scatter d={n >> (i + 1)}")
            for i in range(levels)
        ]
        ag = [
            _step(s.src, s.dst, s.size_bytes[0], label=s.label.replace("reduce-scatter", "all-gather"))
            for s in reversed(rs)
        ]
        return rs + ag
    if name == "double_binary_tree":
        child = r[1:]
        parent = (child - 1) // 2
        up_src = np.concatenate([child, n - 1 - child])
        up_dst = np.concatenate([parent, n - 1 - parent])
        return [
            _step(up_src, up_dst, size / 2, label="reduce (both trees)"),
            _step(up_dst, up_src, size / 2, label="broadcast (both trees)"),
        ]
    if name == "all_to_all":
        src = np.repeat(r, n - 1)
        off = np.tile(np.arange(1, n, dtype=np.int64), n)
        return [_step(src, (src + off) % n, size / n, label="all-to-all")]
    # permutation: a uniformly random n-cycle (no rank sends to itself)
    order = generator(seed).permutation(n)
    dst = np.empty(n, dtype=np.int64)
    dst[order] = np.roll(order, -1)
    return [_step(r, dst, size, label="permutation")]


@accepts()
def check_ranks(collective: str, n_ranks: int, name: str = "n_ranks") -> int:
    """``n_ranks``, refused under the caller's parameter ``name`` when ``collective`` cannot run on that many ranks
    (halving-doubling pairs ranks at distances n/2, n/4, ..., 1: a power of two). The one check of it: the
    collectives, the fabric experiments and the diagnosis jobs call it.

    Examples
    --------
    >>> check_ranks("halving_doubling", 16), check_ranks("ring", 12)
    (16, 12)
    """
    one_of("collective", collective, COLLECTIVES)
    n = integer(name, n_ranks, minimum=1)
    if collective == "halving_doubling" and n & (n - 1):
        raise ValueError(
            f"{name} must be a power of two for collective='halving_doubling', got {n} (it pairs ranks at "
            "power-of-two distances): give one, or another collective"
        )
    return n


@accepts()
def ranks_that_fit(collective: str, n_hosts: int) -> int:
    """Ranks of ``collective`` on ``n_hosts`` hosts, one per host: all of them, or for ``halving_doubling`` the
    largest power of two that fits.

    Examples
    --------
    >>> ranks_that_fit("halving_doubling", 24), ranks_that_fit("ring", 24)
    (16, 24)
    """
    one_of("collective", collective, COLLECTIVES)
    n_hosts = integer("n_hosts", n_hosts, minimum=1)
    return 1 << (n_hosts.bit_length() - 1) if collective == "halving_doubling" else n_hosts


@accepts()
def place_ranks(topology: LeafSpine, n_ranks: int, placement: str = "linear", seed: Seed = None) -> np.ndarray:
    """Host id of each rank.

    ``"linear"``: rank ``r`` on host ``r`` (consecutive ranks share a leaf); ``"strided"``: consecutive ranks on
    consecutive leaves (rank ``r`` on leaf ``r mod L``; a fat-tree's leaves are its edge switches), as when a
    scheduler scatters a job; ``"random"``: a random
    subset of hosts in random order.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine
    >>> place_ranks(leaf_spine(2, 2, 2), 4, "strided").tolist()
    [0, 2, 1, 3]
    """
    if not isinstance(topology, Topology):
        raise TypeError(f"topology must be a LeafSpine or FatTree, got {type(topology).__name__}")
    n = integer("n_ranks", n_ranks, minimum=1)
    placement = one_of("placement", placement, PLACEMENTS)
    if n > topology.n_hosts:
        raise ValueError(f"n_ranks must be <= the number of hosts ({topology.n_hosts}), got {n}")
    r = np.arange(n, dtype=np.int64)
    if placement == "linear":
        return r
    if placement == "strided":
        L, H = topology.leaves, topology.hosts_per_leaf
        hosts = (r % L) * H + r // L
        if hosts.max() >= topology.n_hosts or (r // L).max() >= H:
            raise ValueError("strided placement does not fit")  # unreachable given n <= L*H
        return hosts
    return generator(seed).permutation(topology.n_hosts)[:n].astype(np.int64)
