"""Exporters: round trips through the loaders (BurstGPT v1 CSV, Mooncake JSONL), schema-driven export of tables from
any source (generator, ServeGen-like client tables, real traces with hash_ids), and bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from workbench.testing import need_data
from workbench.workloads import burstgpt as B
from workbench.workloads import export, traces


def test_burstgpt_csv_round_trip_of_the_stand_in(tmp_path):
    df = B.stand_in(days=1.0, seed=3)
    for eol in ("\n", "\r\n"):
        p = export.to_burstgpt_csv(df, tmp_path / f"BurstGPT_standin{len(eol)}.csv", line_terminator=eol)
        back = traces.load_burstgpt(p, cache=False)
        cols = ["arrival_s", "input_tokens", "output_tokens", "failed"]
        pd.testing.assert_frame_equal(back[cols], df[cols])
        assert back["log_type"].astype(str).tolist() == df["log_type"].astype(str).tolist()
        assert back["model"].astype(str).tolist() == df["model"].astype(str).tolist()
    assert p.read_bytes().count(b"\r\n") == len(df) + 1


def test_burstgpt_csv_published_rows_byte_exact(tmp_path):
    published = (
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
        "5,ChatGPT,472,18,490,Conversation log\n45,ChatGPT,1087,230,1317,Conversation log\n"
        "118,GPT-4,417,276,693,Conversation log\n185,ChatGPT,1360,647,2007,Conversation log\n"
        "214,ChatGPT,185,215,400,Conversation log\n"
    )
    src = tmp_path / "src.csv"
    src.write_text(published)
    out = export.to_burstgpt_csv(traces.load_burstgpt(src, cache=False), tmp_path / "out.csv")
    assert out.read_text() == published


def test_mooncake_jsonl_round_trip_with_hash_ids(tmp_path):
    df = traces.load_trace(need_data("mooncake-fast25/conversation_trace.jsonl"))
    p = export.to_mooncake_jsonl(df, tmp_path / "mc.jsonl")
    back = traces.load_mooncake(p, cache=False, log_type="conversation")
    pd.testing.assert_frame_equal(back[["arrival_s", "input_tokens", "output_tokens"]],
                                  df[["arrival_s", "input_tokens", "output_tokens"]])
    assert [list(h) for h in back["hash_ids"][:50]] == [list(h) for h in df["hash_ids"][:50]]
    src = need_data("mooncake-fast25/conversation_trace.jsonl")
    first_src = json.loads(src.read_text().splitlines()[0])
    first_out = json.loads(p.read_text().splitlines()[0])
    assert first_out == first_src


def test_servegen_like_table_exports_through_every_format(tmp_path):
    # the ServeGen composer's output: client_id, arrival_s, input/output tokens, no model or log type
    rng = np.random.default_rng(0)
    n = 500
    df = pd.DataFrame({
        "client_id": rng.integers(0, 5, n),
        "arrival_s": np.sort(rng.random(n) * 600),
        "input_tokens": rng.integers(1, 4000, n),
        "output_tokens": rng.integers(0, 500, n),
    })
    b = traces.load_burstgpt(export.to_burstgpt_csv(df, tmp_path / "sg.csv", time_resolution_s=None), cache=False)
    np.testing.assert_allclose(b["arrival_s"], np.round(df["arrival_s"], 3))
    assert set(b["model"].astype(str)) == {"GPT-4"} and set(b["log_type"].astype(str)) == {"api"}
    m = traces.load_mooncake(export.to_mooncake_jsonl(df, tmp_path / "sg.jsonl"), cache=False)
    np.testing.assert_allclose(m["arrival_s"], np.rint(df["arrival_s"] * 1000) / 1000)
    csv_back = pd.read_csv(export.to_timestamped_csv(df, tmp_path / "sg_t.csv"))
    pd.testing.assert_frame_equal(csv_back, df, check_dtype=False)
    js = pd.read_json(export.to_timestamped_jsonl(df, tmp_path / "sg_t.jsonl"), lines=True)
    assert list(js.columns) == list(df.columns)
    np.testing.assert_allclose(js["arrival_s"], df["arrival_s"])


def test_timestamped_jsonl_of_a_loaded_trace_has_nulls_not_nan(tmp_path):
    df = traces.load_trace(need_data("azure-llm-2023/AzureLLMInferenceTrace_code.csv"))
    p = export.to_timestamped_jsonl(df.iloc[:3], tmp_path / "az.jsonl")
    rec = json.loads(p.read_text().splitlines()[0])
    assert rec["model"] is None and rec["log_type"] == "code" and rec["failed"] is None


def test_export_rejects_bad_tables(tmp_path):
    with pytest.raises(ValueError, match="missing"):
        export.to_mooncake_jsonl(pd.DataFrame({"arrival_s": [0.0]}), tmp_path / "x.jsonl")
    with pytest.raises(ValueError, match="non-decreasing"):
        export.to_burstgpt_csv(
            pd.DataFrame({"arrival_s": [1.0, 0.0], "input_tokens": [1, 1], "output_tokens": [1, 1]}), tmp_path / "x.csv"
        )
    with pytest.raises(ValueError, match="non-negative"):
        export.to_burstgpt_csv(
            pd.DataFrame({"arrival_s": [0.0], "input_tokens": [-1], "output_tokens": [1]}), tmp_path / "x.csv"
        )
    with pytest.raises(ValueError, match="at least one"):
        export.to_burstgpt_csv(
            pd.DataFrame({"arrival_s": [], "input_tokens": [], "output_tokens": []}), tmp_path / "x.csv"
        )
    with pytest.raises(ValueError, match="comma"):
        export.to_burstgpt_csv(
            pd.DataFrame({"arrival_s": [0.0], "input_tokens": [1], "output_tokens": [1], "model": ["a,b"]}),
            tmp_path / "x.csv",
        )


def test_servegen_composer_output_exports(tmp_path):
    servegen = pytest.importorskip("workbench.workloads.servegen")
    try:
        pool = servegen.load_pool("m-large")
    except (FileNotFoundError, ValueError) as exc:  # neither the embedded summary nor the raw data is available
        pytest.skip(f"ServeGen pool not available: {exc}")
    df = servegen.compose(pool, start_s=12 * 3600, duration_s=120, rate_rps=5.0, seed=1)
    m = traces.load_mooncake(export.to_mooncake_jsonl(df, tmp_path / "sg.jsonl"), cache=False)
    assert len(m) == len(df)
    np.testing.assert_array_equal(m["input_tokens"], df["input_tokens"])
    b = traces.load_burstgpt(export.to_burstgpt_csv(df, tmp_path / "sg.csv", time_resolution_s=None), cache=False)
    np.testing.assert_array_equal(b["output_tokens"], df["output_tokens"])
    t = pd.read_csv(export.to_timestamped_csv(df, tmp_path / "sg_t.csv"))
    assert list(t.columns) == list(df.columns)
