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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._validate import integer, nonnegative, one_of, positive
from .engines import EngineProfile
from .engines import engine as engine_profile
from .opcurves import OperatorCurves, ProfiledLayer, curves, profiled_layer, topology
from .specs import GPU, Model, gpu, model

__all__ = ["COST_SOURCES", "Efficiency", "EFFICIENCY", "Deployment", "OPERATORS"]

OPERATORS = ("linear", "elementwise", "attn_prefill", "attn_decode", "lm_head", "allreduce")
#: Where operator times come from (``Deployment(costs=...)``).
COST_SOURCES = ("curves", "profiled", "stated")


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
        The serving engine's host work per iteration (:mod:`workbench.serving.engines`, ``engines.csv``):
        ``"vllm"`` (current vLLM V1, CPU work hidden behind the GPU step), ``"vllm-v0"`` (eager vLLM of 2023-24:
        measured CPU work added to every step, Ray at TP >= 2), ``"sarathi-serve"``, ``"sglang"``, ``"trtllm"``,
        ``"nanoflow"``. Default: ``"nanoflow"`` when ``overlap`` else ``"vllm"``.
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

    Examples
    --------
    >>> d = Deployment("Llama-2-7B", "A100-80GB")
    >>> d.kv_capacity_tokens, d.costs
    (107803, 'curves')
    >>> round(d.iteration_s(decode_seqs=1, kv_tokens=1000) * 1e3, 2)  # one decode step: weights at ~74% of HBM
    9.88
    >>> eager = Deployment("Llama-2-7B", "A100-80GB", engine="vllm-v0")  # + the measured host step of vLLM 0.x
    >>> round(eager.iteration_s(decode_seqs=1, kv_tokens=1000) * 1e3, 2)
    10.74
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
    kv_capacity_tokens: int = field(init=False, repr=False, compare=False)
    _c: dict[str, float] = field(init=False, repr=False, compare=False)
    _engine: EngineProfile = field(init=False, repr=False, compare=False)
    _curves: OperatorCurves | None = field(init=False, repr=False, compare=False)
    _profile: ProfiledLayer | None = field(init=False, repr=False, compare=False)
    #: measured token-dependent terms by (type, token count), computed once each: see ``resources``
    _parts: dict[tuple, tuple[float, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        m, g = model(self.model), gpu(self.gpu)
        object.__setattr__(self, "model", m)
        object.__setattr__(self, "gpu", g)
        object.__setattr__(self, "tp", integer("tp", self.tp, minimum=1, maximum=64))
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
        measured = curves(g.generation)
        if self.costs is None:
            object.__setattr__(self, "costs", "curves" if measured is not None and eff is None else "stated")
        one_of("costs", self.costs, COST_SOURCES)
        if self.costs != "stated" and measured is None:
            raise ValueError(
                f"costs={self.costs!r} needs measured curves, which GPU generation {g.generation!r} has none of "
                "(derived for ampere, hopper and ada); use costs='stated'"
            )
        if self.costs == "profiled" and (self.dtype != "bf16" or self.overlap):
            raise ValueError(
                "costs='profiled' holds BF16 kernels run one after another: needs dtype='bf16', overlap=False"
            )
        object.__setattr__(self, "_curves", None if self.costs == "stated" else measured)
        object.__setattr__(self, "_profile", profiled_layer(g, m, self.tp) if self.costs == "profiled" else None)
        object.__setattr__(self, "_parts", {})
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
    def swap_s_per_token(self) -> float:
        """Seconds to copy one token's KV cache between HBM and host memory, one way: its bytes over the replica's
        PCIe links (one per GPU, each holding ``1 / gpus`` of the cache) at their one-direction bandwidth."""
        g = self.gpu
        if not g.pcie_gbps or math.isnan(g.pcie_gbps):
            raise ValueError(f"GPU {g.gpu!r} has no pcie_gbps in its spec; swap preemption needs it")
        return self.model.kv_bytes_per_token / (self.gpus * g.pcie_bytes_per_s)

    def _weight_bytes(self, tokens: float) -> float:
        c, m = self._c, self.model
        if m.experts == 1 or tokens <= 0:
            return c["shared_bytes"] if tokens > 0 else 0.0
        touched = m.experts * (1.0 - (1.0 - m.active_experts / m.experts) ** tokens)
        return c["shared_bytes"] + c["expert_bytes_layer"] * c["stage_layers"] * touched

    def resources(self, *work: Any, **named: Any) -> dict[str, tuple[float, float, float]]:
        """Per operator, its (compute, memory, network) seconds for one iteration (a replica's GPUs in parallel; one
        pipeline stage when ``pp > 1``).

        The work is ``prefill_tokens``, ``prefill_pairs`` (the causal (query, key) pairs of the prefill,
        ``n (n + 1) / 2`` for a whole prompt of ``n`` tokens), ``decode_seqs``, ``kv_tokens`` (the decodes' resident
        contexts) and ``sampled`` (defaults to ``decode_seqs``; add the prompts that finish), by position or name.
        """
        prefill_tokens, prefill_pairs, decode_seqs, kv_tokens, sampled = _work(*work, **named)
        c = self._c
        tokens = prefill_tokens + decode_seqs
        if self._curves is None:
            return {
                "linear": (c["lin_flops"] * tokens * c["flop_s"], self._weight_bytes(tokens) * c["byte_s"], 0.0),
                "elementwise": (0.0, 0.0, 0.0),
                "attn_prefill": (
                    c["attn_flops"] * prefill_pairs * c["flop_s"],
                    c["kv_bytes"] * prefill_tokens * c["byte_s"],
                    0.0,
                ),
                "attn_decode": (
                    c["attn_flops"] * kv_tokens * c["flop_s"],
                    c["kv_bytes"] * kv_tokens * c["byte_s"],
                    0.0,
                ),
                "lm_head": (
                    c["head_flops"] * sampled * c["flop_s"],
                    c["head_bytes"] * (sampled > 0) * c["byte_s"],
                    0.0,
                ),
                "allreduce": (0.0, 0.0, (c["ar_bytes"] * tokens + c["ar_fixed"]) if tokens > 0 else 0.0),
            }
        key = (type(tokens), tokens, type(sampled), sampled)  # the same inputs give the same terms: computed once
        parts = self._parts.get(key)
        if parts is None:
            lc, lm = self._linear(tokens, self._weight_bytes(tokens))
            hc, hm = self._head(sampled)
            parts = (float(lc), float(lm), float(self._elementwise(tokens)), float(hc), float(hm))
            parts += (float(self._allreduce(tokens)),)
            if len(self._parts) < 1 << 16:
                self._parts[key] = parts
        lc, lm, elem, hc, hm, ar = parts
        stream = c["byte_s0"] / self._curves.streaming_efficiency
        floor = self._curves.elementwise[0] * c["stage_layers"] if decode_seqs > 0 else 0.0
        return {
            "linear": (lc, lm, 0.0),
            "elementwise": (0.0, elem, 0.0),
            "attn_prefill": (
                c["attn_flops"] * prefill_pairs * c["flop_s"],
                c["kv_bytes"] * prefill_tokens * stream,
                0.0,
            ),
            "attn_decode": (c["attn_flops"] * kv_tokens * c["flop_s"], c["kv_bytes"] * kv_tokens * stream + floor, 0.0),
            "lm_head": (hc, hm, 0.0),
            "allreduce": (0.0, 0.0, ar),
        }

    # The measured parts (costs "curves" and "profiled"), vectorised over token counts: the simulator tabulates them.
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

    def cpu_s(self, sequences: float) -> float:
        """The engine's host seconds for one iteration over ``sequences`` running sequences (see ``engine``)."""
        return self._engine.cpu_s(sequences, tp=self.tp)

    def gpu_s(self, *work: Any, **named: Any) -> float:
        """The GPU's seconds of one iteration (arguments as :meth:`resources`): the sum of operator rooflines, or the
        busiest resource if ``overlap``; with ``pp > 1``, the micro-batched pipeline of the class docstring."""
        if self.pp == 1:
            res = self.resources(*work, **named)
            return max(_totals(res)) if self.overlap else _sequential(res)
        p, pairs, dec, kv, sampled = _work(*work, **named)
        m, c = self.micro_batches, self._c
        assert m is not None  # resolved by __post_init__
        per = self.resources(p / m, pairs / m, dec / m, kv / m, 0.0)
        per.pop("lm_head")  # the last stage samples once per iteration (below)
        tokens = (p + dec) / m
        p2p = (c["p2p_bytes"] * tokens + c["p2p_fixed"]) if tokens > 0 else 0.0
        head = max(c["head_flops"] * sampled * c["flop_s"], c["head_bytes"] * (sampled > 0) * c["byte_s"])
        return head + (m + self.pp - 1) * _sequential(per) + (self.pp - 1) * p2p

    def iteration_s(self, *work: Any, **named: Any) -> float:
        """Duration of one iteration (arguments as :meth:`resources`): the GPU's time (:meth:`gpu_s`) and the
        engine's host time over the running sequences (``max(decode_seqs, sampled)``), added for an eager engine,
        overlapped (the larger) for one that schedules ahead."""
        _, _, dec, _, sampled = _work(*work, **named)
        return self._engine.combine(self.gpu_s(*work, **named), self.cpu_s(max(dec, sampled)))

    def sequential_cost(self):
        """A fast scalar ``f(prefill_tokens, prefill_pairs, decode_seqs, kv_tokens, sampled)`` equal to
        :meth:`iteration_s` for a dense model executed sequentially (the simulator's hot path); ``None`` otherwise."""
        if self.overlap or self.model.experts > 1 or self.pp > 1:
            return None
        if self._curves is not None:
            return self._tabulated_cost()
        c = self._c
        fs, bs = c["flop_s"], c["byte_s"]
        lin_f, lin_b = c["lin_flops"] * fs, c["shared_bytes"] * bs
        att_f, kv_b = c["attn_flops"] * fs, c["kv_bytes"] * bs
        head_f, head_b = c["head_flops"] * fs, c["head_bytes"] * bs
        ar, ar0 = c["ar_bytes"], c["ar_fixed"]
        dec = max(att_f, kv_b)
        prof = self._engine
        cpu0 = prof.cpu_s(0, tp=self.tp)
        per_seq, hide = prof.per_seq_s, prof.overlap_cpu

        def cost(prefill_tokens, prefill_pairs, decode_seqs, kv_tokens, sampled):
            tok = prefill_tokens + decode_seqs
            lin = lin_f * tok
            gpu = (
                (lin if lin > lin_b else lin_b)
                + max(att_f * prefill_pairs, kv_b * prefill_tokens)
                + dec * kv_tokens
                + max(head_f * sampled, head_b)
                + ar * tok
                + ar0
            )
            cpu = cpu0 + per_seq * (decode_seqs if decode_seqs > sampled else sampled)
            if hide:
                return gpu if gpu > cpu else cpu
            return gpu + cpu

        return cost

    def iteration_cost(self):
        """The engine's scalar iteration cost (:class:`~workbench.serving.cost.CostModel`): :meth:`sequential_cost`
        where it applies, else :meth:`iteration_s`."""
        return self.sequential_cost() or self.iteration_s

    @property
    def decode_lines_fixed(self) -> bool:
        """Sequential execution's decode line of a batch holds at every KV total (the engine asks once per batch)."""
        return not self.overlap

    def _tabulated_cost(self, max_tokens: int = 16384, max_sampled: int = 4096):
        """:meth:`sequential_cost` with measured curves: the token-dependent parts (projections, non-GEMM kernels,
        all-reduces) and the LM head tabulated per token count once, so an iteration costs two look-ups."""
        c, cur = self._c, self._curves
        assert cur is not None
        t = np.arange(max_tokens + 1, dtype=float)
        lc, lm = self._linear(t, c["shared_bytes"])
        tok_tab = (np.maximum(lc, lm) + self._elementwise(t) + self._allreduce(t)).tolist()
        sm = np.arange(max_sampled + 1, dtype=float)
        hc, hm = self._head(sm)
        head_tab = np.maximum(hc, hm).tolist()
        att_f, kv_w = c["attn_flops"] * c["flop_s"], c["kv_bytes"] * c["byte_s0"] / cur.streaming_efficiency
        floor = cur.elementwise[0] * c["stage_layers"]
        dec = max(att_f, kv_w)
        prof = self._engine
        cpu0, per_seq, hide = prof.cpu_s(0, tp=self.tp), prof.per_seq_s, prof.overlap_cpu
        resources = self.resources

        def cost(prefill_tokens, prefill_pairs, decode_seqs, kv_tokens, sampled):
            tok = prefill_tokens + decode_seqs
            if tok > max_tokens or sampled > max_sampled or tok != int(tok) or sampled != int(sampled):
                gpu = _sequential(resources(prefill_tokens, prefill_pairs, decode_seqs, kv_tokens, sampled))
            else:
                gpu = (
                    tok_tab[int(tok)]
                    + head_tab[int(sampled)]
                    + max(att_f * prefill_pairs, kv_w * prefill_tokens)
                    + (dec * kv_tokens + floor if decode_seqs > 0 else 0.0)
                )
            cpu = cpu0 + per_seq * (decode_seqs if decode_seqs > sampled else sampled)
            if hide:
                return gpu if gpu > cpu else cpu
            return gpu + cpu

        return cost

    def breakdown(self, *work: Any, **named: Any) -> pd.DataFrame:
        """Tidy table, one row per operator (arguments as :meth:`resources`; one pipeline stage when ``pp > 1``):
        ``compute_s``, ``memory_s``, ``network_s``, ``time_s`` and ``bound``."""
        res = self.resources(*work, **named)
        rows = []
        for op, (cs, ms, ns) in res.items():
            bound = ("compute", "memory", "network")[int(np.argmax([cs, ms, ns]))] if max(cs, ms, ns) > 0 else "idle"
            rows.append((op, cs, ms, ns, max(cs, ms, ns), bound))
        return pd.DataFrame(rows, columns=["operator", "compute_s", "memory_s", "network_s", "time_s", "bound"])

    def decode_line(self, decode_seqs: int, kv_tokens: float) -> tuple[float, float, float]:
        """A pure-decode iteration's time as ``a + s * kv_tokens``, valid for KV totals up to the returned limit.

        Sequential execution is linear in the resident KV for a fixed batch; overlapped execution (and an engine that
        hides its host step) is the maximum of several lines, so the line binding at ``kv_tokens`` holds up to the
        next crossing (returned, ``inf`` if none).
        """
        cpu = self.cpu_s(decode_seqs)
        if not self.overlap:  # the GPU's time is linear in the resident KV: two points give the line
            a = self.gpu_s(0, 0, decode_seqs, 0.0)
            lines = [(a, (self.gpu_s(0, 0, decode_seqs, 1e6) - a) / 1e6)]
        else:
            comp, mem, net = _totals(self.resources(0, 0, decode_seqs, 0.0))
            comp1, mem1, _ = _totals(self.resources(0, 0, decode_seqs, 1e6))
            lines = [(comp, (comp1 - comp) / 1e6), (mem, (mem1 - mem) / 1e6), (net, 0.0)]
        if self._engine.overlap_cpu:  # the host's step is one more line (flat in the KV)
            lines.append((cpu, 0.0))
        else:
            lines = [(a + cpu, s) for a, s in lines]
        k = int(np.argmax([a + s * kv_tokens for a, s in lines]))
        a, s = lines[k]
        limit = math.inf
        for a2, s2 in lines:  # where a steeper line overtakes the binding one
            if s2 > s:
                limit = min(limit, (a - a2) / (s2 - s))
        return a, s, limit


def _work(
    prefill_tokens: float = 0,
    prefill_pairs: float = 0,
    decode_seqs: float = 0,
    kv_tokens: float = 0,
    sampled: float | None = None,
) -> tuple[float, float, float, float, float]:
    """The work of one iteration, by position or name (``sampled`` defaults to ``decode_seqs``)."""
    return prefill_tokens, prefill_pairs, decode_seqs, kv_tokens, decode_seqs if sampled is None else sampled


def _totals(res: dict[str, tuple[float, float, float]]) -> tuple[float, float, float]:
    """Compute, memory and network seconds summed over the operators (what overlapped execution is bounded by)."""
    return sum(r[0] for r in res.values()), sum(r[1] for r in res.values()), sum(r[2] for r in res.values())


def _sequential(res: dict[str, tuple[float, float, float]]) -> float:
    """Seconds of the operators run one after another, each at its own roofline."""
    return sum(max(r) for r in res.values())
