"""PerfTracker-style detector on hand-built traces: trigger iteration, hang delay, subset vs all-worker localization."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from workbench.training.diagnosis import Fault, JobSpec, Noise, Scenario, perftracker, simulate
from workbench.training.diagnosis.signals import PROFILED

RANKS = 32
IT = 200


def hand_trace(compute_extra=None, profile_extra=None):
    """A noiseless 32-rank job (1 s compute, 0.3 s all-reduce) with hand-set extra time per function.

    ``profile_extra`` is ``{function: (rows, ranks, seconds)}``; ``compute_extra`` ``(rows, ranks, factor)`` scales
    forward/backward. Iteration times follow: every rank waits for the slowest.
    """
    s = simulate(JobSpec(ranks=RANKS), IT, noise=Noise().scaled(0.0), seed=0)
    s = replace(s, noise=replace(s.noise, checkpoint_every=0))
    profile = s.profile_s.copy()
    profile[..., PROFILED.index("checkpoint")] = 0.0
    compute = s.compute_s - s.profile_s[..., PROFILED.index("checkpoint")]
    if compute_extra is not None:
        rows, ranks, factor = compute_extra
        fwd = compute - profile.sum(axis=2)
        compute[rows, ranks] += (factor - 1.0) * fwd[rows, ranks]
    for fn, (rows, ranks, seconds) in (profile_extra or {}).items():
        profile[rows, ranks, PROFILED.index(fn)] += seconds
        compute[rows, ranks] += seconds
    duration = compute.max(axis=1).astype(float) + s.busy_s.max(axis=1)
    start = np.concatenate([[0.0], np.cumsum(duration)[:-1]])
    return replace(s, compute_s=compute, profile_s=profile, iteration_start_s=start, iteration_end_s=start + duration)


def test_boundaries_are_learned_from_the_event_sequence():
    s = simulate(JobSpec(ranks=RANKS), 600, seed=1)  # with checkpoint events at 249 and 499
    ids, _ = perftracker.event_stream(s, 0)
    assert perftracker.learn_period(ids) == (5, 0)  # data loader, fwd/bwd, optimizer, gc, all-reduce
    bounds, ckpt = perftracker.iteration_boundaries(s)
    np.testing.assert_allclose(bounds, s.iteration_start_s, rtol=1e-9)
    assert np.flatnonzero(ckpt).tolist() == [249, 499]


def test_known_all_worker_slowdown_triggers_at_the_expected_iteration():
    # forward/backward 1.5x slower on every rank from iteration 100: 1.3 s -> ~1.69 s per iteration. The mean of
    # the last 20 exceeds 1.1 x 1.3 s once k slow iterations add k x 0.39 / 20 > 0.13 s: k = 7, iteration 106.
    s = hand_trace(compute_extra=(slice(100, None), slice(None), 1.5))
    sus = perftracker.detect(s)
    t = s.iteration_time_s
    k = int(np.argmax(np.cumsum(t[100:] - t[0]) / 20 > 0.1 * t[0])) + 1
    assert int(sus.alarm_iteration.iloc[0]) == 100 + k - 1 == 106
    assert set(zip(sus.function, sus.scope, sus.trigger)) == {("forward_backward", "all", "degradation")}
    assert len(sus) == s.job.machines and (sus["rank"] == -1).all()
    assert sus.alarm_s.iloc[0] == pytest.approx(s.iteration_end_s[106])


def test_hang_triggers_after_several_mean_iterations():
    s = simulate(
        JobSpec(ranks=RANKS), IT, Fault("fail_stop", 5, onset_iteration=150), noise=Noise().scaled(0.0), seed=0
    )
    sus = perftracker.detect(s, hang_iterations=5)
    mean_it = s.job.iteration_s
    last_event = s.iteration_start_s[150] + s.job.compute_s  # the others enter the all-reduce and wait
    assert set(sus.trigger) == {"hang"}
    assert sus["rank"].tolist() == [5]
    assert sus.alarm_s.iloc[0] == pytest.approx(last_event + 5 * mean_it, rel=1e-3)
    assert perftracker.detect(s, hang_iterations=2).alarm_s.iloc[0] == pytest.approx(last_event + 2 * mean_it, rel=1e-3)


def test_subset_function_slowdown_localizes_its_workers_and_function():
    machine1 = slice(8, 16)
    s = hand_trace(profile_extra={"optimizer_step": (slice(100, None), machine1, 0.3)})
    sus = perftracker.detect(s)
    assert set(zip(sus.function, sus.scope, sus.trigger)) == {("optimizer_step", "subset", "degradation")}
    assert sorted(sus["rank"].tolist()) == list(range(8, 16))
    assert set(sus.machine) == {1}
    assert 100 <= int(sus.alarm_iteration.iloc[0]) <= 110


def test_all_worker_function_slowdown_is_classed_as_all_worker():
    s = hand_trace(profile_extra={"gc": (slice(100, None), slice(None), 0.3)})
    sus = perftracker.detect(s)
    assert set(sus.scope) == {"all"} and set(sus.function) == {"gc"}
    # the window mean passes 1.1 x 1.3 s after k x 0.3 / 20 > 0.13 s: k = 9 slow iterations, iteration 108; the
    # score is the gc's rise over that window (9 of 20 iterations slowed by 0.3 s), in iterations
    assert int(sus.alarm_iteration.iloc[0]) == 108
    assert sus.score.iloc[0] == pytest.approx(9 / 20 * 0.3 / 1.3, rel=0.02)


def test_a_noise_burst_that_localizes_nothing_raises_no_alarm():
    # data-loader hiccups on a different rank every iteration for 30 iterations: the job is slower, no function on
    # any worker stands out and none grew everywhere
    rows = np.arange(100, 130)
    s = hand_trace(profile_extra={"data_loader": (rows, rows % RANKS, 0.5)})
    assert perftracker.degradation_trigger(s.iteration_time_s)[0].any()
    assert len(perftracker.detect(s)) == 0


@pytest.mark.parametrize("seed", range(3))
def test_no_alarm_on_healthy_jobs(seed):
    s = Scenario("none", 256, iterations=600, seed=seed, noise_level=2.0).signals()  # hiccups, 2 checkpoints
    assert len(perftracker.detect(s)) == 0


@pytest.mark.parametrize("kind", ["slow_dataloader", "slow_optimizer", "gc_pause"])
def test_function_faults_in_scenarios(kind):
    s = Scenario(kind, 128, 3.0, iterations=300, onset_iteration=100, seed=2).signals()
    sus = perftracker.detect(s)
    assert sus.function.iloc[0] == {"slow_dataloader": "data_loader", "slow_optimizer": "optimizer_step"}.get(
        kind, "gc"
    )
    assert set(sus.machine) == {s.faults[0].machine(8)}


def test_bad_input_is_named():
    s = simulate(JobSpec(ranks=16), 50, seed=0)
    with pytest.raises(ValueError, match="threshold"):
        perftracker.detect(s, threshold=-0.1)
    with pytest.raises(ValueError, match="function-level profile"):
        perftracker.detect(replace(s, profile_s=np.zeros((0, 0, 4), np.float32)))
    with pytest.raises(ValueError, match="scope"):
        Fault("slow_gpu", 0, 5, scope="all")
