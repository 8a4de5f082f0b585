"""Execution graph of one training iteration (Lumos, Liang et al., MLSys'25, arXiv 2504.09307), simulated by list
scheduling, with graph edits for what-if questions and a dPRO-like mode that drops cross-stream dependencies.

The graph (Lumos §3) has CPU operations (kernel launches, synchronisations) on one CPU thread per rank and GPU kernels
on four streams per rank (compute, TP communication, PP communication, DP communication), joined by Lumos's four
kinds of dependency: **launch** (CPU -> GPU: a kernel starts after its launch), **sync** (GPU -> CPU: the CPU waits
for kernels, e.g. Megatron-LM's device synchronisation after each pipeline exchange, and the gradient-norm
synchronisation before the optimizer step), **stream** (same-stream FIFO order) and **cross-stream** events (a kernel
waits for a kernel of another stream: the next GEMM for the TP all-reduce's output, the TP all-reduce for the GEMM,
a DP bucket for its layer's backward, a stage's first kernel for its neighbour's activation).

Analytic, not trace-driven: Lumos builds the graph from a profiled trace; here every kernel's duration comes from the
iteration formula (:func:`workbench.training.iteration.iteration_table`, same roofline, NVLink and fabric numbers,
so no constant is duplicated): per layer and micro-batch the forward is two compute kernels each followed by TP
all-reduces (2 per layer, 4 per layer with a recompute pass), the backward likewise (MoE all-to-alls are folded into
the TP kernels); a stage-boundary transfer per micro-batch and direction; the DP collective in one bucket per layer,
each issued as the last micro-batch's backward finishes that layer; the optimizer step (with the tied embeddings'
gradient all-reduce before it) after a synchronisation. The
pipeline runs the 1F1B schedule (``virtual_stages = 1``; the interleaved schedule is in the formula only).

Per-rank templates: the graph holds one pipeline (``pp`` ranks); TP ranks of a stage and DP replicas run the same
program and only scale the collectives' durations, so a 16,384-GPU job costs what its pipeline costs.

Simulation (:func:`simulate`): every stream and the CPU thread execute their nodes in program order (as CUDA streams
and a CPU thread do), so list scheduling reduces to one topological pass computing each node's earliest start; the
critical path follows each node's latest-finishing predecessor. Breakdown per rank (Lumos §5): *exposed compute*
(compute busy, no communication), *overlapped* (both), *exposed communication* (communication only) and *other*
(neither: pipeline bubbles, launch and synchronisation gaps).

Graph edits (:func:`what_if`), as Lumos §4 describes them, realised on the analytic graph:

- ``dp``: the DP collective's kernels get the fabric time of the new group size (compute unchanged);
- ``pp`` (stages) and ``global_batch``/``micro_batch`` (micro-batches): layers are re-partitioned over the stages
  and the 1F1B order rebuilt from the template;
- ``tp``: compute kernels scale by ``1/tp``, TP all-reduce kernels get the new ring time;
- ``layers``, ``hidden``: the model is changed (parameters recomputed as GPT's ``12 l h^2``), kernels re-derived.

:func:`add_dependencies` adds arbitrary edges (a custom edit) and :func:`simulate` rejects a cycle, naming how many
nodes it traps.

Examples
--------
>>> from workbench.training import MODELS, GPUS, Plan
>>> g = build_graph(MODELS["gpt3-175b"], Plan(8, 8, 8, 512, recompute="full"), GPUS["H100"])
>>> r = simulate(g)
>>> round(r.iteration_s, 2) > 0, sorted(r.breakdown)[:2]
(True, ['exposed_comm_s', 'exposed_compute_s'])
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .._contracts import Array, Opaque, accepts
from .._validate import integer, nonnegative, one_of
from . import _graph_kernels as gk
from .iteration import iteration_arrays, stage_loads
from .specs import GPU, Model, Plan, PlanError, check_plan

__all__ = [
    "ExecGraph",
    "GraphCycleError",
    "SimResult",
    "add_dependencies",
    "MAX_GRAPH_ROWS",
    "build_graph",
    "graph_iteration",
    "simulate",
    "timeline_table",
    "what_if",
    "NODE_KINDS",
    "EDGE_KINDS",
]

NODE_KINDS = ("cpu_launch", "cpu_sync", "compute", "tp_comm", "pp_comm", "dp_comm", "optimizer")
EDGE_KINDS = ("launch", "sync", "stream", "cross_stream")
STREAMS = ("cpu", "compute", "tp", "pp", "dp")
_MODES = ("lumos", "dpro", "serial")
#: The largest graph :func:`build_graph` builds, in node rows (and four times as many edge rows): 0.7 GB of arrays,
#: about 40,000 stage x micro-batch steps. Beyond it a plan has its formula (``iteration_table``), not a graph.
MAX_GRAPH_ROWS = 5_000_000


def _graph_shape(layers, pp, has_tp, full, max_chunks: int):
    """Chunks per stage (``ceil(layers / pp)`` layers in at most ``max_chunks``) and TP all-reduces per chunk in the
    forward, backward and recompute passes (2 each when ``has_tp``; the recompute's only when ``full``) of a 1F1B
    graph: numbers, or arrays of plans."""
    ls = np.minimum(-(-np.asarray(layers) // np.asarray(pp)), max_chunks)
    n_t = np.where(has_tp, 2, 0)
    return ls, n_t, n_t, np.where(np.logical_and(has_tp, full), 2, 0)


def _plan_graph_rows(layers, pp, micro_batches, has_tp, full, max_chunks: int = 4):
    """Rows the graph of a 1F1B plan allocates (numbers or arrays of plans): :func:`_graph_shape`'s chunks and
    all-reduces on ``pp`` stages of ``micro_batches``."""
    shape = _graph_shape(layers, pp, has_tp, full, max_chunks)
    return gk.graph_rows(np.asarray(pp, np.int64), np.asarray(micro_batches, np.int64), *shape)


@accepts()
class GraphCycleError(ValueError):
    """A graph edit created a dependency cycle (the iteration can never finish)."""


@accepts()
@dataclass(frozen=True)
class ExecGraph:
    """One pipeline's execution graph: node arrays (``dur`` seconds, ``kind``, ``res`` = ``stage * 5 + stream``,
    ``stage``, ``mb``, ``layer``) and edge arrays (``src``, ``dst``, ``ekind``); ``formula`` is the formula's row for
    the same plan (the source of every duration), a dict of
    :func:`~workbench.training.iteration.iteration_arrays`' numbers."""

    model: Model
    plan: Plan
    gpu: GPU
    mode: str
    dur: np.ndarray
    kind: np.ndarray
    res: np.ndarray
    stage: np.ndarray
    mb: np.ndarray
    layer: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    ekind: np.ndarray
    formula: dict
    options: dict

    @property
    def n_nodes(self) -> int:
        return int(self.dur.size)

    @property
    def n_edges(self) -> int:
        return int(self.src.size)

    @accepts()
    def edge_counts(self) -> dict[str, int]:
        """Edges of each of the four kinds."""
        return {k: int((self.ekind == i).sum()) for i, k in enumerate(EDGE_KINDS)}


