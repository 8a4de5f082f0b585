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

* ``fault-localization-job`` -- what the fault-localization panel shows of one job of ``ranks`` ranks with one fault
  (``kind``: any collective-level or function-level fault) of ``severity`` from iteration 100 of 300, its
  ``collective`` timed at ``noise_level`` times the default noise, seen by ``detectors`` (every detector, or one):
  rows by ``part`` -- ``score`` (per ``detector``: ``alarm``, ``top1``, ``top3``, ``delay_s`` and the function and
  scope it ``blamed``), and the timing heat map's ``cell``, ``fault`` and ``suspect`` rows
  (:func:`workbench.training.diagnosis.evaluate.timing_view`).
* ``fault-localization-thresholds`` -- precision and recall of ``detectors`` at each value of their threshold
  (:func:`workbench.training.diagnosis.threshold_sweep`) over ``jobs`` jobs with that fault and as many healthy ones
  (of ``ranks`` ranks, at most 1,024 so that a panel answers in seconds), each job seeded from ``job_seed``.

The simulated job's seed is the parameter ``job_seed`` (a study names its jobs so that each is one fixed job,
e.g. the same job under every scope); the sweep's seed is not used.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._rng import keyed_int
from ..training import diagnosis as dg
from ..training.diagnosis.evaluate import timing_view
from ._space import Param, experiment

__all__ = [
    "diagnosis_function_faults",
    "perftracker_healthy_alarms",
    "holmes_iteration_localization",
    "minder_healthy_alarms",
    "c4d_collective_faults",
    "fault_localization_job",
    "fault_localization_thresholds",
]

_JOB_SEED = Param("job_seed", 0, "", low=0, high=2**31 - 1, doc="seed of the simulated job")


def noise_level_param(default: float = 1.0) -> Param:
    """The ``noise_level`` control of a simulated job's study: 0 to 10 times the default noise. At 10 a rank's compute
    time already jitters by 30% (log-normal sigma) every iteration; far beyond it the slowest of a job's ranks sets
    iterations hundreds of times the nominal (at 50, up to 500x on 512 ranks), whose metric samples no longer fit in
    memory."""
    return Param("noise_level", default, "", low=0.0, high=10.0, doc="multiple of the default signal noise")


def _scenario(kind, ranks, severity, *, iterations, onset_iteration, job_seed, noise_level=1.0, collective="ring",
              scope=None) -> dg.Scenario:  # fmt: skip
    """The simulated job of a point: ``onset_iteration`` checked against ``iterations`` (naming both)."""
    if onset_iteration >= iterations:
        raise ValueError(f"onset_iteration must be below iterations = {iterations}, got {onset_iteration}")
    return dg.Scenario(kind, ranks, severity, noise_level, collective, iterations=iterations,
                       onset_iteration=onset_iteration, seed=job_seed, scope=scope)  # fmt: skip


@experiment(
    "diagnosis-function-faults",
    small={"kind": ["slow_dataloader", "gc_pause"], "ranks": 64, "iterations": 200, "onset_iteration": 50},
    params=[
        Param("kind", "slow_dataloader", choices=tuple(dg.FUNCTION_FAULTS), doc="function slowed"),
        Param("scope", "machine", choices=("machine", "all"), doc="slowed on one machine or on every worker"),
        Param("ranks", 64, "", low=8, high=65_536, log=True, multiple=8, doc="ranks of the job (machines of 8)"),
        Param("severity", 3.0, "", low=1.0, high=100.0, doc="slowdown factor of the function"),
        Param("iterations", 300, "", low=20, high=100_000, doc="iterations simulated"),
        Param("onset_iteration", 100, "", low=1, high=100_000, doc="iteration at which the fault starts"),
        _JOB_SEED,
    ],
)
def diagnosis_function_faults(*, kind, scope, ranks, severity, iterations, onset_iteration, job_seed, seed):
    """Every detector on one job with one function-level fault: alarm, localization, delay and blamed function."""
    del seed  # the job is named by job_seed
    sc = _scenario(kind, ranks, severity, iterations=iterations, onset_iteration=onset_iteration, job_seed=job_seed,
                   scope=scope)  # fmt: skip
    r = dg.evaluate([sc])
    return r[["detector", "alarm", "correct", "top1", "top3", "delay_s", "gpu_hours", "blamed_function",
              "blamed_scope"]]  # fmt: skip


@experiment(
    "perftracker-healthy-alarms",
    small={"ranks": 64, "job_seed": [0, 1]},
    params=[
        Param("ranks", 256, "", low=8, high=65_536, log=True, multiple=8, doc="ranks of the job (machines of 8)"),
        noise_level_param(),
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
        Param("ranks", 256, "", low=8, high=65_536, log=True, multiple=8, doc="ranks of the job (machines of 8)"),
        noise_level_param(),
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
    sc = _scenario("irregular", ranks, severity, iterations=iterations, onset_iteration=onset_iteration,
                   job_seed=job_seed, noise_level=noise_level, collective=collective)  # fmt: skip
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
        Param("ranks", 512, "", low=8, high=65_536, log=True, multiple=8, doc="ranks of the job (machines of 8)"),
        noise_level_param(3.0),
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
        Param("ranks", 256, "", low=8, high=65_536, log=True, multiple=8, doc="ranks of the job (machines of 8)"),
        Param("severity", 3.0, "", low=1.0, high=100.0, doc="fault severity (slowdown factor)"),
        noise_level_param(),
        Param("iterations", 300, "", low=20, high=100_000, doc="iterations simulated"),
        Param("onset_iteration", 100, "", low=1, high=100_000, doc="iteration at which the fault starts"),
        _JOB_SEED,
    ],
)
def c4d_collective_faults(*, kind, collective, ranks, severity, noise_level, iterations, onset_iteration, job_seed,
                          seed):  # fmt: skip
    """C4D and the naive baseline on one job with one fault: alarm, localization and delay."""
    del seed  # the job is named by job_seed
    sc = _scenario(kind, ranks, severity, iterations=iterations, onset_iteration=onset_iteration, job_seed=job_seed,
                   noise_level=noise_level, collective=collective)  # fmt: skip
    r = dg.evaluate([sc], ["c4d", "naive"])
    return r[["detector", "alarm", "correct", "top1", "top3", "delay_s", "gpu_hours"]]


