"""Per-packet ground truth: every data packet and every ACK through every hop's FIFO, ACK-clocked DCTCP senders.

This is the reference the chunked engine (:mod:`workbench.aqm.packet`, which moves trains of packets over fluid
queues) is validated against on the same flows and network (:func:`workbench.aqm.replay.replay` with
``chunk_pkts=1``). It is an event-heap simulation, compiled with numba, of the network described by a leaf-spine
connection-matrix study such as ``fabric-websearch-128``:

* **Links.** Every directed link is a FIFO output queue with a capacity and a propagation delay; a packet arriving at
  time ``t`` leaves at ``max(t, busy_until) + size / capacity`` (store and forward) and reaches the next hop one
  propagation delay later. The packets in a queue (the one in service counted whole) decide marking and dropping:
  a switch port drops a packet that finds ``buffer_pkts`` packets there (drop-tail) and marks it with the RED/ECN
  probability of that count (:meth:`~workbench.aqm.red.RedMarking.step` is DCTCP's step marking). Host NICs are
  FIFO queues too (a host's flows share its NIC) that neither mark nor drop.
* **Packets.** A flow of ``size_bytes`` is ``ceil(size / packet_bytes)`` packets, the last one carrying the remainder
  (its serialization is shorter). The receiver acknowledges every packet at once with an ``ack_bytes`` packet that
  echoes the CE mark and travels the reverse path through the same queues as data (it is never dropped).
* **Senders (DCTCP).** No connection set-up (the flow starts sending at its start time; the network description
  states none). Initial window ``init_cwnd_pkts``; per ACK, ``cwnd += 1`` in slow start and ``1/cwnd`` after; an ACK
  with ECE cuts ``cwnd`` to ``cwnd (1 - alpha/2)`` at most once per window of data, and ``alpha`` is updated once per
  window with gain ``g`` from the fraction of marked ACKs. A packet is sent whenever the packets in flight are fewer
  than ``cwnd`` (ACK clocking); windows are never below one packet.
* **Losses.** A dropped packet is detected when three later packets of its flow have been acknowledged (fast
  retransmit, as with SACK): ``cwnd`` halves (once per window) and the packet is sent again. A loss with fewer than
  three later packets is detected by the retransmission timeout, ``min_rto_s`` after the drop, which resets
  ``cwnd`` to one packet.
* **Marking.** A fixed RED/ECN ramp, or PRED's two controllers on every switch port, run every FCS period on the
  packets that crossed the port (see ``marking`` below).
* **Completion.** A flow completes when the ACK of its last outstanding packet reaches the sender; its FCT is that
  time minus its start.

Cost: one heap event per packet per hop, data and ACK (about ten per packet on a four-link path), compiled: the
50 ms ``fabric-websearch-128`` workload (about five million packets) runs in seconds (``benchmarks/bench_aqm.py``).
The compiled loop is cached on disk (numba's ``cache=True``), so only the first run in a fresh environment pays the
compilation (a few seconds).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._rng import Seed, generator
from .._validate import in_range, integer, nonnegative, one_of, positive
from .packet import SimResult
from .perpacket_loop import simulate
from .pred import PredConfig
from .red import RedMarking

__all__ = ["simulate_packets"]


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
        Packets a switch port holds (drop-tail beyond).
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
        Retransmission timeout.
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
        the queue had dropped it, and counted in the port's ``drops``); default 0 everywhere (no draws). The sender's
        own NIC, the first hop of its data, never loses packets.

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
    starts = np.asarray(starts_s, dtype=float)
    sizes = np.asarray(sizes_bytes, dtype=np.int64)
    n = starts.size
    if sizes.shape != starts.shape or len(data_paths) != n or len(ack_paths) != n:
        raise ValueError("starts_s, sizes_bytes, data_paths and ack_paths must have one entry per flow")
    if n and (sizes.min() < 1 or not np.isfinite(starts).all() or starts.min() < 0):
        raise ValueError("sizes_bytes must be >= 1 and starts_s finite and >= 0")
    dpath = [tuple(tuple(int(x) for x in p) for p in alts) for alts in data_paths]
    apath = [tuple(tuple(int(x) for x in p) for p in alts) for alts in ack_paths]
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
        c = marking
        pred = np.array(  # in the order of perpacket_loop's P_* indices
            [
                c.slope_per_pkt, float(c.fcs), float(c.fcs_scaling == "sqrt"), float(c.qla), c.fcs_period_rtts * rtt,
                max(1, round(c.qla_period_rtts / c.fcs_period_rtts)), c.throughput_weight, c.slope_step,
                c.min_k_step_pkts, c.min_slope_for_slope_tuning, c.max_min_k_pkts, c.max_slope_offset, c.min_k_pkts,
            ]
        )  # fmt: skip
        # QLA's reference queue: given, or each port's bandwidth-delay product
        qref = np.full(cap.size, float(c.queue_ref_pkts)) if c.queue_ref_pkts else cap * 1e9 / (8.0 * mtu) * rtt
    else:
        ramp, pred, qref = marking, np.zeros(0), np.zeros(cap.size)
    # PRED counts the distinct flows crossing a port: one slot per (flow, link) a flow's data paths use
    flow_of_row = np.repeat(np.arange(n, dtype=np.int64), npaths)
    keys = np.where(dlinks >= 0, flow_of_row[:, None] * cap.size + dlinks, -1)
    dslot = np.unique(keys, return_inverse=True)[1].reshape(keys.shape).astype(np.int64)
    byte_s = 8.0 / (cap * 1e9)  # seconds per byte, per link
    done_t, retx, timeouts, echoed, drops, marks, busy_s, queue_pkt_s = simulate(
        byte_s, mtu * byte_s, np.ascontiguousarray(mask), delay, buffer,
        np.array([ramp.min_k_pkts, ramp.max_k_pkts, ramp.max_p]), pred, qref,
        dlinks, dlen, dslot, alinks, alen, path0, npaths,
        starts, npk.astype(np.int64), (sizes - (sizes - 1) // mtu * mtu).astype(np.int64),
        mtu, ackb, iw, g, alpha0, rto, mark_on == "departure", window, generator(seed), lossp,
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
