"""``workbench.data.fetch`` against a misbehaving server, with the real bytes of a registered file (the Azure 2023
conversation trace, 719,188 bytes, published sha256). Each test checks the error the user sees and that nothing was
lost: no wrong file in place, a resumable partial kept where it helps, an existing good copy untouched."""

from __future__ import annotations

import dataclasses
import hashlib
import textwrap

import pytest

from workbench import data
from workbench.cli import main as cli_main
from workbench.testing import requires_data

pytestmark = requires_data("azure-llm-2023/AzureLLMInferenceTrace_conv.csv")  # the real_file fixture's file
FAST = {"progress": False, "quiet": True, "backoff_s": 0.0}


def _unpublished(ds: data.Dataset, f: data.DatasetFile) -> data.Dataset:
    """The same file as if upstream published neither size nor checksum (in a directory of its own)."""
    return dataclasses.replace(
        ds, directory="unpublished", files=(dataclasses.replace(f, sha256=None, size_bytes=None),)
    )


def _folder(tmp_path, ds):
    return tmp_path / ds.directory


def test_drop_resumes_with_range_and_verifies(real_file, fault_server, tmp_path):
    ds, f, body = real_file
    (path,) = data.fetch(ds, [f.name], dest=tmp_path, base_url=fault_server.url("drop-250000"), **FAST)
    assert path.read_bytes() == body
    ranges = [r for _, r in fault_server.requests]
    assert ranges == [None, "bytes=250000-", "bytes=500000-"]
    assert sorted(p.name for p in _folder(tmp_path, ds).iterdir()) == [f.name]


def test_drop_without_published_checksum_resumes_and_records_sha(real_file, fault_server, tmp_path):
    ds, f, body = real_file
    ds = _unpublished(ds, f)
    (path,) = data.fetch(ds, dest=tmp_path, base_url=fault_server.url("drop1-100000"), **FAST)
    assert path.read_bytes() == body  # before: a 100,000-byte file reported as downloaded
    assert data.recorded_sha256(path) == hashlib.sha256(body).hexdigest()
    assert data.verify_file(path) == hashlib.sha256(body).hexdigest()


def test_drop_without_content_length_uses_registry_size(real_file, fault_server, tmp_path):
    ds, f, body = real_file
    (path,) = data.fetch(ds, [f.name], dest=tmp_path, base_url=fault_server.url("drop1-300000+nolength"), **FAST)
    assert path.read_bytes() == body
    assert fault_server.requests[-1][1] == "bytes=300000-"


def test_server_ignoring_range_restarts_from_zero(real_file, fault_server, tmp_path):
    ds, f, body = real_file
    (path,) = data.fetch(ds, [f.name], dest=tmp_path, base_url=fault_server.url("drop1-200000+norange"), **FAST)
    assert path.read_bytes() == body
    assert [r for _, r in fault_server.requests] == [None, "bytes=200000-"]


def test_stall_is_one_line_naming_the_url_and_keeps_the_partial(real_file, fault_server, tmp_path):
    ds, f, body = real_file
    url = fault_server.url("stall-150000")
    with pytest.raises(data.DownloadError) as info:
        data.fetch(ds, [f.name], dest=tmp_path, base_url=url, timeout_s=1.0, retries=1, **FAST)
    msg = str(info.value)
    assert "\n" not in msg and f"{url}/{f.name}" in msg and "no data for 1 s" in msg
    part = _folder(tmp_path, ds) / (f.name + ".part")
    assert part.read_bytes() == body[:150000]  # before: a raw TimeoutError and a 0-byte .part
    assert not (_folder(tmp_path, ds) / f.name).exists()
    (path,) = data.fetch(ds, [f.name], dest=tmp_path, base_url=fault_server.url("ok"), **FAST)  # resumes
    assert path.read_bytes() == body and fault_server.requests[-1][1] == "bytes=150000-"


def test_stall_once_then_resume(real_file, fault_server, tmp_path):
    ds, f, body = real_file
    (path,) = data.fetch(ds, [f.name], dest=tmp_path, base_url=fault_server.url("stall1-64000"), timeout_s=0.3, **FAST)
    assert path.read_bytes() == body


