"""Replay a given flow table on a given leaf-spine: per-flow completion times from the chunked packet engine or from
the per-packet ground truth, the connection-matrix loader, and the ``workbench aqm replay`` command.

A flow table is a DataFrame with ``src, dst, start_s, size_bytes`` (hosts numbered from 0; hosts
``hosts_per_leaf * l ... hosts_per_leaf * (l + 1) - 1`` sit under leaf ``l``). :func:`read_connection_matrix`
reads the htsim "connection matrix" text format of the ``fabric-websearch-128`` dataset; the network those files
were simulated on is recorded in the dataset's registry entry (and card), and :meth:`LeafSpineNetwork.of_dataset`
rebuilds it, so a replay with no network options runs exactly that network.

``chunk_pkts=1`` (the default) runs :func:`workbench.aqm.perpacket.simulate_packets`, every packet and ACK through
every hop, compiled: it is both the ground truth and the fast mode (the 50 ms file in about 9 s of CPU, static or
PRED marking). Larger values run the chunked simpy engine (:class:`workbench.aqm.packet.Network`), whose windows
travel as trains of up to ``chunk_pkts`` packets over fluid queues; on the loaded ``fabric-websearch-128`` fabric it
is both slower (20 and 58 s of CPU on the two files) and far from the per-packet FCTs (p99s up to 7x; the numbers
are in ``benchmarks/bench_aqm.py``'s docstring), so it is kept for the simpy scenarios, not for replays.
:func:`fct_statistics` gives the nine numbers the two are compared on (FCT mean, p50 and p99 in each of
:data:`~workbench.aqm.workload.VALIDATION_SIZE_CLASSES`).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .._rng import Seed, generator
from .._validate import in_range, integer, nonnegative, one_of, positive
from ..cache import atomic_path, check_target
from ..fabric.topology import LeafSpine, leaf_spine
from .packet import Network
from .perpacket import simulate_packets
from .pred import PRED_DEFAULT, PredConfig
from .red import RedMarking
from .scenarios import ROUTINGS, ack_paths, fabric_paths
from .workload import VALIDATION_SIZE_CLASSES, size_class

__all__ = [
    "LeafSpineNetwork",
    "read_connection_matrix",
    "replay",
    "fct_statistics",
    "main",
]

#: Size of an acknowledgement (bytes); it queues behind data on the reverse path.
ACK_BYTES = 40
#: DCTCP senders' minimum retransmission timeout (the fabric-websearch-128 network's 250 ms).
MIN_RTO_S = 0.25


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

    Examples
    --------
    >>> net = LeafSpineNetwork.of_dataset("fabric-websearch-128")
    >>> net.topology().n_hosts, net.marking == RedMarking.step(15)
    (128, True)
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

    def __post_init__(self) -> None:
        for name in ("leaves", "spines", "hosts_per_leaf"):
            integer(name, getattr(self, name), minimum=1, maximum=MAX_FABRIC_SIDE)
        if self.leaves * self.hosts_per_leaf > MAX_HOSTS:
            raise ValueError(
                f"leaves x hosts_per_leaf = {self.leaves * self.hosts_per_leaf:,} hosts is more than the per-packet "
                f"engine holds ({MAX_HOSTS:,}; its per-port state grows with hosts x spines): use fewer leaves or "
                "hosts per leaf"
            )
        positive("link_gbps", self.link_gbps)
        nonnegative("link_delay_s", self.link_delay_s)
        integer("buffer_pkts", self.buffer_pkts, minimum=1)
        integer("packet_bytes", self.packet_bytes, minimum=64)
        if not isinstance(self.marking, (RedMarking, PredConfig)):
            raise TypeError(f"marking must be a RedMarking or a PredConfig, got {type(self.marking).__name__}")
        one_of("routing", self.routing, ROUTINGS)
        one_of("mark_on", self.mark_on, ("arrival", "departure"))
        in_range("dctcp_alpha0", self.dctcp_alpha0, 0.0, 1.0)

    @classmethod
    def of_dataset(cls, name: str) -> LeafSpineNetwork:
        """The network a registered dataset's flows were simulated on (its registry entry's ``extra["network"]``)."""
        from ..data import dataset

        spec = dict(dataset(name).extra.get("network", {}))
        if not spec:
            raise ValueError(f"dataset {name!r} records no network to replay on")
        spec["marking"] = RedMarking.step(spec.pop("ecn_step_pkts"))
        return cls(**spec)

    def topology(self) -> LeafSpine:
        return leaf_spine(
            self.leaves, self.spines, self.hosts_per_leaf, host_gbps=self.link_gbps, uplink_gbps=self.link_gbps
        )


_LINE = re.compile(r"^\s*(\d+)->(\d+)\s+id\s+(\d+)\s+start\s+(\d+)\s+size\s+(\d+)\s*$")
_HEADER = re.compile(r"^\s*(Nodes|Connections)\s+(\d+)\s*$")


#: Packets the per-packet engine replays per second on one core, measured on the web-search files (2.4 M packets in
#: ~5 s of simulation): for the up-front estimate only.
REPLAY_PACKETS_PER_S = 5e5
#: A replay larger than this (about 3 minutes) is refused unless --force: a mistyped or hostile file must not run for
#: hours without a word.
MAX_REPLAY_PACKETS = 100_000_000

#: The largest leaf or spine count and host count a replayed network may have (the per-packet engine keeps state per
#: port and per host pair of each leaf).
MAX_FABRIC_SIDE = 4096
MAX_HOSTS = 65536
#: Bounds on a .cm file's numbers: picosecond start times below 2**62 (53 days), sizes below 2**50 bytes (1 PiB).
_MAX_START_PS = 1 << 62
_MAX_SIZE_BYTES = 1 << 50


def read_connection_matrix(path: str | Path) -> pd.DataFrame:
    """Read an htsim connection matrix: ``Nodes N``, ``Connections C``, then ``SRC->DST id ID start PS size BYTES``.

    Start times are picoseconds in the file and seconds in the result. A malformed line, a host outside
    ``[0, N)``, a flow to itself, a zero size or a count that disagrees with ``Connections`` raises ``ValueError``
    naming the file and line.

    Returns
    -------
    DataFrame
        ``flow_id, src, dst, start_s, size_bytes`` in file order; ``attrs["n_hosts"]`` is ``N``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "m.cm"
    ...     _ = p.write_text("Nodes 4\\nConnections 1\\n0->3 id 1 start 2000000 size 1500\\n")
    ...     read_connection_matrix(p)[["src", "dst", "start_s", "size_bytes"]].values.tolist()
    [[0.0, 3.0, 2e-06, 1500.0]]
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if not path.is_file():  # a FIFO would block for ever, /dev/zero fill memory
        raise ValueError(f"{path}: not a regular file; give a .cm connection matrix")
    header: dict[str, int] = {}
    rows: list[tuple[int, int, int, int, int]] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            m = _LINE.match(line)
            if m is None:
                h = _HEADER.match(line)
                if h is None or h.group(1) in header or rows:
                    raise ValueError(
                        f"{path}:{lineno}: expected 'SRC->DST id ID start PS size BYTES' (or a Nodes/"
                        f"Connections header before the flows), got {line.strip()[:80]!r}"
                    )
                header[h.group(1)] = int(h.group(2))
                if h.group(1) == "Nodes" and not 2 <= header["Nodes"] <= MAX_HOSTS:
                    raise ValueError(f"{path}:{lineno}: Nodes must be in [2, {MAX_HOSTS}], got {header['Nodes']}")
                continue
            if "Nodes" not in header:
                raise ValueError(f"{path}:{lineno}: a 'Nodes N' line must come before the flows")
            src, dst, fid, start, size = (int(x) for x in m.groups())
            n = header["Nodes"]
            if src >= n or dst >= n:
                raise ValueError(f"{path}:{lineno}: host {max(src, dst)} outside 0..{n - 1} (Nodes {n})")
            if src == dst:
                raise ValueError(f"{path}:{lineno}: flow {fid} goes from host {src} to itself")
            if size < 1:
                raise ValueError(f"{path}:{lineno}: flow {fid} has size 0")
            if size >= _MAX_SIZE_BYTES or start >= _MAX_START_PS or fid >= 1 << 63:
                raise ValueError(
                    f"{path}:{lineno}: flow {fid}: start {start} ps or size {size} B is out of range "
                    f"(start < 2**62 ps, size < 2**50 B)"
                )
            rows.append((fid, src, dst, start, size))
    if "Nodes" not in header:
        raise ValueError(f"{path}: no 'Nodes N' line")
    if "Connections" in header and header["Connections"] != len(rows):
        raise ValueError(f"{path}: 'Connections {header['Connections']}' but {len(rows)} flow lines")
    a = np.array(rows, dtype=np.int64).reshape(-1, 5)
    df = pd.DataFrame(
        {"flow_id": a[:, 0], "src": a[:, 1], "dst": a[:, 2], "start_s": a[:, 3] * 1e-12, "size_bytes": a[:, 4]}
    )
    df.attrs["n_hosts"] = header["Nodes"]
    return df


