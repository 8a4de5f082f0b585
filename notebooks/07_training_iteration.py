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
# ---

# %% [markdown]
# # Training iteration time on the fabric: C4, Megatron-LM, Llama 3, Lumos, Multiverse
#
# The fabric notebooks (01, 02) stop at link congestion ratios; the people who run training clusters decide in
# iteration time. This notebook connects the two: a model, a parallelism plan and a GPU give the compute, the
# pipeline bubble and the NVLink collectives, and the data-parallel collectives are routed **on the fabric** with
# ECMP, spraying or planned paths (C4P, J. Dong et al., arXiv:2406.04594). The model is validated on every fully
# stated public training run found (69 runs from 8 sources, a data file: `datasets/training_validation/corpus.csv`),
# leave-one-source-out.
# The formula is then unrolled into an **execution graph** of one iteration (Lumos, M. Liang et al., MLSys'25):
# CPU launches and synchronisations, kernels on compute/TP/PP/DP streams and four kinds of dependency, simulated by
# list scheduling, edited for what-if questions; and the plan space is searched (Multiverse, F. Gui et al., NSDI'25).
# Everything below is computed by `workbench.training` on top of `workbench.fabric`.

# %%
import pandas as pd

from workbench import fabric as fb
from workbench import viz
from workbench.reproductions import REGISTRY, ClaimsTable, run_claims
from workbench.reproductions.c4_training import gain_sweep, scaling_table
from workbench.training import CALIBRATION, GPUS, MODELS, Plan, iteration_table
from workbench.training.dse import explore
from workbench.training.exec_graph import build_graph, simulate, timeline_table
from workbench.training.gaps import consistency_floor, gap_table
from workbench.training.validation import (
    compute_check,
    corpus,
    rendezvous_table,
    source_summary,
    validation_points,
)
from workbench.viz import exec_graph as vg
from workbench.widgets.training import iteration_panel, what_if_panel

viz.setup_notebook()
pd.set_option("display.width", 200)
pd.set_option("display.max_colwidth", 100)

# %% [markdown]
# ## The claims
#
# `workbench reproduce --paper c4-training --paper megatron-sc21 --paper llama3-training --paper megascale --paper
# lumos --paper multiverse` prints the same rows.

# %%
ClaimsTable(
    [
        *run_claims("c4-training", "full"),
        *run_claims("megatron-sc21", "full"),
        *run_claims(claims=["llama3-training/mfu-16k"]),
        *run_claims("megascale", "full"),
        *run_claims("lumos", "full"),
        *run_claims(claims=["multiverse/exploration-matters"]),
    ]
)

# %% [markdown]
# Multiverse's scale claim is timed on this machine, so its row changes from run to run:

# %% tags=["nbval-ignore-output"]
ClaimsTable(run_claims(claims=["multiverse/ten-thousand-experiments"]))

# %% [markdown]
# ## The model in a few sentences
#
# Per micro-batch and pipeline stage: **compute** from measured kernels: each GEMM at the fraction of peak Vidur's
# profiles measure for a GEMM of its size (small GEMMs reach less), attention by the software era (2021: unfused
# products and the score matrices through HBM; 2024: FlashAttention-2 at its published efficiency), the measured
# element-wise kernels, backward and recomputation; divided by the fraction of that throughput a training step
# sustains on the GPU generation (estimated on the corpus). **TP** collectives at NCCL's measured all-reduce time on
# the node; **PP**: Megatron-LM's blocking exchange with both neighbours at every micro-batch boundary, each at the
# measured NCCL send/recv rate across nodes (DeepSpeed's engine makes four blocking calls). The pipeline runs at its
# slowest rank with a bubble of `(p-1)/v` micro-batch slots. The **DP** collective (FP32 gradients reduced, BF16
# parameters gathered) of every TP x PP group runs at once on a leaf-spine with one NIC per GPU: each step lasts
# bytes x worst link load / link bandwidth under the chosen routing (one ECMP hashing per job, as C4 observes); what
# the schedule hides behind the backward is off the critical path.

