"""Derive the training model's measured kernel curves from Vidur's operator and network profiles.

Input: ``vidur-profiles/`` on the data search path (Vidur, Agrawal et al., MLSys'24; MIT license: per-operator times
measured on A100 80GB SXM (DGX) and H100 SXM (DGX), eager PyTorch, BF16; NCCL send/recv between two GPUs). Output:
``datasets/training_validation/kernel_curves.csv``, one row per curve point, read by
:mod:`workbench.training.kernels`. Four kinds of rows, per GPU generation (ampere from the A100 profiles, hopper from
H100):

``gemm``
    ``x`` = FLOPs of one GEMM call (``2 M N K``), ``value`` = the fraction of dense BF16 peak it reaches: every
    projection of every profiled model (QKV, attention output, MLP up/gate, MLP down) at every tensor-parallel degree
    and every token count of at least 256 (the compute-bound side of the roofline ridge, where training's GEMMs run),
    the median per quarter-octave of FLOPs. Small GEMMs reach less of the peak than large ones (launch, tail and
    wave quantisation): on H100 ~0.3 at 4 GFLOP, ~0.7 from 0.5 TFLOP per call; on A100 ~0.5 and ~0.75.
``send_recv``
    NCCL send/recv between two GPUs, seconds (``value``) by message size (``x``, bytes: fp16 elements x 2), the median
    over repeats then per quarter-octave of size, non-decreasing: ``topology`` ``inter-node`` (the two GPUs in two DGX
    nodes, ``devices_per_node == 1``: ~15.5 GB/s on A100, ~72 GB/s on H100 for large messages, a ~17-24 us floor)
    and ``nvlink`` (one node).
``layer_jitter``
    The variability of one transformer layer's kernels over repeats: ``x`` = the layer's time (seconds: the sum of
    the medians of its profiled operators, the embedding left out), ``value`` = its coefficient of variation, the
    square root of the sum of the operators' variances (each ``time_stats.<op>.std`` squared: the operators' times
    taken as independent) over the layer's time; every profiled model, tensor-parallel degree and token count of at
    least 256, the median per quarter-octave of layer time (~0.3-2%).
``send_recv_jitter``
    The same for one NCCL send/recv: ``x`` = message bytes, ``value`` = ``std / median`` over repeats, the median
    per quarter-octave of size, by ``topology`` as ``send_recv``.

Every input file is named with its sha256 in ``datasets/training_validation/README.md``. Run
``python scripts/derive_training_curves.py`` to rewrite the table; ``--check`` compares with the committed table
instead (exit 1 if it differs by more than 1%).
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.data import require
from workbench.tables import write_or_check

OUT = Path(__file__).resolve().parents[1] / "datasets" / "training_validation" / "kernel_curves.csv"

#: Profile directory -> (generation, dense BF16 peak FLOP/s of the GPU Vidur measured on: the datasheets' A100 80GB
#: SXM 312 TFLOPS and H100 SXM 989 TFLOPS).
PROFILED = {"a100": ("ampere", 312e12), "h100": ("hopper", 989e12)}
GEMMS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")
#: The smallest token count (GEMM M dimension) kept: below it the projections are bound by reading their weights.
MIN_TOKENS = 256
COLUMNS = ["kind", "generation", "topology", "x", "value"]


def _quarter_octaves(x) -> np.ndarray:
    return np.floor(np.log2(np.asarray(x, dtype=float)) * 4).astype(int)


def gemm_points(profile: str) -> pd.DataFrame:
    """Every profiled GEMM call of one GPU: its FLOPs and the fraction of peak it reached."""
    gen, peak = PROFILED[profile]
    frames = []
    for path in sorted(require(f"vidur-profiles/compute/{profile}").glob("*/*/mlp.csv")):
        d = pd.read_csv(path)
        d = d[d["num_tokens"] >= MIN_TOKENS]
        h, heads, kvh = d["n_embd"], d["n_head"], d["n_kv_head"]
        ffn, tp, t = d["n_expanded_embd"], d["num_tensor_parallel_workers"], d["num_tokens"]
        gated = d["use_gated_mlp"].astype(str).str.lower().eq("true")
        head_dim = h / heads
        # (K, N) of each projection on one shard
        shapes = {
            "attn_pre_proj": (h, (heads + 2 * kvh) * head_dim / tp),
            "attn_post_proj": (heads * head_dim / tp, h),
            "mlp_up_proj": (h, ffn * np.where(gated, 2, 1) / tp),
            "mlp_down_proj": (ffn / tp, h),
        }
        for op, (k, n) in shapes.items():
            flops = 2.0 * t * k * n
            seconds = d[f"time_stats.{op}.median"] * 1e-3
            frames.append(pd.DataFrame({"flops": flops, "eff": flops / seconds / peak}))
    out = pd.concat(frames, ignore_index=True)
    out["generation"] = gen
    return out


def gemm_curve(points: pd.DataFrame) -> pd.DataFrame:
    g = points.groupby(_quarter_octaves(points["flops"]))
    return pd.DataFrame({"x": np.exp(g["flops"].apply(lambda s: np.log(s).mean())), "value": g["eff"].median()})


def send_recv_curves() -> pd.DataFrame:
    rows = []
    for profile, (gen, _peak) in PROFILED.items():
        d = pd.read_csv(require(f"vidur-profiles/network/{profile}_dgx/send_recv.csv"))
        for dpn, topo in ((1, "inter-node"), (2, "nvlink")):
            g = d[d["devices_per_node"] == dpn]
            med = g.groupby("size")["time_stats.send_recv.median"].median()
            size = med.index.to_numpy(float) * 2  # fp16 elements -> bytes
            b = pd.DataFrame({"size": size, "t": med.to_numpy() * 1e-3}).groupby(_quarter_octaves(size))
            x = np.exp(b["size"].apply(lambda s: np.log(s).mean()))
            y = np.maximum.accumulate(b["t"].median().to_numpy())  # a larger message never takes less time
            rows += [(gen, topo, float(xi), float(yi)) for xi, yi in zip(x, y, strict=True)]
    return pd.DataFrame(rows, columns=["generation", "topology", "x", "value"])


def layer_jitter_curve(profile: str) -> pd.DataFrame:
    """Coefficient of variation of one layer's time over repeats, by the layer's time, per quarter-octave."""
    frames = []
    for path in sorted(require(f"vidur-profiles/compute/{profile}").glob("*/*/mlp.csv")):
        d = pd.read_csv(path)
        d = d[d["num_tokens"] >= MIN_TOKENS]
        ops = [c[len("time_stats.") : -len(".median")] for c in d.columns if c.endswith(".median")]
        ops = [op for op in ops if op != "emb"]
        median = sum(d[f"time_stats.{op}.median"] for op in ops) * 1e-3
        std = np.sqrt(sum(d[f"time_stats.{op}.std"] ** 2 for op in ops)) * 1e-3
        frames.append(pd.DataFrame({"t": median.to_numpy(), "cv": (std / median).to_numpy()}))
    pts = pd.concat(frames, ignore_index=True)
    g = pts.groupby(_quarter_octaves(pts["t"]))
    return pd.DataFrame({"x": np.exp(g["t"].apply(lambda s: np.log(s).mean())), "value": g["cv"].median()})


def send_recv_jitter_curves() -> pd.DataFrame:
    rows = []
    for profile, (gen, _peak) in PROFILED.items():
        d = pd.read_csv(require(f"vidur-profiles/network/{profile}_dgx/send_recv.csv"))
        for dpn, topo in ((1, "inter-node"), (2, "nvlink")):
            g = d[d["devices_per_node"] == dpn]
            size = g["size"].to_numpy(float) * 2
            cv = (g["time_stats.send_recv.std"] / g["time_stats.send_recv.median"]).to_numpy()
            b = pd.DataFrame({"size": size, "cv": cv}).groupby(_quarter_octaves(size))
            x = np.exp(b["size"].apply(lambda s: np.log(s).mean()))
            rows += [(gen, topo, float(xi), float(yi)) for xi, yi in zip(x, b["cv"].median(), strict=True)]
    return pd.DataFrame(rows, columns=["generation", "topology", "x", "value"])


def inputs() -> list[tuple[str, str]]:
    """(path on the data search path, sha256) of every input file."""
    files = []
    for profile in PROFILED:
        files += sorted(require(f"vidur-profiles/compute/{profile}").glob("*/*/mlp.csv"))
        files.append(require(f"vidur-profiles/network/{profile}_dgx/send_recv.csv"))
    root = require("vidur-profiles").parent
    return [(str(f.relative_to(root)), hashlib.sha256(f.read_bytes()).hexdigest()) for f in files]


def derive() -> pd.DataFrame:
    parts = []
    for profile, (gen, _peak) in PROFILED.items():
        parts.append(gemm_curve(gemm_points(profile)).assign(kind="gemm", generation=gen, topology=""))
    parts.append(send_recv_curves().assign(kind="send_recv"))
    for profile, (gen, _peak) in PROFILED.items():
        parts.append(layer_jitter_curve(profile).assign(kind="layer_jitter", generation=gen, topology=""))
    parts.append(send_recv_jitter_curves().assign(kind="send_recv_jitter"))
    return pd.concat(parts, ignore_index=True)[COLUMNS]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed kernel_curves.csv")
    ap.add_argument("--inputs", action="store_true", help="print every input file with its sha256")
    args = ap.parse_args(argv)
    if args.inputs:
        for path, digest in inputs():
            print(f"{digest}  {path}")
        return 0
    table = derive()
    return write_or_check(table, OUT, check=args.check, rtol=0.01)


if __name__ == "__main__":
    raise SystemExit(main())
