"""Shared by the fault-localization reproductions (C4D, Minder, Holmes): the detection-quality sweep over fault
kinds and job sizes, and the comparison used for paper numbers that synthetic signals cannot be compared with."""

from __future__ import annotations

import pandas as pd

from .._deps import remember
from ..training import diagnosis as dg
from ._core import Check, Scale, Verdict
from ._runner import shared_study

#: Job sizes (ranks) of the detection-quality sweep.
SIZES = {"full": (64, 1024, 16384), "quick": (64, 256)}
#: Every fault at one clear severity (x3: a 3x slower GPU or CPU-bound step, a link at a third of its bandwidth,
#: irregular iterations at 3x normal time) so that the table compares detectors, not thresholds.
SEVERITY = 3.0

NOT_COMPARABLE = Check(lambda value: Verdict.NOT_REPRODUCED, "not comparable on synthetic signals")


def quality_grid(scale: Scale) -> list[dg.Scenario]:
    """The jobs of the detection-quality sweep: every fault kind and job size (2 seeds at full scale, 1 quick), plus
    healthy jobs; job ``i`` has seed ``i``, so any subset of this list simulates exactly the same jobs."""
    seeds, healthy = (2, 2) if scale == "full" else (1, 1)
    return dg.scenario_grid(
        tuple(dg.FAULT_KINDS),
        ranks=SIZES[scale],
        severities=(SEVERITY,),
        seeds=seeds,
        healthy=healthy,
        iterations=300,
        onset_iteration=100,
    )


@remember
def quality_results(scale: Scale) -> pd.DataFrame:
    """Every detector on every job of :func:`quality_grid`; computed once for the papers that read it (C4D's figure,
    Minder, PerfTracker: each runs in its own process) and shared through the result cache."""
    return shared_study("diagnosis-quality", scale, lambda: dg.evaluate(quality_grid(scale)))


def quality(scale: Scale, by=("detector", "kind")) -> pd.DataFrame:
    """The detection-quality table of :func:`quality_results`."""
    return dg.quality_table(quality_results(scale), by=by)
