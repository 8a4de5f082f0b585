"""The sweep layer on a real Dask engine: a LocalCluster of worker processes, and a scheduler and worker started as
separate processes and reached by address. Workers and clients are killed mid-sweep; results must not change."""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import sweep_fixtures  # noqa: E402  (registers "test-draws")

from workbench import experiments as ex  # noqa: E402
from workbench.cli import main  # noqa: E402
from workbench.experiments._store import read_record  # noqa: E402

X = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]


def frame_bytes(df):
    """The result table as parquet bytes (values, dtypes, column order; attrs left out)."""
    df = df.copy()
    df.attrs = {}
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("WORKBENCH_SCHEDULER", raising=False)
    return tmp_path / "cache" / "experiments" / "test-draws"


@pytest.fixture(scope="module")
def local():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    """Stop a process started in its own session, and everything it started (its process group)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def scheduler():
    """A `dask scheduler` and one single-threaded `dask worker`, each a separate process on 127.0.0.1."""
    from distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    ]
    try:
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dask",
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--nworkers",
                    "1",
                    "--host",
                    "127.0.0.1",
                    "--no-dashboard",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
        with Client(address, timeout=60, set_as_default=False) as probe:
            probe.wait_for_workers(1, timeout=60)
        yield address
    finally:
        ex.shutdown()  # the clients sweeps opened to this address
        for proc in reversed(procs):
            _stop(proc)


def test_bad_grids_fail_before_anything_is_scheduled(cache):
    unreachable = "tcp://127.0.0.1:9"  # a sweep that got as far as scheduling would fail to connect instead
    cases = [
        ({"y": [1.0]}, "'y'"),
        ({"x": []}, "'x'"),
        ({"x": [0.5, 11.0]}, "'x'"),
        ({"arm": ["c"]}, "'arm'"),
        ([{"x": 1.0}, {"x": 1.0}], "repeats"),
        ([], "empty"),
    ]
    for grid, named in cases:
        with pytest.raises(ValueError, match=named):
            ex.sweep("test-draws", grid, client=unreachable, progress=False)
    with pytest.raises(TypeError, match="'x'"):
        ex.sweep("test-draws", {"x": ["big"]}, client=unreachable, progress=False)
    with pytest.raises(ValueError, match="seeds"):
        ex.sweep("test-draws", {"x": X}, seeds=0, client=unreachable, progress=False)
    assert not cache.exists()
    assert main(["sweep", "run", "test-draws", "--grid", "x=1,12", "--scheduler", unreachable]) == 2


def test_identical_bytes_serial_local_cluster_and_cache(local, cache):
    grid = {"x": X, "arm": ["a", "b"]}
    serial = ex.sweep("test-draws", grid, seeds=3, client=False, cache=False, progress=False)
    assert list(serial.columns) == ["x", "arm", "busy_s", "fail_above", "seed", "k", "value"]
    assert len(serial) == len(X) * 2 * 3 * 3
    run_two = ex.run_sweep("test-draws", grid, seeds=3, client=local, progress=False)
    assert run_two.computed == len(X) * 2 * 3 and len(list(cache.glob("*.rec"))) == len(X) * 2 * 3
    run_cached = ex.run_sweep("test-draws", grid, seeds=3, client=False, progress=False)
    assert run_cached.cache_hits == len(X) * 2 * 3 and run_cached.computed == 0
    on_two, cached = run_two.table, run_cached.table
    assert frame_bytes(serial) == frame_bytes(on_two) == frame_bytes(cached)
    # a point's rows do not depend on the grid around it, its order, or the seed list
    alone = ex.sweep("test-draws", [{"x": 2.0, "arm": "b"}], seeds=[2], client=False, cache=False, progress=False)
    rows = serial[(serial.x == 2.0) & (serial.arm == "b") & (serial.seed == 2)].reset_index(drop=True)
    assert frame_bytes(alone) == frame_bytes(rows)
    # "arm" is a treatment: both arms see the same draws
    a, b = (serial[serial.arm == arm].value.to_numpy() for arm in ("a", "b"))
    assert np.abs(b - a - 1.0).max() < 1e-12
    refreshed = ex.run_sweep("test-draws", grid, seeds=3, client=local, cache="refresh", progress=False)
    assert refreshed.computed == len(X) * 2 * 3 and frame_bytes(refreshed.table) == frame_bytes(serial)


def _serial_without_sleeping(grid: dict, **kwargs):
    """The serial reference of a sweep whose points sleep ``busy_s`` (so that a kill lands mid-run), computed here
    without the sleeps: the values do not depend on them (10 s of an idle test worker in the two tests below)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sweep_fixtures, "time", types.SimpleNamespace(sleep=lambda s: None))
        return ex.sweep("test-draws", grid, client=False, cache=False, progress=False, **kwargs)


