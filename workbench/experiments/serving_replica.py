"""One iteration of a deployment, and one replica (or a few) serving a named window of a real trace: the parameter
studies of notebook 10 (costs by engine era and operator-cost source, schedulers, the TTFT of a current vLLM, swap vs
recompute, prefix sharing, TP vs PP, balancers, colocated vs disaggregated).

* ``serving-iteration``: one iteration of a :class:`~workbench.serving.Deployment` (``model`` on ``tp x pp`` GPUs,
  run by ``engine`` with ``costs``): a whole prompt of ``prompt_tokens`` (its causal pairs, one sampled token) and a
  decode of ``batch`` requests over ``context_tokens`` each. Reported: the iteration time
  (:meth:`~workbench.serving.Deployment.iteration_s`) and the attention kernels' time and share of the operators' total
  (:meth:`~workbench.serving.Deployment.breakdown`, one pipeline stage when ``pp > 1``).
* ``serving-swap-cost``: the one swap cost (:func:`~workbench.serving.swap_seconds`) of one request's
  ``context_tokens`` on that deployment, one way, copied in groups of ``swap_group_blocks`` blocks: its copy calls,
  its time and the share of that time spent in the calls' fixed overhead (notebook 14's copy-cost table).
* ``serving-replica``: the first ``window_s`` seconds of a trace (a ServeGen composition of ``source`` at 14:00, or
  Mooncake's conversation trace with its ``hash_ids``) at ``rate_scale`` times its rate, served
  (:func:`workbench.serving.serve`) on ``replicas`` replicas behind ``balancer`` under ``scheduler`` (or the engine's
  own policy) with ``preemption`` (swap in groups of ``swap_group_blocks`` blocks) and ``prefix_sharing``, or on
  ``replicas`` prefill and ``replicas`` decode replicas (``disaggregated``,
  :func:`~workbench.serving.disagg.serve_disaggregated`). ``host_work`` and ``frontend`` take the engine's host work and
  API server out, mechanism by mechanism. Reported (:func:`~workbench.serving.latency_summary`, the one definition of
  each statistic): TTFT, TBT and end-to-end statistics, output tokens per second, the KV cache, the preemptions, the
  prompt tokens against those prefilled (recomputation adds, shared prefixes save; NaN for a disaggregated run, which
  does not record them) and the time stalled on swaps.
* ``serving-replica-requests``: the same run, one row per request (``arrival_s``, ``ttft_s``, ``tbt_s``,
  ``rejected``): the latency distributions behind the statistics.
* ``serving-replica-gpus``: the GPUs the trace window needs within a p99 TTFT and TBT SLO under one engine and cost
  source, each replica run with the engine's default policy or ``scheduler``: the capacity search
  (:func:`~workbench.serving.gpus.capacity_gpus`) over the tensor-parallel degrees from ``min_tp`` up.

``traffic_seed`` names the seed of a stated study (notebook 10 composes its traffic with seed 0); at -1 the sweep's
seed is used. Everything else is a treatment (not seeded): the same requests meet each policy.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from ..serving import (
    SCHEDULERS,
    SLO,
    Deployment,
    Scheduler,
    latency_summary,
    swap_seconds,
)
from ..serving.engines import engine as engine_profile
from ..serving.gpus import capacity_gpus
from ..workloads.traces import load_mooncake
from ._space import Param, experiment
from .serving_hw import _SERVED, _SLO, SOURCES, WORKLOADS, _requests, _serve_point

__all__ = [
    "serving_iteration",
    "serving_swap_cost",
    "serving_replica",
    "serving_replica_requests",
    "serving_replica_gpus",
    "TRACES",
    "HOST_WORK",
]

#: The traces a replica can be offered: a ServeGen composition, or Mooncake's conversation trace (FAST'25).
TRACES = ("servegen", "mooncake-conversation")
_MOONCAKE = {"mooncake-conversation": "mooncake-fast25/conversation_trace.jsonl"}
#: The engine's host work as profiled; none of it (the GPU work alone, scheduled as the engine does, one step ahead
#: for a current vLLM); none of it and scheduled synchronously.
HOST_WORK = ("engine", "none", "none-synchronous")

#: serving_hw's Params (each declared once, there), by name.
_HW = {p.name: p for p in _SERVED}
#: KV blocks per contiguous swap copy (serving-swap-cost, serving-replica).
_SWAP_GROUP = Param(
    "swap_group_blocks",
    1,
    "",
    low=1,
    high=4096,
    seeded=False,
    label="blocks per swap copy",
    doc="KV blocks per contiguous swap copy (1: vLLM's swap_blocks; 64: FastSwitch's block groups)",
)


def _replace(params: list[Param], **defaults) -> list[Param]:
    return [dataclasses.replace(p, default=defaults[p.name]) if p.name in defaults else p for p in params]


def _shared(*names: str, **defaults) -> list[Param]:
    """serving_hw's Params named ``names``, in that order, with other ``defaults``."""
    return _replace([_HW[n] for n in names], **defaults)


