"""Capacity search: the highest request rate a deployment serves within an SLO.

Given a workload (a request table), the search scales its *rate* by compressing time (arrival times divided by a scale
``s``: the same requests, ``s`` times faster; per-client CVs, the length mix and the shape of the rate curve are
unchanged) and finds by bisection on ``log s`` the largest scale at which the deployment still meets the SLO (e.g.
p99 TTFT <= 2 s). Each seed's workload is searched separately (common random numbers across the bisection, so the
SLO check is monotone in ``s`` up to the granularity of the simulation) and the capacities are averaged.

Runs that are certainly failing stop early: once more requests than the SLO's quantile allows have waited longer than
the TTFT target in the queue alone, the run cannot meet it, so an overloaded point costs little.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._validate import in_range, integer, positive
from .simulator import ServerConfig, latency_summary, simulate

__all__ = ["SLO", "CapacityResult", "meets_slo", "capacity_search", "DEFAULT_SERVERS", "server_for"]

#: Server per ServeGen model: the default (a ~13B model on one GPU) for the language and multimodal models, and a
#: faster, bigger instance (a multi-GPU node with a larger KV cache) for the reasoning model, whose prompts reach 20k+
#: tokens.
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


def meets_slo(metrics: pd.DataFrame, slo: SLO) -> bool:
    """Whether a :func:`~workbench.serving.simulate` result meets ``slo`` (an early-stopped run fails)."""
    if metrics.attrs.get("stopped", False):
        return False
    if len(metrics) == 0:
        return True
    ttft = np.where(metrics["rejected"], np.inf, metrics["ttft_s"].to_numpy())
    if np.sort(ttft)[max(0, math.ceil(slo.quantile * ttft.size) - 1)] > slo.ttft_s:
        return False
    if slo.tbt_s is not None:
        tbt = metrics["tbt_s"].to_numpy()
        tbt = tbt[np.isfinite(tbt)]
        if tbt.size and np.sort(tbt)[max(0, math.ceil(slo.quantile * tbt.size) - 1)] > slo.tbt_s:
            return False
    return True


@dataclass(frozen=True)
class CapacityResult:
    """Outcome of :func:`capacity_search`: mean capacity over seeds and the per-seed values."""

    capacity_rps: float
    per_seed_rps: np.ndarray
    base_rate_rps: np.ndarray
    slo: SLO
    n_instances: int
    evaluations: int
    details: dict = field(default_factory=dict)

    @property
    def per_instance_rps(self) -> float:
        return self.capacity_rps / self.n_instances


def _duration(req: pd.DataFrame) -> float:
    d = req.attrs.get("duration_s")
    return float(d) if d else float(req["arrival_s"].max())


def _feasible(req: pd.DataFrame, config: ServerConfig, slo: SLO) -> bool:
    """Whether ``slo``'s TTFT quantile is reachable at all: a request's TTFT is at least its own prefill iteration
    (``base_s + prefill_token_s * input_tokens``), and a request that cannot fit the KV cache never starts."""
    inp = req["input_tokens"].to_numpy(dtype=float)
    out = np.maximum(req["output_tokens"].to_numpy(dtype=float), 1)
    alone = config.base_s + config.prefill_token_s * inp
    alone[inp + out > config.kv_budget_tokens] = np.inf
    return np.sort(alone)[max(0, math.ceil(slo.quantile * alone.size) - 1)] <= slo.ttft_s


def capacity_search(
    workloads: pd.DataFrame | list[pd.DataFrame],
    config: ServerConfig | None = None,
    slo: SLO = SLO(),
    *,
    n_instances: int = 1,
    balancer: str = "round_robin",
    rel_tol: float = 0.03,
    max_evaluations: int = 30,
    min_scale: float = 2.0**-10,
    seed: int = 0,
) -> CapacityResult:
    """Highest aggregate request rate (req/s) at which ``n_instances`` meet ``slo``, averaged over workloads.

    Parameters
    ----------
    workloads : DataFrame or list of DataFrames
        One request table per seed (``arrival_s``, ``input_tokens``, ``output_tokens``; ``attrs["duration_s"]``
        gives the span, else the last arrival).
    config : ServerConfig, optional
        The instance's cost model; defaults to ``ServerConfig()``.
    slo : SLO
    n_instances : int
    balancer : str
        Load balancer across instances: "round_robin" or "random" (the abstract server places on arrival;
        "least_outstanding" needs the hardware replicas of :func:`workbench.serving.serve`).
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
        A workload whose TTFT target is out of reach at any rate (more than the allowed fraction of its requests
        need a longer prefill than the target or cannot fit the KV cache, or it still fails at ``min_scale``) has
        capacity 0 and is counted in ``details["infeasible_workloads"]``.

    Examples
    --------
    >>> from workbench.workloads.servegen import compose, load_pool
    >>> w = compose(load_pool("m-small"), start_s=12 * 3600, duration_s=300, rate_rps=5.0, seed=0)
    >>> res = capacity_search(w, slo=SLO(ttft_s=2.0))
    >>> res.capacity_rps > 1
    True
    """
    if isinstance(workloads, pd.DataFrame):
        workloads = [workloads]
    if not workloads:
        raise ValueError("workloads is empty: give at least one request table")
    if not isinstance(slo, SLO):
        raise TypeError(f"slo must be an SLO, got {type(slo).__name__}")
    config = ServerConfig() if config is None else config
    in_range("rel_tol", rel_tol, 1e-4, 1.0)
    max_evaluations = integer("max_evaluations", max_evaluations, minimum=2)
    min_scale = positive("min_scale", min_scale)
    n_instances = integer("n_instances", n_instances, minimum=1)
    caps, bases, evals, infeasible = [], [], 0, 0

    def ok(req: pd.DataFrame, allowed: int, s: float) -> bool:
        m = simulate(
            req,
            config,
            n_instances=n_instances,
            balancer=balancer,
            seed=seed,
            time_scale=s,
            ttft_limit_s=slo.ttft_s,
            max_violations=allowed,
        )
        return meets_slo(m, slo)

    for req in workloads:  # a loop over seeds (a handful)
        if len(req) == 0:
            raise ValueError("a workload is empty: no requests to scale")
        base = len(req) / _duration(req)
        allowed = slo.allowed_violations(len(req))
        if not _feasible(req, config, slo):  # even alone, too many requests miss the TTFT target: capacity 0
            caps.append(0.0)
            bases.append(base)
            infeasible += 1
            continue

        n_eval = 0
        lo, hi = None, None
        s = 1.0
        while n_eval < max_evaluations and (lo is None or hi is None):  # bracket by doubling / halving
            n_eval += 1
            if ok(req, allowed, s):
                lo = s
                if hi is None:
                    s *= 2.0
            else:
                hi = s
                if lo is None:
                    if s <= min_scale:  # fails even at a tiny fraction of the load: simultaneous bursts
                        break
                    s /= 2.0
            if lo is not None and hi is not None:
                break
        if lo is None:
            infeasible += 1
        while lo is not None and hi is not None and hi / lo > 1 + rel_tol and n_eval < max_evaluations:
            mid = math.sqrt(lo * hi)
            n_eval += 1
            if ok(req, allowed, mid):
                lo = mid
            else:
                hi = mid
        evals += n_eval
        caps.append((lo if lo is not None else 0.0) * base)
        bases.append(base)
    return CapacityResult(
        capacity_rps=float(np.mean(caps)),
        per_seed_rps=np.array(caps),
        base_rate_rps=np.array(bases),
        slo=slo,
        n_instances=n_instances,
        evaluations=evals,
        details={"infeasible_workloads": infeasible},
    )


def summarize_at(
    requests: pd.DataFrame,
    config: ServerConfig,
    *,
    rate_rps: float,
    n_instances: int = 1,
    balancer: str = "round_robin",
) -> dict[str, float]:
    """Latency summary of ``requests`` replayed at aggregate ``rate_rps`` (time-scaled)."""
    rate = positive("rate_rps", rate_rps)
    base = len(requests) / _duration(requests)
    m = simulate(requests, config, n_instances=n_instances, balancer=balancer, time_scale=rate / base)
    return latency_summary(m)
