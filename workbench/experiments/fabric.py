"""Fabric congestion vs GPU count x routing x collective (the study of :func:`workbench.fabric.ratio_vs_size`).

One point is one leaf-spine fabric, one collective and one routing: the congestion ratio of a collective step (or, with
``step=-1``, of the whole collective's bandwidth time) to ideal packet spraying, on one rank per host
(``halving_doubling`` uses the largest power of two of hosts). ``routing`` is a treatment (not seeded): every routing
sees the same collective and the same hashing stream at a point.
"""

from __future__ import annotations

from .._rng import spawn
from ..fabric import collectives, metrics, planning, topology
from ._space import Param, experiment

__all__ = ["fabric_congestion"]

#: Routing values of :mod:`workbench.fabric.routing` (``mp-<x>`` for the x-path ECMP variants in use).
ROUTINGS = ("ecmp", "mp-2", "mp-4", "mp-8", "spray", "minimal", "planned")


@experiment(
    "fabric-congestion",
    version="1",
    params=[
        Param("leaves", 8, "", low=1, high=512, doc="leaf switches (GPUs = leaves x hosts_per_leaf)"),
        Param("spines", 8, "", low=1, high=512, doc="spine switches"),
        Param("hosts_per_leaf", 16, "", low=1, high=256, doc="hosts (one GPU rank each) per leaf"),
        Param("collective", "halving_doubling", choices=collectives.COLLECTIVES, doc="collective traffic pattern"),
        Param("routing", "ecmp", choices=ROUTINGS, seeded=False, doc="how paths are chosen"),
        Param("step", 0, "", low=-1, doc="collective step index (last if beyond); -1 = whole collective"),
        Param("samples", 200, "", low=1, high=100_000, doc="Monte-Carlo hashings averaged"),
    ],
)
def fabric_congestion(*, leaves, spines, hosts_per_leaf, collective, routing, step, samples, seed):
    """Congestion ratio to ideal spraying of one collective under one routing on a leaf-spine."""
    topo = topology.leaf_spine(leaves, spines, hosts_per_leaf)
    gpus = topo.n_hosts
    if collective == "halving_doubling":
        gpus = 1 << (gpus.bit_length() - 1)
    if gpus < 2:
        raise ValueError(f"the fabric has {gpus} host(s); a collective needs at least 2")
    rng_steps, rng_paths = spawn(seed, 2)
    # the model's routing argument is passed by position: a keyword rename there needs no change here
    if step < 0:
        ratio = planning.fabric_slowdown(topo, collective, gpus, routing, baseline="spray", samples=samples,
                                         seed=rng_paths)
    else:
        steps = collectives.collective_steps(collective, gpus, 2**30, seed=rng_steps)
        ratio = metrics.congestion_ratio(topo, steps[min(step, len(steps) - 1)], routing, samples=samples,
                                         seed=rng_paths)
    return {"gpus": gpus, "ratio": float(ratio)}
