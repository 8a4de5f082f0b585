"""Reproduction: Lumos (execution graphs of a training iteration, MLSys'25) and Multiverse (design-space exploration
of training systems, NSDI'25) against the analytic execution graph (:mod:`workbench.training.exec_graph`) and the
plan search (:mod:`workbench.training.dse`).

What an analytic graph can and cannot claim. Lumos's 3.3% (replay) and 4.2% (new DP/PP configurations) errors are
about *replaying real Kineto traces*: the kernel durations are measured, so only the dependencies and the
simulator can be wrong. Here no trace exists; kernel durations come from the iteration formula's roofline and
fabric numbers, so the graph inherits the formula's error against published throughputs, and the graph's own
contribution is structural (overlap, bubbles, synchronisation gaps, the critical path). The dPRO claim is
structural, so it is the one the analytic graph can test directly.
"""

from __future__ import annotations

import time

import numpy as np

from .._deps import remember
from ..serving.specs import gpu as gpu_record
from ..training import GPUS, MODELS, Plan
from ..training.dse import explore, plan_space
from ..training.exec_graph import build_graph, simulate
from ..training.iteration import iteration_arrays
from ..training.validation import (
    compute_check,
    corpus,
    corpus_model,
    corpus_plan,
    rendezvous_table,
    validation_points,
)
from . import AtLeast, AtMost, InRange, Measured, Paper, claim

LUMOS = Paper(
    "lumos",
    title="Lumos: Efficient Performance Modeling and Estimation for Large-scale LLM Training",
    citation="M. Liang, H. Kassa, W. Fu, B. Coutinho, L. Feng, C. Delimitrou. MLSys'25 (arXiv:2504.09307)",
    url="https://arxiv.org/abs/2504.09307",
    notebook="notebooks/07_training_iteration.ipynb",
    experiments=("training-dse",),
    panel="workbench.widgets.training:what_if_panel",
    dashboard="What if: one iteration's execution graph under another plan (Lumos)",
)
MULTIVERSE = Paper(
    "multiverse",
    title="Accelerating Design Space Exploration for LLM Training Systems with Multi-experiment Parallel Simulation",
    citation="F. Gui, K. Gao, L. Chen, D. Li, V. Liu, R. Zhang, H. Yang, D. Xiong. NSDI'25",
    url="https://www.usenix.org/conference/nsdi25/presentation/gui",
    notebook="notebooks/07_training_iteration.ipynb",
    experiments=("training-dse",),
)

#: Lumos's Fig. 1 configuration (GPT-3 175B, TP 8, PP 4, DP 8 on 256 H100; batch as the validation row), where it
#: measures dPRO 15.6% short (6,424 ms replayed against 7,611 ms actual), and GPT-3 175B plans of 512 H100 (global
#: batch 512, full recomputation), the scale of its evaluation (Sec. 4), for the full-scale mean.
MORE_DPRO_PLANS = (Plan(8, 4, 16, 512, recompute="full"), Plan(8, 8, 8, 512, recompute="full"),
                   Plan(8, 16, 4, 512, recompute="full"), Plan(4, 8, 16, 512, recompute="full"))  # fmt: skip


def _lumos_rows():
    c = corpus()
    return c[c.source == "lumos2025"]


def fig1_plan() -> Plan:
    """The plan of Lumos's Fig. 1 row of the validation corpus (32 micro-batches of 1: TP x PP, its Fig. 4)."""
    rows = _lumos_rows()
    return corpus_plan(rows[rows.model_name == "gpt3-175b"].iloc[0])


@remember
def _dpro_gaps(scale: str) -> tuple[tuple[float, float, float], ...]:
    plans = (fig1_plan(), *MORE_DPRO_PLANS) if scale == "full" else (fig1_plan(),)
    out = []
    for plan in plans:
        full = simulate(build_graph(MODELS["gpt3-175b"], plan, GPUS["H100"]))
        dpro = simulate(build_graph(MODELS["gpt3-175b"], plan, GPUS["H100"], mode="dpro"))
        out.append(
            (1 - dpro.iteration_s / full.iteration_s, full.breakdown["overlapped_s"], dpro.breakdown["overlapped_s"])
        )
    return tuple(out)