# %%
gpu = GPUS["H100"]
model = MODELS["gpt3-175b"]
topo = fb.leaf_spine(32, 32, 32, host_gbps=gpu.nic_gbps)  # 1,024 GPUs, non-blocking
plan = Plan(tp=8, pp=4, dp=32, global_batch=512)
rows = [iteration_table(model, [plan], gpu, topo, r, seed=0).assign(routing=r) for r in ("ecmp", "spray", "planned")]
bd = pd.concat(rows, ignore_index=True)
cols = [
    "routing",
    "compute_s",
    "tp_comm_s",
    "pp_p2p_s",
    "bubble_s",
    "dp_comm_s",
    "dp_exposed_s",
    "optimizer_s",
    "iteration_s",
    "mfu",
]
print(bd[cols].round(3).to_string(index=False))

# %% [markdown]
# ## Validation on every fully stated public run
#
# The corpus is data: one row per published run, with its source (URL, commit, table or figure), the plan it
# states, what it leaves unstated and the assumption made. A row whose unstated settings could move the modelled
# result by more than 5% (any of the plausible alternatives listed with it) stays out of the headline statistic.

# %%
c = corpus()
print(c.groupby(["source_name", "gpu", "era"], sort=False).agg(
    runs=("id", "size"), headline=("headline", "sum"), pp=("pp", lambda x: f"{x.min()}-{x.max()}"),
    gpus=("gpus", lambda x: f"{x.min():,}-{x.max():,}"), metric=("metric", "first"),
).to_string())  # fmt: skip
print(c[["id", "model_name", "gpu", "tp", "pp", "dp", "virtual_stages", "micro_batch", "global_batch",
         "recompute", "metric", "value", "headline"]].to_string(index=False))  # fmt: skip

# %% [markdown]
# Model against published, each source's rows modelled with the two estimated parameters (the fraction of the
# measured kernels' throughput a training step sustains on A100 and on H100) estimated **without** that source: the
# leave-one-source-out error is the one reported. `error` is `(model - published) / published` in the source's metric;
# the figure shows it as an iteration time (positive: the model is slower), filled for headline rows.

# %%
points = validation_points()
print(f"estimated on the whole corpus: {CALIBRATION}")
print(source_summary(points).round(3).to_string(index=False))
viz.training.validation(points).show()

# %% [markdown]
# **The mechanisms that closed the gap**, each from a public source, none fitted per row: GEMM efficiency by GEMM size
# (Vidur's measured kernels: the trend Megatron-Core names for its 41% -> 47-48% MFU), attention by software era
# (SC'21's unfused kernels; FlashAttention-2's efficiency on causal FLOPs), sequence parallelism (Korthikanti et al.),
# Megatron-LM's blocking exchange (`req.wait()` then `torch.cuda.synchronize()` in `p2p_communication.py`) at NCCL's
# measured send/recv rate (62% of an A100's NIC), DeepSpeed's four blocking calls and post-pipeline gradient
# reduction, FP32 gradient reduction (Megatron-LM with BF16), DP rings over every NIC of a node, the tied embeddings'
# gradient all-reduce. Two numbers are estimated: the sustained fraction of the measured kernels, 0.955 on A100 and
# 0.72 on H100 (where a source publishes its compute time, Lumos, the estimate compares compute with compute). A
# per-exchange synchronisation cost was tried and dropped: the corpus does not identify it.
#
# **The headline misses Issue 38's worst-case bar** (median 6.1% <= 8%; worst 54.5% > 20%): Lumos's batch is now
# stated, so four of its runs are in the headline, and the model is 25-55% too fast on them. The next section shows
# why the batch is pinned and what was tried on the gap.

