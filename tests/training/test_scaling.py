"""Plan grids and routing comparisons: every plan fits and fills the job; planned paths never lose to ECMP."""

import numpy as np
import pytest

from workbench import fabric as fb
from workbench.training import GPUS, MODELS, iteration_table
from workbench.training.scaling import plan_grid, routing_comparison, weak_scaling


def test_plan_grid_fits_and_fills_the_job():
    plans = plan_grid(MODELS["gpt-39b"], 256, GPUS["A100"], 512)
    assert plans and all(p.gpus == 256 and p.tp <= 8 for p in plans)
    assert iteration_table(MODELS["gpt-39b"], plans, GPUS["A100"]).fits.all()


def test_routing_comparison_planned_is_never_worse_than_ecmp():
    topo = fb.leaf_spine(16, 16, 16, host_gbps=400)
    plans = plan_grid(MODELS["gpt-18b"], 256, GPUS["H100"], 256, micro_batches=(1,), recompute=("selective",))
    t = routing_comparison(MODELS["gpt-18b"], plans, GPUS["H100"], topo, ("ecmp", "planned"), seeds=3)
    e = t[t.routing == "ecmp"]
    assert (e.gain >= -1e-12).all() and e.gain.max() > 0.05
    np.testing.assert_allclose(t[t.routing == "planned"].gain, 0.0)


def test_weak_scaling_rejects_counts_that_do_not_fill_leaves():
    with pytest.raises(ValueError, match="must be a multiple of hosts_per_leaf=32 and of tp\\*pp=64"):
        weak_scaling(MODELS["gpt3-175b"], GPUS["H100"], [48], 8, 8, 16)
