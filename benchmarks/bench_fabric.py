"""Fabric targets from issue 3: link loads at 1,024 hosts, halving-doubling at 32,768 GPUs, exact E[max load]; from
issue 9: E[max load] at a million flows on a million paths (the normal form) stays interactive; the planned
routing's greedy pass over unequal flows is compiled (it was a Python loop, milliseconds per flow)."""

from __future__ import annotations

import functools
import time

import numpy as np

from benchmarks import Benchmark, GiB, best_time, peak_memory_bytes
from workbench import fabric as fb


@functools.cache
def _a2a():
    # 1,024 hosts: 64 leaves x 16 hosts, 16 spines; direct all-to-all = 1,047,552 flows
    return fb.leaf_spine(64, 16, 16), fb.collective_steps("all_to_all", 1024, 2**30)[0]


@functools.cache
def _hd():
    # 32,768 GPUs: 512 leaves x 64 hosts, 64 spines; 30 halving-doubling steps
    return fb.leaf_spine(512, 64, 64), fb.collective_steps("halving_doubling", 32768, 2**30)


@functools.cache
def _planned_unequal():
    # 1,024 hosts of a k=16 fat-tree, 8 flows each of random sizes: the planned routing's greedy (sequential) pass
    ft = fb.fat_tree(16)
    rng = np.random.default_rng(0)
    src = np.repeat(np.arange(ft.n_hosts), 8)
    dst = fb.random_destinations(src, ft.n_hosts, seed=rng)
    return ft, fb.Step(src, dst, rng.integers(1, 2**20, size=src.size).astype(float))


def _a2a_loads(routing):
    topo, step = _a2a()
    return lambda: fb.link_loads(topo, step, routing, seed=0)


def _hd_all_steps(routing):
    def run():
        topo, steps = _hd()
        return [fb.max_congestion(topo, fb.link_loads(topo, st, routing, seed=i)) for i, st in enumerate(steps)]

    return run


_EMAX_GRID = [(1024, n) for n in (1, 2, 3, 5, 16, 64, 256, 1000, 1024)] + [(m, 1024) for m in (1, 10, 100, 500)]


def _emax_worst() -> float:
    worst = 0.0
    for m, n in _EMAX_GRID:
        t0 = time.perf_counter()
        fb.expected_max_load(m, n)
        worst = max(worst, time.perf_counter() - t0)
    return worst


BENCHMARKS = [
    *[
        Benchmark(
            f"all-to-all link loads, 1,024 hosts (1.05M flows), {s}: time",
            3.0,
            "s",
            lambda s=s: best_time(_a2a_loads(s), repeat=2, warmup=1),
        )
        for s in ("ecmp", "mp-8", "minimal")
    ],
    *[
        Benchmark(
            f"all-to-all link loads, 1,024 hosts, {s}: peak memory",
            2 * GiB,
            "bytes",
            lambda s=s: peak_memory_bytes(_a2a_loads(s)),
        )
        for s in ("ecmp", "mp-8", "minimal")
    ],
    *[
        Benchmark(
            f"all 30 halving-doubling steps on 32,768 GPUs, {s}: time",
            3.0,
            "s",
            lambda s=s: best_time(_hd_all_steps(s), repeat=2, warmup=1),
        )
        for s in ("ecmp", "minimal")
    ],
    Benchmark(
        "planned routing of 8,192 unequal flows on a 1,024-host fat-tree (greedy): time",
        1.0,
        "s",
        lambda: best_time(lambda: fb.link_loads(*_planned_unequal(), "planned"), repeat=2, warmup=1),
    ),
    Benchmark("exact E[max load], worst of m, n <= 1,024 grid: time", 1.0, "s", _emax_worst),
    Benchmark(
        "E[max load], m = n = 10**6 (normal form): time",
        0.1,
        "s",
        lambda: best_time(lambda: fb.expected_max_load(10**6, 10**6), repeat=3),
    ),
    Benchmark(
        "E[max load], m = n = 10**4 (largest exact by default): time",
        3.0,
        "s",
        lambda: best_time(lambda: fb.expected_max_load(10**4, 10**4), repeat=1),
    ),
]
