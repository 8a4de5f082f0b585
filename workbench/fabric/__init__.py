"""Datacenter fabric models: leaf-spine topology, collectives, routing, link loads and congestion.

Layers, bottom up:

- :mod:`~workbench.fabric.topology`: :func:`leaf_spine` and the compact directed-link numbering with
  :func:`path_links` (flows -> link ids by integer arithmetic); a networkx view for inspection.
- :mod:`~workbench.fabric.fattree`: the 3-tier k-ary :func:`fat_tree` with the same routings over path indices.
- :mod:`~workbench.fabric.collectives`: :func:`collective_steps` (ring, halving-doubling, double binary tree,
  all-to-all, permutation) as steps of equal-size flows; :func:`place_ranks`.
- :mod:`~workbench.fabric.routing`: routings ``ecmp``, ``mp-x``, ``spray``, ``minimal`` (the minimal splitting rule)
  and ``planned`` (C4P-style), parsed once into a :class:`Routing` record by :func:`parse_routing`;
  :func:`assign_paths` (flow -> spine subflows), :func:`hash_spines` (the ECMP/MP-x draw), :func:`link_loads` with
  ``np.bincount``; :func:`connections_per_host`; the minimal splitting rule itself (:func:`minimal_split_subflows`,
  :func:`min_split_pieces`) lives in the private ``_splitting`` module.
- :mod:`~workbench.fabric.metrics`: :func:`max_congestion`, Monte-Carlo :func:`sample_max_congestion`,
  :func:`congestion_ratio`, its exact balls-into-bins form :func:`exact_congestion_ratio`, collective times,
  :func:`uplink_load_table` (leaf->spine loads as a tidy table).
- :mod:`~workbench.fabric.ballsbins`: exact :func:`expected_max_load` of ``m`` flows hashed on ``n`` paths.
- :mod:`~workbench.fabric.planning`: the C4 iteration-time model built on the congestion ratios.
- :mod:`~workbench.fabric.flow_sizes`: flow-size distributions (:class:`FlowSizeCDF`, DCTCP's :func:`web_search`),
  drawn by the flow-level models here and by the packet engine in :mod:`workbench.aqm`.
- :mod:`~workbench.fabric.mitigation`: SWARM's flow-level failure-mitigation estimator and ranking.

``fabric`` is the lower of the two network packages: :mod:`workbench.aqm` (the packet engine) imports it, never the
reverse (``tests/test_layers.py``).

Parameter studies over these models (congestion vs fabric size x routing x collective, collective time vs message
size, balls-into-bins maximum load) are registered experiments in :mod:`workbench.experiments.fabric` (C4's traffic
planning in :mod:`workbench.experiments.c4`), run by :func:`workbench.experiments.sweep`.
"""

from .ballsbins import (
    expected_effective_bandwidth,
    expected_max_load,
    max_load_cdf,
    max_load_pmf,
    simulate_max_load,
)
from .collectives import (
    COLLECTIVES,
    PLACEMENTS,
    Step,
    check_ranks,
    collective_steps,
    place_ranks,
    random_destinations,
    ranks_that_fit,
)
from .fattree import FatTree, fat_tree, fat_tree_n_paths, fat_tree_path_links
from .metrics import (
    busiest_step,
    collective_time_s,
    collective_time_vs_size,
    congestion_ratio,
    exact_congestion_ratio,
    has_exact_ratio,
    link_times_s,
    max_congestion,
    sample_max_congestion,
    spine_link_matrix,
    uplink_load_table,
    worst_step_ratio,
)
from .planning import c4_gain_table, fabric_slowdown, iteration_gain, nic_bond_slowdown
from .routing import (
    ROUTINGS,
    Routing,
    as_host_step,
    assign_paths,
    connections_per_host,
    hash_spines,
    link_loads,
    min_split_pieces,
    minimal_split_subflows,
    parse_routing,
    subflow_loads,
)
from .topology import LINK_KINDS, LeafSpine, leaf_spine, path_links

__all__ = [
    "COLLECTIVES",
    "LINK_KINDS",
    "LeafSpine",
    "PLACEMENTS",
    "ROUTINGS",
    "Routing",
    "Step",
    "as_host_step",
    "assign_paths",
    "check_ranks",
    "collective_steps",
    "collective_time_s",
    "collective_time_vs_size",
    "congestion_ratio",
    "worst_step_ratio",
    "connections_per_host",
    "expected_effective_bandwidth",
    "expected_max_load",
    "FatTree",
    "fat_tree",
    "fat_tree_n_paths",
    "fat_tree_path_links",
    "fabric_slowdown",
    "iteration_gain",
    "c4_gain_table",
    "nic_bond_slowdown",
    "leaf_spine",
    "link_loads",
    "subflow_loads",
    "link_times_s",
    "max_congestion",
    "max_load_cdf",
    "max_load_pmf",
    "min_split_pieces",
    "minimal_split_subflows",
    "parse_routing",
    "hash_spines",
    "path_links",
    "place_ranks",
    "random_destinations",
    "sample_max_congestion",
    "simulate_max_load",
    "spine_link_matrix",
    "uplink_load_table",
    "exact_congestion_ratio",
    "has_exact_ratio",
    "busiest_step",
    "ranks_that_fit",
]
