"""Serving on real hardware: one hour at 100 req/s on one replica (roofline costs, paged KV, vLLM scheduling),
Vidur's 19,000-request comparison point (its warm event loop needs ~18 s; the target is 100x faster), and a capacity
search in GPUs over TP in {1, 2, 4, 8} and replica counts."""

from __future__ import annotations

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


def _serve_hour() -> float:
    w = _workload(100.0, 3600.0)
    dep = Deployment("Llama-3.1-8B", "H100-SXM", tp=2)
    return best_time(lambda: serve(w, dep, Scheduler("vllm", max_num_batched_tokens=16384)), repeat=1)


def _vidur_point() -> float:
    w = _workload(100.0, 3600.0).iloc[:19_000]
    dep = Deployment("Llama-3.1-8B", "H100-SXM", tp=2)
    return best_time(lambda: serve(w, dep, Scheduler("vllm", max_num_batched_tokens=16384)), repeat=3)


def _capacity() -> float:
    w = _workload(40.0, 600.0, "m-large")
    return best_time(lambda: capacity_gpus(w, "Llama-3.1-8B", "H100-SXM", SLO(ttft_s=2.0, tbt_s=0.1)), repeat=1)


BENCHMARKS = [
    Benchmark(
        "serve 1 h at 100 req/s on one replica (360k M-small requests, Llama-3.1-8B TP2 H100)", 3.0, "s", _serve_hour
    ),
    Benchmark("serve 19,000 requests (Vidur: ~18 s warm; 100x faster)", 0.18, "s", _vidur_point),
    Benchmark("capacity in GPUs over TP {1,2,4,8} x replicas (24k M-large requests)", 30.0, "s", _capacity),
]
