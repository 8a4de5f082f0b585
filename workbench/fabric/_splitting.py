"""The minimal splitting rule of Addanki, Goyal and Marinos (2024) over the live paths of a leaf-spine.

For the ``n`` equal flows that one source host sends to one destination leaf in a step, with ``s`` live paths,
``q = n div s``, ``r = n mod s``, ``g = gcd(r, s)``: ``q`` whole flows go on every spine and each of the ``r``
leftover flows is split into ``s/g`` equal pieces, ``r/g`` pieces per spine. :func:`minimal_split_subflows` gives the
(flow, spine, bytes) pieces, :func:`min_split_pieces` the piece and subflow counts (both re-exported by
:mod:`workbench.fabric.routing` and :mod:`workbench.fabric`), from the compact :func:`minimal_plan` (see its
docstring for the rule's properties). Each live spine of a group carries ``n/s`` of its bytes, so
:func:`workbench.fabric.routing.link_loads` computes the rule's loads per leaf pair without the pieces.
:func:`live_spines` is the live path table every routing over failed links uses.
"""

from __future__ import annotations

import math

import numpy as np

from .._contracts import Array, accepts, same_length
from .._validate import integer
from ._groups import group_ranks
from .topology import LeafSpine

__all__ = [
    "live_spines",
    "check_minimal_demand",
    "minimal_plan",
    "expand_slots",
    "minimal_split_subflows",
    "min_split_pieces",
]


