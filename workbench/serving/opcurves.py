"""Measured operator costs for the serving roofline: efficiency curves per GPU generation, and Vidur's profiles.

Two sources, both from operator times measured on real GPUs: Vidur's authors' (Agrawal et al., "Vidur: A
Large-Scale Simulation Framework for LLM Inference", MLSys'24; ``vidur-profiles`` on the data search path), and for
two cards LLMServingSim's (``datasets/serving_specs/profiles``):

* :func:`curves` reads ``datasets/serving_specs/operator_curves.csv``, derived once from the profiles by
  ``scripts/derive_operator_curves.py`` and committed (so it needs no data at run time). Per GPU generation (ampere
  from the A100 profiles, hopper from H100, ada from A40, the closest profiled PCIe GDDR card): the fraction of the
  roofline a layer's projections reach as a function of the tokens in the iteration (GEMM shape), the cost of the
  non-GEMM kernels of a layer, and NCCL all-reduce time by message size and GPU count (NVSwitch node or NVLink-bridged
  pairs). Two cards have curves of their own, from LLMServingSim's profiles of them under vLLM 0.19 (GeForce RTX
  4090, RTX PRO 6000 Blackwell Server Edition; no all-reduce: profiled at TP 1), which take precedence over their
  generation's. Other generations without a profile (blackwell, cdna3) have no curves; the roofline then uses its
  stated constants. Engines that run a custom all-reduce kernel (``engines.csv`` column ``allreduce``) take its measured
  times from ``allreduce_custom.csv`` where measured (H100: ~9-45 µs per call up to 4 MB, against NCCL's 38 µs
  floor).
* :func:`profiled_layer` reads the measured per-layer times of one model on one GPU at one tensor-parallel degree
  (``vidur-profiles/compute/<gpu>/<org>/<model>/mlp.csv``): every non-attention operator, interpolated in tokens.
  A model is matched by its architecture (hidden size, FFN size, heads, KV heads), not its name, so Llama-3.1-8B uses
  the Meta-Llama-3-8B profile. Only the GPUs Vidur measured (A100 80GB SXM, H100 SXM) and its TP degrees (1, 2, 4, 8).

Examples
--------
>>> c = curves("ampere")
>>> [round(float(c.gemm_efficiency(t)), 2) for t in (1, 140, 4096)]  # GEMV, near the ridge, a large GEMM
[0.74, 0.43, 0.73]
>>> round(float(c.allreduce_s(2 * 8192, tp=8, topology="nvswitch")) * 1e6)  # one token of a 70B model: the floor
62
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .._contracts import NONNEGATIVE, accepts, output
from .._deps import remember
from ..data import find, require
from ..tables import frame
from .specs import GPU, Model

__all__ = [
    "CURVES_CSV",
    "OperatorCurves",
    "ProfiledLayer",
    "curves",
    "gpu_curves",
    "profiled_layer",
    "profiled_gpu",
    "topology",
]

#: The derived curves (on the data search path: the project's ``datasets/`` unless shadowed).
CURVES_CSV = "serving_specs/operator_curves.csv"
#: Measured all-reduce times of custom one-/two-shot kernels (engines with ``allreduce="custom"``), with sources.
CUSTOM_ALLREDUCE_CSV = "serving_specs/allreduce_custom.csv"

#: GPUs of the hardware table whose operators Vidur measured, and the profile directory of each.
PROFILED_GPUS = {"A100-80GB": "a100", "H100-SXM": "h100"}
#: Non-attention operators of one layer in the profiles (``emb`` is once per iteration, not per layer).
GEMM_OPS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")
LAYER_OPS = (
    "input_layernorm",
    "attn_pre_proj",
    "attn_rope",
    "attn_post_proj",
    "post_attention_layernorm",
    "mlp_up_proj",
    "mlp_act",
    "mlp_down_proj",
    "add",
)


@accepts()
def topology(g: GPU) -> str:
    """How the GPUs of a replica reach each other: ``pcie`` for cards without NVLink (scale-up links no faster than
    their PCIe: the L40S), ``nvlink-pairs`` for PCIe cards with NVLink bridges between pairs (the rest over PCIe),
    ``nvswitch`` otherwise (SXM boards on an NVSwitch).

    Examples
    --------
    >>> from workbench.serving.specs import gpu
    >>> [topology(gpu(n)) for n in ("H100-SXM", "A100-80GB-PCIe", "L40S")]
    ['nvswitch', 'nvlink-pairs', 'pcie']
    """
    if g.scaleup_gbps <= g.pcie_gbps:
        return "pcie"
    return "nvlink-pairs" if "pcie" in g.gpu.lower() else "nvswitch"


@output
@dataclass(frozen=True)
class OperatorCurves:
    """One GPU generation's measured curves (see the module docstring)."""

    generation: str
    gemm_log_tokens: np.ndarray
    gemm_eff: np.ndarray
    elementwise: tuple[float, float, float]  # c0 (s per layer), passes over tokens*hidden, over tokens*ffn/tp
    allreduce: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]]  # (topology, tp) -> (log bytes, seconds)
    custom_allreduce: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = dataclasses.field(default_factory=dict)

    @accepts(tokens=NONNEGATIVE)
    def gemm_efficiency(self, tokens):
        """Fraction of ``max(FLOPs / peak, bytes / bandwidth)`` a layer's projections reach at ``tokens`` tokens
        (clamped to the measured range)."""
        t = np.maximum(np.asarray(tokens, dtype=float), 1.0)
        return np.interp(np.log(t), self.gemm_log_tokens, self.gemm_eff)

    @property
    def streaming_efficiency(self) -> float:
        """The fraction of HBM bandwidth a memory-bound kernel reaches: the GEMM curve at one token (a GEMV)."""
        return float(self.gemm_eff[0])

    @accepts(tokens=NONNEGATIVE)
    def elementwise_s(self, tokens, hidden: int, ffn: int, tp: int, bandwidth: float):
        """Seconds of one layer's non-GEMM kernels (norms, rotary, activation, residual adds) on one shard."""
        c0, ch, ci = self.elementwise
        t = np.asarray(tokens, dtype=float)
        return np.where(t > 0, c0 + (ch * t * hidden + ci * t * ffn / tp) * 2.0 / bandwidth, 0.0)

    @accepts()
    def allreduce_tps(self, topo: str) -> list[int]:
        return sorted(tp for (tt, tp) in self.allreduce if tt == topo)

    @accepts(nbytes=NONNEGATIVE)
    def allreduce_s(self, nbytes, *, tp: int, topology: str, custom: bool = False):
        """Seconds of one all-reduce of ``nbytes`` over ``tp`` GPUs: NCCL's measured curve of the smallest measured
        GPU count >= ``tp`` (the largest if none), flat below the smallest message (the latency floor) and extended
        with its last bandwidth above the largest. With ``custom``, messages up to the largest measured size of a
        custom kernel's curve for exactly this topology and ``tp`` take that curve instead (NCCL above it, and where
        no custom kernel was measured)."""
        if custom and (topology, tp) in self.custom_allreduce:
            lx, y = self.custom_allreduce[(topology, tp)]
            b = np.maximum(np.asarray(nbytes, dtype=float), 1.0)
            nccl = self.allreduce_s(b, tp=tp, topology=topology)
            return np.where(np.log(b) <= lx[-1], np.interp(np.log(b), lx, y), nccl)
        tps = self.allreduce_tps(topology)
        if not tps:
            raise ValueError(f"no all-reduce curve for topology {topology!r} on {self.generation}")
        key = next((n for n in tps if n >= tp), tps[-1])
        lx, y = self.allreduce[(topology, key)]
        b = np.maximum(np.asarray(nbytes, dtype=float), 1.0)
        out = np.interp(np.log(b), lx, y)
        x_hi = math.exp(lx[-1])
        return np.where(b > x_hi, y[-1] * (b / x_hi), out)  # the largest message's bandwidth, bytes / seconds


