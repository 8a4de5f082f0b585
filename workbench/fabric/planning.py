"""Traffic planning (C4P) and its effect on training iteration time: a model built on link congestion ratios.

C4 (Dong et al. 2024, arXiv 2406.04594) observes that training traffic is a few long-lived, synchronized flows, so
ECMP hash collisions do not average out: two flows hashed onto the two ports of a bonded NIC collide with probability
1/2, and the pair then gets half the bandwidth, an expected 0.75 of ideal. C4P plans every flow's port and path
globally so that no link carries more than its share, which recovers the ideal. This module turns that into numbers.

Model and assumptions (stated here and in the notebook):

1. *Bandwidth-bound, synchronized steps.* A collective is a sequence of steps whose flows start together; a step
   ends when its most loaded link drains (fluid), so a collision anywhere slows the whole step. Latency is ignored
   (large messages).
2. *NIC bond.* Each GPU's NIC has ``ports`` bonded ports; each of its ``connections_per_nic`` long-lived connections
   is hashed to a port. Over ``n_nics`` NICs in a step the slowest decides, so the NIC slowdown is
   ``E[max over NICs of the max port load] / (connections/ports)``, exact by balls-into-bins with ``groups``.
   Planned routing balances the ports (slowdown 1).
3. *Fabric.* The step's flows cross a leaf-spine; the fabric slowdown is ``E[sum of step times under ECMP] /
   sum of step times planned`` from :mod:`workbench.fabric.metrics` (Monte-Carlo over hashings).
4. *Combination.* The communication slowdown is ``R = max(NIC slowdown, fabric slowdown)``, a lower bound on the
   expectation of the maximum.
5. *Iteration time.* With planned paths a fraction ``comm_share`` of the iteration is (non-overlapped)
   communication. ECMP stretches that part by ``R``: ``T_ecmp / T_planned = 1 + comm_share * (R - 1)``, so the
   runtime (throughput) gain of planning is ``comm_share * (R - 1)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._contracts import PROBABILITIES, AnyOf, Array, Choice, Real, accepts
from .._rng import Seed, spawn
from .._validate import array_1d, integer, one_of
from .ballsbins import expected_max_load
from .collectives import COLLECTIVES, collective_steps
from .metrics import max_congestion, sample_max_congestion
from .routing import Routing, as_host_step, link_loads, parse_routing
from .topology import LeafSpine, leaf_spine

__all__ = ["nic_bond_slowdown", "fabric_slowdown", "iteration_gain", "c4_gain_table"]


@accepts()
def nic_bond_slowdown(n_nics: int, connections_per_nic: int = 2, ports: int = 2) -> float:
    """Expected slowdown of a synchronized step from hashing connections onto bonded NIC ports (exact).

    Parameters
    ----------
    n_nics : int
        NICs taking part in the step (the step waits for the slowest), >= 1.
    connections_per_nic : int
        Long-lived equal connections per NIC, >= 1.
    ports : int
        Bonded ports per NIC, >= 1.

    Examples
    --------
    >>> nic_bond_slowdown(1)          # 2 flows on 2 ports: E[max] = 1.5 flows vs 1 ideal
    1.5
    >>> round(nic_bond_slowdown(64), 6)  # with 64 NICs some NIC almost surely collides
    2.0
    """
    n_nics = integer("n_nics", n_nics, minimum=1)
    c = integer("connections_per_nic", connections_per_nic, minimum=1)
    ports = integer("ports", ports, minimum=1)
    return expected_max_load(c, ports, groups=n_nics) / (c / ports)


@accepts(placement=AnyOf(Choice("linear", "strided", "random"), Array(integer=True, ge=0), optional=True))
def fabric_slowdown(
    topology: LeafSpine,
    collective: str,
    n_ranks: int,
    routing: str | Routing = "ecmp",
    baseline: str | Routing = "planned",
    samples: int = 200,
    seed: Seed = None,
    placement: Any = None,
    size_bytes: int = 2**30,
) -> float:
    """``E[sum over steps of repeat * T_step(routing)] / sum of repeat * T_step(baseline)`` (latency ignored).

    ``baseline`` is another routing (``"planned"``, or ``"spray"`` for the ideal).

    Examples
    --------
    >>> topo = leaf_spine(16, 16, 16)
    >>> fabric_slowdown(topo, "ring", 256, samples=50, seed=0)            # rank-ordered ring: no collisions
    1.0
    >>> 3.5 < fabric_slowdown(topo, "halving_doubling", 256, samples=200, seed=0) < 5.0
    True
    """
    one_of("collective", collective, COLLECTIVES)
    samples = integer("samples", samples, minimum=1)
    routing, baseline = parse_routing(routing), parse_routing(baseline)
    steps = collective_steps(collective, n_ranks, size_bytes, seed=seed)
    rngs = spawn(seed, len(steps))
    num = den = 0.0
    for st, rng in zip(steps, rngs):
        host_step = as_host_step(topology, st, placement, seed=seed)
        num += st.repeat * float(np.mean(sample_max_congestion(topology, host_step, routing, samples, rng)))
        den += st.repeat * max_congestion(topology, link_loads(topology, host_step, baseline, seed=rng))
    return num / den if den > 0 else 1.0


@accepts(comm_share=PROBABILITIES, slowdown=AnyOf(Real(ge=1.0), Array(ge=1.0)))
def iteration_gain(comm_share: Any, slowdown: Any) -> np.ndarray:
    """Runtime (throughput) gain of planned over ECMP routing: ``comm_share * (slowdown - 1)``; broadcasts.

    Examples
    --------
    >>> iteration_gain([0.1, 0.3], 1.5).round(3).tolist()
    [0.05, 0.15]
    """
    share = np.asarray(comm_share, dtype=float)
    if not np.all(np.isfinite(share)) or np.any((share < 0) | (share > 1)):
        raise ValueError(f"comm_share must be in [0, 1], got {comm_share!r}")
    r = np.asarray(slowdown, dtype=float)
    if not np.all(np.isfinite(r)) or np.any(r < 1.0 - 1e-12):
        raise ValueError(f"slowdown must be finite and >= 1, got {slowdown!r}")
    return share * (r - 1.0)


@accepts(gpu_counts=Array(integer=True, gt=0, min_size=1), comm_shares=Array(ge=0.0, le=1.0, min_size=1))
def c4_gain_table(
    gpu_counts: Any,
    comm_shares: Any,
    collective: str = "ring",
    connections_per_nic: int = 2,
    ports: int = 2,
    hosts_per_leaf: int = 16,
    spines: int = 16,
    samples: int = 100,
    seed: Seed = 0,
) -> pd.DataFrame:
    """The C4 model over GPU counts and communication shares.

    Each GPU count ``N`` is a leaf-spine of ``N / hosts_per_leaf`` leaves (``N`` a multiple of ``hosts_per_leaf``, or
    one leaf of ``N`` hosts when smaller), one bonded NIC per GPU, ranks placed in order, all links equal.

    Returns
    -------
    pandas.DataFrame
        One row per (gpus, comm_share): ``gpus, comm_share, nic_slowdown, fabric_slowdown, slowdown, gain``.

    Examples
    --------
    >>> t = c4_gain_table([64, 256], [0.3], samples=20)
    >>> t[["gpus", "nic_slowdown", "gain"]].round(3).to_dict("list")
    {'gpus': [64, 256], 'nic_slowdown': [2.0, 2.0], 'gain': [0.3, 0.3]}
    """
    gpus = array_1d("gpu_counts", gpu_counts, dtype=float, min_size=1, low=2)
    shares = array_1d("comm_shares", comm_shares, min_size=1, low=0.0, high=1.0)
    hosts_per_leaf = integer("hosts_per_leaf", hosts_per_leaf, minimum=1)
    rows = []
    rngs = spawn(seed, gpus.size)
    for n, rng in zip(gpus, rngs):
        n = integer("gpu_counts element", n, minimum=2)
        if n % hosts_per_leaf and n > hosts_per_leaf:
            raise ValueError(f"gpu_counts above hosts_per_leaf={hosts_per_leaf} must be multiples of it, got {n}")
        topo = leaf_spine(max(1, n // hosts_per_leaf), spines, min(n, hosts_per_leaf))
        nic = nic_bond_slowdown(n, connections_per_nic, ports)
        fab = fabric_slowdown(topo, collective, n, samples=samples, seed=rng)
        r = max(nic, fab)
        for share in shares:
            rows.append((n, float(share), nic, fab, r, float(share * (r - 1.0))))
    return pd.DataFrame(rows, columns=["gpus", "comm_share", "nic_slowdown", "fabric_slowdown", "slowdown", "gain"])
