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


def _both_loops(jobs, arr, inten, sched, **kw):
    """The compiled loop's and the Python loop's (completion, task records) for one run, or the error each raised."""
    from workbench.carbon import cluster as C

    rule = C._compiled_rule(sched)
    assert rule is not None, f"{sched.name} should run compiled"
    args = (jobs, np.asarray(arr, float), np.asarray(inten, float), sched)
    rest = (kw.get("executors", 10), kw.get("job_cap", kw.get("executors", 10)), kw.get("mapping", TimeMapping()))
    out = []
    for run in (lambda: C._simulate_compiled(*args, rule, *rest, 3), lambda: C._simulate_python(*args, *rest, 3)):
        try:
            out.append(run())
        except TraceError as e:
            out.append(str(e))
    return out


def _rules():
    from workbench.carbon.schedulers import Fifo, Pcaps, make_scheduler

    rules = [make_scheduler(k, gamma=0.7, cap_minimum=2) for k in ("fifo", "cp", "cap", "cap-fifo", "pcaps")]
    return [*rules, Pcaps(0.3, base=Fifo()), Pcaps(0.0)]


def test_compiled_loop_is_the_python_loop_on_toy_jobs():
    """Every built-in rule gives the same bytes compiled as the Python loop over the scheduler's methods: jobs with
    several stages, executor keys and waves, arrivals together and apart, an intensity that defers work, and a
    trace too short for CAP and PCAPS (the same error from both)."""
    rng = np.random.default_rng(0)
    jobs = []
    for q in range(6):
        n = 3 + q % 4
        adj = np.triu((rng.random((n, n)) < 0.4).astype(int), 1).tolist()
        stages = [
            {
                "first_wave": {k: (rng.integers(1, 30, 3) * 1000).tolist() for k in ("1", "2", "4")},
                "rest_wave": {"2": (rng.integers(1, 20, 2) * 1000).tolist()},
                "fresh_durations": {"4": (rng.integers(5, 40, 2) * 1000).tolist()},
            }
            for _ in range(n)
        ]
        jobs.append(JobDAG.from_dict({"adjacency": adj, "task_durations_ms": stages}))
    inten = 300 + 200 * np.sin(np.arange(400) / 3.0)
    for arr in (np.zeros(6), np.arange(6) * 40.0):
        for sched in _rules():
            compiled, python = _both_loops(jobs, arr, inten, sched, executors=5, job_cap=3)
            assert np.array_equal(compiled[0], python[0]) and np.array_equal(compiled[1], python[1]), sched.name
            short = _both_loops(jobs, arr, inten[:3], sched, executors=5, job_cap=3)
            if sched.carbon_aware:
                assert isinstance(short[0], str) and short[0] == short[1], sched.name
            else:
                assert np.array_equal(short[0][1], short[1][1]), sched.name
            # hours of zero intensity (forecast low 0: CAP's thresholds are all 0 there) and a trace of zeros
            for dark_from in (200, 30, 0):
                dark = np.where(np.arange(inten.size) >= dark_from, 0.0, inten)
                compiled, python = _both_loops(jobs, arr, dark, sched, executors=5, job_cap=3)
                assert np.array_equal(compiled[1], python[1]), (sched.name, dark_from)


@requires_data("carbon-dag/tpch/2g/q01.json", "carbon-dag/tpch/100g/q22.json")
def test_compiled_loop_is_the_python_loop_on_tpch_jobs():
    jobs = sample_jobs(40, seed=4)
    arr = poisson_arrivals(40, 15.0, seed=4)
    inten = np.concatenate([np.linspace(500, 100, 30), np.linspace(100, 600, 300)])
    for sched in _rules():
        compiled, python = _both_loops(jobs, arr, inten, sched, executors=25, job_cap=10)
        assert np.array_equal(compiled[0], python[0]) and np.array_equal(compiled[1], python[1]), sched.name


def test_a_scheduler_of_its_own_runs_the_python_loop():
    from workbench.carbon import cluster as C
    from workbench.carbon.schedulers import Fair

    class Shortest(CriticalPath):
        def priorities(self, sim, candidates):
            return [-c for c in super().priorities(sim, candidates)]

    assert C._compiled_rule(Shortest()) is None and C._compiled_rule(Fair()) is None
    assert C._compiled_rule(Cap(Shortest())) is None
    short = _job([[0]], [([1000], [], [])])
    long = _job([[0]], [([5000], [], [])])
    r = simulate([long, short], [0.0, 0.0], np.ones(10), Shortest(), executors=1)
    assert r.busy_job.tolist() == [1, 0]  # the short job first
