"""PerfTracker-style detector: iteration boundaries from the function-event sequence, a degradation trigger, a hang
trigger, and localization by differential observability of per-function behaviour across workers.

PerfTracker (Guan et al., "PerfTracker: Online Performance Troubleshooting for Large-scale Model Training in
Production", arXiv:2506.08528) runs on O(10,000) GPUs at Alibaba Cloud. A lightweight daemon watches the training
process for a slowdown or a hang; only then is fine-grained, function-level profiling (Python functions, CUDA kernels,
collectives) switched on in every worker, summarized per worker into runtime behaviour patterns, and compared across
workers ("differential observability": workers of one job run the same functions, so a function behaving differently
on a subset of workers points at those workers, and a function slower on every worker than it used to be is an
all-worker, typically software or configuration, problem). Here, on :func:`.signals.simulate`'s function-level profile
(:data:`.signals.FUNCTIONS`):

* **iteration boundaries** are learned from one worker's event sequence: the period of the repeating function
  sequence (the smallest lag at which at least ``min_match`` of the events repeat; an occasional checkpoint event does
  not break it) and its first function; each occurrence of that function on any of a few reference workers starts an
  iteration. Iterations with a checkpoint event are scheduled work, left out of the trigger;
* **degradation trigger**: the mean of the last ``window`` iterations exceeds the recent shortest one (the shortest
  ``window``-iteration mean over the ``horizon`` iterations before) by more than ``threshold``;
* **hang trigger**: no new event from any worker for ``hang_iterations`` mean iteration times;
* **localization** on the triggering window against the baseline window, per function (the all-reduce counted by its
  transmit time, the waiting inside it being the symptom, not a cause; the checkpoint excluded): a *subset-of-worker*
  problem is a function whose per-worker window mean is a robust outlier (z above ``z_threshold``) by more than half
  the threshold of an iteration, on at most ``max_subset`` of the workers; an *all-worker* problem is a function
  whose median over workers grew by that much since the baseline; when both are seen, the larger effect on the
  (synchronous) iteration wins: the slowest outlier's excess or the rise on everyone. A trigger that localizes nothing
  (data-loader hiccups scattered over random workers) raises no alarm. A hang is localized to the workers whose last
  event differs from the majority's (they never entered the collective the others are stuck in).

Suspects follow the shared interface (``rank, machine, score, alarm_iteration, alarm_s``; an all-worker problem lists
every machine with ``rank`` -1) plus three columns of the diagnosis, the same on every row: ``function`` (the one it
blames), ``scope`` (``"subset"`` or ``"all"``) and ``trigger`` (``"degradation"`` or ``"hang"``).

Thresholds: the stored text of the paper available to this project did not give the numeric values of the triggers
(its detection section describes them qualitatively), so ``window`` 20, ``threshold`` 10 % and ``hang_iterations`` 5
are this module's choices, stated as such; the precision/recall sweep in notebook 09 shows what the threshold trades.
Profiling and analysis time after the trigger are not modelled (the alarm is the end of the triggering iteration).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._contracts import Array, accepts
from ..._validate import in_range, integer, positive
from ._common import median, suspects_frame
from .signals import FUNCTIONS, Signals, check_signals

__all__ = ["detect", "event_stream", "learn_period", "iteration_boundaries", "degradation_trigger", "localize"]

_CHECKPOINT = FUNCTIONS.index("checkpoint")
#: Functions that can be a root cause (the checkpoint is scheduled work).
CANDIDATES = tuple(i for i, f in enumerate(FUNCTIONS) if f != "checkpoint")


@accepts()
def event_stream(signals: Signals, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """One worker's function events in time order: function index (into :data:`FUNCTIONS`) and start time (s).

    A checkpoint event is emitted only when a checkpoint is saved; the all-reduce's start is known once the worker
    enters it (also in a collective that never ends).

    Examples
    --------
    >>> from workbench.training.diagnosis import JobSpec, simulate
    >>> ids, t = event_stream(simulate(JobSpec(ranks=16), 3, seed=0), 0)
    >>> ids.tolist()
    [0, 1, 2, 3, 5, 0, 1, 2, 3, 5, 0, 1, 2, 3, 5]
    """
    d = signals.function_durations(ranks=[rank])[:, 0, :].astype(np.float64)
    start = signals.iteration_start_s[:, None] + np.concatenate([np.zeros((d.shape[0], 1)), np.cumsum(d, 1)[:, :-1]], 1)
    present = ~np.isnan(start)
    present[:, _CHECKPOINT] &= d[:, _CHECKPOINT] > 0
    ids = np.broadcast_to(np.arange(len(FUNCTIONS)), d.shape)[present]
    return ids.astype(np.int64), start[present]


@accepts()
def learn_period(ids: np.ndarray, *, max_period: int = 32, min_match: float = 0.9) -> tuple[int, int]:
    """The period of a repeating function sequence and the function that starts it.

    The period is the smallest lag ``p`` at which at least ``min_match`` of the events equal the event ``p`` later.

    Examples
    --------
    >>> learn_period(np.r_[np.tile([0, 1, 2], 10), 9, np.tile([0, 1, 2], 10)])  # an occasional event 9
    (3, 0)
    """
    ids = np.asarray(ids)
    max_period = integer("max_period", max_period, minimum=1)
    min_match = in_range("min_match", min_match, 0.0, 1.0, low_inclusive=False)
    for p in range(1, min(max_period, ids.size // 2) + 1):
        if np.mean(ids[p:] == ids[:-p]) >= min_match:
            return p, int(ids[0])
    raise ValueError(f"no repeating function sequence of period <= {max_period} in {ids.size} events")


@accepts()
def iteration_boundaries(signals: Signals, *, reference: int = 8, learn_events: int = 2000) -> tuple[np.ndarray, ...]:
    """Iteration start times learned from events, and whether each iteration saved a checkpoint.

    The period and its first function come from the first ``learn_events`` events of worker 0; every occurrence of
    that function on any of ``reference`` workers (spread over the job) starts an iteration.

    Examples
    --------
    >>> from workbench.training.diagnosis import JobSpec, simulate
    >>> s = simulate(JobSpec(ranks=16), 30, seed=0)
    >>> b, ckpt = iteration_boundaries(s)
    >>> bool(np.allclose(b, s.iteration_start_s)), bool(ckpt.any())
    (True, False)
    """
    ids, _ = event_stream(signals, 0)
    _, anchor = learn_period(ids[:learn_events])
    starts, ckpt_times = [], []
    for r in np.linspace(0, signals.ranks - 1, min(reference, signals.ranks)).astype(int):
        ids, t = event_stream(signals, int(r))
        starts.append(t[ids == anchor])
        ckpt_times.append(t[ids == _CHECKPOINT])
    bounds = np.unique(np.concatenate(starts))
    ckpt = np.zeros(bounds.size, bool)
    ckpt[np.searchsorted(bounds, np.concatenate(ckpt_times), side="right") - 1] = True
    return bounds, ckpt


def _rolling_mean(x: np.ndarray, n: int) -> np.ndarray:
    """Trailing NaN-aware mean over ``n`` entries (NaN until ``n`` entries were seen or none of them is valid)."""
    ok = ~np.isnan(x)
    c = np.concatenate([[0.0], np.cumsum(np.where(ok, x, 0.0))])
    k = np.concatenate([[0], np.cumsum(ok)])
    i = np.arange(x.size)
    lo = np.maximum(i + 1 - n, 0)
    cnt = k[i + 1] - k[lo]
    with np.errstate(invalid="ignore", divide="ignore"):
        m = (c[i + 1] - c[lo]) / cnt
    m[(i + 1 < n) | (cnt < max(1, n // 2))] = np.nan
    return m


@accepts()
def degradation_trigger(
    times: np.ndarray, *, window: int = 20, threshold: float = 0.1, horizon: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """Per iteration: the trigger (mean of the last ``window`` iterations > (1 + ``threshold``) x the recent shortest)
    and where the recent shortest window ends (-1 before there is one). NaN times (checkpoint iterations) are skipped.

    Examples
    --------
    >>> t = np.r_[np.ones(60), np.full(20, 1.5)]
    >>> on, base = degradation_trigger(t, window=10, threshold=0.1, horizon=30)
    >>> int(np.argmax(on)), int(base[np.argmax(on)])
    (62, 52)
    """
    window = integer("window", window, minimum=1)
    horizon = integer("horizon", horizon, minimum=1)
    threshold = positive("threshold", threshold)
    m = _rolling_mean(np.asarray(times, dtype=float), window)
    n = m.size
    # the recent shortest: min of m[j] for j in [i - window - horizon + 1, i - window]
    padded = np.concatenate([np.full(horizon - 1, np.nan), m])
    view = np.lib.stride_tricks.sliding_window_view(padded, horizon)  # view[j] covers m[j - horizon + 1 .. j]
    filled = np.where(np.isnan(view), np.inf, view)
    best = np.full(n, np.inf)
    where = np.full(n, -1)
    if n > window:
        best[window:] = filled[: n - window].min(axis=1)
        last = horizon - 1 - filled[: n - window, ::-1].argmin(axis=1)  # the most recent of equally short ones
        where[window:] = last + np.arange(n - window) - horizon + 1
    where[~np.isfinite(best)] = -1
    with np.errstate(invalid="ignore"):
        on = np.isfinite(best) & (m > (1.0 + threshold) * best)
    return on, where


@accepts(
    window_iterations=Array(integer=True, ge=0, min_size=1), baseline_iterations=Array(integer=True, ge=0, min_size=1)
)
def localize(
    signals: Signals,
    window_iterations: np.ndarray,
    baseline_iterations: np.ndarray,
    *,
    iteration_s: float,
    min_excess: float = 0.05,
    z_threshold: float = 6.0,
    max_subset: float = 0.5,
    floor: float = 0.01,
) -> tuple[str, str, np.ndarray, np.ndarray] | None:
    """Differential observability over one window: ``(function, scope, ranks, scores)`` or None.

    ``scope`` is ``"subset"`` (``ranks`` are the outlying workers, ``scores`` their excess in iterations) or
    ``"all"`` (``ranks`` empty, ``scores`` the function's rise over the baseline in iterations). An excess must
    exceed ``min_excess`` x ``iteration_s``.

    Examples
    --------
    >>> from workbench.training.diagnosis import Fault, JobSpec, simulate
    >>> s = simulate(JobSpec(ranks=64), 120, Fault("slow_optimizer", 9, 60, 3.0, scope="rank"), seed=0)
    >>> fn, scope, ranks, _ = localize(s, np.arange(70, 90), np.arange(20, 40), iteration_s=1.3)
    >>> fn, scope, ranks.tolist()
    ('optimizer_step', 'subset', [9])
    """
    w = np.nanmean(signals.function_durations(window_iterations)[..., CANDIDATES], axis=0)  # (ranks, candidates)
    b = np.nanmean(signals.function_durations(baseline_iterations)[..., CANDIDATES], axis=0)
    need = min_excess * iteration_s
    med = median(w, 0)
    dev = w - med
    scale = np.maximum(1.4826 * median(np.abs(dev), 0), floor * np.abs(med) + 1e-9)
    flagged = (dev / scale > z_threshold) & (dev > need)
    counts = flagged.sum(axis=0)
    ok = (counts > 0) & (counts <= max_subset * signals.ranks)
    rise = (median(w, 0) - median(b, 0)).ravel()
    fa = int(np.nanargmax(rise))
    all_worker = rise[fa] if rise[fa] > need else -np.inf
    subset = -np.inf
    if ok.any():
        total = np.where(flagged, dev, 0.0).sum(axis=0)
        fs = int(np.argmax(np.where(ok, total, -np.inf)))
        ranks = np.flatnonzero(flagged[:, fs])
        subset = float(dev[ranks, fs].max())
    # the larger effect on a synchronous iteration wins: the slowest outlier vs the rise on everyone (a function
    # slowed everywhere also stretches its rare outliers, e.g. a data-loader hiccup on a slower loader)
    if subset >= all_worker and np.isfinite(subset):
        return FUNCTIONS[CANDIDATES[fs]], "subset", ranks, dev[ranks, fs] / iteration_s
    if np.isfinite(all_worker):
        return FUNCTIONS[CANDIDATES[fa]], "all", np.zeros(0, np.int64), np.array([rise[fa] / iteration_s])
    return None


def _hang(signals: Signals, times: np.ndarray, bounds: np.ndarray, hang_iterations: float, window: int):
    """Hang diagnosis: (suspect ranks, scores, hung iteration, alarm time) or None."""
    end = signals.iteration_end_s
    if not np.isnan(end).any():
        return None
    h = int(np.argmax(np.isnan(end)))
    d = signals.function_durations([h])
    # each worker's last event: the all-reduce of iteration h if it entered it, else its last event before
    entered = ~np.isnan(d[0, :, :5]).any(axis=1)
    start = signals.iteration_start_s[h]
    last = np.where(entered, start + np.nansum(d[0, :, :5], axis=1), start)
    t_last = float(np.nanmax(last))
    done = times[~np.isnan(times)]
    mean_it = float(np.mean(done[-window:])) if done.size else float(signals.job.iteration_s)
    suspects = np.flatnonzero(~entered)
    if suspects.size == 0 or suspects.size > signals.ranks // 2:
        suspects = np.zeros(0, np.int64)
    scores = (t_last - last[suspects]) / mean_it + hang_iterations
    return suspects, scores, h, t_last + hang_iterations * mean_it


@accepts()
def detect(
    signals: Signals,
    *,
    threshold: float = 0.1,
    window: int = 20,
    horizon: int = 100,
    hang_iterations: float = 5.0,
    z_threshold: float = 6.0,
    max_checks: int = 50,
) -> pd.DataFrame:
    """Ranked suspects with PerfTracker's alarm time and the function, scope and trigger of its diagnosis (columns).

    Examples
    --------
    >>> from workbench.training.diagnosis import Fault, JobSpec, simulate
    >>> s = simulate(JobSpec(ranks=64), 200, Fault("slow_dataloader", 17, onset_iteration=100, severity=3.0), seed=0)
    >>> sus = detect(s)
    >>> sus.function[0], sus.scope[0], sorted(set(sus.machine.tolist()))
    ('data_loader', 'subset', [2])
    """
    check_signals(signals)
    threshold = positive("threshold", threshold)
    window = integer("window", window, minimum=2)
    horizon = integer("horizon", horizon, minimum=1)
    hang_iterations = positive("hang_iterations", hang_iterations)
    max_checks = integer("max_checks", max_checks, minimum=1)
    rpm = signals.job.ranks_per_machine
    bounds, ckpt = iteration_boundaries(signals)
    times = np.append(np.diff(bounds), np.nan)  # the last started iteration has no next boundary
    times[ckpt] = np.nan
    iters = np.clip(np.searchsorted(signals.iteration_start_s, bounds - 1e-9), 0, signals.iterations - 1)
    on, base = degradation_trigger(times, window=window, threshold=threshold, horizon=horizon)
    hung = _hang(signals, times, bounds, hang_iterations, window)
    hang_s = hung[3] if hung is not None else np.inf
    for i in np.flatnonzero(on)[:max_checks]:
        alarm_s = float(bounds[i + 1]) if i + 1 < bounds.size else float(signals.iteration_end_s[iters[i]])
        if alarm_s >= hang_s:
            break
        ref = float(np.nanmin(_rolling_mean(times, window)[base[i] : base[i] + 1]))
        found = localize(
            signals,
            iters[i - window + 1 : i + 1],
            iters[max(base[i] - window + 1, 0) : base[i] + 1],
            iteration_s=ref,
            min_excess=threshold / 2,
            z_threshold=z_threshold,
        )
        if found is None:
            continue
        fn, scope, ranks, scores = found
        it = int(iters[i])
        if scope == "all":
            machines = np.arange(signals.job.machines)
            frame = suspects_frame(
                np.full(machines.size, -1), machines, np.full(machines.size, scores[0]), np.full(machines.size, it),
                np.full(machines.size, alarm_s),
            )  # fmt: skip
        else:
            frame = suspects_frame(ranks, ranks // rpm, scores, np.full(ranks.size, it), np.full(ranks.size, alarm_s))
        return frame.assign(function=fn, scope=scope, trigger="degradation")
    if hung is not None and hung[0].size:
        ranks, scores, h, alarm_s = hung
        frame = suspects_frame(ranks, ranks // rpm, scores, np.full(ranks.size, h), np.full(ranks.size, alarm_s))
        return frame.assign(function="all_reduce", scope="subset", trigger="hang")
    return suspects_frame([], [], [], [], []).assign(function="", scope="", trigger="")
