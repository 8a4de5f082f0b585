"""``workbench.cache`` against stale sources and damaged cache files, with real trace bytes: every case returns the
right values (rebuilt, with a warning naming the cache file and the source), and nothing is written beside the data."""

from __future__ import annotations

import gzip
import os
import shutil
import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest

from workbench import cache, data
from workbench.testing import data_file, requires_data
from workbench.workloads import traces

MOONCAKE = "mooncake-fast25/conversation_trace.jsonl"
pytestmark = requires_data(MOONCAKE)  # every test here edits a copy of it


@pytest.fixture()
def trace_copy(tmp_path, monkeypatch):
    """A writable copy of a real Mooncake trace on the data search path (in a user directory, not a registered
    dataset's, so that it may be edited), and a private cache directory."""
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    data_dir = tmp_path / "data"
    (data_dir / "my-traces").mkdir(parents=True)
    src = data_dir / "my-traces" / "conversation_trace.jsonl"
    shutil.copyfile(data_file(MOONCAKE), src)
    monkeypatch.setenv("WORKBENCH_DATA", str(data_dir))
    cache.clear_memo()
    yield src
    cache.clear_memo()


def _load(src):
    return cache.cached_frame(src, "test-1", lambda: traces.load_mooncake(src, cache=False))


def _same_size_edit(src) -> None:
    """Change one token count to another of the same width, keeping size and modification time."""
    st = src.stat()
    text = src.read_bytes()
    i = text.index(b'"output_length": ') + len(b'"output_length": ')
    digit = text[i : i + 1]
    src.write_bytes(text[:i] + (b"1" if digit != b"1" else b"2") + text[i + 1 :])
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert src.stat().st_size == st.st_size and src.stat().st_mtime_ns == st.st_mtime_ns


def _entries(kind: str = ".parquet"):
    return sorted(cache.cache_dir().rglob(f"*{kind}"))


def test_same_size_edit_with_mtime_kept_is_not_served_stale(trace_copy):
    before = _load(trace_copy)
    _same_size_edit(trace_copy)
    after = _load(trace_copy)
    fresh = traces.load_mooncake(trace_copy, cache=False)
    assert after["output_tokens"].iloc[0] != before["output_tokens"].iloc[0]
    pd.testing.assert_frame_equal(after, fresh)
    assert len(_entries()) == 2  # the old key's entry is left alone, the new content has its own


def test_flipped_bytes_in_a_cached_parquet_are_detected(trace_copy):
    expected = _load(trace_copy)
    (entry,) = _entries()
    raw = bytearray(entry.read_bytes())
    raw[len(raw) // 2 : len(raw) // 2 + 8] = bytes(b ^ 0xFF for b in raw[len(raw) // 2 : len(raw) // 2 + 8])
    entry.write_bytes(bytes(raw))
    with pytest.warns(cache.CacheWarning) as rec:
        got = _load(trace_copy)
    msg = str(rec[0].message)
    assert str(entry) in msg and str(trace_copy.resolve()) in msg
    pd.testing.assert_frame_equal(got, expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pd.testing.assert_frame_equal(_load(trace_copy), expected)  # rebuilt entry verifies silently


@pytest.mark.parametrize("damage", ["truncate", "drop_sidecar"])
def test_damaged_npz_is_rebuilt(trace_copy, damage):
    def build():
        df = traces.load_mooncake(trace_copy, cache=False)
        return {"input_tokens": df["input_tokens"].to_numpy(), "arrival_s": df["arrival_s"].to_numpy()}

    expected = cache.cached_arrays([trace_copy], 1, build, namespace="servegen")
    (entry,) = _entries(".npz")
    if damage == "truncate":
        entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    else:
        entry.with_name(entry.name + ".sha256").unlink()
    with pytest.warns(cache.CacheWarning, match=f"cache file {entry} for .*conversation_trace.jsonl"):
        got = cache.cached_arrays([trace_copy], 1, build, namespace="servegen")
    for k in expected:
        np.testing.assert_array_equal(got[k], expected[k])


def test_memo_notices_an_edited_source(trace_copy):
    first = cache.memo([trace_copy], 1, lambda: traces.load_mooncake(trace_copy, cache=False))
    assert cache.memo([trace_copy], 1, lambda: 1 / 0) is first
    _same_size_edit(trace_copy)
    second = cache.memo([trace_copy], 1, lambda: traces.load_mooncake(trace_copy, cache=False))
    assert second is not first and second["output_tokens"].iloc[0] != first["output_tokens"].iloc[0]


def _listing():
    return {str(p): p.stat().st_mtime_ns for d in data.search_path() for p in d.rglob("*")}


def test_nothing_is_written_under_the_data_search_path(trace_copy):
    before = _listing()
    _load(trace_copy)
    cache.cached_arrays([trace_copy], 1, lambda: {"x": np.arange(3)})
    assert _listing() == before
    assert all(p.is_relative_to(cache.cache_dir()) for p in _entries())


def test_trace_loaders_write_nothing_under_the_data_search_path(trace_copy):
    """Through the loaders themselves, even with the data directory writable (as it always is for root)."""
    gz = trace_copy.with_name("azure_code.csv.gz")
    with gzip.open(gz, "wt") as fh:
        fh.write("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n")
    before = _listing()
    first = traces.load_trace(trace_copy)
    azure = traces.load_trace(gz)
    assert _listing() == before
    pd.testing.assert_frame_equal(traces.load_trace(trace_copy), first)  # served from the cache
    assert len(azure) == 1 and len(_entries()) == 2
    assert all(p.is_relative_to(cache.cache_dir("traces")) for p in _entries())


def test_a_registered_file_edited_after_download_is_an_error(tmp_path, monkeypatch):
    """The loaders check a registered file against its published sha256 before parsing or using a cache entry."""
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "data" / "mooncake-fast25" / "conversation_trace.jsonl"
    src.parent.mkdir(parents=True)
    shutil.copyfile(data_file(MOONCAKE), src)
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "data"))
    traces.load_trace(src)
    _same_size_edit(src)
    with pytest.raises(data.ChecksumError, match=f"{src} does not match the registry"):
        traces.load_trace(src)


def test_full_cache_disk_still_returns_the_data(trace_copy, full_disk):
    code = textwrap.dedent(f"""
        import warnings
        import numpy as np, pandas as pd
        from workbench import cache
        src = "{trace_copy}"
        build = lambda: pd.DataFrame({{"byte": np.fromfile(src, dtype=np.uint8)}})
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            df = cache.cached_frame(src, "t", build)
        assert df.equals(build())
        print([str(x.message) for x in w])
    """)
    proc = full_disk(code, 20_000)
    assert proc.returncode == 0, proc.stderr
    assert "could not write cache file" in proc.stdout
    left = [p for p in cache.cache_dir().rglob("*") if p.is_file()]
    assert _entries() == [] and all(p.suffix == ".lock" and p.stat().st_size == 0 for p in left)  # only empty locks
