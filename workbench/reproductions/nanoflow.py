"""NanoFlow (Zhu et al., OSDI'25): serving is compute-bound, and sequential engines leave the optimum on the table.

The measurements come from the roofline model of :mod:`workbench.serving.roofline` through
:func:`workbench.serving.gpus.optimal_throughput`, at the densest batch the KV cache holds, for the paper's model set
(LLaMA-2-70B, LLaMA-3-70B, Qwen2-72B and Mixtral-8x7B on 8 x A100-80GB, LLaMA-3-8B on one A100) and constant-length
workloads (512/512, 1024/512 and 512/1024 input/output tokens). "Optimal" uses the datasheet peaks (the paper's
bound); "overlapped" and "sequential" use the measured operator costs (the roofline over the fraction of it Vidur's
A100 profiles reach at each GEMM shape, measured non-GEMM kernels and NCCL all-reduces: ``costs="curves"``).
"""

from __future__ import annotations

import pandas as pd

from .. import experiments as ex
from .._deps import remember
from ..serving.validation import validation_table
from ..viz import serving_hw as viz
from . import AtLeast, InRange, Measured, Paper, Scale, Within, claim, figure

PAPER = Paper(
    id="nanoflow",
    title="NanoFlow: Towards Optimal Large Language Model Serving Throughput",
    citation="Zhu, Gao, Zhao, et al., OSDI 2025 (arXiv:2408.12757)",
    url="https://arxiv.org/abs/2408.12757",
    notebook="notebooks/10_serving_hardware.ipynb",
    panel="workbench.widgets.serving_hw:serving_hardware_panel",
    dashboard="LLM serving on real hardware",
    experiments=("serving-throughput-bound",),
)

#: (model, GPUs per replica): the paper's evaluated models, on A100-80GB as in its evaluation.
SETUPS = (("Llama-2-70B", 8), ("Llama-3.1-70B", 8), ("Qwen2-72B", 8), ("Mixtral-8x7B", 8), ("Llama-3.1-8B", 1))
WORKLOADS = ((512, 512), (1024, 512), (512, 1024))
GPU = "A100-80GB"


@remember
def bound_table() -> pd.DataFrame:
    """One row per (model, workload): the binding resource, optimal/overlapped/sequential tokens/s per GPU, from the
    ``serving-throughput-bound`` experiment.

    "sequential": the device's operators one after another with the host work hidden (NanoFlow's own non-overlapped
    execution, what its overlap gain is measured against); "eager": the paper's baselines (vLLM 0.5 and its peers of
    mid-2024), which also pay their host work between steps (the eager vLLM profile: Vidur's measured CPU costs, Ray
    at TP >= 2).
    """
    pts = [{"model": name, "gpu": GPU, "tp": tp, "input_tokens": inp, "output_tokens": out,
            "engine": "nanoflow", "baseline_engine": "vllm-v0"}
           for name, tp in SETUPS for inp, out in WORKLOADS]  # fmt: skip
    t = ex.sweep("serving-throughput-bound", pts, client=False, progress=False)
    t = t.rename(columns={"tp": "gpus"})
    t["label"] = [f"{m} x{g} {i}/{o}" for m, g, i, o in zip(t.model, t.gpus, t.input_tokens, t.output_tokens)]
    t = t[["model", "gpus", "input_tokens", "output_tokens", "label", "batch", "bound", "optimal_tokens_per_s",
           "overlapped_tokens_per_s", "sequential_tokens_per_s", "eager_tokens_per_s", "headline_tokens_per_s"]]  # fmt: skip
    t = t.reset_index(drop=True)
    t["overlap_gain"] = t["overlapped_tokens_per_s"] / t["sequential_tokens_per_s"]
    t["sequential_fraction"] = t["sequential_tokens_per_s"] / t["optimal_tokens_per_s"]
    t["eager_fraction"] = t["eager_tokens_per_s"] / t["optimal_tokens_per_s"]
    t["overlapped_fraction"] = t["overlapped_tokens_per_s"] / t["optimal_tokens_per_s"]
    return t


