"""Every example of issue 39 (bad input on the modules added in round 4) is a named error, tested one by one: the
generated suite (``test_contracts.py``) covers the declared parameters, these cover the files, the cross-parameter
rules and the command line."""

from __future__ import annotations

import json
import math
import os
import shutil

import numpy as np
import pandas as pd
import pytest

from workbench import cli
from workbench.carbon import dags, traces
from workbench.serving import SLO, Deployment
from workbench.serving.gpus import capacity_gpus
from workbench.serving.linear import ServerConfig, simulate_linear
from workbench.serving.opcurves import curves
from workbench.tables import TableError, frame, read_table
from workbench.testing import requires_data
from workbench.training import fused_pipeline as fp

HEADER = (
    "Datetime (UTC),Country,Zone Name,Zone Id,Carbon Intensity gCO₂eq/kWh (direct),"
    "Carbon Intensity gCO₂eq/kWh (LCA),Low Carbon Percentage,Renewable Percentage,Data Source,Data Estimated,"
    "Data Estimation Method"
)


def _row(hour: int, direct: str = "37.3") -> str:
    return f"2022-01-01 {hour:02d}:00:00,Canada,Ontario,CA-ON,{direct},59.96,89.92,30.27,ieso.ca,false,"


def _trace(tmp_path, rows: list[str], header: str = HEADER, name: str = "t.csv"):
    p = tmp_path / name
    p.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return p


# -- carbon traces -------------------------------------------------------------------------------------------------


def test_a_well_formed_carbon_trace_loads(tmp_path):
    tr = traces.read_hourly_csv(_trace(tmp_path, [_row(h) for h in range(4)]))
    assert len(tr.hours) == 4 and tr.zone == "CA-ON"


def test_a_carbon_trace_whose_last_line_was_cut_names_the_line(tmp_path):
    rows = [_row(h) for h in range(4)]
    rows[-1] = rows[-1][:40]  # cut mid-row
    with pytest.raises(traces.TraceError, match=r"t\.csv:5: \d+ fields where the header has 11"):
        traces.read_hourly_csv(_trace(tmp_path, rows))


def test_an_extra_field_in_a_carbon_row_is_refused_not_shifted(tmp_path):
    rows = [_row(h) for h in range(4)]
    rows[1] = rows[1].replace("CA-ON,", "CA-ON,extra,")
    with pytest.raises(traces.TraceError, match=r"t\.csv:3: 12 fields where the header has 11 \(an extra field"):
        traces.read_hourly_csv(_trace(tmp_path, rows))


def test_a_duplicated_carbon_column_is_refused(tmp_path):
    header = HEADER + ",Zone Id"
    rows = [_row(h) + ",CA-ON" for h in range(3)]
    with pytest.raises(traces.TraceError, match=r"t\.csv:1: column 'Zone Id' appears twice"):
        traces.read_hourly_csv(_trace(tmp_path, rows, header))


@pytest.mark.parametrize("value", ["nan", "-3", "inf", "x"])
def test_a_bad_intensity_names_line_and_range(tmp_path, value):
    rows = [_row(h) for h in range(4)]
    rows[2] = _row(2, value)
    with pytest.raises(traces.TraceError, match=r"t\.csv:4: column 'Carbon Intensity.*\(direct\)'"):
        traces.read_hourly_csv(_trace(tmp_path, rows))


def test_a_bom_is_dropped_and_non_utf8_is_named(tmp_path):
    p = tmp_path / "bom.csv"
    p.write_bytes(b"\xef\xbb\xbf" + ("\n".join([HEADER, _row(0), _row(1)]) + "\n").encode())
    assert len(traces.read_hourly_csv(p).hours) == 2
    q = tmp_path / "latin.csv"
    q.write_bytes(("\n".join([HEADER, _row(0)]) + "\n").encode() + b"2022-01-01 01:00:00,Canad\xe9\n")
    with pytest.raises(traces.TraceError, match=r"latin\.csv:3: not UTF-8"):
        traces.read_hourly_csv(q)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_directory_or_fifo_is_refused_at_once(tmp_path):
    with pytest.raises(traces.TraceError, match="directory"):
        traces.read_hourly_csv(tmp_path)
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(traces.TraceError, match="not a regular file"):
        traces.read_hourly_csv(fifo)  # never blocks on open


def test_a_huge_table_is_refused_before_reading(tmp_path):
    p = _trace(tmp_path, [_row(h) for h in range(3)])
    with pytest.raises(TableError, match="over the 10-byte limit"):
        read_table(p, max_bytes=10)


# -- TPC-H job DAGs ------------------------------------------------------------------------------------------------


def _job(tmp_path, text: str):
    p = tmp_path / "q.json"
    p.write_text(text)
    return p


GOOD = {"adjacency": [[0, 1], [0, 0]], "task_durations_ms": [{"first_wave": {"2": [10.0, 12.0]}},
                                                                {"first_wave": {"2": [5.0]}}]}  # fmt: skip


