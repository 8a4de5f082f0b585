"""Time per training iteration, broken down, with the data-parallel collectives routed on the fabric.

Per micro-batch and pipeline stage (``tp * pp`` GPUs share a micro-batch's work):

- *compute*, ``compute="constant"``: ``t_c = flops_per_token * r * b * s / (tp * pp) / (peak * efficiency)``,
  ``r = 4/3`` with full recomputation (one more forward pass), ``efficiency`` the GPU generation's constant
  (:mod:`.specs`); ``compute="measured"``: per micro-batch and stage, from measured kernels
  (:func:`compute_parts`): the forward is the GEMMs (``2 * active params`` FLOPs per token, the LM head and
  embedding as :attr:`Model.flops_per_token` counts them) at the measured fraction of peak the projections reach at
  ``b * s`` tokens (:meth:`workbench.serving.opcurves.OperatorCurves.gemm_efficiency`), the attention
  (``4 l h s`` FLOPs per token) at the generation's stated attention-kernel efficiency
  (:data:`workbench.training.specs.ATTENTION_EFFICIENCY`) and the measured non-GEMM kernels (norms, activation,
  residual adds: :meth:`~workbench.serving.opcurves.OperatorCurves.elementwise_s`) of the stage's ``l / pp``
  layers; the backward is twice the forward for GEMMs and attention (two matmuls per forward matmul: the input
  and the weight gradient) and :data:`ELEMENTWISE_BACKWARD` times it for the element-wise kernels; full
  recomputation adds one forward. GPU generations without measured curves (or without a stated attention
  efficiency) keep the constant; ``compute="unfused"``: the kernels of 2021 (Megatron-LM SC'21, before
  FlashAttention): as ``"measured"``, but the attention's two batched matmuls run at the GEMM efficiency and the
  ``a s^2 b`` score-sized tensors go through HBM (:data:`UNFUSED_ATTENTION_BYTES` per element, forward and
  backward; the recompute forward, full or selective, once more) at the GPU's HBM bandwidth;
- *TP* all-reduces on NVLink (Megatron's sequence-parallel layout): 4 per layer (6 with full recomputation) of
  ``2 b s h`` bytes, each a ring ``2 (tp-1)/tp * bytes / nvlink``, not overlapped;
- *PP* point-to-point: an activation forward and a gradient backward of ``2 b s h / tp`` bytes per stage boundary
  (``virtual_stages`` boundaries per micro-batch) at the NIC rate;
- *MoE* all-to-all: dispatch and combine, forward and backward (4 per MoE layer, 6 with full recomputation), each
  rank sending ``2 b s k h / tp`` bytes across its expert-parallel group: on NVLink when ``ep * tp`` GPUs fit in a
  node, otherwise on the fabric like the DP collective.

The pipeline (1F1B, interleaved over ``v`` virtual stages) runs at its slowest rank: the last holds the output layer
and loss on top of its layers (:func:`stage_loads`; with the plan's ``balanced_ends`` the end ranks hold a layer fewer
instead, Llama 3's layout), so it takes ``m * t_mb + (pp-1)/v * t_rest`` for ``m`` micro-batches, ``t_mb`` the
slowest rank's micro-batch and ``t_rest`` the mean of the others' (exact for ``v = 1`` with the last rank slowest:
the others fill and drain the pipeline, the last runs every micro-batch back to back); the *bubble* is
``(pp-1)/v * t_rest``, a fraction ``(p-1)/(m+p-1)`` of the pipeline for ``v = 1`` and equal ranks. The plan's
``overlap_tp`` and ``overlap_p2p`` take the TP collectives and the PP transfers off the critical path, ``overlap_dp``
all of the DP collective but the last model chunk's reduce-scatter, ``1 / (2 v)`` of it (schedules that state them:
:class:`~workbench.training.specs.Plan`).

The *DP* gradient reduce-scatter + all-gather (or all-reduce; a ring moves the same bytes) of the stage's
``2 * params / (tp * pp)`` gradient bytes runs **on the fabric**: the collective's steps from
:func:`workbench.fabric.collective_steps`, one per DP group, all ``tp * pp`` groups at once (Megatron's rank order,
``rank = t + tp * (d + dp * p)``, ranks placed on hosts by :func:`workbench.fabric.place_ranks`, one NIC per GPU),
routed with the chosen routing; each step lasts ``bytes x worst link load / link bandwidth``
(:func:`workbench.fabric.max_congestion`) plus ``latency_s``. One hashing per job: ECMP paths persist, as C4
observes. Without a topology the DP collective is NIC-bound (an ideal non-blocking fabric). The part of it hidden
behind the last micro-batch's backward pass (``dp_overlap`` of it) is not on the critical path; the optimizer step
is HBM-bound (28 bytes moved per local parameter, sharded by DP with the distributed optimizer).

Everything is vectorized over plans; the fabric's time per byte is computed once per distinct (group layout,
routing, collective) and cached, so a sweep of 10^3 plans costs a handful of fabric evaluations.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import fabric as fb
from .._rng import spawn
from .._validate import in_range, integer, nonnegative, one_of
from .specs import (
    GPU,
    Model,
    Plan,
    PlanError,
    _load_factors,
    attention_efficiency,
    check_plan,
    efficiency,
    memory_arrays,
    stage_loads,
)

__all__ = [
    "Breakdown",
    "group_seconds_per_byte",
    "compute_parts",
    "iteration_arrays",
    "iteration_table",
    "iteration_time",
    "stage_loads",
    "COMPONENTS",
    "COMPUTE_FORMS",
    "ELEMENTWISE_BACKWARD",
    "UNFUSED_ATTENTION_BYTES",
]

#: Critical-path components of an iteration, in the order they are stacked in figures; they sum to ``iteration_s``.
COMPONENTS = ("compute_s", "tp_comm_s", "pp_p2p_s", "moe_a2a_s", "bubble_s", "dp_exposed_s", "optimizer_s")
_BASE = 2**20  # bytes of the probe message; fabric times are linear in the size
_DP_COLLECTIVES = ("ring", "halving_doubling", "double_binary_tree")
#: The compute term's forms: one efficiency constant per GPU generation, measured kernels, or measured GEMMs with
#: 2021's unfused attention (see the module text).
COMPUTE_FORMS = ("constant", "measured", "unfused")
#: HBM bytes per element of one head's ``s x s`` score matrix that unfused attention moves per layer, (forward,
#: backward), in 16-bit precision. Forward: the standard implementation writes the scores ``S = Q K^T`` to HBM,
#: reads them for the softmax, writes ``P``, reads ``P`` for ``O = P V`` (Dao et al., "FlashAttention", NeurIPS
#: 2022, arXiv 2205.14135, Algorithm 0); Megatron-LM fuses scale, mask and softmax into one kernel but keeps a
#: separate attention dropout, whose mask (1 byte) and output (2 bytes) are the other score-sized tensors
#: (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", MLSys 2023, arXiv
#: 2205.05198, Sec. 4.1: softmax output ``2 a s^2 b``, dropout mask ``a s^2 b``, dropout output ``2 a s^2 b`` bytes).
#: Writes S, P, mask, output (2 + 2 + 1 + 2) and reads S, P, output (2 + 2 + 2): 13. Backward: the saved P, mask
#: and output are read (2 + 1 + 2) and the gradients of the output, of P and of S are each written once and read
#: by their consumer (the gradient of S by two matmuls): 2 + 2, 2 + 2, 2 + 4; 19 in all.
UNFUSED_ATTENTION_BYTES = (13.0, 19.0)
#: Backward cost of the element-wise kernels (norms, activation, residual adds, dropout) as a multiple of their
#: forward: each is memory-bound, and its backward reads the saved forward input and the incoming gradient and writes
#: one gradient (three tensor passes) where the forward reads one tensor and writes one (two passes).
ELEMENTWISE_BACKWARD = 1.5


@dataclass(frozen=True)
class Breakdown:
    """One plan's iteration time and its parts (seconds), throughput and utilisation."""

    iteration_s: float
    compute_s: float
    tp_comm_s: float
    pp_p2p_s: float
    moe_a2a_s: float
    bubble_s: float
    dp_comm_s: float
    dp_exposed_s: float
    optimizer_s: float
    tokens_per_s: float
    model_tflops_per_gpu: float
    hardware_tflops_per_gpu: float
    mfu: float
    memory_gib: float


