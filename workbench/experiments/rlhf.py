"""RLHF training studies: RLHFuse's fused Actor/Critic pipelines (issue 27).

* ``rlhf-fused-pipeline`` -- one fused-pipeline instance scheduled by one ``method``
  (:mod:`workbench.training.fused_pipeline`): ``bound`` (the four-term lower bound), ``sequential-1f1b`` (the
  Actor's 1F1B, then the Critic's), ``greedy`` (a list schedule), ``anneal`` (simulated annealing over task
  priority orders, ``iterations`` moves from the best heuristic order; seeded) or ``published`` (the authors'
  schedule, read and checked). ``instance`` picks one of the 12 published instances (``rlhfuse-schedules`` on the
  data search path); ``-1`` takes the instance from ``pp0 .. mem1`` instead (no data needed).
  ``memory`` ``published`` caps activation memory per GPU at the published schedule's peak (``greedy``/``anneal``).

``method`` and ``memory`` are treatments (not seeded). Every row reports the makespan, the bound, the gap to the
bound, the peak activation memory and the utilization, all recomputed by the checker from the schedule's tasks.

* ``rlhf-fused-schedule`` -- the schedule itself, task by task, of a small fused pipeline you shape (the Actor's
  ``pp0`` stages and ``m0`` micro-batches, forward 10 time units per stage; the Critic's ``pp1`` stages, ``m1``
  micro-batches per replica and forward ``critic_size`` times the Actor's), scheduled by ``method``: one row per task
  (``model``, ``microbatch``, ``task``, ``gpu``, ``start``, ``end``) carrying the schedule's ``makespan`` and
  ``peak_memory`` (the checker's), the ``lower_bound`` and the ``sequential_makespan`` of 1F1B. Its ranges are those
  of a pipeline drawn task by task (a Gantt chart of at most 16 GPUs and ~3,000 tasks, annealed in about a second);
  larger and published instances are ``rlhf-fused-pipeline``'s.

* ``rlhf-generation-tail`` -- generation then inference of ``samples`` RLHF samples on ``instances`` serving replicas
  (:mod:`workbench.training.generation_tail`): the baseline (inference after the longest sample) and RLHFuse's
  inter-stage fusion (the last ``threshold`` share of samples migrated to ``tail_instances`` instances, inference
  started on the freed ones). Lengths from ``source`` (BurstGPT's generator with log-space spread ``sigma``, or
  ServeGen's reasoning model), capped at ``max_tokens``. ``threshold``, ``tail_instances``, ``instances`` and
  ``sigma`` are treatments (every value sees the same draws); the row gives both stage times, the gain, the
  migration time and what generation alone takes.
* ``rlhf-generation-tail-samples`` -- the same run sample by sample: one row per sample with when it finished
  generating in the baseline (``completion_s``) and with the tail migrated (``fused_completion_s``), each row carrying
  the run's ``rlhf-generation-tail`` results (the same parameters draw the same lengths in both).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._rng import int31_seed
from ..serving.roofline import Deployment
from ..training import fused_pipeline as fp
from ..training import generation_tail as gt
from ._space import Param, experiment

__all__ = [
    "rlhf_fused_pipeline",
    "rlhf_fused_schedule",
    "rlhf_generation_tail",
    "rlhf_generation_tail_samples",
    "generation_tail_run",
]

METHODS = ("bound", "sequential-1f1b", "greedy", "anneal", "published")
#: The methods that make a schedule of a pipeline you shape (``bound`` makes none, ``published`` needs a published
#: instance).
SCHEDULERS = ("anneal", "greedy", "sequential-1f1b")
#: The Actor's forward time per stage in ``rlhf-fused-schedule`` (time units): the Critic's is ``critic_size`` x this.
ACTOR_FORWARD = 10


@experiment(
    "rlhf-fused-pipeline",
    version="2",
    small={"method": ["greedy", "anneal", "sequential-1f1b"], "iterations": 300},
    params=[
        Param("instance", -1, "", low=-1, high=11, doc="published instance (0-11), or -1 for pp0 .. mem1 below"),
        Param("method", "anneal", choices=METHODS, seeded=False, doc="how the fused pipeline is scheduled"),
        Param("iterations", 20_000, "", low=1, high=10**8, log=True, doc="annealing moves"),
        Param("memory", "unlimited", choices=("unlimited", "published"), seeded=False, doc="activation memory cap"),
        Param("pp0", 8, "", low=1, high=256, doc="Actor pipeline stages (= GPUs) when instance = -1"),
        Param("pp1", 4, "", low=1, high=256, doc="Critic pipeline stages (divides pp0) when instance = -1"),
        Param("m0", 8, "", low=1, high=4096, doc="Actor micro-batches when instance = -1 (thousands: minutes)"),
        Param(
            "m1", 4, "", low=1, high=4096, doc="micro-batches per Critic replica, instance = -1 (thousands: minutes)"
        ),
        Param("f0", 5, "", low=1, high=10_000, doc="Actor forward time per stage (time units) when instance = -1"),
        Param("f1", 4, "", low=1, high=10_000, doc="Critic forward time per stage when instance = -1"),
        Param("mem0", 1.95, "", low=0.0, doc="Actor activation memory per micro-batch and stage, instance = -1"),
        Param("mem1", 2.0, "", low=0.0, doc="Critic activation memory per micro-batch and stage, instance = -1"),
    ],
)
def rlhf_fused_pipeline(*, instance, method, iterations, memory, pp0, pp1, m0, m1, f0, f1, mem0, mem1, seed):
    """Makespan, gap to the lower bound and peak memory of one fused-pipeline schedule."""
    if instance >= 0:
        inst = fp.load_instances()[instance]
    else:
        inst = fp.Instance(pp0=pp0, pp1=pp1, m0=m0, m1=m1, f0=f0, f1=f1, mem0=mem0, mem1=mem1)
    if (method == "published" or memory == "published") and instance < 0:
        raise ValueError("method 'published' and memory 'published' need a published instance (instance >= 0)")
    limit = None
    if memory == "published":
        limit = fp.check_schedule(inst, fp.published_schedule(inst.exp)).peak_memory
    bound = fp.lower_bound(inst).value
    if method == "bound":
        return {"makespan": float(bound), "lower_bound": float(bound), "gap_to_bound": 0.0, "peak_memory": float("nan"),
                "utilization": inst.work / (inst.gpus * bound)}  # fmt: skip
    if method == "published":
        sched = fp.published_schedule(inst.exp)
    else:
        sched = _schedule(inst, method, seed=seed, iterations=iterations, memory_limit=limit)
    c = fp.check_schedule(inst, sched)
    return {
        "makespan": c.makespan,
        "lower_bound": float(bound),
        "gap_to_bound": c.makespan / bound - 1.0,
        "peak_memory": c.peak_memory,
        "utilization": c.utilization,
    }


def _schedule(inst, method: str, *, seed: int, iterations: int, memory_limit: float | None = None):
    """``inst`` scheduled by ``method`` (one of :data:`SCHEDULERS`)."""
    if method == "sequential-1f1b":
        return fp.sequential_1f1b(inst)
    if method == "greedy":
        return fp.greedy(inst, memory_limit=memory_limit)
    return fp.anneal(inst, seed=int31_seed(seed), iterations=iterations, memory_limit=memory_limit)


@experiment(
    "rlhf-fused-schedule",
    small={"method": list(SCHEDULERS), "pp0": 4, "pp1": 2, "m0": 4, "m1": 2, "iterations": 300},
    params=[
        Param("pp0", 8, "", choices=(2, 4, 8, 16), label="Actor stages (GPUs)", doc="Actor pipeline stages (= GPUs)"),
        Param("pp1", 4, "", choices=(1, 2, 4, 8), label="Critic stages", doc="Critic pipeline stages (at most pp0)"),
        Param("m0", 8, "", low=1, high=32, label="Actor micro-batches", doc="Actor micro-batches"),
        Param("m1", 4, "", low=1, high=32, label="Critic micro-batches", doc="micro-batches per Critic replica"),
        Param("critic_size", 0.5, "", choices=(0.1, 0.2, 0.3, 0.5, 0.7, 1.0), label="Critic / Actor size",
              doc=f"Critic forward time per stage over the Actor's ({ACTOR_FORWARD} time units)"),
        Param("method", "anneal", choices=SCHEDULERS, seeded=False, label="schedule", doc="how it is scheduled"),
        Param("iterations", 3_000, "", low=1, high=10**8, log=True, doc="annealing moves"),
    ],
)  # fmt: skip
def rlhf_fused_schedule(*, pp0, pp1, m0, m1, critic_size, method, iterations, seed):
    """One schedule of a small fused pipeline, one row per task, with its makespan, peak memory and bounds."""
    if pp1 > pp0:
        raise ValueError(f"pp1 must not exceed pp0 = {pp0} (the Critic runs on the Actor's GPUs), got {pp1}")
    inst = fp.Instance(pp0=pp0, pp1=pp1, m0=m0, m1=m1, f0=ACTOR_FORWARD, f1=max(1, round(ACTOR_FORWARD * critic_size)))
    sched = _schedule(inst, method, seed=seed, iterations=iterations)
    check = fp.check_schedule(inst, sched)
    tasks = pd.DataFrame({k: np.asarray(getattr(sched, k)) for k in ("model", "microbatch", "task", "gpu", "start",
                                                                      "end")})  # fmt: skip
    return tasks.assign(
        makespan=float(check.makespan),
        peak_memory=float(check.peak_memory),
        lower_bound=float(fp.lower_bound(inst).value),
        sequential_makespan=fp.sequential_1f1b(inst).makespan,
    )


_TAIL_PARAMS = [
    Param("source", "burstgpt", choices=gt.SOURCES, doc="output-length model"),
    Param("sigma", 0.8, "", low=0.0, high=3.0, seeded=False, doc="BurstGPT response log-space spread (tail)"),
    Param("max_tokens", 8192, "tokens", low=16, high=65536, log=True, doc="maximum generated length"),
    Param("samples", 512, "", low=2, high=65536, log=True, doc="samples (prompts) per RLHF iteration"),
    Param("instances", 8, "", low=2, high=1024, seeded=False, doc="generation instances (replicas)"),
    Param("tail_instances", 2, "", low=1, high=1023, seeded=False, doc="instances that finish the tail"),
    Param(
        "threshold",
        0.02,
        "fraction",
        low=0.0,
        high=1.0,
        high_inclusive=False,
        seeded=False,
        doc="migrate once at most this share of samples remain (0: never)",
    ),
    Param("inference_models", 3.0, "", low=0.0, high=10.0, doc="Actor-sized forward passes per sample"),
    Param("model", "Llama-3.1-8B", doc="the Actor (serving spec table)"),
    Param("gpu", "H100-SXM", doc="GPU (hardware table)"),
    Param("tp", 1, "", low=1, high=64, doc="tensor-parallel GPUs per instance"),
]


@experiment(
    "rlhf-generation-tail",
    version="2",
    small={"threshold": [0.0, 0.02, 0.1], "samples": 128, "instances": 8},
    params=_TAIL_PARAMS,
)
def rlhf_generation_tail(
    *, source, sigma, max_tokens, samples, instances, tail_instances, threshold, inference_models, model, gpu, tp, seed
):
    """Generation + inference stage time, baseline and fused, for one length draw."""
    return generation_tail_run(
        source=source, sigma=sigma, max_tokens=max_tokens, samples=samples, instances=instances,
        tail_instances=tail_instances, threshold=threshold, inference_models=inference_models, model=model, gpu=gpu,
        tp=tp, seed=seed,
    ).summary()  # fmt: skip


@experiment(
    "rlhf-generation-tail-samples",
    small={"threshold": [0.0, 0.1], "samples": 64, "instances": 4},
    params=_TAIL_PARAMS,
)
def rlhf_generation_tail_samples(
    *, source, sigma, max_tokens, samples, instances, tail_instances, threshold, inference_models, model, gpu, tp, seed
):
    """When each sample finished generating, baseline and fused, with the run's results on every row."""
    run = generation_tail_run(
        source=source, sigma=sigma, max_tokens=max_tokens, samples=samples, instances=instances,
        tail_instances=tail_instances, threshold=threshold, inference_models=inference_models, model=model, gpu=gpu,
        tp=tp, seed=seed,
    )  # fmt: skip
    per_sample = pd.DataFrame({"sample": np.arange(len(run.completion)), "completion_s": run.completion,
                               "fused_completion_s": run.fused_completion})  # fmt: skip
    return per_sample.assign(**run.summary())


def generation_tail_run(
    *, source, sigma, max_tokens, samples, instances, tail_instances, threshold, inference_models, model, gpu, tp, seed
) -> gt.TailRun:
    """The model run behind ``rlhf-generation-tail`` and ``rlhf-generation-tail-samples``."""
    if tail_instances >= instances:
        raise ValueError(f"tail_instances must be below instances ({instances}), got {tail_instances}")
    if instances > samples:
        raise ValueError(f"instances must not exceed samples ({samples}), got {instances}")
    dep = Deployment(model, gpu, tp=tp)
    p, o = gt.sample_lengths(source, samples, sigma=sigma, max_tokens=max_tokens, seed=seed)
    return gt.generation_stage(
        dep, p, o, instances=instances, tail_instances=tail_instances, threshold=threshold,
        inference_models=inference_models,
    )  # fmt: skip