#: The fault-localization panel's job: 300 iterations, the fault from iteration 100.
PANEL_ITERATIONS, PANEL_ONSET = 300, 100
_PANEL_PARAMS = {
    "kind": Param("kind", "nic_degraded", choices=(*dg.FAULT_KINDS, *dg.FUNCTION_FAULTS), label="fault",
                  doc="fault injected (collective-level or function-level)"),
    "severity": Param("severity", 2.0, "", low=1.0, high=4.0, doc="fault severity (slowdown factor; 1: none)"),
    "noise_level": Param("noise_level", 1.0, "", low=0.0, high=3.0, label="noise multiplier",
                         doc="multiple of the default signal noise"),
    "collective": Param("collective", "ring", choices=tuple(dg.COLLECTIVES), doc="collective whose timings are read"),
    "detectors": Param("detectors", "all", choices=("all", *dg.DETECTORS), seeded=False, label="detector",
                       doc="every detector, or one"),
}  # fmt: skip


def _detectors(detectors: str) -> list[str]:
    return list(dg.DETECTORS) if detectors == "all" else [detectors]


def _blamed(suspects: pd.DataFrame) -> str:
    """The function and scope a detector blamed (PerfTracker), or empty."""
    if "function" not in suspects.columns or suspects.empty:
        return ""
    return f"{suspects['function'].iloc[0]} ({suspects['scope'].iloc[0]})"


@experiment(
    "fault-localization-job",
    small={"kind": ["nic_degraded", "slow_dataloader"], "ranks": 64},
    params=[
        _PANEL_PARAMS["kind"],
        _PANEL_PARAMS["severity"],
        Param("ranks", 256, "", choices=(64, 256, 1024, 4096, 16384), doc="ranks of the job"),
        _PANEL_PARAMS["noise_level"],
        _PANEL_PARAMS["collective"],
        _PANEL_PARAMS["detectors"],
        _JOB_SEED,
    ],
)
def fault_localization_job(*, kind, severity, ranks, noise_level, collective, detectors, job_seed, seed):
    """One job with one fault: each detector's verdict and the timing heat map's rows."""
    del seed  # the job is named by job_seed
    sc = _scenario(kind, ranks, severity, iterations=PANEL_ITERATIONS, onset_iteration=PANEL_ONSET,
                   job_seed=job_seed, noise_level=noise_level, collective=collective)  # fmt: skip
    signals = sc.signals()
    suspects = {n: dg.DETECTORS[n](signals) for n in _detectors(detectors)}
    scores = pd.DataFrame(
        [{"part": "score", "detector": n, **dg.score_suspects(signals, s), "blamed": _blamed(s)}
         for n, s in suspects.items()]
    )  # fmt: skip
    scores = scores[["part", "detector", "alarm", "top1", "top3", "delay_s", "blamed"]].astype(
        {"alarm": float, "top1": float, "top3": float}
    )
    return pd.concat([scores, timing_view(signals, suspects)], ignore_index=True)


@experiment(
    "fault-localization-thresholds",
    small={"kind": ["nic_degraded"], "ranks": 64, "jobs": 1, "detectors": ["c4d", "naive"]},
    params=[
        _PANEL_PARAMS["kind"],
        _PANEL_PARAMS["severity"],
        Param("ranks", 256, "", choices=(64, 256, 1024), doc="ranks of each job (at most 1,024: seconds per curve)"),
        _PANEL_PARAMS["noise_level"],
        _PANEL_PARAMS["collective"],
        _PANEL_PARAMS["detectors"],
        Param("jobs", 2, "", low=1, high=100, doc="faulty jobs (and as many healthy ones) behind the curves"),
        _JOB_SEED,
    ],
)
def fault_localization_thresholds(*, kind, severity, ranks, noise_level, collective, detectors, jobs, job_seed, seed):
    """Precision and recall of each detector at each threshold over faulty and healthy jobs."""
    del seed  # the jobs are named by job_seed
    job = {"iterations": PANEL_ITERATIONS, "onset_iteration": PANEL_ONSET, "noise_level": noise_level,
           "collective": collective}  # fmt: skip
    faulty = [_scenario(kind, ranks, severity, job_seed=keyed_int(job_seed, "faulty", i), **job) for i in range(jobs)]
    healthy = [_scenario("none", ranks, 1.0, job_seed=keyed_int(job_seed, "healthy", i), **job) for i in range(jobs)]
    return dg.threshold_sweep([*faulty, *healthy], _detectors(detectors))
