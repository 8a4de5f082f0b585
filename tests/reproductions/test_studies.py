"""A study several papers read is computed once per source tree and read back equal (:func:`shared_study`)."""

from __future__ import annotations

import pandas as pd

from workbench.reproductions._runner import shared_study


def test_shared_study_builds_once_and_reads_back_equal(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    calls = []

    def build():
        calls.append(1)
        return pd.DataFrame({"kind": pd.array(["a", "b"], dtype="string"), "x": [1.5, 2.0], "ok": [True, False]})

    first = shared_study("t", "quick", build)
    again = shared_study("t", "quick", build)
    assert len(calls) == 1
    pd.testing.assert_frame_equal(first, again, check_exact=True)


def test_a_damaged_study_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    shared_study("t", "quick", lambda: pd.DataFrame({"x": [1]}))
    (entry,) = tmp_path.rglob("study-t-*.parquet")
    entry.write_bytes(b"not parquet")
    assert shared_study("t", "quick", lambda: pd.DataFrame({"x": [2]})).x.tolist() == [2]
