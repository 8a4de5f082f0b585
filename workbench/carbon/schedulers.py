"""Schedulers for the executor cluster: carbon-agnostic rules and the carbon-aware CAP and PCAPS.

A scheduler sees the runnable stages (``candidates``: pairs ``(job, stage)`` whose parents are done, that still
have tasks to launch and whose job is below its executor cap) whenever executors are free, and either picks one
with a number of executors or defers (leaves the executors idle until the next event or the next trace hour).

Carbon-agnostic rules
    ``fifo``: earliest-arrived job first (Spark's default), its lowest-numbered runnable stage.
    ``fair``: weighted fair sharing: job ``j`` is entitled to ``K w_j / sum(w)`` executors with ``w_j`` its
    remaining work to the power ``alpha`` (0: equal shares; Decima's tuned weighted-fair baseline uses a negative
    exponent, favouring small jobs); the job furthest below its share goes first.
    ``cp``: critical-path priority: the stage with the longest remaining work path to its job's end goes first.
    It stands in for Decima's learned policy (which PCAPS wraps); it is not Decima. ``agnostic`` is ``cp``: the
    carbon-agnostic baseline the carbon-aware rules are compared against.

Carbon-aware rules (Lechowicz et al., "Carbon- and Precedence-Aware Scheduling for Data Processing Clusters",
arXiv 2502.09717)
    ``cap``: CAP wraps any scheduler (default ``cp``; ``cap-fifo`` wraps FIFO) and provisions executors by the
    k-search thresholds (:func:`cap_thresholds`): with forecast bounds ``L, U`` over the next 48 hours, ``K``
    executors of which ``B`` are always allowed and ``k = K - B`` are controllable, the number allowed at
    intensity ``c`` is ``B + #{i : Phi_i >= c}`` (:func:`cap_allowed`).
    ``pcaps``: a stage with relative importance ``r`` in (0, 1] runs at intensity ``c`` only if
    ``c <= Psi_gamma(r)`` (:func:`pcaps_threshold`); the relative importance is the stage's priority over the
    highest priority among runnable stages (Decima's action probability over the most probable action in the
    paper; here the candidate's critical path over the longest critical path among the stages that are runnable or
    running, so the reference does not shrink as the most important stages take their executors).

Examples
--------
>>> [round(float(x), 1) for x in cap_thresholds(100.0, 400.0, 3)]
[232.1, 199.6, 160.8]
>>> cap_allowed(200.0, 100.0, 400.0, executors=13, minimum=10)
11
>>> round(pcaps_threshold(0.5, gamma=0.5, low=100.0, high=400.0), 1)
315.7
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import lambertw

from .. import _validate as V
from .._contracts import accepts

__all__ = [
    "SCHEDULERS",
    "Scheduler",
    "Fifo",
    "Fair",
    "CriticalPath",
    "Cap",
    "Pcaps",
    "make_scheduler",
    "cap_alpha",
    "cap_thresholds",
    "cap_allowed",
    "pcaps_threshold",
]

SCHEDULERS = ("fifo", "fair", "cp", "agnostic", "cap", "cap-fifo", "pcaps")


@accepts()
def cap_alpha(low: float, high: float) -> float:
    """Competitive ratio ``alpha`` of k-min search with prices in ``[L, U]``: the solution of
    ``(U/L ... )``: ``alpha = 1 / (1 + W((L/U - 1) / e))`` with ``W`` the Lambert W function (PCAPS paper, CAP
    thresholds; Lechowicz et al. 2024 k-search). ``alpha = 1`` when ``L = U``; ``alpha = inf`` when ``L = 0 < U``
    (a zero-carbon hour within the forecast window: ``W(-1/e) = -1``, the limit as ``L`` falls to 0)."""
    low, high = V.nonnegative("low", low), V.nonnegative("high", high)
    if low > high:
        raise ValueError(f"low must be <= high, got low={low}, high={high}")
    if low == high:
        return 1.0
    if low == 0.0:
        return math.inf
    return float(1.0 / (1.0 + lambertw((low / high - 1.0) / math.e).real))


@accepts()
def cap_thresholds(low: float, high: float, k: int) -> np.ndarray:
    """CAP's k-search thresholds ``Phi_i = U [1 - (1 - 1/alpha) (1 + 1/(alpha k))^(i-1)]``, ``i = 1..k``
    (arXiv 2502.09717, CAP provisioning rule; decreasing from ``U/alpha`` towards ``L``). With ``L = 0`` every
    threshold is 0 (their limit as ``L`` falls to 0): beyond the always-allowed executors, work waits for an hour
    of zero intensity.

    >>> cap_thresholds(0.0, 400.0, 3).tolist()
    [0.0, 0.0, 0.0]
    """
    k = V.integer("k", k, minimum=0)
    a = cap_alpha(low, high)
    if math.isinf(a):
        return np.zeros(k)
    i = np.arange(1, k + 1)
    return high * (1.0 - (1.0 - 1.0 / a) * (1.0 + 1.0 / (a * k)) ** (i - 1)) if k else np.zeros(0)


@accepts()
def cap_allowed(intensity: float, low: float, high: float, executors: int, minimum: int) -> int:
    """Executors CAP allows at ``intensity``: ``B + #{i : Phi_i >= c}`` with ``B = minimum`` always allowed and
    ``k = executors - minimum`` thresholds from :func:`cap_thresholds`."""
    executors = V.integer("executors", executors, minimum=1)
    minimum = V.integer("minimum", minimum, minimum=0, maximum=executors)
    phi = cap_thresholds(low, high, executors - minimum)
    return minimum + int(np.count_nonzero(phi >= intensity))


@accepts()
def pcaps_threshold(importance: float, gamma: float, low: float, high: float) -> float:
    """PCAPS's importance-weighted threshold (arXiv 2502.09717, Sec. 4):

    ``Psi_gamma(r) = c_gamma + (U - c_gamma) (e^(gamma r) - 1) / (e^gamma - 1)``, ``c_gamma = gamma L + (1-gamma) U``.

    ``gamma = 0`` gives ``U`` (never defer: carbon-agnostic); ``r = 1`` gives ``U`` (the most important stage always
    runs); lower importance and larger ``gamma`` lower the threshold towards ``L``.
    """
    r = V.in_range("importance", importance, 0.0, 1.0)
    g = V.in_range("gamma", gamma, 0.0, 1.0)
    if low > high:
        raise ValueError(f"low must be <= high, got low={low}, high={high}")
    base = g * low + (1.0 - g) * high
    if g == 0.0:
        return float(high)
    return float(base + (high - base) * math.expm1(g * r) / math.expm1(g))


@accepts()
class Scheduler:
    """Base class: ``choose(sim, candidates, t, free)`` returns ``(index into candidates, executors)`` or ``None``
    to defer. ``sim`` is the running :class:`workbench.carbon.cluster` state."""

    name = "base"
    carbon_aware = False

    def priorities(self, sim: Any, candidates: list[tuple[int, int]]) -> list[float]:
        """Priority of each candidate (higher runs first)."""
        raise NotImplementedError

    def blocked(self, sim: Any, t: float) -> bool:
        """True when no executor may start at ``t`` whatever is runnable (the cluster then skips the decision)."""
        return False

    def limit(self, sim: Any, j: int, s: int, free: int) -> int:
        """Executors to give stage ``s`` of job ``j``: free ones, up to its unlaunched tasks and the job's cap."""
        return min(free, int(sim.to_launch[j][s]), sim.job_cap - int(sim.job_exec[j]))

    def choose(self, sim: Any, candidates: list[tuple[int, int]], t: float, free: int) -> tuple[int, int] | None:
        """Pick the highest-priority candidate and its executor count."""
        p = self.priorities(sim, candidates)
        i = max(range(len(p)), key=p.__getitem__)
        j, s = candidates[i]
        return i, self.limit(sim, j, s, free)


