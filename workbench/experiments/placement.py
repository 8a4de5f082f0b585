"""Hotspot-aware placement studies (Google, NSDI 2025; :mod:`workbench.placement`).

* ``placement-hot-tors`` -- hot ToRs vs utilization under random and hotspot-aware placement:
  :func:`workbench.placement.placement_study` on one cluster per point x seed, both policies on the same cluster
  (one result row per policy).
* ``placement-tor-utilization`` -- the same clusters and placements (same parameters, same seed: a
  ``placement-hot-tors`` row's own placements) ToR by ToR: each ToR's realized uplink utilization per policy (one row
  per policy x ToR), the distribution behind the hot-ToR counts.
* ``placement-latency-curve`` -- queueing latency of a ToR uplink fed by bursty (Gamma, CV ``cv``) arrivals at 5-95%
  utilization (:func:`workbench.placement.latency_vs_utilization`, one row per utilization), with the knee of the
  exact GI/M/1 mean latency at that CV (:func:`workbench.placement.knee_utilization`, the knee the ``hotspots``
  claims read).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import placement
from ._space import Param, experiment

__all__ = ["placement_hot_tors", "placement_tor_utilization", "placement_latency_curve", "CURVE_UTILIZATIONS"]

#: The parameters of a cluster and its placements (both placement experiments). The cluster's shape and the aware
#: policy's settings are not ``seeded``: every value of them draws from the same stream at a point, so comparing two
#: values compares the policies, not two random clusters.
PARAMS = (
    Param(
        "mean_utilization",
        0.4,
        "fraction",
        low=0.0,
        high=1.0,
        low_inclusive=False,
        high_inclusive=False,
        label="mean ToR utilization",
        doc="mean ToR uplink utilization the task demands are scaled to",
    ),
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
    Param(
        "demand_sigma",
        1.5,
        "",
        low=0.0,
        high=3.0,
        low_inclusive=False,
        seeded=False,
        doc="log-standard deviation of task demand (1.5: about 40% of the bandwidth in the top 5% of tasks)",
    ),
    Param(
        "noise_sigma",
        0.5,
        "",
        low=0.0,
        high=2.0,
        seeded=False,
        label="prediction noise",
        doc="log-standard deviation of realized over predicted demand",
    ),
    Param("choices", 4, "", low=1, high=16, seeded=False, doc="candidate racks the aware policy samples per task"),
    Param("migrate", True, seeded=False, label="migrate heavy tasks", doc="aware policy: migrate off hot ToRs"),
)
#: Utilizations of the latency curve (5-95% in 5% steps).
CURVE_UTILIZATIONS = np.round(np.arange(0.05, 0.951, 0.05), 2)


def _replica(mean_utilization, racks, hot_threshold, demand_sigma, noise_sigma, choices, migrate, seed):
    """The cluster and its random and aware placements of one point (the study's one replica at ``seed``)."""
    ((_, cluster, placed),) = placement.placement_replicas(
        racks,
        seeds=1,
        hot_threshold=hot_threshold,
        cluster_kwargs={"mean_utilization": mean_utilization, "demand_sigma": demand_sigma, "noise_sigma": noise_sigma},
        place_kwargs={"choices": choices, "migrate": migrate},
        seed=seed,
    )
    return cluster, placed


@experiment(
    "placement-hot-tors",
    version="1",
    small={"racks": 100, "mean_utilization": [0.3, 0.6]},
    params=list(PARAMS),
)
def placement_hot_tors(*, mean_utilization, racks, hot_threshold, demand_sigma, noise_sigma, choices, migrate, seed):
    """Hot ToRs and where network-intensive tasks land, random vs aware placement of one cluster."""
    cluster, placed = _replica(
        mean_utilization, racks, hot_threshold, demand_sigma, noise_sigma, choices, migrate, seed
    )
    return placement.placement_summary(cluster, placed)


@experiment(
    "placement-tor-utilization",
    version="1",
    small={"racks": 50, "mean_utilization": [0.3, 0.6]},
    params=list(PARAMS),
)
def placement_tor_utilization(
    *, mean_utilization, racks, hot_threshold, demand_sigma, noise_sigma, choices, migrate, seed
):
    """Each ToR's realized uplink utilization under random and aware placement of the ``placement-hot-tors`` cluster
    at the same parameters and seed."""
    _, placed = _replica(mean_utilization, racks, hot_threshold, demand_sigma, noise_sigma, choices, migrate, seed)
    return pd.concat(
        [
            pd.DataFrame({"policy": policy, "tor": np.arange(p.utilization.size), "utilization": p.utilization})
            for policy, p in placed.items()
        ],
        ignore_index=True,
    )


@experiment(
    "placement-latency-curve",
    version="1",
    small={"cv": [1.0, 2.0], "packets": 5000},
    params=[
        Param("cv", 2.0, "", low=1.0, high=4.0, label="arrival CV", doc="CV of inter-arrival gaps (1 is Poisson)"),
        Param("packets", 50_000, "", low=1000, high=1_000_000, log=True, doc="packets simulated per utilization"),
    ],
)
def placement_latency_curve(*, cv, packets, seed):
    """Mean, tail (p99) and waiting latency of a 10 Gbit/s uplink (1.2 us per packet) vs utilization, and the knee
    of the exact mean latency curve at ``cv`` (``knee_utilization``, the same on every row)."""
    curve = placement.latency_vs_utilization(CURVE_UTILIZATIONS, cv=cv, n=packets, seed=seed)
    knee = placement.knee_utilization(placement.KNEE_GRID, placement.exact_mean_latency(placement.KNEE_GRID, cv=cv))
    return curve.assign(knee_utilization=knee)
