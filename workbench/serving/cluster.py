"""Replicas behind a load balancer: :func:`serve`, the one entry point of serving simulation.

:func:`serve` runs a request table on ``n_replicas`` replicas of one server, placing requests by ``balancer``
(round-robin, random, or least-outstanding requests, which simulates the replicas together and routes each arrival on
their state at that instant). Every replica is the one engine (:mod:`workbench.serving.engine`): a cost model (a
hardware :class:`~workbench.serving.roofline.Deployment` or the linear-cost
:class:`~workbench.serving.linear.ServerConfig`) run by a :class:`~workbench.serving.scheduler.Scheduler` (by default
the cost model's own: vLLM's for a Deployment, the reservation for a ServerConfig). A table may carry per-request
``priority`` levels (priority scheduling), ``hash_ids`` (prefix sharing) and multi-turn follow-ups (``next`` and
``think_s``, with ``conversation``: :func:`~workbench.serving.conversations.conversations`). The request validator,
the balancer and the per-request table are shared (:mod:`workbench.serving._common`), and the result is a
:class:`~workbench.serving.ServeResult` (the table, and the GPUs, busy fraction, early stop, swap totals and, when
recorded, the inter-token gaps beside it).
"""

from __future__ import annotations

import math

import pandas as pd

from .._rng import Seed
from .._validate import integer, one_of, positive
from ._common import BALANCERS, ServeResult, balance, busy_fraction, metrics_table, request_arrays
from .cost import CostModel
from .engine import Scheduler, _run, policy

__all__ = ["serve"]