@functools.lru_cache(maxsize=256)
def _cached(
    topology, routing: str, collective: str, group: int, stride: int, offsets: tuple, placement: str, seed: int
) -> tuple[float, int]:
    return _group_seconds_per_byte(topology, routing, collective, group, stride, np.array(offsets), placement, seed)


def _group_seconds_per_byte(topology, routing, collective, group, stride, offsets, placement, seed):
    n = int(offsets.max()) + stride * (group - 1) + 1
    rngs = spawn(seed, 2)
    hosts = fb.place_ranks(topology, n, placement, seed=rngs[0])
    steps = fb.collective_steps(collective, group, _BASE, seed=rngs[1])
    total, hops = 0.0, 0
    for st, rng in zip(steps, spawn(rngs[1], len(steps))):
        src = hosts[(offsets[:, None] + stride * st.src[None, :]).ravel()]
        dst = hosts[(offsets[:, None] + stride * st.dst[None, :]).ravel()]
        step = fb.Step(src, dst, np.tile(st.size_bytes, offsets.size), st.repeat, st.label)
        loads = fb.link_loads(topology, step, routing, seed=rng)
        total += st.repeat * fb.max_congestion(topology, loads)
        hops += st.repeat
    return total / _BASE, hops


def group_seconds_per_byte(
    topology,
    routing: str,
    collective: str,
    group: int,
    stride: int,
    offsets: Any,
    placement: str = "linear",
    seed: int = 0,
) -> tuple[float, int]:
    """Seconds per byte of per-rank message for many concurrent groups running ``collective`` on the fabric.

    Group ``j`` has ranks ``offsets[j] + stride * i`` for ``i < group``; ranks go to hosts by ``placement``.
    Returns ``(seconds per byte, sequential steps)``: the sum over steps of ``repeat * max congestion`` of the
    union of all groups' flows (per byte), and the number of steps (for latency).

    Examples
    --------
    >>> from workbench.fabric import leaf_spine
    >>> topo = leaf_spine(4, 4, 4, host_gbps=100)
    >>> spb, hops = group_seconds_per_byte(topo, "spray", "ring", 4, 4, [0, 1, 2, 3])
    >>> round(spb * 1e9 * 100 / 8, 6), hops          # 2(n-1)/n per byte at 100 Gb/s
    (1.5, 6)
    """
    one_of("collective", collective, fb.COLLECTIVES)
    group = integer("group", group, minimum=2)
    stride = integer("stride", stride, minimum=1)
    offsets = np.asarray(offsets, dtype=np.int64).ravel()
    if offsets.size == 0 or offsets.min() < 0:
        raise ValueError("offsets must be a non-empty array of non-negative rank ids")
    n = int(offsets.max()) + stride * (group - 1) + 1
    if n > topology.n_hosts:
        raise PlanError(
            f"the job needs {n} GPUs (one NIC each) but the fabric has {topology.n_hosts} hosts "
            f"(short by {n - topology.n_hosts})"
        )
    if collective == "halving_doubling" and group & (group - 1):
        raise PlanError(f"halving_doubling needs a power-of-two group, got {group}")
    if isinstance(seed, (int, np.integer)) and isinstance(placement, str):
        return _cached(topology, routing, collective, group, stride, tuple(offsets.tolist()), placement, int(seed))
    return _group_seconds_per_byte(topology, routing, collective, group, stride, offsets, placement, seed)


