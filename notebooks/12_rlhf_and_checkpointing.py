# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   workbench:
#     runs_without_data: false
#     requires_data:
#     - rlhfuse-schedules/instances.csv
#     - rlhfuse-schedules/traces/trace_exp2.txt
#     - rlhfuse-schedules/traces/trace_exp9.txt
# ---

# %% [markdown]
# # RLHF training: RLHFuse's fused Actor/Critic pipelines
#
# Zhong et al., *Optimizing RLHF Training for Large Language Models with Stage Fusion* (RLHFuse, NSDI 2025,
# [arXiv:2409.13221](https://arxiv.org/abs/2409.13221)). The training stage of an RLHF iteration trains two models,
# the Actor and the Critic, each with pipeline parallelism. Trained one after the other, each pipeline idles at its
# start and end (the bubbles). RLHFuse's *intra-stage fusion* lays the Critic's stages on the same GPUs in the
# reverse direction, so the Critic's work fills the Actor's bubbles and vice versa, and searches the fused schedule
# by simulated annealing over task orders; the authors report schedules close to a lower bound.
#
# The authors released the 12 problem instances of that evaluation and their schedules (`rlhfuse-schedules`, see its
# PROVENANCE), so this part is checked exactly: every published schedule is read, checked task by task and compared
# with the bound, with our own schedulers, and with training the two models one after the other (sequential 1F1B).
# This notebook covers the intra-stage part only (issue 27, part 1); the generation tail and checkpointing parts
# of the issue are not built yet.

# %%
import pandas as pd

from workbench import experiments as ex
from workbench import viz
from workbench.reproductions import rlhfuse, show_claims
from workbench.training import fused_pipeline as fp
from workbench.viz import rlhf as vr

viz.setup_notebook()
pd.set_option("display.width", 200)

# %% [markdown]
# ## The claims
#
# `workbench reproduce --paper rlhfuse` prints the same rows (at the full scale: about 8 s of annealing moves per
# instance instead of the tenth used here).

# %%
show_claims("rlhfuse")

# %% [markdown]
# ## The model in a few sentences
#
# * **Tasks** (`training.fused_pipeline`): each micro-batch of each model is a chain of `2S` tasks, the forward of
#   stages `0 .. S-1` then the backward of stages `S-1 .. 0` (a backward takes twice its forward). The Actor's
#   stage `s` runs on GPU `s`; the Critic, with `pp1` stages, is replicated `pp0/pp1` times and its replica `r`'s
#   stage `s` runs on GPU `r*pp1 + pp1-1-s` (reversed). A GPU runs one task at a time; a micro-batch's activations
#   stay on a GPU from its forward to its backward.
# * **Lower bound**: the largest of the critical path `(m + p - 1) 3f`, the total work over the GPUs, one GPU's work
#   `m0 3f0 + m1 3f1`, and that plus the GPU's unavoidable idle head and tail.
# * **Schedules**: sequential 1F1B (the Actor's 1F1B, then the Critic's); a greedy list schedule (longest remaining
#   path first); simulated annealing over per-GPU priority orders, each decoded by a compiled list scheduler, with
#   an optional activation-memory cap (a forward waits while it would exceed it).
# * **Checker**: a schedule is valid iff every task appears once, on its GPU, with its duration, after its
#   predecessor, and no two tasks overlap on a GPU; a violation names the file line and the two tasks.

# %% [markdown]
# ## The 12 instances
#
# Makespans (time units of each instance) of the bound, greedy, the published schedule, ours (annealing with no
# memory cap, and capped at the published schedule's peak memory) and sequential 1F1B, and peak activation memory.

# %%
table = rlhfuse.instance_table("quick")
cols = ["instance", "bound", "greedy", "published", "ours-unlimited", "ours-published", "sequential-1f1b"]
mem = ["published_memory", "ours-unlimited_memory", "ours-published_memory"]
table[cols + mem].round(2)

# %% tags=["nbval-ignore-output"]
vr.makespans(table)

# %% [markdown]
# ## Panel: shape a fused pipeline
#
# Pick the Actor's and the Critic's stage counts, their micro-batches and the Critic's size relative to the Actor
# (its forward time per stage), and how the fused problem is scheduled (annealing, greedy list scheduling, or the two
# models one after the other). The Gantt chart shows one row per GPU; the table gives the makespan against the
# lower bound and against sequential 1F1B. A small instance (forward 10 time units per Actor stage), so every
# change redraws in well under a second.

