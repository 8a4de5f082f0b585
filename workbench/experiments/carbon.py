"""Carbon-aware scheduling studies (issue 25): PCAPS / CAP on TPC-H job DAGs and real grid traces, and SCI placement.

* ``carbon-scheduling`` -- ``jobs`` TPC-H jobs (Decima's query x scale mix) arriving as a Poisson stream whose
  offered work is ``load`` x the cluster's capacity, on ``executors`` executors (each job capped at ``job_cap``),
  scheduled by ``scheduler`` (PCAPS with ``gamma``; CAP with ``cap_minimum`` always-allowed executors) on the
  ``region``'s 2023 hourly direct carbon intensity from the start of ``season``, one trace hour per
  ``seconds_per_hour`` simulated seconds (:func:`workbench.carbon.simulate`). ``scheduler`` is a treatment: at a
  point every scheduler sees the same jobs, arrivals and duration draws.
* ``carbon-busy-hours`` -- the same run (same parameters, same seed: a ``carbon-scheduling`` row's own simulation)
  hour by hour: mean busy executors per trace hour from the window start to the makespan, beside the region's
  intensity in that hour (one row per hour; NaN past the trace window); ``job_seed`` names the run's seed instead of
  the sweep's (the pcaps reproduction's example).
* ``sunk-carbon-placement`` -- total operational carbon of placing ``utilization`` x a fleet of old and new servers
  by operational carbon vs by SCI over a year of the region's intensity (:func:`workbench.carbon.sunk.compare`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._deps import remember
from .._rng import int31_seed
from ..carbon import sunk
from ..carbon.cluster import poisson_arrivals, sample_jobs, simulate
from ..carbon.dags import load_jobs
from ..carbon.schedulers import SCHEDULERS, make_scheduler
from ..carbon.traces import ALIASES, REGIONS, TimeMapping, TraceError, load_trace
from ._space import Param, experiment

#: ``REGIONS`` (re-exported): the carbon package's one list, :data:`workbench.carbon.traces.REGIONS` (the PCAPS
#: evaluation's regions present in the shared data, Quebec is not, plus GB and NYISO).
__all__ = [
    "carbon_run",
    "carbon_scheduling",
    "carbon_busy_hours",
    "sunk_carbon_placement",
    "REGIONS",
    "SEASONS",
    "region_intensity",
]

#: First UTC hour of each season's window in the trace year.
SEASONS = {"winter": "01-15", "spring": "04-15", "summer": "07-15", "autumn": "10-15"}
YEAR = 2023
WINDOW_DAYS = 60


@remember
def region_intensity(region: str, season: str, year: int = YEAR) -> np.ndarray:
    """Direct intensity (gCO2eq/kWh) of ``region`` for :data:`WINDOW_DAYS` days from ``season``'s start."""
    tr = load_trace(ALIASES.get(region, region), year)
    return tr.window(f"{year}-{SEASONS[season]}T00", 24 * WINDOW_DAYS).direct


@remember
def mean_job_work_s() -> float:
    """Mean total work (executor-seconds) of a job in the 22 queries x 7 scales pool."""
    return float(np.mean([j.total_work_s for j in load_jobs()]))


def carbon_run(
    *, scheduler, region, season, gamma, load, jobs, executors, job_cap, cap_minimum, seconds_per_hour, seed
):
    """The simulation behind one ``carbon-scheduling`` point: the :class:`~workbench.carbon.cluster.SimResult` (with
    its busy-executor series), for callers that show more than the experiment's summary row (the carbon panel).
    ``seed`` is the point's seed (:func:`~workbench.experiments.point_seed`); the jobs, arrivals and duration draws
    come from it, so every scheduler at a point sees the same ones."""
    s = int31_seed(seed)
    arrivals = poisson_arrivals(jobs, mean_job_work_s() / (load * executors), seed=s + 1)
    inten = region_intensity(region, season)
    fit = _jobs_in_window(load, executors, seconds_per_hour)
    knobs = (
        f"the {region} {season} window has {inten.size:,} trace hours ({WINDOW_DAYS} days at seconds_per_hour="
        f"{seconds_per_hour:g}): lower jobs (about {fit:,} arrive within it at load {load:g} on {executors} "
        "executors), or raise load, executors or seconds_per_hour"
    )
    if arrivals[-1] >= inten.size * seconds_per_hour:
        raise ValueError(f"jobs={jobs:,} arrive over {arrivals[-1] / seconds_per_hour:,.0f} trace hours, and {knobs}")
    pool = sample_jobs(jobs, seed=s)
    sched = make_scheduler(scheduler, gamma=gamma, cap_minimum=min(cap_minimum, executors))
    try:
        return simulate(
            pool,
            arrivals,
            inten,
            sched,
            executors=executors,
            job_cap=min(job_cap, executors),
            mapping=TimeMapping(seconds_per_hour),
            seed=s + 2,
        )
    except TraceError as err:  # the arrivals fit, the work did not drain before the window's end
        raise ValueError(f"jobs={jobs:,} are still running at the window's end, and {knobs}") from err


