"""Every ``Examples`` section in the package runs and prints what it says (doctest, module by module)."""

from __future__ import annotations

import pkgutil

import pytest

import workbench

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(workbench.__path__, prefix="workbench.")
    if not info.name.rsplit(".", 1)[-1].startswith("__")
)


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name, docstring_examples):
    """The module's examples, from the worker's one run of every example (``docstring_examples`` in conftest.py)."""
    failed, report = docstring_examples[0][name]
    assert failed == 0, f"{failed} doctest example(s) failed in {name}:\n{report}"
