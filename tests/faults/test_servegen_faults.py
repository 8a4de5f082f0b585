"""ServeGen pools against edited sources and damaged files: the memo and the ``.npz`` cache are keyed by the
released files' content, and a damaged summary is an error naming the file."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from workbench import cache
from workbench.testing import data_file, requires_data
from workbench.workloads import servegen as sg

LENGTHS = {"input_tokens": "{10: 1.0}", "output_tokens": "{20: 1.0}", "reason_ratio": "{0.5: 1.0}"}


@pytest.fixture()
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "data"))
    cache.clear_memo()
    yield tmp_path / "data"
    cache.clear_memo()


def _model_dir(data_dir):
    d = data_dir / "servegen" / "data" / "reason" / "deepseek-r1"
    d.mkdir(parents=True)
    for cid in (0, 1):
        (d / f"chunk-{cid}-trace.csv").write_text("0,2.0,1.0,Gamma,1.0,0.5\n")
        (d / f"chunk-{cid}-dataset.json").write_text(json.dumps({"0": LENGTHS}))
    return d


def test_memo_and_npz_cache_notice_an_edited_released_file(data_dir):
    d = _model_dir(data_dir)
    first = sg.load_pool("deepseek-r1")
    assert sg.load_pool("deepseek-r1") is first and first.rate_rps[0, 0] == 2.0
    trace = d / "chunk-0-trace.csv"
    st = trace.stat()
    trace.write_text("0,3.0,1.0,Gamma,1.0,0.5\n")  # same size, modification time kept
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert sg.load_pool("deepseek-r1").rate_rps[0, 0] == 3.0
    cache.clear_memo()
    assert sg.load_pool("deepseek-r1").rate_rps[0, 0] == 3.0  # the on-disk cache is keyed by content too
    (d / "chunk-0-dataset.json").unlink()  # a length file removed changes the key as well
    assert not sg.load_pool("deepseek-r1").has_lengths[0]
    names = ["chunk-0-trace.csv", "chunk-1-dataset.json", "chunk-1-trace.csv"]
    assert sorted(p.name for p in d.iterdir()) == names  # nothing written beside the data


@requires_data("servegen/summary/deepseek-r1.npz")
def test_truncated_summary_names_the_file(data_dir):
    summary = data_dir / "servegen" / "summary" / "deepseek-r1.npz"
    summary.parent.mkdir(parents=True)
    real = data_file("servegen/summary/deepseek-r1.npz")
    shutil.copyfile(real, summary)
    assert sg.load_pool("deepseek-r1", source="summary").source == "summary"
    summary.write_bytes(real.read_bytes()[: real.stat().st_size // 2])
    with pytest.raises(ValueError, match=f"{summary}: the ServeGen summary of deepseek-r1 is damaged or truncated"):
        sg.load_pool("deepseek-r1", source="summary")  # the memo notices the change too
