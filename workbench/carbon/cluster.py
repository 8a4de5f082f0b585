"""An event-driven cluster of executors running job DAGs, with carbon accounting on an hourly grid trace.

Jobs arrive (a batch at time 0 or a Poisson stream), each a :class:`~workbench.carbon.dags.JobDAG`. Whenever
executors are free, the scheduler (:mod:`workbench.carbon.schedulers`) picks a runnable stage and a number of
executors for it, or defers. An executor that finishes a task takes the next task of the same stage if one is left
(as in Decima's simulator; CAP may release it instead when the cluster is above its allowance), otherwise it
returns to the free pool. Task durations are drawn from the measured pools (first wave, later wave, fresh
executor; see :mod:`workbench.carbon.dags`). A job never holds more than ``job_cap`` executors.

Carbon: ``sum over busy intervals of power x integral of the intensity`` (gCO2eq), with simulated time mapped onto
trace hours by :class:`~workbench.carbon.traces.TimeMapping`. Idle executors draw ``idle_power_w`` until the last
job completes (0 by default: only busy executor-time counts, as in the PCAPS simulator's carbon metric).
The energy duration is the simulated duration; the time mapping only decides which hour's intensity applies.

Examples
--------
>>> import numpy as np
>>> from workbench.carbon.dags import JobDAG
>>> job = JobDAG.from_dict({"adjacency": [[0]], "task_durations_ms": [
...     {"first_wave": {"1": [60000, 60000]}, "rest_wave": {"1": []}, "fresh_durations": {"1": []}}]})
>>> r = simulate([job], [0.0], np.array([100.0, 300.0]), "fifo", executors=1, power_w=1000.0)
>>> r.completion_s.tolist(), round(r.carbon_g, 3)
([120.0], 6.667)
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import _validate as V
from .._contracts import accepts, output
from .._rng import Seed, generator
from . import _cluster_kernel as K
from .dags import QUERIES, SCALES, JobDAG, load_job
from .schedulers import Cap, CriticalPath, Fifo, Pcaps, Scheduler, make_scheduler
from .traces import TimeMapping, TraceError, forecast_bounds

__all__ = ["SimResult", "simulate", "sample_jobs", "poisson_arrivals", "DEFAULT_POWER_W"]

#: Power of one busy executor (W): an HPE ProLiant DL380 Gen10 at 50% load, 237 W (SPECpower_ssj2008 result
#: power_ssj2008-20180828-00850). One executor stands for one server node, as in the PCAPS 100-node prototype.
DEFAULT_POWER_W = 237.0


@output
@dataclass(frozen=True)
class SimResult:
    """What one simulation produced.

    Attributes
    ----------
    arrival_s, completion_s : per job (s).
    busy_start_s, busy_end_s, busy_executor, busy_job, busy_stage : one row per task (executor busy interval).
    carbon_g : busy (and idle, if ``idle_power_w``) carbon, gCO2eq.
    energy_kwh : busy energy.
    makespan_s : last completion.
    """

    arrival_s: np.ndarray
    completion_s: np.ndarray
    busy_start_s: np.ndarray
    busy_end_s: np.ndarray
    busy_executor: np.ndarray
    busy_job: np.ndarray
    busy_stage: np.ndarray
    carbon_g: float
    energy_kwh: float
    makespan_s: float
    executors: int
    mapping: TimeMapping

    @property
    def jct_s(self) -> np.ndarray:
        """Job completion times (completion - arrival)."""
        return self.completion_s - self.arrival_s

    @property
    def mean_jct_s(self) -> float:
        """Mean job completion time (s)."""
        return float(self.jct_s.mean())

    @accepts()
    def busy_per_hour(self) -> np.ndarray:
        """Mean number of busy executors in each trace hour from the mapping's start hour to the makespan."""
        sph = self.mapping.seconds_per_hour
        n = int(np.ceil(self.makespan_s / sph)) + 1
        return K.busy_seconds_per_hour(self.busy_start_s, self.busy_end_s, float(sph), n) / sph


class _State:
    """Mutable cluster state the schedulers read (see :mod:`workbench.carbon.schedulers`)."""

    def __init__(self, jobs, arrivals, intensity, executors, job_cap, mapping):
        self.jobs = jobs
        self.arrival = np.asarray(arrivals, float)
        self.executors = executors
        self.job_cap = job_cap
        self.mapping = mapping
        self.intensity = intensity
        self.low, self.high = forecast_bounds(intensity, 48)
        self._hour = -1
        self._now = (0.0, 0.0, 0.0)
        self.job_exec = [0] * len(jobs)
        self.to_launch = [d.num_tasks.tolist() for d in jobs]
        self.cp = [d.critical_path_s() for d in jobs]
        self.cp_lists = [c.tolist() for c in self.cp]
        self.remaining_work = [d.total_work_s for d in jobs]
        self.active: list[int] = []
        self.frontier: list[set[int]] = [set() for _ in jobs]  # parents done, not finished
        self.busy = 0

    def carbon_now(self, t: float) -> tuple[float, float, float]:
        """``(c, L, U)`` at simulated time ``t``: this hour's intensity and the next 48 hours' bounds."""
        h = self.mapping._hour_index(t)
        if h == self._hour:
            return self._now
        if h >= self.intensity.size:
            raise _beyond_trace(h, self.intensity.size, self.mapping)
        self._hour = h
        self._now = (float(self.intensity[h]), float(self.low[h]), float(self.high[h]))
        return self._now


