"""RLHFuse fused pipelines (issue 27): the four-term lower bound of an instance and the checker of the largest
published schedule (4,096 tasks) in milliseconds; greedy + simulated annealing of the largest published instance in
<= 10 s on one core (annealing with an 8 s budget, turned into an iteration count by timing the decoder); the
annealing of the largest instance at the full reproduction's move count (issue 21: ``make reproduce`` in minutes;
8,138 moves, each replaying only the decoding steps it can change) in <= 1.5 s. Needs ``rlhfuse-schedules`` on the
data search path.

Generation tail and checkpointing (issue 27, parts 2-3): one generation + inference stage of 512 samples on 8
instances (baseline and fused, outputs up to 8,192 tokens) and the checkpoint ETTR table (three methods, three job
sizes, each at its optimal interval) fast enough for a panel redraw: <= 0.2 s and <= 0.5 s."""

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


def _anneal_full_s() -> float:
    from workbench.reproductions.rlhfuse import anneal_iterations

    inst = _largest()
    n = anneal_iterations(inst, "full")
    fp.anneal(inst, seed=0, iterations=1)  # compile outside the clock
    return best_time(lambda: fp.anneal(inst, seed=0, iterations=n), repeat=1)


def _tail_ms() -> float:
    from workbench.serving import Deployment
    from workbench.training import generation_tail as gt

    dep = Deployment("Llama-3.1-8B", "H100-SXM")
    p, o = gt.sample_lengths("burstgpt", 512, sigma=1.2, max_tokens=8192, seed=0)
    return 1e3 * best_time(lambda: gt.generation_stage(dep, p, o, instances=8, threshold=0.02), repeat=5, warmup=1)


def _ettr_ms() -> float:
    from workbench.training import checkpointing as ck

    return 1e3 * best_time(lambda: ck.ettr_table(405e9, [1024, 4096, 16384]), repeat=3, warmup=1)


BENCHMARKS = [
    Benchmark("lower bound of one published instance", 1.0, "ms", _bound_ms),
    Benchmark("check the largest published schedule (4,096 tasks, parsed)", 10.0, "ms", _check_ms),
    Benchmark("read + check the largest published schedule", 50.0, "ms", _read_check_ms),
    Benchmark("greedy + annealing of the largest published instance (8 s budget)", 10.0, "s", _schedule_s),
    Benchmark(
        "annealing of the largest published instance at the full reproduction's move count", 1.5, "s", _anneal_full_s
    ),
    Benchmark("generation + inference stage, 512 samples on 8 instances (baseline + fused)", 200.0, "ms", _tail_ms),
    Benchmark("checkpoint ETTR table: 3 methods x 3 job sizes at their optimal intervals", 500.0, "ms", _ettr_ms),
]