@accepts()
@dataclass(frozen=True)
class SimResult:
    """Simulated iteration: time, per-node start/end, critical path (node ids) and the breakdown of ``rank``."""

    iteration_s: float
    start: np.ndarray
    end: np.ndarray
    critical: np.ndarray
    breakdown: dict[str, float]
    per_stage: pd.DataFrame

    @accepts()
    def critical_share(self, graph: ExecGraph) -> dict[str, float]:
        """Seconds of the critical path spent in each node kind (plus ``wait``: gaps between critical nodes)."""
        out = {
            k: float(graph.dur[self.critical][graph.kind[self.critical] == i].sum()) for i, k in enumerate(NODE_KINDS)
        }
        out["wait"] = self.iteration_s - sum(out.values())
        return out


@accepts(topology=Opaque("a fabric topology, or None"))
def build_graph(
    model: Model,
    plan: Plan,
    gpu: GPU,
    topology=None,
    routing: str = "ecmp",
    *,
    mode: str = "lumos",
    launch_s: float = 1e-5,
    max_chunks: int = 4,
    n_gpus: int | None = None,
    **formula_kwargs,
) -> ExecGraph:
    """Build the execution graph of ``plan`` (after :func:`check_plan`: memory, GPU count, TP domain).

    Parameters
    ----------
    model, plan, gpu : Model, Plan, GPU
    topology, routing, formula_kwargs
        Passed to :func:`~workbench.training.iteration.iteration_table` (fabric of the DP collective).
    mode : {"lumos", "dpro", "serial"}
        ``"lumos"``: all four dependency kinds; ``"dpro"``: drops the cross-stream edges from communication kernels
        to the compute stream of the same rank (the event waits dPRO's graph misses, Lumos Fig. 1), so a GEMM no
        longer waits for the all-reduce that produces its input; ``"serial"``: every kernel of a rank on its compute
        stream and the DP collective after the backward (no overlap), the formula's sum.
    launch_s : float
        CPU seconds per modelled kernel launch (exposed only after a synchronisation).
    max_chunks : int
        Layers of a stage are grouped into at most this many chunks (kernels of a chunk merged: same totals);
        ``max_chunks >= layers per stage`` keeps one chunk per layer.
    n_gpus : int, optional
        The job's GPU count; ``tp * pp * dp`` must equal it.

    Raises
    ------
    PlanError
        The plan does not fit in memory, uses an impossible TP/PP/DP for ``n_gpus``, or is interleaved.
    """
    one_of("mode", mode, _MODES)
    launch_s = nonnegative("launch_s", launch_s)
    check_plan(model, plan, gpu, n_gpus=n_gpus)
    if plan.virtual_stages != 1:
        raise PlanError(
            f"the execution graph builds the 1F1B schedule (virtual_stages=1), got virtual_stages="
            f"{plan.virtual_stages}; use iteration_table for the interleaved schedule"
        )
    cols = {k: np.array([v]) for k, v in plan.as_dict().items()}
    f = {k: float(v[0]) for k, v in iteration_arrays(model, cols, gpu, topology, routing, **formula_kwargs).items()}
    m, p = int(f["micro_batches"]), plan.pp
    full = plan.recompute == "full"
    comm = (f["tp_comm_s"] + f["moe_a2a_s"]) / m
    has_tp = comm > 0
    ls, n_tf, n_tb, n_tr = (int(x) for x in _graph_shape(model.layers, p, has_tp, full,
                                                         integer("max_chunks", max_chunks, minimum=1)))  # fmt: skip
    t_c = f["compute_s"] / m / f["stage_max_load"]  # per micro-batch on a mean stage (scaled per stage below)
    fwd = f["compute_fwd_s"]  # the formula's forward pass (same kernels); backward and recompute: the rest
    t_cf, t_cr, t_cb = fwd / ls, (fwd / ls if full else 0.0), (t_c - fwd * (2 if full else 1)) / ls
    n_ar = 6 if full else 4
    t_tp = comm / (ls * n_ar) if has_tp else 0.0
    t_pp = f["pp_p2p_s"] / m / 2.0
    t_dp = f["dp_comm_s"]
    t_opt = f["optimizer_s"] + f["embedding_sync_s"]  # the tied embeddings' all-reduce, then the step
    rows = int(gk.graph_rows(p, m, ls, n_tf, n_tb, n_tr))
    if rows > MAX_GRAPH_ROWS:
        raise PlanError(
            f"the execution graph of {p} stages x {m:,} micro-batches would take {rows:,} node rows, over the "
            f"{MAX_GRAPH_ROWS:,} built at most: lower global_batch or raise dp x micro_batch (micro-batches per "
            "pipeline = global_batch / (dp x micro_batch)), or use iteration_table (the formula needs no graph)"
        )
    nd, eg = gk.build(
        p, m, ls, t_cf, t_cb, t_cr, n_tf, n_tb, n_tr, t_tp, t_pp, t_dp, t_opt, launch_s, mode == "serial", rows
    )
    dur = nd[:, 0].copy()
    kind, res, stage, mb, layer = (nd[:, c].astype(t) for c, t in zip(range(1, 6), (np.int8, *[np.int32] * 4)))
    compute_nodes = kind == gk.COMPUTE  # each rank's share of the work: the output layer on the last (stage_loads)
    dur[compute_nodes] *= stage_loads(model, p, plan.balanced_ends)[stage[compute_nodes]]
    src, dst, ek = eg[:, 0].copy(), eg[:, 1].copy(), eg[:, 2].astype(np.int8)
    if mode == "dpro":
        comm_kinds = np.isin(kind[src], (gk.TP_COMM, gk.PP_COMM, gk.DP_COMM))
        drop = (ek == gk.E_CROSS) & comm_kinds & (stage[src] == stage[dst])
        src, dst, ek = src[~drop], dst[~drop], ek[~drop]
    options = {
        "topology": topology,
        "routing": routing,
        "launch_s": launch_s,
        "max_chunks": max_chunks,
        **formula_kwargs,
    }
    return ExecGraph(model, plan, gpu, mode, dur, kind, res, stage, mb, layer, src, dst, ek, f, options)


