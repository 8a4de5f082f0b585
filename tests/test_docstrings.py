"""Every ``Examples`` section in the package runs and prints what it says (doctest, module by module)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import workbench

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(workbench.__path__, prefix="workbench.")
    if not info.name.rsplit(".", 1)[-1].startswith("__")
)


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(module, name, extraglobs={"np": np}) if t.examples]
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {name} (see captured output)"
