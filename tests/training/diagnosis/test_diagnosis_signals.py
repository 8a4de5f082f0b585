"""Signals follow the collective's dependency structure; faults act where and when they are injected; bad input
and gappy feeds are handled or rejected by name."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.training.diagnosis import Fault, JobSpec, Noise, check_signals, fault_effects, simulate, with_gaps

QUIET = Noise().scaled(0.0)


def test_noiseless_job_is_exact():
    job = JobSpec(ranks=16, ranks_per_machine=4, compute_s=1.0, allreduce_s=0.25, step_latency_s=1e-3)
    s = simulate(job, 5, noise=QUIET, seed=0)
    assert np.allclose(s.iteration_time_s, 1.25 + 30e-3)
    assert np.allclose(s.wait_s, 0.0, atol=1e-6)
    assert np.allclose(np.diff(s.iteration_start_s), s.iteration_time_s[:-1])


@pytest.mark.parametrize("collective", ["ring", "halving_doubling"])
def test_late_rank_is_waited_for_and_spreads_by_structure(collective):
    job = JobSpec(ranks=16, ranks_per_machine=4, allreduce_s=0.32, step_latency_s=0.0, collective=collective)
    s = simulate(job, 4, Fault("slow_gpu", 5, onset_iteration=2, severity=1.5), noise=QUIET, seed=0)
    it = 3
    assert s.wait_s[it, 5] == pytest.approx(0.0, abs=1e-6)  # the culprit waits for nobody
    assert np.allclose(np.delete(s.wait_s[it], 5), 0.5, atol=1e-5)  # everyone else waits its lateness
    blocked = s.blocked_after_s[it] - s.compute_s[it]
    step = job.allreduce_s / job.steps
    if collective == "ring":  # neighbour downstream first, then one more rank per step
        expect = ((np.arange(16) - 5) % 16) * step
    else:  # halving-doubling: the stall doubles its reach each step
        x = np.arange(16) ^ 5
        expect = (np.floor(np.log2(np.maximum(x, 1))) + 1) * step
    expect[5] = np.nan
    assert np.allclose(blocked, expect, equal_nan=True, atol=1e-6)


def test_slow_link_sender_transmits_longest_and_job_runs_at_its_pace():
    job = JobSpec(ranks=32, allreduce_s=0.3)
    s = simulate(job, 6, Fault("nic_degraded", 11, onset_iteration=3, severity=3.0), noise=QUIET, seed=0)
    assert s.busy_s[4, 11] == pytest.approx(0.9, rel=1e-5)
    assert s.iteration_time_s[4] == pytest.approx(job.iteration_s + 0.6, rel=1e-5)
    assert int(np.argmin(s.wait_s[4])) == 11


def test_fail_stop_hangs_the_collective():
    s = simulate(JobSpec(ranks=32), 10, Fault("fail_stop", 7, onset_iteration=4), seed=0)
    assert np.isnan(s.iteration_end_s[4:]).all() and not np.isnan(s.iteration_end_s[:4]).any()
    assert np.isnan(s.compute_s[4, 7]) and not np.isnan(np.delete(s.compute_s[4], 7)).any()
    util = s.metrics[-1, :, 0]  # after the hang: the dead machine idles, the others spin
    assert util[0] < 0.1 and (util[1:] > 0.8).all()


def test_intermittent_faults_come_and_go():
    fx = fault_effects(Fault("flapping_link", 0, onset_iteration=10, severity=2.0, duty=0.3, period_iterations=10), 40)
    assert fx.active[:10].sum() == 0 and fx.active[10:].sum() == 9
    fx = fault_effects(Fault("straggler", 0, onset_iteration=10, duty=0.2), 2000, seed=1)
    assert 0.15 < fx.active[10:].mean() < 0.25


def test_same_seed_same_bytes_and_metrics_sampled_at_interval():
    a = simulate(JobSpec(ranks=64), 30, Fault("cpu_contention", 3, 10), sample_interval_s=0.5, seed=3)
    b = simulate(JobSpec(ranks=64), 30, Fault("cpu_contention", 3, 10), sample_interval_s=0.5, seed=3)
    assert a.compute_s.tobytes() == b.compute_s.tobytes() and a.metrics.tobytes() == b.metrics.tobytes()
    assert np.allclose(np.diff(a.sample_s), 0.5) and a.metrics.shape[1:] == (8, 8)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="ranks_per_machine"):
        JobSpec(ranks=10, ranks_per_machine=8)
    with pytest.raises(ValueError, match="power-of-two"):
        JobSpec(ranks=24, collective="halving_doubling")
    with pytest.raises(ValueError, match="fault rank"):
        simulate(JobSpec(ranks=16), 10, Fault("slow_gpu", 16, 2))
    with pytest.raises(ValueError, match="kind"):
        Fault("gremlins", 0, 1)
    with pytest.raises(TypeError, match="Signals"):
        check_signals({"compute_s": []})


def test_a_job_too_large_to_hold_is_refused_before_allocating_it():
    # 65,536 ranks x 100,000 iterations would be 26 GB per per-rank array; refused by name, with the most that fits
    with pytest.raises(ValueError, match=r"lower iterations \(at most 1,525 at 65,536 ranks\)"):
        simulate(JobSpec(ranks=65_536), 100_000, seed=0)
    # at 100x the default noise the slowest rank stretches 300 iterations of 1.3 s to ~7e6 s: 3.6e9 metric values
    with pytest.raises(ValueError, match="lower the noise level, iterations or ranks, or sample less often"):
        simulate(JobSpec(ranks=512), 300, noise=Noise().scaled(100.0), seed=0)
    # the same job sampled 10,000x less often fits
    s = simulate(JobSpec(ranks=512), 300, noise=Noise().scaled(100.0), sample_interval_s=1e4, seed=0)
    assert s.metrics.shape[1:] == (64, 8) and len(s.sample_s) == s.metrics.shape[0] > 1


def test_gaps_are_tolerated_or_rejected():
    s = simulate(JobSpec(ranks=32), 40, seed=0)
    assert check_signals(with_gaps(s, 0.2, seed=1)) is not None
    lost_rank = with_gaps(s, 0.0)
    lost_rank.compute_s[:, 9] = np.nan
    with pytest.raises(ValueError, match=r"ranks \[9\]"):
        check_signals(lost_rank)
    lost_iteration = with_gaps(s, 0.0)
    lost_iteration.compute_s[12] = np.nan
    with pytest.raises(ValueError, match=r"iterations \[12\]"):
        check_signals(lost_iteration)
