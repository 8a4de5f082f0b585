"""The linear server is a cost model of the one engine: any object with the protocol's members serves the same
(a delegate of a ServerConfig's cost table gives the same per-request times, busy time and early stop, on hand-made
edge cases and on composed ServeGen spans); the reservation policy also runs on a Deployment."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench._rng import spawn
from workbench.serving import Deployment, Scheduler, ServerConfig, serve, server_for, simulate_replica

ONLY_BASE = dict(prefill_token_s=0.0, decode_seq_s=0.0, kv_token_s=0.0)


class Delegate:
    """A ServerConfig's cost behind the cost-model protocol, without being a ServerConfig (any object with the
    protocol's members serves)."""

    def __init__(self, cfg: ServerConfig) -> None:
        self.cfg = cfg
        self.gpus, self.kv_capacity_tokens = cfg.gpus, cfg.kv_capacity_tokens
        self.scheduler = cfg.scheduler

    def cost_table(self, max_tokens=16384, max_seqs=256):
        return self.cfg.cost_table(max_tokens, max_seqs)


def assert_same(a, b) -> None:
    for field in ("admit_s", "first_token_s", "finish_s"):
        x, y = getattr(a, field), getattr(b, field)
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=0, equal_nan=True, err_msg=field)
    assert (a.rejected == b.rejected).all()
    assert (a.prefill_tokens == b.prefill_tokens).all() and not a.preemptions.any() and not b.preemptions.any()
    assert a.busy_s == pytest.approx(b.busy_s, rel=1e-9, abs=0)
    assert (a.stopped, a.violations) == (b.stopped, b.violations)


def both(arr, inp, out, cfg, **kw):
    direct = simulate_replica(arr, inp, out, cfg, **kw)
    delegate = simulate_replica(arr, inp, out, Delegate(cfg), **kw)
    assert_same(direct, delegate)
    return direct


def test_the_linear_server_names_its_reservation_and_its_table_is_the_formula():
    cfg = ServerConfig(max_batch=8, max_prefill_tokens=512, kv_token_s=1e-6)
    assert cfg.scheduler == Scheduler("reserve", max_num_seqs=8, max_num_batched_tokens=512)
    tab = cfg.cost_table()
    assert tab.iteration_s(1000, 1000 * 1001 / 2, 10, 20_000, 11) == pytest.approx(cfg.iteration_s(1000, 10, 20_000))
    a, s, lim = tab.decode_line(10, 20_000)
    assert (a, s, lim) == pytest.approx((cfg.base_s + 10 * cfg.decode_seq_s, 1e-6, np.inf))


def test_edge_cases_rejections_batch_prefill_budget_and_one_token_outputs():
    # rejections: a context over the budget, one of them behind a head that has to wait (rejected when it is the head)
    cfg = ServerConfig(base_s=0.01, kv_budget_tokens=200, max_batch=4, **ONLY_BASE)
    r = both([0.0, 0.0, 0.0, 0.005, 1.0], [150, 100, 300, 20, 10], [10, 10, 1, 5, 0], cfg)
    assert r.rejected.tolist() == [False, False, True, False, False]
    assert r.admit_s[1] == r.finish_s[0] and r.admit_s[3] == r.admit_s[1]  # reserved 160 + 110 > 200: it waits
    # max_batch: one at a time
    one = ServerConfig(base_s=0.01, max_batch=1, **ONLY_BASE)
    r = both(np.zeros(5), np.full(5, 10), np.full(5, 3), one)
    np.testing.assert_allclose(np.diff(r.finish_s), 0.03)
    # prefill budget: the first admitted always passes, the others wait for the next iteration
    pf = ServerConfig(base_s=0.01, prefill_token_s=1e-4, max_prefill_tokens=150, decode_seq_s=1e-3, kv_token_s=1e-7)
    r = both(np.zeros(4), [500, 100, 100, 100], [4, 4, 4, 4], pf)
    assert len(set(r.first_token_s.tolist())) == 4  # one prompt per iteration
    # outputs of 0 or 1 token finish with their prefill
    r = both([0.0, 0.0, 0.2], [50, 60, 70], [0, 1, 2], ServerConfig())
    assert r.finish_s[0] == r.first_token_s[0] and r.finish_s[1] == r.first_token_s[1]


