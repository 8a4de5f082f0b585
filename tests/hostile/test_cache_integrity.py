"""Caches that cannot serve wrong numbers, and the one safe writer (issue 30): each case as a hostile user made it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench import cache as C
from workbench.experiments import Param, experiment, run_sweep, sweep

HERE = Path(__file__).parent


@experiment(
    "test-integrity",
    version="1",
    params=[
        Param("x", 1.0, "", low=0.0, high=10.0, doc="scale"),
        Param("mode", "ok", choices=("ok", "list", "text"), seeded=False, doc="what the point returns"),
    ],
)
def _integrity(*, x, mode, seed):
    """A seeded value scaled by x; ``mode`` makes the point return a list or a string (a broken model)."""
    value = x * np.random.default_rng(seed).random()
    if mode == "list":
        return {"value": [value, value]}
    if mode == "text" and x > 2:
        return {"value": f"{value:.3f}"}
    return {"value": value}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _records(cache: Path) -> list[Path]:
    return sorted((cache / "experiments" / "test-integrity").glob("*.rec"))


def _fresh(grid):
    return sweep("test-integrity", grid, seeds=1, client=False, cache=False, progress=False)


def test_flipped_bit_in_a_record_is_recomputed_with_a_warning(_cache):
    grid = {"x": [1.0, 2.0, 3.0]}
    first = sweep("test-integrity", grid, seeds=1, client=False, progress=False)
    for rec in _records(_cache):  # flip one bit in the payload's last quarter (the data pages and footer)
        raw = bytearray(rec.read_bytes())
        raw[len(raw) * 3 // 4] ^= 0x10
        rec.write_bytes(bytes(raw))
    with pytest.warns(C.CacheWarning, match=r"experiment record .*\.rec failed its checksum"):
        run = run_sweep("test-integrity", grid, seeds=1, client=False, progress=False)
    assert run.cache_hits == 0 and run.computed == 3
    pd.testing.assert_frame_equal(run.table, first)


def test_swapped_records_are_detected(_cache):
    grid = {"x": [1.0, 2.0]}
    first = sweep("test-integrity", grid, seeds=1, client=False, progress=False)
    a, b = _records(_cache)
    data_a, data_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(data_b)
    b.write_bytes(data_a)
    with pytest.warns(C.CacheWarning, match="belongs to another point"):
        again = sweep("test-integrity", grid, seeds=1, client=False, progress=False)
    pd.testing.assert_frame_equal(again, first)  # no point twice, none missing
    assert again["x"].tolist() == [1.0, 2.0]


def test_truncated_and_foreign_records_are_recomputed(_cache):
    grid = {"x": [1.0, 2.0]}
    first = sweep("test-integrity", grid, seeds=1, client=False, progress=False)
    a, b = _records(_cache)
    a.write_bytes(a.read_bytes()[:-7])
    b.write_bytes(b"PAR1 not a record")
    with pytest.warns(C.CacheWarning) as caught:
        again = sweep("test-integrity", grid, seeds=1, client=False, progress=False)
    text = " ".join(str(w.message) for w in caught)
    assert "truncated" in text and "not a workbench record" in text
    pd.testing.assert_frame_equal(again, first)


def test_result_of_the_wrong_shape_fails_that_point_and_is_not_cached(_cache):
    run = run_sweep("test-integrity", {"x": [1.0, 2.0], "mode": "list"}, seeds=1, client=False, progress=False)
    assert len(run.failures) == 2 and not _records(_cache)
    assert "holds scalars" in run.failures["error"].iloc[0] and "'value' is a list" in run.failures["error"].iloc[0]


def test_result_type_changing_between_points_names_the_point(_cache):
    run = run_sweep("test-integrity", {"x": [1.0, 3.0], "mode": "text"}, seeds=1, client=False, progress=False)
    assert run.table["x"].tolist() == [1.0]
    assert run.failures["x"].tolist() == [3.0] and "'value' is string here" in run.failures["error"].iloc[0]
    assert len(_records(_cache)) == 1
    again = run_sweep("test-integrity", {"x": [1.0, 3.0], "mode": "text"}, seeds=1, client=False, progress=False)
    assert again.cache_hits == 1 and len(again.failures) == 1  # the next run is not broken by an ArrowTypeError


def test_unwritable_cache_only_warns(tmp_path, monkeypatch):
    """A cache root that cannot be created (here: below a regular file, which even root cannot write into) costs
    speed only: the sweep warns and returns the same numbers."""
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "file" / "cache"))
    with pytest.warns(C.CacheWarning):
        out = sweep("test-integrity", {"x": [1.0]}, seeds=1, client=False, progress=False)
    pd.testing.assert_frame_equal(out, _fresh({"x": [1.0]}))


def test_empty_workbench_cache_is_unset(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert C.cache_dir() == tmp_path / "home" / ".cache" / "workbench"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]  # nothing in the current directory


def test_numba_cache_goes_under_workbench_cache(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["WORKBENCH_CACHE"] = str(tmp_path / "wc")
    code = "import workbench, numba.core.config as c, os; print(os.environ['NUMBA_CACHE_DIR'], c.CACHE_DIR)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == [str(tmp_path / "wc" / "numba")] * 2


def test_damaged_sidecar_is_rebuilt_not_a_unicode_error(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("a\n1\n2\n")
    C.cached_frame(src, 1, lambda: pd.read_csv(src))
    (side,) = C.cache_dir("traces").glob("t.csv-*.parquet.sha256")
    side.write_bytes(b"\xff\xfe\x00bad")
    with pytest.warns(C.CacheWarning, match="no readable checksum sidecar"):
        again = C.cached_frame(src, 1, lambda: pd.read_csv(src))
    assert again["a"].tolist() == [1, 2]


@pytest.mark.parametrize("kind", ["fifo", "dir", "dangling"])
def test_atomic_writer_refuses_non_regular_targets(tmp_path, kind):
    target = tmp_path / "out.csv"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "dir":
        target.mkdir()
    else:
        target.symlink_to(tmp_path / "nowhere")
    expected = FileExistsError if kind == "dangling" else IsADirectoryError
    with pytest.raises(expected, match=str(target)), C.atomic_path(target, overwrite=False) as tmp:
        tmp.write_text("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]  # nothing else written
    if kind != "dangling":
        with pytest.raises(IsADirectoryError), C.atomic_path(target, overwrite=True) as tmp:
            tmp.write_text("x")


def test_device_is_refused_even_with_force():
    with pytest.raises(IsADirectoryError, match="character device"):
        C.check_target("/dev/null", overwrite=True)


def test_stale_temporaries_of_dead_processes_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    stale = tmp_path / f".out.csv.{pid}.deadbeef.tmp"
    stale.write_bytes(b"x" * 1000)
    mine = tmp_path / f".out.csv.{os.getpid()}.cafef00d.tmp"
    mine.write_bytes(b"y")
    with C.atomic_path(tmp_path / "out.csv") as tmp:
        tmp.write_text("done")
    assert not stale.exists() and mine.exists()  # a live process's temporary is left alone


def test_sigterm_during_a_write_leaves_no_temporary(tmp_path):
    """``workbench`` turns SIGTERM into an orderly exit, so the atomic writer removes its temporary file."""
    script = (
        "import sys, time\n"
        "from workbench.cli import _exit_on_sigterm\n"
        "from workbench.cache import atomic_path\n"
        "_exit_on_sigterm()\n"
        f"with atomic_path({str(tmp_path / 'big.bin')!r}) as tmp:\n"
        "    tmp.write_bytes(b'x' * 1000)\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    assert any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("store", ["cached_arrays", "cached_frame"])
def test_processes_asking_for_one_entry_at_once_build_it_once_and_never_warn(tmp_path, store):
    """Test workers that load the same trace at once (CI saw one read an entry between its write and its checksum's,
    warn and delete it): one process builds, the others wait for it and read its entry, with no CacheWarning."""
    src = tmp_path / "source.txt"
    src.write_text("1 2 3")
    builds = tmp_path / "builds.log"
    result = "{'x': np.arange(1000)}" if store == "cached_arrays" else "pd.DataFrame({'x': np.arange(1000)})"
    script = (
        "import os, sys, time, warnings\n"
        "import numpy as np, pandas as pd\n"
        "from workbench import cache\n"
        "warnings.simplefilter('error', cache.CacheWarning)\n"
        "def build():\n"
        f"    with open({str(builds)!r}, 'a') as fh:\n"
        "        fh.write(f'{os.getpid()}\\n')\n"
        "    time.sleep(0.5)\n"
        f"    return {result}\n"
        f"out = cache.{store}({str(src)!r}, 1, build)\n"
        "print(int(out['x'].sum()))\n"
    )
    env = {**os.environ, "WORKBENCH_CACHE": str(tmp_path / "cache")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err for _, err in outs]
    assert [out.strip() for out, _ in outs] == [str(sum(range(1000)))] * 4
    assert len(builds.read_text().split()) == 1


def test_scoreboard_write_is_atomic_on_failure(tmp_path, monkeypatch):
    from workbench import reproductions as R

    (tmp_path / "scoreboard.json").write_text('["old"]\n')

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="No space"):
        R.write_scoreboard([], tmp_path)
    assert (tmp_path / "scoreboard.json").read_text() == '["old"]\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scoreboard.json"]


def test_save_params_needs_force(tmp_path):
    from workbench.cli import main

    i = np.arange(400)
    pd.DataFrame({"arrival_s": i * 9.0, "input_tokens": 10 + i % 50, "output_tokens": 5 + i % 30}).to_csv(
        tmp_path / "t.csv", index=False
    )
    keep = tmp_path / "fit.json"
    keep.write_text("precious\n")
    args = ["workload", "generate", "burstgpt", "--fit", str(tmp_path / "t.csv"), "--save-params", str(keep)]
    args += ["--duration", "10m", "--out", str(tmp_path / "o.csv")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(args) == 2
    assert keep.read_text() == "precious\n" and not (tmp_path / "o.csv").exists()


def test_replay_refuses_a_directory_out(tmp_path, capsys):
    from workbench.cli import main

    cm = tmp_path / "f.cm"
    cm.write_text("0->1 id 1 start 0 size 1500\n")
    (tmp_path / "out").mkdir()
    assert main(["aqm", "replay", str(cm), "--out", str(tmp_path / "out")]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert not list((tmp_path / "out").iterdir())
