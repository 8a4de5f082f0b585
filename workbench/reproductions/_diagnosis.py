"""Shared by the fault-localization reproductions (C4D, Minder, Holmes): the detection-quality sweep over fault
kinds and job sizes, and the comparison used for paper numbers that synthetic signals cannot be compared with."""

from __future__ import annotations

import functools

import pandas as pd

from ..training import diagnosis as dg
from ._core import Check, Verdict
from ._studies import shared_study

#: Job sizes (ranks) of the detection-quality sweep.
SIZES = {"full": (64, 1024, 16384), "quick": (64, 256)}
#: Every fault at one clear severity (x3: a 3x slower GPU or CPU-bound step, a link at a third of its bandwidth,
#: irregular iterations at 3x normal time) so that the table compares detectors, not thresholds.
SEVERITY = 3.0

NOT_COMPARABLE = Check(lambda value: Verdict.NOT_REPRODUCED, "not comparable on synthetic signals")


@functools.cache
def quality_results(scale: str) -> pd.DataFrame:
    """Every detector on every fault kind and job size (2 seeds at full scale, 1 quick), plus healthy jobs; computed
    once for the four papers that read it (C4D, Minder, Holmes, PerfTracker: :func:`shared_study`)."""
    seeds, healthy = (2, 2) if scale == "full" else (1, 1)

    def build() -> pd.DataFrame:
        grid = dg.scenario_grid(
            tuple(dg.FAULT_KINDS),
            ranks=SIZES[scale],
            severities=(SEVERITY,),
            seeds=seeds,
            healthy=healthy,
            iterations=300,
            onset_iteration=100,
        )
        return dg.evaluate(grid)

    return shared_study("diagnosis-quality", scale, build)


def quality(scale: str, by=("detector", "kind")) -> pd.DataFrame:
    """The detection-quality table of :func:`quality_results`."""
    return dg.quality_table(quality_results(scale), by=by)
