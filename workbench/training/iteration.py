"""Time per training iteration, broken down, with the data-parallel collectives routed on the fabric: one model of
the kernels, the collectives and the pipeline schedule, validated on every fully stated public run
(:mod:`workbench.training.validation`, ``docs/training_validation.md``).

Per micro-batch and pipeline stage (``tp * pp`` GPUs share a micro-batch's work):

- *compute*: the measured kernels of :func:`workbench.training.kernels.compute_parts`: each GEMM at the measured
  fraction of peak of its size, attention by the software ``era`` (``"2021"``: unfused products and score traffic
  through HBM; ``"2024"``: FlashAttention-2), the measured element-wise kernels, the backward and the recomputation;
  then divided by the fraction of that throughput a training step sustains (:class:`Calibration`, estimated on the
  corpus with leave-one-source-out cross-validation). ``compute="constant"`` instead takes one efficiency per GPU
  generation (:data:`workbench.training.specs.EFFICIENCY`): the back-of-the-envelope estimate (``6 P`` FLOPs per token
  at a fixed fraction of peak) that papers and capacity planners quote, for comparing with one.
- *TP* collectives on the node: 4 per layer (6 with full recomputation) of ``2 b s h`` bytes, at NCCL's measured
  all-reduce time on an NVSwitch node (:func:`workbench.serving.opcurves.curves`; with sequence parallelism the
  all-gather and reduce-scatter move the same bytes), not overlapped unless the plan says so;
- *PP* exchanges: Megatron-LM's 1F1B sends an activation forward and a gradient backward of ``2 b s h / tp`` bytes
  per stage boundary and micro-batch (``virtual_stages`` boundaries per micro-batch), each a *blocking* exchange
  with both neighbours (``req.wait()`` then ``torch.cuda.synchronize()``: ``_communicate`` in
  ``megatron/core/pipeline_parallel/p2p_communication.py``, whenever the transfers are not overlapped): the
  measured NCCL send/recv time across nodes (:func:`workbench.training.kernels.send_recv_s`, ~62% of an A100's
  200 Gb/s NIC, with a ~20 us floor), on the critical path; DeepSpeed's engine makes four separate blocking calls
  per micro-batch (:class:`~workbench.training.specs.Plan`'s ``pipeline``);
- *MoE* all-to-all: dispatch and combine, forward and backward (4 per MoE layer, 6 with full recomputation), each
  rank sending ``2 b s k h / tp`` bytes across its expert-parallel group: on NVLink when ``ep * tp`` GPUs fit in a
  node, otherwise on the fabric like the DP collective.

The pipeline (1F1B, interleaved over ``v`` virtual stages) runs at its slowest rank: the last holds the output layer
and loss on top of its layers (:func:`stage_loads`; with the plan's ``balanced_ends`` the end ranks hold a layer fewer
instead, Llama 3's layout), so it takes ``m * t_mb + (pp-1)/v * t_rest`` for ``m`` micro-batches, ``t_mb`` the
slowest rank's micro-batch and ``t_rest`` the mean of the others'; the *bubble* is ``(pp-1)/v * t_rest``. The plan's
``overlap_tp`` and ``overlap_p2p`` take the TP collectives and the PP exchanges off the critical path.

The *DP* collective: gradients reduced in FP32 (``grad_bytes=4``: Megatron-LM forces FP32 gradient reduction with
BF16, ``megatron/training/arguments.py``), parameters gathered in BF16 with the distributed optimizer (a
reduce-scatter and an all-gather; an all-reduce without it), on the fabric: the collective's steps from
:func:`workbench.fabric.collective_steps`, one per DP group, all ``tp * pp`` groups at once (Megatron's rank order,
``rank = t + tp * (d + dp * p)``, ranks placed on hosts by :func:`workbench.fabric.place_ranks`, one NIC per GPU),
routed with the chosen routing, each step ``bytes x worst link load / link bandwidth`` (:func:`workbench.fabric.
max_congestion`) at the measured NCCL rate of the NIC, plus ``latency_s``; without a topology the ideal NIC-bound
fabric at the measured send/recv rate of the ring's chunk. Exposed: with ``overlap_dp`` the last model chunk's
reduce-scatter (``1 / (2 v)``, MegaScale Sec. 3.2) or, without interleaving, the last gradient bucket's
(Megatron-Core's ``max(40M, 1M x dp)`` parameters, ``megatron/core/distributed/distributed_data_parallel.py``);
otherwise what does not fit behind the last micro-batch's backward (``dp_overlap`` of it). Tied input and output
embeddings add the all-reduce of their gradients between the first and the last stage (Megatron-LM's
``_allreduce_embedding_grads``, DeepSpeed's ``ReduceTiedGrads``), exposed. The optimizer step is HBM-bound (28 bytes
moved per local parameter, sharded by DP with the distributed optimizer).

Everything is vectorized over plans; the fabric's time per byte is computed once per distinct (group layout,
routing, collective) and cached, so a sweep of 10^3 plans costs a handful of fabric evaluations. The module is
longer than ~500 lines because the fabric's collective helpers live beside the formula that uses them.
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
from . import kernels
from .kernels import ERAS, compute_parts, constant_parts, send_recv_s
from .specs import GPU, Model, Plan, PlanError, _load_factors, check_plan, memory_arrays, stage_loads

__all__ = [
    "Breakdown",
    "CALIBRATION",
    "Calibration",
    "COMPONENTS",
    "COMPUTE_FORMS",
    "ERAS",
    "group_seconds_per_byte",
    "iteration_arrays",
    "iteration_parts",
    "assemble",
    "iteration_table",
    "iteration_time",
    "stage_loads",
]

#: Critical-path components of an iteration, in the order they are stacked in figures; they sum to ``iteration_s``.
COMPONENTS = ("compute_s", "tp_comm_s", "pp_p2p_s", "moe_a2a_s", "bubble_s", "dp_exposed_s", "optimizer_s")
_BASE = 2**20  # bytes of the probe message; fabric times are linear in the size
_DP_COLLECTIVES = ("ring", "halving_doubling", "double_binary_tree")
#: The compute term's forms: ``"measured"`` (the model: measured kernels by era and GPU, the default) and
#: ``"constant"`` (one efficiency per GPU generation: the back-of-the-envelope estimate, for comparing with one).
COMPUTE_FORMS = ("measured", "constant")
#: Megatron-Core's gradient bucket when DP communication overlaps the backward: ``max(40M, 1M x dp)`` parameters
#: (``megatron/core/distributed/distributed_data_parallel.py``, r0.8.0).
BUCKET_PARAMS = 40e6


@dataclass(frozen=True)
class Calibration:
    """The iteration model's parameters that no source states, estimated on the validation corpus
    (:func:`workbench.training.validation.estimate`; every error reported is leave-one-source-out).

    ``sustained_ampere`` / ``sustained_hopper``: the fraction of the measured kernels' throughput (kernels timed
    alone, :mod:`workbench.training.kernels`) that a training step sustains, per GPU generation: a whole node
    drawing power for hours runs at lower clocks than one kernel timed alone, and kernels share the GPU with the
    communication they overlap. No public source states it; the corpus's A100 runs sustain nearly all of it, its
    H100 runs about three quarters.

    Examples
    --------
    >>> Calibration(sustained_hopper=0.75).sustained("hopper"), Calibration().sustained("blackwell")
    (0.75, 1.0)
    """

    sustained_ampere: float = 1.0
    sustained_hopper: float = 1.0

    def __post_init__(self) -> None:
        for f in ("sustained_ampere", "sustained_hopper"):
            in_range(f, getattr(self, f), 0.05, 1.5)

    def sustained(self, generation: str) -> float:
        """The sustained fraction for a GPU generation with measured kernels (1 for others: they run the constant)."""
        return {"ampere": self.sustained_ampere, "hopper": self.sustained_hopper}.get(generation, 1.0)


#: The estimates on the whole corpus (``tests/training/test_validation.py`` checks they are what
#: :func:`workbench.training.validation.estimate` gives on it today).
CALIBRATION = Calibration(sustained_ampere=0.955, sustained_hopper=0.72)


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
    "pipeline",
    "sequence_parallel",
)
#: Plan fields a caller of :func:`iteration_arrays` may leave out, with their defaults.
_OPTIONAL = {"balanced_ends": False, "overlap_p2p": False, "overlap_tp": False, "overlap_dp": False,
             "sequence_parallel": True}  # fmt: skip


def _tp_seconds(gpu: GPU, nbytes: np.ndarray, tp: np.ndarray) -> np.ndarray:
    """One TP collective of ``nbytes`` per GPU over ``tp`` GPUs of a node: NCCL's measured all-reduce time where
    the GPU's generation was profiled, the ring ``2 (tp-1)/tp * bytes / NVLink`` otherwise."""
    from ..serving.opcurves import curves

    c = curves(gpu.generation) if kernels.has_curves(gpu.generation) else None
    out = np.where(tp > 1, 2.0 * (tp - 1) / tp * nbytes / gpu.scaleup_bytes_per_s, 0.0)
    if c is not None:
        for t in np.unique(tp[tp > 1]):
            sel = tp == t
            out[sel] = c.allreduce_s(nbytes[sel], tp=int(t), topology="nvswitch")
    return out


