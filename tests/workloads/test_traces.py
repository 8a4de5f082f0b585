"""Trace loaders: BurstGPT v1/v3 on generated files in the exact format and the five published rows, Azure 2023 and
Mooncake on the real files, the parquet cache, and malformed files (error names the file and line)."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from workbench import cache
from workbench.testing import data_file, requires_data
from workbench.workloads import schema, traces

V1_HEADER = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type"
PUBLISHED = """Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
5,ChatGPT,472,18,490,Conversation log
45,ChatGPT,1087,230,1317,Conversation log
118,GPT-4,417,276,693,Conversation log
185,ChatGPT,1360,647,2007,Conversation log
214,ChatGPT,185,215,400,Conversation log
"""


def _write(tmp_path, name, text, crlf=False):
    p = tmp_path / name
    p.write_bytes(text.replace("\n", "\r\n").encode() if crlf else text.encode())
    return p


@pytest.mark.parametrize("crlf", [False, True])
def test_burstgpt_published_rows(tmp_path, crlf):
    p = _write(tmp_path, "BurstGPT_1.csv", PUBLISHED, crlf=crlf)
    df = traces.load_trace(p, cache=False)
    assert df.attrs["format"] == "burstgpt-v1"
    assert df["arrival_s"].tolist() == [5.0, 45.0, 118.0, 185.0, 214.0]
    assert df["input_tokens"].tolist() == [472, 1087, 417, 1360, 185]
    assert df["output_tokens"].tolist() == [18, 230, 276, 647, 215]
    assert df["model"].astype(str).tolist() == ["ChatGPT", "ChatGPT", "GPT-4", "ChatGPT", "ChatGPT"]
    assert set(df["log_type"].astype(str)) == {"conversation"}
    assert not df["failed"].any()
    assert df["session_id"].isna().all()
    assert df.attrs["time_resolution_s"] == 1.0
    schema.validate_requests(df)


def test_burstgpt_v3_layout_failures_and_duplicates_kept(tmp_path):
    text = (
        "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
        "0,17,3,ChatGPT,100,20,120,Conversation log\n"
        "0,,0,GPT-4,50,0,50,API log\n"
        "0,,0,GPT-4,50,0,50,API log\n"  # exact duplicate: legitimate, kept
        "2,17,5,ChatGPT,200,40,240,Conversation log\n"
        "9,,0,ChatGPT,0,0,0,API log\n"
    )
    df = traces.load_burstgpt(_write(tmp_path, "BurstGPT_3.csv", text), cache=False)
    assert df.attrs["format"] == "burstgpt-v3"
    assert len(df) == 5
    assert df["failed"].tolist() == [False, True, True, False, True]
    assert df["session_id"].tolist()[:2] == ["17", pd.NA] or df["session_id"].isna().tolist() == [
        False,
        True,
        True,
        False,
        True,
    ]
    assert df["session_id"].iloc[3] == "17"
    assert df["elapsed_s"].tolist() == [3.0, 0.0, 0.0, 5.0, 0.0]
    assert df["log_type"].astype(str).tolist() == ["conversation", "api", "api", "conversation", "api"]


def test_burstgpt_columns_read_by_name(tmp_path):
    text = "Log Type,Total tokens,Response tokens,Request tokens,Model,Timestamp\nAPI log,30,10,20,GPT-4,3\n"
    df = traces.load_burstgpt(_write(tmp_path, "swapped.csv", text), cache=False)
    assert df[["arrival_s", "input_tokens", "output_tokens"]].values.tolist() == [[3.0, 20, 10]]


def test_burstgpt_large_generated_file_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    rng = np.random.default_rng(0)
    n = 300_000  # spans several 8 MB blocks? no: ~12 MB, two blocks
    t = np.sort(rng.integers(0, 86_400 * 3, n))
    req = rng.integers(0, 5000, n)
    resp = rng.integers(0, 800, n)
    model = np.where(rng.random(n) < 0.3, "GPT-4", "ChatGPT")
    log = np.where(rng.random(n) < 0.5, "API log", "Conversation log")
    frame = pd.DataFrame(
        {
            "Timestamp": t,
            "Model": model,
            "Request tokens": req,
            "Response tokens": resp,
            "Total tokens": req + resp,
            "Log Type": log,
        }
    )
    p = tmp_path / "big.csv"
    frame.to_csv(p, index=False, lineterminator="\r\n")
    df = traces.load_burstgpt(p)
    assert len(df) == n
    np.testing.assert_array_equal(df["arrival_s"].to_numpy(), t.astype(float))
    np.testing.assert_array_equal(df["input_tokens"].to_numpy(), req)
    np.testing.assert_array_equal(df["failed"].to_numpy(dtype=bool), resp == 0)
    assert (df["model"].astype(str).to_numpy() == model).all()
    assert len(list(cache.cache_dir("traces").glob("big.csv.burstgpt-*.parquet"))) == 1
    assert sorted(f.name for f in tmp_path.iterdir()) == ["big.csv", "cache"]  # nothing beside the source
    again = traces.load_burstgpt(p)
    pd.testing.assert_frame_equal(df, again)
    assert again.attrs == df.attrs
    # the cache is rebuilt when the source changes
    frame.iloc[:10].to_csv(p, index=False)
    assert len(traces.load_burstgpt(p)) == 10


def test_gzip_source(tmp_path):
    p = tmp_path / "b.csv.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(PUBLISHED)
    assert traces.load_trace(p, cache=False)["input_tokens"].tolist()[0] == 472


@pytest.mark.parametrize(
    ("name", "text", "line", "match"),
    [
        ("empty.csv", "", 1, "empty file"),
        ("header_only.csv", V1_HEADER + "\n", 2, "no data rows"),
        ("wrong_cols.csv", "Timestamp,Model,Request tokens,Log Type\n1,a,2,API log\n", 1, "missing column"),
        ("short_row.csv", V1_HEADER + "\n1,GPT-4,2,3,5,API log\n2,GPT-4,2\n", 3, "expected 6 fields"),
        ("text_tokens.csv", V1_HEADER + "\n1,GPT-4,2,3,5,API log\n2,GPT-4,abc,3,5,API log\n", 3, "Request tokens"),
        ("negative.csv", V1_HEADER + "\n1,GPT-4,2,3,5,API log\n2,GPT-4,2,-3,5,API log\n", 3, "must be >= 0"),
        (
            "backwards.csv",
            V1_HEADER + "\n5,GPT-4,2,3,5,API log\n7,GPT-4,2,3,5,API log\n6,GPT-4,1,1,2,API log\n",
            4,
            "goes backwards",
        ),
        ("blank.csv", V1_HEADER + "\n5,GPT-4,2,3,5,API log\n\n7,GPT-4,2,3,5,API log\n", 3, "empty"),
    ],
)
def test_malformed_burstgpt_names_file_and_line(tmp_path, name, text, line, match):
    p = _write(tmp_path, name, text)
    with pytest.raises(ValueError, match=match) as info:
        traces.load_trace(p, cache=False)
    msg = str(info.value)
    assert str(p) in msg
    assert f"line {line}" in msg


def test_gzip_that_is_not_gzip(tmp_path):
    p = _write(tmp_path, "fake.csv.gz", PUBLISHED)
    with pytest.raises(ValueError, match=r"fake.csv.gz, line 1: .*not gzip"):
        traces.load_trace(p, cache=False)


def test_allow_unsorted_sorts_instead(tmp_path):
    p = _write(tmp_path, "u.csv", V1_HEADER + "\n5,GPT-4,2,3,5,API log\n4,GPT-4,1,1,2,API log\n")
    df = traces.load_burstgpt(p, cache=False, allow_unsorted=True)
    assert df["arrival_s"].tolist() == [4.0, 5.0]


def test_azure_format_synthetic_and_2024_offsets(tmp_path):
    text = (
        "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
        "2023-11-16 18:17:03.9799600,4808,10\r\n"
        "2023-11-16 18:17:04.0319600,3180,8\r\n"
        "2023-11-16 18:17:05.0000000,10,0"
    )
    # like the published file, no newline at the end: a copy that is not the registry's file is warned about
    with pytest.warns(traces.TruncationWarning, match=r"AzureLLMInferenceTrace_code.csv, line 4"):
        df = traces.load_trace(_write(tmp_path, "AzureLLMInferenceTrace_code.csv", text), cache=False)
    np.testing.assert_allclose(df["arrival_s"], [0.0, 0.052, 1.02004], atol=1e-9)
    assert df.attrs["origin"] == "2023-11-16T18:17:03.979960"
    assert df.attrs["origin_weekday"] == 3  # a Thursday
    assert abs(df.attrs["origin_s_of_day"] - (18 * 3600 + 17 * 60 + 3.97996)) < 1e-6
    assert str(df["log_type"].iloc[0]) == "code"
    assert df["failed"].isna().all()
    text24 = (
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2024-05-10 00:00:00+00:00,10,2\n"
        "2024-05-10 00:00:00.500000+00:00,11,3\n"
    )
    df = traces.load_trace(_write(tmp_path, "AzureLLMInferenceTrace_conv_1week.csv", text24), cache=False)
    assert df["arrival_s"].tolist() == [0.0, 0.5]
    assert str(df["log_type"].iloc[0]) == "conversation"


def test_azure_bad_timestamp_names_line(tmp_path):
    text = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,1,1\nyesterday,1,1\n"
    p = _write(tmp_path, "az.csv", text)
    with pytest.raises(ValueError, match=r"az.csv, line 3: TIMESTAMP is not a date-time"):
        traces.load_trace(p, cache=False)


def test_mooncake_synthetic_file_and_errors(tmp_path):
    good = (
        '{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]}\n'
        '{"timestamp": 250, "input_length": 100, "output_length": 7, "hash_ids": [0]}\n'
    )
    df = traces.load_trace(_write(tmp_path, "t.jsonl", good), cache=False)
    assert df["arrival_s"].tolist() == [0.0, 0.25]
    assert [list(h) for h in df["hash_ids"]] == [[0, 1], [0]]
    assert df.attrs["time_resolution_s"] == 0.001
    bad_json = good + '{"timestamp": 300, "input_length": 1, "output_length": \n'
    with pytest.raises(ValueError, match=r"line 3: not valid JSON"):
        traces.load_trace(_write(tmp_path, "bad.jsonl", bad_json), cache=False)
    missing = good + '{"timestamp": 300, "output_length": 1}\n'
    with pytest.raises(ValueError, match=r"line 3: missing"):
        traces.load_trace(_write(tmp_path, "missing.jsonl", missing), cache=False)
    backwards = good + '{"timestamp": 100, "input_length": 1, "output_length": 1}\n'
    with pytest.raises(ValueError, match=r"line 3: timestamp goes backwards"):
        traces.load_trace(_write(tmp_path, "back.jsonl", backwards), cache=False)
    evil = '{"timestamp": 0, "input_length": "__import__(\'os\')", "output_length": 1}\n'
    with pytest.raises(ValueError, match=r"line 1: field 'input_length' must be a number"):
        traces.load_trace(_write(tmp_path, "evil.jsonl", evil), cache=False)


@requires_data("azure-llm-2023/AzureLLMInferenceTrace_code.csv", "azure-llm-2023/AzureLLMInferenceTrace_conv.csv")
def test_real_azure_2023():
    # spans from PROVENANCE.md: code 18:17:03.98 to 19:14:19.93, conv 18:15:46.68 to 19:14:08.40
    for name, rows, mean_in, mean_out, kind, span_s in [
        ("AzureLLMInferenceTrace_code.csv", 8819, 2048, 28, "code", 3435.95),
        ("AzureLLMInferenceTrace_conv.csv", 19366, 1155, 211, "conversation", 3501.72),
    ]:
        path = data_file(f"azure-llm-2023/{name}")
        df = traces.load_trace(path)
        assert len(df) == rows
        assert round(df["input_tokens"].mean()) == mean_in
        assert round(df["output_tokens"].mean()) == mean_out
        assert str(df["log_type"].iloc[0]) == kind
        assert df["arrival_s"].iloc[-1] == pytest.approx(span_s, abs=0.01)
        schema.validate_requests(df)


@requires_data("mooncake-fast25/conversation_trace.jsonl")
def test_real_mooncake():
    path = data_file("mooncake-fast25/conversation_trace.jsonl")
    df = traces.load_trace(path)
    assert len(df) == 12031
    assert df["arrival_s"].iloc[-1] == pytest.approx(3536.999)
    assert round(df["input_tokens"].mean()) == 12035
    assert round(df["output_tokens"].mean()) == 343
    # hash_ids cover the prompt in 512-token blocks
    nblocks = df["hash_ids"].list.len().to_numpy()
    np.testing.assert_array_equal(nblocks, np.ceil(df["input_tokens"].to_numpy() / 512).astype(int))


def test_cache_lives_under_workbench_cache_and_keys_the_options(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "data"
    src.mkdir()
    p = _write(src, "b.csv", PUBLISHED.replace("45,", "500,"))  # out of order: 500 then 118
    with pytest.raises(traces.TraceFormatError, match="line 4: Timestamp goes backwards"):
        traces.load_burstgpt(p)
    assert traces.load_burstgpt(p, allow_unsorted=True)["arrival_s"].is_monotonic_increasing
    with pytest.raises(traces.TraceFormatError, match="goes backwards"):  # not served the sorted cache entry
        traces.load_burstgpt(p)
    assert [f.name for f in src.iterdir()] == ["b.csv"]
    assert len(list(cache.cache_dir("traces").glob("b.csv.burstgpt-unsorted-*.parquet"))) == 1
