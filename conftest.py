"""Test-session hooks shared by ``tests/`` and the nbval run over ``notebooks/``.

* **A cache of the session's own.** ``WORKBENCH_CACHE`` points at a fresh temporary directory for the whole session
  (shared by the xdist workers and the notebook kernels, which inherit the environment; removed at the end), so no
  test reads a developer's cached sweeps: a model change without a version bump cannot pass on stale results.
  Numba's compiled-code cache stays where it was (it is keyed by each source file and invalidated by an edit).
  ``WORKBENCH_TEST_CACHE=DIR`` keeps the session cache in ``DIR`` instead (a developer's fast re-runs).
* **Markers** (``pyproject.toml``): ``slow`` (more than a few seconds), ``browser`` (headless Chromium), ``data``
  (real data on the search path; added to every test marked with :func:`workbench.testing.requires_data`).
  ``make test-fast`` deselects slow and browser tests and the notebooks.
* **Files that share a run go to one worker.** Under ``--dist loadfile`` the files of :data:`SAME_WORKER` are one
  unit of work: ``tests/test_docstrings.py`` and ``tests/hostile/test_contracts.py`` both read the worker's one run
  of every docstring example (the ``docstring_examples`` fixture, ``tests/conftest.py``); on two workers it would run
  twice. That unit is the second worker's first (:data:`SECOND_UNIT`), so the two workers do not start by compiling
  the same engine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from workbench.testing import notebook_missing_data, notebook_needs_data

_OWNER = "WORKBENCH_TEST_SESSION_OWNER"


def pytest_configure(config):
    if os.environ.get(_OWNER):  # an xdist worker or a nested session: the controller already chose the cache
        return
    numba_dir = os.environ.get("NUMBA_CACHE_DIR")
    if not numba_dir:
        from workbench.data import cache_dir

        os.environ["NUMBA_CACHE_DIR"] = str(cache_dir() / "numba")
    keep = os.environ.get("WORKBENCH_TEST_CACHE")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        os.environ["WORKBENCH_CACHE"] = str(Path(keep).resolve())
    else:
        tmp = tempfile.mkdtemp(prefix="workbench-test-cache-")
        os.environ["WORKBENCH_CACHE"] = tmp
        config._workbench_tmp_cache = tmp
    os.environ[_OWNER] = str(os.getpid())


#: Test files scheduled as one unit under ``--dist loadfile`` (each maps to the unit's name).
SAME_WORKER = {
    "tests/test_docstrings.py": "docstring-examples",
    "tests/hostile/test_contracts.py": "docstring-examples",
}


#: The unit handed to the second worker first. xdist hands the largest units (by test count) out first, and both of
#: those call the serving engine within two seconds: on a fresh clone one worker then waited ~20 s for the other to
#: compile it (:func:`workbench._jit._compile_once`), one core idle. The docstring examples compile the packet, carbon
#: and other loops first (their modules sort before the serving ones) and reach the serving engine once it is cached.
SECOND_UNIT = "docstring-examples"


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, with the files of :data:`SAME_WORKER` as one unit; any other mode: xdist's own."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SAME_WORKER.get(scope, scope)

        def _assign_work_unit(self, node) -> None:
            started = sum(bool(units) for units in self.assigned_work.values())
            if started == 1 and not self.assigned_work[node] and SECOND_UNIT in self.workqueue:
                self.workqueue.move_to_end(SECOND_UNIT, last=False)  # the second worker's first unit
            super()._assign_work_unit(node)

    return Scheduling(config, log)


def pytest_unconfigure(config):
    tmp = getattr(config, "_workbench_tmp_cache", None)
    if tmp and os.environ.get(_OWNER) == str(os.getpid()):
        shutil.rmtree(tmp, ignore_errors=True)


def _missing_by_notebook(paths) -> dict[Path, list[str]]:
    out = {}
    for path in sorted(set(paths)):
        missing = notebook_missing_data(path)
        if missing:
            out[path] = missing
    return out


def pytest_collection_modifyitems(config, items):
    """Mark tests that need real data ``data``; execute, but do not compare, the cells of notebooks whose real data
    is absent (see :func:`workbench.testing.notebook_missing_data`): a crash still fails the run, differing numbers do
    not."""
    import pytest

    for item in items:
        if any("workbench_data" in m.kwargs for m in item.iter_markers(name="skipif")):
            item.add_marker(pytest.mark.data)
    cells = [item for item in items if type(item).__name__ == "IPyNbCell"]
    missing = _missing_by_notebook(Path(item.path) for item in cells)
    for item in cells:
        path = Path(item.path)
        if path in missing:
            if notebook_needs_data(path):  # no stand-in: it cannot run at all
                item.add_marker(pytest.mark.skip(reason=f"{path.name} needs data: {', '.join(missing[path])}"))
            else:
                item.options["check"] = False


def pytest_report_header(config):
    if not config.getoption("nbval", default=False) and not config.getoption("nbval_lax", default=False):
        return None
    notebooks = Path(config.rootpath, "notebooks").glob("*.ipynb")
    return [
        f"nbval: {path.name} runs without output comparison; real data absent: {', '.join(missing)}"
        for path, missing in _missing_by_notebook(notebooks).items()
    ]
