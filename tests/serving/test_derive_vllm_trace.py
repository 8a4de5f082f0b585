"""``scripts/derive_vllm_trace.py``: a recorded vLLM run's per-request record reduced to the request table the
serving validation replays, with the run's own mean TTFT, TPOT and throughput, and a malformed record refused by
file and line."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("derive_vllm_trace", ROOT / "scripts" / "derive_vllm_trace.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _record(path: Path, rows) -> Path:
    keys = ("queued_ts", "input_toks", "output_toks", "first_token_ts", "last_token_ts")
    path.write_text(
        "".join(json.dumps({"request_id": f"r{i}", **dict(zip(keys, r))}) + "\n" for i, r in enumerate(rows))
    )
    return path


def test_a_record_becomes_the_request_table_in_arrival_order_with_the_runs_means(tmp_path):
    s = _script()
    # engine clock: request 1 arrives first; request 2 has one output token (no TPOT)
    rec = _record(
        tmp_path / "requests.jsonl",
        [(100.5, 200, 11, 101.0, 102.0), (100.0, 100, 5, 100.2, 100.6), (101.0, 50, 1, 101.5, 101.5)],
    )
    t = s.table(rec)
    assert list(t.columns) == list(s.COLUMNS)
    assert t["arrival_s"].tolist() == [0.0, 0.5, 1.0] and t["input_tokens"].tolist() == [100, 200, 50]
    assert t["first_token_s"].tolist() == pytest.approx([0.2, 1.0, 1.5]) and t["finish_s"].iloc[1] == 2.0
    m = s.means(t)
    assert m["trace_mean_ttft_s"] == pytest.approx((0.2 + 0.5 + 0.5) / 3)
    assert m["trace_mean_tpot_s"] == pytest.approx((0.4 / 4 + 1.0 / 10) / 2)  # the one-token request has none
    assert m["trace_output_tokens_per_s"] == pytest.approx(17 / 2.0)


def test_the_committed_table_matches_its_means_and_a_bad_record_names_its_line(tmp_path):
    s = _script()
    committed = pd.read_csv(ROOT / "datasets/serving_specs/traces/llmservingsim-rtx4090-llama31-8b.csv")
    assert s.means(committed)["trace_mean_tpot_s"] == pytest.approx(0.0324466, rel=1e-5)
    rec = _record(tmp_path / "bad.jsonl", [(1.0, 10, 2, 1.5, 2.0)])
    with open(rec, "a") as f:
        f.write('{"queued_ts": 2.0, "input_toks": 10}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: not a request record"):
        s.table(rec)
