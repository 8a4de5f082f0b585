"""Answers in GPUs: capacity for a workload under latency SLOs, and NanoFlow's optimal-throughput bound.

:func:`capacity_gpus` answers "how many GPUs, at which tensor-parallel degree, serve this workload with p99 TTFT <= X
and p99 TBT <= Y": for each TP degree whose replica fits the model, it searches the largest rate scale one replica
sustains (the package's one capacity search, :func:`~workbench.serving.capacity.max_rate_scale`, bracketing by
factors of 4 within ``[2^-12, 2^12]``; early-stopped runs), sizes the replica count from it, then checks that count
and the one below by simulating the whole workload behind the load balancer, stepping up until the SLO holds.

:func:`optimal_throughput` follows NanoFlow's analysis (Zhu et al., OSDI'25, arXiv:2408.12757, §3): with a batch as
large as the KV cache allows, an iteration costs at least the busiest of compute (``2 x active parameters`` FLOPs per
token plus attention), memory (weights once per iteration plus the KV cache read by the decodes) and network
(tensor-parallel all-reduces). Without the attention and network refinements, the compute term gives NanoFlow's
headline bound, ``tokens/s = GPUs x peak FLOP/s / (2 x active parameters)``. The resource that binds at that batch
classifies the (model, GPU, workload) as compute-, memory- or network-bound. Sequential execution pays the sum of the
operators' times instead of the maximum of the resources, which is what overlapping recovers.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from .._validate import integer, positive
from .capacity import SLO, ScaleSearch, max_rate_scale, meets_slo
from .cluster import serve
from .engine import Scheduler
from .roofline import Deployment

__all__ = ["optimal_throughput", "capacity_gpus"]


def optimal_throughput(
    deployment: Deployment, input_tokens: float, output_tokens: float, *, batch: int | None = None, at_peak: bool = True
) -> dict[str, float | str]:
    """NanoFlow's throughput bound of a replica for a workload of mean prompt and output lengths.

    Parameters
    ----------
    deployment : Deployment
    input_tokens, output_tokens : float
        Mean prompt and output lengths.
    batch : int, optional
        Decoding requests per iteration; defaults to the densest the KV cache holds (each request's mean resident
        context is ``input + output / 2``).
    at_peak : bool
        Use the datasheet peaks (NanoFlow's optimum); ``False`` applies the stated efficiencies.

    Returns
    -------
    dict
        ``batch``; ``compute_s``, ``memory_s``, ``network_s`` (per steady-state iteration: ``batch`` decodes plus the
        prompt tokens the workload brings per decoded token); ``bound`` (the resource that binds);
        ``optimal_tokens_per_s`` and ``sequential_tokens_per_s`` (total tokens, prompt and output, per second per
        GPU, overlapped bound vs sequential execution); ``headline_tokens_per_s`` (peak / (2 x active params)).

    Examples
    --------
    >>> r = optimal_throughput(Deployment("Llama-2-70B", "A100-80GB", tp=8), 1024, 512)
    >>> r["bound"], round(r["headline_tokens_per_s"])
    ('compute', 2261)
    """
    positive("input_tokens", input_tokens)
    positive("output_tokens", output_tokens)
    dep = deployment
    if at_peak:
        from .roofline import Efficiency

        dep = dataclasses.replace(
            deployment,
            efficiency=Efficiency(1.0, 1.0, 1.0, allreduce_latency_s=0.0),
            costs="stated",  # the datasheet's peaks, not the measured curves
            overhead_s=None,
            engine="nanoflow",  # no host cost: the peak is the hardware's
        )
    ctx = input_tokens + output_tokens / 2
    b = integer("batch", batch, minimum=1) if batch is not None else max(1, int(dep.kv_capacity_tokens // ctx))
    prefill = b * input_tokens / output_tokens  # prompt tokens per iteration in steady state
    n_prompts = b / output_tokens
    res = dep.resources(prefill, n_prompts * input_tokens * (input_tokens + 1) / 2, b, b * ctx, b)
    comp = sum(r[0] for r in res.values())
    mem = sum(r[1] for r in res.values())
    net = sum(r[2] for r in res.values())
    tokens = b + prefill
    seq = dep.profile.combine(sum(max(r) for r in res.values()), dep.cpu_s(b))  # sequential execution
    m, g = dep.model, dep.gpu
    return {
        "batch": float(b),
        "compute_s": comp,
        "memory_s": mem,
        "network_s": net,
        "bound": ("compute", "memory", "network")[int(np.argmax([comp, mem, net]))],
        "optimal_tokens_per_s": tokens / max(comp, mem, net) / dep.gpus,
        "sequential_tokens_per_s": tokens / seq / dep.gpus,
        "headline_tokens_per_s": g.peak_flops(dep.dtype) / (2 * m.active_params),
    }


def capacity_gpus(
    requests: pd.DataFrame,
    model,
    gpu,
    slo: SLO | None = None,
    *,
    tps=(1, 2, 4, 8),
    scheduler: Scheduler | None = None,
    balancer: str = "round_robin",
    overlap: bool = False,
    engine: str | None = None,
    costs: str | None = None,
    rel_tol: float = 0.05,
    max_evaluations: int = 14,
    max_replicas: int = 4096,
    duration_s: float | None = None,
) -> pd.DataFrame:
    """GPUs needed to serve ``requests`` (at their own rate) within ``slo``, per tensor-parallel degree; ``slo``
    defaults to ``SLO(ttft_s=2.0, tbt_s=0.1)`` and ``scheduler`` to ``Scheduler()``; ``engine`` and ``costs`` as in
    :class:`~workbench.serving.roofline.Deployment` (the serving engine's host work, where operator costs come from).

    Returns
    -------
    DataFrame
        One row per TP degree: ``tp``, ``fits`` (the model fits a replica), ``replica_rps`` (the rate one replica
        sustains), ``replicas`` and ``gpus`` (the smallest count found to meet the SLO; NaN when it does not fit or
        no rate meets the SLO, e.g. prompts whose prefill alone exceeds the TTFT target), and ``cheapest``: true on
        the one row with the fewest GPUs (on none when no degree meets the SLO). ``replica_rps`` is a share of the
        workload's rate: its requests over ``duration_s``, the length of the traffic window (default: up to the last
        arrival).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> n = 600
    >>> req = pd.DataFrame({"arrival_s": np.sort(rng.uniform(0, 60, n)), "input_tokens": rng.integers(100, 2000, n),
    ...                     "output_tokens": rng.integers(20, 400, n)})
    >>> plan = capacity_gpus(req, "Llama-3.1-70B", "H100-SXM", tps=(2, 4))
    >>> int(plan.loc[plan["cheapest"], "gpus"].iloc[0]) >= 2
    True
    """
    slo = SLO(ttft_s=2.0, tbt_s=0.1) if slo is None else slo
    if not isinstance(slo, SLO):
        raise TypeError(f"slo must be an SLO, got {type(slo).__name__}")
    scheduler = Scheduler() if scheduler is None else scheduler
    max_replicas = integer("max_replicas", max_replicas, minimum=1)
    if duration_s is None:
        duration = float(requests["arrival_s"].max()) if len(requests) else 0.0
        duration = duration if duration > 0 else 1.0
    else:
        duration = positive("duration_s", duration_s)
    rate = len(requests) / duration
    search = ScaleSearch(4.0, 2.0**-12, 2.0**12, rel_tol, max_evaluations)
    rows = []

    def meets(dep: Deployment, k: int) -> bool:
        r = serve(
            requests,
            dep,
            scheduler,
            n_replicas=k,
            balancer=balancer,
            seed=0,
            ttft_limit_s=slo.ttft_s,
            max_violations=slo.allowed_violations(len(requests)),
        )
        return meets_slo(r, slo)

    for tp in tps:  # a handful of TP degrees
        tp = integer("tp", tp, minimum=1)
        try:
            dep = Deployment(model, gpu, tp=tp, overlap=overlap, engine=engine, costs=costs)
        except ValueError as err:
            if "does not fit" not in str(err):
                raise
            rows.append({"tp": tp, "fits": False, "replica_rps": np.nan, "replicas": np.nan, "gpus": np.nan})
            continue
        scale, _ = max_rate_scale(requests, dep, slo, scheduler=scheduler, search=search)
        if scale == 0.0:
            rows.append({"tp": tp, "fits": True, "replica_rps": 0.0, "replicas": np.nan, "gpus": np.nan})
            continue
        n = max(1, math.ceil(1.0 / scale))

        while n <= max_replicas and not meets(dep, n):  # balancing is imperfect: step up until the SLO holds
            n = n + 1 if n < 8 else math.ceil(n * 1.1)
        while n > 1 and meets(dep, n - 1):
            n -= 1
        rows.append(
            {
                "tp": tp,
                "fits": True,
                "replica_rps": scale * rate,
                "replicas": float(n) if n <= max_replicas else np.nan,
                "gpus": float(n * tp) if n <= max_replicas else np.nan,
            }
        )
    out = pd.DataFrame(rows)
    out["cheapest"] = False
    ok = out["gpus"].notna()
    if ok.any():
        out.loc[out.loc[ok, "gpus"].idxmin(), "cheapest"] = True
    return out
