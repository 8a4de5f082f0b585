"""Compiled kernels of the flow-level estimator (:mod:`workbench.fabric.mitigation`): max-min fair sharing by
progressive filling, and an epoch-based fluid model in which flows arrive, share the fabric max-min fairly and leave.

Both work on a CSR path table: flow ``f`` crosses links ``path_links[path_ptr[f]:path_ptr[f + 1]]``. Every flow also
has its own rate ceiling ``flow_cap`` (its NIC, or the TCP loss-rate bound of its path), which the filling treats as
a private link of that flow (the standard way to add per-flow demands to max-min fairness; Bertsekas & Gallager,
*Data Networks*, 2nd ed., section 6.5.2).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["max_min_rates", "fluid_completion"]


@njit(cache=True)
def _fill(active, n_active, cap, path_ptr, path_links, flow_cap, rate, rem, cnt, frozen):  # pragma: no cover - numba
    """Progressive filling over the flows listed in ``active[:n_active]``: all unfrozen flows grow at the same pace
    until a link (or a flow's own ceiling) saturates; the flows it carries freeze; repeat. Writes ``rate``."""
    n_links = cap.shape[0]
    for j in range(n_links):
        rem[j] = cap[j]
        cnt[j] = 0
    for i in range(n_active):
        f = active[i]
        rate[f] = 0.0
        frozen[f] = False
        for k in range(path_ptr[f], path_ptr[f + 1]):
            cnt[path_links[k]] += 1
    left = n_active
    while left > 0:
        inc = np.inf
        for i in range(n_active):
            f = active[i]
            if frozen[f]:
                continue
            head = flow_cap[f] - rate[f]
            if head < inc:
                inc = head
            for k in range(path_ptr[f], path_ptr[f + 1]):
                j = path_links[k]
                share = rem[j] / cnt[j]
                if share < inc:
                    inc = share
        if inc < 0.0:
            inc = 0.0
        for i in range(n_active):
            f = active[i]
            if frozen[f]:
                continue
            rate[f] += inc
            for k in range(path_ptr[f], path_ptr[f + 1]):
                rem[path_links[k]] -= inc
        # freeze the flows at their ceiling or on a saturated link
        for i in range(n_active):
            f = active[i]
            if frozen[f]:
                continue
            done = rate[f] >= flow_cap[f] * (1.0 - 1e-9)
            if not done:
                for k in range(path_ptr[f], path_ptr[f + 1]):
                    j = path_links[k]
                    if rem[j] <= cap[j] * 1e-9:
                        done = True
                        break
            if done:
                frozen[f] = True
                left -= 1
                for k in range(path_ptr[f], path_ptr[f + 1]):
                    cnt[path_links[k]] -= 1


@njit(cache=True)
def max_min_rates(cap, path_ptr, path_links, flow_cap):  # pragma: no cover - numba
    """Max-min fair rates of all flows at once (same units as ``cap``)."""
    n = flow_cap.shape[0]
    rate = np.zeros(n)
    active = np.arange(n)
    _fill(
        active,
        n,
        cap,
        path_ptr,
        path_links,
        flow_cap,
        rate,
        np.empty(cap.shape[0]),
        np.zeros(cap.shape[0], np.int64),
        np.zeros(n, np.bool_),
    )
    return rate


@njit(cache=True)
def fluid_completion(
    start, size_bits, cap_bps, path_ptr, path_links, flow_cap_bps, epoch_s, horizon_s
):  # pragma: no cover
    """Epoch-based fluid model: at the start of every epoch of ``epoch_s`` the flows present share the fabric
    max-min fairly; each sends at its rate until the epoch ends or it finishes (then at its exact finish time).
    Flows are sorted by ``start``. Returns each flow's finish time (``inf`` if not done by ``horizon_s``) and the
    time-mean rate it got (bits/s)."""
    n = start.shape[0]
    finish = np.full(n, np.inf)
    left = size_bits.copy()
    rate = np.zeros(n)
    rem = np.empty(cap_bps.shape[0])
    cnt = np.zeros(cap_bps.shape[0], np.int64)
    frozen = np.zeros(n, np.bool_)
    active = np.empty(n, np.int64)
    n_active = 0
    nxt = 0
    t = 0.0
    if n > 0:
        t = start[0]
    while (nxt < n or n_active > 0) and t < horizon_s:
        if n_active == 0 and nxt < n and start[nxt] > t:
            t = start[nxt]
        while nxt < n and start[nxt] <= t:
            if flow_cap_bps[nxt] > 0.0:
                active[n_active] = nxt
                n_active += 1
            nxt += 1
        _fill(active, n_active, cap_bps, path_ptr, path_links, flow_cap_bps, rate, rem, cnt, frozen)
        t_end = t + epoch_s
        if nxt < n and start[nxt] < t_end:
            t_end = start[nxt]
        if t_end <= t:
            t_end = t + epoch_s
        dt = t_end - t
        keep = 0
        for i in range(n_active):
            f = active[i]
            r = rate[f]
            if r > 0.0 and left[f] <= r * dt:
                finish[f] = t + left[f] / r
                left[f] = 0.0
            else:
                left[f] -= r * dt
                active[keep] = f
                keep += 1
        n_active = keep
        t = t_end
    return finish
