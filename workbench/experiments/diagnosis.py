"""Function-level fault localization (PerfTracker, arXiv:2506.08528; issue 36: the studies of
:mod:`workbench.reproductions.perftracker` as experiments).

* ``diagnosis-function-faults`` -- one simulated job of ``ranks`` ranks, ``iterations`` iterations long, in which a
  function (the data loader, the optimizer step or garbage collection: ``kind``) runs ``severity`` times slower
  from ``onset_iteration`` on one machine or on every worker (``scope``), scored for every detector
  (:func:`workbench.training.diagnosis.evaluate`): one row per ``detector`` with ``alarm``, ``correct``, ``top1``,
  ``top3`` (1 or 0), ``delay_s`` (onset to alarm, seconds; NaN when not localized), ``gpu_hours`` and the function
  and scope it blamed (``blamed_function``, ``blamed_scope``: PerfTracker's diagnosis, empty for the others).
* ``perftracker-healthy-alarms`` -- one healthy job (no fault; two checkpoint stalls in 600 iterations) at
  ``noise_level`` times the default signal noise: whether PerfTracker alarms (``alarm``, 1 or 0) and whether its
  degradation trigger alone, without the localization gate, would have fired (``trigger_only``).

* ``holmes-iteration-localization`` -- one job of ``ranks`` ranks whose one rank's link makes 5% of iterations
  ``severity`` times normal from ``onset_iteration`` on (irregular iterations), its ``collective`` timed at
  ``noise_level`` times the default noise: Holmes's operator-graph localization
  (:func:`workbench.training.diagnosis.holmes.localize_iterations`) of each irregular iteration; ``irregular``
  (iterations the fault made irregular) and ``correct`` (those traced to the faulty rank), counts.

* ``minder-healthy-alarms`` -- one healthy job (no fault) of ``ranks`` ranks at ``noise_level`` times the default
  signal noise: whether Minder (:func:`workbench.training.diagnosis.minder.detect`) alarms (``alarm``, 1 or 0) with
  a continuity window of ``continuity_s`` seconds (the same threshold, smoothing and distance at every window).

* ``c4d-collective-faults`` -- one job of ``ranks`` ranks with one fault (``kind``, any of
  :data:`workbench.training.diagnosis.FAULT_KINDS`) of ``severity`` from ``onset_iteration`` on, its ``collective``
  timed at ``noise_level`` times the default noise, scored for C4D and for the naive baseline (iteration time over
  its start; :func:`workbench.training.diagnosis.evaluate`): one row per ``detector`` with ``alarm``, ``correct``,
  ``top1``, ``top3`` (1 or 0), ``delay_s`` (onset to alarm, seconds; NaN when not localized) and ``gpu_hours``.

The simulated job's seed is the parameter ``job_seed`` (a study names its jobs so that each is one fixed job,
e.g. the same job under every scope); the sweep's seed is not used.
"""

from __future__ import annotations

import numpy as np

from ..training import diagnosis as dg
from ._space import Param, experiment

__all__ = [
    "diagnosis_function_faults",
    "perftracker_healthy_alarms",
    "holmes_iteration_localization",
    "minder_healthy_alarms",
    "c4d_collective_faults",
]

_JOB_SEED = Param("job_seed", 0, "", low=0, high=2**31 - 1, doc="seed of the simulated job")


@experiment(
    "diagnosis-function-faults",
    small={"kind": ["slow_dataloader", "gc_pause"], "ranks": 64, "iterations": 200, "onset_iteration": 50},
    params=[
        Param("kind", "slow_dataloader", choices=tuple(dg.FUNCTION_FAULTS), doc="function slowed"),
        Param("scope", "machine", choices=("machine", "all"), doc="slowed on one machine or on every worker"),
        Param("ranks", 64, "", low=8, high=65_536, log=True, doc="ranks of the job"),
        Param("severity", 3.0, "", low=1.0, high=100.0, doc="slowdown factor of the function"),
        Param("iterations", 300, "", low=20, high=100_000, doc="iterations simulated"),
        Param("onset_iteration", 100, "", low=1, high=100_000, doc="iteration at which the fault starts"),
        _JOB_SEED,
    ],
)
def diagnosis_function_faults(*, kind, scope, ranks, severity, iterations, onset_iteration, job_seed, seed):
    """Every detector on one job with one function-level fault: alarm, localization, delay and blamed function."""
    del seed  # the job is named by job_seed
    if onset_iteration >= iterations:
        raise ValueError(f"onset_iteration must be below iterations = {iterations}, got {onset_iteration}")
    sc = dg.Scenario(kind, ranks, severity, iterations=iterations, onset_iteration=onset_iteration, seed=job_seed,
                     scope=scope)  # fmt: skip
    r = dg.evaluate([sc])
    return r[["detector", "alarm", "correct", "top1", "top3", "delay_s", "gpu_hours", "blamed_function",
              "blamed_scope"]]  # fmt: skip


