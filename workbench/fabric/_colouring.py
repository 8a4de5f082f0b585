"""Equitable edge colouring of bipartite multigraphs: the optimal planner for equal-size unsplit flows.

Flows are edges between a left vertex (e.g. the source leaf) and a right vertex (the destination leaf); colours are
the parallel paths (spines). An *equitable* colouring with ``s`` colours gives every vertex of degree ``d`` each
colour at most ``ceil(d/s)`` times, which is the lower bound on the busiest uplink/downlink, so it is an optimal
plan. Construction: the ``floor(c/s)`` copies of each parallel bundle go round-robin over all colours (vectorized);
the leftovers form a multigraph whose vertices are split into copies of degree <= s, which Konig's theorem colours
properly with ``s`` colours by alternating-path swaps (a sequential algorithm over the leftover edges only).
"""

from __future__ import annotations

import numpy as np

from ._groups import group_ranks

__all__ = ["equitable_colours", "koenig_colour"]


def koenig_colour(left: list[int], right: list[int], n_left: int, n_right: int, s: int) -> list[int]:
    """Proper edge colouring with ``s`` colours of a bipartite multigraph of max degree <= s."""
    at_l = [[-1] * s for _ in range(n_left)]
    at_r = [[-1] * s for _ in range(n_right)]
    colour = [-1] * len(left)
    for e in range(len(left)):
        u, v = left[e], right[e]
        a = at_l[u].index(-1)
        if at_r[v][a] != -1:
            b = at_r[v].index(-1)
            path, w, on_right, cur = [], v, True, a
            while True:  # the a/b alternating path from v cannot reach u (a is free at u)
                f = (at_r if on_right else at_l)[w][cur]
                if f == -1:
                    break
                path.append(f)
                w = left[f] if on_right else right[f]
                on_right = not on_right
                cur = b if cur == a else a
            for f in path:
                at_l[left[f]][colour[f]] = -1
                at_r[right[f]][colour[f]] = -1
            for f in path:
                colour[f] = b if colour[f] == a else a
                at_l[left[f]][colour[f]] = f
                at_r[right[f]][colour[f]] = f
        colour[e] = a
        at_l[u][a] = e
        at_r[v][a] = e
    return colour


def _copies(v: np.ndarray, s: int) -> np.ndarray:
    """Split each vertex into copies of degree <= s: copy = rank among the vertex's edges // s (dense ids)."""
    o = np.argsort(v, kind="stable")
    vs = v[o]
    st = np.flatnonzero(np.r_[True, vs[1:] != vs[:-1]])
    cnt = np.diff(np.r_[st, vs.size])
    rk = np.arange(vs.size) - np.repeat(st, cnt)
    cid = np.empty(v.size, dtype=np.int64)
    cid[o] = vs * (v.size // s + 1) + rk // s
    return np.unique(cid, return_inverse=True)[1]


def equitable_colours(left: np.ndarray, right: np.ndarray, s: int) -> np.ndarray:
    """A colour in ``[0, s)`` per edge ``left[i] - right[i]`` such that every vertex sees each colour at most
    ``ceil(degree / s)`` times.

    Examples
    --------
    >>> equitable_colours(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), 2).tolist()
    [1, 0, 0, 1]
    """
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    F = left.size
    colour = np.full(F, -1, dtype=np.int64)
    if F == 0:
        return colour
    key = left * (int(right.max()) + 1) + right
    order, _starts, counts, group, rank = group_ranks(key)
    even = rank < (counts[group] // s) * s
    colour[order[even]] = rank[even] % s
    rest = order[~even]
    if rest.size:
        lc, rc = _copies(left[rest], s), _copies(right[rest], s)
        colour[rest] = koenig_colour(lc.tolist(), rc.tolist(), int(lc.max()) + 1, int(rc.max()) + 1, s)
    return colour
