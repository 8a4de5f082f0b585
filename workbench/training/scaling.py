"""Studies built on :func:`~workbench.training.iteration.iteration_table`: plan grids, routing comparisons and weak
scaling on a leaf-spine sized to the job.

- :func:`plan_grid`: every (TP, PP, DP, micro-batch) plan of ``n_gpus`` GPUs that fits in memory.
- :func:`routing_comparison`: iteration time of each plan under each routing (ECMP averaged over independent
  hashings, one per job), the gain of a baseline routing over each, and the fabric share of the iteration (exposed
  DP communication under the baseline) — the quantity the "gain = communication share x (R - 1)" shortcut of
  :func:`workbench.fabric.iteration_gain` takes as input, and what that shortcut predicts for each plan.
- :func:`weak_scaling`: iteration time vs GPU count at a fixed per-replica batch, on a leaf-spine of
  ``hosts_per_leaf`` GPUs per leaf and as many spines (non-blocking), one NIC per GPU.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .. import fabric as fb
from .._contracts import Array, Opaque, accepts
from .._validate import array_1d, integer
from .iteration import iteration_table
from .specs import GPU, Model, Plan

__all__ = ["plan_grid", "routing_comparison", "weak_scaling"]


def _divisors(n: int) -> np.ndarray:
    d = np.arange(1, n + 1)
    return d[n % d == 0]


@accepts()
def plan_grid(
    model: Model,
    n_gpus: int,
    gpu: GPU,
    global_batch: int,
    micro_batches: Sequence[int] = (1, 2, 4),
    recompute: Sequence[str] = ("selective", "full"),
) -> list[Plan]:
    """Plans of exactly ``n_gpus`` GPUs (TP within a node, PP <= layers) that fit in HBM.

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS
    >>> plans = plan_grid(MODELS["gpt3-175b"], 1024, GPUS["H100"], 1024)
    >>> len(plans) > 20, all(p.gpus == 1024 for p in plans)
    (True, True)
    """
    n = integer("n_gpus", n_gpus, minimum=1)
    gb = integer("global_batch", global_batch, minimum=1)
    cands = []
    for tp in _divisors(n)[_divisors(n) <= gpu.gpus_per_node]:
        for pp in _divisors(n // tp):
            dp = n // (tp * pp)
            if pp > model.layers:
                continue
            for mb in micro_batches:
                if gb % (dp * mb):
                    continue
                for rc in recompute:
                    cands.append(Plan(int(tp), int(pp), int(dp), gb, int(mb), recompute=rc))
    if not cands:
        return []
    t = iteration_table(model, cands, gpu)
    return [p for p, ok in zip(cands, t.fits) if ok]


@accepts(topology=Opaque("a fabric topology"))
def routing_comparison(
    model: Model,
    plans: Sequence[Plan],
    gpu: GPU,
    topology,
    routings: Sequence[str] = ("ecmp", "spray", "planned"),
    baseline: str = "planned",
    seeds: int = 4,
    **kwargs,
) -> pd.DataFrame:
    """Iteration time per (plan, routing); hashing routings are averaged over ``seeds`` independent hashings.

    Returns
    -------
    pandas.DataFrame
        One row per plan and routing: ``plan, tp, pp, dp, routing, iteration_s, mfu, fabric_share`` (exposed DP
        share of the baseline's iteration), ``gain`` (``iteration_s / baseline iteration_s - 1``) and
        ``shortcut_gain``: what :func:`workbench.fabric.iteration_gain` predicts from the fabric share and the DP
        collective's slowdown, ``fabric_share * (dp time / baseline dp time - 1)``.

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS, Plan
    >>> topo = fb.leaf_spine(4, 4, 16, host_gbps=400)
    >>> t = routing_comparison(MODELS["gpt-18b"], [Plan(8, 1, 8, 64)], GPUS["H100"], topo, seeds=2)
    >>> t.routing.tolist(), float(t.gain[t.routing == "planned"].iloc[0])
    (['ecmp', 'spray', 'planned'], 0.0)
    """
    seeds = integer("seeds", seeds, minimum=1)
    plans = list(plans)
    frames = []
    for r in dict.fromkeys([*routings, baseline]):
        hashed = r.strip().lower().startswith(("ecmp", "mp"))  # ecmp and mp-x hash; the others are deterministic
        draws = range(seeds) if hashed else range(1)
        tabs = [iteration_table(model, plans, gpu, topology, r, seed=s, **kwargs) for s in draws]
        t = tabs[0].copy()
        for col in ("iteration_s", "mfu", "dp_exposed_s", "dp_comm_s"):
            t[col] = np.mean([x[col].to_numpy() for x in tabs], axis=0)
        t["routing"], t["plan"] = r, np.arange(len(plans))
        frames.append(t)
    out = pd.concat(frames, ignore_index=True)
    base = out[out.routing == baseline].set_index("plan")
    out["fabric_share"] = out.plan.map(base.dp_exposed_s / base.iteration_s)
    out["gain"] = out.iteration_s / out.plan.map(base.iteration_s) - 1.0
    slowdown = np.divide(
        out.dp_comm_s,
        out.plan.map(base.dp_comm_s),
        out=np.ones(len(out)),
        where=out.plan.map(base.dp_comm_s).to_numpy() > 0,
    )
    out["shortcut_gain"] = out.fabric_share * (slowdown - 1.0)
    out = out[out.routing.isin(list(routings))]
    return out[
        ["plan", "tp", "pp", "dp", "routing", "iteration_s", "mfu", "fabric_share", "gain", "shortcut_gain"]
    ].reset_index(drop=True)


@accepts(gpu_counts=Array(integer=True, gt=0, min_size=1))
def weak_scaling(
    model: Model,
    gpu: GPU,
    gpu_counts,
    tp: int,
    pp: int,
    batch_per_replica: int,
    routings: Sequence[str] = ("ecmp", "spray", "planned"),
    hosts_per_leaf: int = 32,
    seeds: int = 4,
    recompute: str = "selective",
    **kwargs,
) -> pd.DataFrame:
    """Iteration time vs GPU count (DP grows, ``batch_per_replica`` sequences per DP replica) per routing, with the
    plans' activation ``recompute`` setting (as :class:`~workbench.training.Plan`).

    Each count ``N`` runs on ``leaf_spine(N / hosts_per_leaf, hosts_per_leaf, hosts_per_leaf)`` with the GPU's NIC
    rate on every link.

    Returns
    -------
    pandas.DataFrame
        ``gpus, routing, iteration_s, mfu, slowdown`` (over the fastest routing at that count).

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS
    >>> t = weak_scaling(MODELS["gpt-18b"], GPUS["H100"], [128, 256], 8, 1, 8, hosts_per_leaf=16, seeds=2)
    >>> sorted(t.routing.unique().tolist()), bool((t.slowdown >= 1).all())
    (['ecmp', 'planned', 'spray'], True)
    """
    counts = array_1d("gpu_counts", gpu_counts, dtype=float, min_size=1, low=1)
    h = integer("hosts_per_leaf", hosts_per_leaf, minimum=1)
    rows = []
    for n in counts.astype(int):
        if n % h or n % (tp * pp):
            raise ValueError(f"gpu_counts: {n} must be a multiple of hosts_per_leaf={h} and of tp*pp={tp * pp}")
        dp = n // (tp * pp)
        topo = fb.leaf_spine(n // h, h, h, host_gbps=gpu.nic_gbps)
        t = routing_comparison(
            model,
            [Plan(tp, pp, dp, dp * batch_per_replica, recompute=recompute)],
            gpu,
            topo,
            routings,
            baseline=routings[-1],
            seeds=seeds,
            **kwargs,
        )
        for r in t.itertuples():
            rows.append((int(n), r.routing, r.iteration_s, r.mfu))
    out = pd.DataFrame(rows, columns=["gpus", "routing", "iteration_s", "mfu"])
    out["slowdown"] = out.iteration_s / out.groupby("gpus").iteration_s.transform("min")
    return out
