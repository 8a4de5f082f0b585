"""Sweeps over fabric sizes, routings, steps and collectives, shared by the reproductions, the widgets and the
notebooks. Every sweep returns a tidy DataFrame (one row per sweep point, units or meaning in the column names).

Each sweep is a short loop over a handful of sweep points; everything inside a point is the vectorized model of
:mod:`workbench.fabric.routing`, :mod:`workbench.fabric.metrics` and :mod:`workbench.fabric.ballsbins`.

Seeds: :func:`ratio_vs_size` derives an independent stream per point with :func:`~workbench._rng.spawn`; the table
sweeps (:func:`max_load_table`, :func:`routing_table`, :func:`worst_step_table`, :func:`failure_table`,
:func:`time_vs_size_table`, :func:`worst_step_vs_gpus`) pass ``seed``
to every point as it is, so an int seed gives every point the same random stream (common random numbers: routings
are compared on the same draws).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._rng import Seed, spawn
from .._validate import integer, positive
from .ballsbins import expected_max_load, simulate_max_load
from .collectives import COLLECTIVES, Step, collective_steps, ranks_that_fit
from .metrics import (
    collective_time_vs_size,
    congestion_ratio,
    exact_congestion_ratio,
    has_exact_ratio,
    max_congestion,
    sample_max_congestion,
    worst_step_ratio,
)
from .planning import fabric_slowdown
from .routing import Routing, as_host_step, connections_per_host, link_loads, parse_routing
from .topology import LeafSpine, leaf_spine

__all__ = [
    "ratio_vs_size",
    "max_load_table",
    "routing_table",
    "worst_step_table",
    "failure_table",
    "time_vs_size_table",
    "connections_table",
    "worst_step_vs_gpus",
]


def ratio_vs_size(
    leaves: Sequence[int],
    spines: int,
    hosts_per_leaf: int,
    collective: str = "halving_doubling",
    routings: Sequence[str] = ("ecmp", "mp-8", "minimal"),
    step: int | None = 0,
    samples: int = 200,
    seed: Seed = 0,
    host_gbps: float = 100.0,
    uplink_gbps: float | None = None,
    failed_links: Sequence[tuple[int, int]] = (),
) -> pd.DataFrame:
    """Congestion ratio to ideal spraying per routing for fabrics of ``leaves[i]`` leaves, one rank per host.

    For ``halving_doubling`` the ranks are the largest power of two that fits, placed on the first hosts.

    With ``step`` an index, the ratio of that step's max congestion (Monte-Carlo mean); with ``step=None`` the
    ratio of the whole collective's bandwidth time (``fabric_slowdown`` with spraying as the baseline). Failed
    links that do not exist in a smaller fabric are ignored there.

    Returns
    -------
    pandas.DataFrame with columns ``leaves, gpus, routing, ratio``.

    Examples
    --------
    >>> t = ratio_vs_size([2, 4], 4, 4, routings=("ecmp", "minimal"), samples=50)
    >>> t.loc[t.routing == "minimal", "ratio"].round(6).tolist()
    [1.0, 1.0]
    """
    spines = integer("spines", spines, minimum=1)
    hosts_per_leaf = integer("hosts_per_leaf", hosts_per_leaf, minimum=1)
    samples = integer("samples", samples, minimum=1)
    host_gbps = positive("host_gbps", host_gbps)
    parsed = [parse_routing(r) for r in routings]
    rows = []
    for n_leaves, rng in zip(leaves, spawn(seed, len(leaves))):
        n_leaves = integer("leaves element", n_leaves, minimum=1)
        failed = [(a, b) for a, b in failed_links if a < n_leaves and b < spines]
        topo = leaf_spine(
            n_leaves, spines, hosts_per_leaf, host_gbps=host_gbps, uplink_gbps=uplink_gbps, failed_links=failed
        )
        n = ranks_that_fit(collective, topo.n_hosts)  # on the first hosts
        if n < 2:
            continue
        steps = collective_steps(collective, n, 2**30, seed=rng)
        for routing, srng in zip(parsed, spawn(rng, len(parsed))):
            if step is None:
                r = fabric_slowdown(topo, collective, n, routing, baseline="spray", samples=samples, seed=srng)
            else:
                r = congestion_ratio(topo, steps[min(step, len(steps) - 1)], routing, samples=samples, seed=srng)
            rows.append((n_leaves, n, str(routing), float(r)))
    return pd.DataFrame(rows, columns=["leaves", "gpus", "routing", "ratio"])


def max_load_table(cases: Sequence[tuple[int, int]], samples: int = 100_000, seed: Seed = 1) -> pd.DataFrame:
    """Exact vs Monte-Carlo expected maximum load of ``m`` flows hashed on ``n`` paths, per ``(m, n)`` case.

    Returns
    -------
    pandas.DataFrame with columns ``flows, paths, expected_max_exact, expected_max_monte_carlo``.

    Examples
    --------
    >>> max_load_table([(16, 16)], samples=20_000).round(2).to_dict("records")
    [{'flows': 16, 'paths': 16, 'expected_max_exact': 3.08, 'expected_max_monte_carlo': 3.08}]
    """
    samples = integer("samples", samples, minimum=1)
    rows = [
        (int(m), int(n), expected_max_load(m, n), float(simulate_max_load(m, n, samples, seed).mean()))
        for m, n in cases
    ]
    return pd.DataFrame(rows, columns=["flows", "paths", "expected_max_exact", "expected_max_monte_carlo"])


def routing_table(
    topology: LeafSpine,
    steps: Step | Mapping[str, Step],
    routings: Sequence[str | Routing] = ("ecmp", "mp-8", "minimal", "planned"),
    samples: int = 1000,
    seed: Seed = None,
) -> pd.DataFrame:
    """Congestion ratio to ideal spraying and connections per host, per (step, routing), on a leaf-spine or fat-tree.

    ``ratio_monte_carlo`` is :func:`~workbench.fabric.congestion_ratio` over ``samples`` hashings;
    ``ratio_exact`` is :func:`~workbench.fabric.exact_congestion_ratio` where it applies (deterministic routings;
    hashed ones on a step that pairs the leaves of a leaf-spine) and NaN elsewhere; ``connections_per_host`` is
    the busiest host's count. ``steps`` is one step (labelled by ``Step.label``) or a mapping label -> step.

    Returns
    -------
    pandas.DataFrame with columns ``step, routing, ratio_monte_carlo, ratio_exact, connections_per_host``.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> step = collective_steps("halving_doubling", 64, 2**20)[0]
    >>> t = routing_table(leaf_spine(4, 4, 16), step, ("ecmp", "minimal"), samples=2000, seed=0)
    >>> t[["routing", "ratio_exact", "connections_per_host"]].round(3).to_dict("list")
    {'routing': ['ecmp', 'minimal'], 'ratio_exact': [1.821, 1.0], 'connections_per_host': [1, 4]}
    """
    samples = integer("samples", samples, minimum=1)
    named = {steps.label: steps} if isinstance(steps, Step) else dict(steps)
    parsed = [parse_routing(r) for r in routings]
    rows = []
    for label, step in named.items():
        host_step = as_host_step(topology, step)
        for routing in parsed:
            exact = (
                exact_congestion_ratio(topology, host_step, routing)
                if has_exact_ratio(topology, host_step, routing)
                else np.nan
            )
            rows.append(
                (
                    label,
                    str(routing),
                    congestion_ratio(topology, host_step, routing, samples, seed),
                    exact,
                    int(connections_per_host(topology, host_step, routing).max()),
                )
            )
    return pd.DataFrame(rows, columns=["step", "routing", "ratio_monte_carlo", "ratio_exact", "connections_per_host"])


def worst_step_table(
    topology: LeafSpine,
    n_ranks: int,
    size_bytes: int = 2**30,
    collectives: Sequence[str] = COLLECTIVES,
    routings: Sequence[str | Routing] = ("ecmp", "mp-8", "minimal"),
    samples: int = 200,
    seed: Seed = None,
    steps_seed: Seed = None,
) -> pd.DataFrame:
    """The worst step's congestion ratio (:func:`~workbench.fabric.worst_step_ratio`) per (collective, routing).

    ``steps_seed`` draws the random collectives (permutation); ``seed`` the hashing.

    Returns
    -------
    pandas.DataFrame with columns ``collective, routing, worst_step_ratio``.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine
    >>> t = worst_step_table(leaf_spine(4, 4, 4), 16, collectives=("ring",), samples=20, seed=0)
    >>> t.worst_step_ratio.tolist()
    [1.0, 1.0, 1.0]
    """
    parsed = [parse_routing(r) for r in routings]
    rows = []
    for name in collectives:
        steps = collective_steps(name, n_ranks, size_bytes, seed=steps_seed)
        rows += [(name, str(r), worst_step_ratio(topology, steps, r, samples=samples, seed=seed)) for r in parsed]
    return pd.DataFrame(rows, columns=["collective", "routing", "worst_step_ratio"])


def worst_step_vs_gpus(
    gpu_counts: Sequence[int],
    cases: Sequence[tuple[str, str]],
    routings: Sequence[str | Routing] = ("ecmp", "planned", "spray"),
    hosts_per_leaf: int = 16,
    spines: int = 16,
    size_bytes: int = 2**30,
    samples: int = 100,
    seed: Seed = None,
    steps_seed: Seed = None,
) -> pd.DataFrame:
    """Worst-step congestion ratio per (GPU count, collective and placement, routing) on leaf-spines of
    ``gpus / hosts_per_leaf`` leaves (all links equal).

    ``cases`` are ``(collective, placement)`` pairs, the placement as in :func:`~workbench.fabric.place_ranks`
    (``"linear"``, ``"strided"``, ``"random"``). ``steps_seed`` draws the random collectives, ``seed`` the hashing.

    Returns
    -------
    pandas.DataFrame with columns ``gpus, collective, placement, routing, worst_step_ratio``.

    Examples
    --------
    >>> t = worst_step_vs_gpus([32], [("ring", "strided")], ("ecmp", "planned"), samples=20, seed=0)
    >>> t.round(3).worst_step_ratio.tolist()
    [3.4, 1.0]
    """
    hosts_per_leaf = integer("hosts_per_leaf", hosts_per_leaf, minimum=1)
    parsed = [parse_routing(r) for r in routings]
    rows = []
    for gpus in gpu_counts:
        gpus = integer("gpu_counts element", gpus, minimum=2)
        if gpus % hosts_per_leaf:
            raise ValueError(f"gpu_counts must be multiples of hosts_per_leaf={hosts_per_leaf}, got {gpus}")
        topo = leaf_spine(gpus // hosts_per_leaf, spines, hosts_per_leaf)
        for collective, placement in cases:
            steps = collective_steps(collective, gpus, size_bytes, seed=steps_seed)
            rows += [
                (
                    gpus,
                    collective,
                    placement,
                    str(r),
                    worst_step_ratio(topo, steps, r, samples=samples, seed=seed, placement=placement),
                )
                for r in parsed
            ]
    return pd.DataFrame(rows, columns=["gpus", "collective", "placement", "routing", "worst_step_ratio"])


def failure_table(
    topology: LeafSpine,
    failed_links: Sequence[tuple[int, int]],
    demand: Step,
    routings: Sequence[str | Routing] = ("ecmp", "mp-8", "spray", "minimal", "planned"),
    samples: int = 1000,
    seed: Seed = None,
    placement: Any = None,
) -> pd.DataFrame:
    """Mean max congestion with ``failed_links`` (``(leaf, spine)`` cables) per routing, relative to the ideal
    (spraying) of the same step on the fabric without failures.

    Returns
    -------
    pandas.DataFrame with columns ``routing, failed_links, time_vs_ideal``.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> step = collective_steps("halving_doubling", 64, 2**20)[0]
    >>> t = failure_table(leaf_spine(4, 4, 16), [(0, 0)], step, ("spray", "planned"))
    >>> t.round(3).to_dict("list")
    {'routing': ['spray', 'planned'], 'failed_links': [1, 1], 'time_vs_ideal': [1.333, 1.5]}
    """
    step = as_host_step(topology, demand, placement, seed)
    ideal = max_congestion(topology, link_loads(topology, step, "spray"))
    failed = topology.with_failures(list(failed_links))
    rows = [
        (
            str(r),
            len(failed.failed) - len(topology.failed),
            float(sample_max_congestion(failed, step, r, samples, seed).mean()) / ideal,
        )
        for r in (parse_routing(r) for r in routings)
    ]
    return pd.DataFrame(rows, columns=["routing", "failed_links", "time_vs_ideal"])


def time_vs_size_table(
    topology: LeafSpine,
    collective: str,
    n_ranks: int,
    sizes_bytes: Any,
    routings: Sequence[str | Routing] = ("ecmp", "mp-4", "minimal", "spray"),
    seed: Seed = None,
    latency_s: float = 5e-6,
) -> pd.DataFrame:
    """Collective completion time per (routing, message size) (:func:`~workbench.fabric.collective_time_vs_size`).

    Returns
    -------
    pandas.DataFrame with columns ``routing, size_bytes, time_s``.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine
    >>> t = time_vs_size_table(leaf_spine(2, 2, 2, host_gbps=100), "ring", 4, [1e8], ("spray",), latency_s=0.0)
    >>> t.round(6).to_dict("records")
    [{'routing': 'spray', 'size_bytes': 100000000.0, 'time_s': 0.012}]
    """
    frames = []
    for r in (parse_routing(r) for r in routings):
        t = collective_time_vs_size(topology, collective, n_ranks, sizes_bytes, r, seed=seed, latency_s=latency_s)
        frames.append(
            pd.DataFrame({"routing": str(r), "size_bytes": np.asarray(sizes_bytes, dtype=float), "time_s": t})
        )
    return pd.concat(frames, ignore_index=True)


def connections_table(
    topology: LeafSpine, demand: Step, routings: Sequence[str | Routing] = ("ecmp", "mp-8", "minimal")
) -> pd.DataFrame:
    """The busiest host's connection count per routing (:func:`~workbench.fabric.connections_per_host`).

    Returns
    -------
    pandas.DataFrame with columns ``routing, connections_per_host``.

    Examples
    --------
    >>> from workbench.fabric import leaf_spine, collective_steps
    >>> a2a = collective_steps("all_to_all", 512, 2**20)[0]
    >>> connections_table(leaf_spine(32, 16, 16), a2a, ("mp-8", "minimal")).connections_per_host.tolist()
    [4088, 511]
    """
    parsed = [parse_routing(r) for r in routings]
    rows = [(str(r), int(connections_per_host(topology, demand, r).max())) for r in parsed]
    return pd.DataFrame(rows, columns=["routing", "connections_per_host"])