@accepts()
class Fifo(Scheduler):
    """Earliest-arrived job first; within a job the lowest-numbered runnable stage."""

    name = "fifo"

    def priorities(self, sim, candidates):
        """``-(arrival, stage)`` lexicographically."""
        return [-float(sim.arrival[j]) * 1e4 - s for j, s in candidates]


@accepts()
class CriticalPath(Scheduler):
    """Longest remaining critical path first (a stand-in for Decima's learned policy)."""

    name = "cp"

    def priorities(self, sim, candidates):
        """Critical path of each candidate stage (executor-seconds to the job's end)."""
        cp = sim.cp_lists
        return [cp[j][s] for j, s in candidates]


@accepts()
class Fair(Scheduler):
    """Weighted fair sharing with weights ``remaining_work ** alpha``."""

    name = "fair"

    def __init__(self, alpha: float = 0.0):
        self.alpha = V.finite("alpha", alpha)

    def _shares(self, sim, jobs: list[int]) -> dict[int, float]:
        w = np.array([max(sim.remaining_work[j], 1e-9) ** self.alpha for j in jobs])
        return dict(zip(jobs, sim.executors * w / w.sum(), strict=True))

    def priorities(self, sim, candidates):
        """How far each candidate's job is below its share (share - executors), ties by critical path."""
        jobs = sorted({j for j, _ in candidates} | set(sim.active))
        share = self._shares(sim, jobs)
        return [share[j] - sim.job_exec[j] + 1e-9 * sim.cp_lists[j][s] for j, s in candidates]

    def choose(self, sim, candidates, t, free):
        """The job furthest below its share gets up to its share (at least one executor)."""
        p = self.priorities(sim, candidates)
        i = max(range(len(p)), key=p.__getitem__)
        j, s = candidates[i]
        room = max(1, math.ceil(p[i]))
        return i, min(self.limit(sim, j, s, free), room)


