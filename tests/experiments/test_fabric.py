"""The fabric experiments reproduce the model functions they wrap and the tables notebooks 01 and 02 print."""

from __future__ import annotations

import numpy as np
import pytest

from workbench import experiments as ex
from workbench import fabric as fb

RUN = {"client": False, "cache": False, "progress": False}
SMALL = {"leaves": 4, "spines": 4, "hosts_per_leaf": 4}


def test_fabric_congestion_measures_match_the_model():
    df = ex.sweep("fabric-congestion", {**SMALL, "routing": ["ecmp", "mp-2", "minimal"], "samples": 400}, **RUN)
    assert list(df.columns[-5:]) == ["gpus", "step_label", "ratio", "ratio_exact", "connections_per_host"]
    by = df.set_index("routing")
    assert (by.gpus == 16).all() and by.ratio_exact["minimal"] == by.ratio["minimal"] == 1.0
    topo, step = fb.leaf_spine(4, 4, 4), fb.collective_steps("halving_doubling", 16, 2**30)[0]
    assert by.ratio_exact["ecmp"] == pytest.approx(fb.exact_congestion_ratio(topo, step, "ecmp"))
    assert abs(by.ratio["ecmp"] - by.ratio_exact["ecmp"]) < 0.1
    assert by.connections_per_host.tolist() == [1, 2, 4]
    # failures vs the healthy fabric: 4 flows of leaf 0 on its 3 live uplinks (4/3 for the splitting rule)
    fail = ex.sweep(
        "fabric-congestion",
        {**SMALL, "measure": "step_vs_healthy", "failed_uplinks": 1, "routing": ["spray", "minimal", "ecmp"]},
        **RUN,
    ).set_index("routing")
    assert fail.ratio["minimal"] == pytest.approx(fail.ratio["spray"]) == pytest.approx(4 / 3)
    assert fail.ratio["ecmp"] > fail.ratio["spray"]
    worst = ex.sweep(
        "fabric-congestion",
        {**SMALL, "measure": "worst_step", "collective": ["ring", "halving_doubling"], "routing": ["ecmp", "minimal"]},
        **RUN,
    )
    assert (worst[worst.routing == "minimal"].ratio == 1.0).all()
    ft = ex.sweep("fabric-congestion", {"topology": "fat_tree", "k": 4, "routing": ["ecmp", "minimal"]}, **RUN)
    assert ft.gpus.tolist() == [16, 16] and ft.ratio.iloc[1] == 1.0 and ft.ratio.iloc[0] > 1.0


def test_fabric_congestion_rejects_bad_points_before_running():
    with pytest.raises(ValueError, match="'routing'"):
        ex.sweep("fabric-congestion", {"routing": ["ecmp", "hash"]}, **RUN)
    with pytest.raises(ValueError, match="'placement'"):
        ex.sweep("fabric-congestion", {"placement": []}, **RUN)
    with pytest.raises(ValueError, match="'leaves'"):
        ex.sweep("fabric-congestion", {"leaves": 0}, **RUN)
    # a value each parameter accepts but the fabric does not: the point fails, named in the failures
    run = ex.run_sweep("fabric-congestion", {**SMALL, "failed_uplinks": [1, 4], "samples": 5}, **RUN)
    assert len(run.table) == 1 and "failed_uplinks" in run.failures.error.iloc[0]
    # named by the experiment's own parameter (the collective's builder calls it n_ranks)
    collective = ex.get("collective-time-vs-size")
    with pytest.raises(ValueError, match=r"^ranks must be a power of two for collective='halving_doubling', got 3"):
        collective.fn(**{**collective.defaults(), "ranks": 3, "collective": "halving_doubling"}, seed=0)


