"""Hot ToRs vs utilization under random and hotspot-aware placement: :func:`workbench.placement.placement_study` on
one cluster per point x seed, both policies on the same cluster (one result row per policy)."""

from __future__ import annotations

from .. import placement
from ._space import Param, experiment

__all__ = ["placement_hot_tors"]


@experiment(
    "placement-hot-tors",
    version="1",
    small={"racks": 100, "mean_utilization": [0.3, 0.6]},
    params=[
        Param.fraction("mean_utilization", 0.4, "mean ToR uplink utilization the task demands are scaled to"),
        Param("racks", 1000, "", low=2, high=100_000, doc="racks (one ToR each)"),
        Param(
            "hot_threshold",
            0.75,
            "fraction",
            low=0.0,
            high=1.0,
            low_inclusive=False,
            doc="ToR utilization above which a ToR is hot",
        ),
    ],
)
def placement_hot_tors(*, mean_utilization, racks, hot_threshold, seed):
    """Hot ToRs and where network-intensive tasks land, random vs aware placement of one cluster."""
    study = placement.placement_study(
        racks, seeds=1, hot_threshold=hot_threshold, cluster_kwargs={"mean_utilization": mean_utilization}, seed=seed
    )
    return study.drop(columns="replica")