@claim(
    LUMOS,
    "dpro-understates",
    text="Ignoring cross-stream dependencies (dPRO) over-states communication/computation overlap and under-states "
    "the iteration time: dPRO's error reaches 21.8% (14% on average) where Lumos's is 3.3%.",
    paper_value="dPRO error 14% mean, up to 21.8% (Sec. 4.2.1); 15.6% short on GPT-3 175B, TP 8 PP 4 DP 8 (Fig. 1)",
    compare=InRange(0.10, 0.25, partial_low=0.05, partial_high=0.35),
    note="Value: how much shorter the iteration is when the graph drops the comm -> compute event waits of a rank, "
    "on Lumos's Fig. 1 configuration (GPT-3 175B, 256 H100, TP 8, PP 4, DP 8; at full scale the mean with four "
    "512-GPU plans). Under the analytic graph the gap is exactly the TP all-reduce time that the missing waits let "
    "run under compute; Lumos measures it against a real trace, where other effects add or cancel.",
)
def _dpro(scale):
    gaps = _dpro_gaps(scale)
    g = np.array([x[0] for x in gaps])
    return Measured(
        float(g.mean()),
        f"iteration {g.mean():.1%} shorter without cross-stream waits (from {g.min():.1%} to {g.max():.1%}); "
        f"overlap {gaps[0][1]:.2f} s -> {gaps[0][2]:.2f} s on Fig. 1's plan (Lumos: 0.89 s actual, 1.69 s dPRO)",
        {"gaps": g.round(4).tolist(), "overlap_lumos_s": gaps[0][1], "overlap_dpro_s": gaps[0][2],
         "fig1_gap_paper": round(1 - 6.424 / 7.611, 4)},
    )  # fmt: skip


@remember
def _graph_lumos(scale: str) -> tuple[tuple[str, float, float], ...]:
    """The execution graph (the validated model, today's kernels) on Lumos's rows of the corpus: (configuration,
    published s, graph s); quick scale leaves out the 175B row (a couple of seconds)."""
    rows = []
    for _, row in _lumos_rows().iterrows():
        if scale == "quick" and row.model_name == "gpt3-175b":
            continue
        plan = corpus_plan(row)
        g = build_graph(corpus_model(row), plan, gpu_record(row.gpu), max_chunks=1)
        rows.append((f"{row.model_name} {plan.tp}x{plan.pp}x{plan.dp}", float(row.value), simulate(g).iteration_s))
    return tuple(rows)


