"""Serving capacity vs model x hour x workload: ServeGen's composed per-client workload against the naive one.

One point composes an hour's span of a released model's client pool (:func:`workbench.workloads.servegen.compose`,
the data's rate curve scaled to ``mean_rate_rps``), optionally replaces it by its naive counterpart (Poisson at the
same mean rate, pooled lengths: :func:`~workbench.workloads.servegen.naive_workload`), and searches the highest rate
one server meets the default SLO at (:func:`workbench.serving.capacity_search`) with the model's default server
(:func:`workbench.serving.provisioning.server_for`). ``workload`` is a treatment (not seeded): the naive workload is
built from the same composed requests. The under-provisioning of :func:`~workbench.serving.provisioning.
provisioning_gap` is ``1 - composed / naive`` of the two rows at a point.
"""

from __future__ import annotations

from .._rng import spawn
from ..serving import SLO, capacity_search
from ..serving.provisioning import server_for
from ..workloads import servegen
from ..workloads.servegen import MODELS
from ._space import Param, experiment

__all__ = ["serving_capacity"]


@experiment(
    "serving-capacity",
    version="1",
    params=[
        Param("model", "m-large", choices=tuple(MODELS), doc="released ServeGen model (client pool)"),
        Param("hour", 14, "h", low=0, high=23, doc="hour of day the span starts at"),
        Param(
            "workload",
            "composed",
            choices=("composed", "naive"),
            seeded=False,
            doc="per-client composition or the naive Poisson/pooled-length baseline",
        ),
        Param("day", 0, "d", low=0, high=13, doc="day of the release (0 for the 1-day models)"),
        Param("span_s", 1800.0, "s", low=60.0, high=86_400.0, doc="length of the composed span"),
        Param(
            "mean_rate_rps",
            4.0,
            "rps",
            low=0.0,
            low_inclusive=False,
            doc="mean the span's rate curve is scaled to before the search",
        ),
        Param("rel_tol", 0.03, "fraction", low=0.0, high=0.5, low_inclusive=False, doc="capacity search tolerance"),
    ],
)
def serving_capacity(*, model, hour, workload, day, span_s, mean_rate_rps, rel_tol, seed):
    """Capacity (rps) of one server under the SLO for one workload kind of a model's hour."""
    start_s = day * 86400 + hour * 3600
    pool = servegen.load_pool(model).select(start_s, span_s)
    rng_compose, rng_naive = spawn(seed, 2)
    requests = servegen.compose(pool, start_s=start_s, duration_s=span_s, mean_rate_rps=mean_rate_rps, seed=rng_compose)
    if workload == "naive":
        requests = servegen.naive_workload(requests, seed=rng_naive)
    result = capacity_search([requests], server_for(model), SLO(), rel_tol=rel_tol)
    return {
        "capacity_rps": float(result.capacity_rps),
        "feasible": result.details["infeasible_workloads"] == 0,
        "requests": len(requests),
    }
