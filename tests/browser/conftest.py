"""Fixtures for the browser tests: a JupyterLab (and Voilà) server on a free loopback port, and Playwright driving
the Debian ``chromium`` binary through ``executable_path`` (never a downloaded browser).

The servers run where a user is (:func:`user_dir`): in a directory holding a copy of ``notebooks/`` (nothing a test
does, running cells or saving, can touch the repository) and the ``out/`` that ``workbench reproduce`` wrote there
(scoreboard and exported figures, computed into the session's cache), with JupyterLab's autosave on. Every server a
test starts is stopped when the session ends. Screenshots go to ``out/screenshots/`` (``$WORKBENCH_SCREENSHOTS``
overrides).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from workbench.viz.export import chromium_path

ROOT = Path(__file__).resolve().parents[2]
VIEWPORT = {"width": 1366, "height": 768}
TOKEN = "workbench-browser-test"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, proc: subprocess.Popen, log: Path, timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"server at {url} did not answer in {timeout_s:.0f} s:\n{log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture(scope="session")
def screenshots_dir() -> Path:
    d = Path(os.environ.get("WORKBENCH_SCREENSHOTS", ROOT / "out" / "screenshots"))
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture(scope="session")
def browser():
    exe = chromium_path()
    if exe is None:
        pytest.skip("no Chromium on this machine (the project's install step installs Debian's chromium as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()


#: The papers ``workbench reproduce --quick`` runs to put the servers in a user's state: the cheapest one (about 10 s
#: of claims at the quick scale on 2 cores), whose scoreboard and figures are written like every paper's.
USER_STATE_PAPERS = ("arrivals",)


@pytest.fixture(scope="session")
def user_dir(tmp_path_factory) -> Path:
    """A directory as a user has it after ``make reproduce``: ``out/`` written by a real ``workbench reproduce``
    (``scoreboard.json``, ``.md``, ``.html`` and the exported figures; the session's cache filled) beside a copy of
    the notebooks and the jupytext config, which the servers run from."""
    d = tmp_path_factory.mktemp("user")
    shutil.copytree(ROOT / "notebooks", d / "notebooks")
    shutil.copy(ROOT / "pyproject.toml", d / "pyproject.toml")  # jupytext's pairing config
    log = d / "reproduce.log"
    papers = [f"--paper={p}" for p in USER_STATE_PAPERS]
    cmd = [sys.executable, "-m", "workbench.cli", "reproduce", "--quick", "--serial", *papers, "--out", "out"]
    with log.open("w") as fh:
        code = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=d, timeout=600).returncode
    assert code == 0 and (d / "out" / "scoreboard.json").is_file(), f"reproduce failed:\n{log.read_text()[-3000:]}"
    return d


@pytest.fixture(scope="session")
def workdir(user_dir) -> Path:
    """Where the servers run: the user's directory (:func:`user_dir`)."""
    return user_dir


@pytest.fixture(scope="session")
def lab(workdir, tmp_path_factory):
    """A JupyterLab on a free loopback port as a user runs it (autosave on, at its default interval), every cell in
    the DOM, the app object exposed."""
    settings = tmp_path_factory.mktemp("lab-settings")
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"})
    )
    (settings / "@jupyterlab" / "docmanager-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "docmanager-extension" / "plugin.jupyterlab-settings").write_text(
        json.dumps({"autosave": True})
    )
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    # Lab's debugger logs "Could not restore the debugger state" errors when a test shuts a kernel down while it
    # answers the debugger's start-up requests; the tests do not use the debugger, so it is disabled.
    config = tmp_path_factory.mktemp("lab-config")
    (config / "labconfig").mkdir()
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/debugger-extension": True}})
    )
    port = _free_port()
    log = workdir / "lab.log"
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        f"--port={port}",
        "--ip=127.0.0.1",
        f"--ServerApp.token={TOKEN}",
        f"--ServerApp.root_dir={workdir}",
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.user_settings_dir={settings}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "getuid") and os.getuid() == 0:
        cmd.append("--allow-root")
    with log.open("w") as fh:
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=workdir, env={**os.environ, "JUPYTER_CONFIG_DIR": str(config)}
        )
    try:
        _wait_http(f"http://127.0.0.1:{port}/api/status?token={TOKEN}", proc, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(proc)


@pytest.fixture(scope="session")
def viewport() -> dict[str, int]:
    return dict(VIEWPORT)


@pytest.fixture(scope="session")
def token() -> str:
    return TOKEN


@pytest.fixture(scope="session")
def voila(user_dir):
    """``workbench dashboard`` (Voilà) on a free loopback port, run as a user runs it after ``make reproduce``: from
    the directory whose ``out/scoreboard.json`` the landing page reads, building the dashboards into ``out/``."""
    d = user_dir
    port = _free_port()
    log = d / "voila.log"
    cmd = [sys.executable, "-m", "workbench.cli", "dashboard", "--port", str(port)]
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=d, start_new_session=True)
    try:
        _wait_http(f"http://127.0.0.1:{port}/", proc, log, timeout_s=120)  # the tree: renders no notebook
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=10)


#: Every plotly figure inside ``root`` (the page when null) as JSON: its traces and layout as plotly.js holds them
#: (typed arrays as lists), the width it is drawn at and the scale its camera button saves at.
_PLOTTED = """(root) => JSON.stringify(Array.from((root || document).querySelectorAll('.js-plotly-plot'))
  .map(gd => ({data: gd.data || [], layout: gd.layout || {},
               width: gd.offsetParent !== null ? (gd._fullLayout || {}).width || null : null,
               scale: ((gd._context || {}).toImageButtonOptions || {}).scale || 1})),
  (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v))"""


def _plotted_problems(page, root=None) -> dict[int, list[str]]:
    """The figure invariants (:func:`workbench.testing.figure_problems`) applied to what the browser draws: every
    plotly figure in ``root`` (an element handle; default the whole page), read from the DOM, at the width it is
    drawn when in view (its title clear of the mode bar), and its camera button saving at
    :data:`workbench.viz.EXPORT_SCALE`."""
    import plotly.graph_objects as go

    from workbench.testing import figure_problems
    from workbench.viz import EXPORT_SCALE

    figures = json.loads(page.evaluate(_PLOTTED, root))
    assert any(f["data"] for f in figures), "no plotted data found in the page's figures"
    out = {}
    for i, f in enumerate(figures):
        fig = go.Figure(data=f["data"], layout=f["layout"], skip_invalid=True)
        found = figure_problems(fig, width_px=f["width"])
        if f["scale"] != EXPORT_SCALE:
            found.append(f"the camera button saves at {f['scale']}x the on-screen size, not {EXPORT_SCALE}x")
        if found:
            out[i] = found
    return out


@pytest.fixture
def plotted_problems():
    """:func:`_plotted_problems`: the figure invariants applied to the figures a page draws."""
    return _plotted_problems