@claim(
    LUMOS,
    "replay-error",
    text="Lumos replays iteration time with 3.3% average error on up to 512 H100.",
    paper_value="3.3% mean error (replay of measured traces)",
    compare=AtMost(0.033, partial=0.08),
    expected="not reproduced",
    note="Not the same quantity: Lumos replays traces whose kernel times are measured; here there is no trace. "
    "Value: the iteration model's mean |error| over every run of the validation corpus (Megatron-LM SC'21, "
    "Korthikanti et al., MT-NLG, BLOOM, Megatron-Core, Llama 3, MegaScale and Lumos's own; leave-one-source-out), "
    "Lumos's rows included; the partial bound, 8%, is this project's goal for it. It fails on Lumos's rows: the "
    "model is 25-55% faster than measured. Their batch is stated (TP x PP micro-batches of 1 per pipeline: Fig. 4, "
    "Sec. 4.3.1, and Fig. 7's measured compute per GPU, which the model matches within 5-13% on every "
    "configuration where any fixed global batch would be 4x off), so four deep-pipeline rows are in the corpus's "
    "headline; Lumos's trace puts the difference in exposed communication and idle time that grow with pipeline "
    "depth and are larger at DP 4 than at DP 8, which no mechanism with a public source gives: waiting at the "
    "blocking exchanges, from the measured kernel variability, costs under 0.1% (details: every mean, the compute "
    "check, the rendezvous share, and the execution graph on Lumos's rows).",
)
def _replay(scale):
    p = validation_points()
    head = p[p.headline]
    lumos = np.array([(sim / pub - 1) for _k, pub, sim in _graph_lumos(scale)])
    val = float(head.error.abs().mean())
    lum = p[p.source == "lumos2025"]
    everything = float(p.error.abs().mean())
    compute = compute_check()
    wait = rendezvous_table(samples=8, source="lumos2025")
    return Measured(
        everything,
        f"mean |error| {everything:.1%} over all {len(p)} corpus runs; Lumos's rows {lum.error.abs().mean():.1%} "
        f"(graph {np.abs(lumos).mean():.1%}); headline runs {val:.1%} (median {head.error.abs().median():.1%}, "
        f"worst {head.error.abs().max():.1%})",
        {
            "mean_headline": round(val, 4),
            "median_headline": round(float(head.error.abs().median()), 4),
            "worst_headline": round(float(head.error.abs().max()), 4),
            "mean_all": round(float(p.error.abs().mean()), 4),
            "mean_lumos": round(float(lum.error.abs().mean()), 4),
            "lumos_headline_rows": int(lum.headline.sum()),
            "compute_model_over_measured": compute.set_index("id").ratio.round(3).to_dict(),
            "rendezvous_share_max": round(float(wait.share.max()), 5),
            "graph_lumos": {k: round(sim / pub - 1, 4) for k, pub, sim in _graph_lumos(scale)},
        },
    )


@claim(
    LUMOS,
    "estimate-new-configs",
    text="From an existing configuration's graph, Lumos estimates new DP/PP (and model) configurations with 4.2% "
    "average error.",
    paper_value="4.2% mean error (Fig. 7c: GPT-3 15B, TP 2, PP x DP from 4 x 8 to 4 x 16)",
    compare=AtMost(0.042, partial=0.08),
    expected="not reproduced",
    note="Analytic counterpart of Lumos's experiment: calibrate the graph's speed on one measured GPT-3 15B "
    "configuration (TP 2, PP 2, DP 8; Lumos starts from a TP 2 PP 2 DP 4 trace, which prints no time), predict "
    "Fig. 7c's configurations by graph edits (new PP and DP, TP x PP micro-batches per pipeline, the batch Lumos "
    "states) and compare with Lumos's measured times. Value: the mean |error| on Fig. 7c (details: every Fig. 7 "
    "configuration; negative: the prediction is too fast). The exposed communication and idle time Lumos "
    "measures grow with PP and DP far beyond the model's bubble, blocking exchanges and DP collective.",
)
def _estimate(scale):
    rows = {k: (pub, sim) for k, pub, sim in _graph_lumos(scale) if k.startswith("gpt3-15b")}
    ref_pub, ref_sim = rows.pop("gpt3-15b 2x2x8")
    pred = {k: ref_pub / ref_sim * sim for k, (_pub, sim) in rows.items()}
    err = {k: p / rows[k][0] - 1 for k, p in pred.items()}  # negative: the prediction is too fast
    fig7c = np.array([err[k] for k in ("gpt3-15b 2x4x8", "gpt3-15b 2x8x8", "gpt3-15b 2x4x16")])
    return Measured(
        float(np.abs(fig7c).mean()),
        f"Fig. 7c mean |error| {np.abs(fig7c).mean():.1%} ({fig7c.min():+.0%} to {fig7c.max():+.0%}); all Fig. 7 "
        f"configurations {np.mean(np.abs(list(err.values()))):.1%}",
        {k: round(v, 4) for k, v in err.items()},
    )