@pytest.mark.slow
def test_killed_worker_is_replaced_and_results_are_unchanged(local):
    grid = {"x": [*X, 3.5, 4.0], "busy_s": 0.4}
    serial = _serial_without_sleeping(grid, seeds=2)
    pids = sorted(local.run(os.getpid).values())
    killer = threading.Timer(1.0, os.kill, (pids[0], signal.SIGKILL))
    killer.start()
    try:
        result = ex.run_sweep("test-draws", grid, seeds=2, client=local, cache=False, progress=False)
    finally:
        killer.join()
    assert result.ok and result.computed == 16
    assert frame_bytes(result.table) == frame_bytes(serial)
    local.wait_for_workers(2, timeout=60)
    assert pids[0] not in local.run(os.getpid).values()  # the nanny started a new worker process


def test_failures_are_collected_and_the_rest_completes(local):
    grid = {"x": X, "fail_above": 2.2}
    run = ex.run_sweep("test-draws", grid, seeds=2, client=local, progress=False)
    errors, result = run.failures, run.table
    assert sorted(set(errors.x)) == [2.5, 3.0] and len(errors) == 4 and not run.ok
    assert errors.error.str.contains("RuntimeError: x=2.5 is above 2.2").any()
    assert errors.traceback.str.contains("Traceback").all()
    assert sorted(set(result.x)) == [0.5, 1.0, 1.5, 2.0] and len(result) == 4 * 2 * 3
    again = ex.run_sweep("test-draws", grid, seeds=2, client=False, progress=False)  # failures are not cached
    assert again.cache_hits == 8 and len(again.failures) == 4
    with pytest.raises(ex.SweepError, match=r"4 of 12 point\(s\) failed; first at x=2\.5.*above 2\.2") as raised:
        ex.sweep("test-draws", grid, seeds=2, client=False, progress=False)
    assert len(raised.value.run.table) == 4 * 2 * 3
    assert (
        main(["sweep", "run", "test-draws", "--grid", "x=1,3", "--grid", "fail_above=2", "--serial", "--no-progress"])
        == 1
    )


@pytest.mark.slow
def test_sweep_by_address_and_killed_client_resumes_with_only_the_missing_points(scheduler, cache, tmp_path):
    xs = [0.25 * i for i in range(1, 13)]
    script = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import sweep_fixtures\n"
        "from workbench.experiments import sweep\n"
        f"sweep('test-draws', {{'x': {xs!r}, 'busy_s': 0.3}}, client={scheduler!r}, progress=False)\n"
    )
    client_proc = subprocess.Popen(
        [sys.executable, "-c", script],
        env={**os.environ},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 90
        while len(list(cache.glob("*.rec"))) < 4:
            assert client_proc.poll() is None, client_proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the sweep client wrote nothing"
            time.sleep(0.05)
        os.killpg(client_proc.pid, signal.SIGKILL)
        client_proc.wait()
    finally:
        _stop(client_proc)
    done = len(list(cache.glob("*.rec")))
    assert 4 <= done < len(xs)
    for record in cache.glob("*.rec"):  # atomic writes: a killed writer leaves no partial record
        assert read_record(record).num_rows == 3  # verified: checksum and length
    resumed = ex.run_sweep("test-draws", {"x": xs, "busy_s": 0.3}, client=scheduler, progress=False)
    assert resumed.cache_hits == done and resumed.computed == len(xs) - done
    serial = _serial_without_sleeping({"x": xs, "busy_s": 0.3})
    assert frame_bytes(resumed.table) == frame_bytes(serial)  # one single-threaded worker: same bytes as serial


def test_scheduler_from_the_environment(scheduler, monkeypatch):
    monkeypatch.setenv("WORKBENCH_SCHEDULER", scheduler)
    result = ex.run_sweep("test-draws", {"x": [1.0, 2.0]}, progress=False)
    assert result.computed == 2
    assert ex.cluster(scheduler).scheduler.address == scheduler


CHEAP = {
    "fabric-congestion": {
        "leaves": [2, 4],
        "spines": 4,
        "hosts_per_leaf": 4,
        "routing": ["ecmp", "mp-2"],
        "samples": 20,
    },
    "collective-time-vs-size": {"leaves": 2, "spines": 2, "hosts_per_leaf": 4, "routing": ["ecmp", "spray"]},
    "ballsbins-max-load": {"flows": [8, 64], "samples": 500},
    "arrivals-queue-wait": {"utilization": [0.5, 0.9], "process": ["poisson", "weibull"], "customers": 2000},
    "training-iteration-time": {"dp": [4, 8], "routing": ["ecmp", "spray"]},
    "training-ettr": {"mtbf_h": [1.0, 5.0], "mode": ["checkpoint", "live"], "replicas": 10},
    "diagnosis-detection": {"noise_level": [1.0, 4.0], "detector": ["c4d", "minder"]},
}


@pytest.mark.parametrize("name", sorted(CHEAP))
def test_registered_studies_give_the_same_bytes_serially_and_on_two_workers(name, local):
    run = {"seeds": 2, "cache": False, "progress": False}
    serial = ex.sweep(name, CHEAP[name], client=False, **run)
    assert len(serial) >= 4
    assert frame_bytes(serial) == frame_bytes(ex.sweep(name, CHEAP[name], client=local, **run))
