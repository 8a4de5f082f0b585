"""Latency vs utilization and the placement model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench import placement as P


def test_poisson_latency_matches_mm1():
    # Gamma with CV 1 is Poisson; exponential service: M/M/1 sojourn time s / (1 - rho)
    df = P.latency_vs_utilization([0.3, 0.6, 0.8], cv=1.0, service_s=1.0, n=400_000, seed=0)
    np.testing.assert_allclose(df.mean_latency_s, 1.0 / (1.0 - df.utilization), rtol=0.05)
    # and the M/M/1 sojourn p99 is -ln(0.01) s / (1 - rho)
    np.testing.assert_allclose(df.tail_latency_s, np.log(100) / (1.0 - df.utilization), rtol=0.08)


def test_bursty_sources_queue_more_and_knee_moves_left():
    u = np.round(np.arange(0.05, 0.951, 0.05), 2)
    poisson = P.latency_vs_utilization(u, cv=1.0, n=100_000, seed=1)
    bursty = P.latency_vs_utilization(u, cv=3.0, n=100_000, seed=1)
    assert (bursty.mean_latency_s.to_numpy()[4:] > poisson.mean_latency_s.to_numpy()[4:]).all()
    assert P.knee_utilization(u, bursty.mean_latency_s) <= P.knee_utilization(u, poisson.mean_latency_s)


def test_latency_rejects_unstable_utilization():
    with pytest.raises(ValueError, match="utilization"):
        P.latency_vs_utilization([0.5, 1.0])
    with pytest.raises(ValueError, match="utilization"):
        P.latency_vs_utilization([0.0, 0.5])


def test_knee_of_a_hockey_stick():
    u = np.linspace(0, 1, 11)
    y = np.where(u <= 0.7, 1.0, 1.0 + 10 * (u - 0.7))
    assert P.knee_utilization(u, y) == pytest.approx(0.7)
    with pytest.raises(ValueError, match="rise"):
        P.knee_utilization(u, np.ones(11))


def test_cluster_scaling_and_heavy_tail():
    c = P.make_cluster(500, slots_per_rack=20, fill=0.5, mean_utilization=0.3, seed=0)
    assert c.tasks == 5000
    assert c.predicted_gbps.sum() / c.uplink_gbps.sum() == pytest.approx(0.3)
    assert c.intensive.mean() == pytest.approx(0.1, abs=0.01)
    top = np.sort(c.predicted_gbps)[::-1]
    assert top[: c.tasks // 20].sum() / top.sum() > 0.3  # top 5% of tasks carry > 30% of the bandwidth
    assert set(np.unique(c.uplink_gbps)) <= {100.0, 200.0, 400.0}


@pytest.mark.parametrize("policy", ["random", "aware"])
def test_placement_respects_slots_and_places_everything(policy):
    c = P.make_cluster(100, slots_per_rack=10, fill=0.95, seed=2)
    p = P.place(c, policy, seed=3)
    assert (p.rack >= 0).all() and p.rack.size == c.tasks
    assert np.bincount(p.rack, minlength=c.racks).max() <= c.slots_per_rack
    np.testing.assert_allclose(p.utilization, np.bincount(p.rack, weights=c.demand_gbps, minlength=100) / c.uplink_gbps)
    assert p.hot_tors == int((p.utilization > 0.75).sum())


def test_aware_beats_random_and_migration_helps():
    c = P.make_cluster(400, seed=4)
    rnd = P.place(c, "random", seed=5)
    aware_nomig = P.place(c, "aware", migrate=False, seed=5)
    aware = P.place(c, "aware", seed=5)
    assert rnd.hot_tors > aware_nomig.hot_tors >= aware.hot_tors
    assert aware.migrated > 0 and rnd.migrated == 0
    # with perfect predictions and no tail, aware placement leaves no hot ToR
    flat = P.make_cluster(200, demand_sigma=0.3, noise_sigma=0.0, seed=6)
    assert P.place(flat, "aware", seed=7).hot_tors == 0


def test_study_is_deterministic_and_tidy():
    a = P.placement_study(150, seeds=2, seed=9)
    b = P.placement_study(150, seeds=2, seed=9)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 4 and set(a.policy) == {"random", "aware"}
    assert ((a.intensive_on_hot >= 0) & (a.intensive_on_hot <= 1)).all()


def test_tor_latency_interpolates():
    curve = pd.DataFrame({"utilization": [0.1, 0.5, 0.9], "mean_latency_s": [1.0, 2.0, 10.0]})
    np.testing.assert_allclose(P.tor_latency([0.3, 0.7, 3.0], curve), [1.5, 6.0, 10.0])


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: P.make_cluster(1), ValueError, "racks"),
        (lambda: P.make_cluster(10, mean_utilization=1.0), ValueError, "mean_utilization"),
        (lambda: P.make_cluster(10, uplink_choices_gbps=[0.0, 100.0]), ValueError, "uplink_choices_gbps"),
        (lambda: P.make_cluster(10, uplink_weights=[1.0]), ValueError, "uplink_weights"),
        (lambda: P.place(P.make_cluster(10, seed=0), "greedy"), ValueError, "policy"),
        (lambda: P.place("cluster", "random"), TypeError, "cluster"),
        (lambda: P.place(P.make_cluster(10, seed=0), "aware", choices=0), ValueError, "choices"),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_panel_knee_is_the_claims_knee():
    """Notebook 06 printed 'knee at 85%' at its default CV 2 while the claim said 75% (both from one noisy simulated
    curve each); both now read the exact GI/M/1 curve."""
    from workbench.reproductions import run_claims
    from workbench.widgets.placement import panel_model

    view = panel_model(2.0, racks=50)
    (knee,) = [r for r in run_claims("hotspots", "quick") if r.claim.key.endswith("knee_near_75")]
    assert view.knee == pytest.approx(knee.measured.value)
    assert view.knee == pytest.approx(0.78)


def test_exact_latency_matches_simulation_and_knee_is_cv_invariant():
    u = np.array([0.3, 0.6, 0.8])
    sim = P.latency_vs_utilization(u, cv=2.0, n=400_000, seed=3)
    np.testing.assert_allclose(sim.mean_latency_s, P.exact_mean_latency(u, cv=2.0), rtol=0.1)
    knees = {cv: P.knee_utilization(P.KNEE_GRID, P.exact_mean_latency(P.KNEE_GRID, cv=cv)) for cv in (1, 2, 4)}
    assert set(knees.values()) == {0.78}
