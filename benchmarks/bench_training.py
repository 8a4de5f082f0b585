"""Training-model speed (issue 12): one iteration breakdown of a 16,384-GPU plan on its fabric <= 50 ms (after the
fabric is built; each call draws a new ECMP hashing, so the fabric's per-byte time is recomputed, not cached);
10^3 plans on that fabric <= 5 s (cold cache); a month of Monte-Carlo failures for a 100k-GPU job x 1,000 replicas
<= 2 s."""

from __future__ import annotations

import itertools

from benchmarks import Benchmark, best_time
from workbench import fabric as fb
from workbench.training import GPUS, MODELS, Plan, iteration_table
from workbench.training import failures as tf
from workbench.training import iteration as ti

_TOPO = fb.leaf_spine(512, 32, 32, host_gbps=400)
_SEEDS = itertools.count(1000)


def _one_plan() -> float:
    plan = Plan(8, 16, 128, 2048, virtual_stages=4)
    return best_time(
        lambda: iteration_table(MODELS["llama3-405b"], [plan], GPUS["H100"], _TOPO, "ecmp", seed=next(_SEEDS)), repeat=5
    )


def _plans() -> list[Plan]:
    out = []
    for tp, pp in itertools.product((1, 2, 4, 8), (1, 2, 4, 8, 16, 32, 64)):
        dp = 16384 // (tp * pp)
        out += [Plan(tp, pp, dp, dp * k, recompute=rc) for k in range(1, 19) for rc in ("selective", "full")]
    return out[:1000]


def _many_plans() -> float:
    plans = _plans()

    def run():
        ti._cached.cache_clear()
        iteration_table(MODELS["gpt3-175b"], plans, GPUS["H100"], _TOPO, "ecmp", seed=7)

    return best_time(run, repeat=2)


def _month_mc() -> float:
    lf = sum(tf.job_rates_per_s(100_000).values())
    lp = tf.planned_rate_per_s(100_000)
    return best_time(lambda: tf.simulate(lf, tf.Recovery(), lp, replicas=1000, seed=0), repeat=3)


BENCHMARKS = [
    Benchmark("16,384-GPU iteration breakdown on a 512x32x32 leaf-spine (ECMP, new hashing)", 0.05, "s", _one_plan),
    Benchmark("1,000 plans of 16,384 GPUs on the fabric (cold cache)", 5.0, "s", _many_plans),
    Benchmark("month of failures, 100k GPUs x 1,000 replicas", 2.0, "s", _month_mc),
]