#: GPUs of the DSE's plan space at each scale, and the iteration model's form it ranks them by.
_DSE_GPUS = {"quick": 512, "full": 2048}
_DSE_FORM = {"compute": "measured", "era": "2024"}


@remember
def _dse(scale: str):
    return explore(MODELS["gpt3-175b"], GPUS["H100"], _DSE_GPUS[scale], 2048, top_k=5, **_DSE_FORM)


@claim(
    MULTIVERSE,
    "exploration-matters",
    text="Design-space exploration of training systems matters: inadequate exploration leads to significant "
    "degradation of training performance.",
    paper_value="significant degradation (abstract)",
    compare=AtLeast(0.20, partial=0.05),
    note="Value: how much slower the median plan that fits in memory is than the best (GPT-3 175B on 512 H100 at "
    "quick scale, 2,048 at full; every TP x PP x DP x micro-batch x recomputation plan; formula ranking, top 5 "
    "re-ranked by the execution graph). The paper gives no single number for this; its quantitative claims are "
    "about simulator speed (43.1-73.2x over CPU simulators) and fidelity (< 3% on up to 54,000 GPUs), which an "
    "analytic search cannot speak to.",
)
def _exploration(scale):
    r = _dse(scale)
    fit = r.plans[r.plans.fits]
    best = float(r.top.graph_s.iloc[0])
    med = float(fit.iteration_s.median())
    b = r.top.iloc[0]
    return Measured(
        med / best - 1,
        f"median fitting plan {med / best - 1:.0%} slower than the best (TP {b.tp}, PP {b.pp}, DP {b.dp}, "
        f"micro-batch {b.micro_batch}, {b.recompute}); {len(fit)} of {len(r.plans)} plans fit",
        {"plans": len(r.plans), "fit": len(fit), "best_s": best, "median_s": med},
    )


@claim(
    MULTIVERSE,
    "ten-thousand-experiments",
    text="Finding the best configuration can take up to 10,000 simulation experiments, which a fast simulator "
    "makes affordable.",
    paper_value="up to 10k experiments",
    compare=AtMost(10.0, partial=60.0),
    note="Value: seconds to rank 10,000 plans with the vectorized formula plus re-ranking the 5 fastest with the "
    "graph, measured on this machine after the DSE itself has run (loading the measured curves and compiling the "
    "graph's simulation, one-time costs): the formula on 10,000 rows of the DSE's plan space (its plans repeated), "
    "the graphs of its 5 fastest plans. A formula is far cheaper and coarser than Multiverse's packet-level GPU "
    "simulator; the claim reproduced is that 10^4 experiments fit in an interactive budget, not Multiverse's "
    "speedup.",
)
def _ten_k(scale):
    r = _dse(scale)  # the warm-up: loads the curves the formula reads and compiles the graph's simulation
    model, gpu = MODELS["gpt3-175b"], GPUS["H100"]
    space = plan_space(model, gpu, _DSE_GPUS[scale], 2048)
    rows = np.resize(np.arange(space["tp"].size), 10_000)
    t0 = time.perf_counter()
    iteration_arrays(model, {k: v[rows] for k, v in space.items()}, gpu, **_DSE_FORM)
    t1 = time.perf_counter()
    for p in r.top.itertuples():  # the DSE's re-ranking of its fastest plans, again
        plan = Plan(int(p.tp), int(p.pp), int(p.dp), int(p.global_batch), int(p.micro_batch), recompute=p.recompute)
        simulate(build_graph(model, plan, gpu, **_DSE_FORM))
    t2 = time.perf_counter()
    return Measured(
        t2 - t0,
        f"{t2 - t0:.2f} s for 10^4 plans ({10_000 / (t1 - t0):,.0f} plans/s + {len(r.top)} graphs in {t2 - t1:.2f} s)",
        {"formula_s": round(t1 - t0, 4), "graph_s": round(t2 - t1, 4)},
    )
