"""Packet-level scenarios on the simpy engine of :mod:`workbench.aqm.packet`: one bottleneck shared by long and
web-search flows, web-search flows across a leaf-spine fabric, and the FCT summary by size class.

Paths through a fabric come from :func:`workbench.fabric.routing.assign_paths` (:func:`fabric_paths`), so the packet
model routes flows exactly as the fabric models do.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._rng import Seed, generator
from .._validate import in_range, integer, nonnegative, one_of, positive
from ..fabric.collectives import Step, random_destinations
from ..fabric.routing import assign_paths
from ..fabric.topology import LeafSpine, leaf_spine, path_links
from .packet import Network, SimResult
from .pred import PredConfig
from .red import RedMarking
from .workload import SIZE_CLASSES, FlowSizeCDF, poisson_flows, size_class

__all__ = ["ROUTINGS", "dumbbell", "fabric_paths", "leaf_spine_fct", "fct_summary"]

#: Path choices the packet model supports (the :mod:`workbench.fabric.routing` names).
ROUTINGS = ("ecmp", "spray")


def fabric_paths(topology: LeafSpine, src, dst, routing: str = "ecmp", seed: Seed = None) -> list[tuple]:
    """Link-id paths of every flow ``src[i] -> dst[i]`` as the packet engine takes them.

    The spines come from :func:`workbench.fabric.routing.assign_paths` (ECMP: one random spine per flow; spray: every
    spine); a rack-local flow uses no spine. Each entry is a tuple of paths (one for ECMP and rack-local flows, one
    per spine for spraying), each path a tuple of link ids (host NIC, leaf uplink, spine downlink, host downlink).

    Examples
    --------
    >>> topo = leaf_spine(2, 2, 2)
    >>> fabric_paths(topo, [0, 0], [1, 3], "spray")
    [((0, 5),), ((0, 8, 14, 7), (0, 9, 15, 7))]
    """
    routing = one_of("routing", routing, ROUTINGS)
    if not isinstance(topology, LeafSpine):
        raise TypeError(f"topology must be a LeafSpine, got {type(topology).__name__}")
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    f = src.size
    # positional: the routing argument's name is changing in fabric.routing
    flow, spine, _ = assign_paths(topology, Step(src, dst, np.ones(f)), routing, generator(seed))
    order = np.argsort(flow, kind="stable")
    flow, spine = flow[order], spine[order]
    count = np.bincount(flow, minlength=f)
    local = count == 0
    row_flow = np.concatenate([flow, np.flatnonzero(local)])
    row_spine = np.concatenate([spine, np.full(int(local.sum()), -1)])
    by_flow = np.argsort(row_flow, kind="stable")
    links = path_links(topology, src[row_flow[by_flow]], dst[row_flow[by_flow]], row_spine[by_flow]).tolist()
    rows = [tuple(x for x in r if x >= 0) for r in links]
    bounds = np.concatenate([[0], np.cumsum(np.maximum(count, 1))]).tolist()
    return [tuple(rows[bounds[i] : bounds[i + 1]]) for i in range(f)]


def dumbbell(
    n_long_flows: int,
    marking: RedMarking | PredConfig,
    *,
    load: float = 0.0,
    capacity_gbps: float = 10.0,
    rtt_s: float = 100e-6,
    duration_s: float = 0.05,
    warmup_s: float | None = None,
    buffer_pkts: float = 1000.0,
    packet_bytes: int = 1500,
    sizes: FlowSizeCDF | None = None,
    chunk_pkts: int = 16,
    seed: Seed = None,
) -> SimResult:
    """One bottleneck shared by ``n_long_flows`` long DCTCP flows and Poisson web-search flows at ``load``.

    Every sender has its own NIC at the bottleneck's rate, so the only queue is the bottleneck's (link 0).

    Parameters
    ----------
    n_long_flows : int
        Long-lived flows (>= 0).
    marking : RedMarking or PredConfig
        Static thresholds or PRED on the bottleneck.
    load : float
        Offered load of short flows, fraction of capacity in ``[0, 1)``.
    capacity_gbps, rtt_s, buffer_pkts, packet_bytes : float
        Bottleneck capacity, base RTT, buffer and packet size.
    duration_s, warmup_s : float
        Simulated time and the initial part excluded from link statistics (default: a fifth).
    sizes : FlowSizeCDF, optional
        Short-flow size distribution (default web search).
    chunk_pkts : int
        Largest train per simpy event.
    seed : int, Generator or None

    Returns
    -------
    SimResult

    Examples
    --------
    >>> r = dumbbell(4, RedMarking(20, 200, 0.1), duration_s=0.01, seed=0)
    >>> bool(r.links.utilization.iloc[0] > 0.9)
    True
    """
    n_long_flows = integer("n_long_flows", n_long_flows, minimum=0)
    load = in_range("load", load, 0.0, 1.0, high_inclusive=False)
    duration_s = positive("duration_s", duration_s)
    warmup_s = duration_s / 5 if warmup_s is None else warmup_s
    rng = generator(seed)
    net = Network(
        [capacity_gbps],
        [True],
        marking,
        rtt_s=rtt_s,
        host_gbps=capacity_gbps,
        buffer_pkts=buffer_pkts,
        packet_bytes=packet_bytes,
        chunk_pkts=chunk_pkts,
        monitor_links=(0,),
        seed=rng,
    )
    if load > 0:
        flows = poisson_flows(load, capacity_gbps, duration_s, sizes=sizes, seed=rng)
    else:
        flows = pd.DataFrame({"start_s": np.zeros(0), "size_bytes": np.zeros(0, dtype=np.int64)})
    one = ((0,),)
    return net.run(
        duration_s=duration_s,
        long_paths=[one] * n_long_flows,
        short_starts_s=flows["start_s"].to_numpy(),
        short_sizes_bytes=flows["size_bytes"].to_numpy(),
        short_paths=[one] * len(flows),
        warmup_s=warmup_s,
        drain_s=0.0,
    )


def leaf_spine_fct(
    load: float,
    marking: RedMarking | PredConfig,
    *,
    topology=None,
    routing: str = "ecmp",
    rtt_s: float = 100e-6,
    duration_s: float = 0.02,
    drain_s: float | None = None,
    warmup_s: float | None = None,
    buffer_pkts: float = 1000.0,
    packet_bytes: int = 1500,
    sizes: FlowSizeCDF | None = None,
    chunk_pkts: int = 16,
    nic_marking: RedMarking | None = RedMarking(5, 20, 1.0),
    seed: Seed = None,
) -> SimResult:
    """Fabric-wide FCT: Poisson web-search flows between random host pairs of a leaf-spine fabric.

    Every switch output (leaf uplinks, spine downlinks, leaf-to-host ports) runs ``marking``. The flows of one host
    share its NIC, whose queue a fixed shallow ramp (``nic_marking``, 5 to 20 packets) keeps short, standing in for
    the host stack's TCP small queues.
    The topology and the flow -> link-id mapping come from :mod:`workbench.fabric.topology`.

    Parameters
    ----------
    load : float
        Offered load per host NIC, fraction in ``(0, 1)``.
    marking : RedMarking or PredConfig
    topology : LeafSpine, optional
        Default ``leaf_spine(8, 4, 16, host_gbps=10, uplink_gbps=40)``: 128 hosts, non-blocking.
    routing : {"ecmp", "spray"}
        Paths from :func:`fabric_paths`: ECMP pins each flow to one random spine; spraying spreads every train over
        all spines.
    rtt_s, duration_s, drain_s, buffer_pkts, packet_bytes : float
        Base RTT, arrival window, extra time for flows to finish (default ``duration_s``), buffer, packet size.
    warmup_s : float, optional
        Start of the window for link statistics (default a fifth of ``duration_s``); pass the same value as
        ``min_start_s`` to :func:`fct_summary` to leave out flows that started into an empty fabric.
    sizes : FlowSizeCDF, optional
        Flow sizes (default web search).
    chunk_pkts : int
    seed : int, Generator or None

    Returns
    -------
    SimResult
        Monitored links are the first leaf uplink and the first host downlink.

    Examples
    --------
    >>> from workbench.fabric.topology import leaf_spine
    >>> topo = leaf_spine(2, 2, 4, host_gbps=10, uplink_gbps=20)
    >>> r = leaf_spine_fct(0.3, RedMarking(20, 200, 0.1), topology=topo, duration_s=0.005, seed=0)
    >>> bool(r.flows.finished.any())
    True
    """
    load = in_range("load", load, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    routing = one_of("routing", routing, ROUTINGS)
    topo = leaf_spine(8, 4, 16, host_gbps=10.0, uplink_gbps=40.0) if topology is None else topology
    if not isinstance(topo, LeafSpine):
        raise TypeError(f"topology must be a LeafSpine, got {type(topo).__name__}")
    if topo.n_hosts < 2:
        raise ValueError(f"topology must have at least 2 hosts, got {topo.n_hosts}")
    duration_s = positive("duration_s", duration_s)
    drain_s = duration_s if drain_s is None else nonnegative("drain_s", drain_s)
    warmup_s = duration_s / 5 if warmup_s is None else warmup_s
    rng = generator(seed)
    n = topo.n_hosts
    flows = poisson_flows(load, topo.host_gbps * n, duration_s, sizes=sizes, seed=rng)
    f = len(flows)
    src = rng.integers(0, n, f)
    dst = random_destinations(src, n, seed=rng)
    cap = np.asarray(topo.capacity_gbps, dtype=float)
    marking_links = np.asarray(topo.link_kind) != 0  # every switch output marks; host NIC (host_up) does not
    if (cap <= 0).any():
        raise ValueError("topology has failed links; leaf_spine_fct needs a fabric without failures")
    paths = fabric_paths(topo, src, dst, routing, seed=rng)
    monitor = (int(topo.leaf_up(0, 0)), n + 0)
    net = Network(
        cap,
        marking_links,
        marking,
        rtt_s=rtt_s,
        host_gbps=topo.host_gbps,
        buffer_pkts=buffer_pkts,
        packet_bytes=packet_bytes,
        chunk_pkts=chunk_pkts,
        monitor_links=monitor,
        nic_marking=nic_marking,
        seed=rng,
    )
    return net.run(
        duration_s=duration_s,
        short_starts_s=flows["start_s"].to_numpy(),
        short_sizes_bytes=flows["size_bytes"].to_numpy(),
        short_paths=paths,
        warmup_s=warmup_s,
        drain_s=drain_s,
    )


def fct_summary(
    flows: pd.DataFrame, quantiles=(0.5, 0.99), *, min_start_s: float = 0.0, classes=SIZE_CLASSES
) -> pd.DataFrame:
    """FCT percentiles (seconds) of finished short flows by size class, plus the count and unfinished count.

    Only flows that started at or after ``min_start_s`` count (to leave out the warm-up of an empty network).
    ``classes`` is :data:`~workbench.aqm.workload.SIZE_CLASSES` (default) or
    :data:`~workbench.aqm.workload.VALIDATION_SIZE_CLASSES`.

    Examples
    --------
    >>> df = pd.DataFrame({"size_bytes": [1000, 2000, 5_000_000], "fct_s": [1e-4, 2e-4, 5e-3],
    ...                    "start_s": [0.0, 0.1, 0.2], "finished": [True, True, True],
    ...                    "is_long": [False, False, False]})
    >>> fct_summary(df)["count"].tolist()
    [2, 1, 0]
    """
    short = flows[~flows["is_long"].astype(bool) & (flows["start_s"] >= min_start_s)]
    cls = size_class(short["size_bytes"].to_numpy(), classes)
    rows = []
    for label, _, _ in classes:
        sel = short[(cls == label)]
        done = sel[sel["finished"].astype(bool)]["fct_s"].to_numpy(dtype=float)
        row = {"size_class": label, "count": int(done.size), "unfinished": int(len(sel) - done.size)}
        for q in quantiles:
            row[f"p{round(q * 100):g}_s"] = float(np.quantile(done, q)) if done.size else math.nan
        rows.append(row)
    return pd.DataFrame(rows)
