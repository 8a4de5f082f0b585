"""Carbon-aware scheduling of data-processing job DAGs (PCAPS, CAP) and the sunk-carbon fallacy.

- :mod:`~workbench.carbon.traces`: hourly grid carbon intensity (Electricity Maps, 8 zones, 2021-2024).
- :mod:`~workbench.carbon.dags`: TPC-H job DAGs with measured Spark task durations (Decima's job set).
- :mod:`~workbench.carbon.cluster`: the event-driven executor cluster and its carbon accounting.
- :mod:`~workbench.carbon.schedulers`: FIFO, weighted fair, critical path, CAP and PCAPS.
- :mod:`~workbench.carbon.sunk`: placement on two server generations by operational carbon vs SCI.
"""

from __future__ import annotations

from .cluster import DEFAULT_POWER_W, SimResult, poisson_arrivals, sample_jobs, simulate
from .dags import SCALES, DagError, JobDAG, load_job
from .schedulers import SCHEDULERS, cap_allowed, cap_thresholds, make_scheduler, pcaps_threshold
from .traces import ZONES, CarbonTrace, TimeMapping, TraceError, forecast_bounds, load_trace, trace_summary

__all__ = [
    "DEFAULT_POWER_W",
    "SimResult",
    "poisson_arrivals",
    "sample_jobs",
    "simulate",
    "SCALES",
    "DagError",
    "JobDAG",
    "load_job",
    "SCHEDULERS",
    "cap_allowed",
    "cap_thresholds",
    "make_scheduler",
    "pcaps_threshold",
    "ZONES",
    "CarbonTrace",
    "TimeMapping",
    "TraceError",
    "forecast_bounds",
    "load_trace",
    "trace_summary",
]