@accepts(src=Array(integer=True, ge=0), dst=Array(integer=True, ge=0))
def add_dependencies(graph: ExecGraph, src, dst, kind: str = "cross_stream") -> ExecGraph:
    """A custom edit: the graph with edges ``src[i] -> dst[i]`` added (node ids); :func:`simulate` rejects a cycle.

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS, Plan
    >>> g = build_graph(MODELS["gpt-1.7b"], Plan(1, 2, 4, 16), GPUS["A100"])
    >>> simulate(add_dependencies(g, [g.n_nodes - 1], [0]))
    Traceback (most recent call last):
    ...
    workbench.training.exec_graph.GraphCycleError: the graph has a dependency cycle: ...
    """
    one_of("kind", kind, EDGE_KINDS)
    src, dst = np.atleast_1d(np.asarray(src, np.int64)), np.atleast_1d(np.asarray(dst, np.int64))
    if src.shape != dst.shape:
        raise ValueError(f"src and dst must have the same length, got {src.size} and {dst.size}")
    bad = (src < 0) | (src >= graph.n_nodes) | (dst < 0) | (dst >= graph.n_nodes)
    if bad.any():
        raise ValueError(f"node ids must be in [0, {graph.n_nodes}), got {int(np.r_[src, dst][np.r_[bad, bad]][0])}")
    k = np.full(src.size, EDGE_KINDS.index(kind), np.int8)
    return replace(graph, src=np.r_[graph.src, src], dst=np.r_[graph.dst, dst], ekind=np.r_[graph.ekind, k])