# %% [markdown]
# ## Lumos: its batch is stated, its gap is not explained
#
# Lumos prints each iteration's measured breakdown (exposed compute, compute overlapped with communication, exposed
# communication, idle). Its batch: TP x PP micro-batches of 1 per pipeline at every DP (its Fig. 4, Sec. 4.3.1, and
# NVIDIA's MLPerf GPT-3 implementation, which sets the batch per replica). The measured compute per GPU says the
# same: it is constant over DP 4-32 and PP 2-16, as the model's is under that batch, while any fixed global batch
# (half the replicas, twice the micro-batches) would spread it 4x. So the DP 4 vs DP 8 difference at TP 2 x PP 8 is
# not a batch.

# %%
check = compute_check()
for g in (32, 128, 1536):
    check[f"fixed {g}"] = compute_check(global_batch=g).ratio
print(check[["id", "micro_batches", "measured_ms", "model_ms", "ratio", "fixed 32", "fixed 128", "fixed 1536"]]
      .round(2).to_string(index=False))  # fmt: skip
small = check.model_name == "gpt3-15b"
print("spread of model / measured compute over the 15B runs (max / min):",
      {c: round(float(check[c][small].max() / check[c][small].min()), 2)
       for c in ("ratio", "fixed 32", "fixed 128", "fixed 1536")})  # fmt: skip

# %% [markdown]
# What Lumos measured beyond compute against what the model has beyond it, term by term (`gap_table`): the last
# stage's output layer and loss (`ends`), the bubble, the blocking exchanges at NCCL's measured rate, the TP
# collectives, the exposed end of the overlapped DP collective with the tied-embedding all-reduce, the optimizer step;
# `lacking ms` is what the model would need to add to come within Issue 38's 20%. Beside them, the one mechanism the
# blocking exchanges add with variability, waiting at the rendezvous: with the measured kernel and NCCL variability
# (Vidur's repeats: 0.3-2% per layer) it is a hundredth of a percent; it is first order in the variability, so even
# 30% per micro-batch would cost a 16-stage pipeline about 18%, where Lumos's 2x16x4 run took 2.15x the model.

# %%
wait = rendezvous_table(source="lumos2025").set_index("id")
terms = gap_table().set_index("id")
terms["rendezvous wait"] = wait.share
terms["error"] = points.set_index("id").error
print(terms[["tp", "pp", "dp", "measured_ms", "measured_rest_ms", "model_ms", "ends_ms", "bubble_ms", "exchange_ms",
             "tp_ms", "dp_ms", "rest_ms", "lacking_ms", "rendezvous wait", "error"]].round(4).to_string())  # fmt: skip
allwait = rendezvous_table()
print(f"rendezvous wait over every pipelined corpus run: median {allwait.share.median():.4%}, "
      f"max {allwait.share.max():.2%} ({allwait.id[allwait.share.idxmax()]})")

# %% [markdown]
# **What any model can reach on these runs.** Two of the headline runs ran the same pipeline (TP 2 x PP 8, 16
# micro-batches of 1, the same measured compute per GPU) at DP 4 in 1.446 s and at DP 8 in 1.010 s. More replicas can
# only lengthen the DP collective (and shorten the optimizer step they shard, by a millisecond here), and the model
# obeys that; so no such model comes within 17.7% of both (`consistency_floor`): the best predicts about 1.19 s for
# each. The 20% bar leaves a window of 2.7 points there, and it asks for ~0.4 s more than the model has at PP 8 and
# ~0.6 s at PP 16 from a mechanism that must not also slow the DP 8 run beyond 1.21 s.

# %%
print(consistency_floor().round(3).to_string(index=False))

