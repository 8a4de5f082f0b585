"""The compiled per-packet engine: FIFO queues by hand, drops recovered by fast retransmit or the retransmission
timeout, and determinism with per-packet spraying."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from workbench.aqm import PredConfig, RedMarking
from workbench.aqm.perpacket import simulate_packets
from workbench.aqm.replay import LeafSpineNetwork, replay

# three senders (NICs 0-2) share one switch uplink (3) into one receiver's downlink (4); ACKs come back through the
# receiver's NIC (5), a switch uplink (6) and each sender's downlink (7-9)
CAP = np.full(10, 10.0)
SWITCH = np.array([0, 0, 0, 1, 1, 0, 1, 1, 1, 1], dtype=bool)
DATA = [((k, 3, 4),) for k in range(3)]
ACKS = [((5, 6, 7 + k),) for k in range(3)]
RTO_S = 0.25


def _incast(n_pkts: int, buffer_pkts: int) -> pd.DataFrame:
    return simulate_packets(
        CAP, SWITCH, RedMarking.step(15), DATA, ACKS, [0.0] * 3, [1500 * n_pkts] * 3,
        link_delay_s=1e-6, buffer_pkts=buffer_pkts, min_rto_s=RTO_S, init_rto_s=RTO_S, rto_tick_s=0.0,
    ).flows  # fmt: skip


def test_shared_fifo_by_hand():
    # 30 packets reach the uplink from 2.2 us on, three every 1.2 us: it sends them back to back until 38.2 us; the
    # last one then crosses the downlink (1 + 1.2 + 1 us) and its ACK three links (3 x (0.032 + 1) us)
    out = _incast(10, 100)
    assert out.finished.all() and (out.retransmits == 0).all()
    assert out.fct_s.max() * 1e6 == pytest.approx(38.2 + 3.2 + 3 * 1.032, rel=1e-9)


@pytest.mark.parametrize("n_pkts, buffer_pkts", [(20, 4), (60, 8)])
def test_drops_are_sent_again_and_only_tail_losses_wait_for_the_timeout(n_pkts, buffer_pkts):
    out = _incast(n_pkts, buffer_pkts)
    assert out.finished.all() and out.retransmits.sum() > 0
    assert (out.timeouts <= out.retransmits).all()
    # a flow waits the 250 ms timeout exactly when it lost packets with too few later ones to signal them
    assert ((out.fct_s > RTO_S) == (out.timeouts > 0)).all()
    assert (out.fct_s < RTO_S + 1e-3).all()


def test_spraying_is_deterministic():
    net = LeafSpineNetwork(2, 4, 4, 10.0, 1e-6, 20, 1500, RedMarking.step(15), routing="spray")
    rng = np.random.default_rng(0)
    src = rng.integers(0, 4, 12)
    flows = pd.DataFrame(
        {"src": src, "dst": src + 4, "start_s": np.sort(rng.uniform(0, 1e-4, 12)), "size_bytes": 150_000}
    )
    a, b = replay(flows, net, seed=3), replay(flows, net, seed=3)
    assert a.finished.all() and a.equals(b)


def test_pred_without_its_controllers_is_its_one_flow_ramp_and_with_them_reacts():
    # eight senders on one leaf to eight receivers on the other, through one spine: the uplink is shared
    net = LeafSpineNetwork(2, 1, 8, 10.0, 1e-6, 100, 1500, RedMarking.step(15))
    rng = np.random.default_rng(2)
    flows = pd.DataFrame(
        {
            "src": np.arange(8),
            "dst": np.arange(8, 16),
            "start_s": np.sort(rng.uniform(0, 2e-5, 8)),
            "size_bytes": rng.integers(200_000, 600_000, 8),
        }
    )
    fixed = PredConfig(fcs=False, qla=False)
    ramp = fixed.fluid_marking().marking
    a = replay(flows, dataclasses.replace(net, marking=fixed), seed=1)
    b = replay(flows, dataclasses.replace(net, marking=ramp), seed=1)
    assert a.fct_s.tolist() == b.fct_s.tolist()
    # FCS steepens the ramp eight-fold once it has counted the flows: more marks, a shorter queue, and the flows
    # still finish
    c = replay(flows, dataclasses.replace(net, marking=PredConfig(qla=False)), seed=1)
    assert c.finished.all() and not c.fct_s.equals(a.fct_s)
    with pytest.raises(ValueError, match="rtt_s"):
        simulate_packets(CAP, SWITCH, fixed, DATA, ACKS, [0.0] * 3, [1500] * 3, link_delay_s=1e-6, buffer_pkts=10)


def test_alpha_starting_at_zero_cuts_less_and_queues_more():
    # three 1.5 MB flows into one uplink with a 60-packet buffer: the first CE echo ends slow start either way; with
    # alpha starting at 1 (Linux) the first marked window halves the windows, from 0 (htsim) it barely cuts them, so
    # the uplink holds a longer queue and marks more
    def run(alpha0: float):
        return simulate_packets(
            CAP, SWITCH, RedMarking.step(15), DATA, ACKS, [0.0, 1e-6, 2e-6], [1_500_000] * 3,
            link_delay_s=1e-6, buffer_pkts=60, dctcp_alpha0=alpha0, window_s=(0.0, 1e-3),
        )  # fmt: skip

    linux, htsim = run(1.0), run(0.0)
    assert linux.flows.finished.all() and htsim.flows.finished.all()
    assert htsim.links.mean_queue_pkts.max() > 1.4 * linux.links.mean_queue_pkts.max()
    assert htsim.flows.marked_acks.sum() > 1.1 * linux.flows.marked_acks.sum()
    with pytest.raises(ValueError, match="dctcp_alpha0"):
        run(1.5)


def test_a_cut_every_window_while_alpha_is_positive_cuts_more():
    # the three 1.5 MB flows again, alpha from 0: cutting after every window while alpha > 0 (htsim, the
    # fabric-websearch-128 README) rather than only after a window with marks sheds more window, so fewer packets
    # are marked; with no mark at all (a step above the buffer) alpha stays 0 and the two rules are the same run
    def run(cut: str, k: float):
        return simulate_packets(
            CAP, SWITCH, RedMarking.step(k), DATA, ACKS, [0.0, 1e-6, 2e-6], [1_500_000] * 3,
            link_delay_s=1e-6, buffer_pkts=60, dctcp_alpha0=0.0, dctcp_cut=cut, init_ssthresh_pkts=100,
        ).flows  # fmt: skip

    marked, every = run("marked", 15), run("every-window", 15)
    assert marked.finished.all() and every.finished.all()
    assert every.marked_acks.sum() < 0.9 * marked.marked_acks.sum()
    assert run("marked", 1000).equals(run("every-window", 1000))
    with pytest.raises(ValueError, match="dctcp_cut"):
        run("always", 15)


def test_marking_on_arrival_or_on_departure_by_hand():
    # flow A's 10 packets reach a 2.5 Gbit/s port at 10 Gbit/s from 2.2 us, one every 1.2 us, and leave one every
    # 4.8 us; flow B's 10 follow from 15.2 us, while A's still queue. Step marking at 5 packets.
    # On arrival: A's packets 6-9 find 5 or more queued, and all of B's. On departure: A's packets 1-9 leave 5 or
    # more behind them (A's later ones, then B's), B's only while 5 of B's own remain (B's packets 0-4).
    def run(mark_on: str) -> list[int]:
        out = simulate_packets(
            [10.0, 10.0, 2.5, 10.0, 10.0, 10.0], [False, False, True, False, False, False], RedMarking.step(5),
            [((0, 2),), ((1, 2),)], [((3, 4),), ((3, 5),)], [0.0, 13e-6], [15_000, 15_000],
            link_delay_s=1e-6, buffer_pkts=100, mark_on=mark_on,
        ).flows  # fmt: skip
        return out.marked_acks.tolist()

    assert run("arrival") == [4, 10]
    assert run("departure") == [9, 5]


def test_port_statistics_by_hand_and_without_effect_on_the_run():
    # flow A alone: its 10 packets reach the 2.5 Gbit/s port at 2.2 + 1.2 i us and keep it busy until 50.2 us; the
    # queued work is 4.8 us per arrival minus the time served, whose integral over the busy period is
    # 4.8 x (480 - 1.2 x 45) - 48^2 / 2 = 892.8 us^2, i.e. 186 packet-us: over a 60 us window 3.1 packets, busy 0.8
    def run(window_s):
        return simulate_packets(
            [10.0, 10.0, 2.5, 10.0, 10.0, 10.0], [False, False, True, False, False, False], PredConfig(),
            [((0, 2),)], [((3, 4),)], [0.0], [15_000], link_delay_s=1e-6, buffer_pkts=100, rtt_s=10e-6,
            window_s=window_s, seed=0,
        )  # fmt: skip

    measured, plain = run((0.0, 60e-6)), run(None)
    port = measured.links.set_index("link").loc[2]
    assert port.mean_queue_pkts == pytest.approx(186 / 60, rel=1e-9)
    assert port.utilization == pytest.approx(0.8, rel=1e-9)
    pd.testing.assert_frame_equal(measured.flows, plain.flows)
    assert plain.links.mean_queue_pkts.isna().all()
    with pytest.raises(ValueError, match="window_s"):
        run((1e-3, 1e-4))


def test_lossy_link_drops_a_seeded_fraction_and_flows_recover():
    # 5% of the data crossing the shared uplink (3) is lost: about 5% of the packets sent there are dropped, the
    # flows all finish, the run is repeatable under a seed, and a lossless link draws nothing
    def run(p: float, seed: int):
        loss = np.zeros(10)
        loss[3] = p
        return simulate_packets(
            CAP, SWITCH, RedMarking.step(15), DATA, ACKS, [0.0] * 3, [1_500_000] * 3,
            link_delay_s=1e-6, buffer_pkts=100, seed=seed, loss_prob=loss,
        )  # fmt: skip

    a, b, clean = run(0.05, 1), run(0.05, 1), run(0.0, 1)
    assert a.flows.finished.all() and a.flows.equals(b.flows)
    drops = int(a.links.set_index("link").drops[3])
    assert drops == a.links.drops.sum() and a.flows.retransmits.sum() >= drops  # go-back-N resends more
    assert 0.03 < drops / a.packets < 0.07
    assert clean.links.drops.sum() == 0 and clean.flows.retransmits.sum() == 0
    assert clean.flows.equals(run(0.0, 2).flows)
    with pytest.raises(ValueError, match="loss_prob"):
        run(1.0, 1)


# ---- hand-computed cases of the NewReno / byte-counted model ------------------------------------------------------
# Hosts A, B, C and a receiver R around one switch: A's NIC (0, 10 Gbit/s), B's NIC (1, 100 Gbit/s: a burst of its
# ten-packet window reaches the switch 0.12 us apart), the switch port to R (2), R's NIC (3), the ports to A (4) and
# B (5), C's NIC (6) and the port to C (7). Every link 1 us; a full packet takes 1.2 us on a 10 Gbit/s link, an ACK
# 0.032 us. A data packet from A reaches port 2 2.2 us after it is sent (NIC idle); an ACK from R reaches A 2.064 us
# after the data reaches R.
HAND_CAP = [10.0, 100.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0]
HAND_SWITCH = [False, False, True, False, True, True, False, True]
A_TO_R, B_TO_R, R_TO_C = ((0, 2),), ((1, 2),), ((3, 7),)
R_TO_A, R_TO_B, C_TO_R = ((3, 4),), ((3, 5),), ((6, 2),)


def _hand(data, acks, starts_us, sizes, **kw):
    kw = {"link_delay_s": 1e-6, "buffer_pkts": 100, "seed": 0} | kw
    return simulate_packets(
        HAND_CAP, HAND_SWITCH, RedMarking.step(15), data, acks, np.array(starts_us) * 1e-6, sizes, **kw
    )


def test_a_loss_recovered_by_three_duplicate_acks_by_hand():
    # B's ten packets reach port 2 from 1.12 us, 0.12 us apart, and leave it back to back until 13.12 us. A (ten
    # packets, started at 0.1 us) reaches it at 2.3 + 1.2 j us: its packet 0 finds B's ten there (15,000 B, the one
    # in service counted whole) and does not fit the 15,000 B buffer; each later one finds nine (B's leave as fast
    # as A's arrive) and fits. A1, A2, A3 leave at 14.32, 15.52, 16.72 us: their duplicate ACKs reach A at 17.384,
    # 18.584 and 19.784 us, when A sends packet 0 again (fast retransmit; the window, 5 + 3 inflated by later
    # duplicates, allows no new data: A has none left). It reaches port 2 at 21.984 us behind A4..A9 (done at
    # 23.92 us), leaves at 25.12 us, reaches R at 26.12 us, whose ACK for all ten packets reaches A at 28.184 us.
    r = _hand([A_TO_R, B_TO_R], [R_TO_A, R_TO_B], [0.1, 0.0], [15_000, 15_000], buffer_bytes=15_000)
    a, b = r.flows.iloc[0], r.flows.iloc[1]
    assert (a.retransmits, a.timeouts, b.retransmits) == (1, 0, 0)
    assert a.fct_s * 1e6 == pytest.approx(28.184 - 0.1, rel=1e-9)
    assert b.fct_s * 1e6 == pytest.approx(13.12 + 1 + 2.064, rel=1e-9)  # B9 leaves port 2 at 13.12 us
    assert r.links.set_index("link").drops[2] == 1


def test_a_timeout_and_its_back_off_by_hand():
    # A's one packet (sent at 0.1 us) is dropped by B's burst as above: no RTT sample yet, so the timer runs the
    # initial 3 s and is checked every 10 ms: the retransmission leaves at 3.01 s. A burst of C (from B's host, at
    # 3.01 s - 0.1 us) drops it again: the timeout doubles to 6 s, its deadline 9.01 s is checked at 9.01 s (not
    # past it) and fires at 9.02 s; that copy gets through: 1.2 + 1 + 1.2 + 1 us to R, 2.064 us back.
    t_c = 3.01e6 - 0.1
    r = _hand(
        [A_TO_R, B_TO_R, B_TO_R], [R_TO_A, R_TO_B, R_TO_B], [0.1, 0.0, t_c], [1500, 15_000, 15_000],
        buffer_bytes=15_000,
    )  # fmt: skip
    a = r.flows.iloc[0]
    assert (a.retransmits, a.timeouts) == (2, 2)
    assert a.fct_s == pytest.approx(9.02 + (4.4 + 2.064 - 0.1) * 1e-6, rel=1e-12)
    # without the timer's 10 ms period: at the deadlines themselves, 3 s after the send and 6 s after that
    exact = _hand(
        [A_TO_R, B_TO_R, B_TO_R], [R_TO_A, R_TO_B, R_TO_B], [0.1, 0.0, 3e6 + 0.1 - 0.1], [1500, 15_000, 15_000],
        buffer_bytes=15_000, rto_tick_s=0.0,
    ).flows.iloc[0]  # fmt: skip
    assert exact.timeouts == 2 and exact.fct_s == pytest.approx(9.0 + (4.4 + 2.064) * 1e-6, rel=1e-12)


def test_a_tail_loss_after_an_rtt_sample_waits_the_floor_not_the_initial_timeout_by_hand():
    # ten packets at 10 Gbit/s into a 2.5 Gbit/s port (4.8 us per packet) holding 7,500 B: P0-P5 and P8 fit, P6, P7
    # and P9 are dropped (P0 leaves at 7.0 us as P4 arrives; P1 at 11.8 us as P8 does). P8 makes one duplicate
    # ACK, too few for fast retransmit. The first ACK set the RTO to its 250 ms floor, and the last new ACK (P5's,
    # leaving the port at 31.0 us) restarted the timer at 33.032 us: its deadline 0.250033 s is checked at 0.26 s
    # (the engine once checked it only where the first send's 3 s deadline had put the check: 3.01 s). Go-back-N
    # with one packet: P6 (9.032 us round trip), then P7 and P8 (P7's ACK covers P8, 9.032 us), then P9 behind P8
    # at the port (9.6 us).
    r = simulate_packets(
        [10.0, 2.5, 10.0], [False, True, False], RedMarking.step(100), [((0, 1),)], [((2,),)], [0.0], [15_000],
        link_delay_s=1e-6, buffer_pkts=5,
    )  # fmt: skip
    f = r.flows.iloc[0]
    assert (f.timeouts, f.retransmits, int(r.links.drops.sum())) == (1, 4, 3)
    assert f.fct_s == pytest.approx(0.26 + (9.032 + 9.032 + 9.6) * 1e-6, rel=1e-9)


def test_the_first_ce_echo_ends_slow_start():
    # one 200-packet flow into a 2.5 Gbit/s port marking above 3 packets and holding 15: the first window's CE
    # echoes set ssthresh to the window, which then grows by one packet per round and never overflows the port
    # (alpha from 0, as htsim: the cut at the window's end is small). Growing on until the window's end, as the
    # engine once did, doubles it to ~20 packets and drops 5.
    r = simulate_packets(
        [10.0, 2.5, 10.0], [False, True, False], RedMarking.step(3), [((0, 1),)], [((2,),)], [0.0], [300_000],
        link_delay_s=1e-6, buffer_pkts=15, init_ssthresh_pkts=100, dctcp_alpha0=0.0,
    )  # fmt: skip
    assert r.flows.marked_acks.iloc[0] > 100 and int(r.links.drops.sum()) == 0 and r.flows.retransmits.iloc[0] == 0


def test_byte_counted_buffer_is_filled_by_acks_and_data_by_hand():
    # X (A -> R, one packet, at 5 us) is in service at port 2 from 7.2 to 8.4 us. Z (R -> C, one packet, at 2 us)
    # reaches C at 6.4 us and its 40 B ACK port 2 at 7.432 us, queued behind X. Y (B -> R, at 6.58 us: through B's
    # 100 Gbit/s NIC, at port 2 at 7.7 us) finds X's 1,500 B and the ACK's 40: it needs 3,040 B of buffer.
    def drops(buffer_bytes: int, with_ack: bool) -> int:
        flows = [(A_TO_R, R_TO_A, 5.0), (B_TO_R, R_TO_B, 6.58)] + ([(R_TO_C, C_TO_R, 2.0)] if with_ack else [])
        r = _hand([f[0] for f in flows], [f[1] for f in flows], [f[2] for f in flows], [1500] * len(flows),
                  buffer_bytes=buffer_bytes)  # fmt: skip
        return int(r.links.set_index("link").drops[2])

    assert drops(3039, with_ack=True) == 1
    assert drops(3040, with_ack=True) == 0
    assert drops(3039, with_ack=False) == 0  # X and Y alone: 3,000 B


def test_marking_on_departure_counts_the_departing_packet_in_bytes_by_hand():
    # the same three packets: as X leaves port 2 (8.4 us) the queue, X counted, is 1,500 + 40 + 1,500 = 3,040 B,
    # above a 2-packet step (3,000 B): X is marked. Without Z's ACK it is exactly 3,000 B: not above, not marked.
    # Y leaves alone: never marked.
    def marked(with_ack: bool) -> list[int]:
        flows = [(A_TO_R, R_TO_A, 5.0), (B_TO_R, R_TO_B, 6.58)] + ([(R_TO_C, C_TO_R, 2.0)] if with_ack else [])
        r = simulate_packets(
            HAND_CAP, HAND_SWITCH, RedMarking.step(2), [f[0] for f in flows], [f[1] for f in flows],
            np.array([f[2] for f in flows]) * 1e-6, [1500] * len(flows), link_delay_s=1e-6, buffer_pkts=100,
            mark_on="departure",
        )  # fmt: skip
        return r.flows.marked_acks.tolist()[:2]

    assert marked(True) == [1, 0]
    assert marked(False) == [0, 0]


@pytest.mark.parametrize("ssthresh, expected_us", [(100.0, 6 * 402.464 + 1.2 * 49), (None, 5 * 402.464 + 1.2 * 149)])
def test_slow_start_ends_at_the_initial_threshold_by_hand(ssthresh, expected_us):
    # 300 packets over two 100 us links each way (RTT 402.464 us, a bandwidth-delay product of 335 packets): the
    # window never fills the path, so each round's packets leave back to back and the ACK of packet j of a round
    # arrives 1.2 j us after its first. Slow start doubles the rounds: 10, 20, 40, 80 packets. With the threshold
    # at 100, round 3's first 20 ACKs take the window to 100 and the other 60 add 1/cwnd each: round 4 is 100
    # packets and round 5 the last 50 (its packet 49 acknowledged at 6 RTT + 49 x 1.2 us). Unbounded, round 4 is
    # 160 packets and holds the last 150.
    r = simulate_packets(
        [10.0] * 4, [False, True, False, True], RedMarking.step(15), [((0, 1),)], [((2, 3),)], [0.0], [450_000],
        link_delay_s=100e-6, buffer_pkts=100, init_ssthresh_pkts=ssthresh,
    ).flows  # fmt: skip
    assert r.retransmits.iloc[0] == 0
    assert r.fct_s.iloc[0] * 1e6 == pytest.approx(expected_us, rel=1e-9)


def test_a_window_larger_than_the_event_heap_by_hand():
    # one flow of 3,000 packets sent in its first window over one 10 Gbit/s link: the compiled loop's event heap starts
    # with room for 1,024 events, so the send loop stops for it to grow and resumes; the last packet leaves the NIC at
    # 3,000 x 1.2 us and its ACK returns 1 + 0.032 + 1 us later, as in the ten-packet example of simulate_packets
    r = simulate_packets(
        [10.0, 10.0], [False, False], RedMarking.step(15), [((0,),)], [((1,),)], [0.0], [1500 * 3000],
        link_delay_s=1e-6, buffer_pkts=100, init_cwnd_pkts=3000, nic_buffer_pkts=4000,
    )  # fmt: skip
    assert int(r.flows.retransmits.iloc[0]) == 0
    assert r.flows.fct_s.iloc[0] * 1e6 == pytest.approx(3000 * 1.2 + 2.032, rel=1e-9)


@pytest.mark.parametrize("recovery", ["sack", "newreno"])
def test_no_flow_is_an_empty_run_under_pred(recovery):
    # a window with no flow at all (a light load over a short window, no long flow) crashed both loops under PRED:
    # its per-(flow, link) slots were sized by the maximum of an empty table
    r = simulate_packets(
        CAP, SWITCH, PredConfig(), [], [], [], [], link_delay_s=1e-6, buffer_pkts=10, rtt_s=1e-4,
        window_s=(0.0, 1e-3), loss_recovery=recovery,
    )  # fmt: skip
    assert r.flows.empty and (r.links.utilization == 0).all() and (r.links.marks == 0).all()


@pytest.mark.parametrize("recovery", ["newreno", "sack"])
def test_read_only_start_times_reuse_the_compiled_engine(recovery):
    # start times read from a cache or a pandas column are read-only: a second numba signature of the packet loop
    # (seconds of compiling) unless the engine copies them; the run is the same either way
    from workbench.aqm import perpacket_loop, perpacket_tcp

    kernel = perpacket_tcp.simulate_tcp if recovery == "newreno" else perpacket_loop.simulate
    starts = np.zeros(3)
    frozen = starts.copy()
    frozen.flags.writeable = False
    marking = RedMarking.step(15)
    runs = [
        simulate_packets(CAP, SWITCH, marking, DATA, ACKS, s, [15_000] * 3, link_delay_s=1e-6, buffer_pkts=100,
                         loss_recovery=recovery).flows
        for s in (starts, frozen)
    ]  # fmt: skip
    pd.testing.assert_frame_equal(runs[0], runs[1])
    assert len(kernel.signatures) == 1