def _cumulative(intensity: np.ndarray, mapping: TimeMapping):
    """``F(t) = integral_0^t I(hour(s)) ds`` for simulated ``t`` (gCO2eq/kWh x s)."""
    sph = mapping.seconds_per_hour
    vals = intensity[mapping.start_hour :]
    cum = np.concatenate([[0.0], np.cumsum(vals) * sph])

    def f(t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, float)
        h = np.maximum(np.ceil(t / sph).astype(np.int64) - 1, 0)  # continuous at hour edges
        if h.size and h.max() >= vals.size:
            raise TraceError(
                f"busy time reaches trace hour {mapping.start_hour + int(h.max())} but the intensity has "
                f"{intensity.size} hours; give a longer trace or a larger seconds_per_hour (simulated seconds per "
                f"trace hour, now {sph})"
            )
        return cum[h] + vals[h] * (t - h * sph)

    return f


@accepts()
def simulate(
    jobs: Sequence[JobDAG],
    arrivals_s: Sequence[float] | np.ndarray,
    intensity: np.ndarray,
    scheduler: str | Scheduler = "cp",
    *,
    executors: int = 100,
    job_cap: int | None = None,
    mapping: TimeMapping | None = None,
    power_w: float = DEFAULT_POWER_W,
    idle_power_w: float = 0.0,
    gamma: float = 0.5,
    seed: Seed = 0,
) -> SimResult:
    """Run ``jobs`` (arriving at ``arrivals_s``) on ``executors`` executors under ``scheduler``.

    Parameters
    ----------
    jobs : job DAGs (e.g. from :func:`sample_jobs`).
    arrivals_s : arrival time of each job (s, >= 0).
    intensity : gCO2eq/kWh per trace hour; ``mapping.start_hour`` indexes the hour at simulated time 0.
    scheduler : a name of :data:`~workbench.carbon.schedulers.SCHEDULERS` or a :class:`Scheduler`.
    executors : cluster size ``K`` (>= 1). job_cap : per-job executor bound (default ``executors``).
    mapping : simulated time onto trace hours (default 60 s per hour, the PCAPS simulator's scale).
    power_w, idle_power_w : power of a busy / idle executor (W).
    gamma : PCAPS's trade-off parameter when ``scheduler == "pcaps"``.
    seed : task-duration draws.
    """
    jobs = list(jobs)
    if not jobs:
        raise ValueError("jobs must hold at least one JobDAG")
    arr = V.array_1d("arrivals_s", arrivals_s, min_size=len(jobs), low=0.0)
    if arr.size != len(jobs):
        raise ValueError(f"arrivals_s has {arr.size} entries for {len(jobs)} jobs")
    inten = V.array_1d("intensity", intensity, min_size=1, low=0.0)
    executors = V.integer("executors", executors, minimum=1)
    job_cap = executors if job_cap is None else V.integer("job_cap", job_cap, minimum=1, maximum=executors)
    mapping = mapping or TimeMapping()
    if mapping.start_hour >= inten.size:
        raise TraceError(f"mapping.start_hour={mapping.start_hour} is beyond the {inten.size}-hour intensity")
    power_w = V.nonnegative("power_w", power_w)
    idle_power_w = V.nonnegative("idle_power_w", idle_power_w)
    sched = make_scheduler(scheduler, gamma=gamma) if isinstance(scheduler, str) else scheduler
    rule = _compiled_rule(sched)
    if rule is None:
        completion, recs = _simulate_python(jobs, arr, inten, sched, executors, job_cap, mapping, seed)
    else:
        completion, recs = _simulate_compiled(jobs, arr, inten, sched, rule, executors, job_cap, mapping, seed)
    return _result(arr, completion, recs, inten, mapping, executors, power_w, idle_power_w)


def _compiled_rule(sched: Scheduler) -> tuple[int, int] | None:
    """``(base, wrapper)`` codes of :mod:`._cluster_kernel` for a built-in rule the compiled loop runs (FIFO or
    critical path, alone, under CAP or under PCAPS), ``None`` for any other scheduler (the Python loop runs it)."""
    bases = {Fifo: K.BASE_FIFO, CriticalPath: K.BASE_CP}
    kind = type(sched)
    if kind in bases:
        return bases[kind], K.WRAP_NONE
    if isinstance(sched, (Cap, Pcaps)) and kind in (Cap, Pcaps) and type(sched.base) in bases:
        return bases[type(sched.base)], K.WRAP_CAP if kind is Cap else K.WRAP_PCAPS
    return None


