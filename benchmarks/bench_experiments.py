"""Sweep layer (issue 11): parallel speed-up, per-point overhead, cached re-runs, and the PRED FCT-vs-load sweep.

Every figure runs on a LocalCluster of 2 worker processes (one thread each) with a fresh temporary
``$WORKBENCH_CACHE``. The CPU-bound sweep is 16 points of the real packet-level PRED model on a 32-host leaf-spine
(~1 s of CPU each); the overhead sweep is a registered no-op. The 64-core projection places the measured per-point
compute times (from the Dask task stream) on 64 workers, longest first: the makespan is at least the longest point.
The per-point times are wall-clock times on the workers: on a shared machine every wall-clock figure here (speed-up,
sweep wall time and the projection) is inflated by other processes' load. The speed-up is therefore also given from
CPU time (serial CPU / the busiest worker's CPU in the parallel run), which that load does not change, with the load
average at the time of the measurement.
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


def _worker_cpu_s(client) -> dict[str, float]:
    """CPU seconds each worker process has used so far (all its threads)."""
    return client.run(time.process_time)


@functools.cache
def speedup_figures() -> dict[str, float]:
    """The 16-point CPU-bound sweep serially and on 2 workers: wall and CPU seconds, and the load average.

    ``cpu_speedup`` is serial CPU / the busiest worker's CPU during the parallel run: the speed-up the 2 workers give
    when each has a core of its own, which other processes' load does not change (wall-clock speed-up does).
    """
    client = _client()
    run = functools.partial(ex.sweep, "pred-fct-vs-load", CPU_GRID, cache=False, progress=False)
    # warm-up: one point in this process and one on each worker, so neither timing pays first-call imports
    warm = {**CPU_GRID, "load": 0.3, "marking": "static"}
    ex.sweep("pred-fct-vs-load", warm, client=False, cache=False, progress=False)
    ex.sweep("pred-fct-vs-load", warm, client=client, cache=False, progress=False)
    load_before = os.getloadavg()[0]
    cpu0, t0 = time.process_time(), time.perf_counter()
    run(client=False)
    serial_cpu, serial_wall = time.process_time() - cpu0, time.perf_counter() - t0
    before = _worker_cpu_s(client)
    t0 = time.perf_counter()
    run(client=client)
    parallel_wall = time.perf_counter() - t0
    after = _worker_cpu_s(client)
    worker_cpu = sorted((after[w] - before[w] for w in after), reverse=True)
    figures = {
        "serial_wall_s": serial_wall,
        "serial_cpu_s": serial_cpu,
        "parallel_wall_s": parallel_wall,
        "worker_cpu_s": worker_cpu,
        "wall_speedup": serial_wall / parallel_wall,
        "cpu_speedup": serial_cpu / worker_cpu[0],
        "load_average": max(load_before, os.getloadavg()[0]),
    }
    print(
        f"  speed-up: serial {serial_wall:.1f} s wall / {serial_cpu:.1f} s CPU ({serial_cpu / 16:.2f} s CPU per "
        f"point); 2 workers {parallel_wall:.1f} s wall, worker CPU "
        f"{' + '.join(f'{c:.1f}' for c in worker_cpu)} s; wall speed-up {figures['wall_speedup']:.2f}x, CPU "
        f"speed-up {figures['cpu_speedup']:.2f}x; 1-min load average {figures['load_average']:.1f} on "
        f"{os.cpu_count()} cores (wall speed-up is only meaningful when the load is below the core count)",
        file=sys.stderr,
    )
    return figures


def overhead_ms() -> float:
    client = _client()
    with _temp_cache():
        before, cpu0 = _worker_cpu_s(client), time.process_time()
        wall = _wall(lambda: ex.sweep(noop, {"i": range(2000)}, client=client, progress=False))
        cpu, after = time.process_time() - cpu0, _worker_cpu_s(client)
    workers = sum(after[w] - before[w] for w in after)
    print(
        f"  overhead: {1e3 * wall / 2000:.2f} ms wall per point; CPU per point {1e3 * cpu / 2000:.2f} ms in this "
        f"process + {1e3 * workers / 2000:.2f} ms on the workers; 1-min load average {os.getloadavg()[0]:.1f}",
        file=sys.stderr,
    )
    return 1e3 * wall / 2000


def cached_rerun_s() -> float:
    with _temp_cache():
        ex.sweep(noop, {"i": range(1000)}, client=False, progress=False)
        cpu0 = time.process_time()
        best = best_time(lambda: ex.sweep(noop, {"i": range(1000)}, progress=False), repeat=3)
        cpu = (time.process_time() - cpu0) / 3
    print(
        f"  cached re-run: best {best:.3f} s wall, {cpu:.3f} s CPU on average; 1-min load average "
        f"{os.getloadavg()[0]:.1f}",
        file=sys.stderr,
    )
    return best


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
    Benchmark(
        "speed-up on 2 workers, 16 x ~1 s PRED points (32-host leaf-spine), wall clock",
        1.8,
        "x",
        lambda: speedup_figures()["wall_speedup"],
        higher=True,
    ),
    Benchmark(
        "the same speed-up from CPU time (serial CPU / busiest worker's CPU; robust to other processes' load)",
        1.8,
        "x",
        lambda: speedup_figures()["cpu_speedup"],
        higher=True,
    ),
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