def test_a_good_dag_loads(tmp_path):
    assert len(dags.load_json(_job(tmp_path, json.dumps(GOOD))).parents) == 2


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["task_durations_ms"][0]["first_wave"].update({"2": [-1.0]}), "finite durations >= 0"),
        (lambda d: d["task_durations_ms"][1].update({"rest_wave": {"2": [float("nan")]}}), "finite durations >= 0"),
        (lambda d: d.update({"adjacency": [[0, 1], [0]]}), "square matrix"),
        (lambda d: d.update({"adjacency": [[0, 2], [0, 0]]}), r"adjacency\[0\]\[1\] must be 0 or 1"),
        (lambda d: d["task_durations_ms"].pop(), "task-duration entries for 2 stages"),
    ],
    ids=["negative", "nan-rest-wave", "half-adjacency", "not-0-1", "missing-stage"],
)
def test_a_bad_dag_is_a_named_error(tmp_path, mutate, message):
    d = json.loads(json.dumps(GOOD))
    mutate(d)
    with pytest.raises(dags.DagError, match=message):
        dags.load_json(_job(tmp_path, json.dumps(d)))


def test_a_duplicated_dag_key_is_refused(tmp_path):
    text = json.dumps(GOOD)[:-1] + ', "adjacency": [[0, 0], [0, 0]]}'
    with pytest.raises(dags.DagError, match="'adjacency' appears twice"):
        dags.load_json(_job(tmp_path, text))


# -- serving ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kw", [{"prefill_tokens": -5}, {"decode_seqs": 4, "kv_tokens": -100}])
def test_negative_tokens_to_iteration_s_are_refused(kw):
    d = Deployment("Llama-3.1-8B", "A100-80GB")
    with pytest.raises(ValueError, match=f"{next(reversed(kw))} must be >= 0"):
        d.iteration_s(**kw)


@pytest.mark.parametrize("tp, heads", [(5, 32), (7, 32)])
def test_tp_that_does_not_divide_the_heads_is_refused(tp, heads):
    with pytest.raises(ValueError, match=f"tp={tp} does not divide Llama-3.1-8B's {heads} attention heads"):
        Deployment("Llama-3.1-8B", "A100-80GB", tp=tp)


def test_negative_all_reduce_and_tp_zero_are_refused():
    oc = curves("ampere")
    with pytest.raises(ValueError, match="nbytes must be >= 0"):
        oc.allreduce_s(-1e6, tp=2, topology="nvlink")
    with pytest.raises(ValueError, match="tp must be >= 1"):
        oc.allreduce_s(1e6, tp=0, topology="nvlink")
    with pytest.raises(ValueError, match="tp must be >= 1"):
        Deployment("Llama-3.1-8B", "A100-80GB", tp=0)


def _requests(n=50, span=60.0):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {"arrival_s": np.sort(rng.uniform(0, span, n)), "input_tokens": rng.integers(100, 500, n),
         "output_tokens": rng.integers(20, 100, n)}
    )  # fmt: skip


def test_ttft_limit_nan_is_refused_not_no_limit():
    with pytest.raises(ValueError, match="ttft_limit_s must be a number, got NaN"):
        r = _requests()
        simulate_linear(r["arrival_s"], r["input_tokens"], r["output_tokens"], ServerConfig(), ttft_limit_s=math.nan)


def test_capacity_over_a_span_too_short_for_its_slo_is_refused():
    with pytest.raises(ValueError, match=r"the requests span .* no longer than the SLO's TTFT \(2 s\)"):
        capacity_gpus(_requests(50, 1.5), ServerConfig(), slo=SLO(ttft_s=2.0, tbt_s=0.1))


@pytest.mark.parametrize("think", [math.nan, -1.0, math.inf])
def test_a_bad_think_time_in_a_conversation_is_refused_without_a_hang(think):
    from workbench.serving import preemption
    from workbench.serving.conversations import conversations

    reqs = conversations(10, 4.0, seed=0)
    linked = np.flatnonzero(reqs["next"].to_numpy() >= 0)
    reqs.loc[linked[0], "think_s"] = think
    d = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=8192)
    with pytest.raises(ValueError, match="think_s"):
        preemption.run(reqs, d, preemption.fastswitch_scheduler("vllm", preemption.PriorityProcess("reshuffle", 0.05)))


def _shadow_engines(tmp_path, monkeypatch, edit) -> None:
    from workbench import data

    src = data.require("serving_specs/engines.csv").read_text(encoding="utf-8")
    (tmp_path / "serving_specs").mkdir()
    (tmp_path / "serving_specs" / "engines.csv").write_text(edit(src), encoding="utf-8")
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))


def test_engines_csv_duplicated_column_is_refused(tmp_path, monkeypatch):
    from workbench.serving.engines import engines

    def edit(src: str) -> str:
        lines = src.split("\n")
        return "\n".join([lines[0] + ",engine", *(ln + ",x" if ln else ln for ln in lines[1:])])

    _shadow_engines(tmp_path, monkeypatch, edit)
    with pytest.raises(TableError, match="column 'engine' appears twice"):
        engines()


