"""The sweep and reproduction caches follow the code and the data: an edited model or a shadowed data file never
serves an old number, and leaves the cached points of experiments that cannot reach it in place."""

from __future__ import annotations

import ast
import importlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from workbench import WorkbenchWarning, _deps, data
from workbench import cache as cache_module
from workbench import experiments as ex

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("WORKBENCH_SCHEDULER", raising=False)
    return tmp_path / "cache"


@pytest.fixture()
def models_package(tmp_path, monkeypatch):
    """A small package of a model and two experiments: ``test-cache-a`` calls the model, ``test-cache-b`` does not;
    ``test-cache-data`` reads ``wbtest/value.txt`` from the data search path."""
    pkg = tmp_path / "pkg" / "wbt_models"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text("SCALE = 1.0\n\n\ndef scaled(x):\n    return SCALE * x\n")
    (pkg / "expa.py").write_text(
        textwrap.dedent(
            """
            from workbench import data
            from workbench.experiments import Param, experiment

            from . import model


            @experiment("test-cache-a", version="1", params=[Param("x", 1.0, "", low=0.0)])
            def test_cache_a(*, x, seed):
                return {"y": model.scaled(x)}


            @experiment("test-cache-data", version="1", params=[Param("x", 1.0, "", low=0.0)])
            def test_cache_data(*, x, seed):
                return {"y": x * float(data.require("wbtest/value.txt").read_text())}
            """
        )
    )
    (pkg / "expb.py").write_text(
        textwrap.dedent(
            """
            from workbench.experiments import Param, experiment


            @experiment("test-cache-b", version="1", params=[Param("x", 1.0, "", low=0.0)])
            def test_cache_b(*, x, seed):
                return {"y": 3 * x}
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    importlib.invalidate_caches()
    for name in ("wbt_models.expb", "wbt_models.expa", "wbt_models.model", "wbt_models"):
        sys.modules.pop(name, None)
    importlib.import_module("wbt_models.expa")
    importlib.import_module("wbt_models.expb")
    yield pkg
    for name in ("wbt_models.expb", "wbt_models.expa", "wbt_models.model", "wbt_models"):
        sys.modules.pop(name, None)


def _run(name, xs=(1.0, 2.0)):
    return ex.run_sweep(name, {"x": list(xs)}, client=False, progress=False)


def test_an_edited_model_recomputes_the_experiments_that_reach_it_and_no_other(cache, models_package):
    first_a, first_b = _run("test-cache-a"), _run("test-cache-b")
    assert first_a.table.y.tolist() == [1.0, 2.0] and first_a.computed == 2
    assert _run("test-cache-a").cache_hits == 2  # unchanged: read back

    (models_package / "model.py").write_text("SCALE = 2.0\n\n\ndef scaled(x):\n    return SCALE * x  # doubled\n")
    importlib.reload(sys.modules["wbt_models.model"])  # what a restart, or IPython's autoreload, does
    again_a, again_b = _run("test-cache-a"), _run("test-cache-b")
    assert again_a.table.y.tolist() == [2.0, 4.0] and again_a.computed == 2 and again_a.cache_hits == 0
    assert again_b.cache_hits == 2 and again_b.table.equals(first_b.table)


def test_an_edit_this_process_has_not_loaded_is_not_keyed_as_if_it_ran(cache, models_package):
    """Results are keyed by the code as loaded: an edit without a reload still runs the old code, so the old key
    (and its records) stay right for this process, and it says why the edit is not live."""
    assert _run("test-cache-a").table.y.tolist() == [1.0, 2.0]
    (models_package / "model.py").write_text("SCALE = 5.0\n\n\ndef scaled(x):\n    return SCALE * x  # not reloaded\n")
    with pytest.warns(WorkbenchWarning, match="changed after this process imported it"):
        run = _run("test-cache-a")
    assert run.cache_hits == 2 and run.table.y.tolist() == [1.0, 2.0]


def test_an_edit_before_the_first_sweep_is_not_keyed_as_the_edited_file(cache, models_package):
    """Imported, edited, then swept for the first time: the sweep runs the code as loaded, so its records must not be
    stored under the edited file's key (a fresh process, or this one after a reload, would read them back)."""
    edited = "SCALE = 5.0\n\n\ndef scaled(x):\n    return SCALE * x  # edited before any sweep\n"
    (models_package / "model.py").write_text(edited)
    with pytest.warns(WorkbenchWarning, match="changed after this process imported it"):
        old = _run("test-cache-a")
    assert old.table.y.tolist() == [1.0, 2.0] and old.computed == 2  # the code as loaded ran
    importlib.reload(sys.modules["wbt_models.model"])
    new = _run("test-cache-a")
    assert new.cache_hits == 0 and new.table.y.tolist() == [5.0, 10.0]
    assert _run("test-cache-a").cache_hits == 2  # the edited code's records are read back


_CELLS = """
from workbench.experiments import Param, experiment

SCALE = 1.0


def helper(x):
    return SCALE * x


@experiment("test-cache-cell", version="1", params=[Param("x", 1.0, "", low=0.0)])
def test_cache_cell(*, x, seed):
    return {"y": [helper(v) for v in (x,)][0]}
"""


def test_an_experiment_typed_in_a_notebook_follows_its_helpers_and_constants(cache):
    """An experiment registered in a notebook cell has no file: its key is its source and what its globals hold, so
    re-running the cell of a constant or of a helper it calls (even from inside a comprehension) recomputes it."""
    cell = {"__name__": "wbt_notebook"}  # a notebook's namespace: a module without a file (Jupyter's __main__)
    exec(compile(_CELLS, "<cell>", "exec"), cell)
    try:
        assert _run("test-cache-cell").table.y.tolist() == [1.0, 2.0]
        assert _run("test-cache-cell").cache_hits == 2
        cell["SCALE"] = 3.0  # the constant's cell re-run
        again = _run("test-cache-cell")
        assert again.cache_hits == 0 and again.table.y.tolist() == [3.0, 6.0]
        exec(compile("def helper(x):\n    return SCALE * x + 1\n", "<cell>", "exec"), cell)  # the helper's cell
        helped = _run("test-cache-cell")
        assert helped.cache_hits == 0 and helped.table.y.tolist() == [4.0, 7.0]
    finally:
        ex._space._REGISTRY.pop("test-cache-cell", None)


_CELL_KEY = (
    "import hashlib\n"
    "from workbench import _unfiled\n"
    "cell = {'__name__': 'wbt_notebook'}\n"
    'exec("from workbench.experiments import Param, experiment\\n'
    "@experiment('tmp-cell-a', params=[Param('x', 1.0, '', low=0.0)])\\n"
    "def a(*, x, seed):\\n    return {'y': x}\\n"
    'def f(x):\\n    return a.fn(x=x, seed=0)\\n", cell)\n'
    "h = hashlib.sha256()\n"
    "print(_unfiled.digest(cell['f'], h), h.hexdigest())\n"
)


def test_a_notebook_function_holding_an_experiment_has_one_key_in_every_process():
    """A cell's function that reads a registered experiment (a record holding a function) is keyed by what the
    record holds, not by a printout with addresses: two processes give it the same key, so a restarted kernel reads
    the first one's points back."""
    keys = [subprocess.run([sys.executable, "-c", _CELL_KEY], capture_output=True, text=True) for _ in range(2)]
    assert all(k.returncode == 0 for k in keys), keys[0].stderr
    assert keys[0].stdout == keys[1].stdout and "workbench.experiments._space" in keys[0].stdout


def test_a_shadowed_data_file_recomputes_the_experiments_that_read_it_and_no_other(
    cache, models_package, tmp_path, monkeypatch
):
    base, shadow = tmp_path / "base", tmp_path / "shadow"
    for d, value in ((base, "1.5"), (shadow, "4.0")):
        (d / "wbtest").mkdir(parents=True)
        (d / "wbtest" / "value.txt").write_text(value)
    monkeypatch.setenv("WORKBENCH_DATA", str(base))
    assert _run("test-cache-data").table.y.tolist() == [1.5, 3.0]
    _run("test-cache-b")
    record = next((cache / "experiments" / "test-cache-data").glob("*.rec")).read_bytes()
    assert b'"wbtest/value.txt"' in record  # the record names what it read

    monkeypatch.setenv("WORKBENCH_DATA", os.pathsep.join([str(shadow), str(base)]))
    shadowed = _run("test-cache-data")
    assert shadowed.table.y.tolist() == [4.0, 8.0] and shadowed.cache_hits == 0
    assert _run("test-cache-b").cache_hits == 2

    (shadow / "wbtest" / "value.txt").write_text("0.5")  # an edit in place, same search path
    assert _run("test-cache-data").table.y.tolist() == [0.5, 1.0]
    monkeypatch.setenv("WORKBENCH_DATA", str(base))  # the shadow removed: back to the base file
    assert _run("test-cache-data").table.y.tolist() == [1.5, 3.0]


def test_a_file_that_appears_on_the_search_path_recomputes_what_ran_without_it(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    with _deps.recording() as rec:
        assert data.find("wbtest/late.csv") is None
    deps = rec.deps()
    assert deps.data == {"wbtest/late.csv": "missing"} and data.stale(deps) == []
    (tmp_path / "wbtest").mkdir()
    (tmp_path / "wbtest" / "late.csv").write_text("a\n1\n")
    assert data.stale(deps) == ["data file wbtest/late.csv appeared"]


def test_remembered_loaders_replay_what_they_read_to_every_caller(tmp_path, monkeypatch):
    """A loader remembered in memory (:func:`workbench._deps.remember`) still counts as a read for a second caller,
    and a changed search path gets its own value."""
    calls = []

    @_deps.remember
    def value():
        calls.append(1)
        return data.require("wbtest/v.txt").read_text()

    for d, v in (("a", "1"), ("b", "2")):
        (tmp_path / d / "wbtest").mkdir(parents=True)
        (tmp_path / d / "wbtest" / "v.txt").write_text(v)
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "a"))
    with _deps.recording() as first:
        assert value() == "1"
    with _deps.recording() as second:
        assert value() == "1"
    assert len(calls) == 1 and first.deps() == second.deps() and "wbtest/v.txt" in second.deps().data
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "b"))
    assert value() == "2" and len(calls) == 2


