"""Fault-localization speed (issue 13): signals for 10,000 ranks x 1,000 iterations <= 5 s, each detector over them
<= 5 s, and a 100-scenario evaluation (7 fault kinds x 256/1,024 ranks x 7 seeds + 2 healthy jobs, 300 iterations,
all four detectors) <= 60 s."""

from __future__ import annotations

import functools

from benchmarks import Benchmark, best_time, peak_memory_bytes
from workbench.training import diagnosis as dg

JOB = dg.JobSpec(ranks=10_000, ranks_per_machine=8)
FAULT = dg.Fault("nic_degraded", 4_321, onset_iteration=300, severity=2.0)


def _generate():
    return dg.simulate(JOB, 1000, FAULT, seed=0)


@functools.cache
def _signals():
    return _generate()


def _detector(name: str) -> Benchmark:
    return Benchmark(
        f"{name} detector, 10,000 ranks x 1,000 iterations",
        5.0,
        "s",
        lambda: best_time(lambda: dg.DETECTORS[name](_signals()), repeat=2),
    )


def _sweep():
    grid = dg.scenario_grid(
        tuple(dg.FAULT_KINDS), ranks=(256, 1024), seeds=7, healthy=1, iterations=300, onset_iteration=100
    )
    assert len(grid) == 100
    dg.evaluate(grid)


BENCHMARKS = [
    Benchmark(
        "signals, 10,000 ranks x 1,000 iterations (+ 1,250 machines x 8 metrics at 1 s)",
        5.0,
        "s",
        lambda: best_time(_generate, repeat=2),
    ),
    Benchmark(
        "signals peak memory, 10,000 ranks x 1,000 iterations",
        1.5 * 1024**3,
        "bytes",
        lambda: peak_memory_bytes(_generate),
    ),
    *[_detector(name) for name in dg.DETECTORS],
    Benchmark("100-scenario evaluation, 4 detectors", 60.0, "s", lambda: best_time(_sweep, repeat=1)),
]