def _plans_frame(plans) -> pd.DataFrame:
    if isinstance(plans, Plan):
        plans = [plans]
    if isinstance(plans, pd.DataFrame):
        plans = [
            Plan(**{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items() if k in _PLAN_FIELDS})
            for row in plans.to_dict("records")
        ]
    plans = list(plans)
    if not plans or not all(isinstance(p, Plan) for p in plans):
        raise TypeError("plans must be a Plan, a non-empty sequence of Plans or a DataFrame of Plan fields")
    return pd.DataFrame([p.as_dict() for p in plans])


_PLAN_FIELDS = (
    "tp",
    "pp",
    "dp",
    "global_batch",
    "micro_batch",
    "ep",
    "virtual_stages",
    "recompute",
    "distributed_optimizer",
    "balanced_ends",
    "overlap_p2p",
    "overlap_tp",
    "overlap_dp",
)
#: Plan fields a caller of :func:`iteration_arrays` may leave out, with their defaults.
_OPTIONAL = {"balanced_ends": False, "overlap_p2p": False, "overlap_tp": False, "overlap_dp": False}


def compute_parts(model: Model, gpu: GPU, tp, pp, micro_batch, full, compute: str = "measured", ep=1) -> dict:
    """Compute seconds of one micro-batch on one GPU of a pipeline stage, in parts (arrays over plans).

    ``tp, pp, micro_batch, ep`` are arrays (or scalars) of plan fields, ``full`` whether full recomputation is on.
    Returns ``gemm_fwd_s, attention_fwd_s, elementwise_fwd_s`` (zero with the constant form), ``forward_s`` (one
    forward pass) and ``total_s`` (forward, backward and the recompute forward), and ``measured`` (whether the
    measured form applied: ``compute="measured"`` (or ``"unfused"``) and the GPU's generation has curves and, for
    ``"measured"``, an attention efficiency).

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS
    >>> def shares(name, tp):  # of one forward pass: GEMMs, attention, element-wise kernels (SC'21 plans)
    ...     p = compute_parts(MODELS[name], GPUS["A100"], tp, 1, 1, True)
    ...     parts = ("gemm_fwd_s", "attention_fwd_s", "elementwise_fwd_s")
    ...     return [round(float(p[k] / p["forward_s"]), 2) for k in parts]
    >>> shares("gpt-1.7b", 1), shares("gpt-1t", 8)  # the element-wise share falls with hidden size
    ([0.73, 0.14, 0.12], [0.94, 0.02, 0.05])
    >>> bool(compute_parts(MODELS["gpt-1t"], GPUS["B200"], 8, 1, 1, True)["measured"])  # no curves: the constant
    False
    """
    one_of("compute", compute, COMPUTE_FORMS)
    tp, pp = np.asarray(tp, dtype=float), np.asarray(pp, dtype=float)
    b, full = np.asarray(micro_batch, dtype=float), np.asarray(full, dtype=bool)
    s, h, L = float(model.seq_len), float(model.hidden), float(model.layers)
    tokens = b * s
    passes = np.where(full, 4.0, 3.0)  # forward, backward (2 forwards), recompute forward
    unfused = compute == "unfused"
    curves = _curves(gpu.generation) if compute != "constant" and (unfused or attention_efficiency(gpu) > 0) else None
    peak = gpu.bf16_tflops * 1e12
    if curves is None:
        total = model.flops_per_token * passes / 3.0 * tokens / (tp * pp) / (peak * efficiency(gpu))
        zero = np.zeros_like(total)
        return dict(
            gemm_fwd_s=zero,
            attention_fwd_s=zero,
            elementwise_fwd_s=zero,
            forward_s=total / passes,
            total_s=total,
            measured=False,
        )
    expert_active = model.active_params - model.shared_params if model.is_moe else 0.0
    dense_active = model.active_params - expert_active
    # an expert's GEMM sees the tokens routed to it (balanced routing): top_k copies of the tokens of the ep ranks of
    # its expert-parallel group, shared by the experts
    ep = np.asarray(ep, dtype=float)
    ep_tokens = tokens * model.active_experts * ep / model.experts if model.is_moe else tokens
    gemm = (
        2.0 * dense_active * tokens / curves.gemm_efficiency(tokens)
        + 2.0 * expert_active * tokens / curves.gemm_efficiency(ep_tokens)
    ) / (tp * pp * peak)
    if unfused:  # batched matmuls at the GEMM efficiency, plus the score-sized tensors through HBM
        attention = 4.0 * L * h * s * tokens / (tp * pp) / (peak * curves.gemm_efficiency(tokens))
        elements = L / pp * model.heads / tp * s * s * b
        fwd_bytes, bwd_bytes = UNFUSED_ATTENTION_BYTES
        scores_fwd = fwd_bytes * elements / gpu.hbm_bytes_per_s
        scores_total = (2.0 * fwd_bytes + bwd_bytes) * elements / gpu.hbm_bytes_per_s  # recomputed: once more
    else:
        attention = 4.0 * L * h * s * tokens / (tp * pp) / (peak * attention_efficiency(gpu))
        scores_fwd = scores_total = 0.0
    ffn_tokens = model.ffn * (model.active_experts if model.is_moe else 1)
    elementwise = L / pp * curves.elementwise_s(tokens, model.hidden, ffn_tokens, tp, gpu.hbm_bytes_per_s)
    forward = gemm + attention + elementwise + scores_fwd
    total = (gemm + attention) * passes + elementwise * (1.0 + ELEMENTWISE_BACKWARD + full) + scores_total
    return dict(
        gemm_fwd_s=gemm,
        attention_fwd_s=attention + scores_fwd,
        elementwise_fwd_s=elementwise,
        forward_s=forward,
        total_s=total,
        measured=True,
    )


