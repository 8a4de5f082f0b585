"""Capacity in GPUs, NanoFlow's bound and the validation table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.serving import SLO
from workbench.serving.gpus import capacity_gpus, optimal_throughput
from workbench.serving.roofline import Deployment
from workbench.serving.validation import published, validation_table


def test_headline_bound_and_classification():
    d = Deployment("Llama-2-70B", "A100-80GB", tp=8)
    r = optimal_throughput(d, 1024, 512)
    assert r["headline_tokens_per_s"] == pytest.approx(312e12 / (2 * 69e9))
    assert r["bound"] == "compute" and r["optimal_tokens_per_s"] <= r["headline_tokens_per_s"] * 1.001
    assert r["sequential_tokens_per_s"] < r["optimal_tokens_per_s"]
    small = optimal_throughput(d, 1024, 512, batch=4)  # a tiny batch reads the weights for few tokens
    assert small["bound"] == "memory"


def test_capacity_in_gpus_grows_with_load_and_tighter_slo():
    rng = np.random.default_rng(0)
    n = 1500
    req = pd.DataFrame(
        {
            "arrival_s": np.sort(rng.uniform(0, 60, n)),
            "input_tokens": rng.integers(100, 2000, n),
            "output_tokens": rng.integers(20, 300, n),
        }
    )
    base = capacity_gpus(req, "Llama-3.1-8B", "H100-SXM", tps=(1, 2))
    t = base.table
    assert list(t["tp"]) == [1, 2] and t["fits"].all() and base.feasible
    assert base.gpus == t["gpus"].min() and base.tp == int(t.loc[t["gpus"].idxmin(), "tp"])
    assert base.server.tp == base.tp and base.evaluations == t["evaluations"].sum() > 0
    assert base.replica_rps == pytest.approx(base.rate_scale * base.rate_rps)
    heavy = req.assign(arrival_s=req["arrival_s"] / 4)
    more = capacity_gpus(heavy, "Llama-3.1-8B", "H100-SXM", tps=(1,))
    assert more.gpus > t.loc[t["tp"] == 1, "gpus"].iloc[0]
    assert more.table.loc[0, "replica_rps"] == pytest.approx(t.loc[0, "replica_rps"], rel=0.35)
    no_fit = capacity_gpus(req, "Llama-3.1-70B", "H100-SXM", tps=(1,), slo=SLO(ttft_s=2.0))
    assert not no_fit.table["fits"].any() and not no_fit.feasible and np.isnan(no_fit.gpus) and no_fit.server is None
    window = capacity_gpus(req, "Llama-3.1-8B", "H100-SXM", tps=(1,), duration_s=120.0)  # half the rate
    assert window.table.loc[0, "replica_rps"] == pytest.approx(t.loc[0, "replica_rps"] * req["arrival_s"].max() / 120.0)


def test_capacity_in_gpus_of_the_abstract_server_is_the_req_per_s_search_times_its_gpus():
    """The linear-cost server is a cost model like any other: one candidate of its ``gpus`` per replica, sized by the
    same search as ``capacity_search`` (a factor-4 bracket here, so the scales agree to the bisection's tolerance)."""
    from workbench.serving import ServerConfig, capacity_search

    rng = np.random.default_rng(1)
    n = 2000
    req = pd.DataFrame(
        {
            "arrival_s": np.sort(rng.uniform(0, 100, n)),
            "input_tokens": rng.integers(100, 2000, n),
            "output_tokens": rng.integers(20, 300, n),
        }
    )
    cfg = ServerConfig(gpus=2)
    plan = capacity_gpus(req, cfg, slo=SLO(ttft_s=2.0))
    assert plan.feasible and plan.server is cfg and plan.tp is None and plan.gpus == 2 * plan.replicas
    rps = capacity_search(req, cfg, SLO(ttft_s=2.0), duration_s=plan.rate_rps and n / plan.rate_rps).capacity_rps
    assert plan.replica_rps == pytest.approx(rps, rel=0.1)
    assert plan.replicas >= np.ceil(plan.rate_rps / plan.replica_rps) - 1
    with pytest.raises(ValueError, match="gpu goes with a model"):
        capacity_gpus(req, cfg, "H100-SXM")


def test_validation_points_have_sources_and_errors():
    pub = published()
    assert pub["source"].str.contains("https://").all()
    # at least four points from the serving papers themselves (Sarathi-Serve's artifact, NanoFlow), not engine docs
    assert pub["engine"].isin(["sarathi-serve", "nanoflow", "vllm"]).sum() >= 4
    t = validation_table()
    assert np.allclose(t["error"], t["model_estimate"] / t["published"] - 1)
    assert (t["error"].abs() < 4).all()  # order-of-magnitude agreement; the notebook reports each error


def test_a_trace_window_no_longer_than_the_ttft_target_is_refused_by_the_experiments_parameters():
    """A random point inside serving-replica-gpus' ranges (window_s=0.735 s, ttft_slo_s=8.2 s) was refused by the
    capacity search as 'give a longer workload or duration_s' after loading the trace: the window was what cut it."""
    from workbench import experiments as ex

    exp = ex.get("serving-replica-gpus")
    with pytest.raises(ValueError, match=r"window_s=0.5 s is no longer than ttft_slo_s=2 s.*raise window_s or lower"):
        exp.fn(**{**exp.defaults(), "window_s": 0.5}, seed=0)
    with pytest.raises(ValueError, match=r"duration_s=1 s is no longer than ttft_slo_s=2 s.*raise duration_s or lower"):
        exp.fn(**{**exp.defaults(), "window_s": 0.0, "duration_s": 1.0}, seed=0)
