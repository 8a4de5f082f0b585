"""Training-cluster studies: iteration time vs GPU count x routing, ETTR vs MTBF x checkpoint interval, and fault
detection vs signal noise.

* ``training-iteration-time`` -- one parallelism plan (``tp`` x ``pp`` x ``dp`` GPUs) of a model on a GPU type, its
  data-parallel collective stepped on a non-blocking leaf-spine of ``hosts_per_leaf`` hosts per leaf under
  ``routing`` (:func:`workbench.training.iteration_time`; one ECMP hashing per job, seeded). A plan that does not
  fit raises :class:`~workbench.training.PlanError`, reported in the sweep's errors table.
* ``training-iteration-breakdown`` -- one job of ``gpus`` GPUs laid out ``tp x pp`` (DP fills the rest, each DP
  replica ``batch_per_replica`` sequences, ``recompute`` activations), its memory checked
  (:func:`workbench.training.check_plan`: a plan that does not fit raises :class:`~workbench.training.PlanError`
  naming the GiB) and its iteration broken down (:func:`workbench.training.iteration.iteration_table`: compute,
  TP, PP, bubble, exposed DP communication, MFU, memory) with the DP ``collective`` routed by ``routing`` on a
  non-blocking leaf-spine of whole leaves of ``hosts_per_leaf``. ECMP's (and MP-x's) hashing of the job is
  ``hashing`` (numbered like ``training-plan-routing-gain``'s, so the sweep's seed is not used). The study of
  notebook 07's iteration panel: per routing it is the breakdown, swept over ``gpus`` the weak scaling
  (:func:`workbench.training.scaling.weak_scaling` at one hashing).
* ``training-what-if`` -- a Lumos-style edit of a base plan (``base_*``) of a dense model on a GPU type: the
  execution graph of the base (:func:`workbench.training.exec_graph.build_graph`) edited to ``tp``, ``pp``, ``dp``,
  ``global_batch`` and ``recompute`` (:func:`~workbench.training.exec_graph.what_if`) and both simulated. Rows
  with ``kind`` ``"plan"`` (the base and the edited plan, ``plan`` their label, stage 0's breakdown: exposed
  compute, overlapped, exposed communication, other) and ``"stage"`` (the edited plan's every pipeline stage,
  ``stage`` its index); on every row the edited plan's ``iteration_s``, the base's, the formula's, the critical
  path's compute, TP-communication and wait seconds, the graph's nodes and GPUs. A base or edit that does not fit
  raises :class:`~workbench.training.PlanError`. The study of notebook 07's what-if panel.
* ``training-ettr`` -- the effective training time ratio of a job whose failures arrive every ``mtbf_h`` hours,
  checkpointing every ``interval_s`` (or migrating live): closed form (:func:`workbench.training.failures.ettr`)
  and Monte-Carlo (:func:`workbench.training.failures.simulate`).
* ``training-dse`` -- design-space exploration (Multiverse-style search, Lumos-style final ranking): every TP x PP
  x DP x micro-batch x recomputation plan of ``n_gpus`` GPUs ranked by the formula (vectorized), the fastest that fit
  in memory re-ranked by the execution graph (:func:`workbench.training.dse.explore`).
* ``diagnosis-detection`` -- one job with one fault (or none) at ``noise_level`` times the default signal noise,
  scored for one detector (:func:`workbench.training.diagnosis.run_scenario`).

``routing``, ``mode`` and ``detector`` are treatments (not seeded): at a point every value sees the same draws.
"""

from __future__ import annotations

import math
from dataclasses import asdict

import pandas as pd

from .._rng import int31_seed
from ..fabric.routing import ROUTINGS
from ..fabric.topology import leaf_spine
from ..training import GPUS, MODELS, Plan, PlanError, check_plan, iteration_time
from ..training import failures as tf
from ..training.diagnosis import FAULT_KINDS
from ..training.diagnosis.evaluate import DETECTORS, Scenario, run_scenario
from ..training.dse import explore
from ..training.exec_graph import build_graph, simulate, what_if
from ..training.iteration import COMPUTE_FORMS, ERAS, iteration_table
from ._space import Param, experiment
from .diagnosis import noise_level_param

