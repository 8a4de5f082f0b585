"""Attention kernels as measured: one measured profile, carried to other shapes, GPUs and software eras by mechanism.

The measurement (``datasets/serving_specs/attention_curves.csv``, derived by ``scripts/derive_attention_curves.py``
from Vidur's profile, Agrawal et al. MLSys'24, ``vidur-profiles/attention/a100/...``; see its PROVENANCE): the
attention kernels of one 70B GQA layer at tensor parallelism 2 on an A100 80GB SXM, i.e. :data:`REFERENCE` 32 query
and 4 KV heads of dimension 128 per GPU in fp16, under Sarathi's FlashAttention backend, per layer and GPU: decode by
batch (1-128) x KV length (32-4,032) and prefill by chunk (64-4,096) x KV prefix.

What carries over, and how:

* **Decode** streams the KV cache: a batch of ``b`` requests over ``L`` tokens reads ``b x L x`` (KV bytes per token,
  layer and GPU). A deployment's decode is taken as the reference's at the same length and the *same bytes*: the
  reference batch ``b x bytes / 4,096`` (4,096 bytes per token: 4 KV heads x 2 x 128 x 2 bytes), so a shape with one
  KV head per GPU reads a quarter of the reference's bytes per request and runs as a quarter of its batch (the
  kernel's work items, requests x KV heads, scale the same way). The measured time above its launch floor (the
  smallest measured time, 15 µs) is bandwidth: on another GPU it scales by the HBM ratio; the floor does not.
  Beyond the measured batches the kernel is at full occupancy: the largest measured batch moving the same bytes
  (a longer context); beyond the measured lengths the time grows with the slope of their upper half
  (bandwidth-bound); below one reference request, in proportion to the work.
* **Prefill** is compute: a chunk of ``c`` tokens after a prefix of ``p`` holds ``c p + c (c + 1) / 2`` causal
  (query, key) pairs of ``4 x head_dim x query heads`` FLOPs per layer and GPU. The profiled kernel computes the whole
  rectangle of ``c (p + c)`` pairs: its FLOP rate over the rectangle is smooth in the shape (60-143 TFLOP/s, growing
  with the chunk and the keys), while its rate over the causal pairs halves at a zero prefix, i.e. it does not skip
  the blocks the causal mask empties. Kernels that do skip them (FlashAttention-2's varlen kernels and later, and
  xformers': FA2 paper, section 3.1.1) do the causal pairs at the same rate. One kernel launch per layer serves every
  sequence of an iteration (the launch floor once); its rate depends on how many thread blocks it runs (a block per
  128-token query tile and query head) and how many keys each query reads. An iteration runs at the reference's rate
  for the same blocks (a chunk of ``4 x query heads`` tokens per tile, 128 for the reference's 32 heads) and the same
  keys per query (``pairs / tokens``); beyond the measured range the rate holds at its edge (a longer chunk, or a
  prefix past the 4,096-token context the profile spans, runs at the rate of the largest measured shape). It carries
  over to other GPUs and kernel generations by the fraction of the dense peak each kernel family reaches
  (:data:`UTILIZATION`, from the kernels' papers): FlashAttention-2 reaches up to 73% of an A100's peak forward (Dao
  2023, arXiv:2307.08691, abstract) but only 35% of an H100's, FlashAttention-3 up to 75% (Shah et al. 2024,
  arXiv:2407.08608, abstract); the first FlashAttention class, which xformers' memory-efficient kernel of 2023
  belongs to, 25-40% of an A100's (FA2 paper, abstract; 40% taken, the top of that range), and on Hopper in
  proportion to FA2's share. The profiled kernel is taken as FlashAttention-2 class (it is FA2's paged-KV path).
  A GPU profiled itself has its own entry, keyed by its name, ahead of its generation's: on the RTX PRO 6000
  Blackwell Server Edition (compute capability 12.0, where FlashAttention-3 does not run) vLLM 0.19's FA2 prefill
  ran at 268-273 TFLOP/s over the causal pairs for 1,384- and 2,048-token chunks after 8-16k cached tokens of
  Llama-3.1-8B (32 query heads; LLMServingSim's profile, casys-kaist/LLMServingSim commit 5daddb21,
  ``profiler/perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/tp1/attention.csv``, MIT license): 54% of its 500 TFLOPS
  dense peak (``gpus.csv``), against FA2's 73% on an A100.

* **Decode kernel families.** The profiled decode kernel (FlashAttention's paged ``flash_attn_with_kvcache``) reads
  each KV head once for all the query heads that share it (grouped-query attention). vLLM's own PagedAttention kernel
  of 2023 (v1, and v2's split-KV form) does not: it runs one thread block per query head and sequence, each
  streaming its KV head's cache, so a KV head is read once per query head it serves (vLLM issue #1880, 2023-12-01:
  "vLLM's current paged attention kernel also does not leverage the benefits of MQA/GQA"). Part of the repeated reads
  hit the L2 cache. How much reaches HBM is measured in vLLM PR #2744 (2024-02-04, the kernel benchmark
  ``benchmark_paged_attention.py`` on an A100-40GB-PCIe, 1,555 GB/s, 64 query and 8 KV heads, context 1,024, bf16):
  paged attention v1 took 37.541 µs at batch 1 and 68.585 µs at batch 4, i.e. 10.35 µs more per request, which at
  the GPU's bandwidth is 16.1 MB per request against the 4.19 MB its KV heads hold (1,024 x 8 x 128 x K and V x 2
  bytes): 3.84 reads of each KV head by its 8 query heads, the first read plus :data:`PAGED_V1_REREAD` = 41% of each
  of the 7 repeated ones. :func:`decode_read_factor` carries that to any grouping (no extra reads for multi-head
  attention); the deployment's decode then runs as the measured kernel moving that many more bytes.

TensorRT-LLM's decode kernel before XQA (v0.8) is the same design: its masked multi-head attention kernel (MMHA)
launches one thread block per query head and sequence (``decoderMaskedMultiheadAttentionLaunch.h``, grid
``{num_heads, batch_size}``), FasterTransformer's ``decoder_masked_multihead_attention``, which vLLM's kernel adapts
(the header of vLLM's ``csrc/attention/attention_kernels.cu``); XQA, "reducing data loading" for MQA and GQA, raised
Llama-70B on one H200 from 1,227 to 2,941 output tokens/s per GPU (``docs/source/blogs/XQA-kernel.md``). Family
``"mmha"`` reads as ``"paged-v1"`` does, at the share of repeats measured for vLLM's kernel (no measurement of MMHA's
own is public).

Which family an engine runs is its profile's ``attention`` (``engines.csv``) for prefill and ``decode_attention``
for decode (``paged-v1`` for a 2023 vLLM, ``mmha`` for TensorRT-LLM v0.5-v0.7, ``gqa`` for every other profile): a
2023 vLLM prefilled prompts with xformers (``vllm-v0``), Sarathi-Serve's artifact with the profiled kernel itself (``flash2-paged``: no causal
skipping), current vLLM with FA3 on Hopper and FA2 elsewhere (``vllm/v1/attention/backends/fa_utils.py``,
``get_flash_attn_version``). The decode kernels are taken as one family (memory-bound at the measured efficiency on
every engine).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._contracts import NONNEGATIVE, accepts, output
from .._deps import remember
from ..data import require
from ..tables import frame

__all__ = ["ATTENTION_CSV", "DECODE_KERNELS", "KERNELS", "PAGED_V1_REREAD", "REFERENCE", "UTILIZATION",
           "AttentionCurves", "attention_curves", "decode_read_factor", "family_factor"]  # fmt: skip

ATTENTION_CSV = "serving_specs/attention_curves.csv"
#: The profiled geometry per GPU and the GPU (A100 80GB SXM: 312 dense FP16/BF16 TFLOP/s, 2,039 GB/s).
REFERENCE = {
    "q_heads": 32,
    "kv_heads": 4,
    "head_dim": 128,
    "kv_bytes": 2,
    "peak_flops": 312e12,
    "hbm_bytes_s": 2.039e12,
}
#: KV bytes per token, layer and GPU of the reference (4 KV heads x K and V x 128 x 2 bytes).
REF_KV_BYTES = 4 * 2 * 128 * 2
#: Attention kernel families an engine runs for prefill (``engines.csv`` column ``attention``): whether the kernel
#: skips the blocks the causal mask empties, and the family whose :data:`UTILIZATION` it reaches.
KERNELS = {
    "flash2-paged": (False, "flash2"),
    "flash2": (True, "flash2"),
    "flash3": (True, "flash3"),
    "xformers": (True, "xformers"),
}
#: Fraction of a generation's dense 16-bit peak a family's forward kernel reaches (sources in the module docstring);
#: ``flash3`` exists on Hopper only (elsewhere the engine runs ``flash2``).
UTILIZATION = {
    ("flash2", "ampere"): 0.73,
    ("flash2", "ada"): 0.73,
    ("flash2", "hopper"): 0.35,
    ("flash3", "hopper"): 0.75,
    ("xformers", "ampere"): 0.40,
    ("xformers", "ada"): 0.40,
    ("xformers", "hopper"): 0.40 * 0.35 / 0.73,
    ("flash2", "RTX-PRO-6000"): 0.54,  # measured on the card (the module docstring)
}


#: Decode attention kernel families (``engines.csv`` column ``decode_attention``), each with whether it runs a thread
#: block per query head (re-reading a grouped-query model's KV head for each of its query heads).
DECODE_KERNELS = {"gqa": False, "paged-v1": True, "mmha": True}

#: vLLM PR #2744's measured paged-attention v1 kernel (A100-40GB-PCIe, 64 query / 8 KV heads, context 1,024, bf16):
#: microseconds at batch 1 and 4, the GPU's HBM bandwidth, and the KV bytes one request's context holds per layer.
_PR2744 = {"v1_b1_us": 37.541, "v1_b4_us": 68.585, "hbm_bytes_s": 1.555e12, "kv_bytes": 1024 * 8 * 128 * 2 * 2,
           "q_per_kv": 8}  # fmt: skip
#: Fraction of each repeated per-query-head read of a KV head that reaches HBM in vLLM's 2023 PagedAttention kernel
#: (the rest hits L2), from :data:`_PR2744`: ``(slope x bandwidth / bytes - 1) / (q_per_kv - 1)`` = 0.41.
PAGED_V1_REREAD = (
    (_PR2744["v1_b4_us"] - _PR2744["v1_b1_us"]) / 3 * 1e-6 * _PR2744["hbm_bytes_s"] / _PR2744["kv_bytes"] - 1
) / (_PR2744["q_per_kv"] - 1)


@accepts()
def decode_read_factor(kernel: str, q_per_kv: float) -> float:
    """How many times a decode kernel of family ``kernel`` reads the KV cache from HBM, relative to reading each KV
    head once, for ``q_per_kv`` query heads per KV head: 1 for ``"gqa"`` kernels, ``1 + (q_per_kv - 1) x``
    :data:`PAGED_V1_REREAD` for the kernels with a thread block per query head (vLLM's 2023 ``"paged-v1"``,
    TensorRT-LLM's ``"mmha"`` before XQA).

    Examples
    --------
    >>> decode_read_factor("gqa", 8), round(decode_read_factor("paged-v1", 8), 2), decode_read_factor("paged-v1", 1)
    (1.0, 3.84, 1.0)
    """
    if kernel not in DECODE_KERNELS:
        raise ValueError(f"decode attention kernel must be one of {', '.join(DECODE_KERNELS)}, got {kernel!r}")
    if not q_per_kv >= 1:
        raise ValueError(f"q_per_kv must be >= 1 (query heads per KV head), got {q_per_kv}")
    return 1.0 + (q_per_kv - 1.0) * PAGED_V1_REREAD if DECODE_KERNELS[kernel] else 1.0


@output
@dataclass(frozen=True)
class AttentionCurves:
    """The measured reference kernels (seconds per layer and GPU): ``decode[b, L]`` on ``batches`` x ``lengths``;
    ``prefill`` per chunk of ``chunks``: its prefixes and times; ``floor`` the launch floor."""

    batches: np.ndarray
    lengths: np.ndarray
    decode: np.ndarray
    chunks: np.ndarray
    prefixes: tuple
    prefill: tuple
    floor: float

    @accepts(batch=NONNEGATIVE, length=NONNEGATIVE)
    def decode_s(self, batch, length):
        """Reference decode seconds per layer of ``batch`` (any positive real) requests over ``length`` tokens."""
        b, L = np.broadcast_arrays(np.asarray(batch, dtype=float), np.asarray(length, dtype=float))
        shape = b.shape
        b, L = b.ravel(), L.ravel()
        bmax = self.batches[-1]
        L = np.where(b > bmax, L * b / bmax, L)  # past the measured batches: the same bytes at full occupancy
        b = np.minimum(b, bmax)
        f, lens, top = self.floor, self.lengths, self.lengths[-1]
        rows = np.stack([np.interp(np.clip(L, lens[0], top), lens, self.decode[k]) for k in range(self.batches.size)])
        half = np.array([np.interp(top / 2, lens, self.decode[k]) for k in range(self.batches.size)])
        slope = (self.decode[:, -1] - half) / (top / 2)  # bandwidth-bound beyond the longest measured context
        rows = rows + slope[:, None] * np.maximum(L - top, 0.0)[None, :]
        short = (lens[0] > L)[None, :]
        rows = np.where(short, f + (rows - f) * (L / lens[0])[None, :], rows)
        bc = np.clip(b, 1.0, self.batches[-1])
        j = np.clip(np.searchsorted(self.batches, bc, side="right") - 1, 0, self.batches.size - 2)
        w = (bc - self.batches[j]) / (self.batches[j + 1] - self.batches[j])
        idx = np.arange(b.size)
        t = rows[j, idx] * (1 - w) + rows[j + 1, idx] * w
        t = np.where(b < 1, f + (t - f) * b, t)
        return t.reshape(shape)

    @accepts(chunk=NONNEGATIVE, prefix=NONNEGATIVE)
    def prefill_flop_rate(self, chunk, prefix):
        """The reference kernel's FLOP/s over the rectangle ``chunk x (prefix + chunk)`` above its launch floor, for a
        chunk of ``chunk`` tokens after ``prefix`` (held at the measured range's edges; at most the family's best)."""
        c, p = np.broadcast_arrays(np.asarray(chunk, dtype=float), np.asarray(prefix, dtype=float))
        shape = c.shape
        c, p = c.ravel(), p.ravel()
        flops = 4 * REFERENCE["head_dim"] * REFERENCE["q_heads"]
        best = UTILIZATION[("flash2", "ampere")] * REFERENCE["peak_flops"]
        rates = []
        for k in range(self.chunks.size):  # each measured chunk's rate along its prefixes
            pk, tk, ck = self.prefixes[k], self.prefill[k], self.chunks[k]
            r = np.minimum(ck * (pk + ck) * flops / np.maximum(tk - self.floor, 1e-12), best)  # launch-bound: best
            rates.append(np.interp(np.clip(p, pk[0], pk[-1]), pk, r))
        R = np.stack(rates)  # [chunk, points]
        lg = np.log(self.chunks)
        lc = np.log(np.clip(c, self.chunks[0], self.chunks[-1]))
        j = np.clip(np.searchsorted(lg, lc, side="right") - 1, 0, lg.size - 2)
        w = (lc - lg[j]) / (lg[j + 1] - lg[j])
        idx = np.arange(c.size)
        return (R[j, idx] * (1 - w) + R[j + 1, idx] * w).reshape(shape)


@accepts()
@remember
def attention_curves() -> AttentionCurves:
    """The committed measured curves (``attention_curves.csv``); a malformed table is an error naming the file."""
    df = frame(require(ATTENTION_CSV), what="attention-curve table")
    need = {"kind", "batch", "chunk", "tokens", "value"}
    if need - set(df.columns):
        raise ValueError(f"{ATTENTION_CSV}: missing columns {sorted(need - set(df.columns))}")
    if not np.isfinite(df["value"]).all() or (df["value"] <= 0).any():
        raise ValueError(f"{ATTENTION_CSV}: non-finite or non-positive kernel time")
    dec = df[df["kind"] == "decode"].pivot_table(index="batch", columns="tokens", values="value")
    if dec.isna().any().any() or len(dec) < 2:
        raise ValueError(f"{ATTENTION_CSV}: the decode rows must fill a (batch x tokens) grid")
    pre = df[df["kind"] == "prefill"]
    chunks = np.array(sorted(pre["chunk"].unique()), dtype=float)
    prefixes, times = [], []
    for c in chunks:
        rows = pre[pre["chunk"] == c].sort_values("tokens")
        prefixes.append(rows["tokens"].to_numpy(float))
        times.append(rows["value"].to_numpy(float) * 1e-3)
    decode = dec.to_numpy(float) * 1e-3
    return AttentionCurves(
        dec.index.to_numpy(float), dec.columns.to_numpy(float), decode, chunks, tuple(prefixes), tuple(times),
        float(decode[0, 0]),
    )  # fmt: skip


@accepts()
def family_factor(kernel: str, generation: str, peak_flops: float, gpu_name: str = "") -> tuple[bool, float]:
    """Whether a ``kernel`` family skips the causally masked blocks, and how many times the reference's FLOP rate it
    reaches on a GPU of ``generation`` with dense 16-bit peak ``peak_flops`` (1 for FlashAttention-2 on the
    reference A100); a GPU measured itself (``gpu_name`` in :data:`UTILIZATION`) at its own utilisation."""
    if kernel not in KERNELS:
        raise ValueError(f"attention kernel must be one of {tuple(KERNELS)}, got {kernel!r}")
    skip, family = KERNELS[kernel]
    if family == "flash3" and generation != "hopper":
        family = "flash2"  # FlashAttention-3 runs on Hopper only
    u = UTILIZATION.get((family, gpu_name), UTILIZATION.get((family, generation)))
    if u is None:
        raise ValueError(f"no measured attention utilisation for {kernel!r} on generation {generation!r}")
    return skip, u * peak_flops / (UTILIZATION[("flash2", "ampere")] * REFERENCE["peak_flops"])