def test_collective_time_vs_size_rows_are_sizes_and_serial_equals_parallel():
    grid = {**SMALL, "collective": "ring", "routing": ["ecmp", "spray"], "sizes": 4}
    df = ex.sweep("collective-time-vs-size", grid, **RUN)
    assert list(df.columns[-3:]) == ["gpus", "size_bytes", "time_s"] and len(df) == 8
    spray = df[df.routing == "spray"]
    expected = fb.collective_time_vs_size(fb.leaf_spine(4, 4, 4), "ring", 16, spray.size_bytes, "spray")
    assert np.allclose(spray.time_s, expected) and np.all(np.diff(spray.time_s) > 0)
    with pytest.raises(ValueError, match="'sizes'"):
        ex.sweep("collective-time-vs-size", {"sizes": 0}, **RUN)


def test_ballsbins_max_load_exact_and_monte_carlo_agree():
    df = ex.sweep("ballsbins-max-load", [{"flows": 16, "paths": 16, "samples": 5000}], seeds=2, **RUN)
    assert list(df.columns) == [
        "flows", "paths", "samples", "job_seed", "job_index", "seed",
        "expected_max_exact", "expected_max_monte_carlo", "max_load_std",
    ]  # fmt: skip
    assert df.expected_max_exact.iloc[0] == pytest.approx(3.078, abs=1e-3)
    assert (abs(df.expected_max_monte_carlo - 3.078) < 0.05).all() and df.expected_max_monte_carlo.nunique() == 2
    with pytest.raises(ValueError, match="'paths'"):
        ex.sweep("ballsbins-max-load", {"paths": 0}, **RUN)


def test_named_streams_draw_what_the_model_draws_from_that_seed():
    """A study that names its jobs' streams gets the model's own draws: job_index -1 is the int seed itself, an index
    its child (what ``spawn`` hands out), whatever the sweep's seed."""
    from workbench._rng import spawn

    named = ex.sweep("ballsbins-max-load", [{"flows": 16, "paths": 16, "samples": 300, "job_seed": 11,
                                              "job_index": 2}], seeds=2, **RUN)  # fmt: skip
    assert named.expected_max_monte_carlo.nunique() == 1  # the sweep's seed is not used
    mc = fb.simulate_max_load(16, 16, samples=300, seed=spawn(11, 3)[2])
    assert named.expected_max_monte_carlo.iloc[0] == pytest.approx(float(mc.mean()), rel=1e-12)
    grid = {"leaves": 4, "spines": 4, "hosts_per_leaf": 4, "collective": "halving_doubling", "ranks": 16,
            "routing": ["ecmp", "minimal"], "samples": 50, "job_seed": 3}  # fmt: skip
    t = ex.sweep("step-congestion", grid, **RUN).set_index("routing")
    topo = fb.leaf_spine(4, 4, 4)
    step = fb.collective_steps("halving_doubling", 16, 2**30)[0]
    assert t.loc["ecmp", "ratio"] == pytest.approx(fb.congestion_ratio(topo, step, "ecmp", 50, seed=3), rel=1e-12)
    assert t.loc["ecmp", "ratio_exact"] == pytest.approx(fb.exact_congestion_ratio(topo, step, "ecmp"), rel=1e-12)
    assert t.loc["minimal", "ratio"] == pytest.approx(1.0) and t.loc["ecmp", "ratio"] > 1.2


def test_minimal_splitting_rule_studies():
    checks = ex.sweep("minimal-split-subflows", {"spines": [1, 5, 12]}, **RUN)
    assert checks.mismatches.sum() == 0 and checks.cases.tolist() == [3, 15, 36]
    vs_spray = ex.sweep("minimal-split-vs-spray", {"trials": 10, "job_seed": [7, 8]}, **RUN)
    assert (vs_spray.max_deviation < 1e-9).all() and (vs_spray.links_compared > 0).all()
    loads = ex.sweep("uplink-loads", {"leaves": 4, "spines": 4, "hosts_per_leaf": 4, "ranks": 16,
                                      "routing": ["spray", "ecmp"], "job_seed": 1}, **RUN)  # fmt: skip
    spray = loads[loads.routing == "spray"].load_bytes
    assert len(spray) == 16 and spray.nunique() == 1  # the crossing step sprayed: every uplink carries the same
    assert loads[loads.routing == "ecmp"].load_bytes.sum() == pytest.approx(spray.sum())