# %% [markdown]
# **What remains unexplained.** Lumos's exposed communication and idle time: 2x the model's at PP 2-4, 3-4x at PP
# 8-16, larger at DP 4 than at DP 8 (TP 2 x PP 8) and at DP 16 than at DP 8 (TP 2 x PP 4). The idle time jumps from
# 48-65 ms at PP 4-8 to 461 ms at PP 16, where a stage's micro-batch is ~15 ms of GPU work: host-side work per
# micro-batch no longer hidden fits it, but no public source quantifies it for this stack, and nothing in the plan
# gives the DP differences. The four headline rows keep their errors. Also unexplained: DeepSpeed's engine (MT-NLG
# 16-20% slower than modelled: its step-synchronous schedule costs more than its four blocking calls) and
# MegaScale's Megatron-LM baseline at 8-12k GPUs (13-14% slower than modelled, where the paper reports stragglers).
# Details: `docs/training_validation.md`.

# %% [markdown]
# ## One iteration as an execution graph
#
# The same numbers, unrolled (`workbench.training.exec_graph`): per layer and micro-batch two compute kernels, each
# followed by its TP all-reduces (the next GEMM waits for the all-reduce: a cross-stream event); a stage-boundary
# transfer per micro-batch and direction, after which Megatron-LM synchronises the device (GPU -> CPU); the DP
# collective in per-layer buckets issued as the last backward finishes each layer; the optimizer after a
# synchronisation. Every stream and the CPU thread run their nodes in program order, so the simulation is one
# topological pass. The graph holds one pipeline; DP replicas only change the DP kernels' durations, which is why
# 16,384 GPUs cost what 512 do. GPT-3 175B on 64 H100 (TP 8, PP 4, DP 2, 8 micro-batches): streams as rows, the
# critical path outlined.

# %% tags=["nbval-ignore-output"]
small = build_graph(model, Plan(8, 4, 2, 16, recompute="full"), gpu)
small_run = simulate(small)
vg.timeline(
    timeline_table(small, small_run),
    title="GPT-3 175B, TP 8 PP 4 DP 2 on 64 H100: one iteration (critical path outlined)",
).show()

# %% [markdown]
# Breakdown of stage 0 (Lumos's categories) and the critical path, graph vs formula, and the **dPRO-like** graph
# that drops the comm -> compute waits: on 512 H100 (TP 8, PP 8, DP 8) it lets the TP all-reduces run under the
# GEMMs, over-states the overlap and under-states the iteration by ~20%.

# %%
plan512 = Plan(8, 8, 8, 512, recompute="full")
runs = {m: simulate(build_graph(model, plan512, gpu, mode=m)) for m in ("serial", "lumos", "dpro")}
g512 = build_graph(model, plan512, gpu)
print(
    f"formula {g512.formula['iteration_s']:.3f} s; graph {g512.n_nodes:,} nodes, {g512.n_edges:,} edges",
    g512.edge_counts(),
)
print(pd.DataFrame({m: {"iteration_s": r.iteration_s, **r.breakdown} for m, r in runs.items()}).round(3).to_string())
print(f"dPRO-like: {1 - runs['dpro'].iteration_s / runs['lumos'].iteration_s:.1%} shorter")
print({k: round(v, 3) for k, v in runs["lumos"].critical_share(g512).items()})

# %% [markdown]
# ## What if? Edit the graph
#
# The base plan is GPT-3 175B, TP 8 PP 8 DP 8 on 512 H100 (batch 512, full recomputation). Change TP, PP, DP, the
# global batch or recomputation: the graph is rebuilt from its per-rank template with the edited durations (DP
# edits change only the DP and optimizer kernels; PP re-partitions layers and re-orders 1F1B; TP rescales compute
# and all-reduces). Left: base vs edited breakdown; right: every stage of the edited plan.

# %% tags=["nbval-ignore-output"]
what_if_panel()

# %% [markdown]
# ## Design-space exploration
#
# Every TP x PP x DP x micro-batch x recomputation plan of GPT-3 175B on 512 H100 (batch 512), ranked by the
# vectorized formula (tens of thousands of plans per second), the ones that fit in memory kept, the five fastest
# re-ranked by the graph.

