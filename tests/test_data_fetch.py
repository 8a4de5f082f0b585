"""``workbench.data.fetch`` against a local HTTP server on 127.0.0.1 (loopback only): a good file, a corrupted one,
resume with HTTP Range, restart when the server ignores Range, the trust-on-first-use record, and the registry's
checksums against the shared data. Fault injection with real dataset bytes is in ``tests/faults/``."""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from workbench import data
from workbench.cli import main as cli_main
from workbench.testing import data_file, requires_data

GOOD = bytes(range(256)) * 400  # 102,400 bytes
CORRUPT = GOOD[:5000] + b"X" + GOOD[5001:]


class _Handler(BaseHTTPRequestHandler):
    files: ClassVar[dict[str, bytes]] = {}
    honour_range = True
    requests: ClassVar[list[tuple[str, str | None]]] = []

    def do_GET(self):
        name = self.path.lstrip("/").split("/")[-1]
        type(self).requests.append((name, self.headers.get("Range")))
        body = self.files.get(name)
        if body is None:
            self.send_error(404)
            return
        rng = self.headers.get("Range")
        if rng and self.honour_range:
            start = int(rng.split("=")[1].split("-")[0])
            if start >= len(body):
                self.send_response(416)
                self.end_headers()
                return
            chunk = body[start:]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            chunk = body
            self.send_response(200)
        self.send_header("Content-Length", str(len(chunk)))
        self.end_headers()
        self.wfile.write(chunk)

    def log_message(self, *args):  # silence
        pass


@pytest.fixture()
def server():
    _Handler.files = {"good.bin": GOOD, "bad.bin": CORRUPT}
    _Handler.honour_range = True
    _Handler.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _dataset(base: str) -> data.Dataset:
    sha = hashlib.sha256(GOOD).hexdigest()
    return data.Dataset(
        name="loopback",
        title="test",
        directory="loop",
        license="CC0",
        citation="none",
        upstream=base,
        files=(
            data.DatasetFile("good.bin", f"{base}/good.bin", sha256=sha, size_bytes=len(GOOD)),
            data.DatasetFile("bad.bin", f"{base}/bad.bin", sha256=sha, size_bytes=len(GOOD)),
            data.DatasetFile("unpublished.bin", f"{base}/good.bin"),
        ),
    )


def test_fetch_good_file_verifies(server, tmp_path):
    (path,) = data.fetch(_dataset(server), ["good.bin"], dest=tmp_path, progress=False, quiet=True)
    assert path == tmp_path / "loop" / "good.bin"
    assert path.read_bytes() == GOOD
    assert not (tmp_path / "loop" / "good.bin.part").exists()
    # second call: already present and verified, no request made
    n = len(_Handler.requests)
    data.fetch(_dataset(server), ["good.bin"], dest=tmp_path, progress=False, quiet=True)
    assert len(_Handler.requests) == n


def test_fetch_corrupt_file_deletes_partial_and_says_so(server, tmp_path):
    with pytest.raises(data.ChecksumError, match=r"bad\.bin from .*sha256 mismatch.*deleted the partial file"):
        data.fetch(_dataset(server), ["bad.bin"], dest=tmp_path, progress=False)
    assert not (tmp_path / "loop" / "bad.bin.part").exists()
    assert not (tmp_path / "loop" / "bad.bin").exists()


def test_fetch_resumes_with_range(server, tmp_path, capsys):
    folder = tmp_path / "loop"
    folder.mkdir()
    (folder / "good.bin.part").write_bytes(GOOD[:30_000])
    (path,) = data.fetch(_dataset(server), ["good.bin"], dest=tmp_path, progress=False)
    assert path.read_bytes() == GOOD
    assert _Handler.requests[-1] == ("good.bin", "bytes=30000-")
    assert "resumed" in capsys.readouterr().err


def test_fetch_restarts_when_server_ignores_range(server, tmp_path, capsys):
    _Handler.honour_range = False
    folder = tmp_path / "loop"
    folder.mkdir()
    (folder / "good.bin.part").write_bytes(b"garbage that is not a prefix")
    (path,) = data.fetch(_dataset(server), ["good.bin"], dest=tmp_path, progress=False)
    assert path.read_bytes() == GOOD
    assert "restarted" in capsys.readouterr().err


def test_fetch_resume_of_corrupt_prefix_is_caught(server, tmp_path):
    folder = tmp_path / "loop"
    folder.mkdir()
    (folder / "good.bin.part").write_bytes(b"\x00" * 10)  # wrong prefix, server appends the rest
    with pytest.raises(data.ChecksumError):
        data.fetch(_dataset(server), ["good.bin"], dest=tmp_path, progress=False, quiet=True)
    assert not (folder / "good.bin.part").exists()
    (path,) = data.fetch(_dataset(server), ["good.bin"], dest=tmp_path, progress=False, quiet=True)  # clean restart
    assert path.read_bytes() == GOOD


