"""Hotspot-study speed (no target in issue 6; these are the workbench's own interactivity targets): the latency curve
and one 1,000-rack placement comparison should each take about a second so the notebook panel stays responsive."""

from __future__ import annotations

import numpy as np

from benchmarks import Benchmark, best_time
from workbench import placement as P

U = np.round(np.arange(0.05, 0.951, 0.05), 2)


BENCHMARKS = [
    Benchmark(
        "placement latency vs utilization, 19 points x 200k packets",
        1.0,
        "s",
        lambda: best_time(lambda: P.latency_vs_utilization(U, cv=2.0, n=200_000), repeat=3),
    ),
    Benchmark(
        "placement random vs aware, 1,000 racks x 32,000 tasks",
        1.0,
        "s",
        lambda: best_time(lambda: P.placement_study(1000, seeds=1), repeat=3),
    ),
]
