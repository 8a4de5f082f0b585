"""A continuous-batching LLM server, simulated iteration by iteration (with jumps between events).

The model follows how Orca/vLLM-style servers work. The server runs *iterations*; in each iteration every running
request produces one token, and requests admitted at the iteration's start are prefilled in it (their prompt is
processed and their first token produced). The iteration's duration comes from a linear cost model::

    iteration_s = base_s + prefill_token_s * (prompt tokens prefilled) + decode_seq_s * (decoding requests)
                  + kv_token_s * (KV-cache tokens resident in the decoding batch)

Admission is FCFS at iteration boundaries: the head of the queue is admitted while the batch has fewer than
``max_batch`` requests, the iteration's prompt tokens stay within ``max_prefill_tokens`` (the first admitted request
is always allowed), and the KV cache can hold the request's full context: each admitted request *reserves*
``input_tokens + output_tokens`` of the ``kv_budget_tokens`` budget until it finishes (no preemption; a request whose
context alone exceeds the budget is rejected). Between events (an arrival that can be admitted, a completion) the
batch is constant, so the simulator jumps over whole runs of decode iterations in closed form (the KV term grows by
one token per request per iteration, so the run's duration is a quadratic in its length). The work is a loop over
events, O(requests log requests) in all, compiled (:mod:`._simulator_kernel`), with no per-iteration work.

Metrics per request: queueing delay (arrival to admission), time to first token (TTFT, arrival to the end of the
prefill iteration), time between tokens (TBT, mean gap between output tokens after the first) and end-to-end latency.
Several instances sit behind a load balancer (the ``balancer``) that assigns each request to an instance on arrival
(round-robin or uniformly at random); instances are simulated independently (no work stealing).

The default costs are illustrative (the order of magnitude of a 13B-parameter model on one 80 GB GPU); what the
workbench compares with it is workloads on the same server, not absolute numbers. Costs derived from real hardware
come from :func:`workbench.serving.linear_fit.fit_linear` (a least-squares fit of the roofline model over a grid), and
the hardware-grounded simulator with a paged KV cache and real schedulers is :mod:`workbench.serving.engine`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._rng import Seed, generator
from .._validate import integer, nonnegative, one_of, positive
from ..workloads.schema import validate_requests
from ._simulator_kernel import simulate_instance_kernel

__all__ = ["ServerConfig", "InstanceRun", "simulate", "simulate_instance", "balance", "latency_summary", "BALANCERS"]

#: Load balancers that :func:`balance` implements (assignment on arrival, independent of the instances' state).
#: Replica load balancers. ``least_outstanding`` needs the replicas' state at each arrival, so only the hardware
#: replicas of :func:`workbench.serving.serve` (simulated together) offer it; :func:`balance` places on arrival.
BALANCERS = ("round_robin", "random", "least_outstanding")


@dataclass(frozen=True)
class ServerConfig:
    """Cost model and limits of one serving instance.

    Parameters
    ----------
    base_s : float
        Fixed cost of one iteration (kernel launches, sampling, scheduling), seconds.
    prefill_token_s : float
        Seconds per prompt token prefilled in an iteration.
    decode_seq_s : float
        Seconds per decoding request in an iteration.
    kv_token_s : float
        Seconds per KV-cache token resident in the decoding batch (attention reads), per iteration.
    kv_budget_tokens : int
        KV-cache capacity in tokens; each running request reserves ``input + output`` tokens.
    max_batch : int
        Most requests running at once.
    max_prefill_tokens : int
        Prompt-token budget of one iteration (one request is always admitted if it fits the KV cache).

    Examples
    --------
    >>> ServerConfig().iteration_s(prefill_tokens=1000, decode_seqs=10, kv_tokens=20000)
    0.1329
    """

    base_s: float = 0.010
    prefill_token_s: float = 1.2e-4
    decode_seq_s: float = 2.5e-4
    kv_token_s: float = 2.0e-8
    kv_budget_tokens: int = 150_000
    max_batch: int = 256
    max_prefill_tokens: int = 16_384

    def __post_init__(self) -> None:
        positive("base_s", self.base_s)
        nonnegative("prefill_token_s", self.prefill_token_s)
        nonnegative("decode_seq_s", self.decode_seq_s)
        nonnegative("kv_token_s", self.kv_token_s)
        integer("kv_budget_tokens", self.kv_budget_tokens, minimum=1)
        integer("max_batch", self.max_batch, minimum=1)
        integer("max_prefill_tokens", self.max_prefill_tokens, minimum=1)

    def iteration_s(self, prefill_tokens: float = 0, decode_seqs: float = 0, kv_tokens: float = 0) -> float:
        """Duration of one iteration."""
        return round(
            self.base_s
            + self.prefill_token_s * prefill_tokens
            + self.decode_seq_s * decode_seqs
            + self.kv_token_s * kv_tokens,
            12,
        )


#: The longest request (input or output tokens) the serving models accept: far above any context window, far
#: below what would make a simulation run for ever.
MAX_SERVED_TOKENS = 10_000_000


def _check_requests(arrival_s, input_tokens, output_tokens):
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


def _request_arrays(requests: pd.DataFrame, time_scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated arrival times (divided by ``time_scale``), input and output tokens of a request table."""
    if not isinstance(requests, pd.DataFrame):
        raise TypeError(f"requests must be a DataFrame, got {type(requests).__name__}")
    missing = {"arrival_s", "input_tokens", "output_tokens"} - set(requests.columns)
    if missing:
        raise ValueError(f"requests lacks column(s) {sorted(missing)}")
    scale = positive("time_scale", time_scale)
    return _check_requests(
        requests["arrival_s"].to_numpy(dtype=float) / scale,
        requests["input_tokens"].to_numpy(),
        requests["output_tokens"].to_numpy(),
    )


