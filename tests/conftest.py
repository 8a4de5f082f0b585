"""Settings shared by every test module.

Hypothesis runs under one profile: no per-example deadline (the 2-core CI machine is shared, and a property test
checks correctness, not speed: speed targets live in ``benchmarks/``) and derandomized, so a CI failure reproduces
byte for byte on a developer's machine. Each test keeps its own ``max_examples`` budget in its ``@settings``.

The GPU and model registries (:func:`workbench.serving.specs.register_gpu`, ``register_model``) are restored after
every test: a test or a docstring example that registers a GPU must not change what a later test in the same worker
sees (a panel's GPU menu listed a doctest's PCIe-less "my-gpu" and failed depending on test order).

Every docstring example of the package runs once per worker (:func:`docstring_examples`): ``test_docstrings.py``
asserts each module's examples print what they say, and the hostile-input suite (``hostile/test_contracts.py``)
perturbs the calls they make; the two used to run every example twice (~70 s of CPU on 2 cores). The root
``conftest.py`` schedules both files on one xdist worker.
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "workbench",
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("workbench")


@contextlib.contextmanager
def _registries_kept():
    from workbench.serving import specs

    gpus, models = dict(specs._GPUS), dict(specs._MODELS)
    try:
        yield
    finally:
        for table, saved in ((specs._GPUS, gpus), (specs._MODELS, models)):
            table.clear()
            table.update(saved)


@pytest.fixture(autouse=True)
def _spec_registries_restored():
    with _registries_kept():
        yield


@pytest.fixture(scope="session")
def docstring_examples() -> tuple[dict[str, tuple[int, str]], dict]:
    """Every docstring example of the package, run once per process, module by module in name order (each module's
    examples with the GPU and model registries as they were before it, as in a test of its own), with contract call
    recording on (:func:`workbench._contracts.harvesting`): ``({module: (failed examples, doctest's report of the
    failures)}, {contracted function: (args, kwargs)})``, the recorded calls being the first of each function."""
    import doctest
    import importlib
    import io
    import pkgutil

    import numpy as np

    import workbench
    from workbench import _contracts

    finder = doctest.DocTestFinder(exclude_empty=True)
    results: dict[str, tuple[int, str]] = {}
    names = sorted(i.name for i in pkgutil.walk_packages(workbench.__path__, "workbench."))
    with _contracts.harvesting() as calls:
        for name in names:
            module = importlib.import_module(name)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            report = io.StringIO()
            with _registries_kept():
                for test in finder.find(module, name, extraglobs={"np": np}):
                    if test.examples:
                        runner.run(test, out=report.write)
            results[name] = (runner.failures, report.getvalue())
    return results, dict(calls)
