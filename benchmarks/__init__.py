"""Speed and memory targets, measured against their targets by one command: ``make bench`` (``python -m benchmarks``).

Each ``benchmarks/bench_<topic>.py`` defines ``BENCHMARKS``, a list of :class:`Benchmark`. A benchmark's ``run``
returns the measured figure (seconds, bytes, or a rate) and ``target`` is the figure the issue asks for; ``higher``
says whether bigger is better (a rate) or worse (a time, a memory peak). Targets are never asserted in the test
suite: timings on a shared 2-core machine are noisy, and a missed target is a finding to report, not a flaky test.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Benchmark", "best_time", "peak_memory_bytes", "GiB", "MiB"]

MiB = 1024**2
GiB = 1024**3


@dataclass(frozen=True)
class Benchmark:
    """One target: ``run()`` returns the measured figure in ``unit``; compared with ``target``."""

    name: str
    target: float
    unit: str
    run: Callable[[], float]
    higher: bool = False  # True when bigger is better (throughput)

    def met(self, measured: float) -> bool:
        return measured >= self.target if self.higher else measured <= self.target


def best_time(fn: Callable[[], object], repeat: int = 3, warmup: int = 0) -> float:
    """Best wall-clock seconds of ``repeat`` calls of ``fn`` (after ``warmup`` untimed calls)."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def peak_memory_bytes(fn: Callable[[], object]) -> float:
    """Peak bytes allocated by Python and numpy while ``fn`` runs (tracemalloc; numpy reports its buffers to it)."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return float(peak)
