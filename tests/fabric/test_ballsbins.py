"""Exact balls-into-bins against exact rational arithmetic, known values and Monte-Carlo."""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.fabric import (
    expected_effective_bandwidth,
    expected_max_load,
    max_load_cdf,
    max_load_pmf,
    simulate_max_load,
)


def exact_cdf(m: int, n: int, k: int) -> Fraction:
    """P(max <= k) by counting labeled placements with every bin <= k (integer DP over bins)."""

    @cache
    def ways(bins: int, balls: int) -> int:
        if bins == 0:
            return 1 if balls == 0 else 0
        return sum(math.comb(balls, j) * ways(bins - 1, balls - j) for j in range(min(k, balls) + 1))

    return Fraction(ways(n, m), n**m)


def exact_emax(m: int, n: int) -> Fraction:
    return sum((1 - exact_cdf(m, n, k) for k in range(m + 1)), Fraction(0))


@pytest.mark.parametrize("m, n, value", [(16, 16, 3.078), (8, 8, 2.597), (64, 16, 7.880)])
def test_paper_values(m, n, value):
    assert round(expected_max_load(m, n), 3) == value


@settings(max_examples=40)
@given(m=st.integers(0, 14), n=st.integers(1, 9))
def test_matches_exact_rationals(m, n):
    assert expected_max_load(m, n) == pytest.approx(float(exact_emax(m, n)), rel=1e-10, abs=1e-12)
    cdf = max_load_cdf(m, n)
    for k in range(cdf.size):
        assert cdf[k] == pytest.approx(float(exact_cdf(m, n, k)), abs=1e-12)


@settings(max_examples=30)
@given(m=st.integers(1, 1024), n=st.integers(1, 1024))
def test_cdf_is_a_distribution_and_mean_is_bounded(m, n):
    cdf = max_load_cdf(m, n)
    assert np.all(np.diff(cdf) >= 0) and cdf[-1] == 1.0 and cdf.min() >= 0
    pmf = max_load_pmf(m, n)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    e = expected_max_load(m, n)
    assert math.ceil(m / n) - 1e-9 <= e <= m + 1e-9
    assert e == pytest.approx(float(np.arange(pmf.size) @ pmf), rel=1e-9)


def test_monotone_in_balls_and_groups():
    vals = [expected_max_load(m, 16) for m in range(0, 80, 4)]
    assert np.all(np.diff(vals) > 0)
    assert expected_max_load(16, 16, groups=16) > expected_max_load(16, 16)
    assert expected_max_load(5, 1) == 5.0 and expected_max_load(0, 7) == 0.0


@pytest.mark.parametrize("m, n", [(16, 16), (64, 16), (100, 3), (7, 50)])
def test_monte_carlo_agrees(m, n):
    x = simulate_max_load(m, n, samples=40_000, seed=m * 100 + n)
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert abs(x.mean() - expected_max_load(m, n)) < 4 * max(se, 1e-3)


def test_groups_monte_carlo_agrees():
    x = simulate_max_load(16, 16, samples=20_000, seed=3, groups=16)
    assert abs(x.mean() - expected_max_load(16, 16, groups=16)) < 4 * x.std(ddof=1) / math.sqrt(x.size)


def test_a_million_paths_needs_memory_for_the_flows_only():
    """ballsbins-max-load at its declared 1e6 paths with 16 flows and 100,000 hashings asked bincount for 1e11 bins
    (745 GiB); with more bins than balls each hashing's flows are sorted instead (the same maxima from the same
    draws: the (7, 50) case above is unchanged), and it agrees with the exact value."""
    x = simulate_max_load(16, 10**6, samples=100_000, seed=1)
    assert abs(x.mean() - expected_max_load(16, 10**6)) < 4 * max(x.std(ddof=1) / math.sqrt(x.size), 1e-4)
    g = simulate_max_load(8, 64, samples=20_000, seed=2, groups=4)
    assert abs(g.mean() - expected_max_load(8, 64, groups=4)) < 4 * g.std(ddof=1) / math.sqrt(g.size)


def test_simulation_is_deterministic():
    assert np.array_equal(simulate_max_load(10, 4, 100, seed=5), simulate_max_load(10, 4, 100, seed=5))


def test_effective_bandwidth():
    assert expected_effective_bandwidth(2, 2) == pytest.approx(0.75, abs=1e-15)
    # 1 flow is never slowed; m flows on 1 port are always at ideal (m/1 over max m)
    assert expected_effective_bandwidth(1, 4) == pytest.approx(0.25)  # ideal fluid 1/4 of a flow per port
    assert expected_effective_bandwidth(5, 1) == pytest.approx(1.0)
    # 3 flows on 2 ports, by enumeration of the 8 placements: (3,0) twice -> 1.5/3, (2,1) six times -> 1.5/2
    assert expected_effective_bandwidth(3, 2) == pytest.approx(2 / 8 * 0.5 + 6 / 8 * 0.75)


@pytest.mark.parametrize(
    "args, exc, match",
    [
        ((-1, 3), ValueError, "m"),
        ((3, 0), ValueError, "n"),
        ((2.5, 3), TypeError, "m"),
        ((3, 3, 0), ValueError, "groups"),
    ],
)
def test_bad_input(args, exc, match):
    with pytest.raises(exc, match=match):
        expected_max_load(*args)


def test_bad_simulation_input():
    with pytest.raises(ValueError, match="samples"):
        simulate_max_load(3, 3, samples=0)
    # a million flows hashed 100,000 times is 1e11 balls (minutes): refused with the most samples that fit
    with pytest.raises(ValueError, match=r"1e\+11 balls to draw.*lower samples \(at most 2,000 here\)"):
        simulate_max_load(10**6, 16, samples=100_000)
    with pytest.raises(ValueError, match="1"):
        expected_effective_bandwidth(0, 2)


def test_large_sizes_switch_to_the_normal_form_which_agrees_with_the_exact_one():
    for m, n, rel in ((10**4, 10**4, 5e-5), (10**4, 100, 2e-5), (2000, 2000, 2e-4)):
        exact = expected_max_load(m, n, method="exact")
        assert expected_max_load(m, n, method="normal") == pytest.approx(exact, rel=rel)
        assert expected_max_load(m, n) == exact  # "auto" is exact at these sizes
    big = expected_max_load(10**6, 10**6)  # normal form, milliseconds; ln n / ln ln n grows to ~8.8
    assert big == expected_max_load(10**6, 10**6, method="normal") and 8.5 < big < 9.1
    x = simulate_max_load(10**5, 10**5, samples=40, seed=0)
    assert abs(x.mean() - expected_max_load(10**5, 10**5)) < 4 * max(x.std(ddof=1), 0.3) / math.sqrt(x.size)
    with pytest.raises(ValueError, match="FFT points"):
        expected_max_load(10**6, 10**6, method="exact")
    with pytest.raises(ValueError, match="method"):
        expected_max_load(4, 4, method="fast")
