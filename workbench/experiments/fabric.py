"""Fabric studies: congestion vs fabric size x routing x collective, collective time vs message size, and the
balls-into-bins maximum load behind ECMP's penalty (C4's traffic-planning studies are in
:mod:`workbench.experiments.c4`).

* ``fabric-congestion`` -- one collective on one rank per host of a leaf-spine (or a k-ary fat-tree) under one
  routing. ``measure`` says what is compared with ideal packet spraying: one step's max link congestion (``step``,
  the Monte-Carlo mean over hashings, with the exact value where :func:`workbench.fabric.has_exact_ratio` holds),
  the worst step's (``worst_step``), the whole collective's bandwidth time (``collective_time``), or one step's
  congestion with ``failed_uplinks`` of leaf 0's uplinks failed relative to spraying on the healthy fabric
  (``step_vs_healthy``). It also reports the busiest host's connections for that step. ``step = -1``
  (:data:`BUSIEST_STEP`; ``step-congestion`` and ``uplink-loads`` too) picks the step with the most bytes between
  leaves, and ``oversubscription`` above 0 sets the uplink speed from the hosts' (every experiment here that takes
  the fabric's parameters). This is the study behind notebook 01's routing, worst-step and failure tables, notebook
  02's worst step vs GPU count, and the spraying and C4 ratio-vs-size figures.
* ``collective-time-vs-size`` -- one collective's completion time (fluid, ``latency_s`` per step) at message sizes
  spaced evenly in log from ``min_size_bytes`` to ``max_size_bytes`` (one row per size:
  :func:`workbench.fabric.collective_time_vs_size`, vectorized over the sizes).
* ``step-congestion`` -- one collective step's max link congestion over ideal spraying under one routing (the
  Monte-Carlo mean and the exact expectation where it exists), ranks on hosts 0, 1, ..., hashed from a named stream
  (below). The packet-spraying reproduction's crossing halving-doubling step, ring and all-to-all vs fabric size.
* ``uplink-loads`` -- the bytes on every leaf->spine link when one step of a ``size_bytes`` collective is routed once
  (its heat map), with the step's label, the ranks, the hosts and the fabric's oversubscription.
* ``minimal-split-vs-spray`` -- the minimal splitting rule's link loads against ideal spraying's over random
  leaf-spines and random equal-size demands (the largest deviation relative to the peak load).
* ``minimal-split-subflows`` -- the minimal splitting rule's subflow count and piece count checked by brute force,
  for ``n = 1 .. 3s`` flows on ``s`` spines.
* ``ballsbins-max-load`` -- the expected maximum load of ``flows`` balls hashed into ``paths`` bins, exact
  (:func:`workbench.fabric.expected_max_load`) and by Monte-Carlo (:func:`workbench.fabric.simulate_max_load`: its
  mean and standard deviation), from the sweep's seed or a named stream.

A named stream (``step-congestion``, ``uplink-loads``, ``ballsbins-max-load`` when ``job_seed`` is set): the job draws
from ``job_seed``'s own stream (``job_index = -1``, what a model function given the int ``job_seed`` draws) or its
child ``job_index`` (:func:`workbench._rng.keyed`), so a study names each of its jobs and keeps its draws; the sweep's
seed is not used.

``routing`` is a treatment (not seeded): every routing sees the same collective, placement and hashing stream at a
point (common random numbers), so differences between routings are not sampling noise.
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from .._rng import keyed, spawn
from ..fabric import collectives, metrics, min_split_pieces, planning
from ..fabric import minimal_split_subflows as split_subflows
from ..fabric.ballsbins import expected_max_load, simulate_max_load
from ..fabric.collectives import Step
from ..fabric.fattree import fat_tree
from ..fabric.routing import ROUTINGS, as_host_step, connections_per_host, link_loads, subflow_loads
from ..fabric.topology import leaf_spine
from ._space import Param, experiment

__all__ = [
    "fabric_congestion",
    "collective_time_vs_size",
    "ballsbins_max_load",
    "build_topology",
    "job_stream",
    "step_congestion",
    "uplink_loads",
    "minimal_split_vs_spray",
    "minimal_split_subflows",
]

#: The fabric's parameters, shared by the fabric experiments (leaf-spine ones are ignored by a fat-tree).
FABRIC_PARAMS = [
    Param("topology", "leaf_spine", choices=("leaf_spine", "fat_tree"), doc="two-tier leaf-spine or k-ary fat-tree"),
    Param("leaves", 8, "", low=1, high=512, doc="leaf switches (leaf-spine)"),
    Param("spines", 8, "", low=1, high=512, doc="spine switches (leaf-spine)"),
    Param("hosts_per_leaf", 16, "", low=1, high=256, doc="hosts (one GPU rank each) per leaf (leaf-spine)"),
    Param("k", 8, "", low=2, high=64, doc="fat-tree arity, even (k^3/4 hosts; fat-tree)"),
    Param("host_gbps", 100.0, "Gbit/s", low=0.0, low_inclusive=False, doc="host link capacity"),
    Param("uplink_gbps", 100.0, "Gbit/s", low=0.0, low_inclusive=False, doc="switch-to-switch link capacity"),
    Param("failed_uplinks", 0, "", low=0, doc="failed uplinks of leaf 0, to spines 0, 1, ... (leaf-spine)"),
    # not seeded: a treatment (every oversubscription sees the same hashings), and the points that leave it at 0 keep
    # the seeds they had before it existed
    Param(
        "oversubscription",
        0.0,
        "",
        low=0.0,
        high=8.0,
        seeded=False,
        doc="a leaf's host capacity over its uplink capacity; above 0 it sets uplink_gbps to host_gbps x "
        "hosts_per_leaf / (spines x oversubscription) (leaf-spine; 1: non-blocking); 0: uplink_gbps as given",
    ),
]
#: The ``step`` value that stands for the busiest step of the collective (:func:`workbench.fabric.busiest_step`: the
#: most bytes between leaves, the first of equals).
BUSIEST_STEP = -1
#: The step parameter's documentation, shared by the experiments that take one.
_STEP_DOC = f"step index (the last step if beyond); {BUSIEST_STEP}: the busiest (most bytes between leaves)"
#: The collective's parameters, shared by the fabric experiments.
COLLECTIVE_PARAMS = [
    Param("collective", "halving_doubling", choices=collectives.COLLECTIVES, doc="collective traffic pattern"),
    Param(
        "ranks", 0, "", low=0, doc="GPU ranks, one per host (0: as many as fit; a power of two for halving_doubling)"
    ),
    Param("placement", "linear", choices=collectives.PLACEMENTS, doc="which host each rank runs on"),
    Param("routing", "ecmp", choices=tuple(ROUTINGS), seeded=False, doc="how paths are chosen"),
]


def build_topology(
    *, topology: str, leaves: int, spines: int, hosts_per_leaf: int, k: int, host_gbps: float, uplink_gbps: float,
    failed_uplinks: int, oversubscription: float = 0.0,
):  # fmt: skip
    """The fabric of a point: a leaf-spine with ``failed_uplinks`` of leaf 0's uplinks failed, or a fat-tree. An
    ``oversubscription`` above 0 sets the uplink speed: ``host_gbps * hosts_per_leaf / (spines * oversubscription)``.

    Examples
    --------
    >>> t = build_topology(topology="leaf_spine", leaves=2, spines=4, hosts_per_leaf=4, k=8, host_gbps=100.0,
    ...                    uplink_gbps=50.0, failed_uplinks=1)
    >>> t.n_hosts, t.failed
    (8, ((0, 0),))
    >>> build_topology(topology="leaf_spine", leaves=2, spines=4, hosts_per_leaf=6, k=8, host_gbps=100.0,
    ...                uplink_gbps=50.0, failed_uplinks=0, oversubscription=1.5).uplink_gbps
    100.0
    """
    if topology == "fat_tree":
        if failed_uplinks or oversubscription:
            raise ValueError(
                "failed_uplinks and oversubscription apply to a leaf-spine only, got "
                f"failed_uplinks={failed_uplinks}, oversubscription={oversubscription:g} with a fat-tree"
            )
        return fat_tree(k, host_gbps=host_gbps, link_gbps=uplink_gbps)
    if oversubscription:
        uplink_gbps = hosts_per_leaf * host_gbps / (spines * oversubscription)
    if failed_uplinks >= spines:
        raise ValueError(
            f"failed_uplinks must be below spines ({spines}) so leaf 0 stays connected, got {failed_uplinks}"
        )
    return leaf_spine(
        leaves,
        spines,
        hosts_per_leaf,
        host_gbps=host_gbps,
        uplink_gbps=uplink_gbps,
        failed_links=[(0, s) for s in range(failed_uplinks)],
    )


def _pick_step(topo, steps: list[Step], step: int, placement: str = "linear", rng=None) -> Step:
    """Step ``step`` of ``steps`` (the last if beyond), or for :data:`BUSIEST_STEP` the busiest one with its ranks
    placed on ``topo``'s hosts by ``placement`` (a random placement drawn from a copy of ``rng``: the point's own
    draws are left as they are at a step index)."""
    if step != BUSIEST_STEP:
        return steps[min(step, len(steps) - 1)]
    if placement == "linear":
        return metrics.busiest_step(topo, steps)
    n = int(max(max(st.src.max(), st.dst.max()) for st in steps)) + 1
    hosts = collectives.place_ranks(topo, n, placement, copy.deepcopy(rng) if placement == "random" else None)
    placed = [st.on_hosts(hosts) for st in steps]
    return steps[placed.index(metrics.busiest_step(topo, placed))]


def _ranks(collective: str, ranks: int, n_hosts: int) -> int:
    if ranks == 0:
        ranks = collectives.ranks_that_fit(collective, n_hosts)
    if ranks > n_hosts:
        raise ValueError(f"ranks must be at most the fabric's {n_hosts} hosts, got {ranks}")
    if ranks < 2:
        raise ValueError(f"the fabric has {n_hosts} host(s); a collective needs at least 2 ranks")
    return collectives.check_ranks(collective, ranks, "ranks")


@experiment(
    "fabric-congestion",
    version="2",
    small={"leaves": 4, "spines": 4, "hosts_per_leaf": 4, "samples": 20, "routing": ["ecmp", "minimal"]},
    params=[
        *FABRIC_PARAMS,
        *COLLECTIVE_PARAMS,
        Param(
            "measure",
            "step",
            choices=("step", "worst_step", "collective_time", "step_vs_healthy"),
            doc="one step's congestion, the worst step's, the collective's bandwidth time (vs spraying), or one "
            "step's with failures vs spraying without",
        ),
        Param("step", 0, "", low=BUSIEST_STEP, doc="the step measures' and the connections' " + _STEP_DOC),
        Param("samples", 200, "", low=1, high=100_000, doc="Monte-Carlo hashings averaged"),
    ],
)
def fabric_congestion(*, collective, ranks, placement, routing, measure, step, samples, seed, **fabric):
    """Congestion (or collective time) ratio to ideal spraying of one collective under one routing."""
    topo = build_topology(**fabric)
    n = _ranks(collective, ranks, topo.n_hosts)
    rng_steps, rng_paths = spawn(seed, 2)
    steps = collectives.collective_steps(collective, n, 2**30, seed=rng_steps)
    chosen = _pick_step(topo, steps, step, placement, rng_paths)
    exact = np.nan
    # the models' routing argument is passed by position: a keyword rename there needs no change here
    if measure == "collective_time":
        ratio = planning.fabric_slowdown(
            topo, collective, n, routing, baseline="spray", samples=samples, seed=rng_paths, placement=placement
        )
    elif measure == "worst_step":
        ratio = metrics.worst_step_ratio(topo, steps, routing, samples=samples, seed=rng_paths, placement=placement)
    elif measure == "step_vs_healthy":
        host_step = as_host_step(topo, chosen, placement, rng_paths)
        healthy = build_topology(**{**fabric, "failed_uplinks": 0})
        ideal = metrics.max_congestion(healthy, link_loads(healthy, host_step, "spray"))
        ratio = metrics.sample_max_congestion(topo, host_step, routing, samples, rng_paths).mean() / ideal
    else:
        ratio = metrics.congestion_ratio(topo, chosen, routing, samples=samples, seed=rng_paths, placement=placement)
        if metrics.has_exact_ratio(topo, chosen, routing, placement=placement):
            exact = metrics.exact_congestion_ratio(topo, chosen, routing, placement=placement)
    connections = connections_per_host(topo, chosen, routing, placement=placement)
    return {
        "gpus": n,
        "step_label": chosen.label,
        "ratio": float(ratio),
        "ratio_exact": float(exact),
        "connections_per_host": int(connections.max()),
    }


@experiment(
    "collective-time-vs-size",
    version="1",
    small={"leaves": 2, "spines": 2, "hosts_per_leaf": 2, "routing": ["ecmp", "spray"]},
    params=[
        *FABRIC_PARAMS,
        *COLLECTIVE_PARAMS,
        Param("min_size_bytes", 2.0**16, "B", low=1.0, doc="smallest message"),
        Param("max_size_bytes", 2.0**34, "B", low=1.0, doc="largest message"),
        Param("sizes", 10, "", low=1, high=1000, doc="message sizes, evenly spaced in log"),
        Param("latency_s", 5e-6, "s", low=0.0, high=1.0, doc="latency per step"),
    ],
)
def collective_time_vs_size(
    *, collective, ranks, placement, routing, min_size_bytes, max_size_bytes, sizes, latency_s, seed, **fabric
):
    """Completion time of one collective under one routing at each message size (one hashing)."""
    if max_size_bytes < min_size_bytes:
        raise ValueError(f"max_size_bytes ({max_size_bytes:g}) must be at least min_size_bytes ({min_size_bytes:g})")
    topo = build_topology(**fabric)
    n = _ranks(collective, ranks, topo.n_hosts)
    sizes_bytes = np.geomspace(min_size_bytes, max_size_bytes, sizes)
    time_s = metrics.collective_time_vs_size(
        topo, collective, n, sizes_bytes, routing, seed=seed, latency_s=latency_s, placement=placement
    )
    return pd.DataFrame({"gpus": n, "size_bytes": sizes_bytes, "time_s": time_s})


#: The collective's message size, shared by the experiments that route bytes (a real number: a sweep may space it in
#: log; the collective moves it in whole bytes, :func:`whole_bytes`).
SIZE_PARAM = Param("size_bytes", 2.0**30, "B", low=1.0, label="message size", doc="message size of the collective")


def whole_bytes(size_bytes: float) -> int:
    """``SIZE_PARAM``'s value in whole bytes (the nearest; at least 1, its declared low)."""
    return max(1, round(size_bytes))


