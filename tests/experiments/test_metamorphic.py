"""Properties a study must keep at any point of its declared ranges, not only at the papers' points: a harsher
setting never gives a better answer. Each runs the registered experiment as a panel or a sweep would."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.experiments import run_point


def _series(name, base, param, values, column):
    return np.array([run_point(name, {**base, param: v}, cache=False)[column].mean() for v in values])


def _never_falls(series, rel=1e-9):
    return bool((np.diff(series) >= -rel * np.abs(series[:-1])).all())


@pytest.mark.parametrize("routing", ["spray", "planned", "minimal"])
@pytest.mark.parametrize("collective", ["ring", "halving_doubling", "all_to_all"])
def test_a_collective_never_gets_faster_with_more_failed_uplinks(routing, collective):
    # ECMP is left out: its time is one hashing's draw, and the draw changes with the set of live uplinks
    times = _series(
        "collective-time-vs-size", {"sizes": 4, "routing": routing, "collective": collective}, "failed_uplinks",
        [0, 1, 3, 5, 7], "time_s",
    )  # fmt: skip
    assert _never_falls(times), times


@pytest.mark.parametrize(("slo", "values"), [("ttft_slo_s", [8.0, 2.0, 0.5, 0.2]), ("tbt_slo_s", [0.5, 0.1, 0.05])])
def test_a_stricter_slo_never_needs_fewer_gpus(slo, values):
    gpus = _series("serving-replica-gpus", {"duration_s": 60, "mean_rate_rps": 10}, slo, values, "gpus")
    assert _never_falls(gpus), gpus


@pytest.mark.parametrize("mechanism", ["vllm", "fastswitch"])
def test_more_kv_memory_never_preempts_more(mechanism):
    preempted = _series(
        "llm-preemption", {"n_conversations": 100, "mechanism": mechanism}, "kv_tokens",
        [262144, 65536, 16384, 8192], "preemptions_per_request",
    )  # fmt: skip
    assert _never_falls(preempted), preempted