def _metrics_table(arr, where_name, where, inp, out, admit, first, finish, rejected) -> pd.DataFrame:
    """One row per request: arrival, the server it went to (``where_name``), lengths and latencies."""
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


@dataclass(frozen=True)
class InstanceRun:
    """Per-request times of one instance (:func:`simulate_instance`).

    ``admit_s``, ``first_token_s`` and ``finish_s`` are NaN for rejected requests and, when the run ``stopped`` early
    (an SLO check already lost), for requests it did not reach.
    """

    admit_s: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    rejected: np.ndarray
    stopped: bool = False
    violations: int = 0


def simulate_instance(
    arrival_s: np.ndarray,
    input_tokens: np.ndarray,
    output_tokens: np.ndarray,
    config: ServerConfig = ServerConfig(),
    *,
    ttft_limit_s: float = math.inf,
    max_violations: int | None = None,
) -> InstanceRun:
    """Simulate one instance serving requests (sorted by arrival); return per-request times.

    ``output_tokens`` below 1 count as 1 (every request produces at least its first token).

    Parameters
    ----------
    arrival_s, input_tokens, output_tokens : array
    config : ServerConfig
    ttft_limit_s, max_violations : optional early stop
        When more than ``max_violations`` requests are certain to miss ``ttft_limit_s`` (their queueing delay alone
        exceeds it, or they are rejected), stop: an SLO check has already failed (``stopped`` is True).

    Returns
    -------
    InstanceRun
        ``admit_s``, ``first_token_s``, ``finish_s`` (NaN for rejected requests), ``rejected`` (bool), ``stopped``
        and ``violations`` (requests certain to miss ``ttft_limit_s``).

    Examples
    --------
    >>> r = simulate_instance([0.0], [100], [3], ServerConfig(base_s=0.01, prefill_token_s=0.0, decode_seq_s=0.0,
    ...                       kv_token_s=0.0))
    >>> r.first_token_s.tolist(), r.finish_s.tolist()
    ([0.01], [0.03])
    """
    arr, inp, out = _check_requests(arrival_s, input_tokens, output_tokens)
    n = arr.size
    admit, first, finish = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    rejected = np.zeros(n, dtype=bool)
    allowed = -1 if max_violations is None else int(max_violations)
    if allowed < 0 and max_violations is not None:
        raise ValueError(f"max_violations must be >= 0 or None, got {max_violations}")
    stopped, violations = simulate_instance_kernel(
        arr, inp, out, float(config.base_s), float(config.prefill_token_s), float(config.decode_seq_s),
        float(config.kv_token_s), int(config.kv_budget_tokens), int(config.max_batch), int(config.max_prefill_tokens),
        float(ttft_limit_s), allowed, admit, first, finish, rejected,
    )  # fmt: skip
    return InstanceRun(admit, first, finish, rejected, stopped=bool(stopped), violations=int(violations))


def _steps_to_reach(per: float, inc: float, gap: float) -> int:
    """Fewest decode iterations (at least one) of durations ``per``, ``per + inc``, ``per + 2 inc``, ... that last
    ``gap`` seconds: the smallest ``k >= 1`` with ``k per + inc k (k - 1) / 2 >= gap``."""
    if inc > 0:
        b = per - inc / 2
        k = math.ceil((-b + math.sqrt(b * b + 2 * inc * gap)) / inc - 1e-12)
    else:
        k = math.ceil(gap / per - 1e-12)
    return max(k, 1)


def balance(n: int, n_instances: int, balancer: str = "round_robin", *, seed: Seed = None) -> np.ndarray:
    """Instance of each of ``n`` requests (in arrival order) under a load balancer from :data:`BALANCERS`.

    Examples
    --------
    >>> balance(5, 2).tolist()
    [0, 1, 0, 1, 0]
    """
    n = integer("n", n, minimum=0)
    n_instances = integer("n_instances", n_instances, minimum=1)
    one_of("balancer", balancer, BALANCERS)
    if balancer == "least_outstanding":
        raise ValueError(
            "balancer='least_outstanding' depends on the replicas' state at each arrival: use workbench.serving.serve "
            "(hardware replicas simulated together); balance() places requests on arrival (round_robin, random)"
        )
    if balancer == "round_robin":
        return np.arange(n) % n_instances
    return generator(seed).integers(0, n_instances, size=n)


