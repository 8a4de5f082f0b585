"""Fault-localization speed (issue 13): signals for 10,000 ranks x 1,000 iterations <= 5 s, each detector over them
<= 5 s, and a 100-scenario evaluation (7 fault kinds x 256/1,024 ranks x 7 seeds + 2 healthy jobs, 300 iterations,
all four detectors) <= 60 s.

Issue 21 point 6 (``make reproduce`` on a fresh clone in <= 4 minutes on 2 cores, ~480 CPU-s for every paper): the
fault-localization quality sweep the C4D figure, Minder and PerfTracker share (computed once, 48 jobs up to 16,384
ranks, 5 detectors) <= 30 s (1/16 of the budget), and Holmes' claims at full scale <= 10 s."""

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


def _quality_sweep():
    from workbench.reproductions._diagnosis import quality_grid

    dg.evaluate(quality_grid("full"))


def _holmes_claims():
    from workbench.reproductions import holmes

    for f in (holmes.iteration_accuracy, holmes.irregular_results, holmes.cost_comparison):
        f.cache_clear()
        f("full")


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
    Benchmark(
        "reproduce: fault-localization quality sweep, full scale (48 jobs up to 16,384 ranks, 5 detectors)",
        30.0,
        "s",
        lambda: best_time(_quality_sweep, repeat=1),
    ),
    Benchmark("reproduce: Holmes claims, full scale", 10.0, "s", lambda: best_time(_holmes_claims, repeat=1)),
]
