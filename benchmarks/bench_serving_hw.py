"""Serving on real hardware: one hour at 100 req/s on one replica (roofline costs, paged KV, vLLM scheduling), in
wall-clock and CPU seconds (wall-clock is pessimistic on a shared machine); the same hour with prefix sharing and swap
preemption; ten minutes on four replicas behind the least-outstanding balancer (replicas simulated together); Vidur's
19,000-request comparison point (its warm event loop needs ~18 s; the target is 100x faster); and a capacity search in
GPUs over TP in {1, 2, 4, 8} and replica counts."""

from __future__ import annotations

import functools
import gc
import time

import numpy as np

from workbench.serving import SLO, Deployment, Scheduler, serve
from workbench.serving.gpus import capacity_gpus
from workbench.workloads import servegen as sg

from . import Benchmark, best_time


def _workload(rate_rps: float, duration_s: float, source: str = "m-small"):
    pool = sg.load_pool(source).select(14 * 3600, duration_s)
    return sg.compose(
        pool,
        start_s=14 * 3600,
        duration_s=duration_s,
        rate_scale=rate_rps / float(pool.aggregate_rate().mean()),
        seed=0,
    )


def _wall_and_cpu(fn) -> tuple[float, float]:
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


@functools.cache
def _hour() -> tuple[float, float]:
    w = _workload(100.0, 3600.0)
    dep = Deployment("Llama-3.1-8B", "H100-SXM", tp=2)
    return _wall_and_cpu(lambda: serve(w, dep, Scheduler("vllm", max_num_batched_tokens=16384)))


def _hour_features() -> float:
    """The same hour with swap preemption and prefix sharing over synthetic Mooncake-like ``hash_ids`` (each
    request's first block drawn from 64 shared system prompts), CPU seconds."""
    w = _workload(100.0, 3600.0)
    rng = np.random.default_rng(0)
    blocks = (w["input_tokens"].to_numpy() + 511) // 512
    first = rng.integers(0, 64, len(w))
    w = w.assign(
        hash_ids=[
            [int(f), *range(1000 + 10_000 * i, 1000 + 10_000 * i + int(b) - 1)]
            for i, (f, b) in enumerate(zip(first, blocks, strict=True))
        ]
    )
    dep = Deployment("Llama-3.1-8B", "H100-SXM", tp=2)
    sch = Scheduler("vllm", max_num_batched_tokens=16384, preemption="swap")
    return _wall_and_cpu(lambda: serve(w, dep, sch, prefix_sharing=True))[1]


def _least_outstanding() -> float:
    w = _workload(100.0, 600.0)
    dep = Deployment("Llama-3.1-8B", "H100-SXM")
    return _wall_and_cpu(
        lambda: serve(
            w, dep, Scheduler("vllm", max_num_batched_tokens=16384), n_replicas=4, balancer="least_outstanding"
        )
    )[1]


@functools.cache
def _vidur_point() -> tuple[float, float]:
    w = _workload(100.0, 3600.0).iloc[:19_000]
    dep = Deployment("Llama-3.1-8B", "H100-SXM", tp=2)
    runs = [_wall_and_cpu(lambda: serve(w, dep, Scheduler("vllm", max_num_batched_tokens=16384))) for _ in range(3)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def _hour_profiled() -> float:
    """The same hour with Vidur's measured operator times (``costs="profiled"``: Llama-3.1-8B's layers are the
    profiled Meta-Llama-3-8B's, measured on A100), CPU seconds including loading the profile."""
    w = _workload(100.0, 3600.0)

    def run():
        dep = Deployment("Llama-3.1-8B", "A100-80GB", tp=2, costs="profiled")
        serve(w, dep, Scheduler("vllm", max_num_batched_tokens=16384))

    return _wall_and_cpu(run)[1]


def _capacity() -> float:
    w = _workload(40.0, 600.0, "m-large")
    return best_time(lambda: capacity_gpus(w, "Llama-3.1-8B", "H100-SXM", SLO(ttft_s=2.0, tbt_s=0.1)), repeat=1)


BENCHMARKS = [
    Benchmark(
        "serve 1 h at 100 req/s on one replica (360k M-small requests, Llama-3.1-8B TP2 H100), wall",
        3.0,
        "s",
        lambda: _hour()[0],
    ),
    Benchmark("the same hour, CPU", 3.0, "s", lambda: _hour()[1]),
    Benchmark("the same hour with prefix sharing and swap preemption, CPU", 3.0, "s", _hour_features),
    Benchmark("the same hour on A100 with Vidur's profiled operator costs, CPU", 3.0, "s", _hour_profiled),
    Benchmark("10 min at 100 req/s on 4 replicas, least_outstanding balancer, CPU", 1.0, "s", _least_outstanding),
    Benchmark("serve 19,000 requests (Vidur: ~18 s warm; 100x faster), wall", 0.18, "s", lambda: _vidur_point()[0]),
    Benchmark("the same 19,000 requests, CPU", 0.18, "s", lambda: _vidur_point()[1]),
    Benchmark("capacity in GPUs over TP {1,2,4,8} x replicas (24k M-large requests)", 30.0, "s", _capacity),
]