@accepts()
def simulate(graph: ExecGraph, rank: int = 0) -> SimResult:
    """Run the graph: iteration time, start/end of every node, the critical path and the breakdown of ``rank``.

    ``rank`` is the pipeline stage whose breakdown is reported (every stage's is in ``per_stage``).

    Raises
    ------
    GraphCycleError
        An edit left a cycle: says how many nodes can never start.
    """
    rank = integer("rank", rank, minimum=0, maximum=graph.plan.pp - 1)
    start, end, crit, done = gk.simulate(graph.dur, graph.src, graph.dst, graph.n_nodes)
    if done < graph.n_nodes:
        raise GraphCycleError(
            f"the graph has a dependency cycle: {graph.n_nodes - done} of {graph.n_nodes} nodes can never start "
            f"(check the last edit's edges)"
        )
    sink = int(np.argmax(end))
    t_end = float(end[sink])
    path = gk.critical_path(end, crit, sink)
    cov = gk.coverage(start, end, graph.kind, graph.stage, graph.plan.pp, t_end)
    per_stage = pd.DataFrame(cov, columns=["exposed_compute_s", "overlapped_s", "exposed_comm_s", "other_s"])
    per_stage.index.name = "stage"
    bd = dict(zip(per_stage.columns, (float(x) for x in cov[rank])))
    return SimResult(t_end, start, end, path, bd, per_stage)


