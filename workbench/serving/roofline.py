"""Cost of one serving iteration, per operator, from GPU and model specs and measured kernels.

An iteration processes ``prefill_tokens`` prompt tokens (whole prompts or chunks), ``decode_seqs`` decoding requests
(one token each) whose cached contexts total ``kv_tokens``, and samples ``sampled`` tokens. Per GPU of a
tensor-parallel group of ``tp`` GPUs, each operator has a roofline ``max(FLOPs / peak, bytes / HBM bandwidth)``:

* ``linear``: QKV/O projections and the FFN (or the routed experts) of every layer, ``2 * active linear params`` FLOPs
  per token; its bytes are the weights, read once per iteration (for a mixture of experts, the experts the batch
  touches: ``E * (1 - (1 - k/E)^tokens)`` per layer in expectation under uniform routing).
* ``elementwise``: a layer's norms, rotary embedding, activation and residual adds (measured costs only).
* ``attn_prefill``: causal attention of the prompt tokens over their context, ``attn_flops_per_pair`` per
  (query, key) pair; bytes: the KV written.
* ``attn_decode``: attention of each decoding request over its cached context; bytes: the whole KV cache read.
* ``lm_head``: the vocabulary projection of the sampled tokens (sampling).
* ``allreduce``: two all-reduces per layer of the tokens' activations over the scale-up link for ``tp > 1``.

Where the times come from is ``Deployment(costs=...)``: the roofline divided by the fraction of it real kernels reach
at that shape, measured on A100, H100 and A40 (``"curves"``, :mod:`workbench.serving.opcurves`), Vidur's measured
operator times themselves (``"profiled"``), or the per-generation constants of :data:`EFFICIENCY` (``"stated"``:
cuBLAS ~70-75% of the A100's dense peak, ~85% of HBM bandwidth; for GPUs no profile covers). Nothing is fitted to a
validation point.

Today's engines run these one after another: the iteration is the **sum** of the operator times (``overlap=False``)
plus the engine's host work (:mod:`workbench.serving.engines`). NanoFlow (Zhu et al., OSDI'25, arXiv:2408.12757, §3)
overlaps compute-, memory- and network-bound operations inside the device and schedules on the CPU asynchronously:
the iteration is then bounded by the **busiest resource**, ``max(sum of compute time, sum of memory time, sum of
network time)`` (``overlap=True``), where each operator's FLOPs count on compute and its bytes on memory. The old
linear cost model is one least-squares fit away (:func:`workbench.serving.linear_fit.fit_linear`).

The module is longer than ~500 lines because one record, :class:`Deployment`, holds every cost term of a replica
(stated roofline, measured operator curves or profiled layers, measured attention kernels, pipeline stages, swap
copies, the engine profile's policy and API-server latency) and builds the one cost table from them; splitting it
would scatter one record's methods over modules.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._contracts import AnyOf, Instance, Text, accepts
from .._validate import integer, nonnegative, one_of, positive
from .attention import REF_KV_BYTES, REFERENCE, attention_curves, decode_read_factor, family_factor
from .cost import COPY_CALL_S, LINEAR_CONTEXTS, PCIE_EFFICIENCY, CostTable, prefill_of, work_of
from .engines import EngineProfile
from .engines import engine as engine_profile
from .opcurves import OperatorCurves, ProfiledLayer, gpu_curves, profiled_layer, topology
from .scheduler import Scheduler
from .specs import GPU, Model, gpu, model

__all__ = ["COST_SOURCES", "Efficiency", "EFFICIENCY", "Deployment", "OPERATORS"]

OPERATORS = ("linear", "elementwise", "kv_write", "attn_prefill", "attn_decode", "lm_head", "allreduce")
#: Where operator times come from (``Deployment(costs=...)``).
COST_SOURCES = ("curves", "profiled", "stated")


@accepts()
@dataclass(frozen=True)
class Efficiency:
    """Fractions of peak reached by real kernels, and fixed costs, for one GPU generation."""

    compute: float
    memory: float
    network: float
    allreduce_latency_s: float = 10e-6  # per all-reduce call (NCCL small-message latency on NVLink)


#: Stated per generation (see the module docstring), never fitted to a measured point.
EFFICIENCY: dict[str, Efficiency] = {
    "ampere": Efficiency(compute=0.72, memory=0.85, network=0.75),
    "hopper": Efficiency(compute=0.65, memory=0.85, network=0.75),
    "blackwell": Efficiency(compute=0.60, memory=0.85, network=0.75),
    "ada": Efficiency(compute=0.65, memory=0.85, network=0.60),
    "cdna3": Efficiency(compute=0.45, memory=0.75, network=0.60),
}


@accepts(model=AnyOf(Text(), Instance(Model)), gpu=AnyOf(Text(), Instance(GPU)))
@dataclass(frozen=True)
class Deployment:
    """A model on ``tp`` GPUs of one kind (one replica), with the memory it leaves for the KV cache.

    Parameters
    ----------
    model, gpu : str or record
        Names from :mod:`workbench.serving.specs` (or records).
    tp : int
        Tensor-parallel degree (GPUs per pipeline stage).
    pp : int
        Pipeline-parallel stages; a replica has ``tp * pp`` GPUs. Each stage holds ``ceil(layers / pp)`` layers (the
        slowest stage sets the pace), the weights and the KV cache are split over all of them, and an iteration's
        batch flows through the stages as ``micro_batches`` micro-batches (default ``pp``):
        ``(micro_batches + pp - 1)`` stage times of one micro-batch (the fill and drain bubbles of a synchronous
        pipeline) plus ``pp - 1`` activation sends over the scale-up link, plus the LM head and the overhead once.
        Pipeline parallelism is modelled for sequential execution only.
    dtype : {"bf16", "fp8"}
        Which peak FLOP/s the GEMMs use (the weights' bytes come from the model's ``bytes_per_param``).
    overlap : bool
        NanoFlow-style overlapped execution (bounded by the busiest resource) instead of sequential.
    memory_utilization : float
        Fraction of HBM the engine may use (vLLM's ``gpu_memory_utilization``, default 0.9).
    activation_reserve_gb : float
        HBM per GPU kept for activations and workspace (what vLLM's profiling run reserves).
    efficiency : Efficiency, optional
        Defaults to :data:`EFFICIENCY` of the GPU's generation.
    max_kv_tokens : int, optional
        Caps the KV cache (vLLM's ``num_gpu_blocks_override``, in tokens).
    engine : str or EngineProfile, optional
        The serving engine (:mod:`workbench.serving.engines`, ``engines.csv``): its host work per iteration, kernel
        families, default scheduling policy (:attr:`scheduler`) and API-server latency. ``"vllm"`` or ``"vllm-v1"``
        (a current vLLM V1: CPU work hidden behind the GPU step by async scheduling, chunked prefill under the OpenAI
        server's default budget, FA3 on Hopper, custom all-reduce), ``"vllm-v0"`` (the eager vLLM
        of 2023-24: measured CPU work added to every step, Ray at TP >= 2, xformers prefill, prefill-first scheduling),
        ``"vllm-2023"`` (its 2023 releases, with vLLM's own PagedAttention decode kernel), ``"sarathi-serve"``, ``"sglang"``, ``"trtllm"``, ``"trtllm-v0.5"``, ``"nanoflow"``. Default:
        ``"nanoflow"`` when ``overlap`` else ``"vllm"``.
    overhead_s : float, optional
        A fixed host overhead per iteration added to every step, in place of the engine profile (for a stated
        constant of your own).
    costs : {"curves", "profiled", "stated"}, optional
        Where the GPU's operator times come from (:mod:`workbench.serving.opcurves`). ``"curves"`` (the default where
        the GPU generation has them: ampere, hopper, ada): the roofline divided by the measured fraction it reaches
        at this GEMM shape (tokens), plus the measured cost of a layer's non-GEMM kernels, measured NCCL all-reduce
        times by message size, and decode attention at the measured streaming efficiency with a per-layer floor.
        ``"profiled"``: Vidur's measured time of every non-attention operator of this model, GPU and TP
        (interpolated in tokens; the profiles must be on the data search path and cover the deployment), attention
        and the LM head as in ``"curves"``. ``"stated"``: the roofline at the stated per-generation constants of
        ``efficiency`` (the default for generations without curves, and when ``efficiency`` is given).
    pcie_gbs : float, optional
        PCIe bandwidth per GPU and direction in GB/s for swap copies (default: the GPU table's ``pcie_gbps / 2``).
    copy_call_s : float
        Seconds per copy call of a swap (:data:`~workbench.serving.cost.COPY_CALL_S`, sourced there).
    pcie_efficiency : float
        Fraction of the PCIe rate a pinned-memory KV copy reaches (:data:`~workbench.serving.cost.PCIE_EFFICIENCY`).
    frontend_s : float, optional
        Seconds the engine's API server adds to every request's first (and last) token as a client sees it (HTTP,
        tokenisation, streaming); default: the engine profile's (10 ms for ``"vllm"``, none stated for the others).
        ``0`` for an offline run (no server).

    Examples
    --------
    >>> d = Deployment("Llama-2-7B", "A100-80GB")
    >>> d.kv_capacity_tokens, d.costs
    (107803, 'curves')
    >>> round(d.iteration_s(decode_seqs=1, kv_tokens=1000) * 1e3, 2)  # one decode step: weights at ~74% of HBM
    10.31
    >>> eager = Deployment("Llama-2-7B", "A100-80GB", engine="vllm-v0")  # + the measured host step of vLLM 0.x
    >>> round(eager.iteration_s(decode_seqs=1, kv_tokens=1000) * 1e3, 2)
    11.16
    >>> stated = Deployment("Llama-2-7B", "A100-80GB", costs="stated")  # the stated constants: 85% of HBM
    >>> round(stated.iteration_s(decode_seqs=1, kv_tokens=1000) * 1e3, 2)
    7.93
    """

    model: Model  # a name (str) is accepted and resolved to its record by __post_init__
    gpu: GPU  # likewise
    tp: int = 1
    pp: int = 1
    micro_batches: int | None = None
    dtype: str = "bf16"
    overlap: bool = False
    memory_utilization: float = 0.9
    activation_reserve_gb: float = 2.0
    efficiency: Efficiency | None = None
    max_kv_tokens: int | None = None
    overhead_s: float | None = None
    engine: str | EngineProfile | None = None
    costs: str | None = None
    pcie_gbs: float | None = None
    copy_call_s: float = COPY_CALL_S
    pcie_efficiency: float = PCIE_EFFICIENCY
    frontend_s: float | None = None
    kv_capacity_tokens: int = field(init=False, repr=False, compare=False)
    _c: dict[str, float] = field(init=False, repr=False, compare=False)
    _engine: EngineProfile = field(init=False, repr=False, compare=False)
    _curves: OperatorCurves | None = field(init=False, repr=False, compare=False)
    _profile: ProfiledLayer | None = field(init=False, repr=False, compare=False)
    #: the cost tables built so far, by size (see ``cost_table``)
    _tables: dict[tuple, CostTable] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        m, g = model(self.model), gpu(self.gpu)
        object.__setattr__(self, "model", m)
        object.__setattr__(self, "gpu", g)
        object.__setattr__(self, "tp", integer("tp", self.tp, minimum=1, maximum=64))
        if m.heads % self.tp:  # vLLM and SGLang shard whole attention heads: "heads must be divisible by TP"
            ok = [t for t in (1, 2, 4, 8, 16, 32, 64) if m.heads % t == 0]
            raise ValueError(
                f"tp={self.tp} does not divide {m.model}'s {m.heads} attention heads (tensor parallelism shards whole "
                f"heads); allowed: {', '.join(map(str, ok))}"
            )
        object.__setattr__(self, "pp", integer("pp", self.pp, minimum=1, maximum=m.layers))
        mb = self.pp if self.micro_batches is None else integer("micro_batches", self.micro_batches, minimum=1)
        object.__setattr__(self, "micro_batches", mb)
        if self.pp > 1 and self.overlap:
            raise ValueError("pipeline parallelism (pp > 1) is modelled for sequential execution only (overlap=False)")
        one_of("dtype", self.dtype, ("bf16", "fp8"))
        positive("memory_utilization", self.memory_utilization)
        if self.memory_utilization > 1:
            raise ValueError(f"memory_utilization must be <= 1, got {self.memory_utilization}")
        reserve = nonnegative("activation_reserve_gb", self.activation_reserve_gb)
        if reserve >= g.hbm_gb * self.memory_utilization:
            raise ValueError(
                f"activation_reserve_gb must be below the usable HBM per GPU ({g.hbm_gb * self.memory_utilization:g} "
                f"GB of {g.gpu}), got {reserve:g}"
            )
        if self.max_kv_tokens is not None:
            integer("max_kv_tokens", self.max_kv_tokens, minimum=1)
        eff = self.efficiency
        measured = gpu_curves(g)  # a GPU profiled itself, else its generation
        if self.costs is None:
            object.__setattr__(self, "costs", "curves" if measured is not None and eff is None else "stated")
        one_of("costs", self.costs, COST_SOURCES)
        if self.costs != "stated" and measured is None:
            raise ValueError(
                f"costs={self.costs!r} needs measured curves, which GPU generation {g.generation!r} has none of "
                "(derived for ampere, hopper and ada); use costs='stated'"
            )
        if self.costs == "curves" and self.tp > 1 and measured is not None and not measured.allreduce_tps(topology(g)):
            raise ValueError(
                f"costs='curves' has no measured all-reduce between {g.gpu} GPUs ({topology(g)} in the "
                f"{measured.generation} profile); use costs='stated' (the all-reduce over the GPU's stated links) or tp=1"
            )
        if self.costs == "profiled" and (self.dtype != "bf16" or self.overlap):
            raise ValueError(
                "costs='profiled' holds BF16 kernels run one after another: needs dtype='bf16', overlap=False"
            )
        object.__setattr__(self, "_curves", None if self.costs == "stated" else measured)
        object.__setattr__(self, "_profile", profiled_layer(g, m, self.tp) if self.costs == "profiled" else None)
        object.__setattr__(self, "_tables", {})
        if self.pcie_gbs is not None:
            positive("pcie_gbs", self.pcie_gbs)
        nonnegative("copy_call_s", self.copy_call_s)
        if not 0 < self.pcie_efficiency <= 1:
            raise ValueError(f"pcie_efficiency must be in (0, 1], got {self.pcie_efficiency}")
        if eff is None:
            if g.generation not in EFFICIENCY:
                raise ValueError(f"no stated efficiency for GPU generation {g.generation!r}; pass efficiency=")
            eff = EFFICIENCY[g.generation]
            object.__setattr__(self, "efficiency", eff)
        if self.overhead_s is not None:
            if self.engine is not None:
                raise ValueError("give engine= or overhead_s=, not both (overhead_s replaces the engine's profile)")
            fixed = nonnegative("overhead_s", self.overhead_s)
            prof = EngineProfile("fixed-overhead", fixed, 0.0, 0.0, 0.0, False, "a stated fixed overhead per step")
        else:
            prof = engine_profile(self.engine if self.engine is not None else ("nanoflow" if self.overlap else "vllm"))
            object.__setattr__(self, "engine", prof.engine)
        object.__setattr__(self, "_engine", prof)
        front = prof.frontend_s if self.frontend_s is None else self.frontend_s
        if not 0 <= front < 1:
            raise ValueError(f"frontend_s must be in [0, 1) s, got {front}")
        object.__setattr__(self, "frontend_s", float(front))
        tp, n_gpu = self.tp, self.tp * self.pp
        free = n_gpu * (g.hbm_bytes * self.memory_utilization - self.activation_reserve_gb * 1e9) - m.weight_bytes
        if free < m.kv_bytes_per_token * 16:
            need = (m.weight_bytes + n_gpu * self.activation_reserve_gb * 1e9) / self.memory_utilization / 1e9
            raise ValueError(
                f"{m.model} ({m.weight_bytes / 1e9:.0f} GB of weights) does not fit on {n_gpu} x {g.gpu} "
                f"(tp={tp}, pp={self.pp}: {n_gpu * g.hbm_gb:.0f} GB, {self.memory_utilization:.0%} usable, "
                f"{self.activation_reserve_gb:g} GB per GPU for activations): short by "
                f"{-free / 1e9 + m.kv_bytes_per_token * 16 / 1e9:.1f} GB; needs about {need:.0f} GB, "
                f"e.g. tp * pp >= {math.ceil(need / g.hbm_gb)}"
            )
        peak = g.peak_flops(self.dtype) * eff.compute * tp
        bw = g.hbm_bytes_per_s * eff.memory * tp
        embed = m.vocab * m.hidden
        stage = math.ceil(m.layers / self.pp) / m.layers  # the slowest stage's share of the layers
        # per-token linear FLOPs exclude the embedding lookup and the LM head (counted on the sampled tokens only);
        # the per-layer terms are one pipeline stage's (all layers when pp == 1)
        object.__setattr__(
            self,
            "_c",
            {
                "flop_s": 1.0 / peak,
                "byte_s": 1.0 / bw,
                "flop_s0": 1.0 / (g.peak_flops(self.dtype) * tp),  # at the datasheet's peak (curves divide by theirs)
                "byte_s0": 1.0 / (g.hbm_bytes_per_s * tp),
                "lin_flops": 2.0 * max(m.active_params - 2 * embed, 0.1 * m.active_params) * stage,
                "shared_bytes": max(m.shared_params - 2 * embed, 0.1 * m.shared_params) * m.bytes_per_param * stage,
                "expert_bytes_layer": m.expert_params / m.layers * m.bytes_per_param,
                "stage_layers": m.layers * stage,
                "head_flops": 2.0 * embed,
                "head_bytes": embed * m.bytes_per_param,
                "attn_flops": m.attn_flops_per_pair * stage,
                "kv_bytes": m.kv_bytes_per_token * stage,
                "ar_bytes": 0.0
                if tp == 1
                else 2 * m.layers * stage * 2 * (tp - 1) / tp * m.hidden * 2 / (g.scaleup_bytes_per_s * eff.network),
                "ar_fixed": 0.0 if tp == 1 else 2 * m.layers * stage * eff.allreduce_latency_s,
                # a stage boundary: each GPU of the stage sends its 1/tp of the activations (2 bytes per element)
                "p2p_bytes": m.hidden * 2 / tp / (g.scaleup_bytes_per_s * eff.network),
                "p2p_fixed": eff.allreduce_latency_s,
            },
        )
        cap = int(free // m.kv_bytes_per_token)
        if self.max_kv_tokens is not None:
            cap = min(cap, integer("max_kv_tokens", self.max_kv_tokens, minimum=1))
        object.__setattr__(self, "kv_capacity_tokens", cap)

    @property
    def gpus(self) -> int:
        """GPUs of one replica (``tp * pp``)."""
        return self.tp * self.pp

    @property
    def scheduler(self) -> Scheduler | None:
        """The engine's default scheduling policy on this GPU (:meth:`EngineProfile.scheduler
        <workbench.serving.engines.EngineProfile.scheduler>`), the one a run uses when given none; ``None`` when the
        profile states none (then ``Scheduler()``)."""
        return self._engine.scheduler(self.gpu)

    # ------------------------------------------------------------------------------------------------ swap copies
    @property
    def swap_s_per_token(self) -> float:
        """Seconds to copy one token's KV cache between HBM and host memory, one way: its bytes over the replica's
        PCIe links (one per GPU, each holding ``1 / gpus`` of the cache) at ``pcie_efficiency`` of their
        one-direction rate (``pcie_gbs`` per GPU if given, else the GPU table's)."""
        g = self.gpu
        if self.pcie_gbs is not None:
            bw = self.pcie_gbs * 1e9
        else:
            if not g.pcie_gbps or math.isnan(g.pcie_gbps):
                raise ValueError(f"GPU {g.gpu!r} has no pcie_gbps in its spec; swap preemption needs it (or pcie_gbs=)")
            bw = g.pcie_bytes_per_s
        return self.model.kv_bytes_per_token / (self.gpus * bw * self.pcie_efficiency)

    @property
    def swap_call_s(self) -> float:
        """Seconds per copy call (:data:`~workbench.serving.cost.COPY_CALL_S` unless ``copy_call_s`` is given)."""
        return self.copy_call_s

    @property
    def swap_calls_per_copy(self) -> int:
        """Copy calls per contiguous run of blocks on each GPU: a K and a V cache tensor per layer of a stage."""
        return 2 * math.ceil(self.model.layers / self.pp)

    # ------------------------------------------------------------------------------------------ operator costs
    def _weight_bytes(self, tokens):
        c, m = self._c, self.model
        t = np.asarray(tokens, dtype=float)
        if m.experts == 1:
            return np.where(t > 0, c["shared_bytes"], 0.0)
        touched = m.experts * (1.0 - (1.0 - m.active_experts / m.experts) ** t)
        return np.where(t > 0, c["shared_bytes"] + c["expert_bytes_layer"] * c["stage_layers"] * touched, 0.0)

    def _token_ops(self, tokens, sampled) -> dict[str, tuple]:
        """Per operator that depends only on the iteration's tokens (and the LM head on the sampled tokens), its
        (compute, memory, network) seconds, vectorised over ``tokens`` and ``sampled`` (one pipeline stage)."""
        c = self._c
        t = np.asarray(tokens, dtype=float)
        s = np.asarray(sampled, dtype=float)
        z = np.zeros_like(t)
        kv_write = c["kv_bytes"] * t * (c["byte_s"] if self._curves is None else self._stream_s)
        if self._curves is None:
            ar = np.where(t > 0, c["ar_bytes"] * t + c["ar_fixed"], 0.0)
            return {
                "linear": (c["lin_flops"] * t * c["flop_s"], self._weight_bytes(t) * c["byte_s"], z),
                "elementwise": (z, z, z),
                "kv_write": (z, kv_write, z),
                "lm_head": (c["head_flops"] * s * c["flop_s"], c["head_bytes"] * (s > 0) * c["byte_s"], 0.0 * s),
                "allreduce": (z, z, ar),
            }
        lc, lm = self._linear(t, self._weight_bytes(t))
        hc, hm = self._head(s)
        return {
            "linear": (lc, lm, z),
            "elementwise": (z, self._elementwise(t), z),
            "kv_write": (z, kv_write, z),
            "lm_head": (hc, hm, 0.0 * s),
            "allreduce": (z, z, self._allreduce(t)),
        }

    @property
    def _stream_s(self) -> float:
        """Seconds per byte of a memory-bound kernel at the measured streaming efficiency (per GPU of a stage)."""
        assert self._curves is not None
        return self._c["byte_s0"] / self._curves.streaming_efficiency

    def _prefill_attention(self, chunk, prefix) -> tuple:
        """(compute, memory) seconds per causal (query, key) pair of the prefill attention (all layers of a stage, per
        GPU) at the grid's shape: with measured costs, the measured kernel's FLOP rate above its launch floor for a
        reference chunk of ``chunk`` tokens after ``prefix`` (:mod:`workbench.serving.attention`: the same thread
        blocks and keys per query), for the engine's kernel family on this GPU (a family that computes the causally
        masked blocks pays for them); with stated costs, the attention FLOPs per pair at the stated efficiency."""
        c = self._c
        ch, px = np.broadcast_arrays(np.asarray(chunk, dtype=float), np.asarray(prefix, dtype=float))
        if self._curves is None:
            rate = np.full(ch.shape, c["attn_flops"] * c["flop_s"])
            return rate, np.zeros_like(rate)
        g = self.gpu
        per_layer = c["attn_flops"] / c["stage_layers"] / self.tp  # FLOPs per pair, layer and GPU
        skip, factor = family_factor(self._engine.attention, g.generation, g.peak_flops("bf16"), g.gpu)
        rate = attention_curves().prefill_flop_rate(ch, px) * factor
        waste = 1.0 if skip else (px + ch) / (px + (ch + 1) / 2)  # the masked blocks computed anyway
        per_pair = per_layer * waste / rate * c["stage_layers"]
        return per_pair, np.zeros_like(per_pair)

    @property
    def _pf_launch(self) -> tuple[float, float]:
        """The prefill attention's launch floor per iteration (all layers of a stage) and the reference chunk tokens a
        128-token query tile counts for (``4 x`` query heads per GPU)."""
        if self._curves is None:
            return 0.0, 128.0
        return attention_curves().floor * self._c["stage_layers"], 4.0 * self.model.heads / self.tp

    def _decode_attention(self, batch, context) -> tuple:
        """(compute, memory) seconds of the decode attention of ``batch`` requests at a mean context of ``context``
        tokens (vectorised): with measured costs, the measured kernel reading the same KV bytes per layer and GPU
        (a batch of ``batch x bytes / 4,096`` reference requests), its bandwidth-bound part scaled to this GPU's HBM;
        with stated costs, the whole KV cache read at the stated efficiency. The bytes are the engine's decode
        kernel's (:func:`~workbench.serving.attention.decode_read_factor`: vLLM's 2023 kernel and TensorRT-LLM's
        before XQA re-read a KV head for each of its query heads)."""
        c = self._c
        b, L = np.broadcast_arrays(np.asarray(batch, dtype=float), np.asarray(context, dtype=float))
        if self._curves is None:
            kv = b * L
            reads = decode_read_factor(self._engine.decode_attention, self.model.heads / max(self.model.kv_heads, 1))
            return c["attn_flops"] * kv * c["flop_s"], c["kv_bytes"] * reads * kv * c["byte_s"]
        cur = attention_curves()
        m = self.model
        reads = decode_read_factor(self._engine.decode_attention, m.heads / max(m.kv_heads, 1))
        per_gpu = c["kv_bytes"] / c["stage_layers"] / self.tp * reads  # KV bytes read per token, layer and GPU
        ref = cur.decode_s(b * per_gpu / REF_KV_BYTES, L)
        t = cur.floor + (ref - cur.floor) * REFERENCE["hbm_bytes_s"] / self.gpu.hbm_bytes_per_s
        t = np.where(b > 0, t * c["stage_layers"], 0.0)
        return np.zeros_like(t), t

    @accepts()
    def resources(
        self, *work: Any, prefill_seqs: float | None = None, prefill_tiles: float | None = None, **named: Any
    ) -> dict[str, tuple]:
        """Per operator, its (compute, memory, network) seconds for one iteration (a replica's GPUs in parallel; one
        pipeline stage when ``pp > 1``).

        The work is ``prefill_tokens``, ``prefill_pairs`` (the causal (query, key) pairs of the prefill,
        ``n (n + 1) / 2`` for a whole prompt of ``n`` tokens), ``decode_seqs``, ``kv_tokens`` (the decodes' resident
        contexts) and ``sampled`` (defaults to ``decode_seqs``; add the prompts that finish), by position or name;
        ``prefill_seqs`` (default 1) is how many sequences the prefill tokens belong to, each with an equal share of
        tokens and pairs (attention's efficiency depends on the chunk and its prefix), or ``prefill_tiles`` the
        sequences' 128-token query tiles in all (what the engine counts: ``sum ceil(chunk / 128)``).
        """
        P, pairs, D, K, s = work_of(*work, **named)
        ops = {k: tuple(float(x) for x in v) for k, v in self._token_ops(P + D, s).items()}
        _, _, tiles = prefill_of(P, pairs, prefill_seqs, prefill_tiles)
        if self.pp == 1:  # the attention terms are the cost table's (the engine's) own
            tab = self.cost_table()
            pre = [tab.prefill_attention_s(P, pairs, tiles, lane) for lane in range(tab.lanes)]
            dec = [tab.decode_attention_s(D, K, lane) for lane in range(tab.lanes)]
        else:  # one stage (the table holds the whole pipeline)
            floor, tile = self._pf_launch
            c = tile * tiles
            p = max(pairs / P - (c + 1) / 2, 0.0) if P > 0 else 0.0
            pre = [floor + pairs * float(self._prefill_attention(c, p)[0]) if P > 0 else 0.0]
            dec = [float(sum(self._decode_attention(D, K / D))) if D > 0 else 0.0]
        if len(pre) == 1:  # sequential: each kernel's time on the resource that binds it
            dc, dm = self._decode_attention(D, K / D) if D > 0 else (0.0, 0.0)
            ops["attn_prefill"] = (pre[0], 0.0, 0.0)
            ops["attn_decode"] = (0.0, dec[0], 0.0) if float(dm) >= float(dc) else (dec[0], 0.0, 0.0)
        else:
            ops["attn_prefill"] = (pre[0], pre[1], pre[2])
            ops["attn_decode"] = (dec[0], dec[1], dec[2])
        return {k: ops[k] for k in OPERATORS}

    # The measured parts (costs "curves" and "profiled"), vectorised over token counts.
    def _linear(self, tokens, weight_bytes):
        """(compute, memory) seconds of a stage's projections: the roofline over the measured fraction it reaches at
        this many tokens, or (profiled) the measured time split in the roofline's proportions."""
        c, cur = self._c, self._curves
        assert cur is not None
        t = np.asarray(tokens, dtype=float)
        comp, mem = c["lin_flops"] * t * c["flop_s0"], weight_bytes * c["byte_s0"] * (t > 0)
        if self._profile is not None:
            meas = self._profile.at("gemm", t) * c["stage_layers"]
            k = np.divide(meas, np.maximum(comp, mem), out=np.zeros_like(meas), where=t > 0)
            return comp * k, mem * k
        eta = cur.gemm_efficiency(t)
        return comp / eta, mem / eta

    def _elementwise(self, tokens):
        """Seconds of a stage's non-GEMM kernels (and, profiled, the embedding lookup)."""
        c, m, cur = self._c, self.model, self._curves
        assert cur is not None
        if self._profile is not None:
            return self._profile.at("other", tokens) * c["stage_layers"] + self._profile.at("embedding", tokens)
        return cur.elementwise_s(tokens, m.hidden, m.ffn, self.tp, self.gpu.hbm_bytes_per_s) * c["stage_layers"]

    def _head(self, sampled):
        c, cur = self._c, self._curves
        assert cur is not None
        s = np.asarray(sampled, dtype=float)
        eta = cur.gemm_efficiency(s)
        return c["head_flops"] * s * c["flop_s0"] / eta, c["head_bytes"] * (s > 0) * c["byte_s0"] / eta

    def _allreduce(self, tokens):
        """Two measured all-reduces per layer of the stage, of the tokens' activations (2 bytes per element)."""
        cur, m = self._curves, self.model
        assert cur is not None
        t = np.asarray(tokens, dtype=float)
        if self.tp == 1:
            return np.zeros_like(t)
        custom = self._engine.allreduce == "custom"
        one = cur.allreduce_s(t * m.hidden * 2.0, tp=self.tp, topology=topology(self.gpu), custom=custom)
        return np.where(t > 0, 2 * self._c["stage_layers"] * one, 0.0)

    @property
    def profile(self) -> EngineProfile:
        """The resolved engine profile (see ``engine``)."""
        return self._engine

    @accepts()
    def cpu_s(self, sequences: float) -> float:
        """The engine's host seconds for one iteration over ``sequences`` running sequences (see ``engine``)."""
        return self._engine.cpu_s(sequences, tp=self.tp)

    # ---------------------------------------------------------------------------------------- the one table
    @accepts()
    def cost_table(self, max_tokens: int = 16384, max_seqs: int = 256) -> CostTable:
        """The deployment's :class:`~workbench.serving.cost.CostTable` (cached per size): the operators of
        :meth:`resources` per token count up to ``max_tokens`` and per sampled token count, the prefill attention's
        rate on a (chunk, prefix) grid and the decode attention per batch up to ``max_seqs`` on a context grid;
        sequential execution sums each operator's binding resource in one lane, overlapped execution keeps the
        compute, memory and network lanes apart (the iteration is the busiest). With ``pp > 1`` each entry is the
        micro-batched pipeline of the class docstring."""
        key = (int(max_tokens), int(max_seqs))
        tab = self._tables.get(key)
        if tab is None:
            tab = self._build_table(*key)
            self._tables[key] = tab
        return tab

    def _build_table(self, max_tokens: int, max_seqs: int) -> CostTable:
        T = max(int(max_tokens), 2) + max_seqs + 1
        S = 2 * max_seqs + 2
        m = self.micro_batches if self.pp > 1 else 1
        assert m is not None
        mult = (m + self.pp - 1) if self.pp > 1 else 1
        t = np.arange(T, dtype=float)
        ops = self._token_ops(t / m, np.zeros(T))
        ops.pop("lm_head")
        heads = self._token_ops(np.zeros(S), np.arange(S, dtype=float))["lm_head"]
        logc, prefix = (_PF_LOGC, _PF_PREFIX) if self._curves is None else (_PF_LOGC_MEASURED, _PF_PREFIX_MEASURED)
        contexts = self._contexts()
        cc, pp_ = np.meshgrid(np.exp(logc), prefix, indexing="ij")
        pfc, pfm = self._prefill_attention(cc, pp_)
        pf_floor, pf_tile = self._pf_launch
        b = np.arange(max_seqs + 1, dtype=float)
        bb, LL = np.meshgrid(b / m, contexts, indexing="ij")
        dac, dam = self._decode_attention(bb, LL)
        dac, dam = np.where(bb > 0, dac, 0.0), np.where(bb > 0, dam, 0.0)
        if self.overlap:
            tok = np.stack([sum(v[r] for v in ops.values()) for r in range(3)])
            head = np.stack([np.asarray(heads[0]), np.asarray(heads[1]), np.zeros(S)])
            pf = np.stack([pfc, pfm, np.zeros_like(pfc)])
            da = np.stack([dac, dam, np.zeros_like(dac)])
        else:
            tok = sum(np.maximum(np.maximum(v[0], v[1]), v[2]) for v in ops.values())[None, :]
            head = np.maximum(heads[0], heads[1])[None, :]
            pf = np.maximum(pfc, pfm)[None]
            da = np.maximum(dac, dam)[None]
        if self.pp > 1:  # the micro-batched pipeline: (m + pp - 1) stage times, pp - 1 sends; the head once
            pf_floor, pf_tile = pf_floor * mult, pf_tile / m
            c = self._c
            p2p = np.where(t > 0, c["p2p_bytes"] * t / m + c["p2p_fixed"], 0.0)
            tok = mult * tok + (self.pp - 1) * p2p[None, :]
            s = np.arange(S, dtype=float)
            head = np.maximum(c["head_flops"] * s * c["flop_s"], c["head_bytes"] * (s > 0) * c["byte_s"])[None, :]
            pf = pf * mult / m
            da = da * mult
        prof = self._engine
        return CostTable(
            tok, head, logc, prefix, pf, contexts, da, pf_floor=pf_floor, pf_tile=pf_tile,
            cpu0=prof.cpu_s(0, tp=self.tp), per_seq=prof.per_seq(self.tp), overlap_cpu=bool(prof.overlap_cpu),
        )  # fmt: skip

    def _contexts(self) -> np.ndarray:
        """The decode attention's context grid: two points when it is linear in the context (stated costs), the
        measured kernel's lengths and beyond otherwise."""
        return LINEAR_CONTEXTS if self._curves is None else _DA_CONTEXTS

    @accepts()
    def gpu_s(
        self, *work: Any, prefill_seqs: float | None = None, prefill_tiles: float | None = None, **named: Any
    ) -> float:
        """The GPU's seconds of one iteration (arguments as :meth:`resources`; from the cost table)."""
        P, pairs, D, K, s = work_of(*work, **named)
        zero = dataclasses.replace(self.cost_table(), cpu0=0.0, per_seq=0.0, overlap_cpu=False)
        P, pairs, tiles = prefill_of(P, pairs, prefill_seqs, prefill_tiles)
        return zero.iteration_s(P, pairs, D, K, s, prefill_tiles=tiles)

    @accepts()
    def iteration_s(
        self, *work: Any, prefill_seqs: float | None = None, prefill_tiles: float | None = None, **named: Any
    ) -> float:
        """Duration of one iteration (arguments as :meth:`resources`), from the cost table the engine uses: the GPU's
        time and the engine's host time over the running sequences (``max(decode_seqs, sampled)``), added for an
        eager engine, overlapped (the larger) for one that schedules ahead."""
        P, pairs, D, K, s = work_of(*work, **named)
        P, pairs, tiles = prefill_of(P, pairs, prefill_seqs, prefill_tiles)
        return self.cost_table().iteration_s(P, pairs, D, K, s, prefill_tiles=tiles)

    @accepts()
    def breakdown(self, *work: Any, **named: Any) -> pd.DataFrame:
        """Tidy table, one row per operator (arguments as :meth:`resources`; one pipeline stage when ``pp > 1``):
        ``compute_s``, ``memory_s``, ``network_s``, ``time_s`` and ``bound``."""
        res = self.resources(*work, **named)
        rows = []
        for op, (cs, ms, ns) in res.items():
            bound = ("compute", "memory", "network")[int(np.argmax([cs, ms, ns]))] if max(cs, ms, ns) > 0 else "idle"
            rows.append((op, cs, ms, ns, max(cs, ms, ns), bound))
        return pd.DataFrame(rows, columns=["operator", "compute_s", "memory_s", "network_s", "time_s", "bound"])

    @accepts()
    def decode_line(self, decode_seqs: int, kv_tokens: float) -> tuple[float, float, float]:
        """A pure-decode iteration's time as ``a + s * kv_tokens``, valid for KV totals up to the returned limit (the
        cost table's line: see :meth:`~workbench.serving.cost.CostTable.decode_line`)."""
        return self.cost_table(max_seqs=max(256, int(decode_seqs))).decode_line(decode_seqs, kv_tokens)


#: The measured kernels' grids: chunk lengths (log) and prefixes of the prefill attention, contexts of the decode.
_PF_LOGC_MEASURED = np.log(np.array([1, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096,
                                     8192, 16384, 32768, 131072], dtype=float))  # fmt: skip
_PF_PREFIX_MEASURED = np.array([0.0, 64, 128, 256, 512, 1024, 1536, 2048, 3072, 4096, 8192, 32768, 131072])
_DA_CONTEXTS = np.array([1.0, 16, 32, 64, 128, 256, 512, 1024, 1536, 2048, 3072, 4032, 6144, 8192, 16384, 32768,
                         65536, 131072, 262144, 1048576])  # fmt: skip
#: The prefill-attention grid of a cost table with stated costs: chunk lengths (log) and prefixes.
_PF_LOGC = np.log(np.array([1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 131072], dtype=float))
_PF_PREFIX = np.array([0.0, 256, 512, 1024, 2048, 4096, 8192, 32768, 131072])