def replay(
    flows: pd.DataFrame, network: LeafSpineNetwork, *, chunk_pkts: int = 1, seed: Seed = 0, loss_prob=None
) -> pd.DataFrame:
    """Run a flow table through ``network`` and return every flow's completion time.

    Parameters
    ----------
    flows : DataFrame
        ``src, dst, start_s, size_bytes`` (other columns are ignored).
    network : LeafSpineNetwork
    chunk_pkts : int
        1 (default): the per-packet engine (every packet, every hop, ACK-clocked); more: the chunked engine with
        trains of up to this many packets (an approximation: see the module docstring).
    seed : int, Generator or None
        Path choice (ECMP), then the marking and loss draws.
    loss_prob : array-like or None
        Per link id of ``network.topology()``, the probability a data packet crossing it is lost (per-packet engine
        only; see :func:`~workbench.aqm.perpacket.simulate_packets`).

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
    chunk = integer("chunk_pkts", chunk_pkts, minimum=1)
    if chunk > 1 and loss_prob is not None:
        raise ValueError("loss_prob needs the per-packet engine (chunk_pkts=1)")
    if chunk > 1 and (network.mark_on != "arrival" or network.dctcp_alpha0 != 1.0):
        raise ValueError(
            "mark_on and dctcp_alpha0 other than 'arrival' and 1 need the per-packet engine (chunk_pkts=1)"
        )
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
    paths = fabric_paths(topo, src[order], dst[order], network.routing, seed=rng)
    cap = np.asarray(topo.capacity_gbps, dtype=float)
    switch_ports = np.asarray(topo.link_kind) != 0
    if chunk == 1:
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
            ack_bytes=ACK_BYTES,
            min_rto_s=MIN_RTO_S,
            rtt_s=_base_rtt_s(network, 4),
            dctcp_alpha0=network.dctcp_alpha0,
            mark_on=network.mark_on,
            seed=rng,
            loss_prob=loss_prob,
        ).flows
        fct, finished = out["fct_s"].to_numpy(), out["finished"].to_numpy()
    else:
        net = Network(
            cap,
            switch_ports,
            network.marking,
            rtt_s=_base_rtt_s(network, 4),
            host_gbps=network.link_gbps,
            buffer_pkts=network.buffer_pkts,
            packet_bytes=network.packet_bytes,
            chunk_pkts=chunk,
            monitor_links=(),
            hop_rtt_s=_base_rtt_s(network, 1),
            ack_bytes=ACK_BYTES,
            min_rto_s=MIN_RTO_S,
            seed=rng,
        )
        span = float(start.max()) if start.size else 0.0
        r = net.run(
            duration_s=max(span, 1e-9),
            short_starts_s=start[order],
            short_sizes_bytes=size[order],
            short_paths=paths,
            short_ack_paths=ack_paths(topo, src[order], dst[order], paths),
            drain_s=max(1.0, span),
        )
        fct, finished = r.flows["fct_s"].to_numpy(), r.flows["finished"].to_numpy()
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
    p.add_argument("--leaves", type=int)
    p.add_argument("--spines", type=int)
    p.add_argument("--hosts-per-leaf", type=int)
    p.add_argument("--link-gbps", type=float)
    p.add_argument("--link-delay-us", type=float, help="per-link propagation delay (microseconds)")
    p.add_argument("--buffer-pkts", type=int)
    p.add_argument("--packet-bytes", type=int)
    p.add_argument("--ecn-step-pkts", type=float, help="DCTCP step marking at this queue (packets)")
    p.add_argument(
        "--marking", choices=("static", "pred"), default="static", help="static ECN marking (default) or PRED's"
    )
    p.add_argument("--mark-on", choices=("arrival", "departure"), help="mark on arrival (default) or on departure")
    p.add_argument("--dctcp-alpha0", type=float, help="DCTCP's initial alpha (default 1, as Linux; htsim: 0)")
    p.add_argument("--routing", choices=ROUTINGS)
    p.add_argument(
        "--chunk-pkts", type=int, default=1, help="1 = every packet (default: exact and fast); more = chunked trains"
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
            "spines",
            "hosts_per_leaf",
            "link_gbps",
            "buffer_pkts",
            "packet_bytes",
            "routing",
            "mark_on",
            "dctcp_alpha0",
        )
        if getattr(args, k) is not None
    }
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
    packets = int(np.ceil(flows["size_bytes"].to_numpy() / net.packet_bytes).sum())
    if packets > MAX_REPLAY_PACKETS and not args.force:  # a stated estimate up front, not minutes without a word
        print(
            f"workbench: error: {args.file} holds {len(flows):,} flows, {packets:,} packets: about "
            f"{packets / REPLAY_PACKETS_PER_S / 60:.0f} minutes of per-packet simulation, above the "
            f"{MAX_REPLAY_PACKETS:,}-packet limit; pass --force to run it anyway",
            file=sys.stderr,
        )
        return 2
    if packets > MAX_REPLAY_PACKETS // 10:
        print(f"replaying {packets:,} packets: about {packets / REPLAY_PACKETS_PER_S:.0f} s", file=sys.stderr)
    t0 = time.perf_counter()
    fct = replay(flows, net, chunk_pkts=args.chunk_pkts, seed=args.seed)
    wall = time.perf_counter() - t0
    with atomic_path(args.out, overwrite=args.force) as tmp:  # a full disk leaves no partial file behind
        fct[["size_bytes", "start_s", "fct_s"]].to_csv(tmp, index=False)
    stats = fct_statistics(fct)
    print(
        f"{len(fct)} flows on {net.leaves}x{net.hosts_per_leaf} hosts, {net.spines} spines ({name} network"
        f"{' with overrides' if over else ''}), chunk_pkts={args.chunk_pkts}: {wall:.1f} s -> {args.out}"
    )
    print(
        stats.assign(mean_us=stats.mean_s * 1e6, p50_us=stats.p50_s * 1e6, p99_us=stats.p99_s * 1e6)
        .drop(columns=["mean_s", "p50_s", "p99_s"])
        .round(1)
        .to_string(index=False)
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``workbench aqm replay FILE [network options] --out fct.csv``."""
    p = argparse.ArgumentParser(prog="workbench aqm replay", description=__doc__.splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))
