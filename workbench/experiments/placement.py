"""Hot ToRs vs utilization under random and hotspot-aware placement (the study of
:func:`workbench.placement.placement_study`, one cluster per point x seed).

``policy`` is a treatment (not seeded): both policies place the same cluster with the same random stream.
"""

from __future__ import annotations

from .._rng import spawn
from .. import placement
from ._space import Param, experiment

__all__ = ["placement_hot_tors"]


@experiment(
    "placement-hot-tors",
    version="1",
    params=[
        Param("mean_utilization", 0.4, "fraction", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False,
              doc="mean ToR uplink utilization the task demands are scaled to"),
        Param("policy", "aware", choices=("random", "aware"), seeded=False, doc="placement policy"),
        Param("racks", 1000, "", low=2, high=100_000, doc="racks (one ToR each)"),
        Param("hot_threshold", 0.75, "fraction", low=0.0, high=1.0, low_inclusive=False,
              doc="ToR utilization above which a ToR is hot"),
    ],
)
def placement_hot_tors(*, mean_utilization, policy, racks, hot_threshold, seed):
    """Hot ToRs and where network-intensive tasks land for one cluster and one placement policy."""
    rng_cluster, rng_place = spawn(seed, 2)
    cluster = placement.make_cluster(racks, mean_utilization=mean_utilization, seed=rng_cluster)
    p = placement.place(cluster, policy, hot_threshold=hot_threshold, seed=rng_place)
    on_hot = p.hot[p.rack]
    return {
        "hot_tors": p.hot_tors,
        "hot_fraction": p.hot_tors / cluster.racks,
        "intensive_on_hot": float(on_hot[cluster.intensive].mean()),
        "other_on_hot": float(on_hot[~cluster.intensive].mean()),
        "max_utilization": float(p.utilization.max()),
        "migrated": p.migrated,
    }