def simulate(
    requests: pd.DataFrame,
    config: ServerConfig = ServerConfig(),
    *,
    n_instances: int = 1,
    balancer: str = "round_robin",
    seed: Seed = None,
    time_scale: float = 1.0,
    ttft_limit_s: float = math.inf,
    max_violations: int | None = None,
) -> pd.DataFrame:
    """Serve a request table on ``n_instances`` instances behind a load balancer; per-request metrics.

    Parameters
    ----------
    requests : DataFrame
        With ``arrival_s`` (sorted), ``input_tokens`` and ``output_tokens``.
    config : ServerConfig
    n_instances : int
    balancer : {"round_robin", "random"}
    seed : int, Generator or None
        For the random balancer.
    time_scale : float
        Arrival times are divided by it (2 doubles the request rate, same requests): how capacity search scales load.
    ttft_limit_s, max_violations :
        Early stop once more than ``max_violations`` requests in all are certain to miss ``ttft_limit_s``: the table
        then has ``attrs["stopped"] = True`` and NaN times for the requests not simulated.

    Returns
    -------
    DataFrame
        One row per request: ``arrival_s``, ``instance``, ``input_tokens``, ``output_tokens``, ``queue_s``,
        ``ttft_s``, ``tbt_s`` (NaN for one-token outputs), ``e2e_s``, ``rejected``.

    Examples
    --------
    >>> reqs = pd.DataFrame({"arrival_s": [0.0, 0.5, 1.0], "input_tokens": [500, 800, 100],
    ...                      "output_tokens": [50, 20, 80]})
    >>> m = simulate(reqs, n_instances=2)
    >>> bool((m["ttft_s"] > 0).all()), m["instance"].tolist()
    (True, [0, 1, 0])
    """
    if not isinstance(config, ServerConfig):
        raise TypeError(f"config must be a ServerConfig, got {type(config).__name__}")
    arr, inp, out = _request_arrays(requests, time_scale)
    inst = balance(arr.size, n_instances, balancer, seed=seed)
    admit = np.full(arr.size, np.nan)
    first = np.full(arr.size, np.nan)
    finish = np.full(arr.size, np.nan)
    rejected = np.zeros(arr.size, dtype=bool)
    budget = max_violations
    stopped = False
    for k in range(n_instances):  # a loop over instances (a handful)
        sel = np.flatnonzero(inst == k)
        res = simulate_instance(arr[sel], inp[sel], out[sel], config, ttft_limit_s=ttft_limit_s, max_violations=budget)
        admit[sel], first[sel], finish[sel], rejected[sel] = res.admit_s, res.first_token_s, res.finish_s, res.rejected
        if res.stopped:
            stopped = True
            break
        if budget is not None:
            budget -= res.violations
    table = _metrics_table(arr, "instance", inst, inp, out, admit, first, finish, rejected)
    table.attrs["stopped"] = stopped
    return table


def latency_summary(metrics: pd.DataFrame) -> dict[str, float]:
    """Percentiles of a :func:`simulate` result: TTFT, TBT, end-to-end and queueing delay, plus throughput.

    Rejected requests count as infinitely late in the TTFT percentiles.

    Examples
    --------
    >>> reqs = pd.DataFrame({"arrival_s": [0.0, 1.0], "input_tokens": [10, 10], "output_tokens": [5, 5]})
    >>> s = latency_summary(simulate(reqs))
    >>> s["requests"], s["rejected_fraction"]
    (2.0, 0.0)
    """
    ttft = np.where(metrics["rejected"], np.inf, metrics["ttft_s"].to_numpy())
    done = ~metrics["rejected"].to_numpy()
    span = float(np.nanmax(metrics["e2e_s"] + metrics["arrival_s"])) if done.any() else math.nan
    out = {"requests": float(len(metrics)), "rejected_fraction": float((~done).mean()) if len(metrics) else 0.0}
    for q in (50, 90, 99):
        out[f"ttft_p{q}_s"] = float(np.percentile(ttft, q)) if ttft.size else math.nan
        has_tbt = metrics["tbt_s"].notna().any()
        out[f"tbt_p{q}_s"] = float(np.nanpercentile(metrics["tbt_s"], q)) if has_tbt else math.nan
        out[f"e2e_p{q}_s"] = float(np.nanpercentile(metrics["e2e_s"], q)) if done.any() else math.nan
        out[f"queue_p{q}_s"] = float(np.nanpercentile(metrics["queue_s"], q)) if done.any() else math.nan
    out["throughput_rps"] = float(done.sum() / span) if span and span > 0 else math.nan
    out["output_tokens_per_s"] = float(metrics["output_tokens"][done].sum() / span) if span and span > 0 else math.nan
    return out
