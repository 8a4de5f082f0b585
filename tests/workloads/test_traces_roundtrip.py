"""Property tests: any valid request table survives export -> load unchanged (BurstGPT CSV at 1 ms by default and
floored to 1 s when asked, Mooncake JSONL at 1 ms), and any single corrupted row is reported at its line."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.workloads import export, traces


@st.composite
def tables(draw):
    n = draw(st.integers(1, 60))
    gaps = draw(st.lists(st.integers(0, 5000), min_size=n, max_size=n))
    t = np.cumsum(gaps).astype(float) / 1000.0  # ms resolution
    req = np.array(draw(st.lists(st.integers(0, 200_000), min_size=n, max_size=n)))
    resp = np.array(draw(st.lists(st.integers(0, 9000), min_size=n, max_size=n)))
    model = draw(st.lists(st.sampled_from(["ChatGPT", "GPT-4"]), min_size=n, max_size=n))
    log = draw(st.lists(st.sampled_from(["conversation", "api"]), min_size=n, max_size=n))
    return pd.DataFrame({"arrival_s": t, "input_tokens": req, "output_tokens": resp, "model": model, "log_type": log})


@settings(max_examples=40, deadline=None)
@given(tables())
def test_burstgpt_csv_round_trip(df):
    with tempfile.TemporaryDirectory() as d:
        back = traces.load_burstgpt(export.to_burstgpt_csv(df, Path(d) / "b.csv"), cache=False)
        whole = traces.load_burstgpt(export.to_burstgpt_csv(df, Path(d) / "s.csv", time_resolution_s=1.0), cache=False)
    np.testing.assert_allclose(back["arrival_s"], df["arrival_s"], atol=1e-9)
    np.testing.assert_array_equal(whole["arrival_s"], np.floor(df["arrival_s"]))
    np.testing.assert_array_equal(back["input_tokens"], df["input_tokens"])
    np.testing.assert_array_equal(back["failed"].to_numpy(dtype=bool), df["output_tokens"].to_numpy() == 0)
    assert back["model"].astype(str).tolist() == df["model"].tolist()
    assert back["log_type"].astype(str).tolist() == df["log_type"].tolist()


@settings(max_examples=40, deadline=None)
@given(tables())
def test_mooncake_jsonl_round_trip(df):
    with tempfile.TemporaryDirectory() as d:
        back = traces.load_mooncake(export.to_mooncake_jsonl(df, Path(d) / "m.jsonl"), cache=False)
    np.testing.assert_allclose(back["arrival_s"], df["arrival_s"], atol=1e-9)
    np.testing.assert_array_equal(back["output_tokens"], df["output_tokens"])


@settings(max_examples=30, deadline=None)
@given(tables(), st.data())
def test_a_corrupted_row_is_reported_at_its_line(df, data):
    with tempfile.TemporaryDirectory() as d:
        p = export.to_burstgpt_csv(df, Path(d) / "b.csv")
        lines = p.read_text().splitlines()
        i = data.draw(st.integers(1, len(lines) - 1))
        fields = lines[i].split(",")
        fields[2] = data.draw(st.sampled_from(["x", "-5", "1.5e", ""]))
        lines[i] = ",".join(fields)
        p.write_text("\n".join(lines) + "\n")
        with pytest.raises(ValueError, match=rf"b\.csv, line {i + 1}: "):
            traces.load_burstgpt(p, cache=False)
