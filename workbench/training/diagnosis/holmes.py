"""Holmes-style detector: irregular iterations, abnormal communication operators, an operator graph, voting.

Holmes (Yao et al., NSDI 2025) finds that irregular iterations, "taking even more than twice the time of a normal
iteration", cost LLM training more than failures, and localizes them from communication operators: an abnormal
operator detection model, a communication operator graph to trace the delay to its source, and cross-iteration
analysis. Here:

* **irregular iteration**: iteration time above ``irregular_factor`` x the normal one, the median over the first
  ``baseline_iterations`` (a persistent slowdown stays irregular instead of becoming the new normal);
* **abnormal operators**: an all-reduce operator (wait + transmit on one rank) is abnormal above
  ``irregular_factor`` x the median operator time of the baseline iterations. An irregular iteration in which
  fewer than half the operators are abnormal is not a communication irregularity (every rank slowed together: a
  checkpoint stall) and is left unattributed (``root_rank`` -1);
* **operator graph**: each blocked operator depends on the peer it was receiving from when it blocked: its ring
  predecessor, or in halving-doubling its partner at the step it blocked (``r xor 2^(k-1)``, the step ``k`` read
  from when it blocked). Pointer jumping follows every chain to an operator that did not block: the source. The
  iteration's root is the source most chains reach;
* **cross-iteration voting**: a rank becomes a suspect when it is the root of ``min_votes`` irregular iterations;
  its score is its number of votes. A hung collective is an unbounded irregular iteration: its missing ranks are
  the roots, noticed ``irregular_factor`` x the normal iteration time after the last arrival.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._contracts import accepts
from ..._validate import in_range, integer
from ._common import hang, median, suspects_frame
from .signals import Signals, check_signals

__all__ = ["detect", "localize_iterations"]


def _predecessor(signals: Signals, rows: np.ndarray) -> np.ndarray:
    """Operator-graph parent of every rank in ``rows``: itself if it did not block, else the peer it waited on."""
    job = signals.job
    r = np.arange(job.ranks)
    blocked = signals.blocked_after_s[rows]
    waiting = ~np.isnan(blocked)
    if job.collective == "ring":
        parent = np.broadcast_to((r - 1) % job.ranks, blocked.shape)
    else:
        step_s = job.allreduce_s / job.steps + job.step_latency_s
        k = np.rint((np.nan_to_num(blocked) - signals.compute_s[rows]) / step_s).astype(np.int64)
        k = np.clip(np.nan_to_num(k), 1, job.steps // 2)
        parent = r[None, :] ^ (1 << (k - 1))
    return np.where(waiting, parent, r[None, :])


@accepts()
def localize_iterations(
    signals: Signals, *, irregular_factor: float = 2.0, baseline_iterations: int = 50
) -> pd.DataFrame:
    """Irregular iterations and the root rank the operator graph traces each to.

    Returns a DataFrame with ``iteration``, ``iteration_s``, ``root_rank`` (-1 when the irregularity is not in
    communication) and ``root_share`` (the share of operators whose chain reaches the root).

    Examples
    --------
    >>> from workbench.training.diagnosis import Fault, JobSpec, simulate
    >>> s = simulate(JobSpec(ranks=64), 200, Fault("irregular", 33, 50, severity=3.0, duty=0.1), seed=0)
    >>> loc = localize_iterations(s)
    >>> bool((loc.root_rank == 33).all()), len(loc) > 5
    (True, True)
    """
    check_signals(signals)
    irregular_factor = in_range("irregular_factor", irregular_factor, 1.0, 1e6, low_inclusive=False)
    baseline_iterations = integer("baseline_iterations", baseline_iterations, minimum=1)
    t = signals.iteration_time_s
    base = slice(0, baseline_iterations)
    normal = float(np.nanmedian(t[base]))
    rows = np.flatnonzero(t > irregular_factor * normal)
    op = signals.wait_s[rows] + signals.busy_s[rows]
    normal_op = float(np.nanmedian(median(signals.wait_s[base] + signals.busy_s[base], 1)))
    communication = np.nanmean(op > irregular_factor * normal_op, axis=1) >= 0.5
    n = signals.ranks
    if rows.size == 0:
        return pd.DataFrame({"iteration": [], "iteration_s": [], "root_rank": [], "root_share": []})
    ptr = _predecessor(signals, rows)
    offset = (np.arange(rows.size) * n)[:, None]
    flat = (ptr + offset).ravel()
    for _ in range(int(np.ceil(np.log2(n))) + 1):  # pointer jumping: chains of length <= n collapse in log2 n rounds
        flat = flat[flat]
    roots = flat.reshape(rows.size, n) - offset
    counts = np.bincount((roots + offset).ravel(), minlength=rows.size * n).reshape(rows.size, n)
    root = np.where(communication, counts.argmax(axis=1), -1)
    return pd.DataFrame(
        {"iteration": rows, "iteration_s": t[rows], "root_rank": root, "root_share": counts.max(axis=1) / n}
    )


@accepts()
def detect(
    signals: Signals, *, irregular_factor: float = 2.0, min_votes: int = 2, baseline_iterations: int = 50
) -> pd.DataFrame:
    """Ranked suspect ranks, by votes across irregular iterations.

    Examples
    --------
    >>> from workbench.training.diagnosis import Fault, JobSpec, simulate
    >>> s = simulate(JobSpec(ranks=64), 200, Fault("irregular", 33, 50, severity=3.0, duty=0.1), seed=0)
    >>> int(detect(s).loc[0, "rank"])
    33
    """
    min_votes = integer("min_votes", min_votes, minimum=1)
    loc = localize_iterations(signals, irregular_factor=irregular_factor, baseline_iterations=baseline_iterations)
    rpm = signals.job.ranks_per_machine
    normal = float(np.nanmedian(signals.iteration_time_s[:baseline_iterations]))
    missing, h, hang_s = hang(signals, irregular_factor * normal)
    ranks, score, alarm_it = [missing], [np.full(missing.size, float(signals.iterations))], [np.full(missing.size, h)]
    alarm_s = [np.full(missing.size, hang_s)]
    loc = loc[loc.root_rank >= 0]
    if len(loc):
        root = loc.root_rank.to_numpy()
        order = np.argsort(root, kind="stable")
        votes_so_far = np.empty(root.size, np.int64)
        _, first, counts = np.unique(root[order], return_index=True, return_counts=True)
        votes_so_far[order] = np.arange(root.size) - np.repeat(first, counts) + 1
        hit = votes_so_far == min_votes
        r = root[hit]
        it = loc.iteration.to_numpy()[hit]
        ranks.append(r)
        score.append(np.bincount(root, minlength=signals.ranks)[r].astype(float))
        alarm_it.append(it)
        alarm_s.append(signals.iteration_end_s[it])
    suspect = np.concatenate(ranks)
    return suspects_frame(
        suspect, suspect // rpm, np.concatenate(score), np.concatenate(alarm_it), np.concatenate(alarm_s)
    )