# %%
dse = explore(model, gpu, 512, 512, top_k=5)
print(f"{len(dse.plans)} plans, {int(dse.plans.fits.sum())} fit")
print(
    dse.top[
        [
            "tp",
            "pp",
            "dp",
            "micro_batch",
            "recompute",
            "formula_s",
            "graph_s",
            "formula_rank",
            "exposed_comm_s",
            "other_s",
        ]
    ]
    .round(3)
    .to_string(index=False)
)

# %% [markdown]
# ## Try it
#
# Model, GPU, job size, TP and PP, sequences per data-parallel replica and the DP collective. Left: the iteration
# breakdown under ECMP, MP-4, spraying and planned paths; right: iteration time vs GPU count for the same plan shape.

# %% tags=["nbval-ignore-output"]
iteration_panel()

# %% [markdown]
# ## C4's ~15%, re-derived as iteration time
#
# Every plan of four GPT models that fits on 1,024 H100s (batch 1,024), ECMP averaged over 4 hashings vs planned
# paths. The fabric share is the exposed DP communication under planned paths. The table gives the gain by share
# band; the band where routing starts to matter (median gain above 5%) is printed below it.

# %%
sweep = gain_sweep()
e = sweep[sweep.routing == "ecmp"].copy()
e["share band"] = pd.cut(e.fabric_share, [0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.6])
print(e.groupby("share band", observed=True).gain.describe()[["count", "min", "50%", "max"]].round(3).to_string())
med = e.groupby("share band", observed=True).gain.median()
print("routing matters (median ECMP penalty > 5%) from the share band:", med[med > 0.05].index[0])

# %% [markdown]
# The spread at one share comes from where the ring's neighbours sit: with TP = 1 they are adjacent GPUs on one leaf
# and ECMP costs nothing; with TP = 8 and few pipeline stages every DP flow crosses the spine and collisions cost
# 50% or more.

# %%
print(
    e.sort_values("gain", ascending=False)
    .head(5)[["model", "tp", "pp", "dp", "fabric_share", "gain"]]
    .round(3)
    .to_string(index=False)
)

# %% [markdown]
# Notebook 02's shortcut, gain = share x (R - 1) with R the DP collective's ECMP slowdown, against the gain
# computed through the iteration: the shortcut is close at small shares and under-estimates at moderate ones,
# because the backward-overlap window hides part of the planned DP time but none of ECMP's extra time.

# %%
e["shortcut error"] = e.shortcut_gain - e.gain
print(
    e.groupby("share band", observed=True)["shortcut error"]
    .describe()[["count", "min", "50%", "max"]]
    .round(3)
    .to_string()
)

# %% [markdown]
# ## Iteration time vs GPU count
#
# GPT-3 175B, TP 8, PP 8, 16 sequences per replica, 32 GPUs per leaf: ECMP's penalty grows with the job.

# %%
sc = scaling_table("full")
print(sc.pivot(index="gpus", columns="routing", values="iteration_s").round(3).to_string())

# %% [markdown]
# ## Reproduction figures

# %% tags=["nbval-ignore-output"]
for key in ("c4-training/gain_vs_fabric_share", "c4-training/iteration_vs_gpus", "megatron-sc21/validation"):
    REGISTRY.figures[key].build("full").show()
viz.training.breakdown(
    bd, title="GPT-3 175B on 1,024 H100s (TP 8, PP 4, DP 32, batch 512): iteration breakdown by routing"
).show()

# %% [markdown]
# ## Explore: sweep a parameter study
#
# Any parameter of the registered experiment `training-iteration-time` as a control (a multi-select for a choice, a
# list `0.3,0.9` or a range `start:stop:count` for a number). The panel runs the grid below when it is built (cached
# under `$WORKBENCH_CACHE/experiments/training-iteration-time/`, so re-running the notebook reads it back); "Run
# sweep" runs a new grid through `experiments.sweep` and plots the mean over seeds with error bars of one standard
# error. Here: GPT-3 175B on H100s (TP 8, PP 4) as the data-parallel degree grows, ECMP vs planned paths vs spraying
# (one ECMP hashing per seed).

