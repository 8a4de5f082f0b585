"""TPC-H DAGs: validation errors (cycle, stage without durations), task counts, duration pools, critical path."""

import json

import numpy as np
import pytest

from workbench.carbon.dags import DagError, JobDAG, load_job, load_json
from workbench.testing import requires_data


def _stage(fw, rest=None, fresh=None):
    return {"first_wave": fw, "rest_wave": rest or {k: [] for k in fw}, "fresh_durations": fresh or {k: [] for k in fw}}


def test_cycle_is_named():
    d = {"adjacency": [[0, 1], [1, 0]], "task_durations_ms": [_stage({"2": [1]})] * 2}
    with pytest.raises(DagError, match=r"q\.json: cycle among stages \[0, 1\]"):
        JobDAG.from_dict(d, source="q.json")


def test_stage_without_durations_is_named(tmp_path):
    p = tmp_path / "q99.json"
    p.write_text(
        json.dumps({"adjacency": [[0, 1], [0, 0]], "task_durations_ms": [_stage({"2": [5]}), _stage({"2": []})]})
    )
    with pytest.raises(DagError, match=r"q99.json: stage 1 has no first-wave task durations"):
        load_json(p)


def test_bad_json_names_line(tmp_path):
    p = tmp_path / "broken.json"
    p.write_text('{\n"adjacency": [\n')
    with pytest.raises(DagError, match=r"broken.json:\d+: not valid JSON"):
        load_json(p)


def test_task_counts_pools_and_fallbacks():
    st = _stage({"2": [1000, 2000], "10": []}, rest={"2": [3000], "10": []}, fresh={"2": [], "10": [9000]})
    dag = JobDAG.from_dict({"adjacency": [[0]], "task_durations_ms": [st]})
    assert dag.num_tasks.tolist() == [3]  # 2 first-wave + 1 rest-wave at the first key
    assert dag.keys.tolist() == [2, 10]
    first, rest, fresh = (dag.pools[k][0] for k in range(3))
    assert first[0].tolist() == [1.0, 2.0]
    assert first[1].tolist() == [1.0, 2.0]  # key 10 borrows the nearest key's first wave
    assert rest[0].tolist() == [3.0] and rest[1].tolist() == [1.0, 2.0]
    assert fresh[0].tolist() == [1.0, 2.0] and fresh[1].tolist() == [9.0]
    assert dag.mean_task_s[0] == pytest.approx(1.5)


def test_critical_path_hand_case():
    # 0 -> 1 -> 3, 0 -> 2 -> 3; work: 1 task x mean 1, 2, 5, 1 s
    adj = [[0, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]]
    st = [_stage({"1": [ms]}) for ms in (1000, 2000, 5000, 1000)]
    dag = JobDAG.from_dict({"adjacency": adj, "task_durations_ms": st})
    assert dag.critical_path_s().tolist() == pytest.approx([7.0, 3.0, 6.0, 1.0])
    assert dag.parents[3] == (1, 2) and dag.children[0] == (1, 2)
    assert dag.total_work_s == pytest.approx(9.0)


@requires_data("carbon-dag/tpch/10g/q09.json")
def test_real_query_loads():
    dag = load_job(9, "10g")
    assert dag.name == "q09@10g"
    assert dag.num_stages > 5
    assert (dag.num_tasks >= 1).all()
    assert np.isfinite(dag.critical_path_s()).all()
    with pytest.raises(ValueError, match="scale must be one of"):
        load_job(9, "3g")
