"""Arrival-process targets (issue: foundation).

* 10 million Gamma inter-arrivals plus their CV and a maximum-likelihood Gamma fit: < 1.5 s.
* ``workbench reproduce`` end to end (all claims and figures that exist): well under 10 minutes (600 s).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time

from workbench import arrivals as arr

from . import Benchmark, best_time


def _gamma_10m() -> None:
    gaps = arr.Gamma.from_burstiness(100.0, 0.5).interarrivals(10_000_000, seed=1)
    arr.cv(gaps)
    arr.fit_gamma(gaps)


def _reproduce_end_to_end() -> float:
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "workbench.cli", "reproduce", "--out", out],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return time.perf_counter() - t0


BENCHMARKS = [
    Benchmark("10M Gamma gaps + CV + ML fit", 1.5, "s", lambda: best_time(_gamma_10m, repeat=3)),
    Benchmark("workbench reproduce end to end", 600.0, "s", _reproduce_end_to_end),
]
