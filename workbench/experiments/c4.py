"""C4's traffic-planning studies (:mod:`workbench.reproductions.c4`, notebook 02): how much ECMP's hash collisions
cost against planned paths, on the fabric and in the bonded NIC, and what planning buys a training iteration.

* ``planned-vs-ecmp-worst-step`` -- one collective of ``gpus`` ranks (a ``size_bytes`` message, ranks placed by
  ``placement``) on a non-blocking leaf-spine of ``gpus / hosts_per_leaf`` leaves and ``hosts_per_leaf`` spines:
  its worst step's congestion over ideal spraying (:func:`workbench.fabric.worst_step_ratio`, ``samples``
  hashings) under ECMP and under planned paths, one row per ``routing`` with ``ratio``. One random stream per job
  draws the collective, then ECMP's hashings, then planned paths' (deterministic) choice: the keyed stream
  ``(job_seed, job_group, job_index)`` of :func:`workbench._rng.keyed` (the child ``job_index`` of child
  ``job_group`` of ``job_seed``), so a study names each of its jobs and keeps its draws; the sweep's seed is not
  used. C4's traffic-planning claim (:mod:`workbench.reproductions.c4`).
* ``c4-gain`` -- C4's traffic-planning model at one GPU count (:func:`workbench.fabric.c4_gain_table`'s row): the
  slowdown of ECMP over planned paths, the larger of the NIC bond's (exact) and the fabric's (``samples`` hashings),
  and the iteration-time gain planning buys at communication share ``comm_share``. ``comm_share`` and the NIC's
  ``connections_per_nic`` and ``ports`` are treatments (not seeded: the NIC bond's slowdown is exact): every one of
  them at a GPU count sees the same fabric hashings, so the gain is exactly linear in the share. Notebook 02's
  C4 panel.

The fabric's own studies (congestion vs routing and fabric size, the busiest step's uplink loads, collective time vs
message size) are in :mod:`workbench.experiments.fabric`, which declares the message size both share.
"""

from __future__ import annotations

import functools

import pandas as pd

from .._rng import keyed
from ..fabric import collectives, metrics, planning
from ..fabric.topology import leaf_spine
from ._space import Param, experiment
from .fabric import SIZE_PARAM, whole_bytes

__all__ = ["C4_COLLECTIVES", "planned_vs_ecmp_worst_step", "c4_gain"]

_JOB_KEY = "job_seed, job_group and job_index name the job's random stream"


