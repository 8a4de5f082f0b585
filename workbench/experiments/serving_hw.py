"""Serving on real hardware vs rate x model x GPU x parallelism x scheduler x balancer x preemption.

One point composes ``duration_s`` of ServeGen's M-large traffic at 14:00 (:func:`workbench.workloads.servegen.compose`,
the data's rate curve scaled to ``mean_rate_rps``) and serves it on ``replicas`` hardware replicas
(:func:`workbench.serving.serve`: a :class:`~workbench.serving.Deployment` of ``model`` on ``tp x pp`` GPUs run by
``engine``, iteration costs from ``costs``, paged KV cache) under ``scheduler`` with ``preemption``, behind
``balancer``. Reported (:func:`~workbench.serving.latency_summary`, the one definition of each statistic): TTFT and
TBT percentiles (a rejected request counts as infinitely late in TTFT), the fraction rejected (a prompt longer than a vLLM/Orca ``budget_tokens`` or a
context larger than the KV cache), output tokens per second per GPU, the fraction of requests preempted at least once
and the replicas' busy fraction. The scheduler, balancer and preemption are treatments (not seeded): the same requests meet each.
"""

from __future__ import annotations

from ..serving import BALANCERS, PREEMPTIONS, SCHEDULERS, Deployment, Scheduler, latency_summary, serve, specs
from ..serving.engines import engines
from ..serving.roofline import COST_SOURCES
from ..workloads import servegen
from ._space import Param, experiment

__all__ = ["serving_hardware"]

_START_S = 14 * 3600


@experiment(
    "serving-hardware",
    version="4",
    small={"mean_rate_rps": 2.0, "duration_s": 60.0, "scheduler": ["vllm", "sarathi"]},
    params=[
        Param("mean_rate_rps", 10.0, "rps", low=0.0, low_inclusive=False, doc="mean of M-large's 14:00 rate curve"),
        Param("duration_s", 300.0, "s", low=10.0, high=86_400.0, doc="length of the composed traffic"),
        Param("model", "Llama-3.1-8B", choices=tuple(specs.models()["model"]), seeded=False, doc="served model"),
        Param("gpu", "H100-SXM", choices=tuple(specs.gpus()["gpu"]), seeded=False, doc="accelerator"),
        Param("tp", 1, "", low=1, high=8, seeded=False, doc="tensor-parallel degree"),
        Param("pp", 1, "", low=1, high=8, seeded=False, doc="pipeline-parallel stages"),
        Param("replicas", 1, "", low=1, high=64, seeded=False, doc="replicas behind the balancer"),
        Param("scheduler", "vllm", choices=SCHEDULERS, seeded=False, doc="batching policy"),
        Param("budget_tokens", 8192, "tokens", low=64, high=65_536, seeded=False, doc="max_num_batched_tokens"),
        Param("balancer", "round_robin", choices=BALANCERS, seeded=False, doc="replica load balancer"),
        Param("preemption", "recompute", choices=PREEMPTIONS, seeded=False, doc="KV of a preempted request"),
        Param("engine", "vllm", choices=tuple(engines()), seeded=False, doc="serving engine (host work per step)"),
        Param(
            "costs",
            "curves",
            choices=COST_SOURCES,
            seeded=False,
            doc="operator costs: measured curves, Vidur's profiles (A100/H100, profiled models) or stated constants",
        ),
    ],
)
def serving_hardware(
    *,
    mean_rate_rps,
    duration_s,
    model,
    gpu,
    tp,
    pp,
    replicas,
    scheduler,
    budget_tokens,
    balancer,
    preemption,
    engine,
    costs,
    seed,
):
    """Latency percentiles and throughput of one deployment under one composed span of traffic."""
    pool = servegen.load_pool("m-large").select(_START_S, duration_s)
    requests = servegen.compose(pool, start_s=_START_S, duration_s=duration_s, mean_rate_rps=mean_rate_rps, seed=seed)
    dep = Deployment(model, gpu, tp=tp, pp=pp, engine=engine, costs=costs)
    sch = Scheduler(scheduler, max_num_batched_tokens=budget_tokens, preemption=preemption)
    run = serve(requests, dep, sch, n_replicas=replicas, balancer=balancer, seed=seed)
    m = run.table
    s = latency_summary(run)  # the one definition of each statistic (rejected requests: infinitely late)
    return {
        "requests": len(m),
        "rejected_fraction": s["rejected_fraction"],
        "ttft_p50_s": s["ttft_p50_s"],
        "ttft_p99_s": s["ttft_p99_s"],
        "tbt_p99_s": s["tbt_p99_s"],
        "output_tokens_per_s_per_gpu": s["output_tokens_per_s"] / run.gpus,
        "preempted_fraction": float((m["preemptions"] > 0).mean()),
        "busy_fraction": float(run.busy_fraction),
    }