_STREAM = "a study names each job's stream: job_index -1 is job_seed's own stream, else its child job_index"
_NAMED = "the seed of the study's stream (" + _STREAM + ")"


def job_stream(job_seed: int, job_index: int) -> np.random.Generator:
    """The named stream of a study's job: ``job_seed``'s own stream for ``job_index = -1`` (what a model function
    given the int ``job_seed`` draws), else its child ``job_index`` (:func:`workbench._rng.keyed`)."""
    return keyed(job_seed) if job_index < 0 else keyed(job_seed, job_index)


#: A study's named stream: the sweep's seed is not used by the experiments that take these.
_JOB_STREAM = [
    Param("job_seed", 0, "", low=0, high=2**31 - 1, doc="seed of the study's stream (" + _STREAM + ")"),
    Param("job_index", -1, "", low=-1, high=2**31 - 1, doc="index of the job in its study (" + _STREAM + ")"),
]
_STEP_PARAMS = [
    Param("collective", "halving_doubling", choices=collectives.COLLECTIVES, doc="collective traffic pattern"),
    Param("ranks", 0, "", low=0, doc="GPU ranks, hosts 0.. (0: as many as fit; a power of two for halving_doubling)"),
    Param("step", 0, "", low=BUSIEST_STEP, doc=_STEP_DOC),
]


