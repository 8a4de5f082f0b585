"""Effective training time under failures: rates per component class, recovery costs, ETTR in closed form and by
Monte-Carlo.

Failures of each component class (GPU, host, NIC, network, software) are independent Poisson processes whose rate
scales with the job's component count (:data:`LLAMA3_RATES`, from Llama 3's 54-day snapshot on 16,384 H100s:
419 unexpected interruptions, Table 5 of arXiv 2407.21783, grouped into classes); planned events (maintenance,
straggler rebalancing) are one more Poisson process (Llama 3: 47 planned interruptions in the same snapshot).

The job runs in *cycles*: an up period ``U ~ Exp(Lambda)`` (``Lambda`` = failure + planned rate) split into
segments of ``tau`` seconds of work followed by a ``C``-second checkpoint write, then an event:

- a failure under ``"checkpoint"`` recovery keeps the checkpointed work ``S(U) = floor(U/T) tau`` (``T = tau + C``)
  and costs detection + isolation + restart (re-scheduling, initialisation, checkpoint load);
- a failure under ``"live"`` recovery (TrainMover-style: a standby machine replaces the failed one in the
  communication groups) keeps all work and costs detection + isolation + migration + half an iteration redone;
- a planned event checkpoints on demand (``C``) and restarts under ``"checkpoint"``, or migrates live.

A restart begins a new segment (the job resumes from the checkpoint, the next one is ``tau`` of work later); a live
migration does not: the training loop goes on, and with it its checkpoint schedule, so under ``"live"`` recovery the
up periods join into one periodic schedule and a share ``tau / T`` of up time is work, however often the job is
interrupted (restarting the schedule at each migration would skip checkpoints, and a job failing more often would
look more productive).

Renewal-reward gives ETTR (productive time / wall time) exactly: with ``q = exp(-Lambda T)``,
``E[S] = tau q/(1-q)`` and ``E[min(U mod T, tau)] = ((1 - exp(-Lambda tau))/Lambda - tau q)/(1-q)``;
ETTR = E[productive per cycle] / (1/Lambda + E[downtime per cycle]) (:func:`ettr`), where a cycle's productive time
is ``S(U)`` after a failure and ``S(U) + min(U mod T, tau)`` before a planned restart under ``"checkpoint"``, and
``(tau / T) / Lambda`` on average under ``"live"``. :func:`simulate` draws the same cycles (a month's worth of
expected events per replica, all replicas at once as arrays; under ``"live"`` each replica's up periods run one
schedule) and estimates the same ratio with its standard error. The Young/Daly interval is ``sqrt(2 C MTBF)``
(:func:`young_daly_s`).

An asynchronous checkpoint (``Recovery.checkpoint_lag_s = d``: the write goes on after the ``C``-second stall)
becomes durable ``d`` seconds after its segment: the ``k``-th is durable at ``k T + d``, so
``S(U) = floor((U - d)/T)^+ tau`` and ``E[S]`` gains a factor ``exp(-Lambda d)``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .._contracts import accepts
from .._rng import Seed, generator
from .._validate import integer, nonnegative, one_of, positive

__all__ = [
    "LLAMA3_RATES",
    "LLAMA3_PLANNED_PER_HOST_HOUR",
    "Recovery",
    "job_rates_per_s",
    "ettr",
    "simulate",
    "planned_rate_per_s",
    "young_daly_s",
    "optimal_interval_s",
    "interval_curve",
    "gpu_hours_lost_per_day",
    "LOSS_PARTS",
]

_HOURS = 54 * 24.0
#: Per-component failure rates (per component-hour) from Llama 3 Table 5 (419 unexpected interruptions in 54 days on
#: 16,384 GPUs in 2,048 hosts): GPU = faulty GPU 148 + HBM3 72 + SRAM 19 + system processor 17 + silent data
#: corruption 6 + thermal 6 (268 per GPU); host = unplanned host maintenance 32 + SSD 3 + PSU 3 + chassis 2 + IO board
#: 2 + CPU 2 + DRAM 2 (46 per host); NIC 7 (per GPU, one NIC each); network = switch and cable 35 (per GPU-attached
#: link); software = software bugs 54 + NCCL watchdog 7 + dependencies 2 (63 per host).
LLAMA3_RATES: dict[str, float] = {
    "gpu": 268 / (16384 * _HOURS),
    "host": 46 / (2048 * _HOURS),
    "nic": 7 / (16384 * _HOURS),
    "network": 35 / (16384 * _HOURS),
    "software": 63 / (2048 * _HOURS),
}
#: Planned interruptions (47 in the same snapshot) per host-hour.
LLAMA3_PLANNED_PER_HOST_HOUR = 47 / (2048 * _HOURS)
#: Lost-time categories, in the order of :func:`ettr`'s breakdown (fractions of wall time).
LOSS_PARTS = ("checkpoint", "lost_work", "detection", "isolation", "recovery", "planned")


@accepts()
@dataclass(frozen=True)
class Recovery:
    """How failures are handled and what each phase costs (seconds).

    Defaults: detection by the collective timeout (PyTorch's NCCL watchdog default of 10 minutes) and manual
    isolation of the faulty machine (30 minutes); restart from a checkpoint 270 s at ~1k GPUs (re-scheduling 60 s,
    process launch and environment 60 s, communication-group initialisation 60 s, checkpoint load 60 s, warm-up
    iterations 30 s: assumed phase durations, see the TrainMover reproduction); live migration 20 s (TrainMover
    reports about 20 s of downtime at 1,024 GPUs, arXiv 2412.12636v3); checkpoint write 60 s; a 10 s iteration.

    Examples
    --------
    >>> r = Recovery()
    >>> r.mode, r.failure_downtime_s
    ('checkpoint', 2670.0)
    >>> Recovery(mode="live", detect_s=4.0, isolate_s=10.0).failure_downtime_s
    39.0
    """

    mode: str = "checkpoint"
    detect_s: float = 600.0
    isolate_s: float = 1800.0
    restart_s: float = 270.0
    migrate_s: float = 20.0
    checkpoint_s: float = 60.0
    interval_s: float = 3600.0
    iteration_s: float = 10.0
    checkpoint_lag_s: float = 0.0

    def __post_init__(self) -> None:
        one_of("mode", self.mode, ("checkpoint", "live"))
        for f in ("detect_s", "isolate_s", "restart_s", "migrate_s", "checkpoint_s", "iteration_s", "checkpoint_lag_s"):
            nonnegative(f, getattr(self, f))
        positive("interval_s", self.interval_s)

    @property
    def recover_s(self) -> float:
        """Recovery after isolation: restart, or migration plus half an iteration redone."""
        return self.restart_s if self.mode == "checkpoint" else self.migrate_s + self.iteration_s / 2

    @property
    def failure_downtime_s(self) -> float:
        return self.detect_s + self.isolate_s + self.recover_s

    @property
    def planned_downtime_s(self) -> float:
        return self.checkpoint_s + self.restart_s if self.mode == "checkpoint" else self.migrate_s


@accepts()
def job_rates_per_s(
    n_gpus: int, gpus_per_host: int = 8, rates_per_hour: dict[str, float] | None = None, rate_scale: float = 1.0
) -> dict[str, float]:
    """Failure rate (per second) of each component class for a job of ``n_gpus``.

    GPUs, NICs and network links scale with GPUs; hosts and software with hosts (``n_gpus / gpus_per_host``).

    Examples
    --------
    >>> r = job_rates_per_s(16384)
    >>> round(sum(r.values()) * 86400 * 54)                 # Llama 3's 419 interruptions in 54 days
    419
    """
    n = integer("n_gpus", n_gpus, minimum=1)
    g = integer("gpus_per_host", gpus_per_host, minimum=1)
    rate_scale = nonnegative("rate_scale", rate_scale)
    rates = dict(LLAMA3_RATES if rates_per_hour is None else rates_per_hour)
    for k, v in rates.items():
        nonnegative(f"rates_per_hour[{k!r}]", v)
    count = {"gpu": n, "nic": n, "network": n, "host": n / g, "software": n / g}
    return {k: v * count.get(k, n) * rate_scale / 3600.0 for k, v in rates.items()}


@accepts()
def planned_rate_per_s(n_gpus: int, gpus_per_host: int = 8, rate_scale: float = 1.0) -> float:
    """Planned interruptions (maintenance, rebalancing) per second for a job of ``n_gpus``, at Llama 3's rate per host.

    Examples
    --------
    >>> round(planned_rate_per_s(16384) * 86400 * 54)          # Llama 3's 47 planned interruptions in 54 days
    47
    """
    n = integer("n_gpus", n_gpus, minimum=1)
    g = integer("gpus_per_host", gpus_per_host, minimum=1)
    return LLAMA3_PLANNED_PER_HOST_HOUR * n / g / 3600 * nonnegative("rate_scale", rate_scale)


def _moments(lam: float, tau: float, c: float, lag: float = 0.0) -> tuple[float, float]:
    """``E[S(U)], E[W(U)]`` for ``U ~ Exp(lam)`` and segments of ``tau`` work + ``c`` checkpoint, each checkpoint
    durable ``lag`` seconds after its segment."""
    q = np.exp(-lam * (tau + c))
    es = tau * q / -np.expm1(-lam * (tau + c))
    partial = (-np.expm1(-lam * tau) / lam - tau * q) / -np.expm1(-lam * (tau + c))
    return float(es * np.exp(-lam * lag)), float(es + partial)


@accepts()
def ettr(failure_rate_per_s: float, recovery: Recovery, planned_rate_per_s: float = 0.0) -> dict[str, float]:
    """Closed-form (renewal-reward) ETTR and the fractions of wall time lost, by category.

    Returns
    -------
    dict
        ``ettr`` and one fraction of wall time per :data:`LOSS_PARTS`; all sum to 1.

    Examples
    --------
    >>> out = ettr(1 / 3600, Recovery(interval_s=1800))
    >>> round(out["ettr"], 3), round(sum(out.values()), 12)
    (0.424, 1.0)
    """
    lf = nonnegative("failure_rate_per_s", failure_rate_per_s)
    lp = nonnegative("planned_rate_per_s", planned_rate_per_s)
    if not isinstance(recovery, Recovery):
        raise TypeError(f"recovery must be a Recovery, got {type(recovery).__name__}")
    lam = lf + lp
    if lam == 0:
        share = recovery.interval_s / (recovery.interval_s + recovery.checkpoint_s)
        return {"ettr": share, "checkpoint": 1 - share, **{k: 0.0 for k in LOSS_PARTS[1:]}}
    es, ew = _moments(lam, recovery.interval_s, recovery.checkpoint_s, recovery.checkpoint_lag_s)
    pf, pp = lf / lam, lp / lam
    if recovery.mode == "live":  # one schedule through every migration: a share tau / T of up time is work
        ew = recovery.interval_s / (recovery.interval_s + recovery.checkpoint_s) / lam
        es = ew
    parts = {
        "productive": pf * es + pp * ew,
        "checkpoint": 1 / lam - ew,
        "lost_work": pf * (ew - es),
        "detection": pf * recovery.detect_s,
        "isolation": pf * recovery.isolate_s,
        "recovery": pf * recovery.recover_s,
        "planned": pp * recovery.planned_downtime_s,
    }
    cycle = 1 / lam + pf * recovery.failure_downtime_s + pp * recovery.planned_downtime_s
    out = {"ettr": parts.pop("productive") / cycle}
    out.update({k: parts[k] / cycle for k in LOSS_PARTS})
    return out


@accepts()
def simulate(
    failure_rate_per_s: float,
    recovery: Recovery,
    planned_rate_per_s: float = 0.0,
    duration_s: float = 30 * 86400.0,
    replicas: int = 1000,
    seed: Seed = None,
) -> dict[str, float]:
    """Monte-Carlo ETTR: each replica draws the cycles of ``duration_s`` worth of expected events.

    Every replica runs ``ceil(duration_s * rate)`` cycles (all replicas and cycles drawn as one array); the
    estimate is the ratio of summed productive time to summed wall time, and ``ettr_se`` its standard error
    (delta method over replicas). Lost-time fractions by category are returned as in :func:`ettr`.

    Examples
    --------
    >>> mc = simulate(1 / 3600, Recovery(interval_s=1800), replicas=200, seed=0)
    >>> abs(mc["ettr"] - ettr(1 / 3600, Recovery(interval_s=1800))["ettr"]) < 4 * mc["ettr_se"]
    True
    """
    lf = nonnegative("failure_rate_per_s", failure_rate_per_s)
    lp = nonnegative("planned_rate_per_s", planned_rate_per_s)
    lam = positive("failure + planned rate", lf + lp)
    duration_s = positive("duration_s", duration_s)
    replicas = integer("replicas", replicas, minimum=2)
    rng = generator(seed)
    k = max(1, int(np.ceil(duration_s * lam)))
    tau, c = recovery.interval_s, recovery.checkpoint_s
    u = rng.exponential(1 / lam, size=(replicas, k))
    failure = rng.random((replicas, k)) < lf / lam
    live = recovery.mode == "live"

    def worked(t):  # work done in t seconds of one schedule from a segment's start
        whole, rem = np.divmod(t, tau + c)
        return whole * tau + np.minimum(rem, tau)

    if live:  # the up periods of a replica run one schedule: each cycle's work is what its stretch of it holds
        up = np.cumsum(u, axis=1)
        work = np.diff(worked(up), axis=1, prepend=0.0)
    else:
        work = worked(u)
    saved = np.maximum(np.floor((u - recovery.checkpoint_lag_s) / (tau + c)), 0.0) * tau
    productive = np.where(failure & (not live), saved, work)
    parts = {
        "checkpoint": u - work,
        "lost_work": np.where(failure & (not live), work - saved, 0.0),
        "detection": failure * recovery.detect_s,
        "isolation": failure * recovery.isolate_s,
        "recovery": failure * recovery.recover_s,
        "planned": ~failure * recovery.planned_downtime_s,
    }
    wall = (u + np.where(failure, recovery.failure_downtime_s, recovery.planned_downtime_s)).sum(axis=1)
    prod = productive.sum(axis=1)
    ratio = prod.sum() / wall.sum()
    resid = prod - ratio * wall
    se = float(np.sqrt(resid.var(ddof=1) / replicas) / wall.mean())
    out = {"ettr": float(ratio), "ettr_se": se}
    out.update({key: float(v.sum() / wall.sum()) for key, v in parts.items()})
    return out


@accepts()
def young_daly_s(checkpoint_s: float, mtbf_s: float) -> float:
    """Young/Daly checkpoint interval ``sqrt(2 C MTBF)`` (seconds of work between checkpoints).

    Examples
    --------
    >>> round(young_daly_s(60, 3 * 3600), 1)
    1138.4
    """
    return float(np.sqrt(2 * positive("checkpoint_s", checkpoint_s) * positive("mtbf_s", mtbf_s)))


@accepts()
def optimal_interval_s(failure_rate_per_s: float, recovery: Recovery, planned_rate_per_s: float = 0.0) -> float:
    """The checkpoint interval maximising the closed-form ETTR (golden-section search on log interval).

    Examples
    --------
    >>> r = Recovery(checkpoint_s=60)
    >>> round(optimal_interval_s(1 / 10800, r) / young_daly_s(60, 10800), 2)
    0.97
    """
    lo, hi = np.log(1.0), np.log(1e7)
    g = (np.sqrt(5) - 1) / 2

    def f(x: float) -> float:
        return -ettr(failure_rate_per_s, replace(recovery, interval_s=float(np.exp(x))), planned_rate_per_s)["ettr"]

    a, b = lo, hi
    for _ in range(80):
        c1, c2 = b - g * (b - a), a + g * (b - a)
        if f(c1) < f(c2):
            b = c2
        else:
            a = c1
    return float(np.exp((a + b) / 2))


@accepts()
def interval_curve(
    failure_rate_per_s: float,
    recovery: Recovery,
    intervals_s,
    planned_rate_per_s: float = 0.0,
    replicas: int = 200,
    seed: Seed = None,
) -> pd.DataFrame:
    """ETTR vs checkpoint interval, closed form and Monte-Carlo (a month per replica), one row per interval.

    Examples
    --------
    >>> t = interval_curve(1 / 3600, Recovery(), [600, 1200], replicas=50, seed=0)
    >>> list(t.columns)
    ['interval_s', 'ettr', 'mc_ettr', 'mc_se']
    """
    from .._rng import spawn
    from .._validate import array_1d

    iv = array_1d("intervals_s", intervals_s, min_size=1, low=0.0, low_inclusive=False)
    rows = []
    for tau, rng in zip(iv, spawn(seed, iv.size)):
        rec = replace(recovery, interval_s=float(tau))
        mc = simulate(failure_rate_per_s, rec, planned_rate_per_s, replicas=replicas, seed=rng)
        rows.append((float(tau), ettr(failure_rate_per_s, rec, planned_rate_per_s)["ettr"], mc["ettr"], mc["ettr_se"]))
    return pd.DataFrame(rows, columns=["interval_s", "ettr", "mc_ettr", "mc_se"])


@accepts()
def gpu_hours_lost_per_day(
    n_gpus: int,
    recovery: Recovery,
    rates_per_hour: dict[str, float] | None = None,
    planned: bool = True,
    rate_scale: float = 1.0,
) -> pd.DataFrame:
    """GPU-hours lost per day by category for a job of ``n_gpus`` (closed form), one row per category.

    Examples
    --------
    >>> t = gpu_hours_lost_per_day(16384, Recovery())
    >>> list(t.columns), bool(t.gpu_hours_per_day.sum() > 0)
    (['category', 'fraction', 'gpu_hours_per_day'], True)
    """
    lf = sum(job_rates_per_s(n_gpus, rates_per_hour=rates_per_hour, rate_scale=rate_scale).values())
    lp = planned_rate_per_s(n_gpus, rate_scale=rate_scale) if planned else 0.0
    out = ettr(lf, recovery, lp)
    frac = np.array([out[k] for k in LOSS_PARTS])
    return pd.DataFrame({"category": LOSS_PARTS, "fraction": frac, "gpu_hours_per_day": frac * n_gpus * 24})