def _simulate_compiled(jobs, arr, inten, sched, rule, executors, job_cap, mapping, seed):
    """The compiled loop (:func:`._cluster_kernel.run_cluster`): the Python loop's events, candidates, draws and
    arithmetic, for the built-in rules."""
    packed = K.pack_jobs(jobs)
    total = int(packed["num_tasks"].sum())
    low, high = forecast_bounds(inten, 48)
    start = mapping.start_hour
    allowed = np.zeros(inten.size, np.int64)
    if rule[1] == K.WRAP_CAP:  # CAP's allowance at every hour the run can reach
        for h in range(start, inten.size):
            allowed[h] = sched.allowed_at(float(inten[h]), float(low[h]), float(high[h]), executors)
    gamma = float(sched.gamma) if rule[1] == K.WRAP_PCAPS else 0.0
    status, completion, *recs = K.run_cluster(
        arr,
        np.argsort(arr, kind="stable").astype(np.int64),
        uniforms=generator(seed).random(2 * total),  # two per task, in the order tasks start (as the Python loop)
        executors=executors,
        job_cap=job_cap,
        base=rule[0],
        wrap=rule[1],
        gamma=gamma,
        allowed_h=allowed,
        inten=inten,
        low=np.asarray(low, float),
        high=np.asarray(high, float),
        sph=float(mapping.seconds_per_hour),
        start_hour=int(start),
        **packed,
    )
    if status:
        raise _beyond_trace(status, inten.size, mapping)
    return completion, np.column_stack(recs)


def _beyond_trace(hour: int, size: int, mapping: TimeMapping) -> TraceError:
    return TraceError(
        f"the simulation reached trace hour {hour} but the intensity has {size} hours; "
        "give a longer trace or a larger seconds_per_hour (simulated seconds per trace hour, now "
        f"{mapping.seconds_per_hour})"
    )


def _simulate_python(jobs, arr, inten, sched, executors, job_cap, mapping, seed):
    """The event loop over the scheduler's methods (any :class:`Scheduler`); returns the completion times and the
    task records ``(start, end, executor, job, stage)`` in the order tasks finished."""
    rng = generator(seed)
    st = _State(jobs, arr, inten, executors, job_cap, mapping)
    n_jobs = len(jobs)
    # per-job stage bookkeeping
    waiting = [[len(p) for p in d.parents] for d in jobs]
    left = [d.num_tasks.tolist() for d in jobs]  # tasks not yet finished
    stages_left = [d.num_stages for d in jobs]
    runnable: list[set[int]] = [set() for _ in jobs]
    completion = np.full(n_jobs, np.nan)
    ex_job = [-1] * executors
    ex_stage = [-1] * executors
    ex_start = [0.0] * executors
    free = list(range(executors - 1, -1, -1))
    rec: list[tuple[float, float, int, int, int]] = []
    keep = getattr(sched, "keep_running", None)

    buf = rng.random(4096).tolist()
    pos = 0
    keys_of = [d.keys.tolist() for d in jobs]
    pools_of = [d.pool_lists for d in jobs]
    job_exec = st.job_exec
    mean_task = [d.mean_task_s.tolist() for d in jobs]
    to_launch = st.to_launch
    events: list[tuple[float, int, int, int]] = []  # (time, kind, seq, payload); kind 0 finish, 1 arrival, 2 wake
    seq = 0
    for j in np.argsort(arr, kind="stable"):
        heapq.heappush(events, (float(arr[j]), 1, seq, int(j)))
        seq += 1
    wake_at = -1.0

    def start_task(e: int, j: int, s: int, t: float) -> None:
        nonlocal pos, buf, seq
        keys = keys_of[j]
        n = job_exec[j]
        k = bisect_right(keys, n) - 1
        if pos + 2 > len(buf):
            buf = rng.random(4096).tolist()
            pos = 0
        u1, u2 = buf[pos], buf[pos + 1]
        pos += 2
        if k < 0:
            k = 0
        elif k < len(keys) - 1 and u1 < (n - keys[k]) / (keys[k + 1] - keys[k]):
            k += 1
        if ex_job[e] != j:
            kind = 2
        elif ex_stage[e] == s:
            kind = 1
        else:
            kind = 0
        pool = pools_of[j][kind][s][k]
        dur = pool[int(u2 * len(pool))]
        ex_job[e], ex_stage[e], ex_start[e] = j, s, t
        tl = to_launch[j]
        tl[s] -= 1
        if tl[s] == 0:
            runnable[j].discard(s)
        heapq.heappush(events, (t + dur, 0, seq, e))
        seq += 1

    def assign(t: float) -> None:
        nonlocal wake_at, seq
        while free:
            if sched.blocked(st, t):
                if not any(runnable[j] for j in st.active):
                    return
                cands = []
                got = None
            else:
                cands = [(j, s) for j in st.active if st.job_exec[j] < job_cap for s in sorted(runnable[j])]
                if not cands:
                    return
                got = sched.choose(st, cands, t, len(free))
            if got is None or got[1] <= 0:
                nxt = mapping._next_hour_start(t)
                if nxt > wake_at:
                    wake_at = nxt
                    heapq.heappush(events, (nxt, 2, seq, -1))
                    seq += 1
                return
            i, m = got
            j, s = cands[i]
            for _ in range(m):
                e = free.pop()
                st.job_exec[j] += 1
                st.busy += 1
                start_task(e, j, s, t)

    while events:
        t, kind, _, x = heapq.heappop(events)
        if kind == 1:
            j = x
            st.active.append(j)
            runnable[j] = {s for s in range(jobs[j].num_stages) if waiting[j][s] == 0}
            st.frontier[j] = set(runnable[j])
        elif kind == 0:
            e = x
            j, s = ex_job[e], ex_stage[e]
            rec.append((ex_start[e], t, e, j, s))
            st.remaining_work[j] -= mean_task[j][s]
            left[j][s] -= 1
            if left[j][s] == 0:
                stages_left[j] -= 1
                st.frontier[j].discard(s)
                for c in jobs[j].children[s]:
                    waiting[j][c] -= 1
                    if waiting[j][c] == 0:
                        runnable[j].add(c)
                        st.frontier[j].add(c)
                if stages_left[j] == 0:
                    completion[j] = t
                    st.active.remove(j)
            if to_launch[j][s] > 0 and (keep is None or keep(st, t)):
                start_task(e, j, s, t)
            else:
                job_exec[j] -= 1
                st.busy -= 1
                free.append(e)
        if free and (not events or events[0][0] > t):  # decide once all events at this instant are in
            assign(t)

    return completion, np.array(rec, dtype=float).reshape(-1, 5)