def _step_of(collective: str, ranks: int, step: int, topo, rng: np.random.Generator, size_bytes: int = 2**30):
    n = _ranks(collective, ranks, topo.n_hosts)
    return _pick_step(topo, collectives.collective_steps(collective, n, size_bytes, seed=rng), step)


@experiment(
    "step-congestion",
    small={"leaves": 4, "spines": 4, "hosts_per_leaf": 4, "samples": 20, "routing": ["ecmp", "minimal"]},
    params=[
        *FABRIC_PARAMS,
        *_STEP_PARAMS,
        Param("routing", "ecmp", choices=tuple(ROUTINGS), doc="how paths are chosen"),
        Param("samples", 200, "", low=1, high=100_000, doc="Monte-Carlo hashings averaged"),
        *_JOB_STREAM,
    ],
)
def step_congestion(*, collective, ranks, step, routing, samples, job_seed, job_index, seed, **fabric):
    """One collective step's max link congestion over ideal spraying (ranks on hosts 0, 1, ...) under one routing:
    the Monte-Carlo mean over ``samples`` hashings from the job's named stream, and the exact expectation where
    :func:`workbench.fabric.has_exact_ratio` holds. The stream draws the collective (a permutation's cycle), then the
    hashings."""
    del seed  # the job is named by job_seed and job_index
    topo = build_topology(**fabric)
    rng = job_stream(job_seed, job_index)
    chosen = _step_of(collective, ranks, step, topo, rng)
    exact = np.nan
    if metrics.has_exact_ratio(topo, chosen, routing):
        exact = metrics.exact_congestion_ratio(topo, chosen, routing)
    return {
        "gpus": int(max(chosen.src.max(), chosen.dst.max())) + 1,
        "step_label": chosen.label,
        "ratio": float(metrics.congestion_ratio(topo, chosen, routing, samples, rng)),
        "ratio_exact": float(exact),
    }


