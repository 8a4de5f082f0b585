"""Inputs of the iteration-time model: a GPU, a model and a parallelism plan, as validated frozen dataclasses.

GPUs are the records of the workbench's one hardware table (:class:`workbench.serving.specs.GPU`, read from
``datasets/serving_specs/gpus.csv``, vendor datasheets named per row; dense BF16 tensor FLOP/s without sparsity, HBM,
NVLink, one NIC per GPU), which the serving models read too. The iteration model's compute term comes from measured
kernels (:mod:`.kernels`) for the generations Vidur profiled (ampere, hopper); :data:`EFFICIENCY` is the fraction of
dense BF16 peak a layer's kernels sustain end to end for the others (blackwell), and the whole of
``compute="constant"``, the back-of-the-envelope form: 0.55 for A100 and 0.45 for Hopper and Blackwell, an assumption
stated once here, never fitted to a validation point.

Memory per GPU (:func:`memory_bytes`) counts BF16 weights and gradients (2 + 2 bytes per parameter), FP32 master
weights and Adam moments (12 bytes per parameter, divided by the data-parallel degree with a distributed optimizer)
and activations of the micro-batches in flight on the first pipeline stage (``min(pp, m)`` of them, 1F1B, times
``1 + (pp-1)/(pp v)`` when interleaved over ``v`` virtual stages):
``34 s b h / tp`` bytes per layer with sequence parallelism and flash attention (Korthikanti et al., MLSys 2023,
without the attention-score term) or ``2 s b h / tp`` per layer with full recomputation (only each layer's input
kept) plus one layer's full activations.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from .._validate import integer, one_of
from ..serving.specs import GPU, Model, gpu, model

__all__ = [
    "EFFICIENCY",
    "efficiency",
    "GPU",
    "GPUS",
    "Model",
    "MODELS",
    "Plan",
    "memory_bytes",
    "memory_arrays",
    "check_plan",
    "stage_loads",
    "PlanError",
    "PIPELINES",
]

GIB = 2.0**30


#: Pipeline engines a plan can name (:class:`Plan`'s ``pipeline``).
PIPELINES = ("megatron", "deepspeed")


class PlanError(ValueError):
    """A parallelism plan that does not fit the model, the GPUs or the fabric (says what and by how much)."""


#: The constant compute form's fraction of dense BF16 peak per GPU generation (the hardware table's ``generation``),
#: also the compute of generations without measured kernels:
#: an assumption stated once, never fitted to a validation point (see the module docstring).
EFFICIENCY: dict[str, float] = {"ampere": 0.55, "hopper": 0.45, "blackwell": 0.45}


def efficiency(gpu: GPU) -> float:
    """The constant compute form's fraction of peak for ``gpu`` (:data:`EFFICIENCY` of its generation).

    Examples
    --------
    >>> efficiency(GPUS["A100"]), efficiency(GPUS["H100"])
    (0.55, 0.45)
    """
    if gpu.generation not in EFFICIENCY:
        raise ValueError(
            f"gpu {gpu.gpu!r} is of generation {gpu.generation!r}, which has no stated training efficiency; "
            f"generations with one: {sorted(EFFICIENCY)}"
        )
    return EFFICIENCY[gpu.generation]


class SpecMap(Mapping[str, Any]):
    """A read-only mapping whose entries are records or functions that make one from the spec tables when read
    (not at import): a read goes through the tables' lookup (:func:`workbench.serving.specs.gpu`, ``model``), so a
    table shadowed on the data search path is seen, and recorded by a sweep or a paper run that reads it
    (:mod:`workbench._deps`)."""

    def __init__(self, entries: Mapping[str, Any]) -> None:
        self._entries = dict(entries)

    def __getitem__(self, name: str) -> Any:
        value = self._entries[name]
        return value() if callable(value) else value

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> dict[str, Any]:
        """The entries as given (records, or the functions that look them up), to build another map from."""
        return dict(self._entries)

    def __repr__(self) -> str:
        return f"SpecMap({list(self._entries)})"


#: The GPUs the training papers name, by their short names: records of the one hardware table
#: (:func:`workbench.serving.specs.gpu`; ``"A100"`` and ``"H100"`` are aliases of ``"A100-80GB"`` and ``"H100-SXM"``).
GPUS: Mapping[str, GPU] = SpecMap({name: functools.partial(gpu, name) for name in ("A100", "H100", "H200", "B200")})


def _gpt(
    name: str, layers: int, hidden: int, heads: int, ffn: int = 0, seq_len: int = 2048, vocab: int = 51200
) -> Model:
    """GPT-style dense model (:class:`workbench.serving.specs.Model`; multi-head attention, head dimension
    ``hidden / heads``, FFN ``4 * hidden`` unless given) with ``12 l h^2 + 13 l h + (V + s) h`` parameters (Narayanan
    et al., SC'21, eq. 2), or per layer ``4 h^2 + 2 h f + 9 h + f`` with an FFN of inner size ``f`` (the same count:
    weights and biases of the QKV, projection and two FFN matrices, two layer norms; ``f = 4 h`` gives eq. 2)."""
    f = ffn or 4 * hidden
    p = float(layers * (4 * hidden**2 + 2 * hidden * f + 9 * hidden + f) + (vocab + seq_len) * hidden)
    d = hidden // heads
    return Model(name, layers, hidden, heads, heads, d, d, 2 * hidden, f, vocab, p, p, seq_len=seq_len)


#: Reference models (records of the one :class:`Model` type, ``seq_len`` the training sequence length): the GPT
#: family of Megatron-LM SC'21 Table 1 (layers, hidden size and attention heads as there), GPT-3 175B, Lumos's
#: GPT-3 15B, Llama 3 405B and a Mixtral-like MoE.
MODELS: SpecMap = SpecMap(
    {
        "gpt-1.7b": _gpt("gpt-1.7b", 24, 2304, 24),
        "gpt-18b": _gpt("gpt-18b", 40, 6144, 48),
        "gpt-39b": _gpt("gpt-39b", 48, 8192, 64),
        "gpt-76b": _gpt("gpt-76b", 60, 10240, 80),
        "gpt-146b": _gpt("gpt-146b", 80, 12288, 96),
        "gpt-310b": _gpt("gpt-310b", 96, 16384, 128),
        "gpt-530b": _gpt("gpt-530b", 105, 20480, 128),
        "gpt-1t": _gpt("gpt-1t", 128, 25600, 160),
        "gpt3-175b": _gpt("gpt3-175b", 96, 12288, 96),
        # Lumos (Liang et al., MLSys'25, arXiv 2504.09307v1) Table 1: 48 layers, d_model 6,144, d_ffn 12,288, 48 heads
        "gpt3-15b": _gpt("gpt3-15b", 48, 6144, 48, ffn=12_288),
        # the serving table's Llama-3.1-405B (its config.json: 126 layers, model dimension 16,384, FFN 53,248, 128
        # attention heads, 8 key/value heads, vocabulary 128,256; 405.9B parameters), one record for both uses, trained at
        # sequence length 8,192: Llama 3 paper (arXiv 2407.21783), Table 3 and Section 3.4.1
        "llama3-405b": lambda: replace(model("Llama-3.1-405B"), model="llama3-405b", seq_len=8192),
        # Mixtral-8x22B's config.json (56 layers, hidden 6,144, intermediate_size 16,384, 48 heads, 8 KV heads, 8
        # experts, 2 per token, vocab 32,000; https://huggingface.co/mistralai/Mixtral-8x22B-v0.1) and its model card's
        # 141B total / 39B active parameters; trained here at sequence length 4,096
        "moe-8x22b": Model(
            "moe-8x22b",
            56,
            6144,
            48,
            8,
            128,
            128,
            2 * 8 * 128,
            16_384,
            32_000,
            141e9,
            39e9,
            experts=8,
            active_experts=2,
            seq_len=4096,
        ),
    }
)


@dataclass(frozen=True)
class Plan:
    """A parallelism plan: tensor (``tp``), pipeline (``pp``), data (``dp``) and expert (``ep``) parallel degrees.

    ``global_batch`` and ``micro_batch`` are in sequences; ``virtual_stages`` > 1 is the interleaved 1F1B schedule;
    ``recompute`` is ``"selective"`` or ``"full"`` activation recomputation; ``distributed_optimizer`` shards the
    optimizer state over DP (ZeRO-1).

    Schedule options a training system may state (all off: Megatron-LM's defaults, every kernel and transfer on the
    critical path as :mod:`.iteration` describes):

    - ``balanced_ends``: the first and the last pipeline stage each hold one transformer layer fewer, so the
      embedding and the output layer with the loss take a layer's place (Llama 3, arXiv 2407.21783, Sec. 3.3.2);
      off, Megatron-LM's placement: the layers split evenly and the output layer and loss are extra work on the
      last stage.
    - ``overlap_p2p``: pipeline point-to-point transfers run asynchronously, off the critical path (Llama 3 Sec.
      3.3.2; MegaScale, arXiv 2402.15627, Sec. 3.2).
    - ``overlap_tp``: the TP/sequence-parallel all-gather and reduce-scatter are fused with the adjacent GEMMs and
      hidden behind them (MegaScale Sec. 3.2).
    - ``overlap_dp``: the DP all-gather and reduce-scatter run per model chunk behind the other chunks' compute, the
      first all-gather prefetched at the start of the iteration; only the last chunk's reduce-scatter, ``1 / (2 v)``
      of the collective, stays exposed (MegaScale Sec. 3.2: "reducing the communication time by a factor of
      1/(2*vpp_size)"; Llama 3 Sec. 3.3.2: FSDP "asynchronously prefetching sharded model weights and reducing
      gradients").
    - ``sequence_parallel``: the norms, dropouts and residual adds run on ``s / tp`` of the tokens on each TP rank
      (Korthikanti et al., MLSys 2023, Sec. 4.2.2; Megatron-LM's ``--sequence-parallel``, on in today's stacks); off
      (Megatron-LM 2021, DeepSpeed), every TP rank runs them on the whole sequence and keeps their activations.
    - ``pipeline``: the engine that runs the schedule. ``"megatron"`` (Megatron-LM, the default) exchanges with
      both neighbours at once, two blocking exchanges per micro-batch and model chunk
      (``send_forward_recv_backward``, ``send_backward_recv_forward``). ``"deepspeed"`` (DeepSpeed's
      ``PipelineEngine``, which MT-NLG and BLOOM ran) executes ``RecvActivation``, ``SendActivation``, ``RecvGrad``
      and ``SendGrad`` as four separate blocking ``dist.send``/``dist.recv`` calls per micro-batch
      (``deepspeed/runtime/pipe/schedule.py``, ``p2p.py``, 2021) and reduces the data-parallel gradients only after
      the pipeline drains (``ReduceGrads``), never behind the backward.

    Examples
    --------
    >>> p = Plan(tp=8, pp=16, dp=64, global_batch=2048)
    >>> p.gpus, p.micro_batches
    (8192, 32)
    """

    tp: int
    pp: int
    dp: int
    global_batch: int
    micro_batch: int = 1
    ep: int = 1
    virtual_stages: int = 1
    recompute: str = "selective"
    distributed_optimizer: bool = True
    balanced_ends: bool = False
    overlap_p2p: bool = False
    overlap_tp: bool = False
    overlap_dp: bool = False
    pipeline: str = "megatron"
    sequence_parallel: bool = True

    def __post_init__(self) -> None:
        for f in ("tp", "pp", "dp", "global_batch", "micro_batch", "ep", "virtual_stages"):
            integer(f, getattr(self, f), minimum=1)
        one_of("recompute", self.recompute, ("selective", "full"))
        one_of("pipeline", self.pipeline, PIPELINES)
        for f in ("balanced_ends", "overlap_p2p", "overlap_tp", "overlap_dp", "sequence_parallel"):
            if not isinstance(getattr(self, f), (bool, np.bool_)):
                raise TypeError(f"{f} must be a bool, got {getattr(self, f)!r}")
        per = self.dp * self.micro_batch
        if self.global_batch % per:
            raise PlanError(
                f"global_batch={self.global_batch} is not a multiple of dp x micro_batch = {per} "
                f"(remainder {self.global_batch % per} sequences)"
            )
        if self.dp % self.ep:
            raise PlanError(f"ep={self.ep} must divide dp={self.dp} (experts are sharded within the DP group)")

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def micro_batches(self) -> int:
        """Micro-batches per pipeline per iteration, ``global_batch / (dp * micro_batch)``."""
        return self.global_batch // (self.dp * self.micro_batch)

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def memory_bytes(model: Model, plan: Plan) -> dict[str, float]:
    """Bytes per GPU on the first pipeline stage: ``weights_grads``, ``optimizer``, ``activations`` and ``total``.

    Examples
    --------
    >>> mem = memory_bytes(MODELS["gpt3-175b"], Plan(tp=8, pp=8, dp=16, global_batch=1536, recompute="full"))
    >>> round(mem["total"] / 2**30, 1) < 80
    True
    """
    parts = memory_arrays(
        model,
        plan.tp,
        plan.pp,
        plan.dp,
        plan.ep,
        plan.micro_batch,
        plan.micro_batches,
        plan.virtual_stages,
        plan.recompute == "full",
        plan.distributed_optimizer,
    )
    return {k: float(v) for k, v in parts.items()}


def memory_arrays(
    model: Model,
    tp,
    pp,
    dp,
    ep,
    micro_batch,
    micro_batches,
    virtual_stages,
    full,
    distributed_optimizer,
    sequence_parallel=True,
) -> dict[str, np.ndarray]:
    """:func:`memory_bytes` over arrays of plan fields (broadcasting), for sweeps."""
    if not model.seq_len:
        raise ValueError(
            f"model {model.name!r} has seq_len 0: a training run needs one (dataclasses.replace(m, seq_len=))"
        )
    tp, pp, dp, ep, v = (np.asarray(x, dtype=float) for x in (tp, pp, dp, ep, virtual_stages))
    b, m = np.asarray(micro_batch, dtype=float), np.asarray(micro_batches, dtype=float)
    dense = model.params - model.routed_params
    per_gpu = dense / (tp * pp) + model.routed_params / (tp * pp * ep)
    shards = np.where(np.asarray(distributed_optimizer, dtype=bool), dp, 1.0)
    s, h = model.seq_len, model.hidden
    layers = np.ceil(model.layers / pp)
    in_flight = np.where(pp > 1, np.minimum(pp, m), 1.0)
    # interleaving keeps (1 + (p-1)/(p v)) times more (Korthikanti et al., eq. 6)
    in_flight = in_flight * np.where(v > 1, 1 + (pp - 1) / (pp * v), 1.0)
    # Korthikanti et al. eq. 2 and 5 without the attention-score term: 34 s b h / tp with sequence parallelism,
    # s b h (10 + 24 / tp) without (the norms' and dropouts' 10 s b h replicated on every TP rank)
    full_layer = np.where(np.asarray(sequence_parallel, dtype=bool), 34.0 / tp, 10.0 + 24.0 / tp) * s * b * h
    act = np.where(
        np.asarray(full, dtype=bool),
        in_flight * layers * 2.0 * s * b * h / tp + full_layer,
        in_flight * layers * full_layer,
    )
    out = {"weights_grads": 4.0 * per_gpu, "optimizer": 12.0 * per_gpu / shards, "activations": act}
    out["total"] = out["weights_grads"] + out["optimizer"] + out["activations"]
    return out


def check_plan(model: Model, plan: Plan, gpu: GPU, n_gpus: int | None = None) -> None:
    """Raise :class:`PlanError` saying what does not fit, and by how much.

    Checks ``tp * pp * dp == n_gpus``, ``pp <= layers``, ``tp`` within one NVLink domain, ``ep`` against the
    number of experts, and memory per GPU against HBM.

    Examples
    --------
    >>> check_plan(MODELS["gpt3-175b"], Plan(tp=8, pp=1, dp=8, global_batch=64), GPUS["A100"])
    Traceback (most recent call last):
    ...
    workbench.training.specs.PlanError: gpt3-175b does not fit in A100-80GB memory: 121.4 GiB per GPU needed, \
74.5 GiB available (over by 46.9 GiB); raise tp*pp or ep, use recompute="full" or the distributed optimizer
    """
    if not isinstance(model, Model):
        raise TypeError(f"model must be a Model, got {type(model).__name__}")
    if not isinstance(plan, Plan):
        raise TypeError(f"plan must be a Plan, got {type(plan).__name__}")
    if not isinstance(gpu, GPU):
        raise TypeError(f"gpu must be a GPU, got {type(gpu).__name__}")
    if n_gpus is not None and plan.gpus != n_gpus:
        raise PlanError(
            f"tp*pp*dp = {plan.tp}*{plan.pp}*{plan.dp} = {plan.gpus} GPUs but the job has {n_gpus} "
            f"(off by {plan.gpus - n_gpus:+d})"
        )
    if plan.pp > model.layers:
        raise PlanError(f"pp={plan.pp} exceeds the model's {model.layers} layers (by {plan.pp - model.layers})")
    slots = model.layers + (2 if plan.balanced_ends else 0)  # the embedding and the output layer take one each
    if plan.pp * plan.virtual_stages > slots:
        raise PlanError(
            f"pp*virtual_stages = {plan.pp * plan.virtual_stages} exceeds the model's {slots} "
            f"{'layer slots (layers + 2 with balanced_ends)' if plan.balanced_ends else 'layers'} "
            f"(by {plan.pp * plan.virtual_stages - slots})"
        )
    if plan.tp > gpu.gpus_per_node:
        raise PlanError(
            f"tp={plan.tp} exceeds the NVLink domain of {gpu.gpus_per_node} GPUs per node "
            f"(by {plan.tp - gpu.gpus_per_node})"
        )
    if plan.ep > 1 and (not model.is_moe or model.experts % plan.ep):
        raise PlanError(f"ep={plan.ep} must divide the model's {model.experts} experts")
    need = memory_bytes(model, plan)["total"]
    have = gpu.hbm_bytes
    if need > have:
        raise PlanError(
            f"{model.name} does not fit in {gpu.name} memory: {need / GIB:.1f} GiB per GPU needed, "
            f"{have / GIB:.1f} GiB available (over by {(need - have) / GIB:.1f} GiB); raise tp*pp or "
            f'ep, use recompute="full" or the distributed optimizer'
        )


def stage_loads(model: Model, pp: int, balanced_ends: bool = False) -> np.ndarray:
    """Compute of each pipeline rank relative to the mean (length ``pp``, mean 1).

    A rank's work is its transformer layers (``flops_per_token - 6 V h`` spread evenly over the layers) plus, on the
    last rank, the output layer and loss (``6 V h`` FLOPs per token: the ``V x h`` logits GEMM forward and its two
    backward GEMMs); the embedding lookup on the first rank does no GEMM. Megatron-LM splits the layers evenly (the
    first ``L mod pp`` ranks take one more), so the last rank carries the output layer on top: Llama 3 (arXiv
    2407.21783, Sec. 3.3.2) names this "computation imbalance" that makes the last stage "the execution latency
    bottleneck". With ``balanced_ends`` (Llama 3's fix, same section) the first and last ranks hold one layer fewer:
    ``L + 2`` slots split evenly, the embedding and the output layer taking one each. With ``virtual_stages``
    chunks a rank's load is the sum over its chunks, the same totals.

    Examples
    --------
    >>> loads = stage_loads(MODELS["gpt3-15b"], 16)  # 3 layers a rank, the output layer ~1 layer more on the last
    >>> round(float(loads[-1]), 2), round(float(loads[0]), 2)
    (1.29, 0.98)
    >>> round(float(stage_loads(MODELS["llama3-405b"], 16, balanced_ends=True).max()), 3)  # 8 layers, 7 + output
    1.011
    """
    L = model.layers
    head = 6.0 * model.vocab * model.hidden
    layer = (model.flops_per_token - head) / L
    if balanced_ends and pp > 1:
        slots = np.full(pp, (L + 2) // pp) + (np.arange(pp) < (L + 2) % pp)
        layers = slots.astype(float)
        layers[0] -= 1.0
        layers[-1] -= 1.0
    else:
        layers = (np.full(pp, L // pp) + (np.arange(pp) < L % pp)).astype(float)
    work = layers * layer
    work[-1] += head
    return work / work.mean()


def _load_factors(model: Model, pp: np.ndarray, balanced: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per plan: the slowest rank's load and the mean load of the other ranks (relative to the mean)."""
    worst, rest = np.ones(pp.size), np.ones(pp.size)
    for key in {(int(p), bool(b)) for p, b in zip(pp, balanced)}:
        loads = stage_loads(model, *key)
        sel = (pp == key[0]) & (balanced == key[1])
        k = int(np.argmax(loads))
        worst[sel] = loads[k]
        rest[sel] = (loads.sum() - loads[k]) / (key[0] - 1) if key[0] > 1 else loads[k]
    return worst, rest
