"""``scripts/probe_experiment_edges.py``: which points it probes, and that a point refused by name, a point past its
memory limit and a point past its time limit are told apart (each in its own process, as the script runs them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location(
        "probe_experiment_edges", ROOT / "scripts" / "probe_experiment_edges.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_edges_are_each_numeric_parameters_declared_ends_other_than_its_default():
    edges = _script().edge_points("arrivals-pooled-waits", ("low", "high"))
    assert ("runs", 1000) in edges and ("customers", 100) in edges and ("customers", 10**7) in edges
    assert ("runs", 4) not in edges  # the default
    assert not [p for p, _ in edges if p in ("process", "utilization")]  # a choice; an open (0, 1) fraction
    assert _script().edge_points("arrivals-pooled-waits", ("high",)) == [
        (p, v) for p, v in edges if v in (10_000.0, 10**7, 1000, 10_000, 2**31 - 1)
    ]


def test_refused_points_points_past_the_memory_limit_and_slow_points_are_told_apart():
    probe = _script().probe
    refused = probe("arrivals-pooled-waits", {"runs": 1000}, timeout_s=120, memory_gb=8)
    assert refused["outcome"] == "refused" and "lower runs or customers" in refused["message"]
    # 10 M customers hold ~0.85 GB resident (waits and their draws): stopped past 0.6 GB
    over = probe("arrivals-pooled-waits", {"customers": 10**7}, timeout_s=120, memory_gb=0.6)
    assert over["outcome"] == "memory" and over["message"] == "resident memory passed 0.6 GB"
    assert probe("arrivals-pooled-waits", {"customers": 10**7}, timeout_s=0.5, memory_gb=8)["outcome"] == "slow"


def test_random_points_lie_inside_every_declared_range_and_repeat_with_their_seed():
    from workbench import experiments as ex

    draw = _script().random_points
    for name in (
        "pred-fct-vs-load",
        "serving-replica",
        "uplink-loads",
        "arrivals-pooled-waits",
        "minder-healthy-alarms",
    ):
        exp = ex.get(name)
        points = draw(name, 20, seed=3)
        assert points == draw(name, 20, seed=3) and points != draw(name, 20, seed=4)
        for point in points:
            assert {k: exp.param(k).validate(v) for k, v in point.items()} == point  # inside, and of its kind
        loads = [pt["load"] for pt in points if "load" in pt]
        assert not loads or len(set(loads)) == len(loads)  # drawn, not the default


def test_a_random_point_runs_in_its_own_process():
    point = {"utilization": 0.5, "process": "poisson", "customers": 200, "runs": 4}
    r = _script().probe("arrivals-pooled-waits", point, timeout_s=120, memory_gb=8)
    assert r["outcome"] == "ok", r