@experiment(
    "uplink-loads",
    small={"leaves": 2, "spines": 2, "hosts_per_leaf": 2, "routing": ["ecmp", "minimal"]},
    params=[
        *FABRIC_PARAMS,
        *_STEP_PARAMS,
        SIZE_PARAM,
        Param("routing", "ecmp", choices=tuple(ROUTINGS), doc="how paths are chosen"),
        *_JOB_STREAM,
    ],
)
def uplink_loads(*, collective, ranks, step, size_bytes, routing, job_seed, job_index, seed, **fabric):
    """Bytes on every leaf->spine link (one row per leaf and spine: ``leaf, spine, load_bytes``) when one step of a
    ``size_bytes`` collective (ranks on hosts 0, 1, ...) is routed once, hashed from the job's named stream; each row
    also names the step (``step_label``), the ranks (``gpus``), the fabric's ``hosts`` and its ``fabric_oversubscription`` (from the uplink speed when ``oversubscription``
    is 0)."""
    del seed  # the job is named by job_seed and job_index
    if fabric["topology"] != "leaf_spine":
        raise ValueError(f"uplink-loads maps a leaf-spine's leaf->spine links: topology must be leaf_spine, got "
                         f"{fabric['topology']!r}")  # fmt: skip
    topo = build_topology(**fabric)
    rng = job_stream(job_seed, job_index)
    chosen = _step_of(collective, ranks, step, topo, rng, whole_bytes(size_bytes))
    table = metrics.uplink_load_table(topo, {routing: link_loads(topo, chosen, routing, rng)})
    return table.drop(columns="routing").assign(
        step_label=chosen.label,
        gpus=int(max(chosen.src.max(), chosen.dst.max())) + 1,
        hosts=topo.n_hosts,
        fabric_oversubscription=float(topo.oversubscription),
    )


