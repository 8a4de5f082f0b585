"""SLO checks, the capacity search (bracketing, bisection, seeds, replicas, either server) and the default server per
model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.serving import (
    SLO,
    Deployment,
    ScaleSearch,
    Scheduler,
    ServerConfig,
    ServeResult,
    capacity_search,
    max_rate_scale,
    meets_slo,
    serve,
    server_for,
)
from workbench.workloads import servegen as sg


def _poisson(n=3000, rate=1.0, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "arrival_s": np.cumsum(rng.exponential(1 / rate, n)),
            "input_tokens": rng.integers(100, 2000, n),
            "output_tokens": rng.integers(20, 400, n),
        }
    )
    return df


def test_meets_slo_quantile_semantics():
    m = pd.DataFrame(
        {"ttft_s": np.r_[np.full(99, 0.1), 5.0], "tbt_s": np.full(100, 0.02), "rejected": np.zeros(100, dtype=bool)}
    )
    r = ServeResult(m, gpus=1, busy_fraction=1.0)
    assert meets_slo(r, SLO(ttft_s=1.0, quantile=0.99))
    assert not meets_slo(r, SLO(ttft_s=1.0, quantile=0.995))
    assert not meets_slo(r, SLO(ttft_s=1.0, tbt_s=0.01))
    m.loc[0, "rejected"] = True  # a rejected request is infinitely late
    assert not meets_slo(r, SLO(ttft_s=1.0, quantile=0.99))
    m.loc[0, "rejected"] = False
    stopped = ServeResult(m, gpus=1, busy_fraction=1.0, stopped=True)  # an early-stopped run has lost the SLO
    assert not meets_slo(stopped, SLO(ttft_s=1.0, quantile=0.99))
    with pytest.raises(TypeError, match="ServeResult"):
        meets_slo(m, SLO())
    assert SLO(ttft_s=2, tbt_s=0.05).describe() == "p99 TTFT <= 2 s, p99 TBT <= 50 ms"
    with pytest.raises(ValueError, match="quantile"):
        SLO(quantile=1.0)


def test_capacity_is_the_boundary_of_the_slo():
    w = _poisson()
    cfg, slo = ServerConfig(), SLO(ttft_s=2.0)
    res = capacity_search(w, cfg, slo, rel_tol=0.02)
    base = len(w) / w["arrival_s"].iloc[-1]
    s = res.capacity_rps / base
    assert meets_slo(serve(w, cfg, rate_scale=s), slo)
    assert not meets_slo(serve(w, cfg, rate_scale=s * 1.05), slo)
    # the window the traffic spans sets the base rate, not the scale found
    longer = capacity_search(w, cfg, slo, rel_tol=0.02, duration_s=2 * w["arrival_s"].iloc[-1])
    assert longer.capacity_rps == pytest.approx(res.capacity_rps / 2)


def test_one_search_for_both_servers():
    """The hardware replica goes through the same search: its scale is the SLO's boundary too."""
    w = _poisson(400, rate=4.0)
    dep, slo = Deployment("Llama-3.1-8B", "H100-SXM"), SLO(ttft_s=0.5, tbt_s=0.05)
    search = ScaleSearch(factor=4.0, min_scale=2.0**-12, max_scale=2.0**12, rel_tol=0.05, max_evaluations=14)
    scale, n = max_rate_scale(w, dep, slo, scheduler=Scheduler("vllm"), search=search)
    assert scale > 0 and 2 <= n <= 14
    assert meets_slo(serve(w, dep, Scheduler("vllm"), rate_scale=scale), slo)
    assert not meets_slo(serve(w, dep, Scheduler("vllm"), rate_scale=scale * 1.05 * 1.05), slo)
    res = capacity_search(w, dep, slo, scheduler=Scheduler("vllm"), rel_tol=0.05)
    assert res.capacity_rps == pytest.approx(scale * len(w) / w["arrival_s"].iloc[-1], rel=0.1)
    with pytest.raises(ValueError, match="factor"):
        ScaleSearch(factor=1.0)


def test_capacity_grows_with_looser_slo_more_replicas_and_faster_server():
    w = [_poisson(seed=s) for s in range(2)]
    cfg = ServerConfig()
    strict = capacity_search(w, cfg, SLO(ttft_s=0.5))
    loose = capacity_search(w, cfg, SLO(ttft_s=5.0))
    assert strict.capacity_rps < loose.capacity_rps and strict.per_seed_rps.size == 2
    assert strict.capacity_rps == pytest.approx(strict.per_seed_rps.mean())
    two = capacity_search(w, cfg, SLO(ttft_s=2.0), n_replicas=2)
    one = capacity_search(w, cfg, SLO(ttft_s=2.0))
    assert two.capacity_rps == pytest.approx(2 * one.capacity_rps, rel=0.25)
    fast = capacity_search(w, ServerConfig(prefill_token_s=6e-5, decode_seq_s=1.2e-4), SLO(ttft_s=2.0))
    assert fast.capacity_rps > one.capacity_rps


def test_burstier_arrivals_lower_capacity():
    rng = np.random.default_rng(3)
    n = 4000
    base = _poisson(n)
    from workbench import arrivals

    bursty = base.copy()
    bursty["arrival_s"] = arrivals.arrival_times(arrivals.Gamma.from_cv(1.0, 4.0), n, seed=rng)
    assert capacity_search(bursty).capacity_rps < 0.8 * capacity_search(base).capacity_rps


def test_capacity_bad_input():
    with pytest.raises(ValueError, match="workloads"):
        capacity_search([])
    with pytest.raises(TypeError, match="slo"):
        capacity_search(_poisson(100), slo=2.0)
    with pytest.raises(ValueError, match="rel_tol"):
        capacity_search(_poisson(100), rel_tol=0)


def test_default_servers_and_the_released_pool():
    assert server_for("deepseek-r1").kv_budget_tokens > server_for("m-large").kv_budget_tokens
    pool = sg.load_pool("m-small")
    assert pool.n_clients == 43


def test_infeasible_slo_gives_zero_capacity_quickly():
    w = _poisson(500)
    w["input_tokens"] = 30_000  # prefill alone takes 3.6 s > 2 s
    res = capacity_search(w, ServerConfig(), SLO(ttft_s=2.0))
    assert res.capacity_rps == 0 and res.infeasible_workloads == 1 and res.evaluations == 0
    bursts = _poisson(1000)
    bursts["arrival_s"] = np.repeat(np.arange(10) * 100.0, 100)  # 100 simultaneous requests every 100 s
    res = capacity_search(bursts, ServerConfig(max_prefill_tokens=4096), SLO(ttft_s=1.0))
    assert res.capacity_rps == 0 and res.infeasible_workloads == 1 and res.evaluations <= 12
