"""Exporters: round trips through the loaders (BurstGPT v1 CSV, Mooncake JSONL), schema-driven export of tables from
any source (generator, ServeGen-like client tables, real traces with hash_ids), what real replay tools read from them
(AIPerf's millisecond replay of BurstGPT timestamps, vLLM's timed-trace prompts from hash_ids), and bad input.
Fault injection (disk full, existing files) is in ``tests/faults/test_export_faults.py``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from workbench.testing import data_file, requires_data
from workbench.workloads import burstgpt as B
from workbench.workloads import export, traces

MOONCAKE = "mooncake-fast25/conversation_trace.jsonl"


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


@requires_data(MOONCAKE)
def test_mooncake_jsonl_round_trip_with_hash_ids(tmp_path):
    src = data_file(MOONCAKE)
    df = traces.load_trace(src)
    p = export.to_mooncake_jsonl(df, tmp_path / "mc.jsonl")
    back = traces.load_mooncake(p, cache=False, log_type="conversation")
    pd.testing.assert_frame_equal(
        back[["arrival_s", "input_tokens", "output_tokens"]], df[["arrival_s", "input_tokens", "output_tokens"]]
    )
    assert [list(h) for h in back["hash_ids"][:50]] == [list(h) for h in df["hash_ids"][:50]]
    first_src = json.loads(src.read_text().splitlines()[0])
    first_out = json.loads(p.read_text().splitlines()[0])
    assert first_out == first_src


def test_servegen_like_table_exports_through_every_format(tmp_path):
    # the ServeGen composer's output: client_id, arrival_s, input/output tokens, no model or log type
    rng = np.random.default_rng(0)
    n = 500
    df = pd.DataFrame(
        {
            "client_id": rng.integers(0, 5, n),
            "arrival_s": np.sort(rng.random(n) * 600),
            "input_tokens": rng.integers(1, 4000, n),
            "output_tokens": rng.integers(0, 500, n),
        }
    )
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


@requires_data("azure-llm-2023/AzureLLMInferenceTrace_code.csv")
def test_timestamped_jsonl_of_a_loaded_trace_has_nulls_not_nan(tmp_path):
    df = traces.load_trace(data_file("azure-llm-2023/AzureLLMInferenceTrace_code.csv"))
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
    # no skip: the module is the project's own and the summary is committed, so a failure to load is a failure
    from workbench.workloads import servegen

    pool = servegen.load_pool("m-large")
    df = servegen.compose(pool, start_s=12 * 3600, duration_s=120, rate_rps=5.0, seed=1)
    m = traces.load_mooncake(export.to_mooncake_jsonl(df, tmp_path / "sg.jsonl"), cache=False)
    assert len(m) == len(df)
    np.testing.assert_array_equal(m["input_tokens"], df["input_tokens"])
    b = traces.load_burstgpt(export.to_burstgpt_csv(df, tmp_path / "sg.csv", time_resolution_s=None), cache=False)
    np.testing.assert_array_equal(b["output_tokens"], df["output_tokens"])
    t = pd.read_csv(export.to_timestamped_csv(df, tmp_path / "sg_t.csv"))
    assert list(t.columns) == list(df.columns)


def _poisson(rate_rps: float, n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "arrival_s": np.cumsum(rng.exponential(1.0 / rate_rps, n)),
            "input_tokens": rng.integers(1, 4000, n),
            "output_tokens": rng.integers(1, 500, n),
        }
    )


def test_burstgpt_csv_keeps_sub_second_times_by_default(tmp_path):
    # AIPerf's burst_gpt_trace replays Timestamp * 1000 ms: floored seconds turn 100 req/s into one burst a second
    df = _poisson(100.0, 5000, seed=4)
    p = export.to_burstgpt_csv(df, tmp_path / "b.csv")
    replay_ms = pd.read_csv(p)["Timestamp"].to_numpy(dtype=float) * 1000.0
    gaps = np.diff(replay_ms)
    assert np.mean(gaps == 0) < 0.06  # only gaps under 0.5 ms round to zero at millisecond precision (~5% here)
    assert abs(gaps.std() / gaps.mean() - 1.0) < 0.05  # Poisson: CV 1 survives the export
    np.testing.assert_allclose(replay_ms / 1000.0, df["arrival_s"], atol=5e-4)
    floored = pd.read_csv(export.to_burstgpt_csv(df, tmp_path / "s.csv", time_resolution_s=1.0))["Timestamp"]
    assert floored.dtype == np.int64 and np.mean(np.diff(floored) == 0) > 0.9  # integer seconds only when asked


def test_mooncake_synthetic_hash_blocks_for_vllm_timed_trace(tmp_path):
    df = _poisson(10.0, 400, seed=5)
    df["session_id"] = pd.array(np.where(np.arange(400) % 4 == 0, None, (np.arange(400) % 3).astype(str)), "string")
    p = export.to_mooncake_jsonl(df, tmp_path / "m.jsonl", hash_block_tokens=512)
    recs = [json.loads(line) for line in p.read_text().splitlines()]
    counts = np.array([len(r["hash_ids"]) for r in recs])
    np.testing.assert_array_equal(counts, -(-df["input_tokens"].to_numpy() // 512))  # the right count per request
    owner: dict[int, int] = {}
    for i, r in enumerate(recs):
        assert len(set(r["hash_ids"])) == len(r["hash_ids"])
        for j, h in enumerate(r["hash_ids"]):
            owner.setdefault(h, i)
            k = owner[h]
            if k != i:  # a shared block: same session, same position, inside both prompts' common whole blocks
                assert df["session_id"].iloc[k] == df["session_id"].iloc[i] is not pd.NA
                assert recs[k]["hash_ids"][j] == h and j < min(recs[k]["input_length"], r["input_length"]) // 512
    shared = sum(len(r["hash_ids"]) for r in recs) - len(owner)
    assert shared > 0
    nosession = export.to_mooncake_jsonl(df.drop(columns="session_id"), tmp_path / "u.jsonl", hash_block_tokens=512)
    ids = [h for line in nosession.read_text().splitlines() for h in json.loads(line)["hash_ids"]]
    assert len(ids) == len(set(ids)) == counts.sum()  # no source of sharing: every block unique
    back = traces.load_mooncake(p, cache=False)
    assert [len(h) for h in back["hash_ids"]] == counts.tolist()


@requires_data(MOONCAKE)
def test_mooncake_own_hash_ids_are_not_resynthesized(tmp_path):
    df = traces.load_trace(data_file(MOONCAKE)).iloc[:20]
    with pytest.raises(ValueError, match="hash_block_tokens must be None or 512"):
        export.to_mooncake_jsonl(df, tmp_path / "m.jsonl", hash_block_tokens=256)
    p = export.to_mooncake_jsonl(df, tmp_path / "m.jsonl", hash_block_tokens=512)
    assert [json.loads(x)["hash_ids"] for x in p.read_text().splitlines()] == [list(h) for h in df["hash_ids"]]


@pytest.mark.parametrize(
    "column, value, message",
    [
        ("input_tokens", 2**62, "at most 2\\*\\*53"),
        ("output_tokens", 1e19, "at most 2\\*\\*53"),
        ("arrival_s", 1e300, "arrival_s must be in"),
        ("arrival_s", -1.0, "arrival_s must be in"),
    ],
)
def test_export_range_checks_before_writing(tmp_path, column, value, message):
    df = pd.DataFrame({"arrival_s": [0.0, 1.0], "input_tokens": [2**62, 5], "output_tokens": [2**62, 5]})
    df = df.iloc[1:].assign(**{column: [value]}) if column != "arrival_s" else df.iloc[1:].assign(arrival_s=[value])
    for write in (export.to_burstgpt_csv, export.to_mooncake_jsonl, export.to_timestamped_csv):
        with pytest.raises(ValueError, match=message):
            write(df, tmp_path / "x.out")
        assert list(tmp_path.iterdir()) == []  # nothing written, not even a temporary file


def test_export_refuses_to_overwrite_unless_asked(tmp_path):
    df = _poisson(1.0, 10, seed=6)
    for write in (
        export.to_burstgpt_csv,
        export.to_mooncake_jsonl,
        export.to_timestamped_csv,
        export.to_timestamped_jsonl,
    ):
        target = tmp_path / f"{write.__name__}.out"
        target.write_text("the user's file\n")
        with pytest.raises(FileExistsError, match="overwrite=True"):
            write(df, target)
        assert target.read_text() == "the user's file\n"
        write(df, target, overwrite=True)
        assert target.read_text() != "the user's file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{w}.out" for w in ("to_burstgpt_csv", "to_mooncake_jsonl", "to_timestamped_csv", "to_timestamped_jsonl")
    )