def iteration_parts(
    model: Model,
    cols: dict,
    gpu: GPU,
    topology=None,
    routing: str = "ecmp",
    collective: str = "ring",
    placement: str = "linear",
    seed: int = 0,
    latency_s: float = 5e-6,
    compute: str = "measured",
    era: str = "2024",
    nic_gbps: float | None = None,
    grad_bytes: float = 4.0,
) -> dict[str, np.ndarray]:
    """Everything of :func:`iteration_arrays` that does not depend on the :class:`Calibration`, as arrays over the
    plans in ``cols`` (see :func:`iteration_arrays`): kernel seconds per micro-batch, collective and exchange times,
    the DP collective and its exposure rule. :func:`assemble` turns them into the iteration; the validation estimates
    the calibration by assembling the same parts under many candidate values."""
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
    line_gbps = nic_gbps if nic_gbps is not None else (topology.host_gbps if topology is not None else gpu.nic_gbps)
    nic_bps = line_gbps * 1e9 / 8
    layers_stage = np.ceil(L / pp)
    opt = {k: np.broadcast_to(np.asarray(cols.get(k, d)), (n,)).astype(bool) for k, d in _OPTIONAL.items()}
    if compute == "constant":
        parts = constant_parts(model, gpu, tp, pp, b, full)
    else:
        parts = compute_parts(model, gpu, tp, pp, b, full, era, ep, sequence_parallel=opt["sequence_parallel"])
    n_ar = np.where(full, 6.0, 4.0)
    t_tp = layers_stage * n_ar * _tp_seconds(gpu, 2.0 * b * s * h * np.ones(n), tp.astype(float))
    t_tp = np.where(opt["overlap_tp"], 0.0, t_tp)  # hidden behind the GEMMs they are fused with
    # blocking exchanges: forward activation and backward gradient per stage boundary and micro-batch, each a
    # rendezvous with the neighbour followed by a device synchronisation
    inter = tp * dp * pp > gpu.gpus_per_node
    x = np.where(pp > 1, send_recv_s(gpu.generation, 2.0 * b * s * h / tp, nic_bps, inter), 0.0)
    deepspeed = np.broadcast_to(np.asarray(cols.get("pipeline", "megatron")), (n,)) == "deepspeed"
    blocking = (pp > 1) & ~opt["overlap_p2p"]
    t_x = np.where(blocking, np.where(deepspeed, 4.0, 2.0) * v, 0.0) * x  # blocking operations per micro-batch
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
    dense = model.params - model.routed_params
    per_gpu = dense / (tp * pp) + model.routed_params / (tp * pp * ep)
    dopt = np.asarray(cols["distributed_optimizer"]).astype(bool)
    # reduce-scatter of the gradients and all-gather of the BF16 parameters, or an all-reduce of the gradients: as
    # the bytes of an all-reduce of the same cost
    dp_bytes = np.where(dopt, (grad_bytes + 2.0) / 2.0, grad_bytes) * per_gpu
    t_dp = np.zeros(n)
    keys = np.stack([tp, pp, dp], axis=1)
    for key in np.unique(keys[dp > 1], axis=0):
        key_tp, key_pp, key_dp = (int(k) for k in key)
        sel = np.all(keys == key, axis=1)
        across = key_tp * key_dp > gpu.gpus_per_node
        chunk = dp_bytes[sel] / key_dp
        rate = chunk / send_recv_s(gpu.generation, chunk, nic_bps, across)  # measured NCCL rate of the ring's chunk
        if across and topology is None:  # NCCL's rings use every NIC of the node: a group's share of the node's
            rate = rate * min(key_dp, max(1, gpu.gpus_per_node // key_tp))  # NICs is its ranks on the node
        dp_spb, hops = _dp_spb(topology, routing, collective, key_tp, key_pp, key_dp, placement, seed, nic_bps)
        t_dp[sel] = dp_bytes[sel] * dp_spb * nic_bps / rate + (hops * latency_s if topology is not None else 0.0)
    chunks = np.where(v > 1, v, np.maximum(1.0, per_gpu / np.maximum(BUCKET_PARAMS, 1e6 * dp)))
    # tied input and output embeddings: their gradients all-reduced between the first and the last stage
    _, tied = kernels.layout(model)
    emb = np.where((pp > 1) & tied, grad_bytes * model.vocab * h / tp / 2.0, 0.0)
    t_emb = np.where(emb > 0, 2.0 * send_recv_s(gpu.generation, np.maximum(emb, 1.0), nic_bps, inter), 0.0)
    shards = np.where(dopt, dp, 1)
    return {
        "gpus": gpus,
        "micro_batches": m,
        "pp": pp.astype(float),
        "virtual_stages": v.astype(float),
        "kernel_s": parts["total_s"] * np.ones(n),
        "kernel_fwd_s": parts["forward_s"] * np.ones(n),
        "stage_max_load": slow_load,
        "stage_rest_load": rest_load,
        "tp_s": t_tp,
        "a2a_s": t_a2a,
        "exchange_s": t_x,
        "dp_comm_s": t_dp,
        "overlap_dp": opt["overlap_dp"],
        "dp_exposed_share": 1.0 / (2.0 * chunks),
        "optimizer_s": 28.0 * per_gpu / shards / gpu.hbm_bytes_per_s,
        "embedding_sync_s": t_emb,
        "dp_window_share": np.where(deepspeed, 0.0, 1.0),
        "tokens": np.asarray(cols["global_batch"]).astype(float) * s,
        "hardware_factor": np.where(full, 4.0 / 3.0, 1.0),
        "memory_bytes": memory_arrays(model, tp, pp, dp, ep, b, m, v, full, dopt, opt["sequence_parallel"])["total"],
        "flops_per_token": np.full(n, model.flops_per_token),
        "peak_flops": np.full(n, gpu.bf16_tflops * 1e12),
        "hbm_bytes": np.full(n, gpu.hbm_bytes),
        "generation": np.full(n, gpu.generation if parts["measured"] else "constant"),
    }


def assemble(parts: dict, calibration: Calibration = CALIBRATION, dp_overlap: float = 1.0, sustained=None) -> dict:
    """The iteration from :func:`iteration_parts` under ``calibration`` (``sustained`` overrides the per-generation
    fraction with an array over the plans): the pipeline at its slowest rank, the bubble, the exposed DP collective
    and the optimizer, each component as :data:`COMPONENTS` names it.

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.training import MODELS, GPUS, Plan
    >>> cols = {k: np.array([v]) for k, v in Plan(8, 8, 16, 512).as_dict().items()}
    >>> parts = iteration_parts(MODELS["gpt3-175b"], cols, GPUS["H100"])
    >>> slow, fast = (assemble(parts, Calibration(sustained_hopper=f))["iteration_s"][0] for f in (0.5, 1.0))
    >>> bool(slow > 1.5 * fast)
    True
    """
    if sustained is None:
        gen = parts["generation"]
        sustained = np.ones(gen.size)
        for g in np.unique(gen):
            sustained = np.where(gen == g, calibration.sustained(str(g)), sustained)
    t_c = parts["kernel_s"] / sustained
    t_fwd = parts["kernel_fwd_s"] / sustained
    t_x = parts["exchange_s"]
    shared = parts["tp_s"] + t_x + parts["a2a_s"]
    m = parts["micro_batches"]
    t_mb = parts["stage_max_load"] * t_c + shared
    bubble = (parts["pp"] - 1) / parts["virtual_stages"] * (parts["stage_rest_load"] * t_c + shared)
    t_dp = parts["dp_comm_s"]
    window = dp_overlap * parts["dp_window_share"] * (t_c - t_fwd)  # the last micro-batch's backward
    exposed = np.where(parts["overlap_dp"], t_dp * parts["dp_exposed_share"], np.maximum(0.0, t_dp - window))
    exposed = exposed + parts["embedding_sync_s"]  # after the last backward, never hidden
    it = m * t_mb + bubble + exposed + parts["optimizer_s"]
    out: dict[str, np.ndarray] = {"gpus": parts["gpus"], "micro_batches": m}
    out["compute_fwd_s"] = t_fwd  # one micro-batch's forward pass on a mean stage (the execution graph splits by it)
    out["stage_max_load"] = parts["stage_max_load"]
    out["compute_s"] = m * parts["stage_max_load"] * t_c  # the slowest rank's
    out["tp_comm_s"], out["pp_p2p_s"], out["moe_a2a_s"] = m * parts["tp_s"], m * t_x, m * parts["a2a_s"]
    out["bubble_s"], out["dp_comm_s"], out["dp_exposed_s"] = bubble, t_dp, exposed
    out["optimizer_s"] = parts["optimizer_s"]
    out["embedding_sync_s"] = parts["embedding_sync_s"]  # in dp_exposed_s (the execution graph runs it serially)
    out["iteration_s"] = it
    gpus = parts["gpus"]
    out["tokens_per_s"] = parts["tokens"] / it
    out["model_tflops_per_gpu"] = parts["flops_per_token"] * parts["tokens"] / it / gpus / 1e12
    out["hardware_tflops_per_gpu"] = out["model_tflops_per_gpu"] * parts["hardware_factor"]
    out["mfu"] = out["model_tflops_per_gpu"] * 1e12 / parts["peak_flops"]
    out["bubble_fraction"] = bubble / (m * t_mb + bubble)
    out["comm_share"] = (m * shared + exposed) / it
    out["memory_gib"] = parts["memory_bytes"] / 2**30
    out["fits"] = parts["memory_bytes"] <= parts["hbm_bytes"]
    return out


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
    compute: str = "measured",
    era: str = "2024",
    nic_gbps: float | None = None,
    grad_bytes: float = 4.0,
    calibration: Calibration | None = None,
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
        Per-step latency of fabric collectives (seconds; the ideal fabric's measured curve carries NCCL's own).
    dp_overlap : float
        Fraction of the last micro-batch's backward pass that DP communication can hide behind, in [0, 1].
    compute : {"measured", "constant"}
        The compute term: the measured kernels of the software era (the model), or one efficiency per GPU
        generation (the back-of-the-envelope estimate, for comparing with one; uncalibrated).
    era : {"2021", "2024"}
        Software era of the kernels (:data:`workbench.training.kernels.ERAS`): ``"2024"`` (FlashAttention-2,
        today's stacks) unless reproducing a 2021-2022 Megatron-LM run.
    nic_gbps : float, optional
        Per-GPU NIC line rate of the cluster (default: the topology's host links, else the GPU record's NIC).
    grad_bytes : float
        Bytes per gradient element of the DP reduction (4: FP32, Megatron-LM's rule with BF16).
    calibration : Calibration, optional
        The estimated parameters (default :data:`CALIBRATION`, the whole corpus's estimate).

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
    one_of("era", era, ERAS)
    if nic_gbps is not None:
        in_range("nic_gbps", nic_gbps, 1.0, 1e5)
    in_range("grad_bytes", grad_bytes, 1.0, 8.0)
    df = _plans_frame(plans)
    cols = {c: df[c].to_numpy() for c in _PLAN_FIELDS}
    for row in np.flatnonzero(
        (cols["pp"] > model.layers) | (cols["tp"] > gpu.gpus_per_node) | ((cols["ep"] > 1) & (not model.is_moe))
    ):
        check_plan(model, Plan(**df.iloc[row].to_dict()), gpu)  # raises the named error
    out = iteration_arrays(
        model, cols, gpu, topology, routing, collective, placement, seed, latency_s, dp_overlap, compute, era,
        nic_gbps, grad_bytes, calibration,
    )  # fmt: skip
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
    compute: str = "measured",
    era: str = "2024",
    nic_gbps: float | None = None,
    grad_bytes: float = 4.0,
    calibration: Calibration | None = None,
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
    parts = iteration_parts(
        model, cols, gpu, topology, routing, collective, placement, seed, latency_s, compute, era, nic_gbps,
        grad_bytes,
    )  # fmt: skip
    return assemble(parts, CALIBRATION if calibration is None else calibration, dp_overlap)


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