def _curves(generation: str):
    from ..serving.opcurves import curves

    return curves(generation) if generation else None


def iteration_table(
    model: Model,
    plans: Plan | Sequence[Plan] | pd.DataFrame,
    gpu: GPU,
    topology=None,
    routing: str = "ecmp",
    collective: str = "ring",
    placement: str = "linear",
    seed: int = 0,
    latency_s: float = 5e-6,
    dp_overlap: float = 1.0,
    compute: str = "constant",
) -> pd.DataFrame:
    """Iteration time and its breakdown for every plan (one row per plan).

    Parameters
    ----------
    model, gpu : Model, GPU
    plans : Plan, sequence of Plan, or DataFrame with Plan's fields as columns
    topology : LeafSpine, FatTree or None
        The fabric of one NIC per GPU (hosts = GPUs); ``None`` is an ideal NIC-bound fabric.
    routing : str
        ``"ecmp"``, ``"mp-x"``, ``"spray"``, ``"minimal"`` or ``"planned"`` (see :mod:`workbench.fabric.routing`).
    collective : {"ring", "halving_doubling", "double_binary_tree"}
        Algorithm of the DP gradient collective.
    placement : {"linear", "strided", "random"}
        Rank -> host mapping on the fabric.
    seed : int
        Hashing and placement randomness (one hashing per job).
    latency_s : float
        Per-step latency of fabric collectives (seconds).
    dp_overlap : float
        Fraction of the last micro-batch's backward pass that DP communication can hide behind, in [0, 1].
    compute : {"constant", "measured", "unfused"}
        The compute term: the GPU generation's one efficiency constant, measured kernels, or measured GEMMs with
        2021's unfused attention (module docstring).

    Returns
    -------
    pandas.DataFrame
        Plan fields, ``gpus, micro_batches``, the :data:`COMPONENTS` (seconds, summing to ``iteration_s``),
        ``dp_comm_s`` (whole DP collective), ``tokens_per_s, model_tflops_per_gpu, hardware_tflops_per_gpu, mfu,
        bubble_fraction, comm_share, memory_gib, fits``.

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS, Plan
    >>> t = iteration_table(MODELS["gpt3-175b"], [Plan(8, 8, 16, 1536, recompute="full")], GPUS["A100"])
    >>> bool(np.isclose(t.iteration_s.iloc[0], t[list(COMPONENTS)].sum(axis=1).iloc[0], rtol=1e-12))
    True
    """
    if not isinstance(model, Model) or not isinstance(gpu, GPU):
        raise TypeError("model must be a Model and gpu a GPU")
    one_of("collective", collective, _DP_COLLECTIVES)
    if not isinstance(routing, str):
        raise TypeError(f"routing must be a str, got {type(routing).__name__}")
    latency_s = nonnegative("latency_s", latency_s)
    dp_overlap = in_range("dp_overlap", dp_overlap, 0.0, 1.0)
    one_of("compute", compute, COMPUTE_FORMS)
    df = _plans_frame(plans)
    cols = {c: df[c].to_numpy() for c in _PLAN_FIELDS}
    for row in np.flatnonzero(
        (cols["pp"] > model.layers) | (cols["tp"] > gpu.gpus_per_node) | ((cols["ep"] > 1) & (not model.is_moe))
    ):
        check_plan(model, Plan(**df.iloc[row].to_dict()), gpu)  # raises the named error
    out = iteration_arrays(
        model, cols, gpu, topology, routing, collective, placement, seed, latency_s, dp_overlap, compute
    )
    return pd.concat([df, pd.DataFrame(out, index=df.index)], axis=1)


