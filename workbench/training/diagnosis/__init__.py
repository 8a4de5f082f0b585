"""Finding the faulty machine and the irregular iteration in a training job, from what the job already emits.

C4's diagnosis side (C4D; Dong et al., arXiv:2406.04594, HPCA 2025), Minder (Deng et al., NSDI 2025) and Holmes
(Yao et al., NSDI 2025) localize faults in production training jobs whose data are not public. This package models
the mechanism instead:

* :mod:`.signals` generates per-rank, per-iteration timings of a data-parallel job (compute, and the all-reduce's
  transmit, wait and blocking onset following the ring or halving-doubling dependency structure) and
  :mod:`.metrics` per-machine monitoring metrics at a stated sampling interval, with noise;
* :mod:`.faults` injects the faults those papers describe, each with an onset and a ground-truth location;
* :mod:`.c4d`, :mod:`.minder`, :mod:`.holmes`, :mod:`.perftracker` (function-level profiles, arXiv:2506.08528) and
  :mod:`.naive` are detectors with one interface:
  ``detect(signals, ...) -> DataFrame`` of ranked suspects (``rank, machine, score, alarm_iteration, alarm_s``);
* :mod:`.evaluate` scores them: precision, recall, F1, top-1/top-3 localization, detection delay, precision/recall
  curves; :mod:`.cost` turns delays into GPU-hours and compares failures with irregular iterations.
"""

from __future__ import annotations

from . import c4d, cost, holmes, minder, naive, perftracker
from .evaluate import (
    DETECTORS,
    THRESHOLDS,
    Scenario,
    evaluate,
    quality_table,
    run_scenario,
    scenario_grid,
    score_suspects,
    threshold_sweep,
)
from .faults import ALL_FAULT_KINDS, FAULT_KINDS, FUNCTION_FAULTS, Fault, fault_effects
from .metrics import METRICS
from .signals import COLLECTIVES, FUNCTIONS, JobSpec, Noise, Signals, check_signals, simulate, with_gaps

__all__ = [
    "ALL_FAULT_KINDS",
    "COLLECTIVES",
    "FUNCTIONS",
    "FUNCTION_FAULTS",
    "DETECTORS",
    "FAULT_KINDS",
    "METRICS",
    "THRESHOLDS",
    "Fault",
    "JobSpec",
    "Noise",
    "Scenario",
    "Signals",
    "c4d",
    "check_signals",
    "cost",
    "evaluate",
    "fault_effects",
    "holmes",
    "minder",
    "naive",
    "perftracker",
    "quality_table",
    "run_scenario",
    "scenario_grid",
    "score_suspects",
    "simulate",
    "threshold_sweep",
    "with_gaps",
]