@accepts()
def graph_iteration(model: Model, plan: Plan, gpu: GPU, **kwargs) -> dict[str, float]:
    """Build and simulate: the graph's iteration time, its stage-0 breakdown, the formula's time and MFU of both.

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS, Plan
    >>> r = graph_iteration(MODELS["gpt3-175b"], Plan(8, 8, 8, 512, recompute="full"), GPUS["H100"])
    >>> 0.8 < r["graph_s"] / r["formula_s"] < 1.05
    True
    """
    g = build_graph(model, plan, gpu, **kwargs)
    r = simulate(g)
    f = g.formula
    return {
        "graph_s": r.iteration_s,
        "formula_s": f["iteration_s"],
        **r.breakdown,
        "graph_mfu": f["mfu"] * f["iteration_s"] / r.iteration_s,
        "formula_mfu": f["mfu"],
        "nodes": g.n_nodes,
        "edges": g.n_edges,
    }


def _gpt_like(model: Model, layers: int, hidden: int) -> Model:
    """``model`` with another depth or width: parameters rescaled as GPT's ``12 l h^2 + 13 l h + (V + s) h``."""
    p = 12 * layers * hidden**2 * (1 + 13 / (12 * hidden) + (model.vocab + model.seq_len) / (12 * layers * hidden))
    if model.is_moe:
        raise PlanError("layer/hidden edits are defined for dense models only")
    # a GPT FFN stays 4 h wide, an explicitly sized one keeps its size; heads stay, their dimension follows h
    ffn = 4 * hidden if model.ffn == 4 * model.hidden else model.ffn
    d = hidden // model.heads
    return replace(
        model,
        model=f"{model.name}[l={layers},h={hidden}]",
        params=float(p),
        active_params=float(p),
        layers=layers,
        hidden=hidden,
        ffn=ffn,
        qk_head_dim=d,
        v_head_dim=d,
        kv_elements_per_layer=2 * model.kv_heads * d,
    )


@accepts()
def what_if(graph: ExecGraph, **changes) -> ExecGraph:
    """A new graph with ``dp``, ``pp``, ``tp``, ``global_batch``, ``micro_batch``, ``recompute``, ``layers`` or
    ``hidden`` changed (the edits of the module docstring); other settings (mode, fabric defaults) are kept.

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS, Plan
    >>> g = build_graph(MODELS["gpt3-175b"], Plan(8, 8, 8, 512, recompute="full"), GPUS["H100"])
    >>> g2 = what_if(g, dp=16)  # twice the GPUs, the same global batch: half the micro-batches per pipeline
    >>> g2.plan.dp, round(simulate(g2).iteration_s / simulate(g).iteration_s, 2)
    (16, 0.56)
    """
    allowed = {"dp", "pp", "tp", "global_batch", "micro_batch", "recompute", "layers", "hidden"}
    unknown = set(changes) - allowed
    if unknown:
        raise ValueError(f"unknown edit(s) {sorted(unknown)}; allowed: {sorted(allowed)}")
    model = graph.model
    if "layers" in changes or "hidden" in changes:
        model = _gpt_like(model, int(changes.pop("layers", model.layers)), int(changes.pop("hidden", model.hidden)))
    plan = replace(graph.plan, **changes)
    return build_graph(model, plan, graph.gpu, mode=graph.mode, **graph.options)


@accepts()
def timeline_table(graph: ExecGraph, result: SimResult, *, gpu_only: bool = True) -> pd.DataFrame:
    """One row per node (GPU kernels only unless ``gpu_only=False``): ``stage, stream, kind, mb, layer, start_s,
    end_s, critical`` (on the critical path), for timelines.

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS, Plan
    >>> g = build_graph(MODELS["gpt-1.7b"], Plan(1, 2, 4, 16), GPUS["A100"])
    >>> t = timeline_table(g, simulate(g))
    >>> sorted(t.stream.unique()), bool(t.critical.any())
    (['compute', 'dp', 'pp'], True)
    """
    crit = np.zeros(graph.n_nodes, bool)
    crit[result.critical] = True
    keep = graph.kind >= gk.COMPUTE if gpu_only else np.ones(graph.n_nodes, bool)
    return pd.DataFrame(
        {
            "stage": graph.stage[keep],
            "stream": np.asarray(STREAMS)[graph.res[keep] % gk.N_RES],
            "kind": np.asarray(NODE_KINDS)[graph.kind[keep]],
            "mb": graph.mb[keep],
            "layer": graph.layer[keep],
            "start_s": result.start[keep],
            "end_s": result.end[keep],
            "critical": crit[keep],
        }
    )