@experiment(
    "perftracker-healthy-alarms",
    small={"ranks": 64, "job_seed": [0, 1]},
    params=[
        Param("ranks", 256, "", low=8, high=65_536, log=True, doc="ranks of the job"),
        Param("noise_level", 1.0, "", low=0.0, high=100.0, doc="multiple of the default signal noise"),
        Param("iterations", 600, "", low=20, high=100_000, doc="iterations simulated (checkpoints every 250)"),
        _JOB_SEED,
    ],
)
def perftracker_healthy_alarms(*, ranks, noise_level, iterations, job_seed, seed):
    """Whether PerfTracker alarms on one healthy job, and whether its trigger alone would have fired."""
    del seed  # the job is named by job_seed
    s = dg.Scenario("none", ranks, noise_level=noise_level, iterations=iterations, seed=job_seed).signals()
    alarm = len(dg.perftracker.detect(s)) > 0
    bounds, ckpt = dg.perftracker.iteration_boundaries(s)
    times = np.append(np.diff(bounds), np.nan)
    times[ckpt] = np.nan
    trigger = bool(dg.perftracker.degradation_trigger(times)[0].any())
    return {"alarm": int(alarm), "trigger_only": int(trigger)}


@experiment(
    "holmes-iteration-localization",
    small={"ranks": 64, "collective": list(dg.COLLECTIVES)},
    params=[
        Param("collective", "ring", choices=tuple(dg.COLLECTIVES), doc="collective whose operators are traced"),
        Param("ranks", 256, "", low=8, high=65_536, log=True, doc="ranks of the job"),
        Param("noise_level", 1.0, "", low=0.0, high=100.0, doc="multiple of the default signal noise"),
        Param("severity", 3.0, "", low=1.0, high=100.0, doc="irregular iteration time over normal"),
        Param("iterations", 300, "", low=20, high=100_000, doc="iterations simulated"),
        Param("onset_iteration", 50, "", low=1, high=100_000, doc="iteration at which the fault starts"),
        _JOB_SEED,
    ],
)
def holmes_iteration_localization(*, collective, ranks, noise_level, severity, iterations, onset_iteration, job_seed,
                                  seed):  # fmt: skip
    """Irregular iterations of one job and how many Holmes's operator graph traces to the faulty rank."""
    del seed  # the job is named by job_seed
    if onset_iteration >= iterations:
        raise ValueError(f"onset_iteration must be below iterations = {iterations}, got {onset_iteration}")
    sc = dg.Scenario("irregular", ranks, severity, noise_level, collective, iterations=iterations,
                     onset_iteration=onset_iteration, seed=job_seed)  # fmt: skip
    s = sc.signals()
    loc = dg.holmes.localize_iterations(s)
    active = s.fault_active[0][loc.iteration.to_numpy()]
    return {
        "irregular": int(active.sum()),
        "correct": int((loc.root_rank.to_numpy()[active] == s.faults[0].rank).sum()),
    }


@experiment(
    "minder-healthy-alarms",
    small={"ranks": 64, "continuity_s": [2.0, 30.0], "job_seed": [0, 1]},
    params=[
        Param("ranks", 512, "", low=8, high=65_536, log=True, doc="ranks of the job"),
        Param("noise_level", 3.0, "", low=0.0, high=100.0, doc="multiple of the default signal noise"),
        Param(
            "continuity_s",
            30.0,
            "s",
            low=0.0,
            high=3600.0,
            low_inclusive=False,
            doc="how long a machine must stay apart from its peers before Minder alarms",
        ),
        Param("iterations", 400, "", low=20, high=100_000, doc="iterations simulated"),
        _JOB_SEED,
    ],
)
def minder_healthy_alarms(*, ranks, noise_level, continuity_s, iterations, job_seed, seed):
    """Whether Minder alarms on one healthy job with a given continuity window."""
    del seed  # the job is named by job_seed
    s = dg.Scenario("none", ranks, noise_level=noise_level, iterations=iterations, seed=job_seed).signals()
    return {"alarm": int(len(dg.minder.detect(s, continuity_s=continuity_s)) > 0)}


@experiment(
    "c4d-collective-faults",
    small={"ranks": 64, "kind": ["nic_degraded", "slow_gpu"], "iterations": 200, "onset_iteration": 50},
    params=[
        Param("kind", "nic_degraded", choices=tuple(dg.FAULT_KINDS), doc="fault injected"),
        Param("collective", "ring", choices=tuple(dg.COLLECTIVES), doc="collective whose timings are read"),
        Param("ranks", 256, "", low=8, high=65_536, log=True, doc="ranks of the job"),
        Param("severity", 3.0, "", low=1.0, high=100.0, doc="fault severity (slowdown factor)"),
        Param("noise_level", 1.0, "", low=0.0, high=100.0, doc="multiple of the default signal noise"),
        Param("iterations", 300, "", low=20, high=100_000, doc="iterations simulated"),
        Param("onset_iteration", 100, "", low=1, high=100_000, doc="iteration at which the fault starts"),
        _JOB_SEED,
    ],
)
def c4d_collective_faults(*, kind, collective, ranks, severity, noise_level, iterations, onset_iteration, job_seed,
                          seed):  # fmt: skip
    """C4D and the naive baseline on one job with one fault: alarm, localization and delay."""
    del seed  # the job is named by job_seed
    if onset_iteration >= iterations:
        raise ValueError(f"onset_iteration must be below iterations = {iterations}, got {onset_iteration}")
    sc = dg.Scenario(kind, ranks, severity, noise_level, collective, iterations=iterations,
                     onset_iteration=onset_iteration, seed=job_seed)  # fmt: skip
    r = dg.evaluate([sc], ["c4d", "naive"])
    return r[["detector", "alarm", "correct", "top1", "top3", "delay_s", "gpu_hours"]]