__all__ = [
    "training_iteration_time",
    "training_iteration_breakdown",
    "training_ettr",
    "training_dse",
    "diagnosis_detection",
]


#: The compute term of the iteration model (a treatment: the same plan under both forms): the validated model's
#: measured kernels, or one efficiency per GPU generation (the back-of-the-envelope estimate, for comparison).
_COMPUTE = Param(
    "compute",
    "measured",
    choices=COMPUTE_FORMS,
    seeded=False,
    doc="compute term: measured kernels (the validated model) or one efficiency per GPU generation",
)
#: The software era of the kernels (a treatment): today's FlashAttention-era stacks, or 2021's Megatron-LM.
_ERA = Param("era", "2024", choices=ERAS, seeded=False, doc="software era of the kernels (attention unfused in 2021)")


#: The largest TP (one node's NVLink domain) and PP (the deepest model's layers) any GPU and model of the tables
#: allow: beyond them every plan is refused.
_MAX_TP = max(g.gpus_per_node for g in GPUS.values())
_MAX_PP = max(m.layers for m in MODELS.values())


@experiment(
    "training-iteration-time",
    version="7",
    small={"dp": 4, "routing": ["ecmp", "planned"]},
    params=[
        Param("model", "gpt3-175b", choices=tuple(MODELS), doc="model"),
        Param("gpu", "H100", choices=tuple(GPUS), doc="GPU type (its NIC sets the host links)"),
        Param("dp", 32, "", low=1, high=65_536, doc="data-parallel degree (GPUs = tp x pp x dp)"),
        Param("tp", 8, "", low=1, high=_MAX_TP, doc="tensor-parallel degree (within a node's NVLink domain)"),
        Param("pp", 4, "", low=1, high=_MAX_PP, doc="pipeline-parallel degree (at most the model's layers)"),
        Param("global_batch", 512, "", low=1, doc="sequences per iteration"),
        Param("routing", "ecmp", choices=tuple(ROUTINGS), seeded=False, doc="how the DP collective's paths are chosen"),
        Param("collective", "ring", choices=("ring", "halving_doubling"), doc="DP all-reduce algorithm"),
        Param("hosts_per_leaf", 32, "", low=1, high=256, doc="GPUs (one NIC each) per leaf; spines = hosts_per_leaf"),
        _COMPUTE,
        _ERA,
    ],
)
def training_iteration_time(
    *, model, gpu, dp, tp, pp, global_batch, routing, collective, hosts_per_leaf, compute, era, seed
):
    """Iteration-time breakdown of one plan on a non-blocking leaf-spine."""
    spec = GPUS[gpu]
    plan = Plan(tp=tp, pp=pp, dp=dp, global_batch=global_batch)
    leaves = math.ceil(plan.gpus / hosts_per_leaf)
    topo = leaf_spine(leaves, hosts_per_leaf, hosts_per_leaf, host_gbps=spec.nic_gbps)
    breakdown = iteration_time(
        MODELS[model], plan, spec, topo, routing, collective=collective, seed=int31_seed(seed), compute=compute, era=era
    )
    return {"gpus": plan.gpus, **asdict(breakdown)}


#: The iteration panel's columns of :func:`~workbench.training.iteration.iteration_table` that restate a parameter.
_PLAN_COLUMNS = ("tp", "pp", "gpus", "recompute")


