"""Serving on real hardware vs rate x model x GPU x parallelism x scheduler x balancer x preemption, its per-request
latencies, and the GPUs a workload needs.

One point composes ``duration_s`` of a ServeGen language model's traffic (``source``, M-large by default) at 14:00
(:func:`workbench.workloads.servegen.compose`, the data's rate curve scaled to ``mean_rate_rps``), or its naive
Poisson twin (``workload="naive"``, :func:`~workbench.workloads.servegen.naive_workload`), and serves it on
``replicas`` hardware replicas (:func:`workbench.serving.serve`: a :class:`~workbench.serving.Deployment` of ``model``
on ``tp x pp`` GPUs run by ``engine``, iteration costs from ``costs``, optionally ``overlap``\\ped as NanoFlow, paged KV
cache) under ``scheduler`` with ``preemption``, behind ``balancer``; ``disaggregated`` serves it on ``replicas``
prefill and ``replicas`` decode replicas instead (:func:`~workbench.serving.disagg.serve_disaggregated`).

* ``serving-hardware``: one row. Reported (:func:`~workbench.serving.latency_summary`, the one definition of each
  statistic): TTFT and TBT percentiles (a rejected request counts as infinitely late in TTFT), the fraction rejected
  (a prompt longer than a vLLM/Orca ``budget_tokens`` or a context larger than the KV cache), output tokens per second
  per GPU, the fraction of requests preempted at least once and the replicas' busy fraction; and what a reader needs
  beside them: the KV cache, the preemptions, NanoFlow's optimal throughput bound of a replica
  (:func:`~workbench.serving.gpus.optimal_throughput`) and the queue the run leaves when arrivals stop
  (:func:`~workbench.serving.metrics.backlog`).
* ``serving-hardware-requests``: the same run, one row per request (``arrival_s``, ``ttft_s``, ``tbt_s``,
  ``rejected``): the latency distributions behind the percentiles.
* ``serving-hardware-gpus``: the GPUs the workload needs within a p99 TTFT and TBT SLO: the capacity search over
  every tensor-parallel degree of ``tp``'s choices and the replicas of each
  (:func:`~workbench.serving.gpus.capacity_gpus`).

The source, workload kind, scheduler, balancer, preemption and execution mode are treatments (not seeded): the same
draws meet each.
"""

from __future__ import annotations

import math

import pandas as pd

from ..serving import (
    BALANCERS,
    PREEMPTIONS,
    SCHEDULERS,
    SLO,
    Deployment,
    Scheduler,
    latency_summary,
    serve,
    specs,
)
from ..serving.disagg import serve_disaggregated
from ..serving.engines import engines
from ..serving.gpus import capacity_gpus, optimal_throughput
from ..serving.metrics import backlog
from ..serving.roofline import COST_SOURCES
from ..workloads import servegen
from ._space import Param, experiment

__all__ = ["serving_hardware", "serving_hardware_requests", "serving_hardware_gpus", "SOURCES", "WORKLOADS"]

_START_S = 14 * 3600
#: ServeGen's language models: the client pools whose traffic a deployment is offered.
SOURCES = tuple(m for m, (kind, _) in servegen.MODELS.items() if kind == "language")
#: The traffic: the per-client composition, or its naive Poisson twin at the same mean rate.
WORKLOADS = ("composed", "naive")

