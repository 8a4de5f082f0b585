"""Empirical distributions: each name means one thing (P(X <= x), P(X > x), P(X >= v)) and they agree where they meet."""

from __future__ import annotations

import numpy as np

from workbench import distributions as D


def test_tail_functions_differ_only_in_the_inequality():
    x = np.random.default_rng(0).integers(1, 50, 5000).astype(float)
    vals, at_least = D.survival_at_values(x)
    np.testing.assert_allclose(at_least, [(x >= v).mean() for v in vals])
    y = np.random.default_rng(3).exponential(size=5000)  # ccdf is for samples without ties
    q, above = D.ccdf(y, points=50)
    np.testing.assert_allclose(above, [(y > v).mean() for v in q])
    cdf_x, cdf = D.ecdf(y, points=10_000)
    np.testing.assert_allclose(cdf, np.searchsorted(np.sort(y), cdf_x, side="right") / y.size)


def test_weighted_functions_reduce_to_unweighted_with_unit_weights():
    x = np.random.default_rng(1).lognormal(size=2001)
    q = np.array([0.1, 0.5, 0.9])
    np.testing.assert_array_equal(D.weighted_quantile(x, np.ones(x.size), q), np.quantile(x, q, method="inverted_cdf"))
    np.testing.assert_array_equal(D.weighted_cdf(x, np.ones(x.size), points=5000)[1], D.ecdf(x, points=5000)[1])


def test_pmf_ccdf_matches_samples_and_counts_cover_the_span():
    v, p = np.array([1.0, 2.0, 4.0, 8.0]), np.array([0.4, 0.3, 0.2, 0.1])
    np.testing.assert_allclose(D.pmf_ccdf(v, p)[1], [0.6, 0.3, 0.1])
    t = np.sort(np.random.default_rng(2).uniform(0, 100, 1000))
    counts = D.counts_per_window(t, 10.0, start_s=0.0, end_s=100.0)
    assert counts.size == 10 and counts.sum() == 1000
