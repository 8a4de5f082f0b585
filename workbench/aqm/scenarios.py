"""Packet-level scenarios, all run packet by packet on :func:`workbench.aqm.perpacket.simulate_packets`: one
bottleneck shared by long and web-search flows (:func:`dumbbell`), web-search flows across a leaf-spine
(:func:`leaf_spine_fct`), alone or with long-lived background flows or incast bursts added (:func:`leaf_spine_mix`);
and the FCT summary by size class.

The scenarios run the engine's SACK-like loss recovery (``loss_recovery=SCENARIO_LOSS_RECOVERY``: a loss found by
three later ACKs or one fixed timeout after the drop, unbounded NIC queues), the model PRED's studies were measured
on (their claim notes and notebook 05); the NewReno variant with the fabric-websearch-128 README's conventions
(initial RTO, 1,000-packet NICs, byte-counted buffers) is what replays of recorded networks use. Moving the PRED
studies onto it changes their senders (a lone unmarked sender's window then outgrows a 1,000-packet NIC queue: the
README's network bounds it with a slow-start threshold, the studies do not) and is a study of its own. Replayed on
the packet engine's validation workloads, the SACK-like senders lie within 15% of the ns-3/htsim envelope on 17 of
90 statistics (250 ms timeouts set their p99s: ``docs/packet_validation.md``); the scenarios' panels show that
check (the fidelity scoreboard's ``packets-sack``).

Paths through a fabric come from :func:`workbench.fabric.routing.assign_paths` (:func:`fabric_paths`), so the packet
model routes flows exactly as the fabric models do.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from .._contracts import Array, Items, Opaque, Real, accepts
from .._rng import Seed, generator
from .._validate import in_range, integer, nonnegative, one_of, positive
from ..fabric.collectives import Step, random_destinations
from ..fabric.routing import assign_paths
from ..fabric.topology import LeafSpine, leaf_spine, path_links
from .perpacket import check_flow_paths, check_packets, data_packets, simulate_packets
from .pred import PredConfig
from .red import RedMarking
from .result import SimResult
from .workload import SIZE_CLASSES, FlowSizeCDF, poisson_flows, size_class, web_search

#: Loss recovery of the PRED scenarios' senders (see the module docstring).
SCENARIO_LOSS_RECOVERY = "sack"

__all__ = [
    "SCENARIO_LOSS_RECOVERY",
    "ROUTINGS",
    "MIXES",
    "dumbbell",
    "fabric_paths",
    "ack_paths",
    "leaf_spine_fct",
    "leaf_spine_mix",
    "fct_summary",
]

#: Path choices the packet model supports (the :mod:`workbench.fabric.routing` names).
ROUTINGS = ("ecmp", "spray")

#: Workload mixes of :func:`leaf_spine_mix`: web search alone, plus long-lived background flows, plus incast bursts.
MIXES = ("websearch", "background", "incast")

#: Size of an acknowledgement (bytes) in :func:`leaf_spine_mix`; ACKs queue behind data on the reverse path.
ACK_BYTES = 40


def _engine_flows(load, capacity_gbps, duration_s, packet_bytes, lower, *, sizes=None, seed=None) -> pd.DataFrame:
    """:func:`poisson_flows` for the packet engine, refused before a flow is drawn when their expected number alone
    is past :data:`~workbench.aqm.perpacket.MAX_FLOW_PATHS` (every flow takes a path; at 3,654 hosts of 58 Gbit/s,
    load 0.86 and 8.6 s, the draw of ~120 M web-search flows passed 6 GB before the paths were counted), or their
    expected packets past :func:`~workbench.aqm.perpacket.packet_limit` (``lower``: what the caller's user lowers)."""
    mean_bytes = (web_search() if sizes is None else sizes).mean_bytes
    expected = load * capacity_gbps * 1e9 / (8.0 * mean_bytes) * duration_s
    if np.isfinite(expected) and expected > 0:
        check_flow_paths(int(expected), int(expected))
        check_packets(expected * mean_bytes / packet_bytes, lower)
    return poisson_flows(load, capacity_gbps, duration_s, sizes=sizes, seed=seed)


@accepts(src=Array(integer=True, ge=0), dst=Array(integer=True, ge=0))
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
    check_flow_paths(f, f * (topology.spines if routing == "spray" else 1))  # at most: rack-local flows take one
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


@accepts(src=Array(integer=True, ge=0), dst=Array(integer=True, ge=0))
def ack_paths(topology: LeafSpine, src, dst, paths: list[tuple]) -> list[tuple]:
    """The reverse (ACK) paths of :func:`fabric_paths`' ``paths``: each path back from ``dst`` to ``src`` through the
    same spine.

    Examples
    --------
    >>> topo = leaf_spine(2, 2, 2)
    >>> ack_paths(topo, [0, 0], [1, 3], fabric_paths(topo, [0, 0], [1, 3], "spray"))
    [((1, 4),), ((3, 10, 12, 4), (3, 11, 13, 4))]
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    k = np.array([len(p) for p in paths], dtype=np.int64)
    flat = [q for p in paths for q in p]
    spine = np.array([(q[1] - topology.leaf_up_base) % topology.spines if len(q) == 4 else -1 for q in flat])
    back = path_links(topology, np.repeat(dst, k), np.repeat(src, k), spine.astype(np.int64)).tolist()
    rows = [tuple(x for x in r if x >= 0) for r in back]
    bounds = np.concatenate([[0], np.cumsum(k)]).tolist()
    return [tuple(rows[bounds[i] : bounds[i + 1]]) for i in range(len(paths))]


#: Retransmission timeout of the PRED scenarios (:func:`dumbbell`, :func:`leaf_spine_fct`, :func:`leaf_spine_mix`):
#: 10 ms, a datacenter minimum RTO (PRED's simulations do not publish theirs).
MIN_RTO_S = 10e-3


@accepts()
def dumbbell(
    n_long_flows: int,
    marking: RedMarking | PredConfig,
    *,
    load: float = 0.0,
    capacity_gbps: float = 10.0,
    rtt_s: float = 100e-6,
    duration_s: float = 0.05,
    warmup_s: float | None = None,
    buffer_pkts: int = 1000,
    packet_bytes: int = 1500,
    sizes: FlowSizeCDF | None = None,
    long_bytes: int | None = None,
    min_rto_s: float = MIN_RTO_S,
    seed: Seed = None,
) -> SimResult:
    """One bottleneck shared by ``n_long_flows`` long DCTCP flows and Poisson web-search flows at ``load``, run
    packet by packet (:func:`workbench.aqm.perpacket.simulate_packets`).

    The network: every flow has a sender of its own whose NIC (a FIFO at the bottleneck's rate) feeds the bottleneck
    (link 0, the only switch port: it marks with ``marking`` and drops beyond ``buffer_pkts``); ACKs (40 B) return
    through the receiver's NIC and a reverse link to each sender. Every link has a propagation delay of
    ``rtt_s / 4`` (two links each way), so the base RTT is ``rtt_s`` plus serialization.

    The engine runs every flow to completion, so a "long" flow is a large one: ``long_bytes`` each (default twice
    its fair share of the bottleneck over ``duration_s``, ``2 C duration_s / n_long_flows``), started at random
    within the first RTT. With any load of short flows its share is smaller, so it is still sending when the window
    closes unless the long flows share very unfairly: ``flows.is_long`` and their ``fct_s`` tell.

    Parameters
    ----------
    n_long_flows : int
        Long flows (>= 0).
    marking : RedMarking or PredConfig
        Static thresholds or PRED on the bottleneck.
    load : float
        Offered load of short flows, fraction of capacity in ``[0, 1)``.
    capacity_gbps, rtt_s : float
        Bottleneck (and NIC) capacity and base RTT.
    duration_s, warmup_s : float
        Arrival window of short flows and the initial part excluded from link statistics (default: a fifth).
    buffer_pkts, packet_bytes : int
        Bottleneck buffer (drop-tail) and full packet size.
    sizes : FlowSizeCDF, optional
        Short-flow size distribution (default web search).
    long_bytes : int, optional
        Size of every long flow (default above).
    min_rto_s : float
        Senders' retransmission timeout.
    seed : int, Generator or None

    Returns
    -------
    SimResult
        ``flows`` with ``is_long``; ``links``: the bottleneck's ``utilization`` and time-mean queue (packets) over
        ``[warmup_s, duration_s]``, ``marks`` and ``drops``.

    Examples
    --------
    >>> r = dumbbell(4, RedMarking(20, 200, 0.1), duration_s=0.01, seed=0)
    >>> bool(r.links.utilization.iloc[0] > 0.9)
    True
    """
    n_long = integer("n_long_flows", n_long_flows, minimum=0)
    load = in_range("load", load, 0.0, 1.0, high_inclusive=False)
    cap = positive("capacity_gbps", capacity_gbps)
    rtt_s = positive("rtt_s", rtt_s)
    duration_s = positive("duration_s", duration_s)
    warmup_s = (
        duration_s / 5 if warmup_s is None else in_range("warmup_s", warmup_s, 0.0, duration_s, high_inclusive=False)
    )
    packet_bytes = integer("packet_bytes", packet_bytes, minimum=64)
    lower = "lower duration_s, capacity_gbps or load"
    rng = generator(seed)
    if load > 0:
        flows = _engine_flows(load, cap, duration_s, packet_bytes, lower, sizes=sizes, seed=rng)
    else:
        flows = pd.DataFrame({"start_s": np.zeros(0), "size_bytes": np.zeros(0, dtype=np.int64)})
    long_bytes_given = long_bytes
    if long_bytes is None:
        long_bytes = math.ceil(2.0 * cap * 1e9 / 8.0 * duration_s / max(n_long, 1))
    long_bytes = integer("long_bytes", long_bytes, minimum=1)
    start = np.concatenate([rng.uniform(0.0, rtt_s, n_long), flows["start_s"].to_numpy(dtype=float)])
    size = np.concatenate([np.full(n_long, long_bytes, dtype=np.int64), flows["size_bytes"].to_numpy(np.int64)])
    check_packets(data_packets(size, packet_bytes), lower + ("" if long_bytes_given is None else " (or long_bytes)"))
    f = start.size
    # link 0: the bottleneck; 1: the receiver's NIC (ACKs); 2 + 2i: sender i's NIC; 3 + 2i: the ACKs' way back to i
    nic = 2 + 2 * np.arange(f)
    data = [((int(i), 0),) for i in nic]
    acks = [((1, int(i) + 1),) for i in nic]
    r = simulate_packets(
        np.full(2 + 2 * f, cap),
        np.arange(2 + 2 * f) == 0,
        marking,
        data,
        acks,
        start,
        size,
        link_delay_s=rtt_s / 4,
        buffer_pkts=buffer_pkts,
        loss_recovery=SCENARIO_LOSS_RECOVERY,
        packet_bytes=packet_bytes,
        ack_bytes=ACK_BYTES,
        min_rto_s=min_rto_s,
        rtt_s=rtt_s,
        window_s=(warmup_s, duration_s),
        seed=rng,
    )
    return dataclasses.replace(r, flows=r.flows.assign(is_long=np.arange(f) < n_long))


@accepts(topology=Opaque("a LeafSpine, or None for the default fabric"))
def leaf_spine_fct(
    load: float,
    marking: RedMarking | PredConfig,
    *,
    topology=None,
    routing: str = "ecmp",
    rtt_s: float = 100e-6,
    duration_s: float = 0.02,
    warmup_s: float | None = None,
    buffer_pkts: int = 1000,
    packet_bytes: int = 1500,
    sizes: FlowSizeCDF | None = None,
    min_rto_s: float = MIN_RTO_S,
    seed: Seed = None,
) -> SimResult:
    """Fabric-wide FCT: Poisson web-search flows between random host pairs of a leaf-spine fabric, run packet by
    packet (:func:`workbench.aqm.perpacket.simulate_packets`) to completion.

    Every switch output (leaf uplinks, spine downlinks, leaf-to-host ports) marks with ``marking`` and drops beyond
    ``buffer_pkts``; host NICs are FIFOs shared by the host's flows (they neither mark nor drop); every packet is
    ACKed by a 40 B ACK on the reverse path. Every link has a propagation delay of ``rtt_s / 8``, so an inter-rack
    path (four links each way) has a base RTT of ``rtt_s`` plus serialization. The topology and the flow -> link-id
    mapping come from :mod:`workbench.fabric.topology` (:func:`fabric_paths`).

    Parameters
    ----------
    load : float
        Offered load per host NIC, fraction in ``(0, 1)``.
    marking : RedMarking or PredConfig
    topology : LeafSpine, optional
        Default ``leaf_spine(8, 4, 16, host_gbps=10, uplink_gbps=40)``: 128 hosts, non-blocking.
    routing : {"ecmp", "spray"}
        Paths from :func:`fabric_paths`: ECMP pins each flow to one random spine; spraying sends a flow's packet
        ``i`` through spine ``i mod spines``.
    rtt_s, duration_s : float
        Base RTT of an inter-rack path, arrival window.
    warmup_s : float, optional
        Start of the window for link statistics (default a fifth of ``duration_s``); pass the same value as
        ``min_start_s`` to :func:`fct_summary` to leave out flows that started into an empty fabric.
    buffer_pkts, packet_bytes : int
        Switch buffer per port and full packet size.
    sizes : FlowSizeCDF, optional
        Flow sizes (default web search).
    min_rto_s : float
        Senders' retransmission timeout.
    seed : int, Generator or None

    Returns
    -------
    SimResult
        ``flows`` (with ``is_long``, all false) and ``links``: every switch port's utilization and time-mean queue
        over ``[warmup_s, duration_s]``.

    Examples
    --------
    >>> from workbench.fabric.topology import leaf_spine
    >>> topo = leaf_spine(2, 2, 4, host_gbps=10, uplink_gbps=20)
    >>> r = leaf_spine_fct(0.3, RedMarking(20, 200, 0.1), topology=topo, duration_s=0.005, seed=0)
    >>> bool(r.flows.finished.all())
    True
    """
    load = in_range("load", load, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    routing = one_of("routing", routing, ROUTINGS)
    topo = leaf_spine(8, 4, 16, host_gbps=10.0, uplink_gbps=40.0) if topology is None else topology
    if not isinstance(topo, LeafSpine):
        raise TypeError(f"topology must be a LeafSpine, got {type(topo).__name__}")
    if topo.n_hosts < 2:
        raise ValueError(f"topology must have at least 2 hosts, got {topo.n_hosts}")
    rtt_s = positive("rtt_s", rtt_s)
    duration_s = positive("duration_s", duration_s)
    warmup_s = (
        duration_s / 5 if warmup_s is None else in_range("warmup_s", warmup_s, 0.0, duration_s, high_inclusive=False)
    )
    cap = np.asarray(topo.capacity_gbps, dtype=float)
    if (cap <= 0).any():
        raise ValueError("topology has failed links; leaf_spine_fct needs a fabric without failures")
    packet_bytes = integer("packet_bytes", packet_bytes, minimum=64)
    rng = generator(seed)
    n = topo.n_hosts
    lower = "lower duration_s, load, the hosts or their link speed"
    flows = _engine_flows(load, topo.host_gbps * n, duration_s, packet_bytes, lower, sizes=sizes, seed=rng)
    check_packets(data_packets(flows["size_bytes"], packet_bytes), lower)
    src = rng.integers(0, n, len(flows))
    dst = random_destinations(src, n, seed=rng)
    paths = fabric_paths(topo, src, dst, routing, seed=rng)
    r = simulate_packets(
        cap,
        np.asarray(topo.link_kind) != 0,  # every switch output marks; host NICs (host_up) do not
        marking,
        paths,
        ack_paths(topo, src, dst, paths),
        flows["start_s"].to_numpy(dtype=float),
        flows["size_bytes"].to_numpy(dtype=np.int64),
        link_delay_s=rtt_s / 8,
        buffer_pkts=buffer_pkts,
        loss_recovery=SCENARIO_LOSS_RECOVERY,
        packet_bytes=packet_bytes,
        ack_bytes=ACK_BYTES,
        min_rto_s=min_rto_s,
        rtt_s=rtt_s,
        window_s=(warmup_s, duration_s),
        seed=rng,
    )
    return dataclasses.replace(r, flows=r.flows.assign(is_long=False))


def _distinct_senders(rng: np.random.Generator, n_hosts: int, receivers: np.ndarray, fanin: int) -> np.ndarray:
    """``fanin`` distinct senders for each receiver (never the receiver itself), shape ``(len(receivers), fanin)``."""
    pick = np.argsort(rng.random((receivers.size, n_hosts - 1)), axis=1)[:, :fanin]
    return pick + (pick >= receivers[:, None])


@accepts()
def leaf_spine_mix(
    marking: RedMarking | PredConfig,
    *,
    mix: str = "websearch",
    load: float = 0.9,
    topology: LeafSpine | None = None,
    link_delay_s: float = 10e-6,
    buffer_pkts: int = 1000,
    packet_bytes: int = 1500,
    duration_s: float = 0.02,
    drain_s: float | None = None,
    background_receivers: int = 16,
    background_flows_per_receiver: int = 8,
    incast_fanin: int = 16,
    incast_bytes: int = 64_000,
    incast_rate_hz: float = 2000.0,
    min_rto_s: float = MIN_RTO_S,
    seed: Seed = None,
) -> SimResult:
    """Web-search flows at ``load`` across a leaf-spine, alone or with long-lived background flows or incast bursts,
    run packet by packet.

    The engine is the validated per-packet one (:func:`workbench.aqm.perpacket.simulate_packets`: every data packet
    and every 40-byte ACK through every hop's FIFO, DCTCP senders with IW 10), on the network of
    :mod:`workbench.aqm.replay`: every link at the host rate with ``link_delay_s`` one way, every switch output
    marking with ``marking`` and holding ``buffer_pkts`` (drop-tail), host NICs shared FIFOs, per-flow random ECMP.
    Every flow runs to completion.

    ``mix`` adds, on top of the same web-search flows (they are drawn first from ``seed``, so every mix and marking
    at a seed carries identical web-search flows):

    * ``"websearch"``: nothing;
    * ``"background"``: ``background_flows_per_receiver`` long-lived DCTCP flows into each of
      ``background_receivers`` random hosts, from random other hosts (a standing many-flow bottleneck at those
      hosts' downlinks, the regime where a static ramp's queue grows with the flow count). They start at 0 with
      ``host rate x (duration_s + drain_s)`` bytes each, more than their sender's NIC can send before
      ``duration_s + drain_s``, so every one of them is still sending through the arrival window and the drain;
    * ``"incast"``: Poisson bursts at ``incast_rate_hz``, each ``incast_fanin`` distinct senders answering one
      random receiver with ``incast_bytes`` each at the same instant (partition-aggregate responses).

    Parameters
    ----------
    marking : RedMarking or PredConfig
    mix : {"websearch", "background", "incast"}
    load : float
        Web-search load per host NIC, in ``(0, 1)``.
    topology : LeafSpine, optional
        Default ``leaf_spine(16, 8, 8)`` at 10 Gbit/s everywhere: 128 hosts, non-blocking (the shape of the
        ``fabric-websearch-128`` network).
    link_delay_s : float
        One-way propagation per link.
    buffer_pkts, packet_bytes : int
        Switch buffer and full packet size.
    duration_s : float
        Arrival window; FCT statistics should leave out its first fifth (``min_start_s=duration_s / 5`` in
        :func:`fct_summary`).
    drain_s : float, optional
        How long after the arrival window the background flows keep sending at least (default ``duration_s``).
    background_receivers, background_flows_per_receiver, incast_fanin, incast_bytes, incast_rate_hz
        The background and incast traffic (ignored by the other mixes).
    min_rto_s : float
        Senders' retransmission timeout.
    seed : int, Generator or None

    Returns
    -------
    SimResult
        ``flows`` (``flow_id, size_bytes, start_s, fct_s, finished, retransmits, timeouts, marked_acks, is_long,
        kind``; ``kind`` is ``"long"``, ``"websearch"`` or ``"incast"``) and ``links``: every switch port's
        ``utilization`` and time-mean queue from the end of the warm-up (a fifth of ``duration_s``) to the end of
        the arrival window.

    Examples
    --------
    >>> topo = leaf_spine(2, 2, 4, host_gbps=10, uplink_gbps=10)
    >>> r = leaf_spine_mix(RedMarking.step(15), mix="incast", topology=topo, duration_s=0.004, incast_fanin=3,
    ...                    seed=0)
    >>> sorted(set(r.flows.kind)), bool(r.flows.finished.all())
    (['incast', 'websearch'], True)
    """
    mix = one_of("mix", mix, MIXES)
    load = in_range("load", load, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    topo = leaf_spine(16, 8, 8, host_gbps=10.0, uplink_gbps=10.0) if topology is None else topology
    if not isinstance(topo, LeafSpine):
        raise TypeError(f"topology must be a LeafSpine, got {type(topo).__name__}")
    n = topo.n_hosts
    if n < 2:
        raise ValueError(f"topology must have at least 2 hosts, got {n}")
    cap = np.asarray(topo.capacity_gbps, dtype=float)
    if (cap <= 0).any():
        raise ValueError("topology has failed links; leaf_spine_mix needs a fabric without failures")
    link_delay_s = nonnegative("link_delay_s", link_delay_s)
    duration_s = positive("duration_s", duration_s)
    drain_s = duration_s if drain_s is None else nonnegative("drain_s", drain_s)
    packet_bytes = integer("packet_bytes", packet_bytes, minimum=64)
    rng = generator(seed)
    lower = "lower duration_s, load, the hosts or their link speed"
    web = _engine_flows(load, topo.host_gbps * n, duration_s, packet_bytes, lower, seed=rng)
    src = rng.integers(0, n, len(web))
    dst = random_destinations(src, n, seed=rng)
    start, size = web["start_s"].to_numpy(), web["size_bytes"].to_numpy()
    kind = np.full(len(web), "websearch", dtype=object)
    if mix == "background":
        m = integer("background_receivers", background_receivers, minimum=1, maximum=n)
        k = integer("background_flows_per_receiver", background_flows_per_receiver, minimum=1, maximum=n - 1)
        receivers = rng.permutation(n)[:m]
        long_bytes = math.ceil(topo.host_gbps * 1e9 / 8 * (duration_s + drain_s))
        src = np.concatenate([_distinct_senders(rng, n, receivers, k).ravel(), src])
        dst = np.concatenate([np.repeat(receivers, k), dst])
        start = np.concatenate([np.zeros(m * k), start])
        size = np.concatenate([np.full(m * k, long_bytes, dtype=np.int64), size])
        kind = np.concatenate([np.full(m * k, "long", dtype=object), kind])
    elif mix == "incast":
        fanin = integer("incast_fanin", incast_fanin, minimum=1, maximum=n - 1)
        burst_bytes = integer("incast_bytes", incast_bytes, minimum=1)
        rate = positive("incast_rate_hz", incast_rate_hz)
        bursts = int(rng.poisson(rate * duration_s))
        at = rng.uniform(0.0, duration_s, bursts)
        receivers = rng.integers(0, n, bursts)
        senders = _distinct_senders(rng, n, receivers, fanin)
        src = np.concatenate([src, senders.ravel()])
        dst = np.concatenate([dst, np.repeat(receivers, fanin)])
        start = np.concatenate([start, np.repeat(at, fanin)])
        size = np.concatenate([size, np.full(bursts * fanin, burst_bytes, dtype=np.int64)])
        kind = np.concatenate([kind, np.full(bursts * fanin, "incast", dtype=object)])
    extra = {"background": " (or drain_s, background_receivers, background_flows_per_receiver)",
             "incast": " (or incast_rate_hz, incast_fanin, incast_bytes)"}.get(mix, "")  # fmt: skip
    check_packets(data_packets(size, packet_bytes), lower + extra)  # exact, before any path is built
    order = np.argsort(start, kind="stable")
    src, dst, start, size, kind = src[order], dst[order], start[order], size[order], kind[order]
    paths = fabric_paths(topo, src, dst, "ecmp", seed=rng)
    r = simulate_packets(
        cap,
        np.asarray(topo.link_kind) != 0,
        marking,
        paths,
        ack_paths(topo, src, dst, paths),
        start,
        size,
        link_delay_s=link_delay_s,
        buffer_pkts=buffer_pkts,
        loss_recovery=SCENARIO_LOSS_RECOVERY,
        packet_bytes=packet_bytes,
        ack_bytes=ACK_BYTES,
        min_rto_s=min_rto_s,
        rtt_s=4 * (2.0 * link_delay_s + 8.0 * ACK_BYTES / (topo.host_gbps * 1e9)),
        window_s=(duration_s / 5, duration_s),
        seed=rng,
    )
    return dataclasses.replace(r, flows=r.flows.assign(is_long=kind == "long", kind=kind))


@accepts(
    quantiles=Items(Real(gt=0.0, lt=1.0), min_size=1),
    classes=Items(Opaque("a (label, low bytes, high bytes) triple"), min_size=1),
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
