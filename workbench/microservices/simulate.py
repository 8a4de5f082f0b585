"""Open-loop load on a microservice call graph under an overload controller: :func:`simulate` and its result.

Load (:class:`Load`): Poisson arrivals at ``base_rps``, ``spike_rps`` during the spike ``[spike_start_s,
spike_start_s + spike_len_s)`` and ``base_rps`` again after it (or ``spike_rps`` to the end with ``step=True``).
Each request draws its type from the graph's mix and an importance uniform on [0, 1) (DAGOR's priority, Rajomon's
tokens / ``token_max``). The compiled engine (:mod:`workbench.microservices._engine`) runs the call trees on the
services' workers. A request is **good** if it completes within the graph's SLO; **wasted work** is the service
time spent on requests that were dropped somewhere (their upstream and parallel calls did work for nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._contracts import Real, accepts, output
from .._rng import Seed, generator, int31_seed, keyed_int
from .._validate import nonnegative, positive
from . import _engine
from .controllers import UPDATE_S, Controller, make_controller
from .graphs import CallGraph, flatten

__all__ = ["Load", "SimResult", "arrivals", "simulate", "compare_controllers", "STATUS"]

STATUS = ("completed", "client-limited", "dropped", "overflow", "unfinished")
QUEUE_CAP = 1 << 16


@accepts(base_rps=Real(ge=0.0), spike_rps=Real(ge=0.0))  # no base load (or no spike) is a valid load
@dataclass(frozen=True)
class Load:
    """Open-loop load: ``base_rps``, a spike to ``spike_rps`` at ``spike_start_s`` for ``spike_len_s`` (to the end
    if ``step``), over ``duration_s`` seconds."""

    base_rps: float
    spike_rps: float
    duration_s: float
    spike_start_s: float = 0.0
    spike_len_s: float = np.inf
    step: bool = False

    def __post_init__(self) -> None:
        nonnegative("base_rps", self.base_rps)
        nonnegative("spike_rps", self.spike_rps)
        positive("duration_s", self.duration_s)
        nonnegative("spike_start_s", self.spike_start_s)
        positive("spike_len_s", self.spike_len_s, allow_inf=True)
        if self.spike_start_s >= self.duration_s:
            raise ValueError(
                f"spike_start_s = {self.spike_start_s:g} must be before duration_s = {self.duration_s:g}: lower "
                "spike_start_s or raise duration_s"
            )

    @property
    def spike_end_s(self) -> float:
        """End of the spike (the run's end for a step)."""
        return self.duration_s if self.step else min(self.spike_start_s + self.spike_len_s, self.duration_s)

    @accepts()
    def segments(self) -> list[tuple[float, float, float]]:
        """(start, end, rate) of each constant-rate piece."""
        a, b, d = self.spike_start_s, self.spike_end_s, self.duration_s
        segs = [(0.0, a, self.base_rps), (a, b, self.spike_rps), (b, d, self.base_rps)]
        return [s for s in segs if s[1] > s[0]]

    @accepts()
    def rate_at(self, t: np.ndarray) -> np.ndarray:
        """Offered rate (requests/s) at times ``t``."""
        t = np.asarray(t, float)
        return np.where((t >= self.spike_start_s) & (t < self.spike_end_s), self.spike_rps, self.base_rps)


@accepts()
def arrivals(graph: CallGraph, load: Load, seed: Seed = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Arrival times (s, sorted), request types and importances of one run.

    Examples
    --------
    >>> from workbench.microservices import chain
    >>> t, k, w = arrivals(chain(2), Load(1000.0, 1000.0, 1.0), seed=1)
    >>> bool(900 < len(t) < 1100 and (k == 0).all() and 0 <= w.min() and w.max() < 1)
    True
    """
    rng = generator(seed)
    parts = []
    for a, b, rate in load.segments():
        n = int(rng.poisson(rate * (b - a)))
        parts.append(np.sort(rng.uniform(a, b, n)))
    t = np.concatenate(parts) if parts else np.zeros(0)
    f = flatten(graph)
    types = rng.choice(len(f.type_weight), size=t.size, p=f.type_weight).astype(np.int64)
    return t, types, rng.random(t.size)


@output
@dataclass(frozen=True, eq=False)
class SimResult:
    """One run: per-request arrays, per-service totals and the controllers' state per update tick."""

    graph: CallGraph
    controller: Controller
    load: Load
    arrival_s: np.ndarray
    request_type: np.ndarray
    status: np.ndarray  #: index into :data:`STATUS`
    latency_s: np.ndarray  #: completion (or drop) time - arrival
    work_s: np.ndarray  #: service time spent on the request over every service
    drop_depth: np.ndarray  #: hops from the entry of the first drop (-1 if none)
    drop_service: np.ndarray  #: service index of the first drop (-1 if none)
    service_busy_s: np.ndarray
    service_calls: np.ndarray
    service_drops: np.ndarray
    control: np.ndarray  #: (ticks, services): DAGOR level, Breakwater credits or Rajomon own price
    queue_len: np.ndarray  #: (ticks, services): queued calls at each tick

    @property
    def good(self) -> np.ndarray:
        """Completed within the SLO."""
        return (self.status == 0) & (self.latency_s <= self.graph.slo_ms / 1e3)

    @accepts()
    def summary(self, start_s: float | None = None, end_s: float | None = None) -> dict[str, float]:
        """Metrics over the requests arriving in ``[start_s, end_s)`` (default: the spike).

        goodput_rps, throughput_rps (completed), p50/p95/p99_ms (completed requests), slo_violation (completed
        over the SLO / completed), drop_frac (dropped at a service or overflow / offered), client_limited_frac,
        wasted_work_frac (service time on dropped requests / all service time), offered_rps.
        """
        a = self.load.spike_start_s if start_s is None else start_s
        b = self.load.spike_end_s if end_s is None else end_s
        m = (self.arrival_s >= a) & (self.arrival_s < b)
        span = max(b - a, 1e-12)
        done = m & (self.status == 0)
        lat = self.latency_s[done] * 1e3
        q = np.percentile(lat, [50, 95, 99]) if lat.size else np.full(3, np.nan)
        work = self.work_s[m].sum()
        n = max(int(m.sum()), 1)
        dropped = m & ((self.status == 2) | (self.status == 3))
        return {
            "offered_rps": float(m.sum() / span),
            "goodput_rps": float((m & self.good).sum() / span),
            "throughput_rps": float(done.sum() / span),
            "p50_ms": float(q[0]),
            "p95_ms": float(q[1]),
            "p99_ms": float(q[2]),
            "slo_violation": float((lat > self.graph.slo_ms).mean()) if lat.size else np.nan,
            "drop_frac": float(dropped.sum() / n),
            "client_limited_frac": float((m & (self.status == 1)).sum() / n),
            "wasted_work_frac": float(self.work_s[dropped].sum() / work) if work > 0 else 0.0,
            "mean_drop_depth": float(self.drop_depth[dropped].mean()) if dropped.any() else 0.0,
        }

    @accepts()
    def timeseries(self, bin_s: float = 0.25) -> pd.DataFrame:
        """Tidy per-bin series by arrival time: t_s (bin start), offered_rps, goodput_rps, drops_rps (dropped
        or held back at the client), p95_ms (completed requests of the bin)."""
        bin_s = positive("bin_s", bin_s)
        nb = int(np.ceil(self.load.duration_s / bin_s))
        b = np.minimum((self.arrival_s / bin_s).astype(np.int64), nb - 1)
        cnt = np.bincount(b, minlength=nb)
        good = np.bincount(b, weights=self.good, minlength=nb)
        drops = np.bincount(b, weights=np.isin(self.status, (1, 2, 3)), minlength=nb)
        done = self.status == 0
        order = np.lexsort((self.latency_s[done], b[done]))
        lat, bd = self.latency_s[done][order] * 1e3, b[done][order]
        starts = np.searchsorted(bd, np.arange(nb + 1))
        p95 = np.full(nb, np.nan)
        for i in np.nonzero(np.diff(starts))[0]:  # one percentile per bin
            p95[i] = np.percentile(lat[starts[i] : starts[i + 1]], 95)
        return pd.DataFrame(
            {
                "t_s": np.arange(nb) * bin_s,
                "offered_rps": cnt / bin_s,
                "goodput_rps": good / bin_s,
                "drops_rps": drops / bin_s,
                "p95_ms": p95,
            }
        )


@accepts()
def simulate(
    graph: CallGraph,
    load: Load,
    controller: Controller | str = "rajomon",
    *,
    drain_s: float = 1.0,
    seed: Seed = 0,
) -> SimResult:
    """Run ``load`` on ``graph`` under ``controller`` (a :class:`Controller` or its name with default parameters).

    The run continues ``drain_s`` after the last arrival; requests not finished by then are "unfinished".

    Examples
    --------
    >>> from workbench.microservices import hotel_reservation
    >>> r = simulate(hotel_reservation(), Load(4000.0, 12000.0, 2.0, 0.5, 1.0), "rajomon", seed=1)
    >>> s = r.summary()
    >>> s["goodput_rps"] > 3000, s["p99_ms"] < 2 * r.graph.slo_ms, s["wasted_work_frac"] < 0.1
    (True, True, True)
    """
    if isinstance(controller, str):
        controller = make_controller(controller)
    nonnegative("drain_s", drain_s)
    f = flatten(graph)
    t, k, w = arrivals(graph, load, seed)
    eng_seed = int31_seed(keyed_int(seed, "engine"))  # the engine's own stream, keyed off the arrivals' seed
    status, done, work, drop_node, busy, calls, drops, ctl, qlen = _engine.run(
        t,
        k,
        w,
        f.node_service,
        f.node_parent,
        f.node_nstages,
        f.node_stage_off,
        f.stage_start,
        f.child_node,
        f.node_child_off,
        f.type_root,
        f.svc_workers,
        f.svc_mean_s,
        f.svc_dist,
        f.max_nodes,
        controller.kind,
        controller.vector(),
        UPDATE_S,
        load.duration_s + drain_s,
        QUEUE_CAP,
        eng_seed,
    )
    has = drop_node >= 0
    return SimResult(
        graph=graph,
        controller=controller,
        load=load,
        arrival_s=t,
        request_type=k,
        status=status,
        latency_s=done - t,
        work_s=work,
        drop_depth=np.where(has, f.node_depth[np.maximum(drop_node, 0)], -1),
        drop_service=np.where(has, f.node_service[np.maximum(drop_node, 0)], -1),
        service_busy_s=busy,
        service_calls=calls,
        service_drops=drops,
        control=ctl,
        queue_len=qlen,
    )


@accepts()
def compare_controllers(
    graph: CallGraph,
    load: Load,
    controllers: tuple[str, ...] = ("none", "dagor", "breakwater", "rajomon"),
    *,
    threshold_ms: float = 2.0,
    seed: int = 0,
) -> dict[str, SimResult]:
    """One run per controller on the same arrivals (common random numbers), keyed by controller name.

    Examples
    --------
    >>> from workbench.microservices import chain
    >>> runs = compare_controllers(chain(2), Load(5000.0, 5000.0, 0.5), ("none", "rajomon"), seed=1)
    >>> sorted(runs)
    ['none', 'rajomon']
    """
    return {c: simulate(graph, load, make_controller(c, threshold_ms), seed=seed) for c in controllers}
