"""Derive the serving roofline's measured efficiency curves from measured operator profiles.

Input: ``vidur-profiles/`` on the data search path (Vidur, Agrawal et al., MLSys'24: per-operator times measured on
A100 80GB SXM (DGX), H100 SXM (DGX) and A40, eager PyTorch, BF16), and LLMServingSim's profiles of a GeForce RTX 4090
and an RTX PRO 6000 Blackwell Server Edition (``datasets/serving_specs/profiles/llmservingsim-*-llama31-8b.csv``:
Llama-3.1-8B's layer under vLLM 0.19, eager, BF16, TP 1; see ``datasets/serving_specs/README.md``). Output:
``datasets/serving_specs/operator_curves.csv``, one row per curve point, read by :mod:`workbench.serving.opcurves`.
Three kinds of rows, per GPU generation (ampere from the A100 profiles, hopper from H100, ada from A40, the closest
profiled PCIe GDDR data-center card) or per GPU profiled itself (``RTX-4090`` and ``RTX-PRO-6000``: their own curves,
which take precedence over their generation's; a GeForce card's clocks and its half-rate BF16 peak with FP32
accumulation put its GEMMs at ~100% of that datasheet peak, which no data-center Ada card reaches, and no Blackwell
card other than the RTX PRO 6000 is profiled):

``gemm``
    ``x`` = tokens in the iteration (the GEMMs' M dimension), ``value`` = the fraction of the roofline reached by a
    transformer layer's four projections (QKV, attention output, MLP up/gate, MLP down) on one tensor-parallel shard:
    ``max(FLOPs / peak, weight bytes / HBM bandwidth) / measured`` with datasheet peak and bandwidth (the model
    computes the same ideal and divides by this curve). Median over every profiled model and TP degree at that token
    count, then a median per quarter-octave of tokens. Memory-bound GEMMs reach ~0.7-0.8 of HBM peak; near the ridge
    (100-700 tokens) the measured time is ~1.5-2x the ideal.
``elementwise``
    The non-GEMM operators of a layer (two RMS/layer norms, rotary embedding, the MLP activation, residual adds) as
    ``c0 + (c_h * tokens * hidden * 2 + c_i * tokens * ffn / tp * 2) / HBM bandwidth``, fitted by non-negative least
    squares over all profiles of the generation: ``x`` names the coefficient (0 = c0 seconds per layer, 1 = c_h,
    2 = c_i: effective passes over the activations), ``value`` its value.
``allreduce``
    NCCL all-reduce time (seconds) by message size (``x`` in bytes, fp16 elements x 2) for ``tp`` GPUs, on an
    NVSwitch node (``topology`` ``nvswitch``: the DGX profiles) or NVLink-bridged pairs (``nvlink-pairs``: the
    pairwise profiles, as in PCIe servers): the median over ranks and repeats, then per quarter-octave of size. The
    smallest messages give the latency floor (~25-65 us per call, not the 10 us of a single NVLink hop).

Run ``python scripts/derive_operator_curves.py`` to rewrite the table (and print how well the curves reproduce the
profiles, leaving each model out in turn); ``--check`` compares with the committed table instead (exit 1 if it
differs by more than 1%).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from workbench.data import require
from workbench.serving.specs import model
from workbench.tables import write_or_check

OUT = Path(__file__).resolve().parents[1] / "datasets" / "serving_specs" / "operator_curves.csv"

#: Profile -> (generation or GPU, BF16 dense peak FLOP/s, memory bytes/s) of the GPU it was measured on (datasheets:
#: A100 80GB SXM 312 TFLOPS / 2,039 GB/s; H100 SXM 989 TFLOPS / 3,350 GB/s; A40 149.7 TFLOPS / 696 GB/s; GeForce
#: RTX 4090 165.2 TFLOPS (BF16 with FP32 accumulate, dense) / 1,008 GB/s, NVIDIA Ada GPU architecture whitepaper;
#: RTX PRO 6000 Blackwell Server Edition 500 TFLOPS / 1,597 GB/s, ``gpus.csv``).
PROFILED = {
    "a100": ("ampere", 312e12, 2.039e12),
    "h100": ("hopper", 989e12, 3.35e12),
    "a40": ("ada", 149.7e12, 0.696e12),
    "rtx4090": ("RTX-4090", 165.2e12, 1.008e12),
    "rtxpro6000": ("RTX-PRO-6000", 500e12, 1.597e12),
}
#: LLMServingSim's profiles (vLLM's own layer modules, timed one at a time), by profile: the committed table
#: (``datasets/serving_specs/profiles``) and the model profiled; each is read for the layer's four projections and its
#: elementwise operators (two RMS norms, each fused with a residual add, the rotary embedding, the MLP activation).
LLMSERVINGSIM = {
    "rtx4090": ("llmservingsim-rtx4090-llama31-8b.csv", "Llama-3.1-8B"),
    "rtxpro6000": ("llmservingsim-rtxpro6000-llama31-8b.csv", "Llama-3.1-8B"),
}
PROFILES_DIR = Path(__file__).resolve().parents[1] / "datasets" / "serving_specs" / "profiles"
LLMSERVINGSIM_GEMMS = ("qkv_proj", "o_proj", "gate_up_proj", "down_proj")
LLMSERVINGSIM_ELEMENTWISE = {"layernorm": 2, "rotary_emb": 1, "act_fn": 1}
GEMMS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")
ELEMENTWISE = ("input_layernorm", "attn_rope", "post_attention_layernorm", "mlp_act", "add")
TOPOLOGY = {"dgx": "nvswitch", "pairwise_nvlink": "nvlink-pairs"}
COLUMNS = ["kind", "generation", "topology", "tp", "x", "value"]


def layer_table(profile: str) -> pd.DataFrame:
    """Every profiled (model, tp, tokens) of one GPU: measured GEMM and elementwise seconds per layer and shard, and
    the ideal GEMM time at datasheet peak."""
    gen, peak, bw = PROFILED[profile]
    if profile in LLMSERVINGSIM:
        return _llmservingsim_layers(profile, gen, peak, bw)
    root = require(f"vidur-profiles/compute/{profile}")
    frames = []
    for path in sorted(root.glob("*/*/mlp.csv")):
        d = pd.read_csv(path)
        h, heads, kvh = d["n_embd"], d["n_head"], d["n_kv_head"]
        ffn, tp, t = d["n_expanded_embd"], d["num_tensor_parallel_workers"], d["num_tokens"]
        gated = d["use_gated_mlp"].astype(str).str.lower().eq("true")
        head_dim = h / heads
        params = (h * (heads + 2 * kvh) * head_dim + h * h + h * ffn * np.where(gated, 3, 2)) / tp
        ideal = np.maximum(2 * t * params / peak, 2 * params / bw)
        frames.append(
            pd.DataFrame(
                {
                    "model": path.parent.name,
                    "tp": tp,
                    "tokens": t,
                    "hidden": h,
                    "ffn": ffn,
                    "ideal_s": ideal,
                    "gemm_s": sum(d[f"time_stats.{op}.median"] for op in GEMMS) * 1e-3,
                    "elementwise_s": sum(d.get(f"time_stats.{op}.median", 0.0) for op in ELEMENTWISE) * 1e-3,
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    out["generation"] = gen
    return out


def _llmservingsim_layers(profile: str, gen: str, peak: float, bw: float) -> pd.DataFrame:
    """An LLMServingSim profile as :func:`layer_table` rows (the model's layer as ``models.csv`` states it, TP 1)."""
    name, model_name = LLMSERVINGSIM[profile]
    d = pd.read_csv(PROFILES_DIR / name)
    t = d.pivot_table(index="tokens", columns="layer", values="time_us", aggfunc="median")
    m = model(model_name)
    h, ffn, head_dim = m.hidden, m.ffn, m.qk_head_dim
    params = h * (m.heads + 2 * m.kv_heads) * head_dim + m.heads * head_dim * h + 3 * h * ffn  # gated MLP
    tokens = t.index.to_numpy(float)
    return pd.DataFrame(
        {
            "model": model_name,
            "tp": 1,
            "tokens": tokens,
            "hidden": h,
            "ffn": ffn,
            "ideal_s": np.maximum(2 * tokens * params / peak, 2 * params / bw),
            "gemm_s": t[list(LLMSERVINGSIM_GEMMS)].sum(axis=1).to_numpy() * 1e-6,
            "elementwise_s": sum(t[op] * k for op, k in LLMSERVINGSIM_ELEMENTWISE.items()).to_numpy() * 1e-6,
            "generation": gen,
        }
    )


def _quarter_octaves(x: pd.Series) -> pd.Series:
    return np.floor(np.log2(x) * 4).astype(int)


def gemm_curve(layers: pd.DataFrame) -> pd.DataFrame:
    """Median fraction of the ideal per token count, then per quarter-octave (x = geometric mean of the bin)."""
    eff = (layers["ideal_s"] / layers["gemm_s"]).groupby(layers["tokens"]).median()
    df = pd.DataFrame({"tokens": eff.index.to_numpy(float), "eff": eff.to_numpy()})
    g = df.groupby(_quarter_octaves(df["tokens"]))
    return pd.DataFrame({"x": np.exp(g["tokens"].apply(lambda s: np.log(s).mean())), "value": g["eff"].median()})


def elementwise_fit(layers: pd.DataFrame, bw: float) -> np.ndarray:
    """``c0, c_h, c_i`` of the elementwise model (non-negative least squares)."""
    a = np.column_stack(
        [
            np.ones(len(layers)),
            layers["tokens"] * layers["hidden"] * 2 / bw,
            layers["tokens"] * layers["ffn"] / layers["tp"] * 2 / bw,
        ]
    )
    coef, _ = nnls(a / layers["elementwise_s"].to_numpy()[:, None], np.ones(len(layers)))  # relative error
    return coef


def allreduce_curves() -> pd.DataFrame:
    rows = []
    root = require("vidur-profiles/network")
    for path in sorted(root.glob("*/all_reduce.csv")):
        gpu, _, topo = path.parent.name.partition("_")
        gen = PROFILED[gpu][0]
        d = pd.read_csv(path)
        d = d[d["devices_per_node"] == d["num_workers"]]  # one node: the workers share its NVLink/NVSwitch
        for tp, g in d.groupby("num_workers"):
            med = g.groupby("size")["time_stats.all_reduce.median"].median()
            size = med.index.to_numpy(float) * 2  # fp16 elements -> bytes
            b = pd.DataFrame({"size": size, "t": med.to_numpy() * 1e-3}).groupby(_quarter_octaves(pd.Series(size)))
            x = np.exp(b["size"].apply(lambda s: np.log(s).mean()))
            y = np.maximum.accumulate(b["t"].median().to_numpy())  # a larger message never takes less time
            rows += [(gen, TOPOLOGY[topo], int(tp), float(xi), float(yi)) for xi, yi in zip(x, y, strict=True)]
    return pd.DataFrame(rows, columns=["generation", "topology", "tp", "x", "value"])


def derive() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The curve table and a report of how well it reproduces the profiles (leave one model out)."""
    parts, report = [], []
    for profile, (gen, _peak, bw) in PROFILED.items():
        layers = layer_table(profile)
        curve = gemm_curve(layers)
        parts.append(curve.assign(kind="gemm", generation=gen, topology="", tp=0))
        coef = elementwise_fit(layers, bw)
        parts.append(
            pd.DataFrame({"x": [0, 1, 2], "value": coef}).assign(kind="elementwise", generation=gen, topology="", tp=0)
        )
        for held in layers["model"].unique() if layers["model"].nunique() > 1 else ():  # leave one model out
            rest, test = layers[layers["model"] != held], layers[layers["model"] == held]
            c = gemm_curve(rest)
            eff = np.interp(np.log(test["tokens"]), np.log(c["x"]), c["value"])
            e = elementwise_fit(rest, bw)
            pred = (
                test["ideal_s"] / eff
                + e[0]
                + (e[1] * test["tokens"] * test["hidden"] + e[2] * test["tokens"] * test["ffn"] / test["tp"]) * 2 / bw
            )
            err = pred / (test["gemm_s"] + test["elementwise_s"]) - 1
            report.append(
                {
                    "generation": gen,
                    "held_out": held,
                    "median_abs_error": float(err.abs().median()),
                    "p90_abs_error": float(err.abs().quantile(0.9)),
                }
            )
    parts.append(allreduce_curves().assign(kind="allreduce"))
    table = pd.concat(parts, ignore_index=True)[COLUMNS]
    table["tp"] = table["tp"].astype(int)
    return table, pd.DataFrame(report)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed operator_curves.csv")
    args = ap.parse_args(argv)
    table, report = derive()
    print(report.round(3).to_string(index=False))
    return write_or_check(table, OUT, check=args.check, rtol=0.01)


if __name__ == "__main__":
    raise SystemExit(main())