@experiment(
    "planned-vs-ecmp-worst-step",
    small={"gpus": 64, "collective": ["ring", "permutation"], "samples": 20},
    params=[
        Param("collective", "halving_doubling", choices=collectives.COLLECTIVES, doc="collective traffic pattern"),
        Param("placement", "linear", choices=collectives.PLACEMENTS, doc="which host each rank runs on"),
        Param("gpus", 256, "", low=2, high=65_536, log=True, doc="GPU ranks, one per host"),
        Param("hosts_per_leaf", 16, "", low=1, high=256, doc="hosts per leaf, and spines (non-blocking)"),
        SIZE_PARAM,
        Param("samples", 100, "", low=1, high=100_000, doc="Monte-Carlo hashings per step"),
        Param("job_seed", 6, "", low=0, high=2**31 - 1, doc="seed of the study's jobs"),
        Param("job_group", 0, "", low=0, high=2**31 - 1, doc="group of the job in its study (" + _JOB_KEY + ")"),
        Param("job_index", 0, "", low=0, high=2**31 - 1, doc="index of the job in its group (" + _JOB_KEY + ")"),
    ],
)
def planned_vs_ecmp_worst_step(
    *, collective, placement, gpus, hosts_per_leaf, size_bytes, samples, job_seed, job_group, job_index, seed
):
    """Worst step's congestion over ideal of one collective under ECMP and under planned paths."""
    del seed  # the job is named by job_seed, job_group and job_index
    if gpus % hosts_per_leaf:
        raise ValueError(f"gpus must be a multiple of hosts_per_leaf = {hosts_per_leaf}, got {gpus}")
    topo = leaf_spine(gpus // hosts_per_leaf, hosts_per_leaf, hosts_per_leaf)
    rng = keyed(job_seed, job_group, job_index)
    steps = collectives.collective_steps(collective, gpus, whole_bytes(size_bytes), seed=rng)
    ratios = [
        metrics.worst_step_ratio(topo, steps, routing, samples=samples, seed=rng, placement=placement)
        for routing in ("ecmp", "planned")  # in this order: both draw from the job's one stream
    ]
    return pd.DataFrame({"routing": ["ecmp", "planned"], "ratio": ratios})


#: The collectives of C4's model: the all-reduce algorithms and all-to-all (a permutation is a test pattern, not a job's).
C4_COLLECTIVES = tuple(c for c in collectives.COLLECTIVES if c != "permutation")


@functools.lru_cache(maxsize=256)
def _c4_slowdowns(gpus, collective, connections_per_nic, ports, hosts_per_leaf, spines, samples, seed):
    """(NIC bond, fabric) slowdowns of one GPU count: one model call shared by every communication share."""
    table = planning.c4_gain_table(
        [gpus], [0.0], collective=collective, connections_per_nic=connections_per_nic, ports=ports,
        hosts_per_leaf=hosts_per_leaf, spines=spines, samples=samples, seed=seed,
    )  # fmt: skip
    return float(table.nic_slowdown.iloc[0]), float(table.fabric_slowdown.iloc[0])


@experiment(
    "c4-gain",
    small={"gpus": [16, 64], "collective": ["ring", "halving_doubling"], "samples": 5, "comm_share": [0.0, 0.3]},
    params=[
        Param(
            "gpus",
            256,
            "",
            low=2,
            high=4096,
            log=True,
            label="GPUs",
            doc="GPUs, one bonded NIC each, ranks in order (a multiple of hosts_per_leaf above it)",
        ),
        Param("collective", "ring", choices=C4_COLLECTIVES, doc="the job's collective"),
        Param(
            "connections_per_nic",
            2,
            "",
            low=1,
            high=8,
            seeded=False,
            label="connections per NIC",
            doc="long-lived connections hashed onto each NIC's ports (exact: no draw)",
        ),
        Param(
            "ports",
            2,
            "",
            low=1,
            high=4,
            seeded=False,
            label="ports per NIC",
            doc="bonded ports per NIC (C4's dual-port NICs: 2; exact)",
        ),
        Param("hosts_per_leaf", 16, "", low=1, high=256, doc="hosts per leaf"),
        Param("spines", 16, "", low=1, high=512, doc="spine switches"),
        Param("samples", 50, "", low=1, high=100_000, doc="Monte-Carlo hashings of the fabric"),
        Param(
            "comm_share",
            0.2,
            "fraction",
            low=0.0,
            high=1.0,
            seeded=False,
            label="communication share",
            doc="share of the iteration spent in (unoverlapped) communication",
        ),
    ],
)
def c4_gain(*, gpus, collective, connections_per_nic, ports, hosts_per_leaf, spines, samples, comm_share, seed):
    """ECMP's slowdown over planned paths (NIC bond and fabric) at ``gpus`` GPUs, and planning's iteration gain at
    ``comm_share``."""
    if gpus % hosts_per_leaf and gpus > hosts_per_leaf:
        raise ValueError(f"gpus above hosts_per_leaf={hosts_per_leaf} must be a multiple of it, got {gpus}")
    nic, fab = _c4_slowdowns(gpus, collective, connections_per_nic, ports, hosts_per_leaf, spines, samples, seed)
    r = max(nic, fab)
    return {
        "nic_slowdown": nic,
        "fabric_slowdown": fab,
        "slowdown": r,
        "gain": float(planning.iteration_gain(comm_share, r)),
    }
