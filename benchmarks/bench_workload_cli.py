"""`workbench workload` targets (issue 15): ServeGen 1 h at 100 req/s to JSONL <= 2 s with the pool cached;
``describe`` on a 1.43M-row BurstGPT-format file <= 5 s; a whole day at 1,000 req/s (86.4 million requests)
generated and streamed to parquet <= 90 s with peak memory <= 2 GiB (the real command in a subprocess: wall time and
the child's peak RSS, which counts pyarrow's buffers); JSONL at the same scale reports its throughput."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workbench.workloads import burstgpt as B
from workbench.workloads import describe as D
from workbench.workloads import servegen as sg
from workbench.workloads import streaming as S
from workbench.workloads.convert import read_table
from workbench.workloads.export import to_burstgpt_csv, write_stream

from . import Benchmark, GiB, best_time

_DAY = [
    "workload",
    "generate",
    "renewal",
    "--rate",
    "1000",
    "--cv",
    "2",
    "--duration",
    "1d",
    "--seed",
    "1",
    "--input-tokens",
    "lognormal:1000,0.8",
    "--output-tokens",
    "lognormal:200,1",
    "--no-progress",
    "--force",
]


def _servegen_jsonl() -> float:
    pool = sg.load_pool("m-large")
    plan = S.servegen_plan(pool, start_s=14 * 3600.0, duration_s=3600.0, rate_rps=100.0)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "w.jsonl"
        return best_time(
            lambda: write_stream(S.iter_chunks(plan, 0, chunk_blocks=6), out, "jsonl", overwrite=True),
            repeat=3,
            warmup=1,
        )


def _describe_burstgpt() -> float:
    with tempfile.TemporaryDirectory() as d:
        # 1.43M requests over 61 days in BurstGPT v1 layout, integer-second timestamps (BurstGPT_1.csv's size).
        model = B.from_params(
            61 * 86400.0,
            1.43e6 / (61 * 86400.0),
            shape=0.5,
            failure_prob=0.03,
            model="ChatGPT",
            log_type="conversation",
        )
        path = to_burstgpt_csv(B.generate(model, seed=0), Path(d) / "BurstGPT_like.csv", time_resolution_s=1.0)
        read_table(path)  # build the parse cache once, as a second `describe` of the same file would find it
        return best_time(lambda: D.describe(read_table(path)), repeat=2)


@functools.cache
def _day(fmt: str) -> tuple[float, float, int, float]:
    """Wall seconds, child peak RSS bytes, requests and CPU seconds (user + system) of the whole-day command writing
    ``fmt``. On a shared machine the CPU seconds are the figure to compare with the wall-clock target."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / f"day.{fmt}"
        stdout, stderr = Path(d) / "stdout", Path(d) / "stderr"
        with stdout.open("w") as so, stderr.open("w") as se:
            t0 = time.perf_counter()
            child = subprocess.Popen(
                [sys.executable, "-m", "workbench.cli", *_DAY, "--out", str(out)], stdout=so, stderr=se
            )
            # this child's own usage (RUSAGE_CHILDREN's peak is the largest of every child this process ever had)
            _, status, usage = os.wait4(child.pid, 0)
            wall = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise RuntimeError(stderr.read_text().strip())
        cpu = usage.ru_utime + usage.ru_stime
        return wall, usage.ru_maxrss * 1024.0, int(stdout.read_text().split(":")[1].split()[0]), cpu


BENCHMARKS = [
    Benchmark("generate servegen m-large 1 h at 100 req/s to JSONL (pool cached)", 2.0, "s", _servegen_jsonl),
    Benchmark("describe a 1.43M-row BurstGPT-format file (parse cached)", 5.0, "s", _describe_burstgpt),
    Benchmark(
        "generate 1 day at 1,000 req/s (86.4M requests) to parquet, streamed", 90.0, "s", lambda: _day("parquet")[0]
    ),
    Benchmark("same run: CPU seconds (user + system)", 90.0, "s", lambda: _day("parquet")[3]),
    Benchmark("same run: peak resident memory of the command", 2 * GiB, "bytes", lambda: _day("parquet")[1]),
    Benchmark(
        "generate 1 day at 1,000 req/s to timestamped JSONL: throughput",
        86.4e6 / 90.0,  # the parquet run's budget: a day at 1,000 req/s in 90 s
        "req/s",
        lambda: _day("jsonl")[2] / _day("jsonl")[0],
        higher=True,
    ),
]
