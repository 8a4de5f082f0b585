"""Each detector finds what its paper's idea can find, stays quiet on a healthy job, and tells culprit from victim."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.training.diagnosis import (
    DETECTORS,
    Fault,
    JobSpec,
    c4d,
    evaluate,
    holmes,
    minder,
    naive,
    quality_table,
    scenario_grid,
    simulate,
    with_gaps,
)
from workbench.training.diagnosis._common import SUSPECT_COLUMNS


@pytest.fixture(scope="module")
def healthy():
    return simulate(JobSpec(ranks=256), 400, seed=11)


@pytest.mark.parametrize("name", sorted(DETECTORS))
def test_quiet_on_a_healthy_job_and_same_interface(name, healthy):
    out = DETECTORS[name](healthy)
    # the shared columns first; a detector may add its own after them (PerfTracker: function, scope, trigger)
    assert tuple(out.columns[: len(SUSPECT_COLUMNS)]) == SUSPECT_COLUMNS and len(out) == 0


@pytest.mark.parametrize("kind", ["slow_gpu", "nic_degraded", "cpu_contention", "fail_stop"])
def test_c4d_localizes_persistent_faults_within_seconds(kind):
    s = simulate(JobSpec(ranks=256), 300, Fault(kind, 77, onset_iteration=100, severity=2.0), seed=2)
    out = c4d.detect(s)
    assert out.machine.iloc[0] == 77 // 8
    assert 0 <= out.alarm_s.iloc[0] - s.onset_s() < 15


def test_naive_blames_a_victim_of_a_slow_link_and_c4d_does_not():
    s = simulate(JobSpec(ranks=64), 300, Fault("nic_degraded", 20, 100, severity=4.0), seed=0)
    assert c4d.detect(s).loc[0, "rank"] == 20
    assert naive.detect(s).loc[0, "rank"] == 20  # the sender itself transmits longest
    # but a fail-stop leaves the watchdog nothing to name: it blames whoever logged most work
    s = simulate(JobSpec(ranks=64), 300, Fault("fail_stop", 20, 100), seed=0)
    out = naive.detect(s)
    assert out.alarm_s.iloc[0] - s.onset_s() >= 600 and out.loc[0, "rank"] != 20


def test_minder_needs_continuity():
    s = simulate(JobSpec(ranks=128), 400, Fault("nic_degraded", 50, onset_iteration=100), seed=4)
    out = minder.detect(s, continuity_s=30.0)
    assert out.machine.iloc[0] == 50 // 8 and (out["rank"] == -1).all()
    assert out.alarm_s.iloc[0] - s.onset_s() >= 30.0
    flap = simulate(JobSpec(ranks=128), 400, Fault("flapping_link", 50, 100, duty=0.3, period_iterations=20), seed=4)
    assert len(minder.detect(flap, continuity_s=30.0)) == 0  # 6-iteration bursts never last 30 s
    assert minder.detect(flap, continuity_s=5.0).machine.iloc[0] == 50 // 8


@pytest.mark.parametrize("collective", ["ring", "halving_doubling"])
def test_holmes_traces_irregular_iterations_to_their_source(collective):
    s = simulate(
        JobSpec(ranks=128, collective=collective),
        300,
        Fault("irregular", 93, onset_iteration=50, severity=3.0, duty=0.05),
        seed=5,
    )
    loc = holmes.localize_iterations(s)
    comm = loc[loc.root_rank >= 0]
    assert len(comm) >= 5 and (comm.root_rank == 93).all()
    assert holmes.detect(s).loc[0, "rank"] == 93


def test_detectors_survive_a_gappy_feed():
    s = with_gaps(simulate(JobSpec(ranks=128), 300, Fault("slow_gpu", 33, 100, 2.0), seed=6), 0.05, seed=0)
    assert c4d.detect(s).machine.iloc[0] == 4
    assert minder.detect(s).machine.iloc[0] == 4


def test_detectors_validate_parameters(healthy):
    with pytest.raises(ValueError, match="need"):
        c4d.detect(healthy, window=3, need=4)
    with pytest.raises(ValueError, match="continuity_s"):
        minder.detect(healthy, continuity_s=0)
    with pytest.raises(ValueError, match="irregular_factor"):
        holmes.detect(healthy, irregular_factor=1.0)


def test_quality_table_counts_false_alarms_and_misses():
    r = evaluate(
        scenario_grid(
            ["nic_degraded", "irregular"], ranks=[64], severities=[3.0], healthy=1, iterations=300, onset_iteration=100
        ),
        ["c4d", "naive"],
    )
    q = quality_table(r).set_index(["detector", "kind"])
    assert q.loc[("c4d", "nic_degraded"), "f1"] == 1.0
    assert q.loc[("c4d", "irregular"), "recall"] == 0.0  # rare irregular iterations never persist 3-of-5
    assert (
        np.isnan(q.loc[("naive", "nic_degraded"), "median_delay_s"])
        or q.loc[("naive", "nic_degraded"), "median_delay_s"] > q.loc[("c4d", "nic_degraded"), "median_delay_s"]
    )


def test_a_healthy_scenario_has_no_onset_to_leave_room_for():
    """A healthy job has no fault and no onset: the healthy-alarm experiments run it at their declared minimum of 20
    iterations (it required onset_iteration + 2 = 152, the default onset of a fault it does not have); a faulty
    scenario still needs iterations after its onset."""
    from workbench.training.diagnosis import Scenario

    assert Scenario("none", ranks=64, iterations=20).signals().iterations == 20
    with pytest.raises(ValueError, match="iterations"):
        Scenario("slow_gpu", ranks=64, iterations=20, onset_iteration=50)
