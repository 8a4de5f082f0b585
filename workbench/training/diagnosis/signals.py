"""Per-rank, per-iteration timings of a synchronous data-parallel job, with faults and noise.

Every iteration each rank computes (forward + backward, log-normal jitter, data-loader hiccups, a periodic
checkpoint stall on every rank) and then enters the gradient all-reduce. The all-reduce follows its dependency
structure:

* it ends for everyone when the last rank has arrived and the slowest link has moved its share (a pipelined ring,
  and the pairwise steps of halving-doubling, both run at the pace of the slowest link), so
  ``duration = max(arrival) + max(transmit) + steps x latency``;
* a rank *waits* for the part it did not spend computing or transmitting:
  ``wait = (max(arrival) - arrival) + (max(transmit) - transmit)``: the late rank and the sender on a slow link are
  the ones that wait least (C4D's victim-vs-culprit signature);
* the stall spreads from the critical rank (the one everyone ends up waiting for) along the communicator: in a
  ring the rank ``k`` hops downstream blocks at its step ``k`` (neighbours first, then everyone); in
  halving-doubling rank ``j`` blocks at step ``floor(log2(j xor critical)) + 1`` (the stall doubles its reach each
  step). ``blocked_after_s`` records when, measured from the iteration start.

A fail-stop hangs the collective it never enters: that iteration and every later one has no end (NaN), the dead
rank has no records from then on. Per-machine monitoring metrics are in :mod:`.metrics`.

Function-level profile (for PerfTracker, arXiv:2506.08528): the compute phase is split into named functions
(:data:`FUNCTIONS`): a data loader (10% of nominal compute), the optimizer step (10%), the garbage collector (1%),
each with its own log-normal jitter, a checkpoint save (the periodic stall), and forward/backward (the rest of the
compute phase); the all-reduce kernel is ``busy_s``. ``Signals.profile_s`` stores the first four
(``float32 (iterations, ranks, 4)``, :data:`PROFILED`); the data-loader hiccups land in the data loader. The profile
draws from its own random stream, so every other array is byte-identical to a job simulated without it.

Arrays are ``float32`` of shape ``(iterations, ranks)`` (10,000 ranks x 1,000 iterations is 40 MB each); absolute
times are the per-iteration ``float64`` vectors ``iteration_start_s`` / ``iteration_end_s``. A monitoring feed with
gaps is represented by NaN entries (:func:`with_gaps`); :func:`check_signals` rejects what no detector can use.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..._contracts import Opaque, Real, accepts, output
from ..._rng import Seed, generator, spawn
from ..._validate import in_range, integer, nonnegative, one_of, positive, probability
from ...fabric.collectives import check_ranks
from .faults import FAULT_KINDS, FUNCTION_FAULTS, Fault, FaultEffects, fault_effects
from .metrics import machine_metrics

__all__ = [
    "COLLECTIVES",
    "FUNCTIONS",
    "PROFILED",
    "JobSpec",
    "Noise",
    "Signals",
    "simulate",
    "with_gaps",
    "check_signals",
]

COLLECTIVES = ("ring", "halving_doubling")
#: The named functions of one iteration, in the order a worker calls them.
FUNCTIONS = ("data_loader", "forward_backward", "optimizer_step", "gc", "checkpoint", "all_reduce")
#: The functions ``Signals.profile_s`` stores (forward/backward is the rest of ``compute_s``, the all-reduce
#: ``busy_s``).
PROFILED = ("data_loader", "optimizer_step", "gc", "checkpoint")
#: Nominal share of ``JobSpec.compute_s`` of the profiled small functions.
SHARES = {"data_loader": 0.10, "optimizer_step": 0.10, "gc": 0.01}
#: A GC pause lasts ``(severity - 1) x GC_PAUSE x compute_s``.
GC_PAUSE = 0.5
#: The most per-rank timings (``iterations x ranks``) :func:`simulate` holds: each per-rank array is then 400 MB of
#: float32, and a dozen of them (timings, the profile's four functions, temporaries) are alive at once.
MAX_RANK_ITERATIONS = 100_000_000


@accepts()
@dataclass(frozen=True)
class JobSpec:
    """A data-parallel job: ranks (GPUs), how they sit on machines, and its nominal iteration.

    ``allreduce_s`` is the bandwidth term of the gradient all-reduce at nominal link speed
    (``2 (N-1)/N x bytes / bandwidth``); ``step_latency_s`` is the per-step latency, paid ``2 (N-1)`` times by a ring
    and ``2 log2 N`` times by halving-doubling (which needs a power-of-two rank count).

    Examples
    --------
    >>> JobSpec(ranks=64).machines
    8
    """

    ranks: int = 1024
    ranks_per_machine: int = 8
    compute_s: float = 1.0
    allreduce_s: float = 0.3
    step_latency_s: float = 10e-6
    collective: str = "ring"

    def __post_init__(self) -> None:
        integer("ranks", self.ranks, minimum=4)
        integer("ranks_per_machine", self.ranks_per_machine, minimum=1)
        if self.ranks % self.ranks_per_machine:
            raise ValueError(f"ranks ({self.ranks}) must be a multiple of ranks_per_machine ({self.ranks_per_machine})")
        positive("compute_s", self.compute_s)
        positive("allreduce_s", self.allreduce_s)
        nonnegative("step_latency_s", self.step_latency_s)
        one_of("collective", self.collective, COLLECTIVES)
        check_ranks(self.collective, self.ranks, "ranks")

    @property
    def machines(self) -> int:
        return self.ranks // self.ranks_per_machine

    @property
    def steps(self) -> int:
        """Communication steps of one all-reduce."""
        if self.collective == "ring":
            return 2 * (self.ranks - 1)
        return 2 * int(np.log2(self.ranks))

    @property
    def iteration_s(self) -> float:
        """Nominal (noise- and fault-free) iteration time."""
        return self.compute_s + self.allreduce_s + self.steps * self.step_latency_s


@accepts()
@dataclass(frozen=True)
class Noise:
    """Healthy-job noise. :meth:`scaled` multiplies every sigma and rate by one level (0 is a noiseless job).

    Defaults: 3% log-normal jitter on compute and transmit, a 10 s checkpoint stall every 250 iterations, a 0.5 s
    data-loader hiccup on a rank with probability 2e-4 per iteration, 3% metric noise.

    Examples
    --------
    >>> Noise().scaled(2.0).jitter_sigma
    0.06
    """

    jitter_sigma: float = 0.03
    comm_jitter_sigma: float = 0.03
    checkpoint_every: int = 250
    checkpoint_s: float = 10.0
    hiccup_prob: float = 2e-4
    hiccup_s: float = 0.5
    metric_sigma: float = 0.03

    def __post_init__(self) -> None:
        nonnegative("jitter_sigma", self.jitter_sigma)
        nonnegative("comm_jitter_sigma", self.comm_jitter_sigma)
        integer("checkpoint_every", self.checkpoint_every, minimum=0)
        nonnegative("checkpoint_s", self.checkpoint_s)
        probability("hiccup_prob", self.hiccup_prob)
        nonnegative("hiccup_s", self.hiccup_s)
        nonnegative("metric_sigma", self.metric_sigma)

    @accepts(level=Real(ge=0.0, le=100.0))
    def scaled(self, level: float) -> Noise:
        """The same noise with sigmas and hiccup rate multiplied by ``level``."""
        level = in_range("level", level, 0.0, 100.0)
        return replace(
            self,
            jitter_sigma=self.jitter_sigma * level,
            comm_jitter_sigma=self.comm_jitter_sigma * level,
            hiccup_prob=min(1.0, self.hiccup_prob * level),
            metric_sigma=self.metric_sigma * level,
        )


@output
@dataclass(frozen=True, eq=False)
class Signals:
    """What a job emitted, and the ground truth of what was injected.

    Per-rank arrays are ``float32 (iterations, ranks)``; NaN means no record (a gap, or after a fail-stop).
    ``compute_s`` is the time from iteration start to entering the all-reduce, ``busy_s`` the time spent
    transmitting, ``wait_s`` the time blocked inside the all-reduce, ``blocked_after_s`` when the rank first blocked
    (from the iteration start; NaN if it never did). Metrics (:mod:`.metrics`) are ``float32 (samples, machines,
    metrics)``, time-major like the per-rank arrays.
    """

    job: JobSpec
    noise: Noise
    faults: tuple[Fault, ...]
    compute_s: np.ndarray
    busy_s: np.ndarray
    wait_s: np.ndarray
    blocked_after_s: np.ndarray
    iteration_start_s: np.ndarray
    iteration_end_s: np.ndarray
    fault_active: np.ndarray  #: bool (faults, iterations): which iterations each fault slowed
    metrics: np.ndarray = field(repr=False)
    metric_names: tuple[str, ...] = ()
    sample_s: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    sample_interval_s: float = 1.0
    #: float32 (iterations, ranks, len(PROFILED)) durations of the profiled functions (empty if not simulated)
    profile_s: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, len(PROFILED)), np.float32), repr=False)

    @accepts(rows=Opaque("a numpy index of iterations"), ranks=Opaque("a numpy index of ranks"))
    def function_durations(self, rows=slice(None), ranks=slice(None)) -> np.ndarray:
        """Every :data:`FUNCTIONS` duration, float32 ``(iterations, ranks, len(FUNCTIONS))`` (or of the given
        ``rows`` (iterations) and ``ranks``: any numpy index of the first two axes).

        Examples
        --------
        >>> s = simulate(JobSpec(ranks=16), 10, seed=0)
        >>> bool(np.allclose(s.function_durations()[..., :5].sum(axis=2), s.compute_s, rtol=1e-5))
        True
        """
        if self.profile_s.shape[:2] != self.compute_s.shape:
            raise ValueError("these signals carry no function-level profile (simulate() records one)")
        p = self.profile_s[rows][:, ranks]
        compute = self.compute_s[rows][:, ranks]
        fwd = compute - p.sum(axis=-1)
        return np.stack([p[..., 0], fwd, p[..., 1], p[..., 2], p[..., 3], self.busy_s[rows][:, ranks]], axis=-1)

    @property
    def iterations(self) -> int:
        return self.compute_s.shape[0]

    @property
    def ranks(self) -> int:
        return self.compute_s.shape[1]

    @property
    def start_s(self) -> np.ndarray:
        """Absolute time each rank entered the all-reduce, float64 ``(iterations, ranks)``."""
        return self.iteration_start_s[:, None] + self.compute_s

    @property
    def iteration_time_s(self) -> np.ndarray:
        """Duration of each iteration (NaN for a hung one)."""
        return self.iteration_end_s - self.iteration_start_s

    @accepts()
    def onset_s(self, fault_index: int = 0) -> float:
        """Wall-clock time at which fault ``fault_index`` starts."""
        return float(self.iteration_start_s[self.faults[fault_index].onset_iteration])

    @accepts()
    def truth_machines(self) -> np.ndarray:
        """Machines holding a fault (every machine for a fault on all ranks)."""
        if any(f.scope == "all" for f in self.faults):
            return np.arange(self.job.machines)
        return np.unique([f.machine(self.job.ranks_per_machine) for f in self.faults]).astype(int)


def _hops(job: JobSpec, critical: np.ndarray) -> np.ndarray:
    """Dependency distance (in steps) of every rank from each iteration's critical rank, int32 (iterations, ranks)."""
    r = np.arange(job.ranks, dtype=np.int32)[None, :]
    c = critical.astype(np.int32)[:, None]
    if job.collective == "ring":
        return (r - c) % job.ranks
    x = r ^ c
    return np.where(x > 0, np.floor(np.log2(np.maximum(x, 1))).astype(np.int32) + 1, 0)


