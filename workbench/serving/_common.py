"""What every serving simulation shares: the request validator, the load balancer, the per-request table, the records
of a replica's run and of a served table, and the closed form of a run of decode iterations.

The engine (:mod:`workbench.serving.engine`, any cost model and policy) uses it; :func:`workbench.serving.serve`
runs replicas behind the balancer and returns a :class:`ServeResult`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._contracts import accepts, output
from .._jit import njit
from .._rng import Seed, generator
from .._validate import integer, one_of, positive
from ..workloads.schema import validate_requests
from .metrics import TokenGaps, quantile, tbt_values, ttft_values

__all__ = ["BALANCERS", "MAX_SERVED_TOKENS", "ReplicaRun", "ServeResult", "balance", "latency_summary"]

#: Replica load balancers. ``least_outstanding`` needs the replicas' state at each arrival, so only the hardware
#: replicas of :func:`workbench.serving.serve` (simulated together) offer it; :func:`balance` places on arrival.
BALANCERS = ("round_robin", "random", "least_outstanding")

#: The longest request (input or output tokens) the serving models accept: far above any context window, far
#: below what would make a simulation run for ever.
MAX_SERVED_TOKENS = 10_000_000


def check_requests(arrival_s, input_tokens, output_tokens):
    """Validated ``(arrival_s, input_tokens, output_tokens)`` arrays, through the workloads' one request validator
    (finite sorted arrivals; non-negative whole token counts, at most :data:`MAX_SERVED_TOKENS`), plus what serving
    needs: arrivals >= 0. A request with 0 output tokens is served as 1: the prefill produces the first token."""
    arr = np.asarray(arrival_s, dtype=float)
    inp_raw, out_raw = np.asarray(input_tokens), np.asarray(output_tokens)
    if not (arr.ndim == inp_raw.ndim == out_raw.ndim == 1 and arr.size == inp_raw.size == out_raw.size):
        raise ValueError(
            f"arrival_s, input_tokens and output_tokens must be 1-D of one length, got {arr.shape}, "
            f"{inp_raw.shape}, {out_raw.shape}"
        )
    table = pd.DataFrame({"arrival_s": arr, "input_tokens": inp_raw, "output_tokens": out_raw})
    validate_requests(table, name="requests", max_tokens=MAX_SERVED_TOKENS)
    if arr.size and (arr < 0).any():
        i = int(np.argmax(arr < 0))
        raise ValueError(f"requests.arrival_s must be >= 0; row {i} is {arr[i]}")
    return arr, inp_raw.astype(np.int64), np.maximum(out_raw.astype(np.int64), 1)


def request_arrays(requests: pd.DataFrame, rate_scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated arrival times (divided by ``rate_scale``), input and output tokens of a request table."""
    if not isinstance(requests, pd.DataFrame):
        raise TypeError(f"requests must be a DataFrame, got {type(requests).__name__}")
    missing = {"arrival_s", "input_tokens", "output_tokens"} - set(requests.columns)
    if missing:
        raise ValueError(f"requests lacks column(s) {sorted(missing)}")
    scale = positive("rate_scale", rate_scale)
    return check_requests(
        requests["arrival_s"].to_numpy(dtype=float) / scale,
        requests["input_tokens"].to_numpy(),
        requests["output_tokens"].to_numpy(),
    )


def metrics_table(arr, where_name, where, inp, out, admit, first, finish, rejected) -> pd.DataFrame:
    """One row per request: arrival, the replica it went to (``where_name``), lengths and latencies."""
    with np.errstate(invalid="ignore", divide="ignore"):
        tbt = np.where(out > 1, (finish - first) / (out - 1), np.nan)
    return pd.DataFrame(
        {
            "arrival_s": arr,
            where_name: where,
            "input_tokens": inp,
            "output_tokens": out,
            "queue_s": admit - arr,
            "ttft_s": first - arr,
            "tbt_s": tbt,
            "e2e_s": finish - arr,
            "rejected": rejected,
        }
    )


@njit(cache=True)
def steps_to_reach(per: float, inc: float, gap: float) -> int:  # pragma: no cover - compiled
    """Fewest decode iterations (at least one) of durations ``per``, ``per + inc``, ``per + 2 inc``, ... that last
    ``gap`` seconds: the smallest ``k >= 1`` with ``k per + inc k (k - 1) / 2 >= gap`` (the engine's compiled loop
    calls it)."""
    if inc > 0:
        b = per - inc / 2
        k = math.ceil((-b + math.sqrt(b * b + 2 * inc * gap)) / inc - 1e-12)
    else:
        k = math.ceil(gap / per - 1e-12)
    return max(k, 1)


@accepts()
def balance(n: int, n_replicas: int, balancer: str = "round_robin", *, seed: Seed = None) -> np.ndarray:
    """Replica of each of ``n`` requests (in arrival order) under a load balancer from :data:`BALANCERS` that places
    on arrival (``"round_robin"``, ``"random"``).

    Examples
    --------
    >>> balance(5, 2).tolist()
    [0, 1, 0, 1, 0]
    """
    n = integer("n", n, minimum=0)
    n_replicas = integer("n_replicas", n_replicas, minimum=1)
    one_of("balancer", balancer, BALANCERS)
    if balancer == "least_outstanding":
        raise ValueError(
            "balancer='least_outstanding' depends on the replicas' state at each arrival: use workbench.serving.serve "
            "(hardware replicas simulated together); balance() places requests on arrival (round_robin, random)"
        )
    if balancer == "round_robin":
        return np.arange(n) % n_replicas
    return generator(seed).integers(0, n_replicas, size=n)


