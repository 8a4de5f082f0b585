"""Naive baseline: a threshold on the job's (smoothed) iteration time, then blame the slowest rank in its own log.

What an operator without a diagnosis system has: a throughput dashboard (here the iteration time averaged over
``window`` iterations, alarm above ``threshold`` x the first ``baseline_iterations``' median), a watchdog that ends a
hung job after ``hang_timeout_s`` (PyTorch's default NCCL process-group timeout is 10 minutes), and per-rank logs in
which the rank with the most compute + transmit time looks slowest. In a synchronous job every rank's iteration
time is the same, so the blame falls on whoever is slowest in its own log, not on whom the others waited for.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._contracts import accepts
from ..._validate import integer, positive
from ._common import hang, live_iterations, suspects_frame
from .signals import Signals, check_signals

__all__ = ["detect"]


@accepts()
def detect(
    signals: Signals,
    *,
    threshold: float = 1.5,
    window: int = 50,
    baseline_iterations: int = 50,
    hang_timeout_s: float = 600.0,
) -> pd.DataFrame:
    """Alarm on the smoothed iteration time; suspect the rank with the most compute + transmit time.

    Examples
    --------
    >>> from workbench.training.diagnosis import Fault, JobSpec, simulate
    >>> s = simulate(JobSpec(ranks=64), 300, Fault("slow_gpu", 9, onset_iteration=100, severity=3.0), seed=0)
    >>> int(detect(s).loc[0, "rank"])
    9
    """
    check_signals(signals)
    threshold = positive("threshold", threshold)
    window = integer("window", window, minimum=1)
    baseline_iterations = integer("baseline_iterations", baseline_iterations, minimum=1)
    hang_timeout_s = positive("hang_timeout_s", hang_timeout_s)
    rpm = signals.job.ranks_per_machine
    _missing, h, hang_s = hang(signals, hang_timeout_s)
    live = live_iterations(signals) if h < 0 else h
    t = signals.iteration_time_s[:live]
    base = float(np.nanmedian(t[:baseline_iterations]))
    c = np.concatenate([[0.0], np.cumsum(np.nan_to_num(t, nan=base))])
    i = np.arange(live)
    smoothed = (c[i + 1] - c[np.maximum(i + 1 - window, 0)]) / np.minimum(i + 1, window)
    over = (smoothed > threshold * base) & (i >= baseline_iterations)
    if over.any():
        alarm = int(np.argmax(over))
        alarm_s = float(signals.iteration_end_s[alarm])
    elif h >= 0:
        alarm, alarm_s = h, hang_s
    else:
        return suspects_frame([], [], [], [], [])
    lo = max(0, alarm - window + 1)
    own = np.nanmean(signals.compute_s[lo : alarm + 1] + signals.busy_s[lo : alarm + 1], axis=0)
    top = np.argsort(-np.nan_to_num(own, nan=-np.inf), kind="stable")[:3]
    return suspects_frame(top, top // rpm, own[top], np.full(top.size, alarm), np.full(top.size, alarm_s))
