"""C4D-style detector: per-collective outliers across ranks, using the communicator to tell culprit from victim.

C4 (Dong et al., arXiv:2406.04594, HPCA 2025) observes that data-parallel training synchronizes periodically and
homogeneously, so every rank should enter and leave each collective at nearly the same time; a rank that does not
is a hardware fault. C4D distinguishes communication hang, non-communication hang, communication slow and
non-communication slow. Here, per all-reduce and across the ranks of its communicator:

* **non-communication slow**: a rank entering late (robust z of ``compute_s`` above ``z_threshold``) while its own
  wait is below the communicator's median wait: the others waited for it (a victim waits long, a culprit does not);
* **communication slow**: a rank whose transmit time ``busy_s`` is an outlier (the sender on a slow link) while its
  wait is below the median: in a pipelined ring or halving-doubling everyone else waits for that link;
* **hang**: a collective that never completes; the ranks with no record in it are the culprits, noticed
  ``hang_timeout_s`` after the last arrival (C4D's agents watch the collective's progress, so seconds, not the
  framework's minutes-long watchdog);
* a rank is a suspect once flagged in ``need`` of the last ``window`` collectives (single data-loader hiccups and
  the all-rank checkpoint stall do not qualify); its score is the number of collectives it was flagged in.

The alarm time is the end of the collective that completed the evidence (C4D's master analyses each collective).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._contracts import accepts
from ..._validate import integer, positive
from ._common import first_persistent, hang, live_iterations, median, robust_z, suspects_frame
from .signals import Signals, check_signals

__all__ = ["detect", "culprit_flags"]


@accepts()
def culprit_flags(signals: Signals, *, z_threshold: float = 6.0, min_excess: float = 0.05) -> np.ndarray:
    """Bool ``(live iterations, ranks)``: the rank is a culprit of that collective (late or slow-link, and waited less).

    ``min_excess`` is the smallest excess (fraction of the nominal compute or transmit time) that can count, so a
    noiseless job does not flag rounding.

    Examples
    --------
    >>> from workbench.training.diagnosis import Fault, JobSpec, simulate
    >>> s = simulate(JobSpec(ranks=32), 40, Fault("nic_degraded", 5, onset_iteration=10, severity=3.0), seed=0)
    >>> culprit_flags(s)[20].nonzero()[0].tolist()
    [5]
    """
    z_threshold = positive("z_threshold", z_threshold)
    min_excess = positive("min_excess", min_excess)
    job = signals.job
    live = live_iterations(signals)
    if np.isnan(signals.iteration_end_s[live - 1]):
        live -= 1
    comp, busy, wait = (getattr(signals, n)[:live] for n in ("compute_s", "busy_s", "wait_s"))
    z, med = robust_z(comp, 1, floor=min_excess * job.compute_s / 4)
    late = (z > z_threshold) & ((comp - med) > min_excess * job.compute_s)
    z, med = robust_z(busy, 1, floor=min_excess * job.allreduce_s / 4)
    slow = (z > z_threshold) & ((busy - med) > min_excess * job.allreduce_s)
    waited_less = wait < median(wait, 1)
    return (late | slow) & waited_less


@accepts()
def detect(
    signals: Signals,
    *,
    z_threshold: float = 6.0,
    min_excess: float = 0.05,
    window: int = 5,
    need: int = 3,
    hang_timeout_s: float = 10.0,
) -> pd.DataFrame:
    """Ranked suspect ranks with the time C4D would raise each.

    Examples
    --------
    >>> from workbench.training.diagnosis import Fault, JobSpec, simulate
    >>> s = simulate(JobSpec(ranks=64), 200, Fault("nic_degraded", 17, onset_iteration=50, severity=2.0), seed=0)
    >>> sus = detect(s)
    >>> int(sus.loc[0, "rank"]), int(sus.loc[0, "alarm_iteration"])
    (17, 52)
    """
    check_signals(signals)
    window = integer("window", window, minimum=1)
    need = integer("need", need, minimum=1, maximum=window)
    hang_timeout_s = positive("hang_timeout_s", hang_timeout_s)
    rpm = signals.job.ranks_per_machine
    flags = culprit_flags(signals, z_threshold=z_threshold, min_excess=min_excess)
    first = first_persistent(flags, window, need)
    ranks = np.flatnonzero(first >= 0)
    score = flags[:, ranks].sum(axis=0).astype(float)
    alarm_it = first[ranks]
    alarm_s = signals.iteration_end_s[alarm_it]
    missing, h, hang_s = hang(signals, hang_timeout_s)
    if missing.size:
        ranks = np.concatenate([missing, ranks])
        score = np.concatenate([np.full(missing.size, float(signals.iterations)), score])
        alarm_it = np.concatenate([np.full(missing.size, h), alarm_it])
        alarm_s = np.concatenate([np.full(missing.size, hang_s), alarm_s])
    return suspects_frame(ranks, ranks // rpm, score, alarm_it, alarm_s)
