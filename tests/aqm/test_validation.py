"""The packet-level validation data (``datasets/validation/packets``): the workloads regenerate from their seeds, the
two references cover every flow, the envelope check by hand, and the engine inside the two-reference envelope on
every workload (slow: a replay per workload)."""

from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pandas as pd
import pytest

from workbench import data
from workbench.aqm import validation as V
from workbench.aqm.cm_files import read_connection_matrix, read_spines, write_connection_matrix, write_spines
from workbench.aqm.replay import MIN_RTO_S, LeafSpineNetwork, replay
from workbench.aqm.workload import VALIDATION_SIZE_CLASSES, size_class, websearch_matrix
from workbench.testing import requires_data

WORKLOADS = V.workloads()
GENERATED = WORKLOADS[WORKLOADS.cm.str.startswith(V.DATA_DIR)]
SHARED = WORKLOADS[~WORKLOADS.cm.str.startswith(V.DATA_DIR)]


def _text(path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


def test_the_workloads_span_four_loads_two_seeds_and_both_shared_files():
    assert len(GENERATED) == 8 and sorted(GENERATED.load.unique()) == [0.3, 0.5, 0.7, 0.9]
    assert set(GENERATED.seed) == {1, 2} and (GENERATED.window_ms == 20).all()
    assert SHARED.workload.tolist() == ["ws_128_10g_90_25ms", "ws_128_10g_90_50ms"]
    assert SHARED.flows.tolist() == [2119, 4248]


@pytest.mark.parametrize("row", list(GENERATED.itertuples()), ids=lambda r: r.workload)
def test_a_generated_workload_regenerates_from_its_seed(tmp_path, row):
    flows = websearch_matrix(row.load, row.window_ms * 1e-3, seed=int(row.seed))
    cm = write_connection_matrix(flows, tmp_path / "w.cm", 128)
    sp = write_spines(flows, tmp_path / "w.spines")
    committed_cm, committed_sp = data.require(row.cm), data.require(row.spines)
    assert hashlib.sha256(_text(cm)).hexdigest() == row.cm_sha256 == hashlib.sha256(_text(committed_cm)).hexdigest()
    assert _text(sp) == _text(committed_sp)
    # the files are the README's kind: Poisson per host at the load, uniform destinations and spines
    back = read_connection_matrix(committed_cm)
    spines = read_spines(committed_sp, back, 8, 8)
    assert len(back) == row.flows and ((spines == -1) == (back.src // 8 == back.dst // 8)).all()
    offered = back.size_bytes.sum() * 8 / (row.window_ms * 1e-3) / (128 * 10e9)
    assert offered == pytest.approx(row.load, rel=0.35)  # heavy-tailed sizes: one window's bytes vary widely


@pytest.mark.parametrize("name", WORKLOADS.workload.tolist())
def test_both_references_finished_every_flow_of_the_workload(name):
    if not V.available(name):
        pytest.skip(f"{name}: its .cm is not on the data search path (workbench data fetch fabric-websearch-128)")
    flows, _ = V.load_workload(name)
    refs = V.reference_fct(name)
    assert np.array_equal(refs.size_bytes.to_numpy(), flows.size_bytes.to_numpy())
    for ref in V.REFERENCES:
        fct = refs[ref].to_numpy()
        assert np.isfinite(fct).all()
        assert (fct >= flows.size_bytes.to_numpy() * 8 / 10e9).all()  # none faster than its bytes at 10 Gbit/s


def test_envelope_error_and_within_by_hand():
    assert V.envelope_error([1.5, 2.4, 0.9, 1.0], [1.0] * 4, [2.0] * 4).round(3).tolist() == [0.0, 0.2, -0.1, 0.0]
    pts = V.validation_points([WORKLOADS.workload.iloc[-1]], engine=False)
    assert len(pts) == 9 and pts.model.isna().all() and pts.within.isna().all()
    assert (pts.reference_low <= pts.reference_high).all()
    assert (pts.reference_low == pts[["ns3", "htsim"]].min(axis=1)).all()
    assert pts.metric.iloc[0] == "mean FCT, small (<100KB)" and pts.source.unique().tolist() == ["ns-3 / htsim"]
    assert set(pts.columns) >= {"source", "metric", "reference_low", "reference_high", "model", "error", "within",
                                "load", "seed", "flows", "window_ms"}  # fmt: skip


def test_the_first_window_loss_waits_the_initial_rto_as_in_htsim():
    # an incast fills host 0's leaf port; one-packet flows that meet it full get no ACK at all: the README's sender
    # waits its 3 s initial RTO (checked every 10 ms), in the engine as in htsim with the README's settings. ns-3's
    # handshake gives every sender an RTT sample first (250 ms); htsim's own DCTCP source starts from 10 ms.
    folder = f"{V.DATA_DIR}/mechanisms"
    flows = read_connection_matrix(data.require(f"{folder}/incast_first_window.cm"))
    net = LeafSpineNetwork.of_dataset("fabric-websearch-128")
    spines = read_spines(data.require(f"{folder}/incast_first_window.spines"), flows, net.spines, net.hosts_per_leaf)
    ref = pd.read_csv(data.require(f"{folder}/incast_first_window_fct.csv")).drop(columns="size_bytes") * 1e-9
    eng = replay(flows, net, spines=spines).fct_s.to_numpy()
    htsim = ref.htsim_fct_ns.to_numpy()
    late_eng, late_ht = eng > 1.0, htsim > 1.0
    assert late_eng.sum() >= 25 and (late_eng != late_ht).sum() <= 1
    assert np.all(np.abs(eng[late_eng] - 3.01) < 1e-4)
    assert (ref.ns3_fct_ns < 0.26).all() and (ref.htsim_stock_rto_fct_ns[late_ht] < 0.021).all()
    same = np.isclose(eng, htsim, rtol=1e-5)
    assert same.sum() >= len(flows) - 6


def _marks(row) -> list:
    return [requires_data(row.cm, row.spines), pytest.mark.slow]


WORKLOAD_PARAMS = [pytest.param(r.workload, marks=_marks(r), id=r.workload) for r in WORKLOADS.itertuples()]


@pytest.mark.parametrize("name", WORKLOAD_PARAMS)
def test_the_engine_lies_inside_the_two_reference_envelope(name):
    # the bar on every statistic, once the flows that waited a retransmission timeout in any of the three
    # simulators are left out of all three alike (a timeout is a rare event that lands on different flows in
    # different simulators); the raw statistics: every p50 inside, and every mean or p99 outside lies in a class
    # that holds such a flow
    robust = V.validation_points([name], without_timeouts=True)
    assert len(robust) == 9 and robust.model.notna().all()
    outside = robust[~robust.within.astype(bool)]
    assert outside.empty, outside[["metric", "ns3", "htsim", "model", "error"]].to_string()
    raw = V.validation_points([name])
    assert raw[raw.statistic == "p50"].within.astype(bool).all()
    fct = V.reference_fct(name).assign(engine=V.engine_fct(name).fct_s.to_numpy())
    waited = (fct[[*V.REFERENCES, "engine"]] >= MIN_RTO_S).any(axis=1)
    hit = set(size_class(fct.size_bytes[waited].to_numpy(), VALIDATION_SIZE_CLASSES))
    raw_outside = raw[~raw.within.astype(bool)]
    assert set(raw_outside.size_class) <= hit, raw_outside[["metric", "ns3", "htsim", "model"]].to_string()


@pytest.mark.parametrize("name", WORKLOAD_PARAMS)
def test_the_engine_agrees_flow_by_flow_with_a_reference_more_closely_than_the_references_agree(name):
    # per size class, the share of flows whose FCTs differ by more than 1.5x: the engine against its nearer reference
    # no more than ns-3 against htsim (against the farther one it is about their own disagreement: notebook 05)
    share = V.flow_agreement([name]).pivot_table(index="size_class", columns="pair", values="share_beyond")
    nearer = share[[f"workbench / {ref}" for ref in V.REFERENCES]].min(axis=1)
    assert (nearer <= share["ns-3 / htsim"]).all(), share.round(3).to_string()


@pytest.mark.slow
def test_a_replay_moved_by_under_a_nanosecond_keeps_its_flows_and_spreads_only_by_timing():
    # the smallest workload, replayed as given and with every start up to 1 ns later (two seeds): typical FCTs are
    # unchanged (the per-flow median ratio), a few flows move (timing decides which packet meets a full queue), the
    # draws follow the seed, and timing_spread brackets the replay as given
    name = GENERATED.workload.iloc[0]
    given = V.engine_fct(name).fct_s.to_numpy()
    moved = {k: V.engine_fct(name, jitter_seed=k).fct_s.to_numpy() for k in (1, 2)}
    for fct in moved.values():
        assert np.isfinite(fct).all()
        assert abs(np.median(fct / given) - 1.0) < 0.01
        assert not np.array_equal(fct, given)
    assert not np.array_equal(moved[1], moved[2])
    spread = V.timing_spread([name], replicas=3)
    assert len(spread) == 9 and (spread.replicas == 3).all()
    assert (spread.replica_min <= spread.model).all() and (spread.model <= spread.replica_max).all()
    assert spread.within_share.isin([0.0, 1 / 3, 2 / 3, 1.0]).all()
    assert (spread.timeouts_min <= spread.timeouts_max).all()
    with pytest.raises(ValueError, match="replicas"):
        V.timing_spread([name], replicas=1)
