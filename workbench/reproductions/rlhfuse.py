"""Reproduction: RLHFuse (NSDI 2025) -- intra-stage fusion: the Actor and the Critic trained as one fused
bidirectional pipeline.

Zhong et al., "Optimizing RLHF Training for Large Language Models with Stage Fusion" (NSDI 2025; arXiv 2409.13221,
first titled "RLHFuse: Efficient RLHF Training for Large Language Models with Inter- and Intra-Stage Fusion"). The
training stage of an RLHF iteration trains two models; RLHFuse lays the Critic's pipeline on the same GPUs in the
reverse direction so the two fill each other's bubbles, finds the fused schedule by simulated annealing over task
orders, and reports schedules close to a lower bound. The authors released the 12 problem instances of that
evaluation and their schedules (``rlhfuse-schedules``, see its PROVENANCE); the model is
:mod:`workbench.training.fused_pipeline`, measured through the ``rlhf-fused-pipeline`` experiment.

Only the intra-stage part is here (part 1 of issue 27): the end-to-end "up to 3.7x" throughput also needs the
generation tail (inter-stage fusion) and the baselines' systems, and is not spoken to by these claims.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .. import experiments as ex
from ..training import fused_pipeline as fp
from . import AtLeast, AtMost, Measured, Paper, Trend, Verdict, claim

PAPER = Paper(
    "rlhfuse",
    title="Optimizing RLHF Training for Large Language Models with Stage Fusion (RLHFuse)",
    citation="Y. Zhong, Z. Zhang, B. Wu, et al. USENIX NSDI 2025 (arXiv 2409.13221)",
    url="https://arxiv.org/abs/2409.13221",
    notebook="notebooks/12_rlhf_and_checkpointing.ipynb",
    panel="workbench.widgets.rlhf:fused_pipeline_panel",
    dashboard="RLHF: fused Actor/Critic pipelines",
    experiments=("rlhf-fused-pipeline",),
    requires_data=("rlhfuse-schedules/instances.csv",),
)

#: Annealing moves per instance at the full scale: what the compiled decoder runs in about 8 s on one core of the
#: development machine (about 60 ns per task and schedule). A count, not a time budget, so that a claim is
#: deterministic; the quick scale runs a tenth of it.
FULL_SECONDS = 8.0
MEMORY = ("unlimited", "published")


def anneal_iterations(inst: fp.Instance, scale: str) -> int:
    """Annealing moves for ``inst`` at ``scale`` (``"full"``: about 8 s on one core; ``"quick"``: a tenth)."""
    per_call_s = 60e-9 * inst.n_tasks
    n = int(FULL_SECONDS / per_call_s)
    return n if scale == "full" else n // 10


@functools.cache
def instance_table(scale: str) -> pd.DataFrame:
    """Per published instance: the bound, greedy, published, ours (annealing, unlimited memory and capped at the
    published peak) and sequential 1F1B makespans with peak memories, through the registered experiment."""
    frames = []
    for inst in fp.load_instances():
        n = anneal_iterations(inst, scale)
        points = [{"instance": inst.exp, "method": m} for m in ("bound", "sequential-1f1b", "greedy", "published")]
        points += [{"instance": inst.exp, "method": "anneal", "memory": m, "iterations": n} for m in MEMORY]
        frames.append(ex.sweep("rlhf-fused-pipeline", points, client=False, progress=False))
    df = pd.concat(frames, ignore_index=True)
    df["label"] = df.method.where(df.method != "anneal", "ours-" + df.memory)
    wide = df.pivot(index="instance", columns="label", values="makespan")
    mem = df.pivot(index="instance", columns="label", values="peak_memory").add_suffix("_memory")
    out = wide.join(mem[[c for c in mem.columns if not c.startswith("bound")]])
    insts = {i.exp: i for i in fp.load_instances()}
    out["m0_per_pp0"] = [insts[i].m0 / insts[i].pp0 for i in out.index]
    return out.reset_index()


@claim(
    PAPER,
    "published-near-bound",
    text="The fused pipeline schedules found by simulated annealing are close to the lower bound.",
    paper_value="close to the lower bound (the authors' 12 evaluation instances)",
    compare=AtMost(0.02, partial=0.05),
    note="The authors' own schedules, read and checked (every dependency and one task per GPU hold; makespan and "
    "peak memory recomputed from the tasks equal the files' summaries), against the four-term bound of their "
    "lower-bound tool. The value is the largest gap over the 12 instances.",
)
def _published(scale):
    t = instance_table(scale)
    gap = t.published / t.bound - 1
    at = int((gap == 0).sum())
    worst = int(t.instance[gap.idxmax()])
    return Measured(
        float(gap.max()),
        f"{at}/12 at the bound; largest gap {gap.max():.2%} (instance {worst}: {int(t.published[gap.idxmax()])} vs "
        f"{int(t.bound[gap.idxmax()])})",
        {"gap": dict(zip(t.instance.astype(int).astype(str), gap.round(5), strict=True))},
    )


def _ours_vs_published(scale: str, memory: str) -> Measured:
    t = instance_table(scale)
    ours = t[f"ours-{memory}"]
    excess = ours / t.published - 1
    within = int((ours <= 1.02 * t.bound).sum())
    mem = (t[f"ours-{memory}_memory"] / t.published_memory).to_numpy()
    return Measured(
        float(excess.max()),
        f"largest excess over the published makespan {excess.max():.2%} (median {excess.median():.2%}); "
        f"{within}/12 within 2% of the bound; peak memory {mem.min():.1f}-{mem.max():.1f}x the published",
        {
            "excess": dict(zip(t.instance.astype(int).astype(str), excess.round(5), strict=True)),
            "memory_ratio": dict(zip(t.instance.astype(int).astype(str), np.round(mem, 3), strict=True)),
        },
    )


@claim(
    PAPER,
    "ours-vs-published",
    text="A fused schedule near the published one can be found in seconds on one core (the authors ran parallel "
    "annealing on 512+ CPUs for minutes to hours).",
    paper_value="published schedules (solver time 20 s - 83 min on 512+ CPUs, from the traces)",
    compare=AtMost(0.02, partial=0.05),
    note="Ours: the workbench's annealing (list-scheduling decoder, about 8 s of moves per instance at full scale, "
    "a tenth at quick; deterministic move counts; two chains from the best heuristic orders) with no memory cap. "
    "It comes within 1.3% of the published makespans at quick and 0.7% at full (equal on 6 of 12) but mostly "
    "holds far more activation memory (up to 4.4x: it runs forwards ahead), so this is a makespan-only "
    "comparison; the next claim caps memory at the published peak.",
)
def _ours(scale):
    return _ours_vs_published(scale, "unlimited")


@claim(
    PAPER,
    "ours-at-published-memory",
    text="The same, with activation memory per GPU capped at the published schedule's peak.",
    paper_value="published schedules (their peak memory)",
    compare=AtMost(0.02, partial=0.05),
    expected=Verdict.NOT_REPRODUCED,
    note="Not reproduced within the budget: under the published schedules' peak memory as a hard cap (a forward "
    "waits while it would exceed it), seconds of annealing from heuristic orders stay above the published "
    "makespans: median 4.7%, largest 14% at full (4.6% and 17% at quick), worst on the instances with one "
    "micro-batch per stage; on instance 9 it is within 0.7% at a slightly lower peak. The authors' solver "
    "searched for 20 s to 83 min on 512+ CPUs; a better search or decoder under memory is open.",
)
def _ours_mem(scale):
    return _ours_vs_published(scale, "published")


@claim(
    PAPER,
    "fused-vs-sequential",
    text="Fusing the Actor's and the Critic's pipelines removes bubbles: the fused schedule is shorter than "
    "training the two models one after the other with 1F1B.",
    paper_value="fewer pipeline bubbles than separate pipelines",
    compare=AtLeast(1.05, partial=1.0),
    note="Sequential 1F1B: the Actor's 1F1B on all GPUs, then the Critic's replicas' 1F1B side by side, "
    "(m0 + pp0 - 1) 3 f0 + (m1 + pp1 - 1) 3 f1. The value is the smallest gain (sequential / published "
    "makespan) over the 12 instances.",
)
def _fused(scale):
    t = instance_table(scale)
    gain = t["sequential-1f1b"] / t.published
    return Measured(
        float(gain.min()),
        f"fused {gain.min():.2f}x-{gain.max():.2f}x shorter than sequential 1F1B (mean {gain.mean():.2f}x)",
        {"gain": dict(zip(t.instance.astype(int).astype(str), gain.round(4), strict=True))},
    )


@claim(
    PAPER,
    "gain-vs-microbatches",
    text="Fusion matters most when micro-batches are few per stage (the pipeline bubbles are a larger share).",
    paper_value="bubbles shrink as micro-batches grow (pipeline parallelism)",
    compare=Trend("decreasing", min_change=0.1),
    note="Mean gain of the published fused schedule over sequential 1F1B, grouped by the Actor's micro-batches "
    "per stage (m0/pp0 = 1, 2, 4; four instances each).",
)
def _trend(scale):
    t = instance_table(scale)
    g = (t["sequential-1f1b"] / t.published).groupby(t.m0_per_pp0).mean()
    return Measured(
        g.to_numpy().tolist(),
        ", ".join(f"m0/pp0={k:g}: {v:.2f}x" for k, v in g.items()),
        {"gain_by_m0_per_pp0": {f"{k:g}": round(float(v), 4) for k, v in g.items()}},
    )
