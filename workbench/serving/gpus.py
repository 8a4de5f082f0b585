"""Answers in GPUs: capacity for a workload under latency SLOs, and NanoFlow's optimal-throughput bound.

:func:`capacity_gpus` answers "how many GPUs, at which tensor-parallel degree, serve this workload with p99 TTFT <= X
and p99 TBT <= Y": for each candidate replica (one per TP degree whose replica fits the model, or one cost model as
given: a :class:`~workbench.serving.roofline.Deployment`, or the abstract linear-cost
:class:`~workbench.serving.linear.ServerConfig` with its ``gpus`` per replica), it searches the largest rate scale
one replica sustains (the package's one capacity search, :func:`~workbench.serving.capacity.max_rate_scale`,
bracketing by factors of 4 within ``[2^-12, 2^12]``; early-stopped runs), sizes the replica count from it, then checks
that count and the one below by simulating the whole workload behind the load balancer, stepping up until the SLO
holds. The answer is a :class:`GpuCapacity` record: the per-candidate table, and the cheapest candidate's
configuration, GPUs, rate scale and the evaluations spent as scalars beside it.

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
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validate import integer, positive
from .capacity import SLO, ScaleSearch, max_rate_scale, meets_slo
from .cluster import serve
from .cost import CostModel, check_cost_model
from .engine import Scheduler, policy
from .roofline import Deployment

__all__ = ["GpuCapacity", "optimal_throughput", "capacity_gpus"]


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


@dataclass(frozen=True)
class GpuCapacity:
    """Outcome of :func:`capacity_gpus`: one row per candidate replica, and the answer (the cheapest candidate) as
    scalars beside it.

    Attributes
    ----------
    table : DataFrame
        One row per candidate: ``tp`` (NaN for a cost model without one), ``gpus_per_replica``, ``fits`` (the model
        fits a replica), ``rate_scale`` (the largest the search found one replica to sustain, 0 if none),
        ``replica_rps`` (that scale times the workload's rate), ``replicas`` and ``gpus`` (the smallest count found
        to meet the SLO; NaN when it does not fit, no rate meets the SLO, or more than ``max_replicas`` would be
        needed) and ``evaluations`` (simulations spent on the candidate).
    slo : SLO
    rate_rps : float
        The workload's rate: its requests over the traffic window.
    server : Deployment, ServerConfig or None
        The cheapest replica meeting the SLO (fewest GPUs; the first candidate on a tie), None when none does.
    tp : int or None
        Its tensor-parallel degree (None for a cost model without one, or when none meets the SLO).
    replicas, gpus : float
        Its replica and GPU counts (NaN when none meets the SLO).
    rate_scale, replica_rps : float
        Its search result: the rate scale one replica sustains, and the rate in req/s (NaN when none meets).
    evaluations : int
        Simulations over all candidates.
    """

    table: pd.DataFrame
    slo: SLO
    rate_rps: float
    server: CostModel | None
    tp: int | None
    replicas: float
    gpus: float
    rate_scale: float
    replica_rps: float
    evaluations: int

    @property
    def feasible(self) -> bool:
        """Some candidate meets the SLO."""
        return self.server is not None


def capacity_gpus(
    requests: pd.DataFrame,
    server,
    gpu=None,
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
) -> GpuCapacity:
    """GPUs needed to serve ``requests`` (at their own rate) within ``slo``: the one capacity search, in GPUs.

    Parameters
    ----------
    requests : DataFrame
    server : str, Model, Deployment or ServerConfig
        A model (name or record; with ``gpu``): one :class:`~workbench.serving.roofline.Deployment` candidate per
        tensor-parallel degree in ``tps`` (``overlap``, ``engine`` and ``costs`` as in ``Deployment``). Or one
        replica as given, any cost model: a ``Deployment``, or the abstract linear-cost ``ServerConfig`` (its
        ``gpus`` per replica).
    gpu : str or GPU, optional
        The GPU of a model's candidates (only with a model).
    slo : SLO, optional
        Defaults to ``SLO(ttft_s=2.0, tbt_s=0.1)``.
    scheduler : Scheduler, optional
        Defaults to the cost model's own (a Deployment's engine profile's, else ``Scheduler()``; the reservation
        for a ServerConfig).
    rel_tol, max_evaluations : search tolerance and budget per candidate
    max_replicas : int
    duration_s : float, optional
        The traffic window: the workload's rate is its requests over it (default: up to the last arrival).

    Returns
    -------
    GpuCapacity
        The per-candidate table and the cheapest candidate. For each candidate the search (the package's one,
        :func:`~workbench.serving.capacity.max_rate_scale`, bracketing by factors of 4 within ``[2^-12, 2^12]``) finds
        the largest rate scale one replica sustains, sizes the replica count from it, then checks that count and the
        one below by simulating the whole workload behind the balancer, stepping up until the SLO holds.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> n = 600
    >>> req = pd.DataFrame({"arrival_s": np.sort(rng.uniform(0, 60, n)), "input_tokens": rng.integers(100, 2000, n),
    ...                     "output_tokens": rng.integers(20, 400, n)})
    >>> plan = capacity_gpus(req, "Llama-3.1-70B", "H100-SXM", tps=(2, 4))
    >>> plan.gpus >= 2, plan.tp in (2, 4), list(plan.table["tp"])
    (True, True, [2, 4])
    >>> from workbench.serving import ServerConfig
    >>> lin = capacity_gpus(req, ServerConfig(gpus=2))  # the abstract server: one candidate, 2 GPUs per replica
    >>> lin.gpus == 2 * lin.replicas, lin.tp
    (True, None)
    """
    slo = SLO(ttft_s=2.0, tbt_s=0.1) if slo is None else slo
    if not isinstance(slo, SLO):
        raise TypeError(f"slo must be an SLO, got {type(slo).__name__}")
    max_replicas = integer("max_replicas", max_replicas, minimum=1)
    if duration_s is None:
        duration = float(requests["arrival_s"].max()) if len(requests) else 0.0
        duration = duration if duration > 0 else 1.0
    else:
        duration = positive("duration_s", duration_s)
    rate = len(requests) / duration
    search = ScaleSearch(4.0, 2.0**-12, 2.0**12, rel_tol, max_evaluations)
    if hasattr(server, "cost_table"):  # one replica as given
        if gpu is not None:
            raise ValueError("gpu goes with a model name or record; a Deployment or ServerConfig is a whole replica")
        check_cost_model(server)
        candidates = [(getattr(server, "tp", None), server)]
    else:
        candidates = []
        for tp in tps:  # a handful of TP degrees
            tp = integer("tp", tp, minimum=1)
            try:
                candidates.append((tp, Deployment(server, gpu, tp=tp, overlap=overlap, engine=engine, costs=costs)))
            except ValueError as err:
                if "does not fit" not in str(err):
                    raise
                candidates.append((tp, None))
    rows, best, total = [], None, 0
    for tp, dep in candidates:
        row = {"tp": tp if tp is not None else np.nan, "gpus_per_replica": np.nan, "fits": dep is not None}
        row |= {"rate_scale": np.nan, "replica_rps": np.nan, "replicas": np.nan, "gpus": np.nan, "evaluations": 0}
        rows.append(row)
        if dep is None:
            continue
        sched = policy(dep, scheduler)
        row["gpus_per_replica"] = dep.gpus
        scale, n_eval = max_rate_scale(requests, dep, slo, scheduler=sched, search=search)
        row["rate_scale"], row["replica_rps"] = scale, scale * rate
        if scale == 0.0:
            row["replica_rps"], row["evaluations"] = 0.0, n_eval
            total += n_eval
            continue
        n, k = _fewest_replicas(requests, dep, sched, slo, balancer, math.ceil(1.0 / scale), max_replicas)
        row["evaluations"] = n_eval + k
        total += n_eval + k
        if n <= max_replicas:
            row["replicas"], row["gpus"] = float(n), float(n * dep.gpus)
            if best is None or row["gpus"] < best[1]["gpus"]:
                best = (dep, row)
    table = pd.DataFrame(rows)
    if best is None:
        return GpuCapacity(table, slo, rate, None, None, math.nan, math.nan, math.nan, math.nan, total)
    dep, row = best
    tp = row["tp"] if not math.isnan(row["tp"]) else None
    return GpuCapacity(
        table,
        slo,
        rate,
        dep,
        None if tp is None else int(tp),
        row["replicas"],
        row["gpus"],
        row["rate_scale"],
        row["replica_rps"],
        total,
    )


def _fewest_replicas(requests, dep, scheduler, slo, balancer, start: int, max_replicas: int) -> tuple[int, int]:
    """Fewest replicas of ``dep`` found to meet ``slo`` on the whole workload (from ``start``, the count the search
    implies: up while it fails, then down while one fewer still meets), and the simulations spent."""
    runs = 0

    def meets(k: int) -> bool:
        nonlocal runs
        runs += 1
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

    n = max(1, start)
    while n <= max_replicas and not meets(n):  # balancing is imperfect: step up until the SLO holds
        n = n + 1 if n < 8 else math.ceil(n * 1.1)
    while n > 1 and meets(n - 1):
        n -= 1
    return n, runs
