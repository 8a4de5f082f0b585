"""Replay a given flow table on a given leaf-spine: per-flow completion times from the per-packet engine, the
connection-matrix loader, and the ``workbench aqm replay`` command.

A flow table is a DataFrame with ``src, dst, start_s, size_bytes`` (hosts numbered from 0; hosts
``hosts_per_leaf * l ... hosts_per_leaf * (l + 1) - 1`` sit under leaf ``l``). :func:`read_connection_matrix`
reads the htsim "connection matrix" text format of the ``fabric-websearch-128`` dataset; the network those files
were simulated on (its README: byte-counted buffers, marking on departure, NewReno DCTCP senders with their slow-start
threshold and RTO) is recorded in the dataset's registry entry, and :meth:`LeafSpineNetwork.of_dataset` rebuilds it;
:func:`read_spines` reads the spine each flow took in the reference run (the ``.spines`` file beside a ``.cm``), so
``workbench aqm replay FILE`` with no options runs exactly that network on exactly those paths (``--routing ecmp
--seed N`` draws the paths instead).

:func:`replay` runs :func:`workbench.aqm.perpacket.simulate_packets`, every packet and ACK through every hop,
compiled (the 50 ms file in about 7 s of CPU with static marking, the whole command about 9 s).
:func:`fct_statistics` gives the nine numbers a replay is compared on with another simulator (FCT mean, p50 and p99
in each of :data:`~workbench.aqm.workload.VALIDATION_SIZE_CLASSES`).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .._contracts import Array, Opaque, Real, Text, accepts
from .._rng import Seed, generator
from .._validate import in_range, integer, nonnegative, one_of, positive
from ..cache import atomic_path, check_target
from ..fabric.topology import LeafSpine, leaf_spine, path_links
from .cm_files import MAX_HOSTS, read_connection_matrix, read_spines
from .perpacket import PACKETS_PER_S, data_packets, packet_limit, simulate_packets
from .pred import PRED_DEFAULT, PredConfig
from .red import RedMarking
from .scenarios import ROUTINGS, ack_paths, fabric_paths
from .workload import VALIDATION_SIZE_CLASSES, size_class

__all__ = [
    "LeafSpineNetwork",
    "read_connection_matrix",
    "read_spines",
    "replay",
    "fct_statistics",
    "main",
]

#: Size of an acknowledgement (bytes); it queues behind data on the reverse path.
ACK_BYTES = 40
#: DCTCP senders' minimum retransmission timeout (the fabric-websearch-128 network's 250 ms).
MIN_RTO_S = 0.25


@accepts()
@dataclass(frozen=True)
class LeafSpineNetwork:
    """The network a flow table is replayed on: a non-blocking leaf-spine of equal links, DCTCP hosts.

    Parameters
    ----------
    leaves, spines, hosts_per_leaf : int
    link_gbps : float
        Capacity of every link, host links and leaf-spine links alike.
    link_delay_s : float
        Propagation delay of every link (one way).
    buffer_pkts : int
        Packets each switch output port holds (drop-tail beyond).
    packet_bytes : int
        Full packet size; a flow's last packet carries the remainder.
    marking : RedMarking or PredConfig
        ECN marking on every switch port (:meth:`RedMarking.step` for DCTCP's step marking), or PRED's adaptive
        marking (its control periods count in the base RTT of a path across the spines).
    routing : {"ecmp", "spray"}
        Per-flow random ECMP or per-packet spraying (paths from :func:`workbench.aqm.fabric_paths`).
    mark_on : {"arrival", "departure"}
        Where a port marks (per-packet engine only): on the queue a packet finds, or on the queue it leaves behind
        (htsim's ``ECNQueue``).
    dctcp_alpha0 : float
        DCTCP's initial ``alpha`` (per-packet engine only): 1 as Linux, 0 as htsim.
    loss_recovery, init_ssthresh_pkts, buffer_bytes, nic_buffer_pkts, init_rto_s, min_rto_s, rto_tick_s, rtt_samples,
    dctcp_cut
        The senders' and queues' parameters of :func:`~workbench.aqm.perpacket.simulate_packets` (per-packet engine
        only, except ``min_rto_s``; ``buffer_bytes`` None: ``buffer_pkts`` full packets), as are ``ack_bytes``,
        ``init_cwnd_pkts`` and ``dctcp_g``.

    Examples
    --------
    >>> net = LeafSpineNetwork.of_dataset("fabric-websearch-128")
    >>> net.topology().n_hosts, net.marking == RedMarking.step(15), net.buffer_bytes, net.init_ssthresh_pkts
    (128, True, 150000, 100.0)
    """

    leaves: int
    spines: int
    hosts_per_leaf: int
    link_gbps: float
    link_delay_s: float
    buffer_pkts: int
    packet_bytes: int
    marking: RedMarking | PredConfig
    routing: str = "ecmp"
    mark_on: str = "arrival"
    dctcp_alpha0: float = 1.0
    loss_recovery: str = "newreno"
    init_ssthresh_pkts: float | None = None
    buffer_bytes: int | None = None
    nic_buffer_pkts: int = 1000
    init_rto_s: float = 3.0
    min_rto_s: float = MIN_RTO_S
    rto_tick_s: float = 0.01
    ack_bytes: int = ACK_BYTES
    init_cwnd_pkts: int = 10
    dctcp_g: float = 1.0 / 16.0
    rtt_samples: str = "every-ack"
    dctcp_cut: str = "marked"

    def __post_init__(self) -> None:
        for name in ("leaves", "spines", "hosts_per_leaf"):
            integer(name, getattr(self, name), minimum=1, maximum=MAX_FABRIC_SIDE)
        if self.leaves * self.hosts_per_leaf > MAX_HOSTS:
            raise ValueError(
                f"leaves x hosts_per_leaf = {self.leaves * self.hosts_per_leaf:,} hosts is more than the per-packet "
                f"engine holds ({MAX_HOSTS:,}; its per-port state grows with hosts x spines): use fewer leaves or "
                "hosts per leaf"
            )
        # physical bounds: the engine's timers tick every rto_tick_s of simulated time, so a link slower than
        # 10 Mb/s or a delay beyond a second (no datacenter link; 10,000 km of fibre is 50 ms) means
        # astronomically many ticks, and per-port state sized by the bandwidth-delay product
        in_range("link_gbps", self.link_gbps, 0.01, 1e5)
        in_range("link_delay_s", self.link_delay_s, 0.0, 1.0)
        integer("buffer_pkts", self.buffer_pkts, minimum=1)
        integer("packet_bytes", self.packet_bytes, minimum=64)
        if not isinstance(self.marking, (RedMarking, PredConfig)):
            raise TypeError(f"marking must be a RedMarking or a PredConfig, got {type(self.marking).__name__}")
        one_of("routing", self.routing, ROUTINGS)
        one_of("mark_on", self.mark_on, ("arrival", "departure"))
        in_range("dctcp_alpha0", self.dctcp_alpha0, 0.0, 1.0)
        one_of("loss_recovery", self.loss_recovery, ("newreno", "sack"))
        if self.init_ssthresh_pkts is not None:
            in_range("init_ssthresh_pkts", self.init_ssthresh_pkts, 1.0, 1e12)
        if self.buffer_bytes is not None:
            integer("buffer_bytes", self.buffer_bytes, minimum=1)
        integer("nic_buffer_pkts", self.nic_buffer_pkts, minimum=1, maximum=1 << 20)
        positive("init_rto_s", self.init_rto_s)
        positive("min_rto_s", self.min_rto_s)
        nonnegative("rto_tick_s", self.rto_tick_s)
        integer("ack_bytes", self.ack_bytes, minimum=1)
        integer("init_cwnd_pkts", self.init_cwnd_pkts, minimum=1)
        positive("dctcp_g", self.dctcp_g)
        one_of("rtt_samples", self.rtt_samples, ("every-ack", "one-per-window"))
        one_of("dctcp_cut", self.dctcp_cut, ("marked", "every-window"))

    @classmethod
    @accepts(name=Text())
    def of_dataset(cls, name: str) -> LeafSpineNetwork:
        """The network a registered dataset's flows were simulated on (its registry entry's ``extra["network"]``)."""
        from ..data import dataset

        spec = dict(dataset(name).extra.get("network", {}))
        if not spec:
            raise ValueError(f"dataset {name!r} records no network to replay on")
        spec["marking"] = RedMarking.step(spec.pop("ecn_step_pkts"))
        return cls(**spec)

    @accepts()
    def topology(self) -> LeafSpine:
        return leaf_spine(
            self.leaves, self.spines, self.hosts_per_leaf, host_gbps=self.link_gbps, uplink_gbps=self.link_gbps
        )


#: The largest leaf or spine count and host count a replayed network may have (the per-packet engine keeps state per
#: port and per host pair of each leaf).
MAX_FABRIC_SIDE = 4096


def _pinned_paths(topo: LeafSpine, src: np.ndarray, dst: np.ndarray, spine: np.ndarray) -> list[tuple]:
    """One path per flow through its given spine (none for a flow within a leaf)."""
    rows = path_links(topo, src, dst, spine).tolist()
    return [(tuple(x for x in r if x >= 0),) for r in rows]


@accepts(spines=Array(integer=True, ge=-1, optional=True), loss_prob=Real(ge=0.0, lt=1.0, optional=True))
def replay(
    flows: pd.DataFrame,
    network: LeafSpineNetwork,
    *,
    seed: Seed = 0,
    loss_prob=None,
    spines=None,
) -> pd.DataFrame:
    """Run a flow table through ``network`` and return every flow's completion time.

    Parameters
    ----------
    flows : DataFrame
        ``src, dst, start_s, size_bytes`` (other columns are ignored).
    network : LeafSpineNetwork
    seed : int, Generator or None
        Path choice (ECMP), then the marking and loss draws.
    loss_prob : array-like or None
        Per link id of ``network.topology()``, the probability a packet crossing it is lost (per-packet engine
        only; see :func:`~workbench.aqm.perpacket.simulate_packets`).
    spines : array-like of int or None
        The spine of every flow (``-1`` within a leaf; e.g. from :func:`read_spines`), its ACKs through the same:
        the paths are then given, not drawn (``network.routing`` is ignored).

    Returns
    -------
    DataFrame
        ``flow_id, src, dst, size_bytes, start_s, fct_s, finished`` (``fct_s`` NaN if the flow did not finish).

    Examples
    --------
    >>> net = LeafSpineNetwork(2, 2, 2, 10.0, 1e-6, 100, 1500, RedMarking.step(15))
    >>> flows = pd.DataFrame({"src": [0], "dst": [3], "start_s": [0.0], "size_bytes": [1500]})
    >>> round(float(replay(flows, net).fct_s.iloc[0]) * 1e6, 2)   # 4 x (1.2 + 1) + 4 x (0.032 + 1) us
    12.93
    """
    if not isinstance(network, LeafSpineNetwork):
        raise TypeError(f"network must be a LeafSpineNetwork, got {type(network).__name__}")
    missing = {"src", "dst", "start_s", "size_bytes"} - set(flows.columns)
    if missing:
        raise ValueError(f"flows must have columns src, dst, start_s, size_bytes; missing {sorted(missing)}")
    topo = network.topology()
    src = flows["src"].to_numpy(dtype=np.int64)
    dst = flows["dst"].to_numpy(dtype=np.int64)
    start = flows["start_s"].to_numpy(dtype=float)
    size = flows["size_bytes"].to_numpy(dtype=np.int64)
    if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= topo.n_hosts):
        raise ValueError(f"flows use hosts outside 0..{topo.n_hosts - 1} (the network has {topo.n_hosts} hosts)")
    if src.size and (np.any(src == dst) or size.min() < 1 or not np.isfinite(start).all() or start.min() < 0):
        raise ValueError("flows must go between distinct hosts, with size_bytes >= 1 and finite start_s >= 0")
    order = np.argsort(start, kind="stable")
    rng = generator(seed)
    if spines is None:
        paths = fabric_paths(topo, src[order], dst[order], network.routing, seed=rng)
    else:
        pinned = np.asarray(spines, dtype=np.int64)
        local = src // network.hosts_per_leaf == dst // network.hosts_per_leaf
        if pinned.shape != src.shape or ((pinned < 0) != local).any() or pinned.max(initial=-1) >= network.spines:
            raise ValueError(
                f"spines must give every flow a spine in 0..{network.spines - 1}, and -1 exactly to flows within a leaf"
            )
        paths = _pinned_paths(topo, src[order], dst[order], pinned[order])
    cap = np.asarray(topo.capacity_gbps, dtype=float)
    switch_ports = np.asarray(topo.link_kind) != 0
    out = simulate_packets(
        cap,
        switch_ports,
        network.marking,
        paths,
        ack_paths(topo, src[order], dst[order], paths),
        start[order],
        size[order],
        link_delay_s=network.link_delay_s,
        buffer_pkts=network.buffer_pkts,
        packet_bytes=network.packet_bytes,
        ack_bytes=network.ack_bytes,
        init_cwnd_pkts=network.init_cwnd_pkts,
        dctcp_g=network.dctcp_g,
        min_rto_s=network.min_rto_s,
        rtt_s=_base_rtt_s(network, 4),
        dctcp_alpha0=network.dctcp_alpha0,
        mark_on=network.mark_on,
        seed=rng,
        loss_prob=loss_prob,
        loss_recovery=network.loss_recovery,
        init_ssthresh_pkts=network.init_ssthresh_pkts,
        buffer_bytes=network.buffer_bytes,
        nic_buffer_pkts=network.nic_buffer_pkts,
        init_rto_s=network.init_rto_s,
        rto_tick_s=network.rto_tick_s,
        rtt_samples=network.rtt_samples,
        dctcp_cut=network.dctcp_cut,
    ).flows
    fct, finished = out["fct_s"].to_numpy(), out["finished"].to_numpy()
    res = np.full(src.size, np.nan)
    done = np.zeros(src.size, dtype=bool)
    res[order], done[order] = fct, finished
    return pd.DataFrame(
        {
            "flow_id": flows["flow_id"].to_numpy() if "flow_id" in flows else np.arange(src.size),
            "src": src,
            "dst": dst,
            "size_bytes": size,
            "start_s": start,
            "fct_s": res,
            "finished": done,
        }
    )


def _base_rtt_s(network: LeafSpineNetwork, hops: int) -> float:
    """Propagation both ways plus the ACK's serialization on every hop of a ``hops``-link path."""
    return hops * (2.0 * network.link_delay_s + 8.0 * ACK_BYTES / (network.link_gbps * 1e9))


@accepts()
def fct_statistics(fct: pd.DataFrame) -> pd.DataFrame:
    """FCT mean, p50 and p99 (seconds) of finished flows in each validation size class (< 100 KB, 100 KB-1 MB,
    >= 1 MB), with the flow counts: ``size_class, flows, unfinished, mean_s, p50_s, p99_s``.

    Examples
    --------
    >>> df = pd.DataFrame({"size_bytes": [1000, 3000, 2_000_000], "fct_s": [1e-5, 3e-5, 2e-3],
    ...                    "finished": [True, True, True]})
    >>> fct_statistics(df)[["flows", "mean_s"]].values.tolist()
    [[2.0, 2e-05], [0.0, nan], [1.0, 0.002]]
    """
    cls = size_class(fct["size_bytes"].to_numpy(), VALIDATION_SIZE_CLASSES)
    rows = []
    for label, _, _ in VALIDATION_SIZE_CLASSES:
        sel = fct[cls == label]
        x = sel.loc[sel["finished"].astype(bool), "fct_s"].to_numpy(dtype=float)
        q = np.quantile(x, [0.5, 0.99]) if x.size else (np.nan, np.nan)
        rows.append((label, x.size, len(sel) - x.size, x.mean() if x.size else np.nan, q[0], q[1]))
    return pd.DataFrame(rows, columns=["size_class", "flows", "unfinished", "mean_s", "p50_s", "p99_s"])


# ---- the `workbench aqm replay` command ----------------------------------------------------------------------------
def _dataset_of(path: Path) -> str | None:
    """The registered dataset whose files include ``path``'s name and that records a network."""
    from ..data import datasets

    for ds in datasets():
        if "network" in ds.extra and any(f.name == path.name for f in ds.files):
            return ds.name
    return None


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``workbench aqm replay`` (network options default to the file's dataset network)."""
    p.add_argument("file", type=Path, help="connection matrix (htsim .cm format)")
    p.add_argument("--out", type=Path, required=True, help="CSV to write: size_bytes,start_s,fct_s")
    p.add_argument("--leaves", type=int, help="leaf switches (default for every network option: the dataset's network)")
    p.add_argument("--n-spines", type=int, dest="n_spines", help="number of spines")
    p.add_argument(
        "--spines",
        type=Path,
        dest="spines_file",
        help="per-flow spines ('ID SPINE' lines; default: the .spines file beside FILE, if any)",
    )
    p.add_argument("--hosts-per-leaf", type=int)
    p.add_argument("--link-gbps", type=float)
    p.add_argument("--link-delay-us", type=float, help="per-link propagation delay (microseconds)")
    p.add_argument("--buffer-pkts", type=int)
    p.add_argument("--packet-bytes", type=int)
    p.add_argument("--ecn-step-pkts", type=float, help="DCTCP step marking at this queue (packets)")
    p.add_argument(
        "--marking", choices=("static", "pred"), default="static", help="static ECN marking (default) or PRED's"
    )
    p.add_argument(
        "--mark-on",
        choices=("arrival", "departure"),
        help="mark on the queue a packet finds or the one it leaves (fabric-websearch-128: departure)",
    )
    p.add_argument(
        "--dctcp-alpha0", type=float, help="DCTCP's initial alpha (fabric-websearch-128: 0 as htsim; Linux: 1)"
    )
    p.add_argument(
        "--dctcp-cut",
        choices=("marked", "every-window"),
        help="DCTCP's cut after a window with marks or after every window while alpha > 0 "
        "(fabric-websearch-128: every window, as htsim)",
    )
    p.add_argument(
        "--routing", choices=ROUTINGS, help="draw the paths (per-flow ECMP or spraying, --seed) instead of reading them"
    )
    p.add_argument(
        "--loss-recovery", choices=("newreno", "sack"), help="NewReno (fabric-websearch-128) or the SACK-like engine"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--force", action="store_true", help="overwrite --out if it exists; run a replay above the packet limit"
    )


def run(args: argparse.Namespace) -> int:
    """Execute ``workbench aqm replay`` from parsed arguments."""
    try:  # before any work: refuse a directory, FIFO, device, or an existing file without --force
        check_target(args.out, overwrite=args.force)
    except OSError as exc:
        print(f"workbench: error: {exc}", file=sys.stderr)
        return 2
    flows = read_connection_matrix(args.file)
    name = _dataset_of(args.file) or "fabric-websearch-128"
    net = LeafSpineNetwork.of_dataset(name)
    over = {
        k: getattr(args, k)
        for k in (
            "leaves",
            "hosts_per_leaf",
            "link_gbps",
            "buffer_pkts",
            "packet_bytes",
            "routing",
            "mark_on",
            "dctcp_alpha0",
            "dctcp_cut",
            "loss_recovery",
        )
        if getattr(args, k) is not None
    }
    if args.n_spines is not None:
        over["spines"] = args.n_spines
    if args.buffer_pkts is not None:
        over["buffer_bytes"] = None  # a buffer given in packets: full packets' bytes
    if args.link_delay_us is not None:
        over["link_delay_s"] = args.link_delay_us * 1e-6
    if args.ecn_step_pkts is not None:
        over["marking"] = RedMarking.step(args.ecn_step_pkts)
    if args.marking == "pred":
        if args.ecn_step_pkts is not None:
            print("error: --ecn-step-pkts sets static marking; it cannot go with --marking pred", file=sys.stderr)
            return 2
        over["marking"] = PRED_DEFAULT
    net = dataclasses.replace(net, **over)
    packets = data_packets(flows["size_bytes"], net.packet_bytes)
    limit = packet_limit()
    if packets > limit and not args.force:  # a stated estimate up front, not minutes without a word
        print(
            f"workbench: error: {args.file} holds {len(flows):,} flows, {packets:,} packets: about "
            f"{packets / PACKETS_PER_S / 60:.0f} minutes of per-packet simulation, above the "
            f"{limit:,}-packet limit; pass --force to run it anyway",
            file=sys.stderr,
        )
        return 2
    if packets > limit // 10:
        print(f"replaying {packets:,} packets: about {packets / PACKETS_PER_S:.0f} s", file=sys.stderr)
    spines_file = args.spines_file
    if spines_file is None and args.routing is None and args.file.with_suffix(".spines").is_file():
        spines_file = args.file.with_suffix(".spines")
    if spines_file is not None and args.routing is not None:
        print("workbench: error: --spines gives the paths; it cannot go with --routing", file=sys.stderr)
        return 2
    spines = None if spines_file is None else read_spines(spines_file, flows, net.spines, net.hosts_per_leaf)
    t0 = time.perf_counter()
    fct = replay(flows, net, seed=args.seed, spines=spines)
    wall = time.perf_counter() - t0
    with atomic_path(args.out, overwrite=args.force) as tmp:  # a full disk leaves no partial file behind
        fct[["size_bytes", "start_s", "fct_s"]].to_csv(tmp, index=False)
    stats = fct_statistics(fct)
    print(
        f"{len(fct)} flows on {net.leaves}x{net.hosts_per_leaf} hosts, {net.spines} spines ({name} network"
        f"{' with overrides' if over else ''}), "
        + (f"paths from {spines_file}" if spines_file else f"{net.routing} paths drawn with seed {args.seed}")
        + f": {wall:.1f} s -> {args.out}"
    )
    print(
        stats.assign(mean_us=stats.mean_s * 1e6, p50_us=stats.p50_s * 1e6, p99_us=stats.p99_s * 1e6)
        .drop(columns=["mean_s", "p50_s", "p99_s"])
        .round(1)
        .to_string(index=False)
    )
    return 0


@accepts(argv=Opaque("a command line: its parser checks it (tests/hostile/test_hostile_input.py drives it)"))
def main(argv: list[str] | None = None) -> int:
    """``workbench aqm replay FILE [network options] --out fct.csv``."""
    p = argparse.ArgumentParser(prog="workbench aqm replay", description=__doc__.splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))