@experiment(
    "training-iteration-breakdown",
    version="1",
    small={"model": "gpt-18b", "gpus": [256, 512], "pp": 2, "routing": ["ecmp", "planned"]},
    params=[
        Param("model", "gpt3-175b", choices=tuple(MODELS), doc="model"),
        Param("gpu", "H100", choices=tuple(GPUS), label="GPU", doc="GPU type (its NIC sets the host links)"),
        Param("gpus", 1024, "", low=256, high=16_384, log=True, label="GPUs",
              doc="GPUs of the job: tp x pp x dp, whole leaves of hosts_per_leaf"),
        Param("tp", 8, "", low=1, high=8, label="TP", doc="tensor-parallel degree (within a host's NVLink domain)"),
        Param("pp", 8, "", low=1, high=16, label="PP", doc="pipeline-parallel degree"),
        Param("batch_per_replica", 16, "", low=1, high=64, label="sequences per replica",
              doc="sequences per DP replica per iteration (global batch = dp x this)"),
        Param("routing", "ecmp", choices=tuple(ROUTINGS), seeded=False, doc="how the DP collective's paths are chosen"),
        Param("collective", "ring", choices=("ring", "halving_doubling", "double_binary_tree"), label="DP collective",
              doc="DP all-reduce algorithm (halving-doubling needs a power-of-two DP)"),
        Param("recompute", "selective", choices=("selective", "full"),
              doc="activation recomputation (selective: the c4-training claims' setting)"),
        Param("hosts_per_leaf", 32, "", low=1, high=256, doc="GPUs (one NIC each) per leaf; spines = hosts_per_leaf"),
        Param("hashing", 0, "", low=0, high=2**31 - 1, doc="ECMP hashing of the job (numbered; the claims average 0-3)"),
    ],
)  # fmt: skip
def training_iteration_breakdown(*, model, gpu, gpus, tp, pp, batch_per_replica, routing, collective, recompute,
                                 hosts_per_leaf, hashing, seed):  # fmt: skip
    """Iteration-time breakdown, MFU and memory of one job under one routing (one hashing)."""
    del seed  # the hashing is a parameter
    if gpus % hosts_per_leaf or gpus % (tp * pp):
        raise ValueError(
            f"gpus must be a multiple of hosts_per_leaf = {hosts_per_leaf} and of tp x pp = {tp * pp}, got {gpus}"
        )
    spec, dp = GPUS[gpu], gpus // (tp * pp)
    plan = Plan(tp, pp, dp, dp * batch_per_replica, recompute=recompute)
    check_plan(MODELS[model], plan, spec, n_gpus=gpus)
    topo = leaf_spine(gpus // hosts_per_leaf, hosts_per_leaf, hosts_per_leaf, host_gbps=spec.nic_gbps)
    row = iteration_table(MODELS[model], [plan], spec, topo, routing, collective=collective, seed=hashing).iloc[0]
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items() if k not in _PLAN_COLUMNS}


#: Dense models (the execution graph's edits keep a GPT-like architecture).
_DENSE = tuple(m for m in MODELS if not MODELS[m].is_moe)


def _plan_label(plan: Plan) -> str:
    return f"TP{plan.tp} PP{plan.pp} DP{plan.dp} b{plan.global_batch}"