def test_a_file_edited_in_place_is_read_again_by_remembered_loaders_and_their_callers(tmp_path, monkeypatch):
    """A notebook kernel keeps running while its user edits a table on the search path: the next call of a
    remembered loader reads the edit, and so does a remembered caller that got the old value from it."""
    calls = []

    @_deps.remember
    def value():
        calls.append("inner")
        return data.require("wbtest/v.txt").read_text()

    @_deps.remember
    def doubled():
        calls.append("outer")
        return 2 * int(value())

    (tmp_path / "wbtest").mkdir()
    table = tmp_path / "wbtest" / "v.txt"
    table.write_text("1")
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    assert value() == "1" and doubled() == 2 and doubled() == 2
    assert calls == ["inner", "outer"]
    table.write_text("21")
    assert doubled() == 42 and value() == "21"
    assert calls == ["inner", "outer", "outer", "inner"]
    with _deps.recording() as rec:
        assert doubled() == 42
    assert rec.deps().data["wbtest/v.txt"] == cache_module.path_digest(table)  # the edit is what is recorded


def test_shadowing_a_shipped_spec_table_changes_what_reads_it(tmp_path, monkeypatch):
    """The project's own tables (GPU and model specs, engine profiles, operator curves) are on the search path
    too: shadowing one is seen by the next lookup, and recorded."""
    from workbench.serving import specs

    table = (ROOT / "datasets" / "serving_specs" / "gpus.csv").read_text()
    before = specs.gpu("H100-SXM").hbm_gb
    shadow = tmp_path / "serving_specs" / "gpus.csv"
    shadow.parent.mkdir()
    shadow.write_text(table.replace("H100-SXM,hopper,989,1979,80,", "H100-SXM,hopper,989,1979,96,", 1))
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    with _deps.recording() as rec:
        assert specs.gpu("H100-SXM").hbm_gb == 96.0 != before
    assert "serving_specs/gpus.csv" in rec.deps().data


