"""Compiled kernels of the flow-level estimator (:mod:`workbench.fabric.mitigation`): max-min fair sharing by
progressive filling, and an epoch-based fluid model in which flows arrive, share the fabric max-min fairly and leave.

Both work on a CSR path table: flow ``f`` crosses links ``path_links[path_ptr[f]:path_ptr[f + 1]]``. Every flow also
has its own rate ceiling ``flow_cap`` (its NIC, or the TCP loss-rate bound of its path), which the filling treats as
a private link of that flow (the standard way to add per-flow demands to max-min fairness; Bertsekas & Gallager,
*Data Networks*, 2nd ed., section 6.5.2).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

__all__ = ["max_min_rates", "fluid_completion"]


@njit(cache=True)
def _fill(
    active, n_active, cap, path_ptr, path_links, flow_cap, rate, fixed, cnt, frozen, link_ptr, link_flows, cursor
):  # pragma: no cover - numba
    """Progressive filling over the flows listed in ``active[:n_active]``; writes ``rate``.

    All unfrozen flows share one rising ``level``; a link with ``cnt`` unfrozen flows and ``fixed`` rate of frozen
    ones saturates at ``(cap - fixed) / cnt``, a flow at its own ceiling. Each step raises the level to the next
    saturation and freezes the flows there, so a step costs one pass over the links (not over the flows) and every
    flow is frozen once: ``O(steps x links + flows x hops)``."""
    n_links = cap.shape[0]
    for j in range(n_links):
        fixed[j] = 0.0
        cnt[j] = 0
    for i in range(n_active):
        f = active[i]
        frozen[f] = False
        rate[f] = 0.0
        for k in range(path_ptr[f], path_ptr[f + 1]):
            cnt[path_links[k]] += 1
    # link -> flows adjacency (counting sort)
    link_ptr[0] = 0
    for j in range(n_links):
        link_ptr[j + 1] = link_ptr[j] + cnt[j]
        cursor[j] = link_ptr[j]
    for i in range(n_active):
        f = active[i]
        for k in range(path_ptr[f], path_ptr[f + 1]):
            j = path_links[k]
            link_flows[cursor[j]] = f
            cursor[j] += 1
    caps = np.empty(n_active)
    for i in range(n_active):
        caps[i] = flow_cap[active[i]]
    by_cap = np.argsort(caps)
    ci = 0
    left = n_active
    while left > 0:
        best = np.inf
        for j in range(n_links):
            if cnt[j] > 0:
                share = (cap[j] - fixed[j]) / cnt[j]
                if share < best:
                    best = share
        while ci < n_active and frozen[active[by_cap[ci]]]:
            ci += 1
        next_cap = caps[by_cap[ci]] if ci < n_active else np.inf
        if next_cap <= best:
            level = next_cap
            while ci < n_active and caps[by_cap[ci]] <= level * (1.0 + 1e-12):
                f = active[by_cap[ci]]
                ci += 1
                if not frozen[f]:
                    frozen[f] = True
                    rate[f] = caps[by_cap[ci - 1]]
                    left -= 1
                    for k in range(path_ptr[f], path_ptr[f + 1]):
                        cnt[path_links[k]] -= 1
                        fixed[path_links[k]] += rate[f]
            continue
        level = max(best, 0.0)
        for j in range(n_links):
            if cnt[j] > 0 and (cap[j] - fixed[j]) / cnt[j] <= best + abs(best) * 1e-9 + 1e-300:
                for m in range(link_ptr[j], link_ptr[j + 1]):
                    f = link_flows[m]
                    if not frozen[f]:
                        frozen[f] = True
                        rate[f] = level
                        left -= 1
                        for k in range(path_ptr[f], path_ptr[f + 1]):
                            cnt[path_links[k]] -= 1
                            fixed[path_links[k]] += level


@njit(cache=True)
def max_min_rates(cap, path_ptr, path_links, flow_cap):  # pragma: no cover - numba
    """Max-min fair rates of all flows at once (same units as ``cap``)."""
    n = flow_cap.shape[0]
    rate = np.zeros(n)
    active = np.arange(n)
    nl = cap.shape[0]
    _fill(
        active,
        n,
        cap,
        path_ptr,
        path_links,
        flow_cap,
        rate,
        np.empty(nl),
        np.zeros(nl, np.int64),
        np.zeros(n, np.bool_),
        np.zeros(nl + 1, np.int64),
        np.empty(path_links.shape[0], np.int64),
        np.empty(nl, np.int64),
    )
    return rate


@njit(cache=True)
def fluid_completion(
    start, size_bits, cap_bps, path_ptr, path_links, flow_cap_bps, epoch_s, horizon_s
):  # pragma: no cover
    """Epoch-based fluid model: at the start of every epoch of ``epoch_s`` the flows present share the fabric
    max-min fairly; each sends at its rate until the epoch ends or it finishes (then at its exact finish time).
    Flows are sorted by ``start``. Returns each flow's finish time (``inf`` if not done by ``horizon_s``). An epoch
    in which no flow arrived or left keeps the last rates (no refill)."""
    n = start.shape[0]
    finish = np.full(n, np.inf)
    left = size_bits.copy()
    rate = np.zeros(n)
    rem = np.empty(cap_bps.shape[0])
    cnt = np.zeros(cap_bps.shape[0], np.int64)
    frozen = np.zeros(n, np.bool_)
    link_ptr = np.zeros(cap_bps.shape[0] + 1, np.int64)
    link_flows = np.empty(path_links.shape[0], np.int64)
    cursor = np.empty(cap_bps.shape[0], np.int64)
    active = np.empty(n, np.int64)
    n_active = 0
    changed = True
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
                changed = True
            nxt += 1
        if changed:  # the same flows as in the last epoch keep their rates
            changed = False
            _fill(
                active, n_active, cap_bps, path_ptr, path_links, flow_cap_bps, rate, rem, cnt, frozen, link_ptr,
                link_flows, cursor,
            )  # fmt: skip
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
                changed = True
            else:
                left[f] -= r * dt
                active[keep] = f
                keep += 1
        n_active = keep
        t = t_end
    return finish