@accepts()
def simulate(
    job: JobSpec,
    iterations: int = 1000,
    faults: Fault | tuple[Fault, ...] | list[Fault] = (),
    *,
    noise: Noise | None = None,
    sample_interval_s: float = 1.0,
    seed: Seed = None,
) -> Signals:
    """Generate the timings and machine metrics of ``job`` over ``iterations`` with ``faults`` injected.

    Parameters
    ----------
    job : JobSpec
    iterations : int
    faults : Fault or sequence of Fault
    noise : Noise, optional
        Defaults to ``Noise()``.
    sample_interval_s : float
        Monitoring sampling interval of the per-machine metrics.
    seed : int, Generator or None

    Examples
    --------
    >>> s = simulate(JobSpec(ranks=64), 50, Fault("slow_gpu", 9, onset_iteration=20), seed=1)
    >>> s.compute_s.shape, bool(s.wait_s[30, 9] < s.wait_s[30, 0])
    ((50, 64), True)
    """
    if not isinstance(job, JobSpec):
        raise TypeError(f"job must be a JobSpec, got {type(job).__name__}")
    iterations = integer("iterations", iterations, minimum=2)
    faults = (faults,) if isinstance(faults, Fault) else tuple(faults)
    for f in faults:
        if not isinstance(f, Fault):
            raise TypeError(f"faults must be Fault objects, got {type(f).__name__}")
        if f.rank >= job.ranks:
            raise ValueError(f"fault rank must be < ranks ({job.ranks}), got {f.rank}")
    noise = Noise() if noise is None else noise
    sample_interval_s = positive("sample_interval_s", sample_interval_s)
    if iterations * job.ranks > MAX_RANK_ITERATIONS:
        raise ValueError(
            f"iterations x ranks = {iterations:,} x {job.ranks:,} = {iterations * job.ranks:.3g} per-rank timings; "
            f"at most {MAX_RANK_ITERATIONS:,} are simulated (a dozen float32 arrays of that size are held at once): "
            f"lower iterations (at most {MAX_RANK_ITERATIONS // job.ranks:,} at {job.ranks:,} ranks) or ranks"
        )
    rng_time, rng_fault, rng_metric, rng_profile = spawn(seed, 4)  # the 4th child leaves the first three unchanged
    shape = (iterations, job.ranks)

    compute = rng_time.standard_normal(shape, dtype=np.float32)
    compute *= np.float32(noise.jitter_sigma)
    np.exp(compute, out=compute)
    compute *= np.float32(job.compute_s)
    busy = rng_time.standard_normal(shape, dtype=np.float32)
    busy *= np.float32(noise.comm_jitter_sigma)
    np.exp(busy, out=busy)
    busy *= np.float32(job.allreduce_s)
    hiccups = rng_time.binomial(compute.size, noise.hiccup_prob)
    hiccup_at = rng_time.choice(compute.size, hiccups, replace=False)
    compute.ravel()[hiccup_at] += np.float32(noise.hiccup_s)
    if noise.checkpoint_every:
        compute[noise.checkpoint_every - 1 :: noise.checkpoint_every] += np.float32(noise.checkpoint_s)
    profile = _profile(job, noise, shape, hiccup_at, rng_profile)

    streams = spawn(rng_fault, len(faults))
    effects: list[FaultEffects] = [fault_effects(f, iterations, r) for f, r in zip(faults, streams)]
    halt = iterations
    for f, fx in zip(faults, effects):
        cols = _fault_ranks(job, f)
        if f.kind == "fail_stop":
            halt = min(halt, f.onset_iteration)
        compute[:, cols] *= fx.compute_factor[:, None].astype(np.float32)
        busy[:, cols] *= fx.link_factor[:, None].astype(np.float32)
        # Holmes: a component slow enough that the iteration takes `severity` x its normal time
        busy[fx.irregular_extra, f.rank] += np.float32((f.severity - 1.0) * job.iteration_s)
        if f.kind in FUNCTION_FAULTS:
            k = PROFILED.index(FUNCTION_FAULTS[f.kind])
            on = fx.active[:, None]
            if f.kind == "gc_pause":
                extra = np.where(on, np.float32((f.severity - 1.0) * GC_PAUSE * job.compute_s), np.float32(0.0))
                extra = np.broadcast_to(extra, (iterations, cols.size))
            else:
                extra = np.where(on, profile[:, cols, k] * np.float32(f.severity - 1.0), np.float32(0.0))
            profile[:, cols, k] += extra
            compute[:, cols] += extra

    arrival = compute.max(axis=1)
    slowest_link = busy.max(axis=1)
    late = compute + busy
    critical = np.argmax(late, axis=1)
    latency = job.steps * job.step_latency_s
    duration = arrival.astype(np.float64) + slowest_link + latency
    wait = (arrival[:, None] - compute) + (slowest_link[:, None] - busy)
    step_s = np.float32(job.allreduce_s / job.steps + job.step_latency_s)
    hops = _hops(job, critical)
    blocked = compute + hops.astype(np.float32) * step_s
    blocked[(hops == 0) | (late >= (late.max(axis=1, keepdims=True) - step_s))] = np.nan
    np.minimum(blocked, duration[:, None].astype(np.float32), out=blocked)

    start = np.concatenate([[0.0], np.cumsum(duration)[:-1]])
    end = start + duration
    if halt < iterations:
        dead = np.concatenate(
            [_fault_ranks(job, f) for f in faults if f.kind == "fail_stop" and f.onset_iteration == halt]
        )
        end[halt:] = np.nan
        start[halt + 1 :] = np.nan
        for a in (compute, busy, wait, blocked):
            a[halt + 1 :] = np.nan
        for a in (busy, wait, blocked):
            a[halt] = np.nan
        compute[halt, dead] = np.nan
        profile[np.isnan(compute)] = np.nan
    active = np.array([fx.active for fx in effects], dtype=bool).reshape(len(faults), iterations)
    sig = Signals(
        job,
        noise,
        faults,
        compute,
        busy,
        wait,
        blocked,
        start,
        end,
        active,
        metrics=np.zeros((0, job.machines, 0), np.float32),
        sample_interval_s=sample_interval_s,
        profile_s=profile,
    )
    names, sample_s, values = machine_metrics(sig, effects, rng_metric)
    return replace(sig, metrics=values, metric_names=names, sample_s=sample_s)


