"""The one event queue of the compiled event loops: a binary min-heap over three parallel arrays, ordered by time and
then by a sequence number (events at equal times leave in the order they were added, so a run is deterministic).

``ht`` holds the times (float64), ``hs`` the sequence numbers and ``hp`` one int64 payload per event (an event code,
a call instance, ...); ``n`` is the heap's size, the arrays' length its capacity. The functions are compiled
(numba) and meant to be called from compiled loops; the caller makes room before a push (:func:`heap_grown`).

Users: both loops of the per-packet engine (the SACK-like one, :mod:`workbench.aqm.perpacket_loop`, and the NewReno
one, :mod:`workbench.aqm.perpacket_tcp`: each calls it from closures over its state, and measured as fast as a heap
inlined as closures), the microservice engine (:mod:`workbench.microservices._engine`) and the carbon cluster's
compiled loop (:mod:`workbench.carbon._cluster_kernel`, which folds its event kind into the sequence number); the
carbon cluster's Python loop, for schedulers of a user's own, uses :mod:`heapq` on tuples with the same ordering.
The serving engine's finish heap (:mod:`workbench.serving._engine_kernel`) is an indexed heap of a different kind
(one row per replica, keyed by decode step, with removal of any request by its slot).

Examples
--------
>>> import numpy as np
>>> ht, hs, hp = np.empty(4), np.empty(4, np.int64), np.empty(4, np.int64)
>>> n = 0
>>> for seq, (t, p) in enumerate([(2.0, 20), (1.0, 10), (2.0, 21), (0.5, 5)]):
...     n = heap_push(ht, hs, hp, n, t, seq, p)
>>> out = []
>>> while n:
...     t, p, n = heap_pop(ht, hs, hp, n)
...     out.append(p)
>>> out
[5, 10, 20, 21]
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

__all__ = ["heap_push", "heap_pop", "heap_grown"]


@njit(cache=True)
def heap_push(ht, hs, hp, n, t, seq, p):
    """Add event ``p`` at time ``t`` with sequence number ``seq`` to the heap of ``n`` events (``n < ht.size``);
    returns the new size."""
    i = n
    while i > 0:
        j = (i - 1) >> 1
        if ht[j] < t or (ht[j] == t and hs[j] < seq):
            break
        ht[i] = ht[j]
        hs[i] = hs[j]
        hp[i] = hp[j]
        i = j
    ht[i] = t
    hs[i] = seq
    hp[i] = p
    return n + 1


@njit(cache=True)
def heap_pop(ht, hs, hp, n):
    """The earliest event of the heap of ``n > 0`` events: ``(time, payload, new size)``."""
    t0, p0 = ht[0], hp[0]
    n -= 1
    t, seq, p = ht[n], hs[n], hp[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (ht[c + 1] < ht[c] or (ht[c + 1] == ht[c] and hs[c + 1] < hs[c])):
            c += 1
        if ht[c] > t or (ht[c] == t and hs[c] > seq):
            break
        ht[i] = ht[c]
        hs[i] = hs[c]
        hp[i] = hp[c]
        i = c
    ht[i] = t
    hs[i] = seq
    hp[i] = p
    return t0, p0, n


@njit(cache=True)
def heap_grown(ht, hs, hp):
    """The heap's three arrays at twice their capacity (the events kept in place). Call it from a loop's outer level:
    an array reassigned inside a compiled hot loop makes numba count references on every event."""
    n = ht.size
    return (
        np.concatenate((ht, np.empty(n, np.float64))),
        np.concatenate((hs, np.empty(n, np.int64))),
        np.concatenate((hp, np.empty(n, np.int64))),
    )
