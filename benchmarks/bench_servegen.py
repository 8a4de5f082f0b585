"""ServeGen targets: load the m-large pool (162 clients) cold and from the cache; compose one hour at 100 req/s
(about 360,000 requests with lengths) for every released model."""

from __future__ import annotations

from workbench.workloads import servegen as sg
from workbench.workloads.servegen import load as sg_load

from . import Benchmark, best_time


def _load_cold() -> float:
    directory = sg_load.raw_model_dir("m-large")
    if directory is None:
        raise RuntimeError("the ServeGen raw data is not on the data search path")
    return best_time(lambda: sg_load._load_raw("m-large", directory, cache=False), repeat=1)


def _load_cached() -> float:
    directory = sg_load.raw_model_dir("m-large")
    sg_load._load_raw("m-large", directory, cache=True)  # make sure the cache exists
    return best_time(lambda: sg_load._load_raw("m-large", directory, cache=True), repeat=3)


def _compose(model: str):
    def run() -> float:
        pool = sg.load_pool(model)
        start = 12 * 3600.0
        sg.compose(pool, start_s=start, duration_s=3600, rate_rps=100.0, seed=0)  # warm
        return best_time(lambda: sg.compose(pool, start_s=start, duration_s=3600, rate_rps=100.0, seed=1), repeat=3)

    return run


BENCHMARKS = [
    Benchmark("load m-large pool, cold (parse 324 files)", 10.0, "s", _load_cold),
    Benchmark("load m-large pool, from the npz cache", 1.0, "s", _load_cached),
    *[Benchmark(f"compose 1 h at 100 req/s, {m}", 0.2, "s", _compose(m)) for m in sg.MODELS],
]
