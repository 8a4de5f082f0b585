"""Fault injection: a loopback HTTP server (127.0.0.1 only) that serves real dataset bytes and misbehaves on request,
and a helper that runs Python in a subprocess with a file-size limit (a full disk).

A URL ``{base}/{modes}/{name}`` serves ``name`` with the '+'-separated ``modes`` applied:

* ``ok`` -- plain (Range honoured: 206 with Content-Range);
* ``drop-N`` -- every response stops after N body bytes and closes the connection; ``drop1-N`` only the first;
* ``stall-N`` -- stop sending at byte N of the file (until the test ends), every time; ``stall1-N`` -- the first
  response sends N bytes and stops;
* ``corrupt-K`` -- flip the byte at offset K;
* ``status-C`` -- answer HTTP C every time; ``status2-C`` the first two times, then serve;
* ``norange`` -- ignore Range (always 200 with the whole file);
* ``nolength`` -- no Content-Length header (the body ends when the connection closes).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class FaultServer:
    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.requests: list[tuple[str, str | None]] = []
        self.counts: dict[str, int] = {}
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.handle(self)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def url(self, modes: str) -> str:
        """Base URL for ``fetch(..., base_url=...)`` with these modes."""
        return f"{self.base}/{modes}"

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        _, modes, name = h.path.split("/", 2)
        rng = h.headers.get("Range")
        self.requests.append((h.path, rng))
        n = self.counts[h.path] = self.counts.get(h.path, 0) + 1
        opts = dict(m.split("-", 1) if "-" in m else (m, "") for m in modes.split("+"))
        body = self.files.get(name)
        if "status" in opts or ("status2" in opts and n <= 2) or body is None:
            h.send_error(int(opts.get("status", opts.get("status2", 404))) if body is not None else 404)
            return
        if "corrupt" in opts:
            k = int(opts["corrupt"])
            body = body[:k] + bytes([body[k] ^ 0xFF]) + body[k + 1 :]
        start = 0
        if rng and "norange" not in opts:
            start = int(rng.split("=")[1].split("-")[0])
            if start >= len(body):
                h.send_response(416)
                h.send_header("Content-Range", f"bytes */{len(body)}")
                h.end_headers()
                return
            h.send_response(206)
            h.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            h.send_response(200)
        chunk = body[start:]
        if "nolength" not in opts:
            h.send_header("Content-Length", str(len(chunk)))
        h.end_headers()
        limit = len(chunk)
        if "drop" in opts or ("drop1" in opts and n == 1):
            limit = int(opts.get("drop", opts.get("drop1")))
        if "stall" in opts:
            limit = max(0, int(opts["stall"]) - start)
        if "stall1" in opts and n == 1:
            limit = int(opts["stall1"])
        h.wfile.write(chunk[:limit])
        h.wfile.flush()
        if limit < len(chunk) and ("stall" in opts or ("stall1" in opts and n == 1)):
            self.stop.wait(30)
        h.close_connection = True

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def real_file():
    """A real dataset file with a published sha256: (registry Dataset, DatasetFile, bytes). A test using it is marked
    ``workbench.testing.requires_data("azure-llm-2023/AzureLLMInferenceTrace_conv.csv")``."""
    from workbench import data
    from workbench.testing import data_file

    ds = data.dataset("azure-llm-2023")
    f = ds.file("AzureLLMInferenceTrace_conv.csv")
    return ds, f, data_file(ds.relpath(f.name)).read_bytes()


@pytest.fixture()
def fault_server(real_file):
    _, f, body = real_file
    with FaultServer({f.name: body}) as server:
        yield server


def _run_with_file_size_limit(code: str, limit_bytes: int) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter whose files cannot grow beyond ``limit_bytes`` (RLIMIT_FSIZE: writes past
    it fail with EFBIG, as on a full disk)."""
    prelude = (
        "import resource, signal\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit_bytes}, {limit_bytes}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture()
def full_disk():
    """``full_disk(code, limit_bytes)``: run ``code`` in a subprocess that cannot write files beyond ``limit_bytes``."""
    return _run_with_file_size_limit