def test_edge_cases_early_stop_on_queueing_and_on_rejections():
    cfg = ServerConfig(base_s=0.01, kv_budget_tokens=500, max_batch=2, **ONLY_BASE)
    arr = np.repeat(np.arange(10) * 0.1, 3)
    inp = np.tile([100, 600, 100], 10)  # every second request is too big
    out = np.full(30, 20)
    for allowed in (0, 2, 5, 100):
        for limit in (0.05, 0.5, np.inf):
            r = both(arr, inp, out, cfg, ttft_limit_s=limit, max_violations=allowed)
            assert r.stopped == (allowed < 100)
    r = both(arr, inp, out, cfg)
    assert r.violations == 10 and r.rejected.sum() == 10


@pytest.mark.parametrize("seed", range(6))
def test_random_mixes_under_tight_limits(seed):
    rng = np.random.default_rng(seed)
    n = 400
    arr = np.sort(rng.exponential(30.0, n).cumsum() / 200)
    inp, out = rng.integers(1, 3000, n), rng.integers(0, 600, n)
    cfg = ServerConfig(
        kv_budget_tokens=int(rng.integers(2500, 20_000)),
        max_batch=int(rng.integers(1, 40)),
        max_prefill_tokens=int(rng.integers(200, 6000)),
        kv_token_s=float(rng.choice([0.0, 2e-8, 1e-6])),
    )
    both(arr, inp, out, cfg)
    both(arr, inp, out, cfg, ttft_limit_s=1.0, max_violations=int(rng.integers(0, 40)))


@pytest.fixture(scope="module")
def spans():
    from workbench.workloads import servegen as sg

    out = []
    for model, hour, span, rate in (("m-large", 14, 600.0, 6.0), ("deepseek-r1", 8, 600.0, 2.0)):
        try:
            pool = sg.load_pool(model).select(hour * 3600, span)
        except FileNotFoundError as err:  # the released ServeGen pools are not on the data search path
            pytest.skip(str(err))
        req = sg.compose(pool, start_s=hour * 3600, duration_s=span, mean_rate_rps=rate, seed=spawn(0, 2)[0])
        out.append((model, req))
    return out