def _profile(job: JobSpec, noise: Noise, shape, hiccup_at: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Durations of the :data:`PROFILED` functions, float32 ``(iterations, ranks, 4)``, before faults."""
    small = len(SHARES)
    p = np.zeros((*shape, len(PROFILED)), np.float32)
    j = rng.standard_normal((*shape, small), dtype=np.float32)
    j *= np.float32(noise.jitter_sigma)
    np.exp(j, out=j)
    j *= np.array([SHARES[k] * job.compute_s for k in PROFILED[:small]], np.float32)
    p[..., :small] = j
    rows, cols = np.unravel_index(hiccup_at, shape)
    p[rows, cols, 0] += np.float32(noise.hiccup_s)
    if noise.checkpoint_every:
        p[noise.checkpoint_every - 1 :: noise.checkpoint_every, :, 3] = np.float32(noise.checkpoint_s)
    return p


def _fault_ranks(job: JobSpec, fault: Fault) -> np.ndarray:
    if fault.scope == "all":
        return np.arange(job.ranks)
    if FAULT_KINDS.get(fault.kind) == "machine" or fault.scope == "machine":
        m = fault.machine(job.ranks_per_machine)
        return np.arange(m * job.ranks_per_machine, (m + 1) * job.ranks_per_machine)
    return np.array([fault.rank])


@accepts()
def with_gaps(signals: Signals, missing_fraction: float, seed: Seed = None) -> Signals:
    """A copy of ``signals`` whose monitoring feed lost ``missing_fraction`` of its per-rank records and samples.

    Examples
    --------
    >>> s = with_gaps(simulate(JobSpec(ranks=16), 20, seed=0), 0.1, seed=0)
    >>> 0.05 < float(np.isnan(s.compute_s).mean()) < 0.15
    True
    """
    missing_fraction = in_range("missing_fraction", missing_fraction, 0.0, 1.0, high_inclusive=False)
    rng = generator(seed)
    lost = rng.random(signals.compute_s.shape) < missing_fraction
    arrays = {}
    for name in ("compute_s", "busy_s", "wait_s", "blocked_after_s"):
        a = getattr(signals, name).copy()
        a[lost] = np.nan
        arrays[name] = a
    profile = signals.profile_s.copy()
    if profile.shape[:2] == lost.shape:
        profile[lost] = np.nan
    arrays["profile_s"] = profile
    metrics = signals.metrics.copy()
    metrics[rng.random(metrics.shape[:2]) < missing_fraction] = np.nan  # a lost sample loses every metric
    return replace(signals, metrics=metrics, **arrays)


@accepts()
def check_signals(signals: Signals, *, max_missing: float = 0.5) -> Signals:
    """Validate ``signals`` for a detector: right type and shapes, no rank or live iteration missing entirely.

    Scattered gaps are fine (detectors use NaN-aware statistics). A rank with more than ``max_missing`` of its
    records missing before the job halted, or a live iteration with no record at all, is rejected with the
    offending ranks or iterations named.

    Examples
    --------
    >>> check_signals(simulate(JobSpec(ranks=16), 10, seed=0)).ranks
    16
    """
    if not isinstance(signals, Signals):
        raise TypeError(f"signals must be a Signals (from simulate), got {type(signals).__name__}")
    max_missing = probability("max_missing", max_missing)
    shape = signals.compute_s.shape
    for name in ("busy_s", "wait_s", "blocked_after_s"):
        if getattr(signals, name).shape != shape:
            raise ValueError(f"signals.{name} has shape {getattr(signals, name).shape}, expected {shape}")
    if signals.iteration_start_s.shape != (shape[0],) or signals.iteration_end_s.shape != (shape[0],):
        raise ValueError("signals.iteration_start_s and iteration_end_s must have one entry per iteration")
    live = int(np.searchsorted(np.isnan(signals.iteration_start_s), True))
    if live < 2:
        raise ValueError(f"signals need at least 2 iterations before the job halted, got {live}")
    missing = np.isnan(signals.compute_s[:live])
    gone = np.flatnonzero(missing.all(axis=1)[: live - 1])
    if gone.size:
        raise ValueError(f"iterations {gone[:10].tolist()} have no record on any rank; drop or refill them")
    sparse = np.flatnonzero(missing[: live - 1].mean(axis=0) > max_missing)
    if sparse.size:
        raise ValueError(
            f"ranks {sparse[:10].tolist()} miss more than {max_missing:.0%} of their records "
            f"({sparse.size} ranks); the feed is too sparse to compare them with their peers"
        )
    return signals
