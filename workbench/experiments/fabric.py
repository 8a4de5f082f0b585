"""Fabric congestion vs GPU count x routing x collective (the study of :func:`workbench.fabric.ratio_vs_size` and of
notebook 01's loops over routings and collectives).

One point is one leaf-spine fabric, one collective on one rank per host (``halving_doubling`` uses the largest power
of two of hosts) and one routing. ``measure`` says what is compared with ideal packet spraying: one step's max link
congestion (``step``, Monte-Carlo mean over hashings), the worst step's, or the whole collective's bandwidth time.
``failed_uplinks`` fails that many uplinks of leaf 0. ``routing`` is a treatment (not seeded): every routing sees the
same collective and the same hashing stream at a point.
"""

from __future__ import annotations

from .._rng import spawn
from ..fabric import collectives, metrics, planning, topology
from ._space import Param, experiment

__all__ = ["fabric_congestion", "ROUTINGS"]

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
        Param(
            "measure",
            "step",
            choices=("step", "worst_step", "collective_time"),
            doc="one step's congestion, the worst step's, or the collective's bandwidth time, vs spraying",
        ),
        Param("step", 0, "", low=0, doc="step index for measure='step' (the last step if beyond)"),
        Param("host_gbps", 100.0, "Gbit/s", low=0.0, low_inclusive=False, doc="host link capacity"),
        Param("uplink_gbps", 100.0, "Gbit/s", low=0.0, low_inclusive=False, doc="leaf-spine link capacity"),
        Param("failed_uplinks", 0, "", low=0, doc="failed uplinks of leaf 0 (to spines 0, 1, ...)"),
        Param("samples", 200, "", low=1, high=100_000, doc="Monte-Carlo hashings averaged"),
    ],
)
def fabric_congestion(
    *,
    leaves,
    spines,
    hosts_per_leaf,
    collective,
    routing,
    measure,
    step,
    host_gbps,
    uplink_gbps,
    failed_uplinks,
    samples,
    seed,
):
    """Congestion (or collective time) ratio to ideal spraying of one collective under one routing."""
    if failed_uplinks >= spines:
        raise ValueError(
            f"failed_uplinks must be below spines ({spines}) so leaf 0 stays connected, got {failed_uplinks}"
        )
    topo = topology.leaf_spine(
        leaves,
        spines,
        hosts_per_leaf,
        host_gbps=host_gbps,
        uplink_gbps=uplink_gbps,
        failed_links=[(0, s) for s in range(failed_uplinks)],
    )
    gpus = topo.n_hosts
    if collective == "halving_doubling":
        gpus = 1 << (gpus.bit_length() - 1)
    if gpus < 2:
        raise ValueError(f"the fabric has {gpus} host(s); a collective needs at least 2")
    rng_steps, rng_paths = spawn(seed, 2)
    # the model's routing argument is passed by position: a keyword rename there needs no change here
    if measure == "collective_time":
        ratio = planning.fabric_slowdown(
            topo, collective, gpus, routing, baseline="spray", samples=samples, seed=rng_paths
        )
    else:
        steps = collectives.collective_steps(collective, gpus, 2**30, seed=rng_steps)
        if measure == "worst_step":
            ratio = metrics.worst_step_ratio(topo, steps, routing, samples=samples, seed=rng_paths)
        else:
            ratio = metrics.congestion_ratio(
                topo, steps[min(step, len(steps) - 1)], routing, samples=samples, seed=rng_paths
            )
    return {"gpus": gpus, "ratio": float(ratio)}