def serve(
    requests: pd.DataFrame,
    server: CostModel,
    scheduler: Scheduler | None = None,
    *,
    n_replicas: int = 1,
    balancer: str = "round_robin",
    seed: Seed = None,
    rate_scale: float = 1.0,
    prefix_sharing: bool = False,
    record_gaps: bool = False,
    ttft_limit_s: float = math.inf,
    max_violations: int | None = None,
) -> ServeResult:
    """Serve a request table on ``n_replicas`` replicas of ``server``; per-request metrics and the run's scalars.

    Parameters
    ----------
    requests : DataFrame
        With ``arrival_s`` (sorted), ``input_tokens`` and ``output_tokens`` (and ``hash_ids`` for prefix sharing).
    server : Deployment, ServerConfig or another :class:`~workbench.serving.cost.CostModel`
        The replica's cost model: a hardware replica, or the linear-cost server.
    scheduler : Scheduler, optional
        Scheduling policy; defaults to the cost model's own: a Deployment's engine profile's
        (``Deployment.scheduler``: chunked prefill under V1's budget for ``"vllm"``; ``Scheduler()`` where the
        profile states none), the reservation ``ServerConfig.scheduler`` for a ServerConfig.
    n_replicas : int
    balancer : str
        One of :data:`BALANCERS`: ``"round_robin"`` and ``"random"`` place requests on arrival without looking at
        the replicas (each replica is then simulated alone); ``"least_outstanding"`` sends each arrival to the
        replica holding the fewest requests (waiting, prefilling or decoding; ties to the lowest index), which needs
        the replicas' state at that instant, so the replicas are simulated together (each pauses at every arrival
        for the router).
    seed : int, Generator or None
        For the random balancer.
    rate_scale : float
        Arrival times are divided by it (2 doubles the request rate, same requests): how capacity searches scale
        load.
    prefix_sharing : bool
        Share the KV blocks of equal ``hash_ids`` (a column of the table, Mooncake traces) across the requests of a
        replica (paged policies).
    record_gaps : bool
        Record every inter-token gap (:class:`~workbench.serving.metrics.TokenGaps`, ``ServeResult.gaps``).
    ttft_limit_s, max_violations :
        Early stop once more than ``max_violations`` requests in all are certain to miss ``ttft_limit_s``: the result
        is then ``stopped``, with NaN times for the requests not simulated.

    Returns
    -------
    ServeResult
        ``table``: one row per request, ``arrival_s``, ``replica``, ``input_tokens``, ``output_tokens``,
        ``queue_s``, ``ttft_s``, ``tbt_s`` (NaN for one-token outputs), ``e2e_s``, ``rejected``, ``preemptions`` and
        ``prefill_tokens`` (the tokens prefilled for the request: its prompt less a shared prefix, plus
        recomputations) and ``stall_ttft_s`` (synchronous swap stall before its first token); beside it ``gpus``,
        ``busy_fraction``, ``stopped``, ``swaps`` and ``gaps``.

    Examples
    --------
    >>> from workbench.serving import Deployment, ServerConfig
    >>> reqs = pd.DataFrame({"arrival_s": [0.0, 0.1, 0.2], "input_tokens": [500, 800, 100],
    ...                      "output_tokens": [50, 20, 80]})
    >>> r = serve(reqs, Deployment("Llama-3.1-8B", "H100-SXM"), Scheduler("sarathi", max_num_batched_tokens=512))
    >>> bool((r.table["ttft_s"] > 0).all()), r.gpus
    (True, 1)
    >>> serve(reqs, Deployment("Llama-3.1-8B", "H100-SXM"), n_replicas=2, balancer="least_outstanding").table[
    ...     "replica"].tolist()
    [0, 1, 0]
    >>> serve(reqs, ServerConfig(), n_replicas=2).table["replica"].tolist()
    [0, 1, 0]
    >>> serve(reqs, Deployment("Llama-3.1-8B", "H100-SXM"), Scheduler("reserve")).table["preemptions"].tolist()
    [0, 0, 0]
    """
    scheduler = policy(server, scheduler)
    n_replicas = integer("n_replicas", n_replicas, minimum=1)
    one_of("balancer", balancer, BALANCERS)
    conv = "next" in requests.columns
    if conv:
        arr, inp, out = _turns(requests, rate_scale)
    else:
        arr, inp, out = request_arrays(requests, rate_scale)
    hashes = None
    if prefix_sharing:
        if "hash_ids" not in requests.columns:
            raise ValueError("prefix_sharing needs a 'hash_ids' column (prefix-block ids per request, e.g. Mooncake)")
        hashes = requests["hash_ids"].tolist()
    router = balancer == "least_outstanding"
    rep = None if router else balance(arr.size, n_replicas, balancer, seed=seed)
    kw = {}
    if conv:
        kw = dict(follow_up=requests["next"].to_numpy(), think_s=requests["think_s"].to_numpy() / rate_scale,
                  conversation=requests["conversation"].to_numpy() if "conversation" in requests else None)  # fmt: skip
    r, rep = _run(
        arr, inp, out, server, scheduler, n_replicas=n_replicas, rep=rep, router=router, hash_ids=hashes,
        priority=requests["priority"].to_numpy() if "priority" in requests.columns else None,
        record_gaps=record_gaps, seed=seed if seed is not None else 0, ttft_limit_s=ttft_limit_s,
        max_violations=max_violations, **kw,
    )  # fmt: skip
    if conv:
        arr = r.arrival_s
    table = metrics_table(arr, "replica", rep, inp, out, r.admit_s, r.first_token_s, r.finish_s, r.rejected)
    table["preemptions"] = r.preemptions
    table["prefill_tokens"] = r.prefill_tokens
    table["stall_ttft_s"] = r.stall_ttft_s
    return ServeResult(
        table,
        n_replicas * server.gpus,
        busy_fraction(r.busy_s, n_replicas, r.finish_s, r.stopped),
        stopped=r.stopped,
        gaps=r.gaps,
        swaps=r.swaps,
    )


def _turns(requests: pd.DataFrame, rate_scale: float):
    """Arrivals (first turns only; later turns NaN), prompts and outputs of a multi-turn table."""
    missing = {"arrival_s", "input_tokens", "output_tokens", "next", "think_s"} - set(requests.columns)
    if missing:
        raise ValueError(f"a multi-turn table needs column(s) {sorted(missing)} (see serving.conversations)")
    scale = positive("rate_scale", rate_scale)
    return (
        requests["arrival_s"].to_numpy(dtype=float) / scale,
        requests["input_tokens"].to_numpy(),
        requests["output_tokens"].to_numpy(),
    )