# ---------------------------------------------------------------------------------------------------------------------
# End to end, as a user does it: sweep and `workbench reproduce`, edit a model in the source tree, run both again
# with the same cache (each run a new process, like `make reproduce`).
# ---------------------------------------------------------------------------------------------------------------------


def _copy_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "workbench", tree / "workbench", ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "datasets").symlink_to(ROOT / "datasets")
    return tree


_SCRIPT = """
import json, sys
from workbench.experiments import run_sweep
from workbench.cli import main
out = {}
for name, grid in (("arrivals-queue-wait", {"utilization": [0.6, 0.8], "customers": 2000}),
                   ("ballsbins-max-load", {"flows": [4, 16], "samples": 200})):
    run = run_sweep(name, grid, client=False, progress=False)
    out[name] = {"hits": run.cache_hits, "computed": run.computed, "table": run.table.round(9).to_dict("list")}
out["exit"] = main(["reproduce", "--paper", "arrivals", "--quick", "--no-figures", "--serial", "--out", sys.argv[1]])
board = json.loads(open(sys.argv[1] + "/scoreboard.json").read())
out["kingman"] = [c["value"] for c in board if c["claim_id"] == "kingman-underpredicts"][0]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_editing_a_model_in_the_tree_changes_the_next_sweep_and_reproduce_with_the_same_cache(tmp_path):
    tree = _copy_tree(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tree), "WORKBENCH_CACHE": str(tmp_path / "cache")}
    shared = ROOT.parent / "shared" / "data"
    env["WORKBENCH_DATA"] = str(shared) if shared.is_dir() else ""

    def run() -> dict:
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT, str(tmp_path / "out")],
            env=env,
            cwd=tree,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = run()
    assert first["arrivals-queue-wait"]["computed"] == 2
    second = run()  # nothing changed: everything read back
    assert second["arrivals-queue-wait"]["hits"] == 2 and second["ballsbins-max-load"]["hits"] == 2
    assert second == {**first, **{k: {**first[k], "hits": v["hits"], "computed": 0} for k, v in second.items()
                                  if isinstance(v, dict)}}  # fmt: skip

    queues = tree / "workbench" / "arrivals" / "queues.py"
    text = queues.read_text()
    old = "    return rho / (1 - rho) * (ca2 + cs2) / 2 * mean_service_s\n"
    assert old in text
    queues.write_text(text.replace(old, "    return 2 * rho / (1 - rho) * (ca2 + cs2) / 2 * mean_service_s\n"))
    third = run()
    arr1, arr3 = first["arrivals-queue-wait"], third["arrivals-queue-wait"]
    assert arr3["computed"] == 2 and arr3["hits"] == 0
    assert [2 * v for v in arr1["table"]["kingman_mean_wait_s"]] == pytest.approx(arr3["table"]["kingman_mean_wait_s"])
    assert arr3["table"]["mean_wait_s"] == pytest.approx(arr1["table"]["mean_wait_s"])  # the simulation is unchanged
    assert third["ballsbins-max-load"]["hits"] == 2  # cannot reach the edit: its points stay
    assert third["kingman"] == pytest.approx(first["kingman"] / 2, rel=1e-6)  # the claim is simulated / Kingman's
    assert first["exit"] == 0 and third["exit"] == 1  # and its verdict moved: the scoreboard says so


def test_no_model_package_reads_a_data_file_when_imported():
    """A data file read at import is read once per process, before any recording, so a cached result could not
    record it: model packages read their tables on first use (:func:`workbench._deps.remember`). (Parameter spaces
    may list choices from a table at import: they describe what can be asked, not what a result is.)"""
    script = """
