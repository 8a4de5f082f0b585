"""Replicas behind a load balancer: :func:`serve`, the one entry point of serving simulation.

:func:`serve` runs a request table on ``n_replicas`` replicas of one server, placing requests by ``balancer``
(round-robin, random, or least-outstanding requests, which simulates the replicas together and routes each arrival on
their state at that instant). Every replica is the one engine (:mod:`workbench.serving.engine`): a cost model (a
hardware :class:`~workbench.serving.roofline.Deployment` or the linear-cost
:class:`~workbench.serving.linear.ServerConfig`) run by a :class:`~workbench.serving.scheduler.Scheduler` (by default
the cost model's own: vLLM's for a Deployment, the reservation for a ServerConfig). Replicas placed on arrival under
(linear cost, reservation) run the engine's compiled fast path. The request validator, the balancer and the
per-request table are shared (:mod:`workbench.serving._common`), and the result is a
:class:`~workbench.serving.ServeResult` (the table, and the GPUs, busy fraction and early stop beside it).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._rng import Seed
from .._validate import integer, one_of
from ._common import BALANCERS, ServeResult, balance, busy_fraction, metrics_table, request_arrays
from .cost import CostModel
from .engine import Scheduler, _replica_loop, _State, compiled, policy
from .linear import simulate_linear

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
        Scheduling policy; defaults to the cost model's own: ``Scheduler()`` (vLLM) for a Deployment, the
        reservation ``ServerConfig.scheduler`` for a ServerConfig.
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
    ttft_limit_s, max_violations :
        Early stop once more than ``max_violations`` requests in all are certain to miss ``ttft_limit_s``: the result
        is then ``stopped``, with NaN times for the requests not simulated.

    Returns
    -------
    ServeResult
        ``table``: one row per request, ``arrival_s``, ``replica``, ``input_tokens``, ``output_tokens``,
        ``queue_s``, ``ttft_s``, ``tbt_s`` (NaN for one-token outputs), ``e2e_s``, ``rejected``, ``preemptions`` and
        ``prefill_tokens`` (the tokens prefilled for the request: its prompt less a shared prefix, plus
        recomputations); beside it ``gpus``, ``busy_fraction`` and ``stopped``.

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
    arr, inp, out = request_arrays(requests, rate_scale)
    n_replicas = integer("n_replicas", n_replicas, minimum=1)
    one_of("balancer", balancer, BALANCERS)
    fast = compiled(server, scheduler)
    if fast is not None and not prefix_sharing and balancer != "least_outstanding":
        rep = balance(arr.size, n_replicas, balancer, seed=seed)
        return _serve_linear(arr, inp, out, rep, fast, n_replicas, ttft_limit_s, max_violations)
    hashes = None
    if prefix_sharing:
        if "hash_ids" not in requests.columns:
            raise ValueError("prefix_sharing needs a 'hash_ids' column (prefix-block ids per request, e.g. Mooncake)")
        hashes = requests["hash_ids"].tolist()
    st = _State(arr, inp, out, server, scheduler, None, hashes)
    allowed = math.inf if max_violations is None else integer("max_violations", max_violations, minimum=0)
    limit = float(ttft_limit_s)
    if balancer == "least_outstanding":
        rep = _route_least_outstanding(st, arr, n_replicas, limit, allowed)
    else:
        rep = balance(arr.size, n_replicas, balancer, seed=seed)
        for k in range(n_replicas):  # a loop over replicas (a handful)
            for _ in _replica_loop(st, np.flatnonzero(rep == k).tolist(), [math.inf], limit, allowed):
                pass
            if st.stopped:
                break
    r = st.run()
    table = metrics_table(arr, "replica", rep, inp, out, r.admit_s, r.first_token_s, r.finish_s, r.rejected)
    table["preemptions"] = r.preemptions
    table["prefill_tokens"] = r.prefill_tokens
    return ServeResult(
        table,
        n_replicas * server.gpus,
        busy_fraction(st.busy, n_replicas, r.finish_s, st.stopped),
        stopped=st.stopped,
    )


def _serve_linear(arr, inp, out, rep, config, n_replicas, ttft_limit_s, max_violations) -> ServeResult:
    """:func:`serve` on linear-cost replicas under the reservation (``rep``: each request's replica): the engine's
    compiled fast path, each replica simulated alone, the early-stop budget spent in replica order (as the general
    loop does)."""
    admit, first, finish = np.full(arr.size, np.nan), np.full(arr.size, np.nan), np.full(arr.size, np.nan)
    rejected = np.zeros(arr.size, dtype=bool)
    prefill = np.zeros(arr.size, dtype=np.int64)
    budget, stopped, busy = max_violations, False, 0.0
    for k in range(n_replicas):  # a loop over replicas (a handful)
        sel = np.flatnonzero(rep == k)
        r = simulate_linear(arr[sel], inp[sel], out[sel], config, ttft_limit_s=ttft_limit_s, max_violations=budget)
        admit[sel], first[sel], finish[sel], rejected[sel] = r.admit_s, r.first_token_s, r.finish_s, r.rejected
        prefill[sel] = r.prefill_tokens
        busy += r.busy_s
        if r.stopped:
            stopped = True
            break
        if budget is not None:
            budget -= r.violations
    table = metrics_table(arr, "replica", rep, inp, out, admit, first, finish, rejected)
    table["preemptions"] = np.zeros(arr.size, dtype=np.int64)
    table["prefill_tokens"] = prefill
    return ServeResult(
        table, n_replicas * config.gpus, busy_fraction(busy, n_replicas, finish, stopped), stopped=stopped
    )


def _route_least_outstanding(st: _State, arr: np.ndarray, n_replicas: int, limit: float, allowed: float):
    """Run the replicas together, placing each arrival on the one holding the fewest requests at that instant."""
    rep = np.zeros(arr.size, dtype=np.int64)
    horizon = [float(arr[0])] if arr.size else [math.inf]
    mines: list[list[int]] = [[] for _ in range(n_replicas)]
    loops = [_replica_loop(st, mines[k], horizon, limit, allowed) for k in range(n_replicas)]
    held = [next(lp, -1) for lp in loops]  # each pauses at the first arrival (or ends, if it stopped early)
    for j, a in enumerate(arr.tolist()):  # one placement per request: the router is sequential by nature
        if st.stopped:
            break
        if a > horizon[0]:
            horizon[0] = a
            held = [next(lp, -1) for lp in loops]
        k = held.index(min(held))
        rep[j] = k
        mines[k].append(j)
        held[k] += 1
    horizon[0] = math.inf
    for lp in loops:
        for _ in lp:
            pass
    return rep
