"""Serving capacity vs model x hour x workload, and ServeGen's use case built on it: how far a naive workload misleads
capacity planning.

One point composes an hour's span of a released model's client pool (:func:`workbench.workloads.servegen.compose`,
the data's rate curve scaled to ``mean_rate_rps``; each client keeps its own rate share, burstiness and length PMFs),
optionally replaces it by its naive counterpart built from the same requests
(:func:`~workbench.workloads.servegen.naive_workload`: one Poisson process at the same mean rate and lengths from
the pooled distribution, or one half of that for the ablation: ``arrivals_only`` keeps the composed arrivals with
pooled lengths, ``lengths_only`` Poisson arrivals with the composed lengths), and searches the highest rate one
server meets the default SLO at (:func:`workbench.serving.capacity_search`) with the model's default server
(:func:`workbench.serving.server_for`). ``workload`` is a treatment (not seeded): every kind is built from the same
composed requests.

:func:`provisioning_gap` is the use case: sizing a deployment with the naive capacity ``C_naive`` while the real
traffic only sustains ``C_composed`` per replica provisions ``C_composed / C_naive`` of the replicas needed, so the
*under-provisioning* is ``1 - C_composed / C_naive`` (0 when the naive workload is faithful, positive when it is
optimistic), with capacities averaged over seeds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._rng import spawn
from ..distributions import ecdf
from ..serving import SLO, ServerConfig, capacity_search, latency_summary, serve, server_for
from ..serving.metrics import backlog
from ..serving.servegen_gpus import HARDWARE, hardware_label, plan_gpus
from ..workloads import servegen
from ..workloads.servegen import MODELS
from ..workloads.servegen import stats as servegen_stats
from ._space import Param, experiment
from ._sweep import sweep

__all__ = [
    "serving_capacity",
    "servegen_serving",
    "provisioning_gap",
    "serving_gpus",
    "provisioning_gap_gpus",
    "WORKLOADS",
    "TIMELINE_BIN_S",
]

#: Workload kinds: the per-client composition, the naive baseline and its two halves (the ablation).
WORKLOADS = ("composed", "naive", "arrivals_only", "lengths_only")
_KEEP = {"naive": None, "arrivals_only": "arrivals", "lengths_only": "lengths"}
#: Bin of a ``servegen-serving`` point's rate timeline (seconds).
TIMELINE_BIN_S = 10.0

#: The selection and the server a ServeGen span is served on: treatments (not seeded), each default the model's own.
_SELECTION_AND_SERVER = [
    Param(
        "top_clients",
        100_000,
        "",
        low=1,
        high=100_000,
        seeded=False,
        label="busiest k clients",
        doc="keep the k busiest clients of the span (at least the pool's clients: every client)",
    ),
    Param(
        "ttft_slo_s",
        2.0,
        "s",
        low=0.2,
        high=20.0,
        log=True,
        seeded=False,
        label="p99 TTFT SLO",
        doc="p99 TTFT objective",
    ),
    Param(
        "prefill_us_per_token",
        0.0,
        "",
        low=0.0,
        high=500.0,
        seeded=False,
        label="prefill (µs/token)",
        doc="the server's prefill cost per prompt token (0: the model's default server, serving.server_for)",
    ),
    Param(
        "decode_us_per_seq",
        0.0,
        "",
        low=0.0,
        high=2000.0,
        seeded=False,
        label="decode (µs/seq/iter)",
        doc="the server's decode cost per sequence and iteration (0: the model's default server)",
    ),
    Param(
        "kv_budget_tokens",
        0,
        "tokens",
        low=0,
        high=1_000_000,
        seeded=False,
        label="KV budget",
        doc="the server's KV-cache budget (0: the model's default server)",
    ),
]


#: Which span of a released model the studies serve (the ServeGen experiments share them).
_MODEL = Param("model", "m-large", choices=tuple(MODELS), doc="released ServeGen model (client pool)")
_DAY = Param("day", 0, "d", low=0, high=13, doc="day of the release (0 for the 1-day models)")
_HOUR = Param("hour", 14, "h", low=0, high=23, label="hour of day", doc="hour of day the span starts at")


def _server(model: str, prefill_us_per_token: float, decode_us_per_seq: float, kv_budget_tokens: int) -> ServerConfig:
    """The model's default server with the costs given (a 0 keeps the default's)."""
    cfg = server_for(model)
    changes: dict[str, float | int] = {
        "prefill_token_s": prefill_us_per_token * 1e-6,
        "decode_seq_s": decode_us_per_seq * 1e-6,
        "kv_budget_tokens": kv_budget_tokens,
    }
    return dataclasses.replace(cfg, **{k: v for k, v in changes.items() if v})  # type: ignore[arg-type]


def _workload(model, day, hour, span_s, mean_rate_rps, top_clients, workload, seed) -> tuple[object, pd.DataFrame]:
    """(the span's client pool, the requests of ``workload``): a model's span composed at ``mean_rate_rps`` from its
    ``top_clients`` busiest clients, or the naive counterpart (or half of it) built from the same requests."""
    days = MODELS[model][1]
    if day >= days:
        raise ValueError(f"day must be in [0, {days - 1}] for {model!r} ({days} day(s) released), got {day}")
    start_s = day * 86400 + hour * 3600
    pool = servegen.load_pool(model).select(start_s, span_s)
    if top_clients < pool.n_clients:
        pool = pool.filter(top=top_clients)
    rng_compose, rng_naive = spawn(seed, 2)
    requests = servegen.compose(pool, start_s=start_s, duration_s=span_s, mean_rate_rps=mean_rate_rps, seed=rng_compose)
    if workload != "composed":
        requests = servegen.naive_workload(requests, seed=rng_naive, keep=_KEEP[workload])
    return pool, requests


@experiment(
    "serving-capacity",
    version="4",
    small={"model": "m-small", "span_s": 300.0, "workload": ["composed", "naive"]},
    params=[
        _MODEL,
        _HOUR,
        Param(
            "workload",
            "composed",
            choices=WORKLOADS,
            seeded=False,
            doc="per-client composition, the naive Poisson/pooled-length baseline, or one half of it",
        ),
        _DAY,
        Param("span_s", 1800.0, "s", low=60.0, high=86_400.0, doc="length of the composed span"),
        Param(
            "mean_rate_rps",
            4.0,
            "rps",
            low=0.0,
            low_inclusive=False,
            doc="mean the span's rate curve is scaled to before the search (sets the sample size only)",
        ),
        Param("rel_tol", 0.03, "fraction", low=0.0, high=0.5, low_inclusive=False, doc="capacity search tolerance"),
        *_SELECTION_AND_SERVER,
    ],
)
def serving_capacity(
    *,
    model,
    hour,
    workload,
    day,
    span_s,
    mean_rate_rps,
    rel_tol,
    top_clients,
    ttft_slo_s,
    prefill_us_per_token,
    decode_us_per_seq,
    kv_budget_tokens,
    seed,
):
    """Capacity (rps) of one server under the SLO for one workload kind of a model's hour."""
    pool, requests = _workload(model, day, hour, span_s, mean_rate_rps, top_clients, workload, seed)
    server = _server(model, prefill_us_per_token, decode_us_per_seq, kv_budget_tokens)
    result = capacity_search([requests], server, SLO(ttft_s=ttft_slo_s), duration_s=span_s, rel_tol=rel_tol)
    return {
        "capacity_rps": float(result.capacity_rps),
        "feasible": result.infeasible_workloads == 0,
        "requests": len(requests),
        "cv_median": float(pool.weighted_cv_quantiles([0.5])[0]),
    }


@experiment(
    "servegen-serving",
    version="1",
    small={"model": "m-small", "span_s": 200.0, "workload": ["composed", "naive"]},
    params=[
        _MODEL,
        _DAY,
        _HOUR,
        Param("span_s", 1200.0, "s", low=60.0, high=3600.0, log=True, label="span", doc="length of the span"),
        Param(
            "mean_rate_rps",
            3.0,
            "rps",
            low=0.1,
            high=100.0,
            log=True,
            label="mean rate",
            doc="mean the span's rate curve is scaled to",
        ),
        Param("workload", "composed", choices=WORKLOADS, seeded=False, doc="per-client composition or naive"),
        *_SELECTION_AND_SERVER,
    ],
)
def servegen_serving(
    *,
    model,
    day,
    hour,
    span_s,
    mean_rate_rps,
    workload,
    top_clients,
    ttft_slo_s,
    prefill_us_per_token,
    decode_us_per_seq,
    kv_budget_tokens,
    seed,
):
    """One workload kind of a model's span served on one linear-cost server: latencies, its rate timeline, its TTFT
    CDF. Rows by ``kind``: one ``summary`` (the latency percentiles, whether p99 TTFT meets the SLO, the queue left
    when arrivals stop, the server's costs), the ``timeline`` (arrivals per second in :data:`TIMELINE_BIN_S` bins)
    and the ``ttft`` CDF (a rejected request is infinitely late)."""
    _, requests = _workload(model, day, hour, span_s, mean_rate_rps, top_clients, workload, seed)
    server = _server(model, prefill_us_per_token, decode_us_per_seq, kv_budget_tokens)
    m = serve(requests, server).table
    s = latency_summary(m)
    b = backlog(m)
    summary = {
        "requests": len(m),
        "ttft_p50_s": s["ttft_p50_s"],
        "ttft_p99_s": s["ttft_p99_s"],
        "tbt_p50_s": s["tbt_p50_s"],
        "meets_slo": bool(s["ttft_p99_s"] <= ttft_slo_s),
        "rejected": int(b["rejected"]),
        "overloaded": bool(b["overloaded"]),
        "queued_at_end": int(b["queued_at_end"]),
        "queued_fraction": float(b["queued_fraction"]),
        "drain_s": float(b["drain_s"]),
        "server_prefill_us_per_token": server.prefill_token_s * 1e6,
        "server_decode_us_per_seq": server.decode_seq_s * 1e6,
        "server_kv_budget_tokens": int(server.kv_budget_tokens),
        "pool_clients": int(servegen.load_pool(model).n_clients),
    }
    start, rate = servegen_stats.rate_timeline(m["arrival_s"].to_numpy(), bin_s=TIMELINE_BIN_S, duration_s=span_s)
    ttft, fraction = ecdf(m["ttft_s"].where(~m["rejected"], float("inf")).to_numpy())
    return pd.concat(
        [
            pd.DataFrame([{"kind": "summary", **summary}]),
            pd.DataFrame({"kind": "timeline", "bin_start_s": start, "rate_rps": rate}),
            pd.DataFrame({"kind": "ttft", "ttft_s": ttft, "fraction": fraction}),
        ],
        ignore_index=True,
    )


def provisioning_gap(
    model: str,
    hours: Sequence[int] = (2, 8, 14, 20),
    *,
    span_s: float = 1800.0,
    day: int = 0,
    seeds: int = 2,
    mean_rate_rps: float = 4.0,
    rel_tol: float = 0.03,
    ablation: bool = False,
    base_seed: int = 0,
    client=False,
) -> pd.DataFrame:
    """Capacity under the composed and the naive workload per hour of day, and the naive plan's under-provisioning:
    a ``serving-capacity`` sweep over ``hours`` x workload x ``seeds`` (serially by default; cached).

    ``ablation`` adds the two half-naive workloads (columns ``arrivals_only_rps`` and ``lengths_only_rps``): which
    half of the composition costs the capacity. ``client`` is as in :func:`~workbench.experiments.sweep`.

    Returns
    -------
    DataFrame
        One row per hour (capacities under the default ``SLO()``): ``hour``, ``composed_rps``, ``naive_rps`` (means
        over seeds), ``underprovision``
        (1 - composed / naive, NaN if the naive capacity is 0), ``feasible`` (False when some composed workload misses
        the SLO at any rate, so its capacity is 0), ``requests`` (mean composed requests), ``cv_median`` (the span's
        rate-weighted median CV), then the ablation columns.

    Examples
    --------
    >>> g = provisioning_gap("m-small", hours=[14], span_s=300, seeds=1)
    >>> list(g.columns)[:4]
    ['hour', 'composed_rps', 'naive_rps', 'underprovision']
    """
    kinds = list(WORKLOADS if ablation else WORKLOADS[:2])
    grid = {
        "model": model,
        "hour": list(hours),
        "workload": kinds,
        "day": day,
        "span_s": span_s,
        "mean_rate_rps": mean_rate_rps,
        "rel_tol": rel_tol,
    }
    df = sweep("serving-capacity", grid, seeds, base_seed=base_seed, client=client, progress=False)
    by = df.groupby(["hour", "workload"], sort=False)
    capacity = by.capacity_rps.mean().unstack("workload")[kinds]
    composed = df[df.workload == "composed"].groupby("hour", sort=False)
    naive = capacity["naive"]
    out = pd.DataFrame(
        {
            "hour": capacity.index.astype(int),
            "composed_rps": capacity["composed"].to_numpy(),
            "naive_rps": naive.to_numpy(),
            "underprovision": np.where(naive > 0, 1 - capacity["composed"] / naive.where(naive > 0), np.nan),
            "feasible": composed.feasible.all().to_numpy(),
            "requests": composed.requests.mean().round().astype(int).to_numpy(),
            "cv_median": composed.cv_median.first().to_numpy(),
        }
    )
    for kind in kinds[2:]:
        out[f"{kind}_rps"] = capacity[kind].to_numpy()
    return out


@experiment(
    "serving-gpus",
    version="3",
    small={"model": "m-small", "span_s": 120.0, "mean_rate_rps": 3.0, "workload": ["composed", "naive"]},
    params=[
        Param("model", "m-large", choices=tuple(HARDWARE), doc="ServeGen model (sized on its HARDWARE mapping)"),
        _HOUR,
        Param("workload", "composed", choices=WORKLOADS[:2], seeded=False, doc="per-client composition or naive"),
        Param("span_s", 900.0, "s", low=60.0, high=86_400.0, doc="length of the composed span"),
        Param("mean_rate_rps", 20.0, "rps", low=0.0, low_inclusive=False, doc="mean the span's rate is scaled to"),
    ],
)
def serving_gpus(*, model, hour, workload, span_s, mean_rate_rps, seed):
    """GPUs one workload kind of a ServeGen model's hour needs on real hardware (p99 TTFT and TBT SLOs)."""
    pool = servegen.load_pool(model).select(hour * 3600, span_s)
    rng_compose, rng_naive = spawn(seed, 2)
    requests = servegen.compose(
        pool, start_s=hour * 3600, duration_s=span_s, mean_rate_rps=mean_rate_rps, seed=rng_compose
    )
    if workload != "composed":
        requests = servegen.naive_workload(requests, seed=rng_naive)
    row = plan_gpus(model, requests, span_s).table.iloc[0]  # its one candidate (replica_rps even if none meets)
    return {
        "replica_rps": float(row["replica_rps"]),
        "replicas": float(row["replicas"]),
        "gpus": float(row["gpus"]),
        "requests": len(requests),
    }


def provisioning_gap_gpus(
    model: str,
    hours: Sequence[int] = (2, 8, 14, 20),
    *,
    span_s: float = 900.0,
    mean_rate_rps: float = 20.0,
    seeds: int = 1,
    base_seed: int = 0,
    client=False,
) -> pd.DataFrame:
    """GPUs for the composed and the naive workload per hour of day, and the naive plan's under-provisioning: a
    ``serving-gpus`` sweep over ``hours`` x workload x ``seeds`` (serially by default; cached).

    The under-provisioning of the naive plan is ``1 - C_composed / C_naive``, ``C`` the rate one replica sustains
    under the SLO (means over seeds): one minus the ratio of the GPU counts ``rate / C x TP`` the two imply before
    rounding up to whole replicas (at a few replicas, whole-replica counts round the difference away).

    Returns
    -------
    DataFrame
        One row per hour: ``model``, ``hardware``, ``hour``, ``composed_replica_rps`` and ``naive_replica_rps``,
        ``composed_gpus`` and ``naive_gpus`` (whole replicas at the span's load), ``underprovision`` (NaN when the
        naive capacity is 0) and ``requests``.

    Examples
    --------
    >>> g = provisioning_gap_gpus("m-small", hours=[14], span_s=120, mean_rate_rps=3.0)
    >>> list(g.columns)[:4]
    ['model', 'hardware', 'hour', 'composed_replica_rps']
    """
    grid = {
        "model": model,
        "hour": list(hours),
        "workload": ["composed", "naive"],
        "span_s": span_s,
        "mean_rate_rps": mean_rate_rps,
    }
    df = sweep("serving-gpus", grid, seeds, base_seed=base_seed, client=client, progress=False)
    mean = df.groupby(["hour", "workload"], sort=False)[["replica_rps", "gpus", "requests"]].mean().unstack("workload")
    c, n = mean["replica_rps"]["composed"], mean["replica_rps"]["naive"]
    return pd.DataFrame(
        {
            "model": model,
            "hardware": hardware_label(model),
            "hour": mean.index.astype(int),
            "composed_replica_rps": c.to_numpy(),
            "naive_replica_rps": n.to_numpy(),
            "composed_gpus": mean["gpus"]["composed"].to_numpy(),
            "naive_gpus": mean["gpus"]["naive"].to_numpy(),
            "underprovision": np.where(n > 0, 1 - c / n.where(n > 0), np.nan),
            "requests": mean["requests"]["composed"].round().astype(int).to_numpy(),
        }
    )