@experiment(
    "training-what-if",
    version="1",
    small={"model": "gpt-18b", "pp": [4, 8], "dp": [8, 16]},
    params=[
        Param("model", "gpt3-175b", choices=_DENSE, doc="dense model"),
        Param("gpu", "H100", choices=tuple(GPUS), label="GPU", doc="GPU type"),
        Param("base_tp", 8, "", low=1, high=_MAX_TP, label="base TP", doc="base plan's tensor-parallel degree"),
        Param("base_pp", 8, "", low=1, high=_MAX_PP, label="base PP", doc="base plan's pipeline-parallel degree"),
        Param("base_dp", 8, "", low=1, high=65_536, label="base DP", doc="base plan's data-parallel degree"),
        Param("base_batch", 512, "", low=1, high=1_000_000, label="base batch", doc="base plan's global batch"),
        Param("base_recompute", "full", choices=("selective", "full"), label="base recompute",
              doc="base plan's activation recomputation"),
        Param("tp", 8, "", low=1, high=8, label="TP", doc="edited tensor-parallel degree (within a host)"),
        Param("pp", 8, "", low=1, high=16, label="PP", doc="edited pipeline-parallel degree"),
        Param("dp", 8, "", low=1, high=128, label="DP", doc="edited data-parallel degree"),
        Param("global_batch", 512, "", low=128, high=2048, log=True, label="batch",
              doc="edited sequences per iteration (a quarter to four times the base's)"),
        Param("recompute", "full", choices=("selective", "full"), doc="edited activation recomputation"),
    ],
)  # fmt: skip
def training_what_if(*, model, gpu, base_tp, base_pp, base_dp, base_batch, base_recompute, tp, pp, dp, global_batch,
                     recompute, seed):  # fmt: skip
    """Base and edited plans' stage-0 breakdowns and the edited plan's per-stage breakdowns (execution graph)."""
    del seed  # deterministic
    try:
        base = build_graph(
            MODELS[model], Plan(base_tp, base_pp, base_dp, base_batch, recompute=base_recompute), GPUS[gpu]
        )
    except PlanError as exc:  # the plan's own words (tp, global_batch) are this experiment's base_* knobs
        raise PlanError(
            f"the base plan (base_tp={base_tp}, base_pp={base_pp}, base_dp={base_dp}, base_batch={base_batch}) does "
            f"not fit: {exc} (its tp, pp, dp and global_batch are base_tp, base_pp, base_dp and base_batch here)"
        ) from exc
    base_result = simulate(base)
    g = what_if(base, tp=tp, pp=pp, dp=dp, global_batch=global_batch, recompute=recompute)
    result = simulate(g)
    cs = result.critical_share(g)
    common = {
        "iteration_s": result.iteration_s,
        "base_iteration_s": base_result.iteration_s,
        "formula_iteration_s": float(g.formula["iteration_s"]),
        "critical_compute_s": cs["compute"],
        "critical_tp_comm_s": cs["tp_comm"],
        "critical_wait_s": cs["wait"],
        "nodes": int(g.n_nodes),
        "gpus": int(g.plan.gpus),
    }
    label = _plan_label(g.plan)
    rows = [
        {"kind": "plan", "plan": f"base {_plan_label(base.plan)}", "stage": -1, **base_result.breakdown, **common},
        {"kind": "plan", "plan": label, "stage": -1, **result.breakdown, **common},
    ]
    rows += [
        {"kind": "stage", "plan": label, "stage": int(r.stage), **{k: float(r[k]) for k in base_result.breakdown},
         **common}
        for _, r in result.per_stage.reset_index().iterrows()
    ]  # fmt: skip
    return pd.DataFrame(rows)


@experiment(
    "training-ettr",
    version="1",
    small={"mtbf_h": [1.0, 10.0], "replicas": 20},
    params=[
        Param("mtbf_h", 3.0, "h", low=0.01, high=10_000.0, doc="mean time between job-interrupting failures"),
        Param("interval_s", 3600.0, "s", low=1.0, high=1e7, doc="checkpoint interval"),
        Param("mode", "checkpoint", choices=("checkpoint", "live"), seeded=False, doc="restart or live migration"),
        Param("checkpoint_s", 60.0, "s", low=0.0, high=1e5, doc="time to write a checkpoint"),
        Param("detect_s", 600.0, "s", low=0.0, high=1e6, doc="time to detect a failure"),
        Param("isolate_s", 1800.0, "s", low=0.0, high=1e6, doc="time to isolate the faulty machine"),
        Param(
            "replicas",
            200,
            "",
            low=2,
            high=100_000,
            doc="Monte-Carlo replicas of 30 days (>= 2: a standard error)",
        ),
    ],
)
def training_ettr(*, mtbf_h, interval_s, mode, checkpoint_s, detect_s, isolate_s, replicas, seed):
    """ETTR in closed form and by Monte-Carlo (with its standard error over replicas)."""
    recovery = tf.Recovery(
        mode=mode, interval_s=interval_s, checkpoint_s=checkpoint_s, detect_s=detect_s, isolate_s=isolate_s
    )
    rate = 1.0 / (mtbf_h * 3600.0)
    closed = tf.ettr(rate, recovery)
    mc = tf.simulate(rate, recovery, replicas=replicas, seed=seed)
    return {"ettr": closed["ettr"], "ettr_monte_carlo": mc["ettr"], "ettr_se": mc["ettr_se"]}