import importlib, pkgutil, workbench
from workbench.testing import data_reads
skip = ("workbench.experiments", "workbench.reproductions", "workbench.widgets", "workbench.cli",
        "workbench.workload_cli", "workbench.dashboards", "workbench.testing")
names = [m.name for m in pkgutil.walk_packages(workbench.__path__, "workbench.") if not m.name.startswith(skip)]
with data_reads() as reads:
    for name in names:
        importlib.import_module(name)
print(sorted(str(p) for p in reads))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def _scale_csv_column(text: str, column: int, factor: float) -> str:
    lines = text.splitlines(keepends=True)
    out = [lines[0]]
    for line in lines[1:]:
        cells = line.rstrip("\r\n").split(",")
        cells[column] = f"{float(cells[column]) * factor:g}"
        out.append(",".join(cells) + line[len(line.rstrip("\r\n")) :])
    return "".join(out)


_SHADOWED = {
    "carbon-trace": (
        "carbon-scheduling",
        {"scheduler": "pcaps", "jobs": 10, "executors": 20, "region": "DE"},
        "carbon-dag/carbon-intensity/",
        lambda text: _scale_csv_column(text, 4, 0.25),
        "carbon_kg",
    ),
    "rlhf-instance": (
        "rlhf-fused-pipeline",
        {"instance": 0, "method": "greedy", "iterations": 300},
        "rlhfuse-schedules/instances.csv",
        lambda text: _scale_csv_column(text, 5, 2.0),
        None,
    ),
}


