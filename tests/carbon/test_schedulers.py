"""Scheduler rules against hand-computed cases: CAP k-search thresholds, PCAPS threshold, priorities."""

import math

import pytest
from scipy.special import lambertw

from workbench.carbon.schedulers import (
    SCHEDULERS,
    cap_allowed,
    cap_alpha,
    cap_thresholds,
    make_scheduler,
    pcaps_threshold,
)


def test_cap_alpha_solves_the_k_search_equation():
    # alpha = 1 / (1 + W((L/U - 1)/e)); L/U = 1/4: W(-0.75/e) = -0.41987 -> alpha = 1.7238
    a = cap_alpha(100.0, 400.0)
    w = lambertw(-0.75 / math.e).real
    assert w * math.exp(w) == pytest.approx(-0.75 / math.e, rel=1e-9)
    assert a == pytest.approx(1 / (1 + w), rel=1e-12)
    assert a == pytest.approx(1.7238, abs=1e-4)
    assert cap_alpha(200.0, 200.0) == pytest.approx(1.0)
    # a zero-carbon hour in the forecast window: alpha grows without bound as L falls to 0, and the thresholds
    # (U / alpha at most) fall to 0: CAP then allows only its B executors unless the hour itself is free of carbon
    assert cap_alpha(0.0, 400.0) == math.inf and cap_alpha(0.0, 0.0) == 1.0
    assert cap_alpha(1e-9, 400.0) > 1e5
    assert cap_thresholds(1e-9, 400.0, 3).max() < 0.01 and cap_thresholds(0.0, 400.0, 3).tolist() == [0.0] * 3
    assert cap_allowed(5.0, 0.0, 400.0, executors=13, minimum=10) == 10
    assert cap_allowed(0.0, 0.0, 400.0, executors=13, minimum=10) == 13
    assert cap_allowed(0.0, 0.0, 0.0, executors=13, minimum=10) == 13
    with pytest.raises(ValueError, match="low must satisfy 0 <= value"):
        cap_alpha(-1.0, 400.0)


def test_cap_thresholds_hand_case():
    # Phi_i = U [1 - (1 - 1/a)(1 + 1/(a k))^(i-1)], k = 3, a = 1.7238
    a = 1.723753
    want = [400 * (1 - (1 - 1 / a) * (1 + 1 / (3 * a)) ** (i - 1)) for i in (1, 2, 3)]
    assert cap_thresholds(100.0, 400.0, 3).tolist() == pytest.approx(want, rel=1e-4)
    assert want[0] == pytest.approx(400 / a, rel=1e-9)  # the first threshold is U / alpha
    assert cap_thresholds(100.0, 400.0, 0).size == 0


def test_cap_allowed_counts_thresholds_above_intensity():
    # thresholds 232.0, 199.5, 160.8: at c = 200 one is above -> B + 1
    assert cap_allowed(200.0, 100.0, 400.0, executors=13, minimum=10) == 11
    assert cap_allowed(150.0, 100.0, 400.0, executors=13, minimum=10) == 13
    assert cap_allowed(399.0, 100.0, 400.0, executors=13, minimum=10) == 10
    with pytest.raises(ValueError, match="minimum must be <= 13"):
        cap_allowed(1.0, 1.0, 2.0, executors=13, minimum=14)


def test_pcaps_threshold_hand_case():
    # gamma = 0.5, L = 100, U = 400, r = 0.5: c_g = 250; 250 + 150 (e^0.25 - 1)/(e^0.5 - 1) = 315.68
    assert pcaps_threshold(0.5, 0.5, 100.0, 400.0) == pytest.approx(315.68, abs=0.01)
    assert pcaps_threshold(1.0, 0.7, 100.0, 400.0) == pytest.approx(400.0)  # most important: U
    assert pcaps_threshold(0.2, 0.0, 100.0, 400.0) == pytest.approx(400.0)  # gamma 0: carbon-agnostic
    # gamma = 1, r = 0: the threshold is L
    assert pcaps_threshold(0.0, 1.0, 100.0, 400.0) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="gamma"):
        pcaps_threshold(0.5, 1.5, 100.0, 400.0)


def test_make_scheduler_names():
    for name in SCHEDULERS:
        assert make_scheduler(name).name in ("fifo", "fair", "cp", "cap", "pcaps")
    with pytest.raises(ValueError, match="scheduler must be one of"):
        make_scheduler("decima")