def _result(arr, completion, recs, inten, mapping, executors, power_w, idle_power_w) -> SimResult:
    """The run's record from its completion times and task records: busy and idle carbon, energy, makespan."""
    if np.isnan(completion).any():
        raise RuntimeError("simulation ended with unfinished jobs (a stage could never run)")
    a, b = recs[:, 0].copy(), recs[:, 1].copy()
    f = _cumulative(inten, mapping)
    busy_int = float((f(b) - f(a)).sum())
    makespan = float(np.nanmax(completion))
    carbon = power_w / 1000.0 * busy_int / 3600.0
    if idle_power_w > 0:
        idle_int = executors * float(f(np.array([makespan]))[0]) - busy_int
        carbon += idle_power_w / 1000.0 * idle_int / 3600.0
    return SimResult(
        arrival_s=arr,
        completion_s=completion,
        busy_start_s=a,
        busy_end_s=b,
        busy_executor=recs[:, 2].astype(np.int64),
        busy_job=recs[:, 3].astype(np.int64),
        busy_stage=recs[:, 4].astype(np.int64),
        carbon_g=carbon,
        energy_kwh=power_w / 1000.0 * float((b - a).sum()) / 3600.0,
        makespan_s=makespan,
        executors=executors,
        mapping=mapping,
    )


@accepts()
def sample_jobs(n: int, scales: Sequence[str] = SCALES, seed: Seed = 0) -> list[JobDAG]:
    """``n`` jobs drawn uniformly from the 22 TPC-H queries x ``scales`` (Decima's and PCAPS's job mix)."""
    n = V.integer("n", n, minimum=1)
    for s in scales:
        V.one_of("scales", s, SCALES)
    rng = generator(seed)
    qs = rng.integers(0, len(QUERIES), n)
    ss = rng.integers(0, len(scales), n)
    return [load_job(QUERIES[q], scales[k]) for q, k in zip(qs, ss, strict=True)]


@accepts()
def poisson_arrivals(n: int, mean_interarrival_s: float, seed: Seed = 0) -> np.ndarray:
    """Arrival times of a Poisson stream of ``n`` jobs, the first at 0 (s).

    Examples
    --------
    >>> poisson_arrivals(3, 60.0, seed=0).round(1).tolist()
    [0.0, 40.8, 102.0]
    """
    n = V.integer("n", n, minimum=1)
    m = V.positive("mean_interarrival_s", mean_interarrival_s)
    gaps = generator(seed).exponential(m, n - 1)
    return np.concatenate([[0.0], np.cumsum(gaps)])
