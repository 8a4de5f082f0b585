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
        link_delay_s=1e-6, buffer_pkts=buffer_pkts, min_rto_s=RTO_S,
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


def test_alpha_starting_at_zero_cuts_less_and_loses_more():
    # three 1.5 MB flows into one uplink with a 40-packet buffer: with alpha starting at 1 (Linux) the first marks
    # halve the windows; from 0 (htsim) they barely cut them, and the queue overflows more often
    def run(alpha0: float) -> pd.DataFrame:
        return simulate_packets(
            CAP, SWITCH, RedMarking.step(15), DATA, ACKS, [0.0, 1e-6, 2e-6], [1_500_000] * 3,
            link_delay_s=1e-6, buffer_pkts=40, dctcp_alpha0=alpha0,
        ).flows  # fmt: skip

    linux, htsim = run(1.0), run(0.0)
    assert linux.finished.all() and htsim.finished.all()
    assert htsim.retransmits.sum() > linux.retransmits.sum() > 0
    with pytest.raises(ValueError, match="dctcp_alpha0"):
        run(1.5)


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
    assert drops == a.flows.retransmits.sum() - int(a.links.drops.sum() - drops)
    assert 0.03 < drops / a.packets < 0.07
    assert clean.links.drops.sum() == 0 and clean.flows.retransmits.sum() == 0
    assert clean.flows.equals(run(0.0, 2).flows)
    with pytest.raises(ValueError, match="loss_prob"):
        run(1.0, 1)