@remember
def _curve_table(relpath: str = CURVES_CSV) -> pd.DataFrame:
    path = require(relpath)
    df = frame(
        path, ("kind", "generation", "topology", "tp", "x", "value"), what="operator-curve table", keep_default_na=False
    )
    missing = {"kind", "generation", "topology", "tp", "x", "value"} - set(df.columns)
    if missing:
        raise ValueError(f"{path}: missing columns {sorted(missing)}")
    return df


@accepts()
@remember
def curves(generation: str) -> OperatorCurves | None:
    """The measured curves of a GPU generation, ``None`` for a generation without a profile."""
    df = _curve_table()
    g = df[df["generation"] == generation]
    if g.empty:
        return None
    gemm = g[g["kind"] == "gemm"].sort_values("x")
    ew = g[g["kind"] == "elementwise"].sort_values("x")["value"].to_numpy(float)
    if gemm.empty or len(ew) != 3:
        raise ValueError(f"{CURVES_CSV}: generation {generation!r} needs gemm rows and three elementwise rows")
    ar = {}
    for (topo, tp), rows in g[g["kind"] == "allreduce"].groupby(["topology", "tp"]):
        rows = rows.sort_values("x")
        ar[(str(topo), int(tp))] = (np.log(rows["x"].to_numpy(float)), rows["value"].to_numpy(float))
    custom = {}
    cu = frame(require(CUSTOM_ALLREDUCE_CSV), what="all-reduce table")
    for (topo, tp), rows in cu[cu["generation"] == generation].groupby(["topology", "tp"]):
        rows = rows.sort_values("bytes")
        custom[(str(topo), int(tp))] = (np.log(rows["bytes"].to_numpy(float)), rows["seconds"].to_numpy(float))
    return OperatorCurves(
        generation,
        np.log(gemm["x"].to_numpy(float)),
        gemm["value"].to_numpy(float),
        (float(ew[0]), float(ew[1]), float(ew[2])),
        ar,
        custom,
    )