def _random_equal_demand(rng: np.random.Generator, topo) -> Step:
    """Every host sends a random number (0..3s) of equal flows to random other hosts; one size per source host."""
    n = topo.n_hosts
    counts = rng.integers(0, 3 * topo.spines + 1, size=n)
    src = np.repeat(np.arange(n), counts)
    dst = collectives.random_destinations(src, n, seed=rng)
    size = np.repeat(rng.integers(1, 10**6, size=n).astype(float), counts)
    return Step(src, dst, size)


@experiment(
    "minimal-split-vs-spray",
    small={"trials": [3, 5]},
    params=[
        Param("trials", 300, "", low=1, high=100_000, doc="random fabrics and demands (100,000: about 2 minutes)"),
        Param("job_seed", 7, "", low=0, high=2**31 - 1, doc="seed of the study's one stream"),
    ],
)
def minimal_split_vs_spray(*, trials, job_seed, seed):
    """The largest difference between the minimal splitting rule's and ideal spraying's load on any link, relative
    to the peak load, over ``trials`` random leaf-spines (2-8 leaves, 1-32 spines, 1-12 hosts per leaf) each
    carrying a random equal-size demand: an all-to-all, halving-doubling (a power of two of hosts), a double binary
    tree, a random permutation, or random equal flows per host. One stream (``job_seed``) draws every trial in turn;
    the sweep's seed is not used."""
    del seed  # the study is named by job_seed
    rng = keyed(job_seed)
    worst, links = 0.0, 0
    for _ in range(trials):  # each trial draws its fabric from the stream the previous one left
        leaves, spines, hosts = (int(v) for v in rng.integers([2, 1, 1], [9, 33, 13]))
        topo = leaf_spine(leaves, spines, hosts)
        n = topo.n_hosts
        kind = rng.integers(0, 5)
        if kind == 0 and n >= 2:
            steps = collectives.collective_steps("all_to_all", n, 10**6)
        elif kind == 1 and n >= 2 and n & (n - 1) == 0:
            steps = collectives.collective_steps("halving_doubling", n, 10**6)
        elif kind == 2 and n >= 2:
            steps = collectives.collective_steps("double_binary_tree", n, 10**6)
        elif kind == 3 and n >= 2:
            steps = collectives.collective_steps("permutation", n, 10**6, seed=rng)
        else:
            steps = [_random_equal_demand(rng, topo)]
        for st in steps:
            if st.n_flows == 0:
                continue
            a = subflow_loads(topo, st, "minimal")  # the rule's pieces, not link_loads' closed form
            b = link_loads(topo, st, "spray")
            worst = max(worst, float(np.abs(a - b).max()) / max(float(b.max()), 1.0))
            links += a.size
    return {"max_deviation": worst, "links_compared": links}


