"""The dataset registry: every entry complete (files, https upstream, sha256 format, license, citation), names and
relative paths consistent with the shared data folders and their PROVENANCE files."""

from __future__ import annotations

import re

import pytest

from workbench import data
from workbench.testing import data_file, requires_data


def test_registry_has_the_issue_datasets():
    names = {d.name for d in data.datasets()}
    assert {"burstgpt", "burstgpt-v3", "azure-llm-2023", "azure-llm-2024", "mooncake-fast25", "servegen"} <= names


@pytest.mark.parametrize("ds", data.datasets(), ids=lambda d: d.name)
def test_entry_is_complete(ds):
    assert ds.license and ds.citation and ds.upstream and ds.title
    if ds.kind == "directory":
        assert not ds.files and "commit" in ds.extra
        return
    assert ds.files
    for f in ds.files:
        if not f.url:  # generated locally, read from the data search path only: the entry says so
            assert ds.upstream.startswith("none"), f"{ds.name}/{f.name} has no URL but upstream is {ds.upstream!r}"
            with pytest.raises(ValueError, match="no download location"):
                data.fetch(ds.name, [f.name], dest="/nonexistent-never-created")
            continue
        assert f.url.startswith("https://") and f.url.endswith("/" + f.name)
        if f.sha256 is not None:
            assert re.fullmatch(r"[0-9a-f]{64}", f.sha256)
        assert ds.relpath(f.name) == f"{ds.directory}/{f.name}"


@requires_data("burstgpt/README.md")
def test_burstgpt_checksums_match_the_shared_readme():
    readme = data_file("burstgpt/README.md").read_text()
    ds = data.dataset("burstgpt")
    for f in ds.files:
        if f.sha256:
            assert f.sha256 in readme
            assert f"{f.size_bytes:,}" in readme


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=requires_data(f"{n}/PROVENANCE.md"), id=n) for n in ("azure-llm-2023", "mooncake-fast25")],
)
def test_checksums_match_provenance(name):
    ds = data.dataset(name)
    text = data_file(f"{ds.directory}/PROVENANCE.md").read_text()
    for f in ds.files:
        assert f.sha256 in text and f.name in text and str(f.rows) in text.replace(",", "")


@requires_data("servegen/PROVENANCE.md")
def test_servegen_entry_points_at_the_shared_folder():
    ds = data.dataset("servegen")
    assert ds.extra["commit"] in data_file(f"{ds.directory}/PROVENANCE.md").read_text()


def test_unknown_dataset_and_file():
    with pytest.raises(ValueError, match="dataset name must be one of"):
        data.dataset("nope")
    with pytest.raises(ValueError, match="file must be one of"):
        data.dataset("burstgpt").file("nope.csv")


def test_directory_dataset_is_located_by_its_raw_subdirectory(tmp_path, monkeypatch):
    """A derived summary under datasets/servegen/ is not mistaken for the raw ServeGen data."""
    from workbench import data

    summary_only = tmp_path / "a"
    (summary_only / "servegen" / "summary").mkdir(parents=True)
    raw = tmp_path / "b"
    (raw / "servegen" / "data").mkdir(parents=True)
    ds = data.dataset("servegen")
    monkeypatch.setattr(data, "search_path", lambda: [summary_only])
    assert ds.locate() is None
    monkeypatch.setattr(data, "search_path", lambda: [summary_only, raw])
    assert ds.locate() == raw / "servegen"
