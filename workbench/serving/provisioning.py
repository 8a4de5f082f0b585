"""ServeGen's use case: how far a naive workload misleads capacity planning.

For a model and an hour of the day, compose the per-client workload (each client's own rate share, burstiness and
length PMFs, :func:`workbench.workloads.servegen.compose`) and the naive one built from the same requests (one
Poisson process at the same mean rate, lengths drawn from the pooled distribution,
:func:`~workbench.workloads.servegen.naive_workload`). Search each workload's capacity on the same server and SLO.
Sizing the deployment with the naive capacity ``C_naive`` while the real traffic only sustains ``C_composed`` per
instance provisions ``C_composed / C_naive`` of the instances needed: the *under-provisioning* is
``1 - C_composed / C_naive`` (0 when the naive workload is faithful, positive when it is optimistic).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._rng import spawn
from .._validate import integer, positive
from ..workloads.servegen import compose, load_pool, naive_workload
from .capacity import SLO, capacity_search
from .simulator import ServerConfig

__all__ = ["DEFAULT_SERVERS", "server_for", "provisioning_gap"]

#: Server per model: the default (a ~13B model on one GPU) for the language and multimodal models, and a faster,
#: bigger instance (a multi-GPU node with a larger KV cache) for the reasoning model, whose prompts reach 20k+ tokens.
DEFAULT_SERVERS: dict[str, ServerConfig] = {
    "deepseek-r1": ServerConfig(
        base_s=0.02,
        prefill_token_s=3e-5,
        decode_seq_s=1e-4,
        kv_token_s=5e-9,
        kv_budget_tokens=600_000,
        max_batch=256,
        max_prefill_tokens=32_768,
    ),
}


def server_for(model: str) -> ServerConfig:
    """The default :class:`ServerConfig` used for ``model`` in the use case."""
    return DEFAULT_SERVERS.get(model, ServerConfig())


def provisioning_gap(
    model: str,
    hours: Sequence[int] = (2, 8, 14, 20),
    *,
    span_s: float = 1800.0,
    day: int = 0,
    seeds: int = 2,
    mean_rate_rps: float = 4.0,
    slo: SLO = SLO(),
    config: ServerConfig | None = None,
    client_filter: dict | None = None,
    rel_tol: float = 0.03,
    ablation: bool = False,
    seed: int = 0,
) -> pd.DataFrame:
    """Capacity under the composed and the naive workload, per hour of day; under-provisioning of the naive plan.

    Parameters
    ----------
    model : str
        A released model (see :data:`~workbench.workloads.servegen.MODELS`).
    hours : sequence of int
        Hours of day (0-23); each span starts at ``day * 86400 + hour * 3600``.
    span_s : float
        Length of each composed span (seconds of the data).
    day : int
        Day of the release (0 for the 1-day models).
    seeds : int
        Workloads per hour (capacities are averaged).
    mean_rate_rps : float
        The data's rate curve over the span is scaled to this mean before the search (only sets how many requests
        are simulated; the search then scales the rate).
    slo, config : SLO, ServerConfig
        ``config`` defaults to :func:`server_for`.
    client_filter : dict, optional
        Keyword arguments of :meth:`ClientPool.filter`.
    ablation : bool
        Also search the two half-naive workloads (:func:`naive_workload` with ``keep="arrivals"``: composed arrivals,
        pooled lengths; ``keep="lengths"``: Poisson arrivals, composed lengths), in columns ``arrivals_only_rps``
        and ``lengths_only_rps``: which half of the composition costs the capacity.

    Returns
    -------
    DataFrame
        One row per hour: ``hour``, ``composed_rps``, ``naive_rps``, ``underprovision`` (1 - composed / naive, NaN
        if the naive capacity is 0), ``feasible`` (False when some composed workload misses the SLO at any rate, so
        its capacity is 0 and the under-provisioning 100%), ``requests`` and the span's rate-weighted median CV.

    Examples
    --------
    >>> g = provisioning_gap("m-small", hours=[14], span_s=300, seeds=1)
    >>> list(g.columns)[:4]
    ['hour', 'composed_rps', 'naive_rps', 'underprovision']
    """
    pool = load_pool(model)
    if client_filter:
        pool = pool.filter(**client_filter)
    seeds = integer("seeds", seeds, minimum=1)
    day = integer("day", day, minimum=0)
    span = positive("span_s", span_s)
    target = positive("mean_rate_rps", mean_rate_rps)
    config = config or server_for(model)
    rows = []
    streams = spawn(seed, len(hours))
    for h, rng in zip(hours, streams):  # a loop over a handful of hours
        h = integer("hour", h, minimum=0, maximum=23)
        start = day * 86400 + h * 3600
        span_pool = pool.select(start, span)
        comp = [
            compose(span_pool, start_s=start, duration_s=span, mean_rate_rps=target, seed=g) for g in rng.spawn(seeds)
        ]
        naive = [naive_workload(w, seed=g) for w, g in zip(comp, rng.spawn(seeds))]
        c = capacity_search(comp, config, slo, rel_tol=rel_tol)
        n = capacity_search(naive, config, slo, rel_tol=rel_tol)
        feasible = c.details["infeasible_workloads"] == 0
        extra = {}
        if ablation:
            for keep in ("arrivals", "lengths"):
                half = [naive_workload(w, seed=g, keep=keep) for w, g in zip(comp, rng.spawn(seeds))]
                extra[f"{keep}_only_rps"] = capacity_search(half, config, slo, rel_tol=rel_tol).capacity_rps
        rows.append(
            {
                "hour": h,
                "composed_rps": c.capacity_rps,
                "naive_rps": n.capacity_rps,
                "underprovision": 1 - c.capacity_rps / n.capacity_rps if n.capacity_rps > 0 else np.nan,
                "feasible": feasible,
                "requests": int(np.mean([len(w) for w in comp])),
                "cv_median": float(span_pool.weighted_cv_quantiles([0.5])[0]),
                **extra,
            }
        )
    out = pd.DataFrame(rows)
    out.attrs.update({"model": model, "slo": slo.describe(), "span_s": span, "seeds": seeds})
    return out