@accepts()
def gpu_curves(g: GPU) -> OperatorCurves | None:
    """The curves a GPU runs on: its own where it was profiled itself (RTX 4090, RTX PRO 6000), else its
    generation's, ``None`` where neither was profiled (a Deployment's ``costs`` then default to ``"stated"``).

    Examples
    --------
    >>> from workbench.serving.specs import gpu
    >>> [getattr(gpu_curves(gpu(n)), "generation", None) for n in ("H100-SXM", "RTX-PRO-6000", "B200")]
    ['hopper', 'RTX-PRO-6000', None]
    """
    return curves(g.gpu) or curves(g.generation)


@output
@dataclass(frozen=True)
class ProfiledLayer:
    """Measured seconds of one layer's non-attention operators (one shard) by tokens, from one profile file."""

    path: str
    tokens: np.ndarray
    gemm: np.ndarray  # the four projections of one layer
    other: np.ndarray  # the layer's norms, rotary embedding, activation and residual adds
    embedding: np.ndarray  # the embedding lookup, once per iteration

    @accepts(tokens=NONNEGATIVE)
    def at(self, column: str, tokens):
        """``column`` (``gemm``, ``other`` or ``embedding``) interpolated in tokens; zero at zero tokens; beyond the
        largest profiled count, extended with the last measured slope."""
        y = getattr(self, column)
        t = np.asarray(tokens, dtype=float)
        out = np.interp(t, self.tokens, y)
        slope = (y[-1] - y[-2]) / (self.tokens[-1] - self.tokens[-2])
        out = np.where(t > self.tokens[-1], y[-1] + slope * (t - self.tokens[-1]), out)
        return np.where(t > 0, out, 0.0)


@accepts()
def profiled_gpu(g: GPU) -> str:
    """The profile directory of a GPU Vidur measured; ``ValueError`` naming the covered GPUs otherwise."""
    if g.gpu not in PROFILED_GPUS:
        raise ValueError(
            f"no measured operator profile for GPU {g.gpu!r}; the profiles cover {', '.join(PROFILED_GPUS)} "
            "(use costs='curves' for other GPUs)"
        )
    return PROFILED_GPUS[g.gpu]


