"""What faults cost: GPU-hours lost to detection delay, failures vs irregular iterations.

A failure halts the job: the time until it is detected, the restart, and the work since the last checkpoint are
lost (on average half a checkpoint interval). An irregular iteration (Holmes) does not halt anything; it only takes
longer than normal. :func:`irregular_time_fraction` measures the extra time in a simulated job;
:func:`failure_time_fraction` is the halting cost of ``failures_per_day``. Minder reports "two faults per day on
average" for a training task (Deng et al., NSDI 2025, arXiv:2411.01791).
"""

from __future__ import annotations

import numpy as np

from ..._contracts import NONNEGATIVE, AnyOf, Array, Int, Opaque, accepts
from ..._validate import in_range, nonnegative

__all__ = ["gpu_hours_lost", "failure_time_fraction", "irregular_time_fraction"]


@accepts(ranks=AnyOf(Int(ge=1, le=10**7), Array(integer=True, ge=1)), delay_s=NONNEGATIVE)
def gpu_hours_lost(delay_s, ranks, lost_share: float = 1.0):
    """GPU-hours lost while a job of ``ranks`` GPUs runs for ``delay_s`` with a fault nobody has found yet.

    ``lost_share`` is the share of that time that is lost: 1 for a halted job, ``1 - 1/slowdown`` for a slowed one.

    Examples
    --------
    >>> float(gpu_hours_lost(3600.0, 1024, lost_share=0.5))
    512.0
    """
    lost_share = in_range("lost_share", lost_share, 0.0, 1.0)
    return np.asarray(delay_s, dtype=float) * np.asarray(ranks, dtype=float) / 3600.0 * lost_share


@accepts()
def failure_time_fraction(
    failures_per_day: float, detect_s: float, restart_s: float, checkpoint_interval_s: float
) -> float:
    """Fraction of wall-clock time lost to failures: each costs detection + restart + half a checkpoint interval.

    Examples
    --------
    >>> round(failure_time_fraction(2.0, 10.0, 600.0, 1800.0), 4)
    0.035
    """
    failures_per_day = nonnegative("failures_per_day", failures_per_day)
    per_failure = (
        nonnegative("detect_s", detect_s)
        + nonnegative("restart_s", restart_s)
        + nonnegative("checkpoint_interval_s", checkpoint_interval_s) / 2
    )
    return failures_per_day * per_failure / 86_400.0


@accepts(signals=Opaque("a Signals record from simulate"))
def irregular_time_fraction(signals, *, irregular_factor: float = 2.0) -> float:
    """Share of a job's wall-clock time spent in irregular iterations beyond their normal (median) duration.

    Examples
    --------
    >>> from workbench.training.diagnosis import Fault, JobSpec, Noise, simulate
    >>> s = simulate(JobSpec(ranks=64), 1000, Fault("irregular", 3, 1, severity=3.0, duty=0.1),
    ...              noise=Noise(checkpoint_every=0), seed=0)
    >>> 0.1 < irregular_time_fraction(s) < 0.2
    True
    """
    t = signals.iteration_time_s[~np.isnan(signals.iteration_time_s)]
    normal = float(np.median(t))
    extra = np.where(t > irregular_factor * normal, t - normal, 0.0)
    return float(extra.sum() / t.sum())