@output
@dataclass(frozen=True)
class ReplicaRun:
    """Per-request times of an engine run (NaN where a request was rejected or not reached by an early stop), with
    the busy seconds, whether it ``stopped`` early (an SLO check already lost) and the requests certain to miss the
    TTFT limit (``violations``); beside them the arrivals as served (``arrival_s``: later turns of a conversation
    arrive when the run says), each request's synchronous swap stall before its first token (``stall_ttft_s``), the
    run's swap totals (:class:`~workbench.serving.engine.SwapTotals`) and, when recorded, every inter-token gap
    (:class:`~workbench.serving.metrics.TokenGaps`)."""

    admit_s: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    rejected: np.ndarray
    preemptions: np.ndarray
    prefill_tokens: np.ndarray
    busy_s: float
    stopped: bool
    violations: int
    arrival_s: np.ndarray | None = None
    stall_ttft_s: np.ndarray | None = None
    swaps: Any = None
    gaps: TokenGaps | None = None


@output
@dataclass(frozen=True)
class ServeResult:
    """A served request table (:func:`workbench.serving.serve`) and the scalars of the run beside it.

    Attributes
    ----------
    table : DataFrame
        One row per request: ``arrival_s``, ``replica`` (``prefill_replica`` and ``decode_replica`` when
        disaggregated), ``input_tokens``, ``output_tokens``, ``queue_s``, ``ttft_s``, ``tbt_s`` (NaN for one-token
        outputs), ``e2e_s``, ``rejected``, ``preemptions``, ``prefill_tokens``.
    gpus : int
        GPUs of all the replicas.
    busy_fraction : float
        Busy seconds of the replicas over ``replicas x`` the span to the last completion (NaN if none completed,
        or if the run stopped early: its replicas were busy past the last completion it reached).
    stopped : bool
        The run stopped early: more requests than allowed were certain to miss the TTFT limit (times of requests
        not reached are NaN).
    gaps : TokenGaps, optional
        Every inter-token gap, when the run recorded them (``record_gaps=True``).
    swaps : SwapTotals, optional
        What the run's swaps moved (:class:`~workbench.serving.engine.SwapTotals`).
    """

    table: pd.DataFrame
    gpus: int
    busy_fraction: float
    stopped: bool = False
    gaps: TokenGaps | None = None
    swaps: Any = None

    def summary(self) -> dict[str, float]:
        """:func:`latency_summary` of the table."""
        return latency_summary(self.table)


def busy_fraction(busy_s: float, n_replicas: int, finish_s: np.ndarray, stopped: bool = False) -> float:
    """Busy seconds over ``n_replicas`` times the span to the last completion (NaN if nothing completed, or if the
    run ``stopped`` early: its busy time runs past the last completion it reached, so the ratio would exceed 1)."""
    if stopped:
        return math.nan
    span = float(np.nanmax(finish_s)) if np.isfinite(finish_s).any() else math.nan
    return busy_s / (n_replicas * span) if span and span > 0 else math.nan


@accepts()
def latency_summary(metrics: pd.DataFrame | ServeResult) -> dict[str, float]:
    """Statistics of a served table (or a :class:`ServeResult`): TTFT, TBT (a request's mean time between tokens,
    vLLM's TPOT), end-to-end and queueing delay at p50, p90 and p99 (:mod:`workbench.serving.metrics`: nearest rank),
    the mean TTFT and TBT, and throughput.

    Rejected requests (and requests without a first token) count as infinitely late in the TTFT statistics.

    Examples
    --------
    >>> from workbench.serving import ServerConfig, serve
    >>> reqs = pd.DataFrame({"arrival_s": [0.0, 1.0], "input_tokens": [10, 10], "output_tokens": [5, 5]})
    >>> s = latency_summary(serve(reqs, ServerConfig()))
    >>> s["requests"], s["rejected_fraction"]
    (2.0, 0.0)
    """
    if isinstance(metrics, ServeResult):
        metrics = metrics.table
    ttft = ttft_values(metrics)
    tbt = tbt_values(metrics)
    done = ~metrics["rejected"].to_numpy(bool) & metrics["e2e_s"].notna().to_numpy()
    span = float(np.nanmax(metrics["e2e_s"] + metrics["arrival_s"])) if done.any() else math.nan
    out = {
        "requests": float(len(metrics)),
        "rejected_fraction": float(metrics["rejected"].mean()) if len(metrics) else 0.0,
    }
    e2e = metrics["e2e_s"].to_numpy(dtype=float)
    queue = metrics["queue_s"].to_numpy(dtype=float)
    for q in (50, 90, 99):
        out[f"ttft_p{q}_s"] = quantile(ttft, q / 100)
        out[f"tbt_p{q}_s"] = quantile(tbt, q / 100)
        out[f"e2e_p{q}_s"] = quantile(e2e[done], q / 100)
        out[f"queue_p{q}_s"] = quantile(queue[done], q / 100)
    out["ttft_mean_s"] = float(ttft.mean()) if ttft.size else math.nan
    out["tbt_mean_s"] = float(tbt.mean()) if tbt.size else math.nan
    out["throughput_rps"] = float(done.sum() / span) if span and span > 0 else math.nan
    out["output_tokens_per_s"] = float(metrics["output_tokens"][done].sum() / span) if span and span > 0 else math.nan
    return out