def test_corrupt_byte_is_caught_and_an_existing_copy_kept(real_file, fault_server, tmp_path):
    ds, f, body = real_file
    folder = _folder(tmp_path, ds)
    with pytest.raises(data.ChecksumError, match="sha256 mismatch"):
        data.fetch(ds, [f.name], dest=tmp_path, base_url=fault_server.url("corrupt-12345"), **FAST)
    assert list(folder.iterdir()) == []
    data.fetch(ds, [f.name], dest=tmp_path, base_url=fault_server.url("ok"), **FAST)
    with pytest.raises(data.ChecksumError):
        data.fetch(ds, [f.name], dest=tmp_path, base_url=fault_server.url("corrupt-12345"), force=True, **FAST)
    assert (folder / f.name).read_bytes() == body  # before: force deleted the good copy first


@pytest.mark.parametrize("mode, attempts", [("status-404", 1), ("status-500", 3)])
def test_http_errors_leave_nothing_and_keep_an_existing_copy(real_file, fault_server, tmp_path, mode, attempts):
    ds, f, body = real_file
    folder = _folder(tmp_path, ds)
    folder.mkdir()
    (folder / f.name).write_bytes(body)
    url = fault_server.url(mode)
    with pytest.raises(data.DownloadError, match=f"{url}/{f.name} failed: HTTP {mode[-3:]}"):
        data.fetch(ds, [f.name], dest=tmp_path, base_url=url, force=True, retries=2, **FAST)
    assert len(fault_server.requests) == attempts
    assert sorted(p.name for p in folder.iterdir()) == [f.name] and (folder / f.name).read_bytes() == body


def test_transient_500_is_retried(real_file, fault_server, tmp_path):
    ds, f, body = real_file
    (path,) = data.fetch(ds, [f.name], dest=tmp_path, base_url=fault_server.url("status2-503"), **FAST)
    assert path.read_bytes() == body and len(fault_server.requests) == 3


def test_trust_on_first_use_catches_a_changed_file(real_file, fault_server, tmp_path):
    ds, f, body = real_file
    ds = _unpublished(ds, f)
    (path,) = data.fetch(ds, dest=tmp_path, base_url=fault_server.url("ok"), **FAST)
    path.write_bytes(body[:-1] + b"X")  # edited after download
    with pytest.raises(data.ChecksumError, match="changed since its first download"):
        data.fetch(ds, dest=tmp_path, base_url=fault_server.url("ok"), **FAST)
    with pytest.raises(data.ChecksumError, match="changed since it was downloaded"):
        data.verify_file(path)
    path.write_bytes(body)
    with pytest.raises(data.ChecksumError, match="changed upstream"):  # upstream now serves other bytes
        data.fetch(ds, dest=tmp_path, base_url=fault_server.url("corrupt-5"), force=True, **FAST)
    assert path.read_bytes() == body and not (path.parent / (f.name + ".part")).exists()


def test_full_disk_keeps_the_partial_and_resumes(real_file, fault_server, full_disk, tmp_path):
    ds, f, body = real_file
    code = textwrap.dedent(f"""
        from workbench.cli import main
        raise SystemExit(main(["data", "fetch", "azure-llm-2023", "--file", "{f.name}", "--dest", "{tmp_path}",
                               "--base-url", "{fault_server.url("ok")}", "--no-progress"]))
    """)
    proc = full_disk(code, 300_000)
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert err.count("\n") == 0 and "File too large" in err and f"{f.name}.part" in err, err
    part = _folder(tmp_path, ds) / (f.name + ".part")
    assert part.read_bytes() == body[: part.stat().st_size] and part.stat().st_size <= 300_000
    (path,) = data.fetch(ds, [f.name], dest=tmp_path, base_url=fault_server.url("ok"), **FAST)
    assert path.read_bytes() == body


def test_cli_network_error_is_one_line(real_file, fault_server, tmp_path, capsys):
    _, f, _ = real_file
    rc = cli_main(
        [
            "data",
            "fetch",
            "azure-llm-2023",
            "--file",
            f.name,
            "--dest",
            str(tmp_path),
            "--base-url",
            fault_server.url("status-404"),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.count("\n") == 0 and "HTTP 404" in err and fault_server.base in err


def test_stall_before_any_byte_leaves_no_empty_partial(real_file, fault_server, tmp_path):
    ds, f, _ = real_file
    with pytest.raises(data.DownloadError, match="no data for 1 s after 0 bytes"):
        data.fetch(ds, [f.name], dest=tmp_path, base_url=fault_server.url("stall-0"), timeout_s=1.0, retries=0, **FAST)
    assert list(_folder(tmp_path, ds).iterdir()) == []  # before: a 0-byte .part after a raw TimeoutError