def test_the_busiest_step_message_size_and_oversubscription_of_the_spraying_panel():
    """``step = BUSIEST_STEP`` picks the step with the most bytes between leaves (the model's busiest_step, under the
    ranks' placement); uplink-loads routes a ``size_bytes`` message; ``oversubscription`` sets the uplink speed."""
    from workbench.experiments.fabric import BUSIEST_STEP

    point = {"leaves": 4, "spines": 2, "hosts_per_leaf": 2, "collective": "halving_doubling"}
    steps = fb.collective_steps("halving_doubling", 8, 2**20)
    busiest = fb.busiest_step(fb.leaf_spine(4, 2, 2), steps).label
    assert busiest == "reduce-scatter d=4"
    for name in ("fabric-congestion", "step-congestion", "uplink-loads"):
        rows = ex.sweep(name, {**point, "step": BUSIEST_STEP}, **RUN)
        assert set(rows.step_label) == {busiest}, name
    # strided: rank r on leaf r mod 4, so the d=4 exchange stays within a leaf and d=2 crosses with twice d=1's bytes
    strided = ex.run_point("fabric-congestion", {**point, "step": BUSIEST_STEP, "placement": "strided"}, cache=False)
    assert strided.step_label.iloc[0] == "reduce-scatter d=2"
    loads = ex.sweep("uplink-loads", {**point, "step": BUSIEST_STEP, "size_bytes": 2.0**20, "routing": "spray"}, **RUN)
    assert loads.load_bytes.sum() == pytest.approx(8 * 2**20 / 2)  # every rank sends half its message across leaves
    assert (loads.gpus == 8).all() and (loads.hosts == 8).all()
    assert (loads.fabric_oversubscription == 1.0).all()  # 2 hosts x 100 Gbit/s over 2 uplinks as given
    over = ex.sweep("uplink-loads", {**point, "oversubscription": [0.0, 1.5, 4.0], "routing": "spray"}, **RUN)
    assert sorted(set(over.fabric_oversubscription)) == [1.0, 1.5, 4.0]
    # the uplink speed changes the fluid time, and a point that leaves oversubscription at 0 keeps its seed
    times = ex.sweep("collective-time-vs-size", {**point, "oversubscription": [1.0, 4.0], "sizes": 2}, **RUN)
    t = times.groupby("oversubscription").time_s.max()
    assert t[4.0] > t[1.0] * 3
    with pytest.raises(ex.SweepError, match="leaf-spine only"):
        ex.run_point("fabric-congestion", {"topology": "fat_tree", "k": 4, "oversubscription": 2.0}, cache=False)
    with pytest.raises(ex.SweepError, match="topology must be leaf_spine"):
        ex.run_point("uplink-loads", {"topology": "fat_tree", "k": 4}, cache=False)


@pytest.mark.parametrize("name", ["uplink-loads", "planned-vs-ecmp-worst-step"])
def test_a_fractional_message_size_is_moved_in_whole_bytes(name):
    # size_bytes is declared a real number >= 1 (a sweep spaces it in log); uplink-loads refused every fractional
    # value ("must be an integer") while planned-vs-ecmp-worst-step truncated it: both now round to whole bytes
    small = {"gpus": 64, "samples": 5} if name == "planned-vs-ecmp-worst-step" else {}
    fractional = ex.run_point(name, {**small, "size_bytes": 728_543.4}, cache=False)
    whole = ex.run_point(name, {**small, "size_bytes": 728_543.0}, cache=False)
    value = "load_bytes" if name == "uplink-loads" else "ratio"
    np.testing.assert_allclose(fractional[value].to_numpy(), whole[value].to_numpy(), rtol=1e-12)
    assert ex.run_point(name, {**small, "size_bytes": 1.4}, cache=False)[value].notna().all()
