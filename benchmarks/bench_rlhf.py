"""RLHFuse fused pipelines (issue 27): the four-term lower bound of an instance and the checker of the largest
published schedule (4,096 tasks) in milliseconds; greedy + simulated annealing of the largest published instance in
<= 10 s on one core (annealing with an 8 s budget, turned into an iteration count by timing the decoder). Needs
``rlhfuse-schedules`` on the data search path."""

from __future__ import annotations

import time

from benchmarks import Benchmark, best_time
from workbench.training import fused_pipeline as fp


def _largest() -> fp.Instance:
    return max(fp.load_instances(), key=lambda i: i.n_tasks)


def _bound_ms() -> float:
    insts = fp.load_instances()
    return 1e3 * best_time(lambda: [fp.lower_bound(i) for i in insts], repeat=5) / len(insts)


def _check_ms() -> float:
    inst = _largest()
    s = fp.published_schedule(inst.exp)
    return 1e3 * best_time(lambda: fp.check_schedule(inst, s), repeat=5, warmup=1)


def _read_check_ms() -> float:
    inst = _largest()
    return 1e3 * best_time(lambda: fp.check_schedule(inst, fp.published_schedule(inst.exp)), repeat=3, warmup=1)


def _schedule_s() -> float:
    inst = _largest()
    fp.anneal(inst, seed=0, iterations=1)  # compile outside the clock (numba caches on disk)
    t = time.perf_counter()
    fp.greedy(inst)
    fp.anneal(inst, seed=0, time_budget_s=8.0)
    return time.perf_counter() - t


BENCHMARKS = [
    Benchmark("lower bound of one published instance", 1.0, "ms", _bound_ms),
    Benchmark("check the largest published schedule (4,096 tasks, parsed)", 10.0, "ms", _check_ms),
    Benchmark("read + check the largest published schedule", 50.0, "ms", _read_check_ms),
    Benchmark("greedy + annealing of the largest published instance (8 s budget)", 10.0, "s", _schedule_s),
]
