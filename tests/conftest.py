"""Settings shared by every test module.

Hypothesis runs under one profile: no per-example deadline (the 2-core CI machine is shared, and a property test
checks correctness, not speed: speed targets live in ``benchmarks/``) and derandomized, so a CI failure reproduces
byte for byte on a developer's machine. Each test keeps its own ``max_examples`` budget in its ``@settings``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "workbench",
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("workbench")
