"""Fused pipelines (RLHFuse): hand-computed 1F1B and bound terms, the checker on tiny files (a dependency violation
and a double-booked GPU named by line and tasks), the published schedules, greedy and annealing."""

import numpy as np
import pytest

from workbench.testing import requires_data
from workbench.training import fused_pipeline as fp

TINY = fp.Instance(pp0=2, pp1=2, m0=1, m1=1, f0=1, f1=1)
# GPU 0: Actor stage 0 and the Critic's stage 1; GPU 1: Actor stage 1 and the Critic's stage 0. Makespan 6.
VALID = [
    "[0, 0, 0, 0, 1, 1], [1, 0, 1, 1, 2, 2], [1, 0, 2, 2, 4, 1], [0, 0, 3, 4, 6, 0], ",
    "[1, 0, 0, 0, 1, 1], [0, 0, 1, 1, 2, 2], [0, 0, 2, 2, 4, 1], [1, 0, 3, 4, 6, 0], ",
]
INSTANCES = [f"rlhfuse-schedules/{f}" for f in ("instances.csv", *(f"traces/trace_exp{i}.txt" for i in range(12)))]


def _write(tmp_path, lines, name="s.txt"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n\nOurs:\nE2E time usage: 6\nPeak memory usage: 2.0\nUtilization: 100.00%\n")
    return p


def test_one_f_one_b_makespan_is_m_plus_p_minus_1_times_3f():
    for p, m, f in [(4, 8, 2), (8, 32, 5), (3, 3, 1), (1, 5, 2)]:
        s = fp.one_f_one_b(p, m, forward=f)
        assert s.makespan == (m + p - 1) * 3 * f
        assert len(s) == 2 * p * m


def test_one_f_one_b_holds_at_most_p_minus_s_microbatches_on_stage_s():
    inst = fp.Instance(pp0=4, pp1=4, m0=8, m1=1, f0=1, f1=1)
    s = fp.one_f_one_b(4, 8)
    a = fp.sequential_1f1b(inst)
    actor = a.model == 0
    assert np.array_equal(a.start[actor], s.start)
    # stage 0 of 1F1B holds 4 micro-batches' activations at most (mem0 = 1 per micro-batch)
    assert fp.check_schedule(inst, a).gpu_peak_memory[0] == pytest.approx(4.0)


def test_sequential_1f1b_is_the_sum_of_the_two_1f1b_makespans():
    inst = fp.Instance(pp0=4, pp1=2, m0=8, m1=4, f0=2, f1=1)
    s = fp.sequential_1f1b(inst)
    assert s.makespan == (8 + 3) * 6 + (4 + 1) * 3
    assert fp.check_schedule(inst, s).makespan == 81


def test_lower_bound_terms_by_hand():
    b = fp.lower_bound(fp.Instance(pp0=4, pp1=4, m0=8, m1=8, f0=2, f1=1))
    assert b.critical_path == 66  # (8 + 4 - 1) * 3 * 2
    assert b.average_work == pytest.approx(72.0)  # (4*8*6 + 4*8*3) / 4
    assert b.gpu_work == 72  # 8*6 + 8*3
    # GPU 1: Actor stage 1, Critic stage 2: head min(2, 2), tail min(4, 4) -> 72 + 6
    assert b.gpu_work_head_tail == 78 and b.value == 78
    assert fp.lower_bound(TINY).value == 6


def test_checker_accepts_a_valid_file_and_recomputes_makespan_and_memory(tmp_path):
    s = fp.read_schedule(_write(tmp_path, VALID))
    c = fp.check_schedule(TINY, s)
    assert c.makespan == 6 and c.peak_memory == pytest.approx(2.0)
    assert c.utilization == pytest.approx(12 / 12)  # 2 chains x 2 stages x 3 = 12 of work on 2 GPUs x 6
    assert s.summary["Ours"]["e2e_time_usage"] == 6 and s.summary["Ours"]["utilization"] == pytest.approx(1.0)


def test_checker_names_the_line_and_both_tasks_of_a_dependency_violation(tmp_path):
    lines = [VALID[0].replace("[0, 0, 3, 4, 6, 0]", "[0, 0, 3, 3, 5, 0]"), VALID[1]]
    with pytest.raises(fp.ScheduleError, match=r"s\.txt:1: dependency violated") as e:
        fp.check_schedule(TINY, fp.read_schedule(_write(tmp_path, lines)))
    assert "[0, 0, 3]" in str(e.value) and "[0, 0, 2]" in str(e.value) and "s.txt:2" in str(e.value)


def test_checker_names_the_line_and_both_tasks_of_a_double_booked_gpu(tmp_path):
    lines = [
        VALID[0].replace("[0, 0, 3, 4, 6, 0]", "[0, 0, 3, 5, 7, 0]"),
        VALID[1].replace("[0, 0, 2, 2, 4, 1]", "[0, 0, 2, 3, 5, 1]"),
    ]
    with pytest.raises(fp.ScheduleError, match=r"s\.txt:2: GPU 1 double-booked") as e:
        fp.check_schedule(TINY, fp.read_schedule(_write(tmp_path, lines)))
    assert "[1, 0, 3]" in str(e.value) and "[0, 0, 2]" in str(e.value)


def test_checker_rejects_missing_duplicate_misplaced_and_wrong_duration_tasks(tmp_path):
    cases = {
        "tasks missing": [VALID[0].replace("[0, 0, 3, 4, 6, 0], ", ""), VALID[1]],
        "also at": [VALID[0] + "[0, 0, 3, 8, 10, 0]", VALID[1]],
        "belongs on GPU 1": [VALID[1], VALID[0]],
        "must last 2": [VALID[0].replace("[0, 0, 3, 4, 6, 0]", "[0, 0, 3, 4, 7, 0]"), VALID[1]],
        "not a task": [VALID[0].replace("[0, 0, 3,", "[0, 1, 3,"), VALID[1]],
    }
    for i, (message, lines) in enumerate(cases.items()):
        with pytest.raises(fp.ScheduleError, match=message):
            fp.check_schedule(TINY, fp.read_schedule(_write(tmp_path, lines, f"c{i}.txt")))


def test_reader_names_the_line_of_a_malformed_item(tmp_path):
    with pytest.raises(fp.ScheduleError, match=r"bad\.txt:2: item 2 must have 6 fields"):
        fp.read_schedule(_write(tmp_path, [VALID[0], "[1, 0, 0, 0, 1, 1], [0, 0, 1, 1, 2]"], "bad.txt"))


def test_instances_csv_errors_name_the_line(tmp_path):
    p = tmp_path / "i.csv"
    p.write_text("exp,pp0,pp1,m0,m1,f0,f1,mem0,mem1\n0,8,4,32,16,5,4,1.95,2\n1,8,3,32,16,5,4,1.95,2\n")
    with pytest.raises(fp.InstanceError, match=r"i\.csv:3: pp1 must divide pp0"):
        fp.load_instances(p)
    p.write_text("exp,pp0,pp1,m0,m1,f0,f1,mem0,mem1\n0,8,4,x,16,5,4,1.95,2\n")
    with pytest.raises(fp.InstanceError, match=r"i\.csv:2: m0 must be an integer"):
        fp.load_instances(p)
    with pytest.raises(ValueError, match="m0 must be >= 1"):
        fp.Instance(pp0=2, pp1=2, m0=0, m1=1, f0=1, f1=1)


@pytest.mark.parametrize("inst", [TINY, fp.Instance(pp0=4, pp1=2, m0=8, m1=4, f0=2, f1=1)])
def test_greedy_and_anneal_are_valid_and_above_the_bound(inst):
    bound = fp.lower_bound(inst).value
    g = fp.greedy(inst)
    a = fp.anneal(inst, seed=3, iterations=500)
    for s in (g, a):
        assert fp.check_schedule(inst, s).makespan == s.makespan >= bound
    assert a.makespan <= g.makespan
    assert a.makespan < fp.sequential_1f1b(inst).makespan


def test_anneal_is_deterministic_per_seed():
    inst = fp.Instance(pp0=4, pp1=2, m0=8, m1=4, f0=2, f1=1)
    a, b = (fp.anneal(inst, seed=7, iterations=400) for _ in range(2))
    assert np.array_equal(a.start, b.start) and a.info == b.info
    with pytest.raises(ValueError, match="exactly one of iterations"):
        fp.anneal(inst, seed=1)


def test_anneal_time_budget_records_its_iteration_count():
    inst = fp.Instance(pp0=4, pp1=2, m0=8, m1=4, f0=2, f1=1)
    a = fp.anneal(inst, seed=2, time_budget_s=0.2)
    again = fp.anneal(inst, seed=2, iterations=a.info["iterations"])
    assert a.info["iterations"] > 0 and np.array_equal(a.start, again.start)


@requires_data(*INSTANCES)
def test_published_schedules_are_valid_and_match_their_summaries():
    insts = fp.load_instances()
    assert [i.exp for i in insts] == list(range(12))
    at_bound = 0
    for inst in insts:
        s = fp.published_schedule(inst.exp)
        c = fp.check_schedule(inst, s)
        ours = s.summary["Ours"]
        assert c.makespan == ours["e2e_time_usage"]
        assert c.peak_memory == pytest.approx(ours["peak_memory_usage"], abs=1e-4)
        assert c.utilization == pytest.approx(ours["utilization"], abs=1e-4)
        bound = fp.lower_bound(inst)
        # the solver's "Theoretically best" is the first two terms only
        best = max(bound.critical_path, bound.average_work)
        assert best == pytest.approx(s.summary["Theoretically best"]["e2e_time_usage"])
        assert c.makespan >= bound.value
        at_bound += c.makespan == bound.value
    assert at_bound == 11  # exp9: 613 against the bound 606


@requires_data(*INSTANCES)
def test_recorded_memory_column_is_the_running_activation_memory():
    inst = fp.load_instances()[2]
    s = fp.published_schedule(2)
    lay = fp.task_table(inst)
    chain = np.where(s.model == 0, s.microbatch, inst.m0 + (s.model - 1) * inst.m1 + s.microbatch)
    starts = np.r_[
        0, np.cumsum(np.where(np.arange(inst.m0 + inst.replicas * inst.m1) < inst.m0, 2 * inst.pp0, 2 * inst.pp1))
    ]
    delta = lay.memory.to_numpy()[starts[chain] + s.task]
    for g in range(inst.gpus):  # file order is execution order
        on = s.gpu == g
        assert np.allclose(np.cumsum(delta[on]), s.memory[on], atol=1e-4)


@requires_data(*INSTANCES)
def test_greedy_and_short_anneal_on_a_published_instance():
    inst = fp.load_instances()[8]
    bound = fp.lower_bound(inst).value
    a = fp.anneal(inst, seed=0, iterations=300)
    assert fp.check_schedule(inst, a).makespan >= bound
    assert fp.check_schedule(inst, fp.greedy(inst)).makespan >= bound


def test_memory_limit_holds_forwards_back():
    inst = fp.Instance(pp0=4, pp1=2, m0=8, m1=4, f0=2, f1=1, mem0=1.0, mem1=1.0)
    free = fp.check_schedule(inst, fp.greedy(inst))
    assert free.peak_memory > 6.0  # the longest-path greedy runs forwards ahead and piles up activations
    for s in (fp.greedy(inst, memory_limit=6.0), fp.anneal(inst, seed=0, iterations=300, memory_limit=6.0)):
        c = fp.check_schedule(inst, s)
        assert c.peak_memory <= 6.0 + 1e-9 and s.info["peak_memory"] == pytest.approx(c.peak_memory)
        assert c.makespan >= fp.lower_bound(inst).value
    with pytest.raises(ValueError, match="memory_limit must satisfy 0 < value"):
        fp.greedy(inst, memory_limit=-1.0)
