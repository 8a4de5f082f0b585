"""The executor cluster: hand-computed schedules, carbon, caps, waves, and the CAP / PCAPS rules in a run."""

import numpy as np
import pytest

from workbench.carbon.cluster import poisson_arrivals, sample_jobs, simulate
from workbench.carbon.dags import JobDAG
from workbench.carbon.schedulers import Cap, CriticalPath
from workbench.carbon.traces import TimeMapping, TraceError
from workbench.testing import requires_data


def _job(adj, stages):
    """stages: list of (first-wave ms list, rest-wave ms list, fresh ms list) at one key 1."""
    st = [{"first_wave": {"1": f}, "rest_wave": {"1": r}, "fresh_durations": {"1": fr}} for f, r, fr in stages]
    return JobDAG.from_dict({"adjacency": adj, "task_durations_ms": st})


def test_carbon_of_two_tasks_across_two_hours():
    job = _job([[0]], [([60000, 60000], [], [])])
    r = simulate([job], [0.0], np.array([100.0, 300.0]), "fifo", executors=1, power_w=1000.0)
    assert r.completion_s.tolist() == pytest.approx([120.0])
    assert r.carbon_g == pytest.approx((100 + 300) * 60 / 3600)
    assert r.energy_kwh == pytest.approx(120 / 3600)
    assert r.busy_per_hour()[:2].tolist() == pytest.approx([1.0, 1.0])


def test_idle_power_counts_idle_executors_until_makespan():
    job = _job([[0]], [([30000], [], [])])
    r = simulate([job], [0.0], np.array([100.0]), "fifo", executors=2, power_w=0.0, idle_power_w=1000.0)
    assert r.carbon_g == pytest.approx(100 * 30 / 3600)  # one idle executor for 30 s


def test_precedence_and_waves():
    # stage 0 (1 task) -> stage 1 (3 tasks: first wave 1 s, rest wave 2 s, fresh 5 s)
    job = _job([[0, 1], [0, 0]], [([4000], [], []), ([1000, 1000], [2000], [5000])])
    r = simulate([job], [0.0], np.ones(10), "fifo", executors=1)
    # stage 0: fresh executor, fresh pool empty -> first wave 4 s; stage 1 on the same executor: first wave 1 s,
    # then two rest-wave tasks of 2 s: 4 + 1 + 2 + 2
    assert r.completion_s[0] == pytest.approx(9.0)
    assert r.busy_stage.tolist() == [0, 1, 1, 1]


def test_fresh_executor_pays_warm_up():
    job = _job([[0]], [([1000, 1000], [2000], [5000])])
    r = simulate([job], [0.0], np.ones(10), "fifo", executors=1)
    assert r.completion_s[0] == pytest.approx(5.0 + 2.0 + 2.0)


def test_job_cap_bounds_parallelism():
    job = _job([[0]], [([10000] * 4, [], [])])
    r = simulate([job], [0.0], np.ones(10), "fifo", executors=4, job_cap=2)
    assert r.completion_s[0] == pytest.approx(20.0)
    r = simulate([job], [0.0], np.ones(10), "fifo", executors=4)
    assert r.completion_s[0] == pytest.approx(10.0)


def test_fifo_vs_critical_path_order():
    short = _job([[0]], [([1000], [], [])])
    long = _job([[0, 1], [0, 0]], [([5000], [], []), ([5000], [], [])])
    arr = [0.0, 0.0]
    fifo = simulate([short, long], arr, np.ones(10), "fifo", executors=1)
    assert fifo.completion_s.tolist() == pytest.approx([1.0, 11.0])
    cp = simulate([short, long], arr, np.ones(10), "cp", executors=1)
    assert cp.completion_s.tolist() == pytest.approx([11.0, 10.0])


def test_cap_defers_to_the_clean_hour():
    # K = 1, B = 0: at c = U = 400 no threshold is >= c -> 0 executors; hour 1 (c = L = 100) allows 1
    job = _job([[0]], [([10000], [], [])])
    inten = np.array([400.0] + [100.0] * 60)
    r = simulate([job], [0.0], inten, Cap(CriticalPath(), minimum=0), executors=1, power_w=1000.0)
    assert r.completion_s[0] == pytest.approx(70.0)
    assert r.carbon_g == pytest.approx(100 * 10 / 3600)
    agn = simulate([job], [0.0], inten, "agnostic", executors=1, power_w=1000.0)
    assert agn.carbon_g == pytest.approx(400 * 10 / 3600)


def test_pcaps_defers_the_less_important_stage():
    # two independent stages: cp 10 s (r = 1) and 1 s (r = 0.1); gamma = 1, c = U = 400, L = 100:
    # Psi(0.1) = 100 + 300 (e^0.1 - 1)/(e - 1) = 118.4 < 400 -> deferred until the 10-s stage finishes
    job = _job([[0, 0], [0, 0]], [([10000], [], []), ([1000], [], [])])
    inten = np.array([400.0] + [100.0] * 60)
    r = simulate([job], [0.0], inten, "pcaps", gamma=1.0, executors=2)
    assert sorted(zip(r.busy_stage.tolist(), r.busy_start_s.tolist())) == [(0, 0.0), (1, 10.0)]
    assert r.completion_s[0] == pytest.approx(11.0)
    r0 = simulate([job], [0.0], inten, "pcaps", gamma=0.0, executors=2)
    assert r0.completion_s[0] == pytest.approx(10.0)


def test_errors_name_the_parameter():
    job = _job([[0]], [([60000] * 3, [], [])])
    with pytest.raises(TraceError, match="give a longer trace or a larger seconds_per_hour"):
        simulate([job], [0.0], np.array([1.0, 1.0]), "fifo", executors=1)
    # and a larger one is what makes the same job fit the same two hours (more simulated seconds per trace hour)
    simulate([job], [0.0], np.array([1.0, 1.0]), "fifo", executors=1, mapping=TimeMapping(200_000.0))
    with pytest.raises(ValueError, match="arrivals_s has 2 entries for 1 jobs"):
        simulate([job], [0.0, 1.0], np.ones(5), "fifo")
    with pytest.raises(ValueError, match="job_cap must be <= 4"):
        simulate([job], [0.0], np.ones(5), "fifo", executors=4, job_cap=5)
    with pytest.raises(TraceError, match="start_hour=9"):
        simulate([job], [0.0], np.ones(5), "fifo", mapping=TimeMapping(60.0, 9))


def test_poisson_arrivals_seeded():
    a = poisson_arrivals(1000, 30.0, seed=3)
    assert a[0] == 0.0 and (np.diff(a) > 0).all()
    assert np.diff(a).mean() == pytest.approx(30.0, rel=0.1)
    assert np.array_equal(a, poisson_arrivals(1000, 30.0, seed=3))


@requires_data("carbon-dag/tpch/2g/q01.json", "carbon-dag/tpch/100g/q22.json")
def test_real_jobs_same_seed_same_result():
    jobs = sample_jobs(8, seed=2)
    arr = poisson_arrivals(8, 20.0, seed=2)
    inten = np.linspace(100, 500, 200)
    a = simulate(jobs, arr, inten, "pcaps", executors=20, seed=5)
    b = simulate(jobs, arr, inten, "pcaps", executors=20, seed=5)
    assert a.carbon_g == b.carbon_g and np.array_equal(a.completion_s, b.completion_s)
    assert (a.completion_s > a.arrival_s).all()
    # every task of every job ran exactly once
    assert a.busy_start_s.size == sum(int(j.num_tasks.sum()) for j in jobs)
