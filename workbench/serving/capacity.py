"""Capacity search: the highest request rate a server sustains within an SLO (the one search of the package).

Given a workload (a request table), the search scales its *rate* by compressing time (arrival times divided by a
``rate_scale`` ``s``: the same requests, ``s`` times faster; per-client CVs, the length mix and the shape of the rate
curve are unchanged) and finds the largest scale at which :func:`~workbench.serving.serve` still meets the SLO (e.g.
p99 TTFT <= 2 s): :func:`max_rate_scale` brackets it by multiplying or dividing the scale by a ``factor``, then
bisects on ``log s`` (:class:`ScaleSearch` holds the bracket's step, bounds, tolerance and budget). The server is any
cost model of the engine :func:`serve` runs: a hardware :class:`~workbench.serving.roofline.Deployment` or the
linear-cost :class:`~workbench.serving.linear.ServerConfig` (the abstract case, whose default policy is the
reservation and whose runs take the engine's compiled fast path). :func:`capacity_search` reports the capacity in
req/s, averaged over seeds' workloads (each searched separately: common random numbers across the bisection, so the
SLO check is monotone in ``s`` up to the granularity of the simulation); :func:`workbench.serving.gpus.capacity_gpus`
sizes either cost model in GPUs with the same search (a :class:`~workbench.serving.gpus.GpuCapacity` record).

Runs that are certainly failing stop early: once more requests than the SLO's quantile allows have waited longer than
the TTFT target in the queue alone, the run cannot meet it, so an overloaded point costs little.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validate import in_range, integer, positive
from ._common import ServeResult
from .cluster import serve
from .cost import CostModel
from .engine import Scheduler
from .linear import ServerConfig
from .metrics import quantile, tbt_values, ttft_values

__all__ = [
    "SLO",
    "CapacityResult",
    "ScaleSearch",
    "meets_slo",
    "max_rate_scale",
    "capacity_search",
    "DEFAULT_SERVERS",
    "server_for",
]

#: Server per ServeGen model: the default (a ~13B model on one GPU) for the language and multimodal models, and a
#: faster, bigger replica (a multi-GPU node with a larger KV cache: 8 GPUs, the node
#: :data:`workbench.serving.servegen_gpus.HARDWARE` sizes DeepSeek-R1 on) for the reasoning model, whose prompts reach
#: 20k+ tokens.
DEFAULT_SERVERS: dict[str, ServerConfig] = {
    "deepseek-r1": ServerConfig(
        base_s=0.02,
        prefill_token_s=3e-5,
        decode_seq_s=1e-4,
        kv_token_s=5e-9,
        kv_budget_tokens=600_000,
        max_batch=256,
        max_prefill_tokens=32_768,
        gpus=8,
    ),
}


def server_for(model: str) -> ServerConfig:
    """The default :class:`ServerConfig` for a ServeGen ``model`` (capacity searches of its workloads).

    Examples
    --------
    >>> server_for("deepseek-r1").kv_budget_tokens > server_for("m-large").kv_budget_tokens
    True
    """
    return DEFAULT_SERVERS.get(model, ServerConfig())


@dataclass(frozen=True)
class SLO:
    """A latency objective: the ``quantile`` of TTFT within ``ttft_s`` (and of per-request TBT within ``tbt_s``).

    Examples
    --------
    >>> SLO(ttft_s=2.0).describe()
    'p99 TTFT <= 2 s'
    """

    ttft_s: float = 2.0
    tbt_s: float | None = None
    quantile: float = 0.99

    def __post_init__(self) -> None:
        positive("ttft_s", self.ttft_s)
        if self.tbt_s is not None:
            positive("tbt_s", self.tbt_s)
        in_range("quantile", self.quantile, 0.5, 1.0, low_inclusive=True, high_inclusive=False)

    def describe(self) -> str:
        q = f"p{self.quantile * 100:g}"
        text = f"{q} TTFT <= {self.ttft_s:g} s"
        if self.tbt_s is not None:
            text += f", {q} TBT <= {self.tbt_s * 1000:g} ms"
        return text

    def allowed_violations(self, n: int) -> int:
        """How many of ``n`` requests may miss the TTFT target with the quantile still met."""
        return int(math.floor((1 - self.quantile) * n + 1e-9))


def meets_slo(result: ServeResult, slo: SLO) -> bool:
    """Whether a :func:`~workbench.serving.serve` result meets ``slo`` (an early-stopped run fails)."""
    if not isinstance(result, ServeResult):
        raise TypeError(f"result must be a ServeResult (from serve), got {type(result).__name__}")
    if result.stopped:
        return False
    metrics = result.table
    if len(metrics) == 0:
        return True
    if quantile(ttft_values(metrics), slo.quantile) > slo.ttft_s:
        return False
    if slo.tbt_s is not None:
        tbt = tbt_values(metrics)
        if tbt.size and quantile(tbt, slo.quantile) > slo.tbt_s:
            return False
    return True


@dataclass(frozen=True)
class ScaleSearch:
    """How :func:`max_rate_scale` searches: from ``rate_scale`` 1, multiply by ``factor`` while the SLO holds and
    divide while it fails, until the bracket closes, the scale passes ``max_scale``, or a failure at ``min_scale`` or
    below (capacity 0); then bisect on ``log s`` until the bracket's upper/lower ratio is below ``1 + rel_tol``; at
    most ``max_evaluations`` simulations in all.

    Examples
    --------
    >>> ScaleSearch(factor=4.0, min_scale=2.0**-12, max_scale=2.0**12).factor
    4.0
    """

    factor: float = 2.0
    min_scale: float = 2.0**-10
    max_scale: float = math.inf
    rel_tol: float = 0.03
    max_evaluations: int = 30

    def __post_init__(self) -> None:
        if not self.factor > 1:
            raise ValueError(f"factor must be > 1, got {self.factor}")
        positive("min_scale", self.min_scale)
        if not self.max_scale >= 1:
            raise ValueError(f"max_scale must be >= 1, got {self.max_scale}")
        in_range("rel_tol", self.rel_tol, 1e-4, 1.0)
        integer("max_evaluations", self.max_evaluations, minimum=2)


def _search(ok, search: ScaleSearch) -> tuple[float, int]:
    """Largest scale ``ok`` accepts (0 if none) under ``search``, and the evaluations spent."""
    lo, hi, s, n = 0.0, math.inf, 1.0, 0
    while n < search.max_evaluations:  # bracket by multiplying / dividing
        n += 1
        if ok(s):
            lo = s
            if hi < math.inf or s * search.factor > search.max_scale:
                break
            s *= search.factor
        else:
            hi = s
            if lo > 0 or s <= search.min_scale:  # closed, or fails even at a tiny fraction of the load
                break
            s /= search.factor
    while lo > 0 and hi < math.inf and hi / lo > 1 + search.rel_tol and n < search.max_evaluations:
        mid = math.sqrt(lo * hi)
        n += 1
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo, n


def max_rate_scale(
    requests: pd.DataFrame,
    server: CostModel,
    slo: SLO,
    *,
    scheduler: Scheduler | None = None,
    n_replicas: int = 1,
    balancer: str = "round_robin",
    seed: int = 0,
    search: ScaleSearch = ScaleSearch(),
) -> tuple[float, int]:
    """Largest ``rate_scale`` at which ``n_replicas`` of ``server`` serve ``requests`` within ``slo`` (0 if none
    found), and the simulations it took; runs stop early once the SLO is certainly lost.

    Examples
    --------
    >>> reqs = pd.DataFrame({"arrival_s": np.arange(200) * 0.5, "input_tokens": 500, "output_tokens": 100})
    >>> scale, evaluations = max_rate_scale(reqs, ServerConfig(), SLO(ttft_s=2.0))
    >>> scale > 1
    True
    """
    if not isinstance(slo, SLO):
        raise TypeError(f"slo must be an SLO, got {type(slo).__name__}")
    allowed = slo.allowed_violations(len(requests))

    def ok(s: float) -> bool:
        r = serve(
            requests,
            server,
            scheduler,
            n_replicas=n_replicas,
            balancer=balancer,
            seed=seed,
            rate_scale=s,
            ttft_limit_s=slo.ttft_s,
            max_violations=allowed,
        )
        return meets_slo(r, slo)

    return _search(ok, search)


@dataclass(frozen=True)
class CapacityResult:
    """Outcome of :func:`capacity_search`: mean capacity over seeds, the per-seed values and their base rates, and
    the workloads whose TTFT target is out of reach at any rate (``infeasible_workloads``, counted as capacity 0)."""

    capacity_rps: float
    per_seed_rps: np.ndarray
    base_rate_rps: np.ndarray
    slo: SLO
    n_replicas: int
    evaluations: int
    infeasible_workloads: int = 0

    @property
    def per_replica_rps(self) -> float:
        return self.capacity_rps / self.n_replicas


def _feasible(req: pd.DataFrame, config: ServerConfig, slo: SLO) -> bool:
    """Whether ``slo``'s TTFT quantile is reachable at all on the linear-cost server: a request's TTFT is at least its
    own prefill iteration (``base_s + prefill_token_s * input_tokens``), and a request that cannot fit the KV cache
    never starts."""
    inp = req["input_tokens"].to_numpy(dtype=float)
    out = np.maximum(req["output_tokens"].to_numpy(dtype=float), 1)
    alone = config.base_s + config.prefill_token_s * inp
    alone[inp + out > config.kv_budget_tokens] = np.inf
    return quantile(alone, slo.quantile) <= slo.ttft_s


def capacity_search(
    workloads: pd.DataFrame | list[pd.DataFrame],
    server: CostModel | None = None,
    slo: SLO = SLO(),
    *,
    scheduler: Scheduler | None = None,
    n_replicas: int = 1,
    balancer: str = "round_robin",
    duration_s: float | None = None,
    rel_tol: float = 0.03,
    max_evaluations: int = 30,
    min_scale: float = 2.0**-10,
    seed: int = 0,
) -> CapacityResult:
    """Highest aggregate request rate (req/s) at which ``n_replicas`` of ``server`` meet ``slo``, averaged over
    workloads.

    Parameters
    ----------
    workloads : DataFrame or list of DataFrames
        One request table per seed (``arrival_s``, ``input_tokens``, ``output_tokens``).
    server : Deployment, ServerConfig or another cost model, optional
        The replica (:func:`~workbench.serving.serve`); defaults to the linear-cost ``ServerConfig()``.
    slo : SLO
    scheduler : Scheduler, optional
        Scheduling policy; defaults to the cost model's own (a Deployment's engine profile's, ``Scheduler()`` where it
        states none; the reservation for a ``ServerConfig``).
    n_replicas : int
    balancer : str
        Load balancer across replicas, one of :data:`~workbench.serving.BALANCERS`.
    duration_s : float, optional
        Length of the traffic window every workload spans (its requests over it are its base rate); default: each
        workload's last arrival.
    rel_tol : float
        Bisection stops when the bracket's upper/lower ratio is below ``1 + rel_tol``.
    max_evaluations : int
        Simulations allowed per workload.
    min_scale : float
        Smallest rate scale tried; a workload failing there has capacity 0 (its bursts are so tight that even at
        ``min_scale`` times its rate, simultaneous requests miss the target).
    seed : int
        For the random balancer.

    Returns
    -------
    CapacityResult
        A workload whose TTFT target is out of reach at any rate (on the linear-cost server: more than the allowed
        fraction of its requests need a longer prefill than the target or cannot fit the KV cache; on any server:
        it still fails at ``min_scale``) has capacity 0 and is counted in ``infeasible_workloads``.

    Examples
    --------
    >>> from workbench.workloads.servegen import compose, load_pool
    >>> w = compose(load_pool("m-small"), start_s=12 * 3600, duration_s=300, rate_rps=5.0, seed=0)
    >>> res = capacity_search(w, slo=SLO(ttft_s=2.0), duration_s=300)
    >>> res.capacity_rps > 1
    True
    """
    if isinstance(workloads, pd.DataFrame):
        workloads = [workloads]
    if not workloads:
        raise ValueError("workloads is empty: give at least one request table")
    if not isinstance(slo, SLO):
        raise TypeError(f"slo must be an SLO, got {type(slo).__name__}")
    server = ServerConfig() if server is None else server
    search = ScaleSearch(2.0, positive("min_scale", min_scale), math.inf, rel_tol, max_evaluations)
    n_replicas = integer("n_replicas", n_replicas, minimum=1)
    duration = None if duration_s is None else positive("duration_s", duration_s)
    caps, bases, evals, infeasible = [], [], 0, 0
    for req in workloads:  # a loop over seeds (a handful)
        if len(req) == 0:
            raise ValueError("a workload is empty: no requests to scale")
        base = len(req) / (duration if duration is not None else float(req["arrival_s"].max()))
        bases.append(base)
        if isinstance(server, ServerConfig) and not _feasible(req, server, slo):  # too many miss the target alone
            caps.append(0.0)
            infeasible += 1
            continue
        scale, n_eval = max_rate_scale(
            req, server, slo, scheduler=scheduler, n_replicas=n_replicas, balancer=balancer, seed=seed, search=search
        )
        infeasible += scale == 0.0
        evals += n_eval
        caps.append(scale * base)
    return CapacityResult(
        capacity_rps=float(np.mean(caps)),
        per_seed_rps=np.array(caps),
        base_rate_rps=np.array(bases),
        slo=slo,
        n_replicas=n_replicas,
        evaluations=evals,
        infeasible_workloads=int(infeasible),
    )
