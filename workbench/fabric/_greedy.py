"""Compiled kernels of the planned routing's greedy assignment (unequal flows, or a leaf-spine with failed links).

Greedy planning is sequential by nature: flows are taken largest first and each goes on the path whose busiest link
would be least loaded, given every flow placed before it. One compiled pass over the flows, each trying its paths,
replaces a Python loop that cost a few milliseconds per flow (a fat-tree of k=8 with 2,560 flows took 7.5 s).
Ties go to the lowest path index, as ``numpy.argmin`` breaks them.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

__all__ = ["greedy_spines", "greedy_fat_tree_paths"]


@njit(cache=True)
def greedy_spines(sl, dl, size, count, order, pair, ranked, leaves, spines, cap):  # pragma: no cover - numba
    """Spine per cross-leaf flow of a leaf-spine: flow ``i`` (taken in the order ``ranked``) may use the spines
    ``order[pair[i], :count[i]]`` (its leaf pair's live spines); it goes on the one minimising the larger of its
    uplink's and downlink's load after it (``cap`` the uplink speed, loads in seconds of link time)."""
    up = np.zeros((leaves, spines))
    down = np.zeros((leaves, spines))
    spine = np.empty(sl.size, dtype=np.int64)
    for i in ranked:
        w = size[i] / cap
        best = -1
        best_cost = np.inf
        for j in range(count[i]):
            p = order[pair[i], j]
            c = max(up[sl[i], p], down[dl[i], p]) + w
            if c < best_cost:
                best_cost = c
                best = p
        spine[i] = best
        up[sl[i], best] += w
        down[dl[i], best] += w
    return spine


@njit(cache=True)
def _fat_tree_hop(se, de, sp, dp, npaths, p, h, bases, hop):  # pragma: no cover - numba
    """Link id of hop ``hop`` (1 edge->agg, 2 agg->core, 3 core->agg, 4 agg->edge) of path ``p``, or -1 (the
    columns of :func:`workbench.fabric.fattree.fat_tree_path_links`)."""
    inter = npaths == h * h
    intra = npaths == h
    a = p // h if inter else p
    i = p % h
    if hop == 1:
        return bases[0] + se * h + a if (inter or intra) else -1
    if hop == 4:
        return bases[1] + de * h + a if (inter or intra) else -1
    if hop == 2:
        return bases[2] + (sp * h + a) * h + i if inter else -1
    return bases[3] + (dp * h + a) * h + i if inter else -1


@njit(cache=True)
def greedy_fat_tree_paths(se, de, sp, dp, npaths, size, ranked, h, bases, cap):  # pragma: no cover - numba
    """Path index per flow of a fat-tree: flow ``f`` (taken in the order ``ranked``) goes on the path whose busiest
    switch-to-switch link, with the flow added, has the least load relative to its capacity ``cap``."""
    load = np.zeros(cap.size)
    out = np.zeros(se.size, dtype=np.int64)
    for f in ranked:
        best = 0
        best_cost = np.inf
        for p in range(npaths[f]):
            c = 0.0
            for hop in range(1, 5):
                link = _fat_tree_hop(se[f], de[f], sp[f], dp[f], npaths[f], p, h, bases, hop)
                if link >= 0:
                    c = max(c, (load[link] + size[f]) / cap[link])
            if c < best_cost:
                best_cost = c
                best = p
        out[f] = best
        for hop in range(1, 5):
            link = _fat_tree_hop(se[f], de[f], sp[f], dp[f], npaths[f], best, h, bases, hop)
            if link >= 0:
                load[link] += size[f]
    return out