def _jobs_in_window(load: float, executors: int, seconds_per_hour: float, share: float = 1.0) -> int:
    """How many jobs' Poisson arrivals span, on average, ``share`` of a season's :data:`WINDOW_DAYS`-day trace window
    at ``load`` on ``executors`` executors (their mean gap is a job's mean work over ``load x executors``) with
    ``seconds_per_hour`` simulated seconds per trace hour."""
    span_s = share * 24 * WINDOW_DAYS * seconds_per_hour
    return int(span_s * load * executors // mean_job_work_s())


#: The share of the window the jobs' arrivals may fill (the ``jobs`` limit both scheduling experiments declare): the
#: last quarter, 15 days, is left for the queue to drain behind the last arrival, a carbon-aware scheduler deferring
#: work by up to its 48-hour look-ahead.
ARRIVAL_SHARE = 0.75


def _jobs_limit(*, load, executors, seconds_per_hour, **_) -> int:
    return _jobs_in_window(load, executors, seconds_per_hour, share=ARRIVAL_SHARE)


#: The parameters of a run (both scheduling experiments).
PARAMS = (
    Param("scheduler", "pcaps", choices=SCHEDULERS, seeded=False, doc="scheduling rule"),
    Param("region", "CAISO", choices=REGIONS, doc="grid region (Electricity Maps zone)"),
    Param("season", "summer", choices=tuple(SEASONS), doc="start of the trace window (2023)"),
    Param(
        "gamma",
        0.5,
        "",
        low=0.0,
        high=1.0,
        seeded=False,
        label="PCAPS gamma",
        doc="PCAPS carbon vs completion-time trade-off",
    ),
    Param.fraction("load", 0.5, "offered work / cluster capacity"),
    Param("jobs", 50, "", low=1, high=2000, log=True, doc="jobs in the Poisson stream"),
    Param("executors", 100, "", low=1, high=2000, doc="executors in the cluster"),
    Param("job_cap", 25, "", low=1, high=2000, doc="executors one job may hold"),
    Param("cap_minimum", 20, "", low=0, high=2000, seeded=False, doc="CAP's always-allowed executors B"),
    Param("seconds_per_hour", 60.0, "s", low=1.0, high=3600.0, log=True, doc="simulated seconds per trace hour"),
)


@experiment(
    "carbon-scheduling",
    version="1",
    small={"scheduler": ["agnostic", "cap", "pcaps"], "jobs": 10, "executors": 20, "region": "DE"},
    params=list(PARAMS),
    limits={"jobs": _jobs_limit},
)
def carbon_scheduling(
    *, scheduler, region, season, gamma, load, jobs, executors, job_cap, cap_minimum, seconds_per_hour, seed
):
    """Carbon and completion times of one job stream under one scheduler on one region's trace."""
    r = carbon_run(
        scheduler=scheduler,
        region=region,
        season=season,
        gamma=gamma,
        load=load,
        jobs=jobs,
        executors=executors,
        job_cap=job_cap,
        cap_minimum=cap_minimum,
        seconds_per_hour=seconds_per_hour,
        seed=seed,
    )
    return {
        "carbon_kg": r.carbon_g / 1e3,
        "energy_kwh": r.energy_kwh,
        "intensity_seen": r.carbon_g / r.energy_kwh if r.energy_kwh > 0 else 0.0,
        "mean_jct_s": r.mean_jct_s,
        "p95_jct_s": float(np.percentile(r.jct_s, 95)),
        "makespan_s": r.makespan_s,
    }


@experiment(
    "carbon-busy-hours",
    small={"scheduler": ["agnostic", "pcaps"], "jobs": 10, "executors": 20, "region": "DE"},
    limits={"jobs": _jobs_limit},
    params=[
        *PARAMS,
        Param(
            "job_seed", -1, "", low=-1, high=2**31 - 1, seeded=False,
            doc="-1: the sweep's seed; else the run's seed (jobs, arrivals and durations from it, as carbon_run draws)",
        ),
    ],
)  # fmt: skip
def carbon_busy_hours(*, job_seed, seed, region, season, **run):
    """Busy executors per trace hour of the ``carbon-scheduling`` run at the same parameters and seed (from the
    window's start to the makespan: how a scheduler follows the intensity), and the region's direct intensity
    (gCO2eq/kWh) in each of those hours."""
    r = carbon_run(**run, region=region, season=season, seed=seed if job_seed < 0 else job_seed)
    busy = r.busy_per_hour()
    window = region_intensity(region, season)
    inten = np.full(busy.size, np.nan)  # NaN past the trace window
    inten[: min(busy.size, window.size)] = window[: busy.size]
    return pd.DataFrame({"hour": np.arange(busy.size), "busy_executors": busy, "intensity_g_per_kwh": inten})


@experiment(
    "sunk-carbon-placement",
    version="1",
    small={"region": ["ZA", "ON"]},
    params=[
        Param("region", "CAISO", choices=REGIONS, seeded=False, doc="grid region (a year of hourly intensity)"),
        Param.fraction("utilization", 0.5, "busy cores / fleet cores"),
        Param("lifetime_years", 4.0, "", low=1.0, high=15.0, doc="amortization lifetime EL"),
        Param("n_old", 100, "", low=0, high=100_000, doc="old servers"),
        Param("n_new", 100, "", low=0, high=100_000, doc="new servers"),
    ],
)
def sunk_carbon_placement(*, region, utilization, lifetime_years, n_old, n_new, seed):
    """Operational carbon of operational-carbon vs SCI placement over a year (deterministic: ``seed`` unused)."""
    inten = load_trace(ALIASES.get(region, region), YEAR).direct
    r = sunk.compare(inten, utilization, n_old=n_old, n_new=n_new, lifetime_years=lifetime_years)
    return {**r, "break_even_intensity": sunk.break_even_intensity(lifetime_years)}