@claim(
    PAPER,
    "compute_bound",
    text="End-to-end LLM serving is compute-bound for most common workloads and LLMs.",
    paper_value="compute-bound for most workloads and models",
    compare=AtLeast(0.5),
    note="Fraction of the (model, workload) cells whose binding resource at the densest batch the KV cache holds is "
    "compute. Where it stops: a small model on one GPU with long outputs (LLaMA-3-8B, 512/1024) is memory-bound; "
    "its KV cache caps the batch before the GEMMs dominate.",
)
def _compute_bound(scale: Scale) -> Measured:
    t = bound_table()
    share = float((t["bound"] == "compute").mean())
    memory = t.loc[t["bound"] != "compute", "label"].tolist()
    return Measured(share, f"{share:.0%} of {len(t)} cells compute-bound", {"not_compute_bound": memory})


@claim(
    PAPER,
    "nanoflow_fraction",
    text="NanoFlow reaches 59-72% of the optimal throughput (68.5% on LLaMA-2-70B).",
    paper_value="59-72% of optimal",
    compare=InRange(0.59, 0.72, partial_low=0.5, partial_high=0.8),
    note="Overlapped execution with the measured operator costs over the peak bound, median over the cells. In "
    "compute-bound cells this is the fraction of peak the A100's GEMMs reach at thousands of tokens in Vidur's "
    "measured profiles (~0.73) less the measured attention kernels' share (issue 37: prefill and decode attention "
    "from Vidur's attention profile instead of a roofline), so the number rests on measured kernels rather than a "
    "stated constant. With the attention kernels measured it moved from 73% (just above the paper's range: partial) "
    "into it (71%). The model's overlap is still perfect, while NanoFlow's nano-batches lose some throughput to "
    "interference between concurrent kernels, which the model does not represent.",
)
def _fraction(scale: Scale) -> Measured:
    v = float(bound_table()["overlapped_fraction"].median())
    return Measured(v, f"{v:.0%} of optimal (median)")


@claim(
    PAPER,
    "sequential_gap",
    text="Existing engines execute operations sequentially and fall well short of the optimal throughput.",
    paper_value="baselines ~36% of optimal on LLaMA-2-70B (68.5% / 1.91)",
    compare=Within(0.36, rel=0.15, partial_rel=0.5),
    note="Sequential execution (the sum of the measured operator costs plus the eager vLLM engine's measured host "
    "work per step: Vidur's CPU profile, growing with the batch, and Ray at TP 8) over the peak bound for "
    "LLaMA-2-70B, median over workloads. With measured kernels (GEMMs below peak near the ridge, non-GEMM kernels, "
    "all-reduce latency floors) the gap is within 15% of the paper's; with the stated constants it was 43%.",
)
def _sequential(scale: Scale) -> Measured:
    t = bound_table()
    v = float(t.loc[t["model"] == "Llama-2-70B", "eager_fraction"].median())
    return Measured(v, f"{v:.0%} of optimal (eager sequential engine, LLaMA-2-70B)")


@claim(
    PAPER,
    "overlap_gain",
    text="Overlapping compute, memory and network inside a device gives up to 1.91x the throughput.",
    paper_value="up to 1.91x",
    compare=Within(1.91, rel=0.1, partial_rel=0.3),
    expected="partial",
    note="Largest overlapped / sequential throughput ratio over the cells (the paper's 'up to'); the median is "
    "lower (~1.6x) and the largest gain is where memory work is largest beside the GEMMs (Mixtral's expert weights, "
    "long outputs). The model's gain counts the measured operator costs (sum of per-operator maxima vs maximum of "
    "per-resource sums) and the hidden per-iteration host work; it leaves out the interference between "
    "overlapped kernels that NanoFlow pays. Partial since issue 37: with the decode attention measured (Vidur's "
    "attention profile: short contexts read the KV cache at well below the streaming efficiency), sequential "
    "execution pays more for Mixtral's 512/1024 cell and the largest gain rose from 1.93x to 2.14x, 12% above the "
    "paper's 1.91x; the overlap the model grants is an upper bound.",
)
def _gain(scale: Scale) -> Measured:
    t = bound_table()
    v = float(t["overlap_gain"].max())
    return Measured(v, f"{v:.2f}x (max), {t['overlap_gain'].median():.2f}x (median)")


@figure(PAPER, "throughput_bound")
def _fig_bound(scale: Scale):
    return viz.throughput_bound_figure(bound_table())


@figure(PAPER, "validation")
def _fig_validation(scale: Scale):
    return viz.validation_figure(validation_table())