# %% tags=["nbval-ignore-output"]
from workbench.widgets.rlhf import fused_pipeline_panel

fused_pipeline_panel()

# %% [markdown]
# ## A fused schedule, drawn
#
# Instance 2 (8 GPUs; the Actor with 8 stages and 8 micro-batches, two Critic replicas of 4 stages): the published
# schedule reaches the bound (the Actor's critical path). The Critic's forward and backward passes (orange) sit in
# the Actor's warm-up and drain bubbles; the sequential baseline below leaves those bubbles empty and then runs the
# Critic.

# %%
inst = fp.load_instances()[2]
published = fp.published_schedule(2)
sequential = fp.sequential_1f1b(inst)
print(
    f"published makespan {fp.check_schedule(inst, published).makespan:.0f}, sequential 1F1B {sequential.makespan:.0f}"
)

# %% tags=["nbval-ignore-output"]
vr.gantt(published, (inst.pp0, inst.pp1), title="Instance 2: the published fused schedule")

# %% tags=["nbval-ignore-output"]
vr.gantt(sequential, (inst.pp0, inst.pp1), title="Instance 2: Actor 1F1B, then Critic 1F1B")

# %% [markdown]
# Ours on the largest instance (9: 16 GPUs, 64 micro-batches per model): with no memory cap and with the published
# schedule's peak activation memory as a cap (a forward waits while it would exceed it).

# %%
big = fp.load_instances()[9]
c_pub = fp.check_schedule(big, fp.published_schedule(9))
n = rlhfuse.anneal_iterations(big, "quick")
ours = fp.anneal(big, seed=0, iterations=n)
capped = fp.anneal(big, seed=0, iterations=n, memory_limit=c_pub.peak_memory)
print(f"bound {fp.lower_bound(big).value:.0f}; published {c_pub.makespan:.0f} (peak memory {c_pub.peak_memory:.1f})")
for name, s in (("ours, no cap", ours), ("ours, capped", capped)):
    c = fp.check_schedule(big, s)
    print(f"{name}: {c.makespan:.0f} (peak memory {c.peak_memory:.1f}, start order {s.info['start_order']})")

# %% tags=["nbval-ignore-output"]
vr.gantt(capped, (big.pp0, big.pp1), title="Instance 9: ours (annealing, capped at the published peak memory)")

# %% [markdown]
# ## Explore: the gain of fusion vs the Critic's size
#
# The `rlhf-fused-pipeline` experiment schedules any instance. Here 8 GPUs, both models with 8 stages and 16
# micro-batches, the Actor's forward 4 units per stage and the Critic's from 1 to 4: fused (annealing) against
# sequential 1F1B. With the smallest Critic the fused makespan is the Actor's critical path alone (the Critic
# disappears into the Actor's bubbles, so the gain is the Critic's whole sequential time); as the Critic grows, the
# GPUs' total work becomes the limit. Here the gain stays between 1.25x and 1.32x, not monotone in the Critic's size.

# %%
grid = {
    "method": ["anneal", "sequential-1f1b"],
    "iterations": 3000,
    "pp0": 8,
    "pp1": 8,
    "m0": 16,
    "m1": 16,
    "f0": 4,
    "f1": [1, 2, 3, 4],
}
df = ex.sweep("rlhf-fused-pipeline", grid, client=False, progress=False)
wide = df.pivot(index="f1", columns="method", values="makespan")
wide["gain"] = wide["sequential-1f1b"] / wide["anneal"]
wide["anneal_gap_to_bound"] = df[df.method == "anneal"].set_index("f1").gap_to_bound
wide.round(3)

# %% [markdown]
# ## What differs from the paper
#
# * **Only the training stage's schedule.** RLHFuse's "up to 3.7x" throughput is end to end (generation, inference
#   and training, against other systems); these instances speak only to the fused training pipeline, in the
#   instances' abstract time units.
# * **Our search is seconds on one core; theirs ran 20 s to 83 min on 512+ CPUs.** Without a memory cap ours comes
#   within 0.7% of the published makespans (full scale) but mostly at several times their activation memory; with
#   the published peak memory as a hard cap it stays a median 4.7% (up to 14%) above, so the published schedules'
#   balance of time and memory is reproduced by this search on some instances only.
# * **The bound is the authors' four terms**; the published schedules meet it on 11 of 12 instances (exp 9: 613 vs
#   606). Whether 606 is reachable on instance 9 is open.
# * **Communication is free** in the instances (a task starts when its predecessor ends, on another GPU), as in the
#   authors' solver.