_TRAFFIC = [
    Param(
        "mean_rate_rps",
        10.0,
        "rps",
        low=0.1,
        high=1000.0,
        log=True,
        label="mean rate",
        doc="mean of the source's 14:00 rate curve (0.1 to 1000 req/s: up to 64 replicas of a small model)",
    ),
    Param("duration_s", 300.0, "s", low=10.0, high=86_400.0, doc="length of the composed traffic"),
    Param("source", "m-large", choices=SOURCES, seeded=False, label="ServeGen traffic", doc="ServeGen language model"),
    Param("workload", "composed", choices=WORKLOADS, seeded=False, doc="per-client composition or its naive twin"),
]
_MODEL = [
    Param("model", "Llama-3.1-8B", choices=tuple(specs.models()["model"]), seeded=False, doc="served model"),
    Param("gpu", "H100-SXM", choices=tuple(specs.gpus()["gpu"]), seeded=False, label="GPU", doc="accelerator"),
]
_TP = Param(
    "tp",
    1,
    "",
    choices=(1, 2, 4, 8),
    seeded=False,
    label="tensor parallel",
    doc="tensor-parallel degree (a power of two: the models' attention heads shard evenly; one node of 8 GPUs)",
)
_SPREAD = [
    Param("pp", 1, "", low=1, high=8, seeded=False, doc="pipeline-parallel stages"),
    Param("replicas", 1, "", low=1, high=64, seeded=False, doc="replicas behind the balancer"),
]
_SCHEDULING = [
    Param(
        "scheduler",
        "sarathi",
        choices=SCHEDULERS,
        seeded=False,
        doc="batching policy: sarathi (chunked prefill, what a current vLLM runs), vllm (whole prompts first: vLLM "
        "before V1), orca, reserve",
    ),
    Param(
        "budget_tokens",
        8192,
        "tokens",
        low=64,
        high=65_536,
        log=True,
        seeded=False,
        label="token budget",
        doc="max_num_batched_tokens: the longest prompt for vLLM and Orca, the chunk for Sarathi-Serve",
    ),
    Param("balancer", "round_robin", choices=BALANCERS, seeded=False, doc="replica load balancer"),
    Param("preemption", "recompute", choices=PREEMPTIONS, seeded=False, doc="KV of a preempted request"),
]
_EXECUTION = [
    Param("engine", "vllm", choices=tuple(engines()), seeded=False, doc="serving engine (host work per step)"),
    Param(
        "costs",
        "curves",
        choices=COST_SOURCES,
        seeded=False,
        label="operator costs",
        doc="operator costs: measured curves, Vidur's profiles (A100/H100, profiled models) or stated constants",
    ),
    Param("overlap", False, seeded=False, label="overlapped (NanoFlow)", doc="overlapped execution (NanoFlow)"),
    Param(
        "disaggregated",
        False,
        seeded=False,
        doc="prefill and decode on separate pools of `replicas` replicas each (KV moved between them)",
    ),
]
_SERVED = [*_TRAFFIC, *_MODEL, _TP, *_SPREAD, *_SCHEDULING, *_EXECUTION]
_SLO = [
    Param("ttft_slo_s", 2.0, "s", low=0.1, high=10.0, log=True, label="p99 TTFT SLO", doc="p99 TTFT objective"),
    Param("tbt_slo_s", 0.1, "s", low=0.01, high=1.0, log=True, label="p99 TBT SLO", doc="p99 TBT objective"),
]


def _requests(source, workload, mean_rate_rps, duration_s, seed) -> pd.DataFrame:
    pool = servegen.load_pool(source).select(_START_S, duration_s)
    requests = servegen.compose(pool, start_s=_START_S, duration_s=duration_s, mean_rate_rps=mean_rate_rps, seed=seed)
    if not requests.empty and workload != "composed":
        requests = servegen.naive_workload(requests, seed=seed)
    if requests.empty:  # a point to serve needs requests: say which knobs give some
        raise ValueError(
            f"the {source} workload drew no request in duration_s={duration_s:g} s at mean_rate_rps="
            f"{mean_rate_rps:g} (about {mean_rate_rps * duration_s:.2g} expected): raise mean_rate_rps or duration_s"
        )
    return requests


def _serve_point(requests, dep, sch, p: dict, seed: int, **options):
    """``requests`` served on ``p["replicas"]`` replicas of ``dep`` under ``sch`` (each pool's when
    ``p["disaggregated"]``: prefill and decode pools of that many), balanced by ``p["balancer"]``; ``options`` go to
    :func:`~workbench.serving.serve` (rate_scale, prefix_sharing), which a disaggregated run does not take."""
    if p["disaggregated"]:
        if any(v not in (1.0, False) for v in options.values()):
            raise ValueError("disaggregated serving takes neither prefix_sharing nor a rate_scale other than 1")
        return serve_disaggregated(
            requests,
            dep,
            dep,
            n_prefill=p["replicas"],
            n_decode=p["replicas"],
            prefill_scheduler=sch,
            decode_scheduler=sch,
            balancer=p["balancer"],
            seed=seed,
        )
    return serve(requests, dep, sch, n_replicas=p["replicas"], balancer=p["balancer"], seed=seed, **options)


