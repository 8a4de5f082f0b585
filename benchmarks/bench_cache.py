"""Cost of the cache key (issue 9): ``workbench.cache.fingerprint`` is the sha256 of the whole source file.

* Both Azure 2023 trace CSVs (1.04 MB together), hashed cold: < 10 ms.
* A 200 MB file, hashed cold (page cache warm, as right after writing it): < 0.5 s (>= 400 MB/s; sha256 with the
  CPU's SHA extensions runs at about 1.5-2 GB/s on one unloaded core).
* The 791 released ServeGen files (238 MB), hashed cold: < 1 s; re-checked in the same process when unchanged
  (stat only, see the module's racy-window rule): < 50 ms. This is the cost of the ServeGen memo's key.
* A cache hit on a 1.43-million-row trace (fingerprint of the 200 MB-class source remembered, sha256 of the parquet
  entry, parquet read): < 1 s.

The real-data rows are skipped (reported as NaN) when ``../shared/data`` is absent.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

import numpy as np

from workbench import cache, data
from workbench.workloads import burstgpt as gen
from workbench.workloads import export, traces

from . import Benchmark, best_time

_TMP = tempfile.TemporaryDirectory(prefix="wb-bench-cache-")


@functools.cache
def _big() -> Path:
    p = Path(_TMP.name) / "200MB.bin"
    p.write_bytes(np.random.default_rng(0).integers(0, 256, 200_000_000, dtype=np.uint8).tobytes())
    return p


def _cold(paths: list[Path]) -> float:
    def run():
        cache.clear_memo()
        for p in paths:
            cache.fingerprint(p)

    return best_time(run, repeat=3) if paths else float("nan")


def _azure() -> list[Path]:
    found = [data.find(f"azure-llm-2023/AzureLLMInferenceTrace_{k}.csv") for k in ("code", "conv")]
    return [p for p in found if p is not None]


def _servegen() -> list[Path]:
    root = data.find("servegen/data")
    return sorted(p for p in root.rglob("chunk-*") if p.is_file()) if root is not None else []


def _servegen_warm() -> float:
    files = _servegen()
    if not files:
        return float("nan")
    cache.clear_memo()
    for p in files:
        cache.fingerprint(p)
    return best_time(lambda: [cache.fingerprint(p) for p in files], repeat=3)


def _hit() -> float:
    os.environ.setdefault("WORKBENCH_CACHE", str(Path(_TMP.name) / "cache"))
    src = export.to_burstgpt_csv(
        gen.stand_in(days=55.0, seed=1), Path(_TMP.name) / "BurstGPT_bench.csv", overwrite=True
    )
    cache.cached_frame(src, "bench", lambda: traces.load_burstgpt(src, cache=False))
    return best_time(lambda: cache.cached_frame(src, "bench", lambda: 1 / 0), repeat=3)


BENCHMARKS = [
    Benchmark("fingerprint both Azure 2023 CSVs (1.04 MB), cold", 0.01, "s", lambda: _cold(_azure())),
    Benchmark("fingerprint a 200 MB file, cold", 0.5, "s", lambda: _cold([_big()])),
    Benchmark("fingerprint 791 ServeGen files (238 MB), cold", 1.0, "s", lambda: _cold(_servegen())),
    Benchmark("re-check 791 unchanged ServeGen fingerprints", 0.05, "s", _servegen_warm),
    Benchmark("cache hit on a 1.43M-row trace (verify + read)", 1.0, "s", _hit),
]
