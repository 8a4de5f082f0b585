"""ServeGen's use case in GPUs: how many GPUs a naive workload model says you need, and how many the real one needs.

For a ServeGen model and an hour of the day, compose the per-client workload (each client's rate share, burstiness
and length distributions) and the naive one built from the same requests (one Poisson process at the same mean rate,
pooled lengths), then size a deployment of real hardware for each with :func:`~workbench.serving.gpus.capacity_gpus`
(p99 TTFT and TBT SLOs, the hardware-grounded replica with vLLM's scheduler). The *under-provisioning* of the naive
plan is ``1 - C_composed / C_naive`` where ``C`` is the rate one replica sustains under the SLO, i.e. one minus the
ratio of the GPU counts ``rate / C x TP`` the two models imply before rounding up to whole replicas: 0 when the
naive model is faithful, positive when it buys too few. The whole-replica counts at the span's load are reported
too (at a few replicas they round the difference away).

ServeGen's models are Alibaba's unnamed Qwen deployments; :data:`HARDWARE` maps each to a public model of similar
role and a GPU and TP degree (an assumption, stated here): M-large to Qwen2-72B on 4 x H100, M-mid to Mixtral-8x7B on
2 x H100, M-small to Llama-3.1-8B on one H100, DeepSeek-R1 to itself in FP8 on 8 x H200.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._rng import spawn
from .._validate import integer, positive
from ..workloads.servegen import compose, load_pool, naive_workload
from .capacity import SLO
from .engine import Scheduler
from .gpus import capacity_gpus
from .specs import model as model_spec

__all__ = ["HARDWARE", "provisioning_gap_gpus"]

#: ServeGen model -> (model spec, GPU, TP degree, SLO, vLLM's max_num_batched_tokens). Reasoning prompts reach 20k+
#: tokens: its batch budget covers them (vLLM sets it to the model length without chunked prefill) and its TTFT
#: target is looser.
HARDWARE: dict[str, tuple[str, str, int, SLO, int]] = {
    "m-large": ("Qwen2-72B", "H100-SXM", 4, SLO(ttft_s=2.0, tbt_s=0.1), 8192),
    "m-mid": ("Mixtral-8x7B", "H100-SXM", 2, SLO(ttft_s=2.0, tbt_s=0.1), 8192),
    "m-small": ("Llama-3.1-8B", "H100-SXM", 1, SLO(ttft_s=2.0, tbt_s=0.1), 8192),
    "deepseek-r1": ("DeepSeek-R1", "H200", 8, SLO(ttft_s=10.0, tbt_s=0.1), 65536),
}


def provisioning_gap_gpus(
    model: str,
    hours: Sequence[int] = (2, 8, 14, 20),
    *,
    span_s: float = 900.0,
    mean_rate_rps: float = 20.0,
    seeds: int = 1,
    seed: int = 0,
) -> pd.DataFrame:
    """GPUs for the composed and the naive workload per hour of day, and the naive plan's under-provisioning.

    Parameters
    ----------
    model : str
        A key of :data:`HARDWARE`.
    hours : sequence of int
        Hours of day 0 (each span starts at ``hour * 3600``).
    span_s : float
        Seconds composed per hour.
    mean_rate_rps : float
        The data's rate curve over the span is scaled to this mean (the deployment's load).
    seeds : int
        Workloads per hour; GPU counts are averaged.

    Returns
    -------
    DataFrame
        One row per hour: ``hour``, ``composed_replica_rps`` and ``naive_replica_rps`` (rate one replica sustains),
        ``composed_gpus`` and ``naive_gpus`` (whole replicas at the span's load, verified by simulation),
        ``underprovision`` (``1 - composed_replica_rps / naive_replica_rps``; NaN when the naive capacity is 0)
        and ``requests``; ``attrs`` has the hardware mapping and the SLO.

    Examples
    --------
    >>> g = provisioning_gap_gpus("m-small", hours=[14], span_s=300, mean_rate_rps=5.0)
    >>> list(g.columns)[:3]
    ['hour', 'composed_replica_rps', 'naive_replica_rps']
    """
    if model not in HARDWARE:
        raise ValueError(f"model must be one of {sorted(HARDWARE)}, got {model!r}")
    name, gpu, tp, slo, budget = HARDWARE[model]
    scheduler = Scheduler("vllm", max_num_batched_tokens=budget)
    spec = model_spec(name)
    if name.startswith("DeepSeek"):  # served in its native FP8
        spec = dataclasses.replace(spec, model=f"{name}-fp8", bytes_per_param=1.0)
    span = positive("span_s", span_s)
    target = positive("mean_rate_rps", mean_rate_rps)
    seeds = integer("seeds", seeds, minimum=1)
    pool = load_pool(model)
    rows = []
    for h, rng in zip(hours, spawn(seed, len(hours))):  # a handful of hours
        h = integer("hour", h, minimum=0, maximum=23)
        span_pool = pool.select(h * 3600, span)
        mean = float(span_pool.aggregate_rate().mean())
        if mean <= 0:
            raise ValueError(f"no traffic for {model} in the span starting at hour {h}")
        comp, naive = [], []
        for g in rng.spawn(seeds):
            w = compose(span_pool, start_s=h * 3600, duration_s=span, mean_rate_rps=target, seed=g)
            comp.append(capacity_gpus(w, spec, gpu, slo, tps=(tp,), scheduler=scheduler, duration_s=span).iloc[0])
            naive.append(
                capacity_gpus(
                    naive_workload(w, seed=g), spec, gpu, slo, tps=(tp,), scheduler=scheduler, duration_s=span
                ).iloc[0]
            )
        c_rps = float(np.mean([r["replica_rps"] for r in comp]))
        n_rps = float(np.mean([r["replica_rps"] for r in naive]))
        rows.append(
            {
                "hour": h,
                "composed_replica_rps": c_rps,
                "naive_replica_rps": n_rps,
                "composed_gpus": float(np.mean([r["gpus"] for r in comp])),
                "naive_gpus": float(np.mean([r["gpus"] for r in naive])),
                "underprovision": 1 - c_rps / n_rps if n_rps > 0 else np.nan,
                "requests": int(len(w)),
            }
        )
    out = pd.DataFrame(rows)
    out.attrs.update({"model": model, "hardware": f"{name} on {tp} x {gpu}", "slo": slo.describe()})
    return out
