"""Replicas behind a load balancer: :func:`serve` runs a request table on ``n_replicas`` hardware replicas
(:mod:`workbench.serving.engine`), placing requests by ``balancer`` (round-robin, random, or least-outstanding
requests, which simulates the replicas together and routes each arrival on their state at that instant).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._rng import Seed
from .._validate import integer, one_of
from .engine import Scheduler, _replica_loop, _State
from .roofline import Deployment
from .simulator import BALANCERS, _metrics_table, _request_arrays, balance

__all__ = ["serve"]


def serve(
    requests: pd.DataFrame,
    deployment: Deployment,
    scheduler: Scheduler = Scheduler(),
    *,
    n_replicas: int = 1,
    balancer: str = "round_robin",
    seed: Seed = None,
    time_scale: float = 1.0,
    prefix_sharing: bool = False,
    ttft_limit_s: float = math.inf,
    max_violations: int | None = None,
) -> pd.DataFrame:
    """Serve a request table on ``n_replicas`` replicas of ``deployment``; one row per request.

    Parameters mirror :func:`workbench.serving.simulate`. ``balancer`` is one of :data:`BALANCERS`:
    ``"round_robin"`` and ``"random"`` place requests on arrival without looking at the replicas (each replica is
    then simulated alone); ``"least_outstanding"`` sends each arrival to the replica holding the fewest requests
    (waiting, prefilling or decoding; ties to the lowest index), which needs the replicas' state at that instant, so
    the replicas are simulated together (each pauses at every arrival for the router). ``prefix_sharing`` shares the
    KV blocks of equal ``hash_ids`` (a column of the table, Mooncake traces) across the requests of a replica.

    The table has ``replica``, ``queue_s``, ``ttft_s``, ``tbt_s``, ``e2e_s``, ``rejected``, ``preemptions`` and
    ``prefill_tokens`` (the tokens prefilled for the request: its prompt less a shared prefix, plus recomputations),
    and
    ``attrs`` holds ``gpus``, ``busy_fraction`` and ``stopped`` (an early stop).

    Examples
    --------
    >>> reqs = pd.DataFrame({"arrival_s": [0.0, 0.1, 0.2], "input_tokens": [500, 800, 100],
    ...                      "output_tokens": [50, 20, 80]})
    >>> m = serve(reqs, Deployment("Llama-3.1-8B", "H100-SXM"), Scheduler("sarathi", max_num_batched_tokens=512))
    >>> bool((m["ttft_s"] > 0).all()), m.attrs["gpus"]
    (True, 1)
    >>> serve(reqs, Deployment("Llama-3.1-8B", "H100-SXM"), n_replicas=2, balancer="least_outstanding")[
    ...     "replica"].tolist()
    [0, 1, 0]
    """
    arr, inp, out = _request_arrays(requests, time_scale)
    n_replicas = integer("n_replicas", n_replicas, minimum=1)
    one_of("balancer", balancer, BALANCERS)
    hashes = None
    if prefix_sharing:
        if "hash_ids" not in requests.columns:
            raise ValueError("prefix_sharing needs a 'hash_ids' column (prefix-block ids per request, e.g. Mooncake)")
        hashes = requests["hash_ids"].tolist()
    st = _State(arr, inp, out, deployment, scheduler, None, hashes)
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
    table = _metrics_table(arr, "replica", rep, inp, out, r.admit_s, r.first_token_s, r.finish_s, r.rejected)
    table["preemptions"] = r.preemptions
    table["prefill_tokens"] = r.prefill_tokens
    span = float(np.nanmax(r.finish_s)) if np.isfinite(r.finish_s).any() else math.nan
    table.attrs.update(
        {
            "stopped": st.stopped,
            "gpus": n_replicas * deployment.gpus,
            "busy_fraction": st.busy / (n_replicas * span) if span and span > 0 else math.nan,
        }
    )
    return table


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