@experiment(
    "minimal-split-subflows",
    small={"spines": [1, 4]},
    params=[
        Param(
            "spines",
            16,
            "",
            low=1,
            high=512,
            doc="spines s (n = 1 .. 3s flows to one leaf are checked; 512: about 2 minutes)",
        )
    ],
)
def minimal_split_subflows(*, spines, seed):
    """Check the minimal splitting rule on ``n = 1 .. 3s`` equal flows from one host to another leaf: it makes
    ``n + r(s/g - 1)`` subflows (:func:`workbench.fabric.min_split_pieces`), ``s/g`` pieces is the smallest equal
    split whose round-robin deal balances the ``r`` leftovers (brute force over ``k = 1..s``), and every spine
    carries ``n/s`` flows. Deterministic."""
    del seed  # nothing is drawn
    s = spines
    topo = leaf_spine(2, s, 3 * s + 1)
    mismatches = 0
    for n in range(1, 3 * s + 1):
        src, dst = np.zeros(n, dtype=np.int64), topo.hosts_per_leaf + np.arange(n, dtype=np.int64)
        f, sp, b = split_subflows(topo, src, dst, np.full(n, 1.0))
        k_formula, total_formula = min_split_pieces(n, s)
        r = n % s
        k_brute = 1  # smallest k such that r flows cut into k equal pieces, dealt round-robin, load spines equally
        if r:
            for k in range(1, s + 1):
                if np.allclose(np.bincount(np.arange(r * k) % s, minlength=s) / k, r / s):
                    k_brute = k
                    break
        ok = f.size == total_formula and k_brute == k_formula
        ok &= np.allclose(np.bincount(sp, weights=b, minlength=s), n / s)
        mismatches += not ok
    return {"mismatches": int(mismatches), "cases": 3 * s}


@experiment(
    "ballsbins-max-load",
    version="1",
    small={"flows": [4, 16], "samples": 1000},
    params=[
        Param("flows", 16, "", low=1, high=10**6, doc="flows (balls) hashed"),
        Param("paths", 16, "", low=1, high=10**6, doc="paths (bins)"),
        Param("samples", 100_000, "", low=1, high=10**7, doc="Monte-Carlo hashings"),
        # not seeded: they replace the sweep's seed when set, and leave it as it was when not
        Param("job_seed", -1, "", low=-1, high=2**31 - 1, seeded=False, doc="-1: the sweep's seed; else " + _NAMED),
        Param("job_index", -1, "", low=-1, high=2**31 - 1, seeded=False, doc="the job's index (" + _STREAM + ")"),
    ],
)
def ballsbins_max_load(*, flows, paths, samples, job_seed, job_index, seed):
    """Expected maximum load of ``flows`` flows hashed uniformly on ``paths`` paths, exact and by Monte-Carlo (its
    mean and standard deviation over the hashings)."""
    loads = simulate_max_load(flows, paths, samples, seed if job_seed < 0 else job_stream(job_seed, job_index))
    return {
        "expected_max_exact": float(expected_max_load(flows, paths)),
        "expected_max_monte_carlo": float(loads.mean()),
        "max_load_std": float(loads.std(ddof=1)) if samples > 1 else float("nan"),
    }