_DEPLOYMENT = _shared("model", "gpu", "tp", "pp", "engine", "costs", model="Llama-2-70B", gpu="A100-80GB", tp=4)


@experiment(
    "serving-iteration",
    version="1",
    small=[{"batch": 128, "context_tokens": 1000}, {"prompt_tokens": 2048, "batch": 0, "costs": "stated"}],
    params=[
        *_DEPLOYMENT,
        _HW["overlap"],
        Param("prompt_tokens", 0, "tokens", low=0, high=1_000_000, doc="tokens of one whole prompt prefilled"),
        Param("batch", 1, "", low=0, high=100_000, doc="requests decoding one token each"),
        Param("context_tokens", 1000, "tokens", low=0, high=10_000_000, doc="KV tokens of each decoding request"),
    ],
)
def serving_iteration(*, model, gpu, tp, pp, engine, costs, overlap, prompt_tokens, batch, context_tokens, seed):
    """Time of one iteration (a prompt prefilled and a batch decoded) and of its attention kernels."""
    if prompt_tokens == 0 and batch == 0:
        raise ValueError("an iteration needs work: prompt_tokens > 0 (a prompt to prefill) or batch > 0 (decodes)")
    dep = Deployment(model, gpu, tp=tp, pp=pp, engine=engine, costs=costs, overlap=overlap)
    # the prompt's causal pairs; every decoding request and the finished prompt sample a token
    pairs = prompt_tokens * (prompt_tokens + 1) / 2
    work = (prompt_tokens, pairs, batch, batch * context_tokens, batch + int(prompt_tokens > 0))
    ops = dep.breakdown(*work).set_index("operator")["time_s"]
    attention = float(ops["attn_prefill"] + ops["attn_decode"])
    return {
        "iteration_s": float(dep.iteration_s(*work)),
        "attention_s": attention,
        "attention_share": attention / float(ops.sum()),
    }


