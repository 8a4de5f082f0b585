"""Design-space exploration of parallelism plans: every TP x PP x DP x micro-batch x recomputation plan of a job,
ranked by the iteration formula (vectorized: one :func:`~workbench.training.iteration.iteration_arrays` call for
all plans), the ones that fit in memory kept, and the fastest re-ranked by the execution graph
(:mod:`workbench.training.exec_graph`), which sees what the formula cannot (the pipeline's end stages sending one
way, launch and synchronisation gaps, DP buckets overlapping the last backward).

Multiverse (NSDI'25) speeds up this kind of search by running many simulation experiments at once on one simulator
instance; here the formula is the cheap first pass and the graph the expensive second pass, the two-stage shape
such searches take.

Examples
--------
>>> from workbench.training import MODELS, GPUS
>>> r = explore(MODELS["gpt3-175b"], GPUS["H100"], 512, 512, top_k=3)
>>> int(r.plans.fits.sum()) > 0, len(r.top) == 3, bool(r.top.graph_s.is_monotonic_increasing)
(True, True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._contracts import accepts
from .._validate import integer, one_of
from .exec_graph import MAX_GRAPH_ROWS, _plan_graph_rows, build_graph, simulate
from .iteration import COMPUTE_FORMS, ERAS, iteration_arrays
from .specs import GPU, Model, Plan, PlanError

__all__ = ["DSEResult", "plan_space", "explore"]

_MICRO = (1, 2, 4, 8)


@accepts()
@dataclass(frozen=True)
class DSEResult:
    """All plans with their formula numbers (``plans``), the graph re-ranking of the fastest that fit (``top``), and
    the formula's throughput (``plans_per_s``)."""

    plans: pd.DataFrame
    top: pd.DataFrame
    plans_per_s: float


@accepts()
def plan_space(model: Model, gpu: GPU, n_gpus: int, global_batch: int) -> dict[str, np.ndarray]:
    """Every plan of ``n_gpus`` GPUs (TP within a node and dividing the attention heads, PP up to the layer count,
    ``global_batch`` divisible by ``dp * micro_batch``), as arrays of :class:`~workbench.training.specs.Plan` fields.

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS
    >>> space = plan_space(MODELS["gpt3-175b"], GPUS["H100"], 64, 64)
    >>> int(space["tp"].size), set((space["tp"] * space["pp"] * space["dp"]).tolist())
    (156, {64})
    """
    n_gpus = integer("n_gpus", n_gpus, minimum=1)
    global_batch = integer("global_batch", global_batch, minimum=1)
    div = np.array([d for d in range(1, n_gpus + 1) if n_gpus % d == 0])
    tp = div[(div <= gpu.gpus_per_node) & (model.heads % div == 0)]  # within a node; whole heads per GPU
    t, p, b, r = np.meshgrid(tp, div, np.array(_MICRO), np.array([0, 1]), indexing="ij")
    t, p, b, r = t.ravel(), p.ravel(), b.ravel(), r.ravel()
    ok = (n_gpus % (t * p) == 0) & (p <= model.layers)
    t, p, b, r = t[ok], p[ok], b[ok], r[ok]
    d = n_gpus // (t * p)
    ok = global_batch % (d * b) == 0
    if not ok.any():
        raise PlanError(
            f"no plan of {n_gpus} GPUs divides global_batch={global_batch} into dp x micro_batch "
            f"(smallest dp is {int(d.min())})"
        )
    t, p, b, r, d = t[ok], p[ok], b[ok], r[ok], d[ok]
    n = t.size
    return {
        "tp": t,
        "pp": p,
        "dp": d,
        "global_batch": np.full(n, global_batch),
        "micro_batch": b,
        "ep": np.ones(n, np.int64),
        "virtual_stages": np.ones(n, np.int64),
        "recompute": np.where(r == 1, "full", "selective"),
        "distributed_optimizer": np.ones(n, bool),
    }


@accepts()
def explore(
    model: Model,
    gpu: GPU,
    n_gpus: int,
    global_batch: int,
    top_k: int = 5,
    compute: str = "measured",
    era: str = "2024",
    **graph_kwargs,
) -> DSEResult:
    """Rank every plan by the formula, keep those that fit, re-rank the ``top_k`` fastest by the graph.

    ``plans`` holds every plan with its formula numbers and ``graph_rows`` (the size of its execution graph); a plan
    whose graph exceeds :data:`~workbench.training.exec_graph.MAX_GRAPH_ROWS` (tens of thousands of micro-batches in
    a deep pipeline) keeps its formula numbers but is not re-ranked.

    ``compute`` and ``era`` are the iteration model's compute form and software era for both
    (:func:`workbench.training.iteration.iteration_table`; the defaults are the validated model on today's kernels).

    ``top`` has the plan fields, ``formula_s``, ``graph_s``, ``formula_rank`` (0 = fastest by the formula of those
    re-ranked) and the graph's breakdown of stage 0, sorted by ``graph_s``.

    Raises
    ------
    PlanError
        No plan of ``n_gpus`` GPUs fits in memory (says by how much the closest misses), or none that fits has a
        graph within the limit.
    """
    top_k = integer("top_k", top_k, minimum=1)
    one_of("compute", compute, COMPUTE_FORMS)
    one_of("era", era, ERAS)
    space = plan_space(model, gpu, n_gpus, global_batch)
    t0 = time.perf_counter()
    out = iteration_arrays(model, space, gpu, compute=compute, era=era)
    rate = space["tp"].size / max(time.perf_counter() - t0, 1e-9)
    plans = pd.DataFrame({**space, **{k: out[k] for k in ("iteration_s", "mfu", "memory_gib", "fits")}})
    plans["graph_rows"] = _plan_graph_rows(model.layers, space["pp"], out["micro_batches"],
                                     (out["tp_comm_s"] + out["moe_a2a_s"]) > 0, space["recompute"] == "full",
                                     graph_kwargs.get("max_chunks", 4))  # fmt: skip
    fit = plans[plans.fits].sort_values("iteration_s", kind="stable")
    if fit.empty:
        best = plans.memory_gib.min()
        raise PlanError(
            f"no plan of {n_gpus} GPUs fits {model.name} in {gpu.name} memory: the smallest needs {best:.1f} GiB "
            f"per GPU, {gpu.hbm_bytes / 2**30:.1f} GiB available (over by {best - gpu.hbm_bytes / 2**30:.1f} GiB)"
        )
    fit = fit[fit.graph_rows <= MAX_GRAPH_ROWS]
    if fit.empty:
        raise PlanError(
            f"every plan that fits has more than {MAX_GRAPH_ROWS:,} rows of execution graph (stages x micro-batches "
            f"of global_batch={global_batch}): lower global_batch, or rank by the formula (iteration_table)"
        )
    rows = []
    for rank, (_, row) in enumerate(fit.head(top_k).iterrows()):
        plan = Plan(
            int(row.tp), int(row.pp), int(row.dp), int(row.global_batch), int(row.micro_batch), recompute=row.recompute
        )
        r = simulate(build_graph(model, plan, gpu, compute=compute, era=era, **graph_kwargs))
        rows.append({**plan.as_dict(), "formula_s": float(row.iteration_s), "graph_s": r.iteration_s,
                     "formula_rank": rank, **r.breakdown})  # fmt: skip
    top = pd.DataFrame(rows).sort_values("graph_s", kind="stable").reset_index(drop=True)
    return DSEResult(plans, top, rate)
