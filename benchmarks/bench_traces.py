"""Trace targets (issue 4: loaders, characterization, generator).

* Load a 1.43-million-row BurstGPT-format CSV: < 5 s cold (no cache), < 1 s from the parquet cache.
* Per-window (20-minute) Gamma fits over it: < 5 s.
* Generate 1 million requests (BurstGPT-style generator): < 1 s.
* Peak memory of the cold load: < 1 GiB. Measured as the growth of the peak resident set size of a fresh process
  (after imports) while it loads the file, because pyarrow's buffers live outside tracemalloc's view.

The CSV is generated once per run in a temporary directory, in BurstGPT's exact release format (CRLF, v1 header):
the labelled stand-in over 55 days, about 1.45 million rows, two services, two models, 1-second timestamps.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import tempfile
from pathlib import Path

from workbench.workloads import burstgpt as gen
from workbench.workloads import characterize as C
from workbench.workloads import export, traces

from . import Benchmark, best_time

_TMP = tempfile.TemporaryDirectory(prefix="wb-bench-traces-")


@functools.cache
def _csv() -> Path:
    df = gen.stand_in(days=55.0, seed=1)
    return export.to_burstgpt_csv(df, Path(_TMP.name) / "BurstGPT_bench.csv", line_terminator="\r\n")


def _rows() -> int:
    return len(traces.load_burstgpt(_csv(), cache=False))


def _cold() -> None:
    traces.load_burstgpt(_csv(), cache=False)


def _cached() -> None:
    traces.load_burstgpt(_csv(), cache=True)


def _fits() -> None:
    C.window_gamma_fits(traces.load_burstgpt(_csv(), cache=True), 1200.0, seed=0)


def _fits_only() -> float:
    df = traces.load_burstgpt(_csv(), cache=True)
    return best_time(lambda: C.window_gamma_fits(df, 1200.0, seed=0), repeat=3)


_MODEL = gen.from_params(1_000_000 / 2.0, 2.0, shape=0.5, zipf_alpha=1.1, failure_prob=0.02)  # ~1e6 requests


def _generate() -> None:
    gen.generate(_MODEL, seed=0)


_PEAK_SCRIPT = """
import sys
from workbench.workloads import traces

def hwm():  # peak resident set of this process image (VmHWM resets at exec, unlike ru_maxrss)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

base = hwm()
df = traces.load_burstgpt(sys.argv[1], cache=False)
print(hwm() - base, base, len(df))
"""


def _peak_rss_growth() -> float:
    out = subprocess.run([sys.executable, "-c", _PEAK_SCRIPT, str(_csv())], check=True, capture_output=True, text=True)
    return float(out.stdout.split()[0])


def _cache_warm_then_time() -> float:
    _cached()  # write the cache
    return best_time(_cached, repeat=3)


BENCHMARKS = [
    Benchmark("load 1.43M-row BurstGPT CSV, cold", 5.0, "s", lambda: best_time(_cold, repeat=2)),
    Benchmark("load 1.43M-row BurstGPT CSV, parquet cache", 1.0, "s", _cache_warm_then_time),
    Benchmark("per-window Gamma fits over 1.43M rows", 5.0, "s", _fits_only),
    Benchmark("generate 1M requests", 1.0, "s", lambda: best_time(_generate, repeat=3)),
    Benchmark("peak memory growth of the cold load", 1024**3, "bytes", _peak_rss_growth),
]
