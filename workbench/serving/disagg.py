"""Prefill/decode disaggregation (Splitwise, DistServe, Mooncake): separate pools, KV transfer, the cheapest ratio.

Requests are prefilled on a pool of prefill replicas (which produce the first token), their KV cache is sent over
the network (``input_tokens x kv_bytes_per_token`` at ``transfer_gbps``, plus a fixed latency), and they decode on a
pool of decode replicas that admit them without a prefill iteration
(:func:`~workbench.serving.engine.simulate_replica` with ``prefilled``). TTFT depends only on the prefill pool, TBT
(which includes the transfer before the second token) on the decode pool, so :func:`disaggregation_plan` sizes the
two pools one after the other: the fewest prefill replicas meeting the TTFT target, then the fewest decode replicas
meeting the TBT target. DistServe (Zhong et al., OSDI'24) searches the same two quantities per pool.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._contracts import Opaque, accepts
from .._rng import keyed
from .._validate import integer, positive
from ._common import ServeResult, balance, busy_fraction, metrics_table, request_arrays
from .capacity import SLO, meets_slo
from .engine import Scheduler, simulate_replica
from .roofline import Deployment

__all__ = ["serve_disaggregated", "disaggregation_plan"]


@accepts()
def serve_disaggregated(
    requests: pd.DataFrame,
    prefill: Deployment,
    decode: Deployment,
    *,
    n_prefill: int = 1,
    n_decode: int = 1,
    transfer_gbps: float = 400.0,
    transfer_latency_s: float = 1e-3,
    prefill_scheduler: Scheduler | None = None,
    decode_scheduler: Scheduler | None = None,
    balancer: str = "round_robin",
    seed: int = 0,
) -> ServeResult:
    """Serve a request table on disaggregated pools: a :class:`~workbench.serving.ServeResult` whose table has one row
    per request (as :func:`~workbench.serving.serve`, with ``prefill_replica`` and ``decode_replica``, -1 for
    requests that never decode) and whose ``gpus`` and ``busy_fraction`` count both pools. Each pool's scheduler
    defaults to ``Scheduler("vllm")``.

    Examples
    --------
    >>> reqs = pd.DataFrame({"arrival_s": [0.0, 0.1, 0.2], "input_tokens": [2000, 800, 100],
    ...                      "output_tokens": [50, 1, 80]})
    >>> d = Deployment("Llama-3.1-8B", "H100-SXM")
    >>> m = serve_disaggregated(reqs, d, d).table
    >>> bool((m["e2e_s"] >= m["ttft_s"]).all()), m["decode_replica"].tolist()
    (True, [0, -1, 0])
    """
    if prefill.model.model != decode.model.model:
        raise ValueError(
            f"prefill and decode pools serve different models: {prefill.model.model} vs {decode.model.model}"
        )
    prefill_scheduler = Scheduler("vllm") if prefill_scheduler is None else prefill_scheduler
    decode_scheduler = Scheduler("vllm") if decode_scheduler is None else decode_scheduler
    bw = positive("transfer_gbps", transfer_gbps) * 1e9 / 8
    arr, inp, out = request_arrays(requests, 1.0)
    n_prefill = integer("n_prefill", n_prefill, minimum=1)
    n_decode = integer("n_decode", n_decode, minimum=1)
    p_rep = balance(arr.size, n_prefill, balancer, seed=seed)
    admit = np.full(arr.size, np.nan)
    first = np.full(arr.size, np.nan)
    rejected = np.zeros(arr.size, dtype=bool)
    pre = np.zeros(arr.size, dtype=np.int64)
    busy = 0.0
    for k in range(n_prefill):  # a loop over replicas (a handful)
        sel = np.flatnonzero(p_rep == k)
        r = simulate_replica(arr[sel], inp[sel], np.ones(sel.size, dtype=np.int64), prefill, prefill_scheduler)
        admit[sel], first[sel], rejected[sel], pre[sel] = r.admit_s, r.first_token_s, r.rejected, r.preemptions
        busy += r.busy_s
    finish = np.where(out == 1, first, np.nan)
    go = np.flatnonzero((out > 1) & ~rejected)
    ready = first[go] + inp[go] * decode.model.kv_bytes_per_token / bw + transfer_latency_s
    order = go[np.argsort(ready, kind="stable")]
    ready = np.sort(ready, kind="stable")
    d_rep = np.full(arr.size, -1)
    d_rep[order] = balance(order.size, n_decode, balancer, seed=keyed(seed, "decode"))  # its own stream, keyed
    for k in range(n_decode):
        pick = d_rep[order] == k
        sel = order[pick]
        r = simulate_replica(
            ready[pick], inp[sel], out[sel], decode, decode_scheduler, prefilled=np.ones(sel.size, dtype=bool)
        )
        finish[sel] = r.finish_s
        rejected[sel] |= r.rejected
        pre[sel] += r.preemptions
        busy += r.busy_s
    table = metrics_table(arr, "prefill_replica", p_rep, inp, out, admit, first, finish, rejected)
    table["decode_replica"] = d_rep
    table["preemptions"] = pre
    return ServeResult(
        table,
        n_prefill * prefill.gpus + n_decode * decode.gpus,
        busy_fraction(busy, n_prefill + n_decode, np.where(np.isnan(finish), first, finish)),
    )


def _fewest(ok, start: int, max_replicas: int) -> int | None:
    """Smallest ``n`` in ``[1, max_replicas]`` with ``ok(n)`` (monotone), by doubling from ``start`` then bisection."""
    hi = max(1, start)
    while not ok(hi):
        if hi >= max_replicas:
            return None
        hi = min(2 * hi, max_replicas)
    lo = 0  # ok(lo) is False (or lo = 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


@accepts(model=Opaque("a Model record or name"), gpu=Opaque("a GPU record or name"))
def disaggregation_plan(
    requests: pd.DataFrame,
    model,
    gpu,
    slo: SLO | None = None,
    *,
    prefill_tp: int = 1,
    decode_tp: int = 1,
    transfer_gbps: float = 400.0,
    max_replicas: int = 256,
) -> dict[str, float]:
    """Fewest prefill and decode replicas meeting ``slo`` (TTFT on the prefill pool, then TBT on the decode pool);
    ``slo`` defaults to ``SLO(ttft_s=2.0, tbt_s=0.1)``.

    Returns
    -------
    dict
        ``prefill_replicas``, ``decode_replicas``, ``gpus`` (NaN when a pool cannot meet its target within
        ``max_replicas``) and ``prefill_decode_gpu_ratio``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> req = pd.DataFrame({"arrival_s": np.sort(rng.uniform(0, 60, 600)), "input_tokens": rng.integers(100, 3000, 600),
    ...                     "output_tokens": rng.integers(20, 300, 600)})
    >>> p = disaggregation_plan(req, "Llama-3.1-8B", "H100-SXM")
    >>> p["gpus"] >= 2
    True
    """
    slo = SLO(ttft_s=2.0, tbt_s=0.1) if slo is None else slo
    if slo.tbt_s is None:
        raise ValueError("disaggregation_plan needs a TBT target (slo.tbt_s) to size the decode pool")
    pre = Deployment(model, gpu, tp=prefill_tp)
    dec = Deployment(model, gpu, tp=decode_tp)
    # each pool against its own target (a TTFT bound of a year stands for "any": rejected requests still fail)
    ttft_only = SLO(ttft_s=slo.ttft_s, quantile=slo.quantile)
    tbt_only = SLO(ttft_s=3.15e7, tbt_s=slo.tbt_s, quantile=slo.quantile)

    def run(n_p: int, n_d: int) -> ServeResult:
        return serve_disaggregated(requests, pre, dec, n_prefill=n_p, n_decode=n_d, transfer_gbps=transfer_gbps)

    n_p = _fewest(lambda k: meets_slo(run(k, 1), ttft_only), 1, max_replicas)
    n_d = None if n_p is None else _fewest(lambda k: meets_slo(run(n_p, k), tbt_only), 1, max_replicas)
    if n_p is None or n_d is None:
        return {
            "prefill_replicas": np.nan,
            "decode_replicas": np.nan,
            "gpus": np.nan,
            "prefill_decode_gpu_ratio": np.nan,
        }
    return {
        "prefill_replicas": float(n_p),
        "decode_replicas": float(n_d),
        "gpus": float(n_p * prefill_tp + n_d * decode_tp),
        "prefill_decode_gpu_ratio": n_p * prefill_tp / (n_d * decode_tp),
    }