@pytest.mark.parametrize("case", sorted(_SHADOWED))
def test_shadowing_a_real_data_file_recomputes_the_points_that_read_it(case, cache, tmp_path, monkeypatch):
    """The issue's own cases: a carbon trace and an RLHF instance shadowed through ``$WORKBENCH_DATA``."""
    name, point, prefix, transform, column = _SHADOWED[case]
    if data.find(prefix.rstrip("/")) is None:
        pytest.skip(f"real data not on the search path: {prefix}")
    first = ex.run_sweep(name, point, client=False, progress=False)
    assert first.ok, first.failures
    (record,) = (cache / "experiments" / name).glob("*.rec")
    read = json.loads(record.read_bytes().split(b"\n")[1])["deps"]["data"]
    files = [k for k in read if k.startswith(prefix) and read[k] != "missing"]
    assert files, f"{name} recorded no read under {prefix}: {sorted(read)}"
    shadow = tmp_path / "shadow"
    for rel in files:
        found = data.require(rel)
        for src in sorted(found.rglob("*.csv")) if found.is_dir() else [found]:
            target = shadow / rel / src.relative_to(found) if found.is_dir() else shadow / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(transform(src.read_text(encoding="utf-8")), encoding="utf-8")
    monkeypatch.setenv("WORKBENCH_DATA", str(shadow))
    again = ex.run_sweep(name, point, client=False, progress=False)
    assert again.ok and again.cache_hits == 0 and again.computed == first.computed
    numeric = [c for c in again.table.columns if c not in point and again.table[c].dtype.kind == "f"]
    changed = [c for c in numeric if not np.allclose(again.table[c], first.table[c])]
    assert changed and (column is None or column in changed), (case, numeric)


# -- compiled code ----------------------------------------------------------------------------------------------------

_KERNELS = {
    "__init__.py": "",
    "cost.py": "from workbench._jit import njit\n\nSCALE = 1.0\n\n\n@njit(cache=True)\ndef cost(x):\n    return SCALE * x\n",
    "loop.py": (
        "from workbench._jit import njit\n\nfrom .cost import cost\n\n\n"
        "@njit(cache=True)\ndef total(n):\n    s = 0.0\n    for i in range(n):\n        s += cost(i)\n    return s\n"
    ),
    "other.py": "from workbench._jit import njit\n\n\n@njit(cache=True)\ndef seven():\n    return 7.0\n",
}

_RUN_KERNELS = (
    "import json, wbt_kernels.loop as l, wbt_kernels.other as o; "
    "print(json.dumps([l.total(4), o.seven(), sum(l.total.stats.cache_hits.values()), "
    "sum(o.seven.stats.cache_hits.values())]))"
)