@accepts()
class Cap(Scheduler):
    """CAP: carbon-aware provisioning around any scheduler (k-search executor thresholds)."""

    name = "cap"
    carbon_aware = True

    def __init__(self, base: Scheduler | None = None, minimum: int | None = None):
        self.base = base or CriticalPath()
        self.minimum = None if minimum is None else V.integer("minimum", minimum, minimum=0)
        self._cache: dict[tuple, int] = {}
        self._last_now: tuple | None = None
        self._last_allowed = 0

    def allowed(self, sim, t: float) -> int:
        """Executors allowed to be busy at time ``t`` (:func:`cap_allowed` with this hour's ``c, L, U``)."""
        now = sim.carbon_now(t)
        if now is self._last_now:
            return self._last_allowed
        c, low, high = now
        got = self.allowed_at(c, low, high, sim.executors)
        self._last_now, self._last_allowed = now, got
        return got

    def allowed_at(self, c: float, low: float, high: float, executors: int) -> int:
        """Executors allowed to be busy at intensity ``c`` with forecast bounds ``low, high`` on a cluster of
        ``executors``: :func:`cap_allowed` with ``B`` this CAP's minimum (default a fifth of the cluster)."""
        key = (c, low, high, executors)
        got = self._cache.get(key)
        if got is None:
            b = executors // 5 if self.minimum is None else min(self.minimum, executors)
            got = self._cache[key] = cap_allowed(c, low, high, executors, b)
        return got

    def priorities(self, sim, candidates):
        """The wrapped scheduler's priorities."""
        return self.base.priorities(sim, candidates)

    def choose(self, sim, candidates, t, free):
        """The wrapped scheduler's choice, capped so that busy executors stay within the allowed number."""
        room = self.allowed(sim, t) - sim.busy
        if room <= 0:
            return None
        got = self.base.choose(sim, candidates, t, free)
        if got is None:
            return None
        return got[0], min(got[1], room)

    def blocked(self, sim, t: float) -> bool:
        """No executor may start while the busy ones fill the allowance."""
        return sim.busy >= self.allowed(sim, t)

    def keep_running(self, sim, t: float) -> bool:
        """An executor finishing a task continues its stage only while busy executors are within the allowance."""
        return sim.busy <= self.allowed(sim, t)


@accepts()
class Pcaps(Scheduler):
    """PCAPS: defer stages whose relative importance is too low for the current intensity (threshold ``Psi``)."""

    name = "pcaps"
    carbon_aware = True

    def __init__(self, gamma: float = 0.5, base: Scheduler | None = None):
        self.gamma = V.in_range("gamma", gamma, 0.0, 1.0)
        self.base = base or CriticalPath()

    def priorities(self, sim, candidates):
        """The wrapped scheduler's priorities."""
        return self.base.priorities(sim, candidates)

    def choose(self, sim, candidates, t, free):
        """Highest-priority candidate whose importance passes ``c <= Psi_gamma(r)``; ``None`` if none does."""
        p = self.base.priorities(sim, candidates)
        c, lo, hi = sim.carbon_now(t)
        front = [(j, s) for j in sim.active for s in sim.frontier[j]]
        top = max(max(p), max(self.base.priorities(sim, front)) if front else 0.0)
        g = self.gamma
        base = g * lo + (1.0 - g) * hi
        scale = (hi - base) / math.expm1(g) if g > 0 else 0.0
        eps = 1e-9 * max(hi, 1.0)
        best, best_p = -1, -math.inf
        for i, pi in enumerate(p):  # pcaps_threshold inlined: the highest-priority candidate that passes
            if pi <= best_p:
                continue
            r = min(max(pi / top, 0.0), 1.0) if top > 0 else 1.0
            psi = hi if g == 0.0 else base + scale * math.expm1(g * r)
            if c <= psi + eps:
                best, best_p = i, pi
        if best < 0:
            return None
        j, s = candidates[best]
        return best, self.base.limit(sim, j, s, free)


@accepts()
def make_scheduler(name: str, gamma: float = 0.5, alpha: float = 0.0, cap_minimum: int | None = None) -> Scheduler:
    """A scheduler by name (one of :data:`SCHEDULERS`); ``gamma`` for PCAPS, ``alpha`` for fair sharing,
    ``cap_minimum`` for CAP's always-allowed executors ``B`` (default: a fifth of the cluster).

    Examples
    --------
    >>> [type(make_scheduler(k)).__name__ for k in SCHEDULERS]
    ['Fifo', 'Fair', 'CriticalPath', 'CriticalPath', 'Cap', 'Cap', 'Pcaps']
    """
    V.one_of("scheduler", name, SCHEDULERS)
    if name == "fifo":
        return Fifo()
    if name == "fair":
        return Fair(alpha)
    if name in ("cp", "agnostic"):
        return CriticalPath()
    if name == "cap":
        return Cap(CriticalPath(), cap_minimum)
    if name == "cap-fifo":
        return Cap(Fifo(), cap_minimum)
    return Pcaps(gamma)