@experiment(
    "training-dse",
    version="6",
    small={"n_gpus": [64, 512], "global_batch": 512, "top_k": 3},
    params=[
        Param("model", "gpt3-175b", choices=tuple(m for m in MODELS if not MODELS[m].is_moe), doc="dense model"),
        Param("gpu", "H100", choices=tuple(GPUS), doc="GPU type"),
        Param("n_gpus", 512, "", low=1, high=65_536, doc="GPUs of the job (tp x pp x dp)"),
        Param("global_batch", 512, "", low=1, high=1_000_000, doc="sequences per iteration"),
        Param("top_k", 5, "", low=1, high=50, doc="fastest plans (by the formula) re-ranked by the graph"),
        _COMPUTE,
        _ERA,
    ],
)
def training_dse(*, model, gpu, n_gpus, global_batch, top_k, compute, era, seed):
    """Fastest plan that fits, by the formula and after the graph's re-ranking (speed: benchmarks/bench_training.py)."""
    r = explore(MODELS[model], GPUS[gpu], n_gpus, global_batch, top_k=top_k, compute=compute, era=era)
    best, by_formula = r.top.iloc[0], r.top.sort_values("formula_rank").iloc[0]
    return {
        "plans": len(r.plans),
        "plans_fit": int(r.plans.fits.sum()),
        "best_tp": int(best.tp),
        "best_pp": int(best.pp),
        "best_dp": int(best.dp),
        "best_micro_batch": int(best.micro_batch),
        "best_full_recompute": int(best.recompute == "full"),
        "best_graph_s": float(best.graph_s),
        "formula_best_graph_s": float(by_formula.graph_s),
        "rerank_changed": int(best.formula_rank != 0),
        "graph_vs_formula": float(best.graph_s / best.formula_s - 1.0),
    }


@experiment(
    "diagnosis-detection",
    version="1",
    small={"detector": ["c4d", "naive"]},
    params=[
        Param("kind", "slow_gpu", choices=(*FAULT_KINDS, "none"), doc="fault injected ('none': a healthy job)"),
        Param("detector", "c4d", choices=tuple(DETECTORS), seeded=False, doc="detector scored"),
        noise_level_param(),
        Param("severity", 2.0, "", low=1.0, high=100.0, doc="fault severity (slowdown factor)"),
        Param("ranks", 64, "", low=8, high=65_536, multiple=8, doc="ranks of the job (machines of 8)"),
        Param("collective", "ring", choices=("ring", "halving_doubling"), doc="collective whose timings are read"),
    ],
)
def diagnosis_detection(*, kind, detector, noise_level, severity, ranks, collective, seed):
    """Whether ``detector`` raises an alarm and localizes the fault in one job, and how fast.

    ``alarm``, ``correct``, ``top1`` and ``top3`` are 1 or 0 (their means over seeds are rates); ``delay_s`` and
    ``gpu_hours`` are NaN when the detector does not localize the fault."""
    scenario = Scenario(kind, ranks, severity, noise_level, collective=collective, seed=int31_seed(seed))
    row = run_scenario(scenario, [detector])[0]
    return {
        **{k: int(row[k]) for k in ("alarm", "correct", "top1", "top3")},
        **{k: float(row[k]) for k in ("delay_s", "gpu_hours")},
    }