def iteration_arrays(
    model: Model,
    cols: dict,
    gpu: GPU,
    topology=None,
    routing: str = "ecmp",
    collective: str = "ring",
    placement: str = "linear",
    seed: int = 0,
    latency_s: float = 5e-6,
    dp_overlap: float = 1.0,
    compute: str = "constant",
) -> dict[str, np.ndarray]:
    """The numbers of :func:`iteration_table` as arrays, from arrays of the plan fields (``cols`` keyed by
    :class:`Plan`'s field names, ``recompute`` as strings); no validation (callers validate), no DataFrame: the fast
    path for the execution graph and design-space sweeps.

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.training import MODELS, GPUS
    >>> cols = dict(tp=np.array([8]), pp=np.array([8]), dp=np.array([16]), global_batch=np.array([1536]),
    ...             micro_batch=np.array([1]), ep=np.array([1]), virtual_stages=np.array([1]),
    ...             recompute=np.array(["full"]), distributed_optimizer=np.array([True]))
    >>> out = iteration_arrays(MODELS["gpt3-175b"], cols, GPUS["A100"])
    >>> bool(np.isclose(out["iteration_s"], sum(out[c] for c in COMPONENTS)).all())
    True
    """
    tp, pp, dp, ep = (np.asarray(cols[c]).astype(np.int64) for c in ("tp", "pp", "dp", "ep"))
    v, b = np.asarray(cols["virtual_stages"]).astype(np.int64), np.asarray(cols["micro_batch"]).astype(float)
    full = np.asarray(cols["recompute"]) == "full"
    n = tp.size
    gpus = tp * pp * dp
    m = np.asarray(cols["global_batch"]).astype(np.int64) // (dp * np.asarray(cols["micro_batch"]).astype(np.int64))
    s, h, L = float(model.seq_len), float(model.hidden), model.layers
    if topology is not None and gpus.max() > topology.n_hosts:
        worst = int(np.argmax(gpus))
        raise PlanError(
            f"plan {worst} uses {gpus[worst]} GPUs but the fabric has {topology.n_hosts} hosts "
            f"(short by {gpus[worst] - topology.n_hosts})"
        )
    nic_bps = (topology.host_gbps if topology is not None else gpu.nic_gbps) * 1e9 / 8
    layers_stage = np.ceil(L / pp)
    hw = np.where(full, 4.0 / 3.0, 1.0)
    parts = compute_parts(model, gpu, tp, pp, b, full, compute, ep)
    t_c, t_fwd = parts["total_s"], parts["forward_s"]
    n_ar = np.where(full, 6.0, 4.0)
    t_tp = np.where(tp > 1, layers_stage * n_ar * 2 * (tp - 1) / tp * 2 * b * s * h / gpu.scaleup_bytes_per_s, 0.0)
    t_pp = np.where(pp > 1, v * 2 * (2 * b * s * h / tp) / nic_bps, 0.0)
    opt = {k: np.broadcast_to(np.asarray(cols.get(k, d)), (n,)).astype(bool) for k, d in _OPTIONAL.items()}
    t_tp = np.where(opt["overlap_tp"], 0.0, t_tp)  # hidden behind the GEMMs they are fused with
    t_pp = np.where(opt["overlap_p2p"], 0.0, t_pp)  # asynchronous, off the critical path
    slow_load, rest_load = _load_factors(model, pp, opt["balanced_ends"])
    t_a2a = np.zeros(n)
    if model.is_moe:
        a2a_bytes = 2 * b * s * model.active_experts * h / tp
        spb = np.zeros(n)
        nvl = ep * tp <= gpu.gpus_per_node
        spb[nvl] = (ep[nvl] - 1) / ep[nvl] / gpu.scaleup_bytes_per_s
        for i in np.flatnonzero(~nvl & (ep > 1)):
            spb[i] = _a2a_spb(
                topology, routing, tp[i], pp[i], dp[i], ep[i], placement, seed, nic_bps, latency_s, a2a_bytes[i]
            )
        t_a2a = layers_stage * n_ar * a2a_bytes * spb
    # 1F1B with one rank slower than the others: the slowest rank runs all m micro-batches back to back, the others'
    # work fills and drains the pipeline ((p - 1) (F + B) for the last rank the slowest, exactly)
    t_mb = slow_load * t_c + t_tp + t_pp + t_a2a
    bubble = (pp - 1) / v * (rest_load * t_c + t_tp + t_pp + t_a2a)
    dense = model.params - model.routed_params
    per_gpu = dense / (tp * pp) + model.routed_params / (tp * pp * ep)
    t_dp = np.zeros(n)
    keys = np.stack([tp, pp, dp], axis=1)
    for key in np.unique(keys[dp > 1], axis=0):
        key_tp, key_pp, key_dp = (int(k) for k in key)
        dp_spb, hops = _dp_spb(topology, routing, collective, key_tp, key_pp, key_dp, placement, seed, nic_bps)
        sel = np.all(keys == key, axis=1)
        t_dp[sel] = 2.0 * per_gpu[sel] * dp_spb + hops * latency_s
    window = dp_overlap * (t_c - t_fwd)  # the last micro-batch's backward (and its recompute forward)
    # overlapped per model chunk, all but the last chunk's reduce-scatter: 1 / (2 v) of it exposed (MegaScale Sec. 3.2)
    exposed = np.where(opt["overlap_dp"], t_dp / (2.0 * v), np.maximum(0.0, t_dp - window))
    dopt = np.asarray(cols["distributed_optimizer"]).astype(bool)
    shards = np.where(dopt, dp, 1)
    t_opt = 28.0 * per_gpu / shards / gpu.hbm_bytes_per_s
    out: dict[str, np.ndarray] = {}
    out["gpus"], out["micro_batches"] = gpus, m
    out["compute_fwd_s"] = t_fwd  # one micro-batch's forward pass on a mean stage (the execution graph splits by it)
    out["stage_max_load"] = slow_load  # the slowest rank's compute over the mean rank's (:func:`stage_loads`)
    out["compute_s"] = m * slow_load * t_c  # the slowest rank's
    out["tp_comm_s"], out["pp_p2p_s"], out["moe_a2a_s"] = m * t_tp, m * t_pp, m * t_a2a
    out["bubble_s"], out["dp_comm_s"], out["dp_exposed_s"], out["optimizer_s"] = bubble, t_dp, exposed, t_opt
    it = m * t_mb + bubble + exposed + t_opt
    out["iteration_s"] = it
    tokens = np.asarray(cols["global_batch"]).astype(float) * s
    out["tokens_per_s"] = tokens / it
    out["model_tflops_per_gpu"] = model.flops_per_token * tokens / it / gpus / 1e12
    out["hardware_tflops_per_gpu"] = out["model_tflops_per_gpu"] * hw
    out["mfu"] = out["model_tflops_per_gpu"] / gpu.bf16_tflops
    out["bubble_fraction"] = bubble / (m * t_mb + bubble)
    out["comm_share"] = (m * (t_tp + t_pp + t_a2a) + exposed) / it
    mem = memory_arrays(model, tp, pp, dp, ep, b, m, v, full, dopt)["total"]
    out["memory_gib"] = mem / 2**30
    out["fits"] = mem <= gpu.hbm_bytes
    return out


