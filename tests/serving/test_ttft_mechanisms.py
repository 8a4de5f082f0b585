"""What a current vLLM adds to time to first token beyond the prefill: its default policy (chunked prefill under V1's
token budget), scheduling one step ahead (a request arriving mid-step joins the step after next) and the API server's
latency; and the era names of the vLLM engine profiles."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench.serving.engine import Scheduler, simulate_replica
from workbench.serving.engines import ALIASES, engine
from workbench.serving.roofline import Deployment


def test_vllm_profiles_by_era_name_and_their_default_policies():
    assert engine("vllm-v1") is engine("vllm")
    assert set(ALIASES) == {"vllm-v1"}
    h100 = Deployment("Llama-3.1-8B", "H100-SXM", engine="vllm-v1").scheduler
    assert (h100.kind, h100.max_num_batched_tokens, h100.max_num_seqs) == ("sarathi", 8192, 1024)
    for small in ("A100-80GB", "L40S"):  # an A100 (by name) and a GPU under 70 GiB keep V1's smaller defaults
        s = Deployment("Llama-3.1-8B", small).scheduler
        assert (s.kind, s.max_num_batched_tokens, s.max_num_seqs) == ("sarathi", 2048, 256)
    assert Deployment("Llama-3.1-8B", "H100-SXM", engine="vllm-2023").scheduler is None  # Scheduler(), vLLM 0.x's
    with pytest.raises(ValueError, match="aliases"):
        engine("vllm-v2")


def _busy_then_arrival(dep):
    """One long decode running; a second request arrives in the middle of a decode step."""
    step = dep.iteration_s(0, 0, 1, 110)
    arr = [0.0, dep.iteration_s(100, 100 * 101 / 2, 0, 0, 1) + 5.5 * step]
    return simulate_replica(arr, [100, 100], [400, 20], dep, Scheduler("orca")), arr


def test_a_run_uses_the_engine_profiles_policy_and_the_api_server_delays_first_and_last_tokens():
    dep = Deployment("Llama-3.1-8B", "H100-SXM")
    rng = np.random.default_rng(3)
    arr, inp, out = np.sort(rng.uniform(0, 5, 40)), rng.integers(50, 3000, 40), rng.integers(2, 200, 40)
    a = simulate_replica(arr, inp, out, dep)
    b = simulate_replica(arr, inp, out, dep, dep.scheduler)
    np.testing.assert_array_equal(a.first_token_s, b.first_token_s)
    offline = simulate_replica(arr, inp, out, dataclasses.replace(dep, frontend_s=0.0))
    assert dep.frontend_s == pytest.approx(0.010)
    np.testing.assert_allclose(a.first_token_s - offline.first_token_s, 0.010, rtol=1e-9)
    np.testing.assert_allclose(a.finish_s - offline.finish_s, 0.010, rtol=1e-9)  # the same time between tokens


def test_scheduling_one_step_ahead_admits_a_mid_step_arrival_one_step_later():
    # vLLM V1's profile (async scheduling) and the same engine scheduling synchronously, both without host work so
    # their iterations cost the same
    free = dataclasses.replace(engine("vllm"), iteration_s=0.0, per_seq_s=0.0, tp_iteration_s=0.0)
    assert free.overlap_cpu
    ahead = Deployment("Llama-3.1-8B", "H100-SXM", frontend_s=0.0, engine=free)
    sync = Deployment("Llama-3.1-8B", "H100-SXM", frontend_s=0.0, engine=dataclasses.replace(free, overlap_cpu=False))
    r_ahead, arr = _busy_then_arrival(ahead)
    r_sync, _ = _busy_then_arrival(sync)
    assert ahead.iteration_s(0, 0, 1, 110) == pytest.approx(sync.iteration_s(0, 0, 1, 110), rel=1e-12)
    step = ahead.iteration_s(0, 0, 1, 110)
    assert r_sync.admit_s[1] - arr[1] == pytest.approx(0.5 * step, rel=0.05)  # the rest of the step it arrived in
    assert r_ahead.admit_s[1] - r_sync.admit_s[1] == pytest.approx(step, rel=0.05)  # ... plus one step
    # an idle engine schedules at once, ahead or not
    alone = simulate_replica([0.25], [100], [5], ahead, Scheduler("orca"))
    assert alone.admit_s[0] == 0.25