def test_composed_servegen_spans_are_the_same_through_the_protocol(spans):
    for model, req in spans:
        cfg = server_for(model)
        arr, inp, out = (req[c].to_numpy() for c in ("arrival_s", "input_tokens", "output_tokens"))
        for scale in (1.0, 4.0, 16.0):
            both(arr / scale, inp, out, cfg)
            both(arr / scale, inp, out, cfg, ttft_limit_s=2.0, max_violations=len(req) // 100)
        # several replicas behind the balancer: serve's fast path against the general loop of the same cost model
        for balancer, kw in (("round_robin", {}), ("random", {"ttft_limit_s": 2.0, "max_violations": 30})):
            a = serve(req, cfg, n_replicas=3, balancer=balancer, seed=4, rate_scale=8.0, **kw)
            b = serve(req, Delegate(cfg), n_replicas=3, balancer=balancer, seed=4, rate_scale=8.0, **kw)
            pd.testing.assert_frame_equal(a.table, b.table, rtol=1e-9, atol=0)
            assert (a.gpus, a.stopped) == (b.gpus, b.stopped)
            assert a.busy_fraction == pytest.approx(b.busy_fraction, rel=1e-9, nan_ok=True)


def test_the_reservation_on_a_deployment_never_preempts_and_matches_a_hand_computation():
    d = Deployment("Llama-3.1-8B", "H100-SXM", max_kv_tokens=3500, frontend_s=0)  # offline: no API server
    reqs = pd.DataFrame({"arrival_s": [0.0, 0.0, 0.0], "input_tokens": [1000] * 3, "output_tokens": [500] * 3})
    paged = serve(reqs, d, Scheduler("orca"))
    res = serve(reqs, d, Scheduler("reserve"))
    assert paged.table["preemptions"].sum() > 0  # three prompts fit, their growth does not
    t = res.table
    assert t["preemptions"].sum() == 0 and not t["rejected"].any()
    # 1500 + 1500 reserved of 3500: the third waits until the first two finish (together), then runs alone
    assert t["queue_s"].iloc[0] == t["queue_s"].iloc[1] == 0 and t["queue_s"].iloc[2] == pytest.approx(
        t["e2e_s"].iloc[0]
    )
    cost = d.iteration_s
    ft = cost(2000, 2 * 1000 * 1001 / 2, 0, 0, 2)  # one prefill iteration of both prompts
    fin = ft + sum(cost(0, 0, 2, 2 * (1001 + k), 2) for k in range(499))  # 499 decode iterations, KV growing
    assert t["ttft_s"].iloc[0] == pytest.approx(ft, rel=1e-9) and t["e2e_s"].iloc[1] == pytest.approx(fin, rel=1e-9)
    ft3 = fin + cost(1000, 1000 * 1001 / 2, 0, 0, 1)
    fin3 = ft3 + sum(cost(0, 0, 1, 1001 + k, 1) for k in range(499))
    assert t["ttft_s"].iloc[2] == pytest.approx(ft3, rel=1e-9) and t["e2e_s"].iloc[2] == pytest.approx(fin3, rel=1e-9)
    # a context over the capacity is rejected (not its prompt over the batch budget: the first admitted passes)
    big = pd.DataFrame({"arrival_s": [0.0, 0.0], "input_tokens": [3400, 9000], "output_tokens": [200, 10]})
    r = serve(big, d, Scheduler("reserve", max_num_batched_tokens=2048)).table
    assert r["rejected"].tolist() == [True, True]
    ok = serve(big.iloc[[0]].assign(output_tokens=100), d, Scheduler("reserve", max_num_batched_tokens=2048)).table
    assert not ok["rejected"].any()


def test_other_policies_run_on_the_linear_cost():
    reqs = pd.DataFrame({"arrival_s": np.arange(50) * 0.05, "input_tokens": 800, "output_tokens": 100})
    cfg = ServerConfig(kv_budget_tokens=20_000)
    for kind in ("vllm", "sarathi", "orca"):
        r = serve(reqs, cfg, Scheduler(kind, max_num_batched_tokens=4096))
        assert np.isfinite(r.table["e2e_s"]).all() and r.gpus == 1
    lo = serve(reqs, cfg, n_replicas=2, balancer="least_outstanding")  # the general loop, replicas together
    assert lo.table["preemptions"].sum() == 0 and set(lo.table["replica"]) == {0, 1}
    with pytest.raises(ValueError, match="swap"):
        serve(reqs, cfg, Scheduler(preemption="swap"))
    same = serve(reqs, cfg, Scheduler("reserve", max_num_seqs=cfg.max_batch, preemption="swap"), balancer="random")
    pd.testing.assert_frame_equal(same.table, serve(reqs, cfg, balancer="random").table)  # nothing to swap


def test_the_reservation_is_a_choice_of_the_serving_hardware_experiment():
    from workbench.experiments import serving_hw

    point = dict(mean_rate_rps=2.0, duration_s=60.0, model="Llama-3.1-8B", gpu="H100-SXM", tp=1, pp=1, replicas=1)
    point |= dict(budget_tokens=8192, balancer="round_robin", engine="vllm", costs="curves", seed=0)
    point |= dict(source="m-large", workload="composed", overlap=False, disaggregated=False)
    r = serving_hw.serving_hardware.fn(
        scheduler="reserve", preemption="swap", **point
    )  # swap: no effect, no preemption
    assert r["preempted_fraction"] == 0 and r["rejected_fraction"] == 0 and r["ttft_p99_s"] > 0
