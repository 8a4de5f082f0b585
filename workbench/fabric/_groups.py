"""Grouping flows by a key without Python loops: the building block of per-(source, destination) rules."""

from __future__ import annotations

import numpy as np

__all__ = ["group_ranks"]


def group_ranks(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sort flows by ``key`` (stable) and number them within their group.

    Returns ``(order, starts, counts, group, rank)``: ``order`` sorts the flows by key; in that order, group ``g``
    occupies positions ``starts[g]`` to ``starts[g] + counts[g] - 1``; ``group[i]`` and ``rank[i]`` are the group of
    the ``i``-th sorted flow and its position inside the group.

    Examples
    --------
    >>> order, starts, counts, group, rank = group_ranks(np.array([5, 2, 5, 5]))
    >>> order.tolist(), counts.tolist(), rank.tolist()
    ([1, 0, 2, 3], [1, 3], [0, 0, 1, 2])
    """
    order = np.argsort(key, kind="stable")
    ks = key[order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]]) if ks.size else np.zeros(0, dtype=np.int64)
    counts = np.diff(np.r_[starts, ks.size])
    group = np.repeat(np.arange(starts.size), counts)
    rank = np.arange(ks.size) - starts[group]
    return order, starts, counts, group, rank
