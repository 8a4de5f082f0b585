"""Sweep layer (issue 11): parallel speed-up, per-point overhead, cached re-runs, and the PRED FCT-vs-load sweep.

Every figure runs on a LocalCluster of 2 worker processes (one thread each) with a fresh temporary
``$WORKBENCH_CACHE``. The CPU-bound sweep is 16 points of the real packet-level PRED model on a 32-host leaf-spine
(~1 s of CPU each); the overhead sweep is a registered no-op. The 64-core projection places the measured per-point
compute times (from the Dask task stream) on 64 workers, longest first: the makespan is at least the longest point.
The per-point times are wall-clock times on the workers: on a shared machine every figure here (speed-up, sweep wall
time and the projection) is inflated by other processes' load, and only a quiet machine gives the model's own cost.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import heapq
import os
import sys
import tempfile
import time

import cloudpickle

from benchmarks import Benchmark, best_time
from workbench import experiments as ex

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import the benchmarks package

CPU_GRID = {
    "load": [0.3, 0.5, 0.7, 0.9],
    "marking": ["static", "pred"],
    "routing": ["ecmp", "spray"],
    "leaves": 4,
    "spines": 2,
    "hosts_per_leaf": 8,
    "duration_s": 0.045,
}
PRED_GRID = {"load": [0.3, 0.5, 0.7, 0.9], "marking": ["static", "pred"], "routing": ["ecmp", "spray"]}
PRED_SEEDS = 3


@ex.experiment("bench-noop", version="1", params=[ex.Param("i", 0, "", low=0, doc="point index")])
def noop(*, i, seed):
    """Returns its index: the sweep layer's own cost per point."""
    return {"value": i}


@contextlib.contextmanager
def _temp_cache():
    old = os.environ.get("WORKBENCH_CACHE")
    with tempfile.TemporaryDirectory(prefix="wb-bench-") as d:
        os.environ["WORKBENCH_CACHE"] = d
        try:
            yield
        finally:
            if old is None:
                del os.environ["WORKBENCH_CACHE"]
            else:
                os.environ["WORKBENCH_CACHE"] = old


@functools.cache
def _client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster, set_as_default=False)
    atexit.register(cluster.close)
    atexit.register(client.close)
    ex.sweep(noop, {"i": [0, 1, 2, 3]}, client=client, cache=False, progress=False)  # workers import the package
    return client


def _wall(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def speedup() -> float:
    client = _client()
    run = functools.partial(ex.sweep, "pred-fct-vs-load", CPU_GRID, cache=False, progress=False)
    serial = _wall(lambda: run(client=False))
    parallel = _wall(lambda: run(client=client))
    return serial / parallel


def overhead_ms() -> float:
    client = _client()
    with _temp_cache():
        return 1e3 * _wall(lambda: ex.sweep(noop, {"i": range(2000)}, client=client, progress=False)) / 2000


def cached_rerun_s() -> float:
    with _temp_cache():
        ex.sweep(noop, {"i": range(1000)}, client=False, progress=False)
        return best_time(lambda: ex.sweep(noop, {"i": range(1000)}, progress=False), repeat=3)


@functools.cache
def pred_sweep() -> tuple[float, list[float]]:
    """Wall time of the 48-point PRED sweep on 2 workers and each point's compute time (seconds)."""
    from distributed import get_task_stream

    client = _client()
    with _temp_cache(), get_task_stream(client=client) as stream:
        wall = _wall(lambda: ex.sweep("pred-fct-vs-load", PRED_GRID, seeds=PRED_SEEDS, client=client, progress=False))
    times = [s["stop"] - s["start"] for task in stream.data for s in task["startstops"] if s["action"] == "compute"]
    return wall, times


def projected_s(times: list[float], workers: int) -> float:
    """Makespan of ``times`` on ``workers`` slots, longest first (greedy LPT)."""
    slots = [0.0] * workers
    for t in sorted(times, reverse=True):
        heapq.heapreplace(slots, slots[0] + t)
    return max(slots)


def _report_pred(figure: str) -> float:
    wall, times = pred_sweep()
    print(
        f"  PRED sweep: {len(times)} points, compute {sum(times):.0f} s in all, {min(times):.1f}-{max(times):.1f} s "
        f"per point; wall {wall:.0f} s on 2 workers; projected {projected_s(times, 64):.1f} s on 64 cores",
        file=sys.stderr,
    )
    return wall if figure == "wall" else projected_s(times, 64)


BENCHMARKS = [
    Benchmark("speed-up on 2 workers, 16 x ~1 s PRED points (32-host leaf-spine)", 1.8, "x", speedup, higher=True),
    Benchmark("overhead per point, 2,000 no-op points on 2 workers (cache on)", 10.0, "ms", overhead_ms),
    Benchmark("re-run of a 1,000-point cached sweep", 2.0, "s", cached_rerun_s),
    Benchmark(
        "PRED FCT-vs-load, 4 loads x 2 markings x 2 routings x 3 seeds, 128 hosts, 2 workers (report)",
        float("inf"),
        "s",
        lambda: _report_pred("wall"),
    ),
    Benchmark(
        "the same sweep projected on 64 cores from its per-point times (report)",
        float("inf"),
        "s",
        lambda: _report_pred("projected"),
    ),
]