@remember
def _profile_index(gpu_dir: str) -> tuple[tuple[str, tuple[int, int, int, int], tuple[int, ...]], ...]:
    """Per profile file of one GPU: its path, architecture (hidden, ffn, heads, kv heads) and TP degrees."""
    root = require(f"vidur-profiles/compute/{gpu_dir}", hint="(Vidur's operator profiles: see the data README)")
    out = []
    for path in sorted(root.glob("*/*/mlp.csv")):
        arch_cols = ["n_embd", "n_expanded_embd", "n_head", "n_kv_head", "num_tensor_parallel_workers"]
        head = frame(path, what="operator profile")
        if head.empty or set(arch_cols) - set(head.columns):
            raise ValueError(f"{path}: malformed operator profile: needs rows and the columns {arch_cols}")
        r = head.iloc[0]
        arch = (int(r["n_embd"]), int(r["n_expanded_embd"]), int(r["n_head"]), int(r["n_kv_head"]))
        out.append((str(path), arch, tuple(sorted({int(x) for x in head["num_tensor_parallel_workers"]}))))
    return tuple(out)


@remember
def _load_profile(path: str, tp: int) -> ProfiledLayer:
    d = frame(path, what="operator profile")
    gemm = [f"time_stats.{op}.median" for op in GEMM_OPS]
    other = [f"time_stats.{op}.median" for op in LAYER_OPS if op not in GEMM_OPS and f"time_stats.{op}.median" in d]
    need = {"num_tokens", "num_tensor_parallel_workers", "time_stats.emb.median", *gemm}
    if need - set(d.columns):
        raise ValueError(f"{path}: malformed operator profile: missing columns {sorted(need - set(d.columns))}")
    d = d[d["num_tensor_parallel_workers"] == tp]
    vals = d[gemm + other + ["time_stats.emb.median"]].to_numpy(float)
    ok = (np.isfinite(vals) & (vals >= 0)).all(axis=1)
    if not ok.all():
        raise ValueError(f"{path}:{int(d.index[~ok][0]) + 2}: non-finite or negative operator time")
    g = d.assign(
        gemm=d[gemm].sum(axis=1) * 1e-3, other=d[other].sum(axis=1) * 1e-3, emb=d["time_stats.emb.median"] * 1e-3
    )
    g = g.groupby("num_tokens")[["gemm", "other", "emb"]].median().sort_index()
    if len(g) < 2:
        raise ValueError(f"{path}: fewer than two token counts at tp={tp}")
    return ProfiledLayer(path, g.index.to_numpy(float), *(g[c].to_numpy() for c in ("gemm", "other", "emb")))


@accepts()
def profiled_layer(g: GPU, m: Model, tp: int) -> ProfiledLayer:
    """Vidur's measured layer of model ``m`` on GPU ``g`` at tensor parallelism ``tp``; ``ValueError`` naming what
    the profiles cover when they do not cover this one, ``FileNotFoundError`` when the profiles are not on the data
    search path."""
    gpu_dir = profiled_gpu(g)
    if m.experts > 1:
        raise ValueError(f"the operator profiles hold dense models only, not {m.model!r}")
    arch = (m.hidden, m.ffn, m.heads, m.kv_heads)
    index = _profile_index(gpu_dir)
    hits = [(p, tps) for p, a, tps in index if a == arch]
    if not hits:
        known = ", ".join(
            f"{Path(p).parent.name} (hidden {a[0]}, ffn {a[1]}, heads {a[2]}/{a[3]})" for p, a, _ in index
        )
        raise ValueError(f"no operator profile on {g.gpu} matches {m.model} (hidden {arch[0]}, ffn {arch[1]}, "
                         f"heads {arch[2]}/{arch[3]}); profiled: {known}")  # fmt: skip
    path, tps = hits[0]
    if tp not in tps:
        raise ValueError(f"{Path(path).parent.name} on {g.gpu} was profiled at tp in {list(tps)}, not tp={tp}")
    return _load_profile(path, tp)


def profiles_available() -> bool:
    """Whether Vidur's operator profiles are on the data search path."""
    return find("vidur-profiles/compute") is not None
