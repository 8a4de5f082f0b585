"""Carbon-aware scheduling speed (issue 25): one run of 50 TPC-H jobs on 100 executors against a week of carbon
trace <= 1 s (PCAPS, CAP and the carbon-agnostic baseline); a 1,000-point sweep (scheduler x region x gamma x seed)
of the ``carbon-scheduling`` experiment's model on 2 worker processes <= 2 min (no result cache: every point runs);
the carbon panel's largest load (1,000 jobs on its 50 executors, the compiled loop: PCAPS) <= 1 s, and the same run
under fair sharing (the Python loop every scheduler outside the built-in rules runs) <= 20 s.

The one-run figure uses a week-long stream: 50 jobs whose arrivals spread over the 168 trace hours at the PCAPS
simulator's 60 simulated seconds per trace hour (mean inter-arrival 10,080 s / 50).
"""

from __future__ import annotations

import itertools
import time
from concurrent.futures import ProcessPoolExecutor

from benchmarks import Benchmark, best_time

REGIONS = ("CAISO", "DE", "NSW", "ON", "PJM", "ZA", "GB", "NYISO")
SCHEDS = ("agnostic", "cap", "pcaps", "fifo", "fair")
GAMMAS = (0.1, 0.3, 0.5, 0.7, 1.0)
BASE = {
    "season": "summer",
    "load": 0.5,
    "jobs": 50,
    "executors": 100,
    "job_cap": 25,
    "cap_minimum": 20,
    "seconds_per_hour": 60.0,
}


def _week_run(scheduler: str) -> float:
    from workbench.carbon import poisson_arrivals, sample_jobs, simulate
    from workbench.experiments.carbon import region_intensity

    inten = region_intensity("DE", "summer")
    jobs = sample_jobs(50, seed=1)
    arr = poisson_arrivals(50, 168 * 60.0 / 50, seed=1)
    simulate(jobs, arr, inten, scheduler, executors=100, job_cap=25, seed=1)  # warm the job caches
    return best_time(lambda: simulate(jobs, arr, inten, scheduler, executors=100, job_cap=25, seed=1), repeat=3)


def _panel_max(scheduler: str) -> float:
    """The carbon panel's largest stop of its jobs control: 1,000 jobs at load 0.5 on 50 executors (job cap 25)."""
    from workbench.carbon import poisson_arrivals, sample_jobs, simulate
    from workbench.carbon.traces import TimeMapping
    from workbench.experiments.carbon import mean_job_work_s, region_intensity

    inten = region_intensity("DE", "winter")
    jobs = sample_jobs(1000, seed=1)
    arr = poisson_arrivals(1000, mean_job_work_s() / (0.5 * 50), seed=1)
    run = lambda: simulate(jobs, arr, inten, scheduler, executors=50, job_cap=25, mapping=TimeMapping(60.0), seed=1)  # noqa: E731
    run()  # compile and warm the job caches
    return best_time(run, repeat=3)


def _point(p: dict) -> float:
    from workbench.experiments.carbon import carbon_scheduling

    return carbon_scheduling.fn(**p)["carbon_kg"]


def _sweep() -> float:
    points = [
        {**BASE, "scheduler": s, "region": r, "gamma": g, "seed": seed}
        for s, r, g, seed in itertools.product(SCHEDS, REGIONS, GAMMAS, range(5))
    ]
    assert len(points) == 1000
    t0 = time.perf_counter()
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_point, points, chunksize=25))
    return time.perf_counter() - t0


BENCHMARKS = [
    Benchmark("50 jobs, 100 executors, a week of trace: PCAPS", 1.0, "s", lambda: _week_run("pcaps")),
    Benchmark("50 jobs, 100 executors, a week of trace: CAP", 1.0, "s", lambda: _week_run("cap")),
    Benchmark("50 jobs, 100 executors, a week of trace: carbon-agnostic", 1.0, "s", lambda: _week_run("agnostic")),
    Benchmark("1,000-point carbon-scheduling sweep on 2 processes", 120.0, "s", _sweep),
    Benchmark("1,000 jobs on 50 executors (the panel's largest load): PCAPS", 1.0, "s", lambda: _panel_max("pcaps")),
    Benchmark("1,000 jobs on 50 executors: fair sharing (Python loop)", 20.0, "s", lambda: _panel_max("fair")),
]