@pytest.mark.parametrize("value", ["nan", "-0.001"])
def test_engines_csv_bad_cost_names_the_line(tmp_path, monkeypatch, value):
    import csv
    import io

    from workbench.serving.engines import _NUMBERS, engines

    def edit(src: str) -> str:
        rows = list(csv.reader(io.StringIO(src)))
        rows[2][rows[0].index(_NUMBERS[0])] = value
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        return out.getvalue()

    _shadow_engines(tmp_path, monkeypatch, edit)
    with pytest.raises(ValueError, match=r"engines\.csv:3: malformed engine row"):
        engines()


@requires_data("vidur-profiles/compute")
def test_a_duplicated_column_in_an_operator_profile_is_refused(tmp_path):
    from workbench import data

    mlp = sorted(data.require("vidur-profiles/compute").glob("*/*/*/mlp.csv"))[0]
    text = mlp.read_text().split("\n")
    first = text[0].split(",")[0]
    text[0] += "," + first
    text[1:] = [ln + ",0" if ln else ln for ln in text[1:]]
    bad = tmp_path / "mlp.csv"
    bad.write_text("\n".join(text))
    with pytest.raises(TableError, match=f"column '{first}' appears twice"):
        frame(bad, what="operator profile")


# -- training ------------------------------------------------------------------------------------------------------


def test_a_schedule_starting_before_zero_is_refused():
    inst = fp.Instance(pp0=2, pp1=2, m0=2, m1=1, f0=1, f1=1)
    s = fp.sequential_1f1b(inst)
    early = fp.Schedule(s.model, s.microbatch, s.task, s.gpu, s.start - 5.0, s.end - 5.0)
    with pytest.raises(fp.ScheduleError, match="starts must be finite and >= 0"):
        fp.check_schedule(inst, early)


def test_an_rlhf_instance_table_with_an_extra_field_names_the_line(tmp_path):
    src = tmp_path / "instances.csv"
    header = ",".join(fp._INSTANCE_COLUMNS)
    src.write_text(header + "\n" + ",".join(["1"] * len(fp._INSTANCE_COLUMNS)) + ",9\n")
    with pytest.raises(fp.InstanceError, match=r"instances\.csv:2: .* fields where the header has"):
        fp.load_instances(src)


# -- the command line ----------------------------------------------------------------------------------------------


@requires_data("fabric-websearch-128")
@pytest.mark.parametrize("flag, value, name", [("--link-delay-us", "1e15", "link_delay_s"), ("--link-gbps", "1e-12",
                                                                                          "link_gbps")])  # fmt: skip
def test_replay_refuses_absurd_links_at_once(tmp_path, capsys, flag, value, name):
    from workbench import data

    src = data.require("fabric-websearch-128")
    cm = sorted(src.glob("*.cm"))[0]
    shutil.copy(cm, tmp_path / cm.name)
    code = cli.main(["aqm", "replay", str(tmp_path / cm.name), flag, value, "--out", str(tmp_path / "o.csv")])
    err = capsys.readouterr().err
    assert code == 2 and name in err and "Traceback" not in err, err  # 2: a bad argument, refused before any work
    assert not (tmp_path / "o.csv").exists()


def test_training_tp_that_does_not_divide_the_heads_is_refused():
    from workbench.training.specs import GPUS, MODELS, Plan, PlanError, check_plan

    with pytest.raises(PlanError, match="tp=7 does not divide the model's 96 attention heads"):
        check_plan(MODELS["gpt3-175b"], Plan(tp=7, pp=4, dp=32, global_batch=512), GPUS["H100"])


def test_a_sweep_fails_the_invalid_points_with_their_reasons_and_runs_the_rest(capsys):
    code = cli.main(
        ["sweep", "run", "training-iteration-time", "--grid", "dp=32,33", "--serial", "--no-progress", "--no-cache"]
    )
    out, err = capsys.readouterr()
    assert code == 1 and "1 failed" in out
    assert "1 failed point x seed run(s)" in err and "global_batch=512 is not a multiple of dp" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("field, value", [("tok", math.nan), ("tok", -1.0), ("cpu0", math.inf), ("tok", 0.0)])
def test_a_cost_table_that_would_stall_the_engine_clock_is_refused(field, value):
    """NaN, negative or all-zero iteration costs would leave the engine's loop without progress (a hang): refused
    when the table is made, before any run."""
    import dataclasses

    table = ServerConfig().cost_table()
    bad = np.full_like(table.tok, value) if field == "tok" else value
    if field == "tok" and value == 0.0:
        table = dataclasses.replace(table, c_prefill=0.0, cpu0=0.0)
    with pytest.raises(ValueError, match="CostTable: "):
        dataclasses.replace(table, **{field: bad})