def _run(p: dict):
    """(requests, deployment, served run) of one ``serving-hardware`` point ``p`` (its parameters and ``seed``)."""
    requests = _requests(p["source"], p["workload"], p["mean_rate_rps"], p["duration_s"], p["seed"])
    dep = Deployment(
        p["model"], p["gpu"], tp=p["tp"], pp=p["pp"], engine=p["engine"], costs=p["costs"], overlap=p["overlap"]
    )
    sch = Scheduler(p["scheduler"], max_num_batched_tokens=p["budget_tokens"], preemption=p["preemption"])
    run = _serve_point(requests, dep, sch, p, p["seed"])
    return requests, dep, run


@experiment(
    "serving-hardware",
    version="5",
    small={"mean_rate_rps": 2.0, "duration_s": 60.0, "scheduler": ["vllm", "sarathi"]},
    params=_SERVED,
)
def serving_hardware(*, seed, **p):
    """Latency percentiles and throughput of one deployment under one composed span of traffic."""
    requests, dep, run = _run({**p, "seed": seed})
    m = run.table
    s = latency_summary(run)  # the one definition of each statistic (rejected requests: infinitely late)
    bound = optimal_throughput(dep, float(requests["input_tokens"].mean()) + 1, float(requests["output_tokens"].mean()))
    b = backlog(m)
    return {
        "requests": len(m),
        "rejected_fraction": s["rejected_fraction"],
        "ttft_p50_s": s["ttft_p50_s"],
        "ttft_p99_s": s["ttft_p99_s"],
        "tbt_p99_s": s["tbt_p99_s"],
        "output_tokens_per_s_per_gpu": s["output_tokens_per_s"] / run.gpus,
        "preempted_fraction": float((m["preemptions"] > 0).mean()),
        "busy_fraction": float(run.busy_fraction),
        "gpus": int(run.gpus),
        "kv_capacity_tokens": int(dep.kv_capacity_tokens),
        "preemptions": int(m["preemptions"].sum()),
        "optimal_tokens_per_s": float(bound["optimal_tokens_per_s"]),
        "bound": str(bound["bound"]),
        "bound_batch": float(bound["batch"]),
        "rejected": int(b["rejected"]),
        "overloaded": bool(b["overloaded"]),
        "queued_at_end": int(b["queued_at_end"]),
        "queued_fraction": float(b["queued_fraction"]),
        "drain_s": float(b["drain_s"]),
    }


@experiment(
    "serving-hardware-requests",
    version="1",
    small={"mean_rate_rps": 2.0, "duration_s": 60.0, "workload": ["composed", "naive"]},
    params=_SERVED,
)
def serving_hardware_requests(*, seed, **p):
    """Per-request latencies of one ``serving-hardware`` point (the distributions behind its percentiles)."""
    _, _, run = _run({**p, "seed": seed})
    m = run.table
    return pd.DataFrame(
        {
            "arrival_s": m["arrival_s"].to_numpy(float),
            "ttft_s": m["ttft_s"].to_numpy(float),
            "tbt_s": m["tbt_s"].to_numpy(float),
            "rejected": m["rejected"].to_numpy(bool),
        }
    )


@experiment(
    "serving-hardware-gpus",
    version="1",
    small={"mean_rate_rps": 2.0, "duration_s": 60.0, "scheduler": ["vllm", "sarathi"]},
    params=[*_TRAFFIC, *_MODEL, *_SCHEDULING, *_EXECUTION[:3], *_SLO],
)
def serving_hardware_gpus(*, seed, **p):
    """GPUs (replicas x TP) the composed traffic needs within the SLO: the capacity search over TP in ``tp``'s
    choices (the cheapest candidate; NaN when none meets the SLO)."""
    requests = _requests(p["source"], p["workload"], p["mean_rate_rps"], p["duration_s"], seed)
    sch = Scheduler(p["scheduler"], max_num_batched_tokens=p["budget_tokens"], preemption=p["preemption"])
    slo = SLO(ttft_s=p["ttft_slo_s"], tbt_s=p["tbt_slo_s"])
    plan = capacity_gpus(
        requests,
        p["model"],
        p["gpu"],
        slo,
        tps=_TP.choices,
        scheduler=sch,
        balancer=p["balancer"],
        overlap=p["overlap"],
        engine=p["engine"],
        costs=p["costs"],
        duration_s=p["duration_s"],
    )
    return {
        "feasible": bool(plan.feasible),
        "gpus": float(plan.gpus),
        "replicas": float(plan.replicas),
        "best_tp": int(plan.tp) if plan.tp is not None else 0,
        "replica_rps": float(plan.table["replica_rps"].max()) if len(plan.table) else math.nan,
        "slo": slo.describe(),
    }
