"""The linear-cost server (a ServerConfig served by serve / simulate_replica): hand-computed cases, an independent iteration-by-iteration reference, the Lindley
recursion for a batch of one, KV-budget and batch limits, load balancers, metrics and bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from workbench import arrivals
from workbench.serving import ServerConfig, balance, latency_summary, serve, simulate_replica

ONLY_BASE = dict(prefill_token_s=0.0, decode_seq_s=0.0, kv_token_s=0.0)


def reference(arr, inp, out, cfg: ServerConfig):
    """Straightforward simulation: one loop turn per iteration, no jumps (independent of the event-jump code)."""
    n = len(arr)
    out = [max(int(o), 1) for o in out]
    first = [math.nan] * n
    finish = [math.nan] * n
    admit = [math.nan] * n
    running = {}  # request -> tokens produced
    t, q, kv = 0.0, 0, 0
    while q < n or running:
        if not running and q < n and arr[q] > t:
            t = arr[q]
        new, prefill = [], 0
        while q < n and arr[q] <= t:
            need = inp[q] + out[q]
            if need > cfg.kv_budget_tokens:
                q += 1
                continue
            if (
                len(running) + len(new) >= cfg.max_batch
                or kv + need > cfg.kv_budget_tokens
                or (new and prefill + inp[q] > cfg.max_prefill_tokens)
            ):
                break
            new.append(q)
            kv += need
            prefill += inp[q]
            admit[q] = t
            q += 1
        if not new and not running:
            continue
        resident = sum(inp[i] + running[i] for i in running)
        dt = cfg.base_s + cfg.prefill_token_s * prefill + cfg.decode_seq_s * len(running) + cfg.kv_token_s * resident
        t += dt
        for i in list(running):
            running[i] += 1
        for i in new:
            first[i] = t
            running[i] = 1
        for i in [i for i, k in running.items() if k >= out[i]]:
            finish[i] = t
            kv -= inp[i] + out[i]
            del running[i]
    return np.array(admit), np.array(first), np.array(finish)


def test_single_request_by_hand():
    cfg = ServerConfig(base_s=0.01, prefill_token_s=0.001, decode_seq_s=0.002, kv_token_s=0.0)
    r = simulate_replica([1.0], [100], [3], cfg)
    # prefill iteration: 0.01 + 0.1 = 0.11; then two decode iterations of 0.01 + 0.002 with one running request
    assert r.first_token_s[0] == pytest.approx(1.11)
    assert r.finish_s[0] == pytest.approx(1.11 + 2 * 0.012)


def test_two_requests_batch_together_by_hand():
    cfg = ServerConfig(base_s=0.01, **ONLY_BASE)
    r = simulate_replica([0.0, 0.0], [10, 10], [2, 4], cfg)
    assert r.first_token_s.tolist() == pytest.approx([0.01, 0.01])
    assert r.finish_s.tolist() == pytest.approx([0.02, 0.04])


def test_late_arrival_joins_at_the_next_iteration_boundary():
    cfg = ServerConfig(base_s=0.01, **ONLY_BASE)
    r = simulate_replica([0.0, 0.025], [10, 10], [10, 1], cfg)
    # request 0 iterates at 0.01, 0.02, 0.03, ...; request 1 arrives at 0.025, is admitted at 0.03
    assert r.admit_s[1] == pytest.approx(0.03)
    assert r.first_token_s[1] == pytest.approx(0.04)


@given(
    n=hs.integers(1, 40),
    seed=hs.integers(0, 10_000),
    max_batch=hs.integers(1, 8),
    budget=hs.integers(200, 3000),
    kv_token_s=hs.sampled_from([0.0, 1e-5]),
)
@settings(max_examples=300)
def test_event_jumps_match_iteration_by_iteration_reference(n, seed, max_batch, budget, kv_token_s):
    rng = np.random.default_rng(seed)
    arr = np.sort(rng.exponential(0.05, n).cumsum())
    inp = rng.integers(0, 400, n)
    out = rng.integers(1, 30, n)
    cfg = ServerConfig(
        base_s=0.01,
        prefill_token_s=1e-4,
        decode_seq_s=1e-3,
        kv_token_s=kv_token_s,
        kv_budget_tokens=budget,
        max_batch=max_batch,
        max_prefill_tokens=500,
    )
    got = simulate_replica(arr, inp, out, cfg)
    admit, first, finish = reference(arr.tolist(), inp.tolist(), out.tolist(), cfg)
    np.testing.assert_allclose(got.admit_s, admit, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got.first_token_s, first, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got.finish_s, finish, rtol=1e-9, atol=1e-9)
    assert got.rejected.tolist() == (inp + out > budget).tolist()


def test_batch_of_one_is_a_fifo_queue_lindley():
    rng = np.random.default_rng(1)
    n = 5000
    arr = np.cumsum(rng.exponential(1.0, n))
    out = rng.integers(1, 60, n)
    cfg = ServerConfig(base_s=0.01, max_batch=1, **ONLY_BASE)
    r = simulate_replica(arr, np.zeros(n, dtype=int), out, cfg)
    service = out * 0.01
    waits = arrivals.lindley_waits(np.diff(arr, prepend=0.0), service)
    np.testing.assert_allclose(r.admit_s - arr, waits, atol=1e-9)
    np.testing.assert_allclose(r.finish_s - arr, waits + service, atol=1e-9)


def test_kv_budget_limits_concurrency_and_rejects_oversized():
    cfg = ServerConfig(base_s=0.01, kv_budget_tokens=100, **ONLY_BASE)
    r = simulate_replica([0.0, 0.0, 0.0], [40, 40, 200], [10, 10, 1], cfg)
    # 50 + 50 fit together; the third can never fit and is rejected
    assert r.admit_s[:2].tolist() == [0.0, 0.0]
    assert r.rejected.tolist() == [False, False, True] and math.isnan(r.first_token_s[2])
    r = simulate_replica([0.0, 0.0], [60, 60], [10, 10], cfg)
    assert r.admit_s[1] == pytest.approx(r.finish_s[0])  # waits for the KV of the first


def test_more_load_more_latency_and_replicas_help():
    rng = np.random.default_rng(0)
    n = 4000
    reqs = pd.DataFrame(
        {
            "arrival_s": np.cumsum(rng.exponential(0.2, n)),
            "input_tokens": rng.integers(50, 1500, n),
            "output_tokens": rng.integers(10, 400, n),
        }
    )
    light = latency_summary(serve(reqs, ServerConfig(), rate_scale=1.0))
    heavy = latency_summary(serve(reqs, ServerConfig(), rate_scale=2.0))
    assert heavy["ttft_p99_s"] > light["ttft_p99_s"] and heavy["tbt_p50_s"] > light["tbt_p50_s"]
    two = latency_summary(serve(reqs, ServerConfig(), rate_scale=2.0, n_replicas=2))
    assert two["ttft_p99_s"] < heavy["ttft_p99_s"]
    run = serve(reqs, ServerConfig(), n_replicas=3, balancer="random", seed=1)
    m = run.table
    assert set(m["replica"]) == {0, 1, 2} and run.gpus == 3 and 0 < run.busy_fraction <= 1
    assert (m["preemptions"] == 0).all() and (m["prefill_tokens"] == m["input_tokens"]).all()
    assert (m["e2e_s"] >= m["ttft_s"]).all() and (m["ttft_s"] >= m["queue_s"]).all() and (m["queue_s"] >= 0).all()
    assert light["throughput_rps"] == pytest.approx(n / reqs["arrival_s"].max(), rel=0.05)


def test_early_stop_marks_the_result_only_when_the_slo_is_lost():
    reqs = pd.DataFrame(
        {"arrival_s": np.zeros(100), "input_tokens": np.full(100, 1000), "output_tokens": np.full(100, 100)}
    )
    cfg = ServerConfig(max_batch=4)
    stopped = serve(reqs, cfg, ttft_limit_s=0.5, max_violations=5)
    assert stopped.stopped
    # busy past its last completion: no busy fraction (it read above 1 before)
    assert np.isnan(stopped.busy_fraction)
    full = serve(reqs, cfg)
    assert not full.stopped and 0 < full.busy_fraction <= 1
    assert (full.table["queue_s"] > 0.5).sum() > 5


def test_balance_and_bad_input():
    assert balance(6, 3).tolist() == [0, 1, 2, 0, 1, 2]
    assert np.array_equal(balance(100, 4, "random", seed=3), balance(100, 4, "random", seed=3))
    with pytest.raises(ValueError, match="balancer"):
        balance(5, 2, "least_loaded")
    with pytest.raises(ValueError, match="n_replicas"):
        balance(5, 0)
    with pytest.raises(ValueError, match="n must be"):
        balance(-1, 2, "random")
    with pytest.raises(ValueError, match="base_s"):
        ServerConfig(base_s=0.0)
    with pytest.raises(ValueError, match="kv_budget_tokens"):
        ServerConfig(kv_budget_tokens=0)
    with pytest.raises(ValueError, match="non-decreasing"):
        simulate_replica([1.0, 0.0], [1, 1], [1, 1], ServerConfig())
    with pytest.raises(ValueError, match="input_tokens"):
        simulate_replica([0.0], [-1], [1], ServerConfig())
    with pytest.raises(ValueError, match="lacks column"):
        serve(pd.DataFrame({"arrival_s": [0.0]}), ServerConfig())
    one = pd.DataFrame({"arrival_s": [0.0], "input_tokens": [1], "output_tokens": [1]})
    with pytest.raises(ValueError, match="rate_scale"):
        serve(one, ServerConfig(), rate_scale=0)
    with pytest.raises(TypeError, match="scheduler must be a Scheduler"):
        serve(one, ServerConfig(), "reserve")
    with pytest.raises(ValueError, match="prefix sharing"):  # the reservation holds whole contexts: no sharing
        simulate_replica([0.0], [1], [1], ServerConfig(), hash_ids=[[1]])


def test_oversized_request_does_not_hold_up_the_queue():
    # found by the reference comparison: a request that can never fit must be rejected on arrival, and the one
    # behind it admitted at the next iteration boundary, not after the running request finishes
    cfg = ServerConfig(base_s=0.01, **ONLY_BASE, kv_budget_tokens=200, max_batch=2)
    r = simulate_replica([0.0, 0.02, 0.05], [76, 309, 12], [25, 25, 1], cfg)
    assert r.rejected.tolist() == [False, True, False]
    assert r.admit_s[2] == pytest.approx(0.05) and r.finish_s[2] < r.finish_s[0]


def test_steps_to_reach_is_the_fewest_iterations_that_last_the_gap():
    """The one ``steps_to_reach`` (compiled; the engine's loop calls it) against its
    definition, summed iteration by iteration: the smallest k >= 1 with k per + inc k (k - 1) / 2 >= gap."""
    from workbench.serving._common import steps_to_reach

    rng = np.random.default_rng(0)
    for per, inc, gap in zip(rng.uniform(1e-3, 0.1, 300), rng.choice([0.0, 1e-6, 1e-4], 300), rng.uniform(0, 5, 300)):
        k, total = 0, 0.0
        while k == 0 or total < gap * (1 - 1e-9):
            total += per + inc * k
            k += 1
        assert steps_to_reach(per, inc, gap) == k
