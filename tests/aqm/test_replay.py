"""Replay of a fixed flow table: the connection-matrix loader, hand-computed single flows, determinism, and the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench import data
from workbench.aqm import RedMarking
from workbench.aqm.replay import (
    LeafSpineNetwork,
    fct_statistics,
    main,
    read_connection_matrix,
    read_spines,
    replay,
)
from workbench.testing import requires_data

T_US = 1.2  # 1500 B at 10 Gbit/s
ACK_US = 0.032  # 40 B at 10 Gbit/s
D_US = 1.0  # per-link propagation
RTT4_US = 4 * T_US + 4 * ACK_US + 8 * D_US  # one full packet's round trip over four links: 12.928 us


def _net(**kw) -> LeafSpineNetwork:
    base = dict(
        leaves=2,
        spines=2,
        hosts_per_leaf=2,
        link_gbps=10.0,
        link_delay_s=1e-6,
        buffer_pkts=100,
        packet_bytes=1500,
        marking=RedMarking.step(15),
    )
    return LeafSpineNetwork(**(base | kw))


def _flows(src, dst, start_s, size_bytes) -> pd.DataFrame:
    return pd.DataFrame({"src": src, "dst": dst, "start_s": start_s, "size_bytes": size_bytes})


@pytest.mark.parametrize(
    "text, match",
    [
        ("Nodes 4\nConnections 1\n0->3 id 1 start 5 size\n", r"m\.cm:3: expected"),
        ("Nodes 4\nConnections 1\n0->4 id 1 start 5 size 10\n", r"m\.cm:3: host 4 outside 0\.\.3"),
        ("Nodes 4\nConnections 1\n2->2 id 1 start 5 size 10\n", r"m\.cm:3: flow 1 goes from host 2 to itself"),
        ("Nodes 4\nConnections 2\n0->1 id 1 start 5 size 10\n", r"m\.cm: 'Connections 2' but 1 flow lines"),
        ("Connections 1\n0->1 id 1 start 5 size 10\n", r"m\.cm:2: a 'Nodes N' line must come before"),
        ("Nodes 4\n0->1 id 1 start 5 size 10\nNodes 4\n", r"m\.cm:3: expected"),
    ],
)
def test_loader_names_file_and_line_of_a_malformed_line(tmp_path, text, match):
    p = tmp_path / "m.cm"
    p.write_text(text)
    with pytest.raises(ValueError, match=match):
        read_connection_matrix(p)


def test_loader_reads_the_dataset_files_and_their_registry_entry():
    ds = data.dataset("fabric-websearch-128")
    path = data.find(ds.relpath("ws_128_10g_90_25ms.cm"))
    if path is None:
        pytest.skip("fabric-websearch-128 is not on the data search path")
    df = read_connection_matrix(path)
    assert len(df) == ds.file("ws_128_10g_90_25ms.cm").rows == 2119 and df.attrs["n_hosts"] == 128
    assert df.start_s.between(0.0, 0.025).all() and (df.src != df.dst).all()
    net = LeafSpineNetwork.of_dataset("fabric-websearch-128")
    assert (net.leaves, net.spines, net.hosts_per_leaf, net.buffer_pkts) == (16, 8, 8, 100)
    # the README's network: byte buffers, marking on departure, NewReno DCTCP, its RTO
    assert (net.buffer_bytes, net.ack_bytes, net.nic_buffer_pkts, net.mark_on, net.marking) == (
        150_000,
        40,
        1000,
        "departure",
        RedMarking.step(15),
    )
    assert (net.init_cwnd_pkts, net.init_ssthresh_pkts, net.dctcp_alpha0, net.dctcp_g, net.loss_recovery) == (
        10,
        100.0,
        0.0,
        1 / 16,
        "newreno",
    )
    assert net.dctcp_cut == "every-window"
    assert (net.init_rto_s, net.min_rto_s, net.rto_tick_s, net.link_delay_s, net.link_gbps) == (
        3.0,
        0.25,
        0.01,
        1e-6,
        10.0,
    )
    spines = read_spines(path.with_suffix(".spines"), df, net.spines, net.hosts_per_leaf)
    assert ((spines == -1) == (df.src // 8 == df.dst // 8)).all() and spines.max() == 7


@pytest.mark.parametrize(
    "n_pkts, expected_us",
    [
        (1, RTT4_US),  # one packet: 4 serializations + 8 propagations + 4 ACKs
        (10, RTT4_US + 9 * T_US),  # the initial window, back to back
        (100, 2 * RTT4_US + (100 - 11) * T_US),  # one slow-start pause (IW 10 < BDP 10.8), then line rate
    ],
)
def test_single_flow_matches_hand_computation(n_pkts, expected_us):
    out = replay(_flows([0], [3], [0.0], [1500 * n_pkts]), _net())
    assert out.fct_s.iloc[0] * 1e6 == pytest.approx(expected_us, rel=1e-9)


def test_rack_local_flow_and_short_last_packet():
    # two links: 2 x 1.2 + 4 x 1 + 2 x 0.032 us for a full packet; a 100 B packet serializes in 0.08 us
    out = replay(_flows([0, 0], [1, 1], [0.0, 1e-3], [1500, 100]), _net())
    assert out.fct_s.tolist() == pytest.approx(
        [(2 * T_US + 4 * D_US + 2 * ACK_US) * 1e-6, (2 * 0.08 + 4 * D_US + 2 * ACK_US) * 1e-6]
    )


def test_replay_is_deterministic_and_rejects_bad_flows():
    flows = _flows([0, 1, 2, 3], [3, 2, 1, 0], [0.0, 1e-6, 2e-6, 3e-6], [200_000, 50_000, 3_000, 900_000])
    a, b = replay(flows, _net(), seed=5), replay(flows, _net(), seed=5)
    assert a.equals(b)
    with pytest.raises(ValueError, match=r"hosts outside 0\.\.3"):
        replay(_flows([0], [4], [0.0], [10]), _net())
    with pytest.raises(ValueError, match="columns"):
        replay(flows.drop(columns="dst"), _net())
    with pytest.raises(ValueError, match="routing"):
        _net(routing="minimal")


def test_fct_statistics_nine_numbers():
    df = pd.DataFrame(
        {
            "size_bytes": [1_000, 50_000, 500_000, 5_000_000],
            "fct_s": [1.0, 3.0, 10.0, 100.0],
            "finished": [True, True, True, True],
        }
    )
    s = fct_statistics(df).set_index("size_class")
    assert s["mean_s"].tolist() == [2.0, 10.0, 100.0] and s["flows"].tolist() == [2, 1, 1]


def test_cli_replay_writes_fct_csv(tmp_path, capsys):
    cm = tmp_path / "two.cm"
    cm.write_text("Nodes 8\nConnections 2\n0->5 id 1 start 0 size 1500\n1->2 id 2 start 1000000 size 30000\n")
    out = tmp_path / "fct.csv"
    args = [str(cm), "--leaves", "2", "--n-spines", "2", "--hosts-per-leaf", "4", "--out", str(out)]
    assert main(args) == 0
    fct = pd.read_csv(out)
    assert fct.columns.tolist() == ["size_bytes", "start_s", "fct_s"]
    assert fct.fct_s.iloc[0] * 1e6 == pytest.approx(RTT4_US)
    assert main(args) == 2 and "exists" in capsys.readouterr().err
    # PRED marking: a lone packet meets no queue, so the same FCT; it cannot go with a static step
    assert main([*args, "--force", "--marking", "pred"]) == 0
    assert pd.read_csv(out).fct_s.iloc[0] * 1e6 == pytest.approx(RTT4_US)
    assert main([*args, "--force", "--marking", "pred", "--ecn-step-pkts", "20"]) == 2
    assert "cannot go with --marking pred" in capsys.readouterr().err
    # htsim's conventions: marking on departure, alpha from 0 (the lone packet again meets no queue)
    assert main([*args, "--force", "--mark-on", "departure", "--dctcp-alpha0", "0"]) == 0
    assert pd.read_csv(out).fct_s.iloc[0] * 1e6 == pytest.approx(RTT4_US)


@pytest.mark.parametrize(
    "text, match",
    [
        ("1 0\n", r"m\.spines:1: the file ends here but 1 of the 2 flows have no spine"),
        ("1 0\n7 -1\n", r"m\.spines:2: flow id 7 is not in the connection matrix"),
        ("1 2\n2 -1\n", r"m\.spines:1: spine 2 of flow 1 outside 0\.\.1"),
        ("1 x\n2 -1\n", r"m\.spines:1: expected 'ID SPINE'"),
        ("1 0.5\n2 -1\n", r"m\.spines:1: expected 'ID SPINE'"),
        ("1 -1\n2 -1\n", r"m\.spines:1: flow 1 across leaves needs a spine"),
        ("1 0\n2 1\n", r"m\.spines:2: flow 2 within one leaf needs spine -1"),
        ("1 0\n1 1\n2 -1\n", r"m\.spines:2: flow id 1 is given twice"),
    ],
)
def test_spines_reader_names_file_and_line(tmp_path, text, match):
    flows = pd.DataFrame({"flow_id": [1, 2], "src": [0, 4], "dst": [5, 6]})  # 4 hosts per leaf: 1 crosses, 2 not
    p = tmp_path / "m.spines"
    p.write_text(text)
    with pytest.raises(ValueError, match=match):
        read_spines(p, flows, spines=2, hosts_per_leaf=4)


def test_cli_reads_the_spines_file_beside_the_matrix(tmp_path, capsys):
    # two flows across leaves on the same spine share its links and finish later than on different spines
    cm = tmp_path / "two.cm"
    cm.write_text("Nodes 8\nConnections 2\n0->4 id 1 start 0 size 300000\n1->5 id 2 start 0 size 300000\n")
    (tmp_path / "two.spines").write_text("1 0\n2 0\n")
    (tmp_path / "apart.spines").write_text("1 0\n2 1\n")
    out = tmp_path / "fct.csv"
    base = [str(cm), "--leaves", "2", "--n-spines", "2", "--hosts-per-leaf", "4", "--out", str(out), "--force"]
    assert main(base) == 0 and "paths from" in capsys.readouterr().out
    shared = pd.read_csv(out).fct_s
    assert main([*base, "--spines", str(tmp_path / "apart.spines")]) == 0
    apart = pd.read_csv(out).fct_s
    assert (shared > apart * 1.3).all()
    assert main([*base, "--routing", "ecmp", "--seed", "1"]) == 0 and "drawn with seed 1" in capsys.readouterr().out
    assert main([*base, "--routing", "ecmp", "--spines", str(tmp_path / "apart.spines")]) == 2


@pytest.mark.slow
@requires_data("fabric-websearch-128/ws_128_10g_90_25ms.cm", "fabric-websearch-128/ws_128_10g_90_25ms.spines")
def test_cli_with_no_options_replays_the_recorded_network_on_the_published_paths(tmp_path, capsys):
    cm = data.find("fabric-websearch-128/ws_128_10g_90_25ms.cm")
    out = tmp_path / "fct.csv"
    assert main([str(cm), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "fabric-websearch-128 network)" in said and "paths from" in said and "ws_128_10g_90_25ms.spines" in said
    fct = pd.read_csv(out)
    flows = read_connection_matrix(cm)
    net = LeafSpineNetwork.of_dataset("fabric-websearch-128")
    spines = read_spines(cm.with_suffix(".spines"), flows, net.spines, net.hosts_per_leaf)
    same = replay(flows, net, spines=spines)
    assert np.allclose(fct.fct_s, same.fct_s, rtol=1e-9) and same.finished.all()


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_connection_matrix_and_spines_writers_round_trip(tmp_path, suffix):
    from workbench.aqm.cm_files import write_connection_matrix, write_spines

    flows = pd.DataFrame(
        {"flow_id": [1, 2, 3], "src": [0, 5, 2], "dst": [7, 1, 3], "start_s": [0.0, 1.234567e-6, 2e-3],
         "size_bytes": [1500, 100_000, 7], "spine": [1, 0, -1]}
    )  # fmt: skip
    cm = write_connection_matrix(flows, tmp_path / f"m.cm{suffix}", n_hosts=8)
    sp = write_spines(flows, tmp_path / f"m.spines{suffix}")
    back = read_connection_matrix(cm)
    assert back[["flow_id", "src", "dst", "size_bytes"]].equals(flows[["flow_id", "src", "dst", "size_bytes"]])
    assert np.allclose(back.start_s, flows.start_s, rtol=0, atol=1e-13) and back.attrs["n_hosts"] == 8
    assert read_spines(sp, back, spines=2, hosts_per_leaf=4).tolist() == [1, 0, -1]
    # the same flows give the same bytes (gzip without a timestamp)
    again = write_connection_matrix(flows, tmp_path / f"n.cm{suffix}", n_hosts=8)
    assert again.read_bytes() == cm.read_bytes()
    with pytest.raises(ValueError, match="distinct hosts"):
        write_connection_matrix(flows.assign(dst=[7, 1, 2]), tmp_path / "x.cm", n_hosts=8)
