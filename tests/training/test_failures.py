"""Failures: Llama 3 rates, closed-form ETTR vs Monte-Carlo within standard errors, Young/Daly, errors."""

import math

import pytest

from workbench.training.failures import (
    LOSS_PARTS,
    Recovery,
    ettr,
    gpu_hours_lost_per_day,
    job_rates_per_s,
    optimal_interval_s,
    planned_rate_per_s,
    simulate,
    young_daly_s,
)


def test_llama3_rates_reproduce_the_snapshot():
    rates = job_rates_per_s(16384)
    per_54_days = {k: v * 54 * 86400 for k, v in rates.items()}
    assert per_54_days["gpu"] == pytest.approx(268) and per_54_days["software"] == pytest.approx(63)
    assert sum(per_54_days.values()) == pytest.approx(419)
    assert sum(job_rates_per_s(32768).values()) == pytest.approx(2 * sum(rates.values()))


@pytest.mark.parametrize("mode", ["checkpoint", "live"])
@pytest.mark.parametrize("n_gpus", [4096, 100_000])
def test_closed_form_and_monte_carlo_agree_within_standard_errors(mode, n_gpus):
    lf = sum(job_rates_per_s(n_gpus).values())
    lp = planned_rate_per_s(n_gpus)
    rec = Recovery(mode=mode, interval_s=1200, checkpoint_s=45)
    exact = ettr(lf, rec, lp)
    mc = simulate(lf, rec, lp, replicas=400, seed=n_gpus)
    assert abs(mc["ettr"] - exact["ettr"]) < 4 * mc["ettr_se"]
    assert sum(exact[k] for k in ("ettr", *LOSS_PARTS)) == pytest.approx(1.0)
    for k in LOSS_PARTS:
        assert mc[k] == pytest.approx(exact[k], abs=0.01)


def test_live_migration_beats_checkpoint_restart_and_same_seed_same_bytes():
    lf = 1 / 3600
    assert ettr(lf, Recovery(mode="live"))["ettr"] > ettr(lf, Recovery())["ettr"]
    assert simulate(lf, Recovery(), replicas=10, seed=3) == simulate(lf, Recovery(), replicas=10, seed=3)


def test_young_daly_is_near_the_exact_optimum_when_checkpoints_are_cheap():
    rec = Recovery(checkpoint_s=30, detect_s=0, isolate_s=0, restart_s=0)
    mtbf = 8 * 3600
    assert optimal_interval_s(1 / mtbf, rec) == pytest.approx(young_daly_s(30, mtbf), rel=0.05)
    assert math.isclose(young_daly_s(30, mtbf), math.sqrt(2 * 30 * mtbf))


def test_gpu_hours_and_bad_input():
    t = gpu_hours_lost_per_day(16384, Recovery())
    assert list(t.category) == list(LOSS_PARTS) and (t.gpu_hours_per_day >= 0).all()
    with pytest.raises(ValueError, match=r"failure_rate_per_s must be >= 0, got -1\.0"):
        ettr(-1.0, Recovery())
    with pytest.raises(ValueError, match="mode must be one of 'checkpoint', 'live'"):
        Recovery(mode="hot")
    with pytest.raises(ValueError, match=r"rates_per_hour\['gpu'\] must satisfy 0 <= value"):
        job_rates_per_s(8, rates_per_hour={"gpu": -1e-6})
