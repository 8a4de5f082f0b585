"""Settings shared by every test module.

Hypothesis runs under one profile: no per-example deadline (the 2-core CI machine is shared, and a property test
checks correctness, not speed: speed targets live in ``benchmarks/``) and derandomized, so a CI failure reproduces
byte for byte on a developer's machine. Each test keeps its own ``max_examples`` budget in its ``@settings``.

The GPU and model registries (:func:`workbench.serving.specs.register_gpu`, ``register_model``) are restored after
every test: a test or a docstring example that registers a GPU must not change what a later test in the same worker
sees (a panel's GPU menu listed a doctest's PCIe-less "my-gpu" and failed depending on test order).
"""

from __future__ import annotations

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


@pytest.fixture(autouse=True)
def _spec_registries_restored():
    from workbench.serving import specs

    gpus, models = dict(specs._GPUS), dict(specs._MODELS)
    yield
    for table, saved in ((specs._GPUS, gpus), (specs._MODELS, models)):
        table.clear()
        table.update(saved)
