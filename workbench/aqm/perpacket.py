"""Per-packet ground truth: every data packet and every ACK through every hop's FIFO, ACK-clocked DCTCP senders
over TCP NewReno.

Every packet-level study runs on it: replays of recorded networks (:func:`workbench.aqm.replay.replay`) and the
PRED studies' scenarios (:mod:`workbench.aqm.scenarios`). It is an event-heap simulation, compiled with numba (:mod:`~workbench.aqm.perpacket_tcp`), of
the network a leaf-spine connection-matrix study such as ``fabric-websearch-128`` describes (its README; every
item below is a parameter, the README's value reachable):

* **Links.** Every directed link is a FIFO output queue with a capacity and a propagation delay; a packet arriving at
  time ``t`` leaves at ``max(t, busy_until) + size / capacity`` (store and forward) and reaches the next hop one
  propagation delay later. A switch port holds ``buffer_bytes`` (default ``buffer_pkts`` full packets' bytes) of
  data and ACKs alike, the packet in service counted whole, and drops a packet that does not fit (drop-tail; ACKs
  too). A host NIC holds ``nic_buffer_pkts`` packets (data or ACKs) and never marks. ``loss_prob`` loses packets at
  random on chosen links (failures).
* **Marking.** DCTCP's step (:meth:`~workbench.aqm.red.RedMarking.step`), a RED ramp, or PRED's two controllers on
  every switch port (run every FCS period on the flows and busy time they saw), on the queue in bytes over the
  packet size, the marked packet counted: on ``mark_on="departure"`` a data packet leaving a port is marked when the
  queue it leaves, itself and every packet that arrived before that instant, exceeds ``K`` full packets' bytes (the
  ring of each port is looked back at when the packet reaches the next hop); on ``"arrival"``, the queue it finds
  plus itself.
* **Packets.** A flow of ``size_bytes`` is ``ceil(size / packet_bytes)`` packets, the last one carrying the remainder
  (its serialization is shorter). The receiver sends one cumulative ACK of ``ack_bytes`` per data packet (the next
  packet it expects; out-of-order packets are kept), echoing that packet's CE, on the reverse path through the same
  kind of queues: a hole makes duplicate ACKs.
* **Senders (DCTCP over NewReno, no SACK).** No connection set-up (the first window leaves at the start time).
  Initial window ``init_cwnd_pkts``, initial slow-start threshold ``init_ssthresh_pkts``; per new ACK ``cwnd += 1``
  below the threshold and ``1/cwnd`` above; a packet is sent while ``next - first unacknowledged < cwnd``. DCTCP:
  ``alpha`` starts at ``dctcp_alpha0``, and once per window of data (when the cumulative ACK passes the packet
  that was next when the window began) ``alpha += g (F - alpha)`` with ``F`` the window's fraction of CE-echoing
  ACKs and, if any was marked (``dctcp_cut="marked"``; with ``"every-window"``: whenever ``alpha > 0``),
  ``cwnd = cwnd (1 - alpha/2)`` and ``ssthresh = cwnd`` (not during loss recovery).
  An ACK that echoes CE while ``cwnd < ssthresh`` sets ``ssthresh = cwnd`` at once: slow start ends at the first mark
  (RFC 3168's response to ECE; htsim's DCTCP source and ns-3's do the same), the cut waits for the window's end.
* **Loss recovery (RFC 6582).** The third duplicate ACK, if it acknowledges past ``recover``, sends the first
  unacknowledged packet again, sets ``ssthresh = max(flight / 2, 2)``, ``cwnd = ssthresh + 3`` and ``recover`` to the
  highest packet sent; each further duplicate inflates ``cwnd`` by one. A partial ACK (below ``recover``) sends the
  next hole again and deflates ``cwnd`` by the packets it acknowledged, less one; a full ACK ends recovery with
  ``cwnd = min(ssthresh, flight + 1)``.
* **Retransmission timeout (RFC 6298, Karn).** Every ACK echoes the send time of the packet that triggered it
  (``rtt_samples="every-ack"``, as TCP timestamps; or one timed packet per window, ``"one-per-window"``); a sample,
  never of a packet sent twice, updates ``SRTT`` and ``RTTVAR``, and ``RTO = max(min_rto_s, SRTT + 4 RTTVAR)``,
  ``init_rto_s`` before the first sample. The timer runs while data is outstanding, restarts on each new ACK, and is
  checked every ``rto_tick_s`` from time 0, so it fires at the first check after its deadline, wherever the deadline
  moved (when the first sample lowers the RTO from ``init_rto_s`` to ``min_rto_s``, the next check comes earlier
  too). A timeout doubles the RTO (kept until a new sample), sets ``ssthresh = max(flight / 2, 2)``, ``cwnd = 1``
  and ``recover`` to the highest packet sent, and goes back to the first unacknowledged packet (go-back-N:
  everything after it is sent again as the window allows).
* **Completion.** A flow completes when the sender learns its last byte was acknowledged; its FCT is that time
  minus its start.

``loss_recovery="sack"`` runs the engine as it was before NewReno (:mod:`~workbench.aqm.perpacket_loop`): a
receiver that acknowledges every packet individually, a loss detected by three later packets acknowledged or a
fixed ``min_rto_s`` after the drop, queues and thresholds in whole packets, no slow-start threshold, ACKs never
dropped.

Cost: one heap event per packet per hop, data and ACK (about ten per packet on a four-link path), compiled and
allocation-free per packet and free of numba's reference counting in the event loop: the 50 ms
``fabric-websearch-128`` workload (about five million packets) runs in about 7 s of CPU, the 25 ms one in about 3.5 s
(``benchmarks/bench_aqm.py``). The compiled loop is cached on disk (numba's ``cache=True``), so only the
first run in a fresh environment pays the compilation (a minute on a loaded machine).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd

from .._contracts import Array, Opaque, accepts
from .._rng import Seed, generator
from .._validate import in_range, integer, nonnegative, one_of, positive
from .perpacket_loop import simulate
from .pred import PredConfig
from .red import RedMarking
from .result import SimResult

__all__ = ["MAX_FLOW_PATHS", "MAX_PACKETS", "PACKETS_PER_S", "simulate_packets"]

#: The most paths (a flow's paths summed over its flows: one per flow under ECMP, one per spine when spraying) the
#: engine takes: it holds each as Python tuples, about 500 bytes, so this is ~2 GB; checked before the paths are built
#: (:func:`workbench.aqm.scenarios.fabric_paths`) and again here.
MAX_FLOW_PATHS = 4_000_000


#: Packets the engine simulates per second on one core, measured on the web-search files (2.4 M packets in ~5 s of
#: simulation): for the up-front estimates only.
PACKETS_PER_S = 5e5
#: The most packets a run is given without being asked for more (about 7 minutes at :data:`PACKETS_PER_S`): a point at
#: the top of an experiment's ranges must not run for hours without a word. The ``WORKBENCH_MAX_PACKETS`` environment
#: variable sets another limit (Dask workers started from the same environment read it too); the replay command's
#: ``--force`` lifts it for one file.
MAX_PACKETS = 200_000_000


def packet_limit() -> int:
    """:data:`MAX_PACKETS`, or the count ``WORKBENCH_MAX_PACKETS`` gives."""
    raw = os.environ.get("WORKBENCH_MAX_PACKETS", "").strip().replace("_", "")
    if not raw:
        return MAX_PACKETS
    try:
        limit = int(float(raw))
    except ValueError:
        limit = 0
    if limit < 1:
        raise ValueError(f"WORKBENCH_MAX_PACKETS must be a count of packets >= 1, got {raw!r}")
    return limit


def data_packets(size_bytes, packet_bytes: int) -> int:
    """Data packets of flows of ``size_bytes`` in packets of ``packet_bytes`` (each flow's last packet partial)."""
    return int(np.ceil(np.asarray(size_bytes, dtype=float) / packet_bytes).sum())


def check_packets(packets: float, lower: str) -> None:
    """Refuse a run of about ``packets`` packets past :func:`packet_limit`, saying how long it would take and what to
    lower (``lower``, the caller's parameters) by how much."""
    limit = packet_limit()
    if packets > limit:
        minutes = packets / PACKETS_PER_S / 60.0
        raise ValueError(
            f"about {packets:,.0f} packets to simulate, past the packet engine's limit of {limit:,} (about "
            f"{minutes:,.0f} minutes at its ~{PACKETS_PER_S:,.0f} packets/s): {lower}, together by a factor of "
            f"{math.ceil(packets / limit * 10) / 10:g} or more, or set WORKBENCH_MAX_PACKETS to a larger count to run "
            f"it anyway"
        )


def check_flow_paths(flows: int, paths: int) -> None:
    """Refuse ``paths`` paths of ``flows`` flows past :data:`MAX_FLOW_PATHS`, saying what to lower."""
    if paths > MAX_FLOW_PATHS:
        spraying = " or fewer paths per flow (ECMP instead of spraying)" if paths > flows else ""
        raise ValueError(
            f"{flows:,} flows with {paths:,} paths in all exceed the packet engine's {MAX_FLOW_PATHS:,} (about 2 GB "
            f"of paths): run fewer flows (a shorter duration_s, a lower load, fewer or slower hosts){spraying}"
        )


@accepts(
    marking_links=Array(integer=True, ge=0),
    data_paths=Opaque("per flow, its path of link ids (checked by the engine)"),
    ack_paths=Opaque("per flow, its ACK path of link ids (checked by the engine)"),
)
def simulate_packets(
    capacity_gbps,
    marking_links,
    marking: RedMarking | PredConfig,
    data_paths,
    ack_paths,
    starts_s,
    sizes_bytes,
    *,
    link_delay_s: float,
    buffer_pkts: int,
    packet_bytes: int = 1500,
    ack_bytes: int = 40,
    init_cwnd_pkts: int = 10,
    dctcp_g: float = 1.0 / 16.0,
    dctcp_alpha0: float = 1.0,
    mark_on: str = "arrival",
    min_rto_s: float = 0.25,
    rtt_s: float | None = None,
    window_s: tuple[float, float] | None = None,
    seed: Seed = None,
    loss_prob=None,
    loss_recovery: str = "newreno",
    init_ssthresh_pkts: float | None = None,
    buffer_bytes: int | None = None,
    nic_buffer_pkts: int = 1000,
    init_rto_s: float = 3.0,
    rto_tick_s: float = 0.01,
    rtt_samples: str = "every-ack",
    dctcp_cut: str = "marked",
) -> SimResult:
    """Run flows packet by packet to completion: their completion times, and the switch ports' statistics.

    Parameters
    ----------
    capacity_gbps : array-like
        Capacity of every directed link (Gbit/s).
    marking_links : array-like of bool
        Switch output ports (mark and drop); the others are host NICs (FIFO only).
    marking : RedMarking or PredConfig
        Marking of every switch port, on the number of packets in the queue: a fixed ramp, or PRED's controllers on
        every port (the same logic as :func:`workbench.aqm.pred.pred_controller`: FCS counts the distinct flows
        whose data entered the port in each period; QLA scores each period by the port's busy fraction and time-mean
        queue).
    data_paths, ack_paths : sequence
        Per flow, its alternative paths (tuples of link ids, the sender's NIC first; packet ``i`` takes alternative
        ``i mod k``) and the matching reverse paths of its ACKs (the receiver's NIC first).
    starts_s, sizes_bytes : array-like
        Start time and size of every flow.
    link_delay_s : float
        Propagation delay of every link.
    buffer_pkts : int
        Packets a switch port holds: ``buffer_pkts x packet_bytes`` bytes unless ``buffer_bytes`` is given (with
        ``loss_recovery="sack"``: whole packets).
    packet_bytes, ack_bytes, init_cwnd_pkts : int
    dctcp_g : float
        DCTCP's EWMA gain.
    dctcp_alpha0 : float
        DCTCP's ``alpha`` before the first window is scored: 1 as in Linux (``dctcp_alpha_on_init``), so the first
        mark halves the window; htsim's DCTCP starts from 0.
    mark_on : {"arrival", "departure"}
        When a switch port marks a data packet: on arrival, on the packets it finds queued (the one in service
        included), or as it leaves, on the packets queued behind it (as htsim's ``ECNQueue`` does). Drops are
        always decided on arrival.
    min_rto_s : float
        The retransmission timeout's floor (with ``loss_recovery="sack"``: the fixed timeout after a drop).
    rtt_s : float or None
        The base RTT PRED's control periods are counted in (required with PRED).
    window_s : (float, float) or None
        Where the switch ports' utilization and time-mean queue are measured (default: nowhere, NaN). Keeping
        them costs a little time and never changes the run.
    seed : int, Generator or None
        Random stream of the marking and loss draws (only a ramp with probabilities below 1, and lossy links, use
        it).
    loss_prob : array-like or None
        Per link, the probability that a data packet crossing it is lost (a failing link: the packet is lost as if
        the queue had dropped it, and counted in the link's ``drops``; data and ACKs alike); default 0 everywhere
        (no draws). With ``loss_recovery="sack"`` only data packets after the sender's NIC are lost.
    loss_recovery : {"newreno", "sack"}
        ``"newreno"`` (default): the model above. ``"sack"``: the engine before NewReno (kept for comparison):
        a receiver that acknowledges each packet individually, a loss detected by three later packets acknowledged
        or a fixed ``min_rto_s`` after the drop, queues and marking thresholds counted in whole packets, no slow-start
        threshold, ACKs never dropped; the parameters below are then ignored.
    init_ssthresh_pkts : float or None
        Initial slow-start threshold (packets); None: unbounded.
    buffer_bytes : int or None
        Bytes a switch port holds (data and ACKs alike; drop-tail for a packet that does not fit).
    nic_buffer_pkts : int
        Packets a host NIC holds (drop-tail beyond).
    init_rto_s : float
        The retransmission timeout before the first RTT sample.
    rto_tick_s : float
        Period of the retransmission timer's checks (from time 0); 0 checks at the exact deadline.
    rtt_samples : {"every-ack", "one-per-window"}
        RTT samples from every ACK (the triggering packet's send time echoed, as with TCP timestamps) or from one
        timed packet per window (classic BSD); never from a packet sent twice (Karn's rule).
    dctcp_cut : {"marked", "every-window"}
        When a window's end cuts ``cwnd`` by ``alpha/2``: after a window with marks (the DCTCP paper, Linux, ns-3),
        or after every window while ``alpha > 0`` (htsim's ``DCTCPSrc``, and the ``fabric-websearch-128`` README's
        "alpha and the window cut applied once per window of data").

    Returns
    -------
    SimResult
        ``flows``: ``flow_id, size_bytes, start_s, fct_s, finished, retransmits, timeouts, marked_acks``, one row
        per flow (``timeouts``: retransmissions sent after a retransmission timeout rather than by fast retransmit;
        ``marked_acks``: ACKs that echoed a CE mark). ``links``: every switch port's ``link, utilization,
        mean_queue_pkts`` inside ``window_s`` (the queue in full-size packets, the one in service counted by its
        remaining part) and ``marks, drops`` over the whole run. ``queue`` and ``control`` are empty (nothing is
        sampled), ``packets`` counts data packets sent (retransmissions included) and ``duration_s`` is the last
        completion.

    Examples
    --------
    One 15 kB flow over one 10 Gbit/s link with 1 us delay: ten packets in the first window, each 1.2 us of
    serialization; the last ACK returns 10 x 1.2 + 1 + 0.032 + 1 us after the start.

    >>> r = simulate_packets([10.0, 10.0], [False, False], RedMarking.step(15), [((0,),)], [((1,),)], [0.0], [15_000],
    ...                      link_delay_s=1e-6, buffer_pkts=100)
    >>> round(float(r.flows.fct_s.iloc[0]) * 1e6, 3)
    14.032
    """
    if not isinstance(marking, (RedMarking, PredConfig)):
        raise TypeError(f"marking must be a RedMarking or a PredConfig, got {type(marking).__name__}")
    cap = np.asarray(capacity_gbps, dtype=float)
    if cap.ndim != 1 or cap.size == 0 or not (cap > 0).all() or not np.isfinite(cap).all():
        raise ValueError("capacity_gbps must be a non-empty 1-D array of positive, finite capacities")
    mask = np.broadcast_to(np.asarray(marking_links, dtype=bool), cap.shape)
    delay = nonnegative("link_delay_s", link_delay_s)
    buffer = integer("buffer_pkts", buffer_pkts, minimum=1)
    mtu = integer("packet_bytes", packet_bytes, minimum=64)
    ackb = integer("ack_bytes", ack_bytes, minimum=1)
    iw = integer("init_cwnd_pkts", init_cwnd_pkts, minimum=1)
    g = positive("dctcp_g", dctcp_g)
    alpha0 = in_range("dctcp_alpha0", dctcp_alpha0, 0.0, 1.0)
    one_of("mark_on", mark_on, ("arrival", "departure"))
    rto = positive("min_rto_s", min_rto_s)
    one_of("loss_recovery", loss_recovery, ("newreno", "sack"))
    ssth0 = (
        np.inf if init_ssthresh_pkts is None else float(in_range("init_ssthresh_pkts", init_ssthresh_pkts, 1.0, 1e12))
    )
    buf_bytes = buffer * mtu if buffer_bytes is None else integer("buffer_bytes", buffer_bytes, minimum=1)
    nic_pkts = integer("nic_buffer_pkts", nic_buffer_pkts, minimum=1, maximum=1 << 20)
    rto0 = positive("init_rto_s", init_rto_s)
    tick_s = nonnegative("rto_tick_s", rto_tick_s)
    one_of("rtt_samples", rtt_samples, ("every-ack", "one-per-window"))
    one_of("dctcp_cut", dctcp_cut, ("marked", "every-window"))
    if window_s is None:
        window = np.array([np.inf, np.inf])
    else:
        window = np.array([nonnegative("window_s[0]", window_s[0]), nonnegative("window_s[1]", window_s[1])])
        if not window[1] > window[0]:
            raise ValueError(f"window_s must be (start, end) with end > start, got {tuple(window_s)}")
    if loss_prob is None:
        lossp = np.zeros(cap.size)
    else:
        lossp = np.array(np.broadcast_to(np.asarray(loss_prob, dtype=float), cap.shape))
        if not ((lossp >= 0) & (lossp < 1)).all():
            raise ValueError(f"loss_prob must be in [0, 1) on every link, got values in [{lossp.min()}, {lossp.max()}]")
    starts = np.array(starts_s, dtype=float)  # a copy: a read-only array (a cached column) is another numba signature
    sizes = np.asarray(sizes_bytes, dtype=np.int64)
    n = starts.size
    if sizes.shape != starts.shape or len(data_paths) != n or len(ack_paths) != n:
        raise ValueError("starts_s, sizes_bytes, data_paths and ack_paths must have one entry per flow")
    if n and (sizes.min() < 1 or not np.isfinite(starts).all() or starts.min() < 0):
        raise ValueError("sizes_bytes must be >= 1 and starts_s finite and >= 0")
    check_flow_paths(n, sum(len(alts) for alts in data_paths))
    dpath = [tuple(tuple(int(x) for x in p) for p in alts) for alts in data_paths]
    apath = [tuple(tuple(int(x) for x in p) for p in alts) for alts in ack_paths]
    if loss_recovery == "newreno" and any(len(a) > 16 for a in dpath):
        raise ValueError("at most 16 alternative paths per flow with loss_recovery='newreno'")
    if any(len(a) != len(b) or not a for a, b in zip(dpath, apath)):
        raise ValueError("every flow needs as many ACK paths as data paths, and at least one")
    npk = -(-sizes // mtu)
    if n >= 1 << 24 or (n and npk.max() >= 1 << 31):
        raise ValueError("at most 2**24 flows of at most 2**31 packets each")
    dlinks, dlen = _path_table(dpath, cap.size)
    alinks, alen = _path_table(apath, cap.size)
    npaths = np.array([len(a) for a in dpath], dtype=np.int64)
    path0 = np.concatenate([[0], np.cumsum(npaths)[:-1]]).astype(np.int64)
    if isinstance(marking, PredConfig):
        if rtt_s is None:
            raise ValueError("rtt_s (the base RTT PRED's control periods count in) is required with PRED marking")
        rtt = positive("rtt_s", rtt_s)
        ramp = marking.fluid_marking().marking
        pred, qref = pred_parameters(marking, rtt, cap, mtu)
    else:
        ramp, pred, qref = marking, np.zeros(0), np.zeros(cap.size)
    # PRED counts the distinct flows crossing a port: one slot per (flow, link) a flow's data paths use
    flow_of_row = np.repeat(np.arange(n, dtype=np.int64), npaths)
    keys = np.where(dlinks >= 0, flow_of_row[:, None] * cap.size + dlinks, -1)
    dslot = np.unique(keys, return_inverse=True)[1].reshape(keys.shape).astype(np.int64)
    byte_s = 8.0 / (cap * 1e9)  # seconds per byte, per link
    last = (sizes - (sizes - 1) // mtu * mtu).astype(np.int64)
    ramp3 = np.array([ramp.min_k_pkts, ramp.max_k_pkts, ramp.max_p])
    if loss_recovery == "sack":
        done_t, retx, timeouts, echoed, drops, marks, busy_s, queue_pkt_s = simulate(
            byte_s, mtu * byte_s, np.ascontiguousarray(mask), delay, buffer, ramp3, pred, qref,
            dlinks, dlen, dslot, alinks, alen, path0, npaths, starts, npk.astype(np.int64), last,
            mtu, ackb, iw, g, alpha0, rto, mark_on == "departure", window, generator(seed), lossp,
        )  # fmt: skip
    else:
        from .perpacket_tcp import simulate_tcp

        if isinstance(marking, RedMarking) and ramp3[1] - ramp3[0] == 1.0 and ramp3[2] == 1.0:
            ramp3[0] = ramp3[1]  # DCTCP's step: marked when the queue, the packet counted, exceeds K packets' bytes
        # FIFO ring per link: room for a full buffer of ACKs or a full NIC, and the arrivals looked back over
        # (at most 2**16 slots: a port then drops what would queue behind 65,280 packets)
        slots = max(buf_bytes // min(ackb, mtu), nic_pkts) + 258
        ring = min(1 << int(slots - 1).bit_length(), 1 << 16)
        done_t, retx, timeouts, echoed, drops, marks, busy_s, queue_pkt_s = simulate_tcp(
            byte_s, mtu * byte_s, np.ascontiguousarray(mask), delay, buf_bytes, nic_pkts, ring, ramp3, pred, qref,
            dlinks, dlen, dslot, alinks, alen, path0, npaths, starts, npk.astype(np.int64), last,
            mtu, ackb, iw, ssth0, g, alpha0, rto0, rto, tick_s, mark_on == "departure", window, generator(seed),
            lossp, rtt_samples == "every-ack", dctcp_cut == "every-window",
        )  # fmt: skip
    fct = done_t - starts
    flows = pd.DataFrame(
        {
            "flow_id": np.arange(n),
            "size_bytes": sizes,
            "start_s": starts,
            "fct_s": fct,
            "finished": np.isfinite(fct),
            "retransmits": retx,
            "timeouts": timeouts,
            "marked_acks": echoed,
        }
    )
    ports = np.flatnonzero(mask)
    span = window[1] - window[0] if window_s is not None else np.nan
    links = pd.DataFrame(
        {
            "link": ports,
            "utilization": busy_s[ports] / span,
            "mean_queue_pkts": queue_pkt_s[ports] / span,
            "marks": marks[ports],
            "drops": drops[ports],
        }
    )
    empty = pd.DataFrame({"time_s": np.zeros(0), "link": np.zeros(0, dtype=np.int64)})
    return SimResult(
        flows=flows,
        queue=empty.assign(queue_pkts=np.zeros(0)),
        links=links,
        control=empty.assign(n_flows=np.zeros(0), slope_per_pkt=np.zeros(0), min_k_pkts=np.zeros(0)),
        packets=int(npk.sum() + retx.sum()),
        duration_s=float(np.nanmax(done_t)) if n else 0.0,
    )


def pred_parameters(c: PredConfig, rtt_s: float, capacity_gbps: np.ndarray, packet_bytes: int):
    """PRED's configuration as the compiled controllers take it: the ``P_*`` parameter array of
    :mod:`~workbench.aqm.perpacket_loop` and QLA's reference queue per link (given, or the link's bandwidth-delay
    product in packets)."""
    pred = np.array(  # in the order of perpacket_loop's P_* indices
        [
            c.slope_per_pkt, float(c.fcs), float(c.fcs_scaling == "sqrt"), float(c.qla), c.fcs_period_rtts * rtt_s,
            max(1, round(c.qla_period_rtts / c.fcs_period_rtts)), c.throughput_weight, c.slope_step,
            c.min_k_step_pkts, c.min_slope_for_slope_tuning, c.max_min_k_pkts, c.max_slope_offset, c.min_k_pkts,
        ]
    )  # fmt: skip
    cap = np.asarray(capacity_gbps, dtype=float)
    qref = np.full(cap.size, float(c.queue_ref_pkts)) if c.queue_ref_pkts else cap * 1e9 / (8.0 * packet_bytes) * rtt_s
    return pred, qref


def _path_table(paths: list[tuple], n_links: int) -> tuple[np.ndarray, np.ndarray]:
    """Every flow's alternative paths, one row each (padded with -1), and their lengths."""
    flat = [p for alts in paths for p in alts]
    lens = np.array([len(p) for p in flat], dtype=np.int64)
    if lens.size and (lens.min() < 1 or lens.max() > 15):
        raise ValueError("every path needs 1 to 15 links")
    table = np.full((len(flat), int(lens.max()) if lens.size else 1), -1, dtype=np.int64)
    for i, p in enumerate(flat):
        table[i, : len(p)] = p
    if table.size and (table.max() >= n_links or table[table >= 0].min() < 0):
        raise ValueError(f"path links must be in 0..{n_links - 1}")
    return table, lens