def test_fetch_without_published_checksum_reports_sha(server, tmp_path, capsys):
    (path,) = data.fetch(_dataset(server), ["unpublished.bin"], dest=tmp_path, progress=False)
    assert path.read_bytes() == GOOD
    assert hashlib.sha256(GOOD).hexdigest() in capsys.readouterr().err


def test_fetch_existing_mismatch_needs_force(server, tmp_path):
    folder = tmp_path / "loop"
    folder.mkdir()
    (folder / "good.bin").write_bytes(b"stale")
    with pytest.raises(data.ChecksumError, match="force"):
        data.fetch(_dataset(server), ["good.bin"], dest=tmp_path, progress=False, quiet=True)
    (path,) = data.fetch(_dataset(server), ["good.bin"], dest=tmp_path, progress=False, quiet=True, force=True)
    assert path.read_bytes() == GOOD


def test_fetch_http_error_and_unknown_names(server, tmp_path):
    ds = _dataset(server)
    missing = data.Dataset(**{**ds.__dict__, "files": (data.DatasetFile("nope.bin", f"{server}/nope.bin"),)})
    with pytest.raises(ConnectionError, match="404"):
        data.fetch(missing, dest=tmp_path, progress=False, quiet=True)
    with pytest.raises(ValueError, match="dataset name must be one of"):
        data.fetch("no-such-dataset", dest=tmp_path)
    with pytest.raises(ValueError, match="file must be one of"):
        data.fetch(ds, ["nope.bin"], dest=tmp_path)
    with pytest.raises(ValueError, match="directory"):
        data.fetch("servegen", dest=tmp_path)


def test_cli_fetch_with_mirror(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(data.REGISTRY, "loopback", _dataset(server))
    rc = cli_main(["data", "fetch", "loopback", "--file", "good.bin", "--dest", str(tmp_path), "--no-progress"])
    assert rc == 0
    assert str(tmp_path / "loop" / "good.bin") in capsys.readouterr().out
    rc = cli_main(["data", "fetch", "loopback", "--file", "bad.bin", "--dest", str(tmp_path), "--no-progress"])
    assert rc == 2
    assert "deleted the partial file" in capsys.readouterr().err


def test_cli_data_list(capsys):
    assert cli_main(["data", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("burstgpt", "burstgpt-v3", "azure-llm-2023", "azure-llm-2024", "mooncake-fast25", "servegen"):
        assert f"{name}:" in out


def _with_its_files(name: str):
    """``name`` as a parameter that skips unless every file of that dataset is on the data search path."""
    ds = data.dataset(name)
    return pytest.param(name, marks=requires_data(*(ds.relpath(f.name) for f in ds.files)), id=name)


@pytest.mark.parametrize("name", [_with_its_files("azure-llm-2023"), _with_its_files("mooncake-fast25")])
def test_registry_checksums_match_shared_copies(name):
    ds = data.dataset(name)
    for f in ds.files:
        path = data_file(ds.relpath(f.name))
        assert path.stat().st_size == f.size_bytes
        assert data.sha256_file(path) == f.sha256


def test_trust_on_first_use_record_is_shown_in_data_list(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    monkeypatch.setitem(data.REGISTRY, "loopback", _dataset(server))
    sha = hashlib.sha256(GOOD).hexdigest()
    assert cli_main(["data", "list"]) == 0
    assert "unpublished.bin (no published checksum, none recorded yet: fetch records one, trust on first use)" in (
        capsys.readouterr().out
    )
    (path,) = data.fetch("loopback", ["unpublished.bin"], progress=False, quiet=True)
    assert data.sidecar_path(path).read_text() == f"{sha}  unpublished.bin\n"
    assert cli_main(["data", "list"]) == 0
    assert f"unpublished.bin (no published checksum; sha256 {sha[:12]}... recorded on first fetch" in (
        capsys.readouterr().out
    )
    data.sidecar_path(path).unlink()  # a copy placed by hand gets its record on the next fetch, without a download
    n = len(_Handler.requests)
    data.fetch("loopback", ["unpublished.bin"], progress=False, quiet=True)
    assert len(_Handler.requests) == n and data.recorded_sha256(path) == sha


def test_requires_data_names_what_is_missing_and_data_file_finds_what_is_there(tmp_path, monkeypatch):
    (tmp_path / "here.csv").write_text("x\n")
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    present = requires_data("here.csv").mark
    assert present.name == "skipif" and present.args == (False,)
    absent = requires_data("here.csv", "absent/x.csv").mark
    assert absent.args == (True,) and absent.kwargs["reason"].endswith(": absent/x.csv")
    assert str(tmp_path.resolve()) in absent.kwargs["reason"]
    assert data_file("here.csv") == tmp_path.resolve() / "here.csv"
    with pytest.raises(
        FileNotFoundError, match=r"absent/x\.csv \(mark the test with workbench\.testing\.requires_data"
    ):
        data_file("absent/x.csv")
    with pytest.raises(ValueError, match="at least one relative path"):
        requires_data()
