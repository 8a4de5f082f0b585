"""Serving targets: one capacity-search point (one model-hour, both seeds) and one hour of serving at 50 req/s; the
same capacity point within issue 21's budget (``make reproduce`` in minutes: ServeGen's use case runs 256 such
searches per seed at full scale), which the compiled event loop of the simulator meets."""

from __future__ import annotations

from workbench.serving import SLO, ServerConfig, capacity_search, serve
from workbench.workloads import servegen as sg

from . import Benchmark, best_time


def _capacity_point() -> float:
    pool = sg.load_pool("m-large").select(14 * 3600, 1800)
    workloads = [sg.compose(pool, mean_rate_rps=4.0, seed=s) for s in range(2)]
    search = lambda: capacity_search(workloads, ServerConfig(), SLO(ttft_s=2.0), duration_s=1800)  # noqa: E731
    search()  # the engine's loop compiled (or read from numba's cache): a warm process, as the target states
    return best_time(search, repeat=1)


def _serve_hour() -> float:
    w = sg.compose(sg.load_pool("m-large"), start_s=14 * 3600, duration_s=3600, rate_rps=50.0, seed=0)
    serve(w, ServerConfig(), n_replicas=12)  # warm, as above
    return best_time(lambda: serve(w, ServerConfig(), n_replicas=12), repeat=1)


BENCHMARKS = [
    Benchmark("capacity search, one point (m-large 30 min, 2 seeds)", 0.5, "s", _capacity_point),
    Benchmark("simulate 1 h of serving at 50 req/s (180k requests, 12 replicas)", 30.0, "s", _serve_hour),
]