def _dp_spb(topology, routing, collective, tp, pp, dp, placement, seed, nic_bps) -> tuple[float, int]:
    """Seconds per gradient byte and steps of the DP collective of all ``tp * pp`` groups."""
    if topology is None:  # NIC-bound: each rank sends and receives 2 (n-1)/n of its buffer
        hops = {"ring": 2 * (dp - 1), "halving_doubling": 2 * int(np.log2(dp)), "double_binary_tree": 2}[collective]
        share = 2 * (dp - 1) / dp if collective != "double_binary_tree" else 2.0
        return share / nic_bps, hops
    offsets = (np.arange(tp)[:, None] + tp * dp * np.arange(pp)[None, :]).ravel()
    return group_seconds_per_byte(topology, routing, collective, dp, tp, offsets, placement, seed)


def _a2a_spb(topology, routing, tp, pp, dp, ep, placement, seed, nic_bps, latency_s, nbytes) -> float:
    """Seconds per byte (latency folded in) of the expert-parallel all-to-all of every EP group at once."""
    if topology is None:
        return (ep - 1) / ep / nic_bps
    g = np.arange(dp // ep)
    offsets = np.arange(tp)[:, None, None] + tp * (g[None, :, None] * ep + dp * np.arange(pp)[None, None, :])
    spb, hops = group_seconds_per_byte(topology, routing, "all_to_all", ep, tp, offsets.ravel(), placement, seed)
    return spb + hops * latency_s / nbytes


def iteration_time(model: Model, plan: Plan, gpu: GPU, topology=None, routing: str = "ecmp", **kwargs) -> Breakdown:
    """The iteration breakdown of one plan, after checking it fits (raises :class:`PlanError` otherwise).

    Keyword arguments are those of :func:`iteration_table`.

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS, Plan
    >>> from workbench.fabric import leaf_spine
    >>> topo = leaf_spine(8, 16, 16, host_gbps=200)
    >>> plan = Plan(tp=8, pp=8, dp=2, global_batch=256, recompute="full")
    >>> bd = iteration_time(MODELS["gpt3-175b"], plan, GPUS["A100"], topo, "ecmp")
    >>> 0.3 < bd.mfu < 0.6
    True
    """
    check_plan(model, plan, gpu)
    row = iteration_table(model, [plan], gpu, topology, routing, **kwargs).iloc[0]
    return Breakdown(**{f: float(row[f]) for f in Breakdown.__dataclass_fields__})