def test_an_edited_callee_recompiles_the_compiled_functions_that_call_it_and_no_other(tmp_path):
    """Numba's own cache checks only the file that defines a function: ``total`` calls ``cost`` of another file, and
    with numba's locator an edit of ``cost.py`` leaves ``total`` serving the old machine code (6.0 here after the
    scale went to 2.0). The workbench's ``njit`` keys the index by the module's code fingerprint too."""
    pkg = tmp_path / "pkg" / "wbt_kernels"
    pkg.mkdir(parents=True)
    for name, text in _KERNELS.items():
        (pkg / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "pkg"), "WORKBENCH_CACHE": str(tmp_path / "cache")}
    env.pop("NUMBA_CACHE_DIR", None)

    def run():
        out = subprocess.run([sys.executable, "-c", _RUN_KERNELS], env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    assert run() == [6.0, 7.0, 0, 0]  # compiled
    assert run() == [6.0, 7.0, 1, 1]  # both read from the cache
    (pkg / "cost.py").write_text(_KERNELS["cost.py"].replace("SCALE = 1.0", "SCALE = 2.0"))
    assert run() == [12.0, 7.0, 0, 1]  # the caller recompiled; the unrelated function still read from the cache


_BUSY = (
    "import json, sys, time\n"
    "from workbench._jit import njit\n\n\n"
    "@njit(cache=True)\n"
    "def busy(x):\n"
    "    s = 0.0\n"
    "    for i in range(x.size):\n"
    "        s += max(x[i], 0.5) * min(x[i], 2.0) + abs(x[i] - s) ** 0.5\n"
    "    return s\n\n\n"
    "if __name__ == '__main__':\n"
    "    import numpy as np\n"
    "    time.sleep(max(0.0, float(sys.argv[1]) - time.time()))\n"
    "    busy(np.ones(3))\n"
    "    print(json.dumps([sum(busy.stats.cache_misses.values()), sum(busy.stats.cache_hits.values())]))\n"
)


def test_processes_compiling_one_function_at_once_compile_it_once(tmp_path):
    """Three processes start the same compile at the same moment on an empty cache (test workers, Dask workers and
    notebook kernels do): one compiles, the others wait for it and load its code from the cache."""
    script = tmp_path / "busy.py"
    script.write_text(_BUSY)
    env = {**os.environ, "WORKBENCH_CACHE": str(tmp_path / "cache")}
    env.pop("NUMBA_CACHE_DIR", None)
    start = f"{time.time() + 4.0:.3f}"
    procs = [
        subprocess.Popen([sys.executable, str(script), start], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(3)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()[-2000:]
        results.append(json.loads(out))
    assert sorted(results) == [[0, 1], [0, 1], [1, 0]]


def test_every_compiled_function_of_the_package_takes_the_workbench_njit():
    """No module compiles with numba's ``njit``/``jit`` directly (its cache would not follow the code)."""
    offenders = []
    for path in sorted((ROOT / "workbench").rglob("*.py")):
        if path.name == "_jit.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "numba":
                offenders += [
                    f"{path.relative_to(ROOT)}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name in ("njit", "jit")
                ]
            elif (
                isinstance(node, ast.Attribute) and node.attr in ("njit", "jit") and ast.unparse(node.value) == "numba"
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: numba.{node.attr}")
    assert not offenders, offenders


# -- parsed data ------------------------------------------------------------------------------------------------------

_PARSER = (
    "import pandas as pd\n\nfrom workbench import cache\n\nSCALE = 1\n\n\n"
    "def load(path):\n    return cache.cached_frame(path, 1, lambda: pd.read_csv(path) * SCALE)\n"
)


def test_an_edited_parser_re_parses_without_a_version_bump(tmp_path):
    """A parsed file's entry (parquet or npz under ``$WORKBENCH_CACHE``) is keyed by its build function's code, not
    only by the hand-set parser version: editing the parser and running again never serves the old parse."""
    pkg = tmp_path / "pkg" / "wbt_parsers"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "parse.py").write_text(_PARSER)
    src = tmp_path / "t.csv"
    src.write_text("x\n1\n2\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "pkg"), "WORKBENCH_CACHE": str(tmp_path / "cache")}
    code = f"import wbt_parsers.parse as p; print(p.load({str(src)!r})['x'].tolist())"

    def run():
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    assert run() == "[1, 2]"
    entries = sorted((tmp_path / "cache").rglob("t.csv-*.parquet"))
    assert len(entries) == 1
    (pkg / "parse.py").write_text(_PARSER.replace("SCALE = 1", "SCALE = 10"))
    assert run() == "[10, 20]"
    assert len(sorted((tmp_path / "cache").rglob("t.csv-*.parquet"))) == 2


def _fresh_closure(name: str) -> dict:
    """:func:`workbench._deps.module_closure` as a fresh process computes it: nothing remembered in memory, only what
    the cache directory holds."""
    _deps._closures.clear()
    _deps._module_imports.clear()
    return _deps.module_closure(name)


def test_an_import_added_to_a_model_joins_the_closure_though_its_import_list_was_stored(cache, models_package):
    """A module's import list is parsed once and stored by the digest of its source, for every later process: an
    edit that adds an import is a new source, so the new module is in the closure (and in the fingerprint)."""
    assert "wbt_models.helper" not in _fresh_closure("wbt_models.expa")
    assert list((cache / "code-imports").rglob("*")), "no import list was stored"
    before = _deps.code_fingerprint("wbt_models.expa")
    (models_package / "helper.py").write_text("K = 1\n")
    (models_package / "model.py").write_text(
        "from . import helper\n\nSCALE = 1.0\n\n\ndef scaled(x):\n    return helper.K * SCALE * x\n"
    )
    importlib.invalidate_caches()
    importlib.reload(sys.modules["wbt_models.model"])  # what a restart, or IPython's autoreload, does
    assert "wbt_models.helper" in _fresh_closure("wbt_models.expa")
    assert _deps.code_fingerprint("wbt_models.expa") != before


def test_a_damaged_stored_import_list_is_parsed_again(cache, models_package):
    """A stored import list that is not the one its name promises (truncated, or another file's) is ignored."""
    good = _fresh_closure("wbt_models.expa")
    for stored in (cache / "code-imports").rglob("*"):
        if stored.is_file():
            stored.write_text(stored.read_text().split("\n")[0] + "\n", encoding="utf-8")  # its first line only
    assert _fresh_closure("wbt_models.expa") == good
    for stored in (cache / "code-imports").rglob("*"):
        if stored.is_file():
            stored.write_text("not a key\nworkbench\n", encoding="utf-8")
    assert _fresh_closure("wbt_models.expa") == good
