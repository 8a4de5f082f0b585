"""ServeGen's use case on the ``serving-capacity`` experiment: the under-provisioning table (the ablation runs in the reproduction's test)."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench import experiments as ex
from workbench.experiments.serving import provisioning_gap


def test_provisioning_gap_is_the_sweep_pivoted_and_deterministic(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    a = provisioning_gap("m-small", hours=[14], span_s=300, seeds=1)
    assert list(a.columns) == [
        "hour",
        "composed_rps",
        "naive_rps",
        "underprovision",
        "feasible",
        "requests",
        "cv_median",
    ]
    b = provisioning_gap("m-small", hours=[14], span_s=300, seeds=1)  # from the cache
    pd.testing.assert_frame_equal(a, b)
    row = a.iloc[0]
    assert row["composed_rps"] > 0 and row["naive_rps"] > 0 and row["feasible"]
    assert row["underprovision"] == pytest.approx(1 - row["composed_rps"] / row["naive_rps"])
    run = ex.run_sweep(
        "serving-capacity", {"model": "m-small", "hour": 14, "span_s": 300.0}, progress=False, client=False
    )
    assert run.cache_hits == 1 and run.table.capacity_rps.iloc[0] == row["composed_rps"]
    with pytest.raises(ValueError, match="'hour'"):
        provisioning_gap("m-small", hours=[24], span_s=300, seeds=1)
    with pytest.raises(ValueError, match="'model'"):
        provisioning_gap("nope", hours=[1])


def test_an_iteration_without_work_is_refused_by_name(tmp_path, monkeypatch):
    """serving-iteration with no prompt and no decodes (both parameters at their declared minimum, 0) has no
    iteration to time: it says which parameters to raise instead of dividing by a zero iteration time."""
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    with pytest.raises(ex.SweepError) as err:
        ex.run_point("serving-iteration", {"batch": 0, "prompt_tokens": 0}, seed=0)
    assert "prompt_tokens > 0" in str(err.value.run.failures.iloc[0]["error"])
    rows = ex.run_point("serving-iteration", {"batch": 0, "prompt_tokens": 512, "costs": "stated"}, seed=0)
    assert 0 < rows.attention_share.iloc[0] < 1


def test_a_workload_that_draws_no_request_is_refused_by_its_rate_and_duration():
    """A random probe found it (``scripts/probe_experiment_edges.py --random 2 --seed 157``): serving-hardware-gpus at
    0.11 req/s for 16 s drew no request and failed with the workload module's "requests is empty: nothing to pool",
    which names no knob of the experiment. The serving-hardware experiments now name the two that give requests."""
    from workbench.experiments import serving_hw

    drawn, refused = [], []
    for seed in range(20):  # about half a request expected: some seeds draw none, some draw one or more
        try:
            drawn.append(len(serving_hw._requests("m-large", "naive", 0.05, 10.0, seed)))
        except ValueError as err:
            refused.append(str(err))
    assert drawn and min(drawn) > 0 and refused
    assert refused[0].startswith("the m-large workload drew no request in duration_s=10 s at mean_rate_rps=0.05")
    assert refused[0].endswith("raise mean_rate_rps or duration_s")


def test_prefix_sharing_on_a_trace_without_block_ids_is_refused_by_its_knobs(tmp_path, monkeypatch):
    """A random probe found it (``scripts/probe_experiment_edges.py --random 2 --seed 181``): serving-replica with
    ``prefix_sharing=True`` on the ServeGen trace failed with the serving layer's "needs a 'hash_ids' column", a column
    the experiment's user never sees. The point is refused before anything is drawn, naming the two knobs."""
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    with pytest.raises(ex.SweepError) as err:
        ex.run_point("serving-replica", {"trace": "servegen", "prefix_sharing": True, "duration_s": 10.0}, seed=0)
    msg = str(err.value.run.failures.iloc[0]["error"])
    assert "prefix_sharing=True needs a trace with prefix-block ids: trace='servegen' has none" in msg
    assert msg.endswith("set prefix_sharing=False or trace to one of 'mooncake-conversation'")
    # serving-replica-gpus reads the same traces and has no prefix_sharing: its points are not refused (the first
    # version of this check read the knob there too, and a second probe, seed 191, found the KeyError)
    rows = ex.run_point("serving-replica-gpus", {"trace": "servegen", "window_s": 5.0, "duration_s": 10.0}, seed=0)
    assert rows.gpus.iloc[0] >= 1
