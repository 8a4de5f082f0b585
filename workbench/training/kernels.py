"""Measured kernel costs of a training step: GEMM efficiency by the GEMM's size, attention by software era, the
element-wise kernels, and NCCL send/recv by message size.

Two sources, both measured on real GPUs, none fitted to a training run:

* ``datasets/training_validation/kernel_curves.csv`` (derived once by ``scripts/derive_training_curves.py`` from
  Vidur's profiles, Agrawal et al., MLSys'24, on A100 80GB SXM and H100 SXM): the fraction of dense BF16 peak a GEMM
  reaches as a function of its FLOPs per call (:func:`gemm_efficiency`; small GEMMs reach less: the trend Megatron-Core
  reports, "MFU increases from 41% for the smallest model ... to 47-48% for the largest ... because larger GEMMs have
  higher arithmetic intensity"), and NCCL send/recv time between two GPUs by message size, across two DGX nodes and
  within one (:func:`send_recv_s`).
* ``datasets/serving_specs/operator_curves.csv`` (:func:`workbench.serving.opcurves.curves`): the non-GEMM kernels of a
  layer (norms, activation, residual adds) and NCCL all-reduce on one NVSwitch node, used for the TP collectives.

The attention kernels depend on the software era (:data:`ERAS`): ``"2021"`` is Megatron-LM before FlashAttention
(2021-2022: SC'21, MT-NLG, Korthikanti et al., BLOOM): the score and value products are batched GEMMs over all
``s x s`` pairs (the causal mask applied afterwards) and the score-sized tensors go through HBM
(:data:`UNFUSED_ATTENTION_BYTES`); ``"2024"`` runs FlashAttention-2 at its published fraction of peak
(:data:`ATTENTION_EFFICIENCY`), counting causal attention's FLOPs as half of the full product, the convention of the
papers that state the efficiency (FlashAttention-2, arXiv 2307.08691, Sec. 4.1: "with causal mask, we divide this
number by 2").
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .._deps import remember
from .._validate import one_of
from ..data import require
from ..serving.specs import GPU, Model

__all__ = [
    "ATTENTION_EFFICIENCY",
    "ELEMENTWISE_BACKWARD",
    "ERAS",
    "UNFUSED_ATTENTION_BYTES",
    "KERNEL_CURVES",
    "compute_parts",
    "constant_parts",
    "layout",
    "gemm_efficiency",
    "has_curves",
    "layer_jitter",
    "send_recv_jitter",
    "send_recv_s",
]

KERNEL_CURVES = "training_validation/kernel_curves.csv"
#: Software eras: ``"2021"`` Megatron-LM's kernels before FlashAttention, ``"2024"`` FlashAttention-2 and Transformer
#: Engine (module docstring).
ERAS = ("2021", "2024")

#: Fraction of dense BF16 peak FlashAttention-2 reaches (forward and backward), per GPU generation, with its source,
#: on causal attention's FLOPs (half the full ``s x s`` product, the convention of the sources).
ATTENTION_EFFICIENCY: dict[str, tuple[float, str]] = {
    # "reaching 50-73% of the theoretical maximum FLOPs/s on A100" (forward; Dao, FlashAttention-2, ICLR 2024, arXiv
    # 2307.08691, abstract); the low end is taken: the backward pass, two thirds of the FLOPs, is slower than the
    # forward in the same paper's benchmarks.
    "ampere": (0.50, "FlashAttention-2 (arXiv 2307.08691, abstract): forward 50-73% of A100 peak; low end taken"),
    # "FlashAttention-2 achieving only 35% utilization on the H100 GPU" (Shah et al., FlashAttention-3, NeurIPS 2024,
    # arXiv 2407.08608, abstract); FlashAttention-3 appeared in July 2024, after the 2024 runs of the corpus.
    "hopper": (0.35, "FlashAttention-3 paper (arXiv 2407.08608, abstract): FlashAttention-2 reaches 35% of H100 peak"),
}

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


@remember
def _curves() -> dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]]:
    df = pd.read_csv(require(KERNEL_CURVES), keep_default_na=False)
    missing = {"kind", "generation", "topology", "x", "value"} - set(df.columns)
    if missing:
        raise ValueError(f"{KERNEL_CURVES}: missing columns {sorted(missing)}")
    out: dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]] = {}
    for (kind, generation, topology), rows in df.groupby(["kind", "generation", "topology"]):
        rows = rows.sort_values("x")
        out[(str(kind), str(generation), str(topology))] = (
            np.log(rows["x"].to_numpy(float)),
            rows["value"].to_numpy(float),
        )
    return out


def has_curves(generation: str) -> bool:
    """Whether ``generation`` (a GPU record's ``generation``) has measured GEMM curves (ampere, hopper)."""
    return ("gemm", generation, "") in _curves()


def gemm_efficiency(generation: str, flops):
    """Fraction of dense BF16 peak a GEMM of ``flops`` FLOPs per call reaches on ``generation`` (measured, clamped
    to the measured range).

    Examples
    --------
    >>> [round(float(gemm_efficiency("hopper", w)), 2) for w in (4e9, 1e11, 1e12)]
    [0.29, 0.64, 0.69]
    """
    lx, y = _curves()[("gemm", generation, "")]
    return np.interp(np.log(np.maximum(np.asarray(flops, dtype=float), 1.0)), lx, y)


def send_recv_s(generation: str, nbytes, nic_bytes_per_s, inter_node=True):
    """Seconds of one NCCL send/recv of ``nbytes`` between two GPUs: the measured curve of ``generation`` across two
    nodes (``inter_node``) or within one, extended beyond the largest measured message at its last rate, and never
    faster than the per-GPU NIC (``nic_bytes_per_s``: the measured pair ran alone, a training job's GPUs all send at
    once, one NIC each) for inter-node messages. Generations without a curve: ``nbytes / nic_bytes_per_s``.

    Examples
    --------
    >>> round(float(send_recv_s("ampere", 12.6e6, 25e9)) * 1e3, 2)  # a 12.6 MB activation: 15 GB/s, not 25
    0.84
    """
    b = np.maximum(np.asarray(nbytes, dtype=float), 1.0)
    inter = np.asarray(inter_node, dtype=bool)
    out = []
    for topo in ("inter-node", "nvlink"):
        key = ("send_recv", generation, topo)
        if key not in _curves():
            out.append(b / nic_bytes_per_s)
            continue
        lx, y = _curves()[key]
        t = np.interp(np.log(b), lx, y)
        hi = float(np.exp(lx[-1]))
        t = np.where(b > hi, y[-1] + (b - hi) * y[-1] / hi, t)  # beyond the largest message: its rate
        out.append(np.maximum(t, y[0] + b / nic_bytes_per_s) if topo == "inter-node" else t)
    return np.where(inter, out[0], out[1])


def _jitter(key: tuple[str, str, str], x) -> np.ndarray:
    if key not in _curves():
        raise ValueError(f"no measured {key[0]} curve for generation {key[1]!r} (measured: ampere, hopper)")
    lx, y = _curves()[key]
    return np.interp(np.log(np.maximum(np.asarray(x, dtype=float), 1e-12)), lx, y)


def layer_jitter(generation: str, seconds):
    """Coefficient of variation over repeats of one transformer layer's kernels taking ``seconds`` on
    ``generation`` (Vidur's profiles: the root of the summed per-operator variances over the layer's time, measured
    curve clamped to its range; ``kernel_curves.csv``'s ``layer_jitter`` rows).

    Examples
    --------
    >>> [round(float(layer_jitter("hopper", t)) * 100, 1) for t in (1e-3, 5e-3)]  # percent
    [0.3, 0.8]
    """
    return _jitter(("layer_jitter", generation, ""), seconds)


def send_recv_jitter(generation: str, nbytes, inter_node=True):
    """Coefficient of variation over repeats of one NCCL send/recv of ``nbytes`` (Vidur's profiles, ``std / median``
    by message size, across two nodes or within one; ``kernel_curves.csv``'s ``send_recv_jitter`` rows).

    Examples
    --------
    >>> round(float(send_recv_jitter("hopper", 12.6e6)) * 100, 1)  # percent, one 12.6 MB activation across nodes
    0.5
    """
    inter = np.asarray(inter_node, dtype=bool)
    return np.where(
        inter,
        _jitter(("send_recv_jitter", generation, "inter-node"), nbytes),
        _jitter(("send_recv_jitter", generation, "nvlink"), nbytes),
    )


def layout(model: Model) -> tuple[int, bool]:
    """``(FFN weight matrices, tied embeddings)`` of a model, read from its parameter count: 3 matrices for a gated
    FFN (SwiGLU: gate, up and down), 2 otherwise; the input embedding shared with the output layer (GPT) or not
    (Llama): whichever of the four layouts' parameter counts is nearest the model's.

    Examples
    --------
    >>> from workbench.training import MODELS
    >>> layout(MODELS["gpt3-175b"]), layout(MODELS["llama3-405b"])
    ((2, True), (3, False))
    """
    h, d = model.hidden, model.qk_head_dim
    attn = h * model.heads * d * 2 + h * model.kv_heads * d * 2
    experts = model.experts if model.is_moe else 1
    emb = model.vocab * h
    best = min(
        ((g, tied) for g in (2, 3) for tied in (True, False)),
        key=lambda k: abs(
            model.layers * (attn + k[0] * h * model.ffn * experts) + emb * (1 if k[1] else 2) - model.params
        ),
    )
    return best


def constant_parts(model: Model, gpu: GPU, tp, pp, micro_batch, full) -> dict:
    """:func:`compute_parts` at one efficiency per GPU generation (:func:`workbench.training.specs.efficiency`):
    ``flops_per_token`` (``x 4/3`` with full recomputation) at that fraction of dense BF16 peak; the parts are zero
    but ``forward_s`` and ``total_s``, and ``measured`` is False.

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS
    >>> p = constant_parts(MODELS["gpt-1.7b"], GPUS["A100"], 1, 1, 1, False)
    >>> round(float(p["total_s"]) * 1e3, 1)  # 2,048 tokens x 11.3 GFLOP at 0.55 x 312 TFLOP/s
    134.5
    """
    from .specs import efficiency

    tp, pp = np.asarray(tp, dtype=float), np.asarray(pp, dtype=float)
    tokens = np.asarray(micro_batch, dtype=float) * model.seq_len
    passes = np.where(np.asarray(full, dtype=bool), 4.0, 3.0)
    total = model.flops_per_token * passes / 3.0 * tokens / (tp * pp) / (gpu.bf16_tflops * 1e12 * efficiency(gpu))
    zero = np.zeros_like(total)
    return dict(gemm_fwd_s=zero, attention_fwd_s=zero, elementwise_fwd_s=zero, forward_s=total / passes,
                total_s=total, measured=False)  # fmt: skip


def compute_parts(
    model: Model, gpu: GPU, tp, pp, micro_batch, full, era: str = "2024", ep=1, selective=None, sequence_parallel=True
) -> dict:
    """Kernel seconds of one micro-batch on one GPU of a mean pipeline stage, in parts (arrays over plans), from the
    measured kernels (the module docstring); GPU generations without measured curves (blackwell) use the generation's
    one efficiency constant for everything (:func:`workbench.training.specs.efficiency`).

    ``tp, pp, micro_batch, ep`` are arrays (or scalars) of plan fields, ``full`` whether full recomputation is on,
    ``selective`` whether selective recomputation is on (default: wherever ``full`` is not; it recomputes the
    attention core, which 2021's kernels keep in memory and FlashAttention never stores), ``sequence_parallel``
    whether the norms, dropouts and residual adds run on ``1 / tp`` of the tokens. Per layer the four
    projections (QKV, attention output, FFN in, FFN out, their shapes on one TP shard) at the measured efficiency of
    each call's FLOPs, the backward twice the forward; the output layer (``tokens x hidden x vocab / tp``) once per
    micro-batch, spread over the stages (:func:`~workbench.training.specs.stage_loads` puts it on the last); MoE
    experts at the tokens routed to each.

    Returns ``gemm_fwd_s, attention_fwd_s, elementwise_fwd_s, forward_s`` (one forward pass) and ``total_s``
    (forward, backward and recomputation), and ``measured`` (whether measured curves applied).

    Examples
    --------
    >>> from workbench.training import MODELS, GPUS
    >>> def shares(name, tp, era):  # of one forward pass: GEMMs, attention, element-wise kernels (SC'21 plans)
    ...     p = compute_parts(MODELS[name], GPUS["A100"], tp, 1, 1, True, era)
    ...     return [round(float(p[k] / p["forward_s"]), 2) for k in ("gemm_fwd_s", "attention_fwd_s", "elementwise_fwd_s")]
    >>> shares("gpt-1.7b", 1, "2021"), shares("gpt-1t", 8, "2021")  # unfused attention weighs most at small hidden
    ([0.56, 0.35, 0.09], [0.94, 0.04, 0.02])
    """
    one_of("era", era, ERAS)
    tp, pp = np.asarray(tp, dtype=float), np.asarray(pp, dtype=float)
    b, full = np.asarray(micro_batch, dtype=float), np.asarray(full, dtype=bool)
    selective = ~full if selective is None else np.asarray(selective, dtype=bool)
    s, h, L = float(model.seq_len), float(model.hidden), float(model.layers)
    tokens = b * s
    peak = gpu.bf16_tflops * 1e12
    gen = gpu.generation
    if not has_curves(gen):
        return constant_parts(model, gpu, tp, pp, micro_batch, full)
    eff = functools.partial(gemm_efficiency, gen)

    def gemm(m, k, n, calls=1.0):  # seconds of ``calls`` GEMMs of m x k by k x n
        w = 2.0 * m * k * n
        return calls * w / (peak * eff(w))

    d, kv, f = float(model.qk_head_dim), float(model.kv_heads), float(model.ffn)
    heads = float(model.heads)
    g = layout(model)[0] - 1  # FFN-in matrices (gate and up fused in one GEMM)
    attn_proj = gemm(tokens, h, (heads + 2 * kv) * d / tp) + gemm(tokens, heads * d / tp, h)
    if model.is_moe:  # each local expert sees the tokens routed to it: top_k x the ep ranks' tokens / experts
        ep = np.asarray(ep, dtype=float)
        routed = tokens * model.active_experts * ep / model.experts
        calls = model.experts / ep
        ffn = gemm(routed, h, g * f / tp, calls) + gemm(routed, f / tp, h, calls)
    else:
        ffn = gemm(tokens, h, g * f / tp) + gemm(tokens, f / tp, h)
    head = gemm(tokens, h, model.vocab / tp)
    gemm_fwd = (L * (attn_proj + ffn) + head) / pp
    bh = b * heads / tp  # attention heads of the micro-batch on one TP shard
    if era == "2021":  # batched QK^T and PV over all s x s pairs, and the score-sized tensors through HBM
        w = 2.0 * s * d * s * bh  # one batched product (QK^T or PV) over the shard's heads
        core = 2.0 * w / (peak * eff(w))
        fwd_bytes, bwd_bytes = UNFUSED_ATTENTION_BYTES
        traffic = bh * s * s / gpu.hbm_bytes_per_s
        attn_fwd = L / pp * (core + fwd_bytes * traffic)
        attn_bwd = L / pp * (2.0 * core + bwd_bytes * traffic)
        attn_recompute = np.where(full | selective, attn_fwd, 0.0)
    else:  # FlashAttention-2: causal FLOPs (half of 4 s^2 d per head forward) at the stated efficiency
        fa = ATTENTION_EFFICIENCY[gen][0]
        attn_fwd = L / pp * (2.0 * s * s * d * bh) / (peak * fa)
        attn_bwd = 2.0 * attn_fwd
        attn_recompute = np.where(full, attn_fwd, 0.0)
    from ..serving.opcurves import curves

    ffn_width = model.ffn * (model.active_experts if model.is_moe else 1)
    measured = curves(gen)
    if measured is None:
        raise ValueError(f"generation {gen!r} has GEMM curves but no element-wise ones in operator_curves.csv")
    c0, ch, ci = measured.elementwise  # per layer: c0 + passes over tokens x hidden and over tokens x FFN / tp
    sp = np.where(np.asarray(sequence_parallel, dtype=bool), tp, 1.0)
    elementwise = L / pp * (c0 + (ch * tokens * h / sp + ci * tokens * ffn_width / tp) * 2.0 / gpu.hbm_bytes_per_s)
    forward = gemm_fwd + attn_fwd + elementwise
    total = (
        3.0 * gemm_fwd
        + attn_fwd
        + attn_bwd
        + attn_recompute
        + elementwise * (1.0 + ELEMENTWISE_BACKWARD)
        + np.where(full, gemm_fwd - head / pp + elementwise, 0.0)  # the recompute forward (not the output layer)
    )
    return dict(gemm_fwd_s=gemm_fwd, attention_fwd_s=attn_fwd, elementwise_fwd_s=elementwise, forward_s=forward,
                total_s=total, measured=True)  # fmt: skip