# %% tags=["nbval-ignore-output"]
from workbench.widgets.explore import explore_panel

explore_panel(
    "training-iteration-time",
    x="dp",
    series=["routing"],
    values=["iteration_s"],
    grid={"dp": [4, 8, 16, 32], "routing": ["ecmp", "planned", "spray"]},
    seeds=3,
    client=False,
    y_title="iteration time (s)",
)

# %% [markdown]
# ## What differs from the papers and why
#
# * **Two estimated numbers.** No source states how much of the measured kernels' throughput a training step
#   sustains; the corpus says nearly all of it on A100 (0.955) and under three quarters on H100 (0.72). They are
#   estimated on the headline rows (on Lumos's measured compute for its rows), and every error reported is
#   leave-one-source-out. The H100 estimate rests on Megatron-Core's PP 1 rows and Lumos's four deep-pipeline runs
#   (Llama 3's rows are out of the headline: its unstated micro-batch moves them by more than 5%); the clusters differ (Lumos's compute puts it at 0.69-0.72, Megatron-Core's rows at ~0.78).
# * **Llama 3 (within 0.4% MFU)** with its Sec. 3.3.2 schedule (V = 8, balanced end stages, asynchronous transfers);
#   the memory estimate puts the plan over 80 GB without recomputation, so Meta's activation memory is leaner than
#   the model's. **MegaScale (-8% at 12,288 GPUs)** with the plan and overlaps its paper states; its Table 3 puts
#   7.3 MFU points at 256 GPUs on the parallel transformer block, sliding-window attention and operators the model
#   does not have (claim `megascale/speedup-12k`: the overlaps give 1.28x of its 1.34x in the model, since its
#   Megatron-LM baseline's blocking exchanges and exposed DP collective cost what they measure).
# * **C4's 15%.** C4 reports one number from its production jobs; here the gain is a distribution over plans. At a
#   10-30% fabric share the interquartile range starts at 15% (14.9%: reproduced, by a few tenths of a point; it
#   was 15.3%, partial, with the H100's fraction at 0.74) and the median is 27%: ECMP collisions on a non-blocking
#   leaf-spine with rank-ordered rings cost more than C4's figure whenever TP puts ring neighbours on other leaves,
#   and the validated model's DP collective (FP32 gradients) is larger than the earlier model's. C4's NIC-bond collisions (notebook 02) are not in this model; hosts are GPUs with one NIC each.
# * **Lumos** replays *measured* traces (3.3% error) and edits them (4.2% on new DP/PP configurations); here no trace
#   exists and kernel durations come from the formula, so the graph inherits the formula's error (claims
#   `replay-error`, the model's mean error over every corpus run: not reproduced, and `estimate-new-configs`,
#   Lumos's Fig. 7c from one measured configuration: not reproduced) and contributes structure: overlap, bubbles,
#   the synchronisation after each pipeline exchange, the critical path. The dPRO comparison is structural and
#   reproduces on Lumos's Fig. 1 configuration. Lumos's own runs are 25-55% slower than modelled (four of them in
#   the headline, their batch now stated): the exposed communication and idle time it measures are not in the model.
#   The graph runs the 1F1B schedule only (Llama 3's interleaved rows stay formula-only), and MoE all-to-alls are
#   folded into the TP kernels.
# * **Multiverse**'s numbers are about a GPU packet-level simulator (43-73x over CPU simulators, < 3% on 54,000
#   GPUs); an analytic search is far coarser and far cheaper, so only its qualitative point (the search matters) and
#   its scale (10^4 experiments) are checked.
# * **The fabric** is a fluid model (a step lasts until its most loaded link drains) at NCCL's measured rate, with a
#   fixed per-step latency; congestion control, PFC and multiple NCCL channels are not modelled.
