"""Reproduction: RLHFuse (NSDI 2025) -- intra-stage fusion: the Actor and the Critic trained as one fused
bidirectional pipeline.

Zhong et al., "Optimizing RLHF Training for Large Language Models with Stage Fusion" (NSDI 2025; arXiv 2409.13221,
first titled "RLHFuse: Efficient RLHF Training for Large Language Models with Inter- and Intra-Stage Fusion"). The
training stage of an RLHF iteration trains two models; RLHFuse lays the Critic's pipeline on the same GPUs in the
reverse direction so the two fill each other's bubbles, finds the fused schedule by simulated annealing over task
orders, and reports schedules close to a lower bound. The authors released the 12 problem instances of that
evaluation and their schedules (``rlhfuse-schedules``, see its PROVENANCE); the model is
:mod:`workbench.training.fused_pipeline`, measured through the ``rlhf-fused-pipeline`` experiment.

The inter-stage part (issue 27, part 2) is :mod:`workbench.training.generation_tail`, measured through the
``rlhf-generation-tail`` experiment: generation's long tail on serving instances priced by the serving package's
roofline, and RLHFuse's migration of the last samples to a few instances while the freed ones start inference. The
paper's own settings for it (thresholds, instance counts, length distributions) could not be read from the stored
copies of the paper (only its abstract and introduction), so the inter-stage claims are the model's, on the project's
length models, and say so.

The end-to-end "up to 3.7x" is against other systems (their engines and layouts); the last claim says plainly how
much of it a model of the two fusions alone can account for.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import experiments as ex
from .._deps import remember
from ..training import fused_pipeline as fp
from . import AtLeast, AtMost, Check, Measured, Paper, Trend, Verdict, claim

PAPER = Paper(
    "rlhfuse",
    title="Optimizing RLHF Training for Large Language Models with Stage Fusion (RLHFuse)",
    citation="Y. Zhong, Z. Zhang, B. Wu, et al. USENIX NSDI 2025 (arXiv 2409.13221)",
    url="https://arxiv.org/abs/2409.13221",
    notebook="notebooks/12_rlhf_and_checkpointing.ipynb",
    panel="workbench.widgets.rlhf:fused_pipeline_panel",
    dashboard="RLHF: fused Actor/Critic pipelines",
    experiments=("rlhf-fused-pipeline", "rlhf-generation-tail"),
    requires_data=("rlhfuse-schedules/instances.csv",),
    cost_s=35,  # claims + figures, cold, 2 cores (make reproduce, 2026-11-27): orders the first run
)

#: Annealing moves per instance and memory setting, counted in seconds of full decodings (about 60 ns per task and
#: schedule on one core of the development machine): 2 s of them at the full scale, a tenth of 8 s at the quick
#: one. A count, not a time budget, so that a claim is deterministic. The full scale ran 8 s of decodings until
#: issue 21 (``make reproduce`` in minutes): a quarter of those moves reaches the same verdicts (see the notes), and
#: the annealing now decodes again only the steps a move can change, so a move costs about half a decoding.
FULL_SECONDS = 2.0
MEMORY = ("unlimited", "published")


def anneal_iterations(inst: fp.Instance, scale: str) -> int:
    """Annealing moves for ``inst`` at ``scale``: ``"full"`` as many as :data:`FULL_SECONDS` (2 s) of full
    decodings, ``"quick"`` a tenth of 8 s (about 1 s and 0.4 s on one core with the replaying decoder)."""
    per_call_s = 60e-9 * inst.n_tasks
    if scale == "full":
        return int(FULL_SECONDS / per_call_s)
    return int(8.0 / per_call_s) // 10  # a tenth of the former full count, as before (not int(0.8 / per_call_s))


@remember
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
    note="Ours: the workbench's annealing (list-scheduling decoder, moves worth 2 s of decodings per instance at "
    "full scale, 0.8 s at quick, about half that with the replaying decoder; deterministic move counts; two chains "
    "from the best heuristic orders) with no memory cap. It comes within 1.3% of the published makespans at quick "
    "and 1.0% at full (equal on 5 of 12; 8 s of moves at full, before issue 21, reached 0.7% and 6 of 12) but mostly "
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
    "makespans: median 5.0%, largest 22% at full (4.6% and 17% at quick; 4.7% and 14% with the 8 s of moves "
    "before issue 21), worst on the instances with one or two micro-batches per stage; on instance 9 it is within "
    "0.7% at a slightly lower peak. The authors' solver "
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


# --------------------------------------------------------------------------------------------- inter-stage fusion
#: Length-tail spreads (BurstGPT's log-space sigma; 0.8 is the generator's default) and migration thresholds swept.
SIGMAS = (0.4, 0.8, 1.2, 1.6)
THRESHOLDS = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2)


@remember
def tail_table(scale: str) -> pd.DataFrame:
    """Gain of inter-stage fusion per (sigma, threshold), mean over seeds (2 at quick, 6 at full), through the
    ``rlhf-generation-tail`` experiment at its defaults (512 samples, 8 instances of Llama-3.1-8B on one H100, 2 tail
    instances, outputs capped at 8,192 tokens)."""
    grid = {"sigma": list(SIGMAS), "threshold": list(THRESHOLDS)}
    df = ex.sweep("rlhf-generation-tail", grid, seeds=2 if scale == "quick" else 6, client=False, progress=False)
    df["inference_share"] = df.inference_s / df.generation_s
    return df.groupby(["sigma", "threshold"], as_index=False)[
        ["gain", "baseline_s", "fused_s", "generation_s", "inference_s", "inference_share", "migrated"]
    ].mean()


def _best(t: pd.DataFrame) -> pd.DataFrame:
    return t.loc[t.groupby("sigma").gain.idxmax()].set_index("sigma")


@claim(
    PAPER,
    "inter-stage-gain",
    text="Migrating generation's last samples to a few instances and starting inference on the freed ones shortens "
    "the generation + inference stages.",
    paper_value="inter-stage fusion mitigates the generation bottleneck dominated by long-tailed samples (abstract)",
    compare=AtLeast(1.05, partial=1.0),
    note="Model gain (baseline / fused stage time) at the best of the swept thresholds for BurstGPT's default tail "
    "(sigma 0.8), 512 samples on 8 Llama-3.1-8B instances (one H100 each), 2 tail instances, three Actor-sized "
    "inference passes per sample. The gain is capped by 1 + inference / generation: fusion hides inference behind "
    "the tail but cannot make the longest sample decode faster.",
)
def _inter(scale):
    b = _best(tail_table(scale)).loc[0.8]
    cap = 1 + b.inference_share
    return Measured(
        float(b.gain),
        f"{b.gain:.2f}x at threshold {b.threshold:g} (cap 1 + inference/generation = {cap:.2f}x)",
        {"threshold": float(b.threshold), "cap": round(float(cap), 4)},
    )


@claim(
    PAPER,
    "gain-vs-tail",
    text="The heavier generation's length tail, the more inter-stage fusion gains.",
    paper_value="the long tail is what fusion recovers (abstract, §1)",
    compare=Trend("increasing", min_change=0.05),
    expected=Verdict.NOT_REPRODUCED,
    note="Not reproduced by the model, and it says why: a heavier tail lengthens the generation stage (the longest "
    "sample) more than the inference work, so the inference share, and with it the gain's cap 1 + inference / "
    "generation, shrinks. Best gain over thresholds per BurstGPT sigma 0.4, 0.8, 1.2, 1.6 (outputs capped at 8,192). "
    "With a heavier tail more GPU time idles, but the idle time can only be filled with the inference work there is.",
)
def _vs_tail(scale):
    b = _best(tail_table(scale))
    return Measured(
        b.gain.to_numpy().tolist(),
        ", ".join(f"sigma {k:g}: {r.gain:.2f}x (cap {1 + r.inference_share:.2f}x)" for k, r in b.iterrows()),
        {"gain": {f"{k:g}": round(float(v), 4) for k, v in b.gain.items()},
         "inference_share": {f"{k:g}": round(float(v), 4) for k, v in b.inference_share.items()}},
    )  # fmt: skip


def _interior(v) -> str:
    g = np.asarray(v, dtype=float)
    k = int(np.argmax(g))
    if 0 < k < g.size - 1 and g[-1] < g[k] - 0.02:
        return "reproduced"
    return "partial" if g.max() > g[0] else "not reproduced"


@claim(
    PAPER,
    "threshold-tradeoff",
    text="The migration threshold trades overlap against the tail instances' load: too low overlaps little, too "
    "high piles the tail onto few instances and slows it.",
    paper_value="migrate once the remaining samples fall below a threshold",
    compare=Check(_interior, "best gain at an interior threshold, the largest threshold >= 2 points below it"),
    note="Mean gain per threshold (0 = never migrate) at BurstGPT sigma 0.8. Migrated samples keep their KV caches "
    "(moved over the instances' NICs), so a tail instance decodes more samples over more resident KV per step.",
)
def _vs_threshold(scale):
    t = tail_table(scale)
    g = t[t.sigma == 0.8].set_index("threshold").gain
    return Measured(
        g.to_numpy().tolist(),
        ", ".join(f"{k:g}: {v:.3f}x" for k, v in g.items()),
        {"gain": {f"{k:g}": round(float(v), 4) for k, v in g.items()}},
    )


@claim(
    PAPER,
    "throughput-3.7x",
    text="RLHFuse increases RLHF training throughput by up to 3.7x over existing systems.",
    paper_value="up to 3.7x (abstract)",
    compare=AtLeast(3.7, partial=2.0),
    expected=Verdict.NOT_REPRODUCED,
    note="What a model of the two fusions can speak to: each fusion only shortens its own stages, so the iteration's "
    "speedup from fusion alone is at most the larger of the two gains; the value is that larger one (the best "
    "inter-stage gain anywhere in the sweep, the best fused/sequential gain on the 12 published training "
    "instances). It is far below 3.7x. The rest of the 3.7x comes from comparing against other systems (their "
    "generation engines, parallel layouts and resharding between stages), which the model does not represent: it "
    "cannot confirm or refute that part.",
)
def _e2e(scale):
    inter = float(tail_table(scale).gain.max())
    t = instance_table(scale)
    intra = float((t["sequential-1f1b"] / t.published).max())
    return Measured(
        max(inter, intra),
        f"fusion alone at most {max(inter, intra):.2f}x (inter-stage {inter:.2f}x, intra-stage {intra:.2f}x)",
        {"inter_stage": round(inter, 4), "intra_stage": round(intra, 4)},
    )