@experiment(
    "serving-swap-cost",
    version="1",
    small={"swap_group_blocks": [1, 64]},
    params=[
        *_replace(_DEPLOYMENT, model="Llama-3.1-8B", tp=1),
        Param("context_tokens", 1000, "tokens", low=0, high=10_000_000, doc="KV tokens of the request copied"),
        _SWAP_GROUP,
    ],
)
def serving_swap_cost(*, model, gpu, tp, pp, engine, costs, context_tokens, swap_group_blocks, seed):
    """Copy calls and time of one request's KV swapped one way, and the calls' share of that time."""
    dep = Deployment(model, gpu, tp=tp, pp=pp, engine=engine, costs=costs)
    block = Scheduler().block_tokens  # the engine's 16-token blocks
    blocks = -(-context_tokens // block)
    calls = -(-blocks // swap_group_blocks) * dep.swap_calls_per_copy
    copy_s = float(swap_seconds(dep, context_tokens, block_tokens=block, group_blocks=swap_group_blocks))
    return {
        "blocks": int(blocks),
        "copy_calls": int(calls),
        "copy_s": copy_s,
        "call_share": calls * dep.swap_call_s / copy_s if copy_s > 0 else 0.0,
    }


_REPLICA = [
    Param("trace", "servegen", choices=TRACES, seeded=False, doc="ServeGen composition or Mooncake's trace"),
    Param("source", "m-large", choices=SOURCES, seeded=False, label="ServeGen traffic", doc="ServeGen language model"),
    Param("workload", "composed", choices=WORKLOADS, seeded=False, doc="per-client composition or its naive twin"),
    Param(
        "mean_rate_rps",
        30.0,
        "rps",
        low=0.1,
        high=1000.0,
        log=True,
        label="mean rate",
        doc="mean of the ServeGen source's 14:00 rate curve (before rate_scale; a GPU search at 1,000: minutes)",
    ),
    Param("duration_s", 600.0, "s", low=10.0, high=86_400.0, doc="length of the composed ServeGen traffic"),
    Param(
        "traffic_seed",
        -1,
        "",
        low=-1,
        high=2**31 - 1,
        seeded=False,
        doc="-1: the sweep's seed; else the seed of a stated study's traffic (and of a random balancer)",
    ),
    Param(
        "window_s",
        0.0,
        "s",
        low=0.0,
        high=86_400.0,
        label="trace window",
        doc="serve the requests arriving in the trace's first window_s seconds (it starts at 0); 0: all of them",
    ),
    Param(
        "rate_scale", 1.0, "", low=0.01, high=100.0, log=True, seeded=False, doc="arrival rate x (gaps divided by it)"
    ),
    *_replace(_DEPLOYMENT, model="Llama-3.1-8B", gpu="H100-SXM", tp=1),
    Param(
        "max_kv_tokens",
        0,
        "tokens",
        low=0,
        high=100_000_000,
        seeded=False,
        label="KV cache cap",
        doc="cap on a replica's KV cache; 0: what its memory holds",
    ),
    Param("host_work", "engine", choices=HOST_WORK, seeded=False, doc="the engine's host work, none, or none and sync"),
    Param("frontend", True, seeded=False, label="API server", doc="the engine's API server time on the first token"),
    _HW["replicas"],
    Param(
        "scheduler",
        "engine",
        choices=("engine", *SCHEDULERS),
        seeded=False,
        doc="batching policy; engine: the engine's default policy and budget (budget_tokens unused)",
    ),
    _HW["budget_tokens"],
    _HW["preemption"],
    _SWAP_GROUP,
    Param("prefix_sharing", False, seeded=False, doc="hold blocks of equal hash_ids once (Mooncake's trace)"),
    _HW["balancer"],
    _HW["disaggregated"],
]


def _trace(p: dict, seed: int) -> pd.DataFrame:
    if p["trace"] == "servegen":
        requests = _requests(p["source"], p["workload"], p["mean_rate_rps"], p["duration_s"], seed)
    else:
        requests = load_mooncake(_MOONCAKE[p["trace"]])
    if p["window_s"] > 0:
        requests = requests[requests["arrival_s"] < p["window_s"]]
    return requests.reset_index(drop=True)


def _deployment(p: dict) -> Deployment:
    profile = engine_profile(p["engine"])
    if p["host_work"] != "engine":
        overlap_cpu = profile.overlap_cpu and p["host_work"] == "none"
        profile = dataclasses.replace(
            profile, iteration_s=0.0, per_seq_s=0.0, tp_iteration_s=0.0, overlap_cpu=overlap_cpu
        )
    return Deployment(
        p["model"],
        p["gpu"],
        tp=p["tp"],
        pp=p["pp"],
        engine=profile,
        costs=p["costs"],
        max_kv_tokens=p["max_kv_tokens"] or None,
        frontend_s=None if p["frontend"] else 0.0,
    )


def _scheduler(p: dict) -> Scheduler:
    """The point's policy: ``scheduler`` with ``budget_tokens``, or the engine's default on the GPU (``Scheduler()``
    where its profile states none), with ``preemption`` and ``swap_group_blocks``."""
    if p["scheduler"] == "engine":
        policy = engine_profile(p["engine"]).scheduler(p["gpu"]) or Scheduler()
        return dataclasses.replace(policy, preemption=p["preemption"], swap_group_blocks=p["swap_group_blocks"])
    return Scheduler(
        p["scheduler"],
        max_num_batched_tokens=p["budget_tokens"],
        preemption=p["preemption"],
        swap_group_blocks=p["swap_group_blocks"],
    )


def _run(p: dict, seed: int):
    """(deployment, served run) of one ``serving-replica`` point ``p``."""
    if p["prefix_sharing"] and p["trace"] not in _MOONCAKE:
        raise ValueError(
            f"prefix_sharing=True needs a trace with prefix-block ids: trace={p['trace']!r} has none (its requests "
            f"share no blocks); set prefix_sharing=False or trace to one of {', '.join(map(repr, _MOONCAKE))}"
        )
    seed = seed if p["traffic_seed"] < 0 else p["traffic_seed"]
    requests = _trace(p, seed)
    dep = _deployment(p)
    sch = _scheduler(p)
    run = _serve_point(
        requests, dep, sch, p, seed, rate_scale=p["rate_scale"], prefix_sharing=p["prefix_sharing"]
    )  # fmt: skip
    return dep, run


_SMALL = {"window_s": 30.0, "duration_s": 60.0, "scheduler": ["vllm", "sarathi"], "budget_tokens": 2048}


@experiment("serving-replica", version="1", small=_SMALL, params=_REPLICA)
def serving_replica(*, seed, **p):
    """Latency statistics, throughput, KV cache, preemptions and prefill work of a trace window on a replica."""
    dep, run = _run(p, seed)
    m = run.table
    s = latency_summary(run)
    keys = ("ttft_mean_s", "ttft_p50_s", "ttft_p99_s", "tbt_mean_s", "tbt_p50_s", "tbt_p99_s", "e2e_p50_s", "e2e_p99_s")
    return {
        "requests": len(m),
        "rejected_fraction": s["rejected_fraction"],
        **{k: s[k] for k in keys},
        "output_tokens_per_s": s["output_tokens_per_s"],
        "gpus": int(run.gpus),
        "kv_capacity_tokens": int(dep.kv_capacity_tokens),
        "preemptions": int(m["preemptions"].sum()),
        "prompt_tokens": int(m["input_tokens"].sum()),
        "output_tokens": int(m["output_tokens"].sum()),
        # a disaggregated run does not record its prefill pool's work per request
        "prefilled_tokens": float(m["prefill_tokens"].sum()) if "prefill_tokens" in m else math.nan,
        "swap_stall_s": float(run.swaps.stall_s) if run.swaps is not None else 0.0,
    }


@experiment("serving-replica-requests", version="1", small=_SMALL, params=_REPLICA)
def serving_replica_requests(*, seed, **p):
    """Per-request latencies of one ``serving-replica`` point (the distributions behind its statistics)."""
    _, run = _run(p, seed)
    m = run.table
    return pd.DataFrame(
        {
            "arrival_s": m["arrival_s"].to_numpy(float),
            "ttft_s": m["ttft_s"].to_numpy(float),
            "tbt_s": m["tbt_s"].to_numpy(float),
            "rejected": m["rejected"].to_numpy(bool),
        }
    )


_GPUS = ("model", "gpu", "engine", "costs", "scheduler", "budget_tokens", "preemption", "swap_group_blocks", "balancer")
_TP_CHOICES = (1, 2, 4, 8)


@experiment(
    "serving-replica-gpus",
    version="1",
    small={"window_s": 30.0, "duration_s": 60.0, "mean_rate_rps": 5.0, "engine": ["vllm", "vllm-v0"]},
    params=[
        *_REPLICA[:7],
        *_replace([q for q in _REPLICA if q.name in _GPUS], model="Qwen2-72B"),
        Param(
            "min_tp",
            4,
            "",
            choices=_TP_CHOICES,
            seeded=False,
            label="smallest TP searched",
            doc="the capacity search tries every tensor-parallel degree of 1, 2, 4, 8 from this one up",
        ),
        *_SLO,
    ],
)
def serving_replica_gpus(*, seed, **p):
    """GPUs (replicas x TP) a trace window needs within the SLO under one engine (NaN when no plan meets it)."""
    window = p["window_s"] or (p["duration_s"] if p["trace"] == "servegen" else None)
    if window is not None and window <= p["ttft_slo_s"]:  # a queue cannot build up to the target: every count passes
        name = "window_s" if p["window_s"] else "duration_s"
        raise ValueError(
            f"{name}={window:g} s is no longer than ttft_slo_s={p['ttft_slo_s']:g} s: a backlog cannot reach the "
            f"TTFT target within it, so every GPU count would pass; raise {name} or lower ttft_slo_s"
        )
    requests = _trace(p, seed if p["traffic_seed"] < 0 else p["traffic_seed"])
    slo = SLO(ttft_s=p["ttft_slo_s"], tbt_s=p["tbt_slo_s"])
    plan = capacity_gpus(
        requests,
        p["model"],
        p["gpu"],
        slo,
        tps=tuple(t for t in _TP_CHOICES if t >= p["min_tp"]),
        scheduler=_scheduler(p),
        balancer=p["balancer"],
        engine=p["engine"],
        costs=p["costs"],
        duration_s=window,
    )
    return {
        "feasible": bool(plan.feasible),
        "gpus": float(plan.gpus),
        "replicas": float(plan.replicas),
        "best_tp": int(plan.tp) if plan.tp is not None else 0,
        "replica_rps": float(plan.replica_rps),
        "evaluations": int(plan.evaluations),
        "slo": slo.describe(),
    }