class PairOrder:
    """Each flow's live spines, first, stored once per leaf pair: ``order[rows, cols]`` is
    ``by_pair[pair[rows], cols]``, as an ``(F, spines)`` table would give it. The per-flow table was ~400 MiB at
    135,000 flows over 393 spines (one all-to-all step of a 371-host fabric with a failed link), and its argsort
    twice that; a fabric has at most ``leaves**2`` pairs."""

    def __init__(self, by_pair: np.ndarray, pair: np.ndarray) -> None:
        self.by_pair = by_pair  # (P, spines) int32: the live spines of each leaf pair first
        self.pair = pair  # (F,) int64: each flow's row of by_pair

    def __getitem__(self, key: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        rows, cols = key
        return self.by_pair[self.pair[rows], cols]


def live_spines(topology: LeafSpine, sl: np.ndarray, dl: np.ndarray) -> tuple[np.ndarray, PairOrder]:
    """Per flow: number of live spines (``(F,)``) and the live spine ids first (:class:`PairOrder`)."""
    sl, dl = np.asarray(sl, dtype=np.int64), np.asarray(dl, dtype=np.int64)
    keys, pair = np.unique(sl * topology.leaves + dl, return_inverse=True)
    live = topology.live_paths(keys // topology.leaves, keys % topology.leaves)
    pair_count = live.sum(axis=1)
    if np.any(pair_count == 0):
        i = int(np.argmax(pair_count == 0))
        raise ValueError(
            f"no live path from leaf {int(keys[i] // topology.leaves)} to leaf {int(keys[i] % topology.leaves)} "
            "(all its spine links failed)"
        )
    by_pair = np.argsort(~live, axis=1, kind="stable").astype(np.int32)
    pair = pair.reshape(-1).astype(np.int64)
    return pair_count[pair], PairOrder(by_pair, pair)


@accepts(same_length("src", "dst", "size_bytes"), src=Array(integer=True, ge=0), dst=Array(integer=True, ge=0))
def minimal_split_subflows(
    topology: LeafSpine, src: np.ndarray, dst: np.ndarray, size_bytes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Subflows of the minimal splitting rule for cross-leaf flows: ``(flow index, spine, bytes)``.

    All flows from one source host to one destination leaf must have the same size (the rule is for equal flows).

    Examples
    --------
    >>> from workbench.fabric import leaf_spine
    >>> topo = leaf_spine(2, 4, 6)                      # host 0 sends 6 equal flows to leaf 1 over 4 spines
    >>> f, spine, nbytes = minimal_split_subflows(topo, np.zeros(6, int), np.arange(6, 12), np.full(6, 8.0))
    >>> f.size, np.bincount(spine, weights=nbytes).tolist()   # q=1, r=2, g=2: 2 leftovers in 2 pieces each
    (8, [12.0, 12.0, 12.0, 12.0])
    """
    order, slot0, pieces, s_live, piece_bytes, live_order = minimal_plan(topology, src, dst, size_bytes)
    F = order.size
    if F == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, np.zeros(0)
    flow_rep = np.repeat(np.arange(F), pieces)
    slot = expand_slots(slot0, pieces, s_live if live_order is not None else topology.spines, flow_rep)
    spine = slot if live_order is None else live_order[flow_rep, slot].astype(np.int64)
    return order[flow_rep], spine, piece_bytes[flow_rep]


def _check_equal_groups(size_sorted: np.ndarray, starts: np.ndarray, group: np.ndarray) -> None:
    if np.any(size_sorted != size_sorted[starts][group]):
        raise ValueError("minimal splitting needs equal-size flows from a source host to a destination leaf")


def check_minimal_demand(topology: LeafSpine, src: np.ndarray, dst_leaf: np.ndarray, size_bytes: np.ndarray) -> None:
    """The minimal rule's precondition: equal flows from each source host to each destination leaf."""
    order, starts, _, group, _ = group_ranks(src * topology.leaves + dst_leaf)
    _check_equal_groups(size_bytes[order], starts, group)


def minimal_plan(topology: LeafSpine, src: np.ndarray, dst: np.ndarray, size_bytes: np.ndarray):
    """The minimal splitting rule per cross-leaf flow, in a compact form (flows sorted by group).

    Returns ``order`` (flow indices in group order) and, per sorted flow, ``slot0`` (first path slot), ``pieces``
    (the flow covers slots ``slot0 .. slot0 + pieces - 1`` modulo ``s``), ``s`` (live paths of its leaf pair),
    ``piece_bytes``, and the live-spine table (``None`` without failures, where slot == spine).
    """
    L = topology.leaves
    F = src.size
    if F == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, e, e, np.zeros(0), None
    dl = topology.host_leaf(dst)
    key = src * L + dl
    order, starts, counts, group, rank = group_ranks(key)
    size_sorted = size_bytes[order]
    _check_equal_groups(size_sorted, starts, group)
    n = counts[group]
    if topology.failed:
        s_live, live_order = live_spines(topology, topology.host_leaf(src[order]), dl[order])
    else:
        s_live = np.full(F, topology.spines, dtype=np.int64)
        live_order = None
    q, r = n // s_live, n % s_live
    g = np.gcd(r, s_live)
    whole = rank < q * s_live
    pieces = np.where(whole, 1, s_live // np.where(g == 0, 1, g))  # r == 0 -> every flow whole
    # whole flow: slot rank mod s; leftover flow j = rank - q*s: pieces j*k .. j*k + k - 1 (mod s), k = s/g
    slot0 = np.where(whole, rank % s_live, (rank - q * s_live) * pieces)
    return order, slot0, pieces, s_live, size_sorted / pieces, live_order


def expand_slots(slot0: np.ndarray, pieces: np.ndarray, s, flow_rep: np.ndarray | None = None) -> np.ndarray:
    """Expand the compact plan: slot of every piece, ``(slot0 + t) mod s`` for ``t < pieces`` (one repeat)."""
    start = np.cumsum(pieces) - pieces
    slot = np.repeat(slot0 - start, pieces) + np.arange(int(start[-1] + pieces[-1]) if pieces.size else 0)
    if np.ndim(s):
        return slot % s[flow_rep]
    return slot % s


@accepts()
def min_split_pieces(n: int, s: int) -> tuple[int, int]:
    """``(pieces per leftover flow, total subflows)`` of the minimal splitting rule for ``n`` flows over ``s`` paths.

    ``n`` >= 0 flows, ``s`` >= 1 paths; a ``ValueError`` names the argument out of range.

    Examples
    --------
    >>> min_split_pieces(20, 16)      # q=1, r=4, g=4: each leftover flow in 4 pieces; 20 + 4*3 subflows
    (4, 32)
    """
    n = integer("n", n, minimum=0)
    s = integer("s", s, minimum=1)
    r = n % s
    if r == 0:
        return 1, n
    k = s // math.gcd(r, s)
    return k, n + r * (k - 1)
