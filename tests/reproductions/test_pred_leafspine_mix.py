"""PRED's leaf-spine mix study on the per-packet engine: the scenario (same web-search flows in every mix and
marking, background and incast traffic as specified, deterministic, validated), the registered experiment and the
paired comparison table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench import aqm
from workbench import experiments as ex
from workbench.fabric.topology import leaf_spine

TOPO = leaf_spine(2, 2, 4, host_gbps=10.0, uplink_gbps=10.0)


def _run(marking, mix, **kw):
    return aqm.leaf_spine_mix(marking, mix=mix, topology=TOPO, duration_s=0.004, seed=3, **kw)


def test_every_mix_and_marking_carries_the_same_web_search_flows():
    web = []
    for mix, marking in [
        ("websearch", aqm.RedMarking.step(15)),
        ("incast", aqm.PRED_DEFAULT),
        ("background", aqm.RedMarking.step(65)),
    ]:
        f = _run(marking, mix, incast_fanin=3, background_receivers=2, background_flows_per_receiver=3).flows
        web.append(f[f.kind == "websearch"][["size_bytes", "start_s"]].reset_index(drop=True))
    assert len(web[0]) > 5
    pd.testing.assert_frame_equal(web[0], web[1])
    pd.testing.assert_frame_equal(web[0], web[2])


def test_background_and_incast_traffic_as_specified():
    bg = _run(aqm.RedMarking.step(15), "background", background_receivers=2, background_flows_per_receiver=3).flows
    long = bg[bg.kind == "long"]
    assert len(long) == 6 and long.is_long.all() and (long.start_s == 0).all()
    # long-lived: still sending at the end of the arrival window and the drain (0.004 + 0.004 s), then run out
    assert long.finished.all() and (long.fct_s > 0.008).all() and bg.finished.all()
    inc = _run(aqm.RedMarking.step(15), "incast", incast_fanin=5, incast_bytes=20_000, incast_rate_hz=5000).flows
    burst = inc[inc.kind == "incast"]
    assert len(burst) % 5 == 0 and len(burst) > 0
    assert (burst.size_bytes == 20_000).all()
    assert (burst.groupby("start_s").size() == 5).all()  # each burst: 5 senders at one instant


def test_deterministic_and_validated():
    a = _run(aqm.PRED_DEFAULT, "incast", incast_fanin=3).flows
    b = _run(aqm.PRED_DEFAULT, "incast", incast_fanin=3).flows
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError, match="mix"):
        _run(aqm.PRED_DEFAULT, "storage")
    with pytest.raises(ValueError, match="incast_fanin"):
        _run(aqm.PRED_DEFAULT, "incast", incast_fanin=8)


def test_pred_holds_a_shorter_queue_than_a_high_static_threshold_under_background_flows():
    kw = {"background_receivers": 2, "background_flows_per_receiver": 6}
    static = _run(aqm.RedMarking.step(65), "background", **kw).links
    pred = _run(aqm.PRED_DEFAULT, "background", **kw).links
    assert pred.mean_queue_pkts.max() < 0.8 * static.mean_queue_pkts.max()


def test_registered_experiment_rows():
    grid = {
        "mix": "incast",
        "marking": ["static", "pred"],
        "baseline": "step-15",
        "leaves": 3,
        "spines": 2,
        "hosts_per_leaf": 6,
        "duration_s": 0.004,
    }  # 18 hosts: room for the default 16-sender incast
    df = ex.sweep("pred-leafspine-mix", grid, seeds=1, client=False, cache=False, progress=False)
    assert set(df.marking) == {"static", "pred"} and len(df) == 6
    assert {"p99_s", "count", "mean_queue_pkts", "max_mean_queue_pkts"} <= set(df.columns)
    assert np.isfinite(df[df.size_class.str.startswith("small")].p99_s).all()
