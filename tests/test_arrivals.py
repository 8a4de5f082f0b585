"""Arrival processes: conventions, statistics, queue, validation and determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from workbench import arrivals as arr
from workbench.distributions import ccdf

# ---------------------------------------------------------------------------------------------------------------------
# conventions


def test_vllm_burstiness_convention():
    g = arr.Gamma.from_burstiness(4.0, 0.5)
    assert g.shape == 0.5 and g.scale_s == pytest.approx(1 / (4.0 * 0.5)) and g.cv == pytest.approx(1 / math.sqrt(0.5))
    assert arr.Gamma.from_burstiness(4.0, 1.0).cv == 1.0  # burstiness 1 is Poisson


def test_infinite_burstiness_is_constant_spacing():
    g = arr.Gamma.from_burstiness(5.0, math.inf)
    np.testing.assert_array_equal(g.interarrivals(4, seed=0), np.full(4, 0.2))
    assert g.cv == 0.0


def test_vidur_cv_convention():
    assert arr.Gamma.from_cv(2.0, 2.0).shape == pytest.approx(0.25)
    assert math.isinf(arr.Gamma.from_cv(2.0, 0.0).shape)


@pytest.mark.parametrize(
    "process", [arr.Poisson(3.0), arr.Gamma.from_cv(3.0, 2.5), arr.Weibull(3.0, 0.6), arr.Weibull(3.0, 2.5)]
)
def test_sampled_mean_and_cv_match_parameters(process):
    gaps = process.interarrivals(400_000, seed=11)
    assert gaps.mean() == pytest.approx(1 / 3.0, rel=0.02)
    assert arr.cv(gaps) == pytest.approx(process.cv, rel=0.03)


@settings(max_examples=40)
@given(st.floats(min_value=0.05, max_value=50.0))
def test_weibull_shape_solves_the_cv_equation(cv):
    k = arr.weibull_shape_from_cv(cv)[0]
    implied = math.sqrt(math.exp(special.gammaln(1 + 2 / k) - 2 * special.gammaln(1 + 1 / k)) - 1)
    assert implied == pytest.approx(cv, rel=1e-6)


def test_weibull_matches_scipy_moments():
    w = arr.Weibull(2.0, 1.7)
    mean, var = stats.weibull_min.stats(w.shape, scale=w.scale_s, moments="mv")
    assert float(mean) == pytest.approx(0.5, rel=1e-9)
    assert math.sqrt(float(var)) / float(mean) == pytest.approx(1.7, rel=1e-6)


def test_renewal_picks_the_family():
    assert isinstance(arr.renewal(1.0, 0.0), arr.Deterministic)
    assert isinstance(arr.renewal(1.0, 2.0), arr.Gamma)
    assert isinstance(arr.renewal(1.0, 2.0, "weibull"), arr.Weibull)


def test_vllm_normalization_puts_last_arrival_at_n_over_rate():
    p = arr.Gamma.from_burstiness(7.0, 0.3)
    t = arr.arrival_times(p, 5000, seed=4, normalize=True)
    assert t[-1] == pytest.approx(5000 / 7.0, rel=1e-12)
    raw = arr.arrival_times(p, 5000, seed=4)
    assert arr.interarrival_cv(t) == pytest.approx(arr.interarrival_cv(raw), rel=1e-9)  # scaling keeps the CV


# ---------------------------------------------------------------------------------------------------------------------
# determinism


@pytest.mark.parametrize("process", [arr.Poisson(2.0), arr.Gamma.from_burstiness(2.0, 0.2), arr.Weibull(2.0, 3.0)])
def test_same_seed_same_bytes(process):
    a = arr.arrival_times(process, 1000, seed=42)
    b = arr.arrival_times(process, 1000, seed=42)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != arr.arrival_times(process, 1000, seed=43).tobytes()


def test_piecewise_same_seed_same_bytes():
    kw = dict(
        start_s=[0, 10, 20], duration_s=10, rate_rps=[1, 0, 5], cv=[2, 1, 0.5], family=["gamma", "gamma", "weibull"]
    )
    a = arr.piecewise_arrivals(**kw, seed=9)
    b = arr.piecewise_arrivals(**kw, seed=9)
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()


# ---------------------------------------------------------------------------------------------------------------------
# piecewise process


def test_piecewise_rows_windows_and_zero_rate():
    t, row = arr.piecewise_arrivals([0, 100, 200], [100, 100, 50], [2.0, 0.0, 10.0], [1.0, 1.0, 3.0], seed=1)
    assert np.all(np.diff(t) >= 0)
    assert not np.any(row == 1)  # zero rate: no arrivals
    starts, ends = np.array([0, 100, 200]), np.array([100, 200, 250])
    assert np.all(t >= starts[row]) and np.all(t < ends[row])


def test_piecewise_counts_match_rate():
    rates = np.array([0.5, 3.0, 20.0])
    _t, row = arr.piecewise_arrivals(0.0, 2000.0, rates, [2.0, 1.0, 0.5], family=["weibull", "gamma", "gamma"], seed=3)
    counts = np.bincount(row, minlength=3)
    # renewal counts: sd ~ cv * sqrt(rate * T); allow 5 sd
    sd = np.array([2.0, 1.0, 0.5]) * np.sqrt(rates * 2000)
    assert np.all(np.abs(counts - rates * 2000) < 5 * sd)


@pytest.mark.parametrize("family,cv", [("gamma", 3.0), ("weibull", 2.0), ("gamma", 0.3), ("weibull", 0.5)])
def test_piecewise_long_window_has_target_cv(family, cv):
    t, _ = arr.piecewise_arrivals(0.0, 400_000.0, 1.0, cv, family=family, seed=5)
    assert arr.interarrival_cv(t) == pytest.approx(cv, rel=0.04)


def test_piecewise_windows_start_in_equilibrium():
    """The first arrival's phase inside short windows is uniform: no pile-up at window starts."""
    n_win = 20_000
    t, row = arr.piecewise_arrivals(np.arange(n_win) * 10.0, 10.0, 1.0, 3.0, seed=8)
    phase = t - row * 10.0
    counts, _ = np.histogram(phase, bins=10, range=(0, 10))
    expected = n_win * 1.0  # 1 arrival/s in each 1-s phase bin
    # counts of a CV-3 renewal process are over-dispersed (IDC up to 9): 5 sd bound with that variance
    assert np.all(np.abs(counts - expected) < 5 * 3.0 * np.sqrt(expected))


def test_piecewise_constant_spacing_rows():
    t, _row = arr.piecewise_arrivals(0.0, 10.0, 2.0, 0.0, seed=0)
    np.testing.assert_allclose(np.diff(t), 0.5)


def test_arrivals_until_span():
    t = arr.arrivals_until(arr.Weibull(50.0, 1.5), 100.0, seed=2, start_s=5.0)
    assert t.min() >= 5.0 and t.max() < 105.0 and abs(t.size - 5000) < 5 * 1.5 * math.sqrt(5000)


def test_superpose_merges_and_labels():
    t, lab = arr.superpose(np.array([0.0, 2.0, 4.0]), np.array([1.0, 3.0]))
    np.testing.assert_array_equal(t, [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(lab, [0, 1, 0, 1, 0])


def test_superposition_of_poissons_is_poisson():
    streams = [arr.arrival_times(arr.Poisson(1.0), 50_000, seed=s) for s in range(4)]
    t, _ = arr.superpose(*streams)
    t = t[t < min(s[-1] for s in streams)]
    assert arr.interarrival_cv(t) == pytest.approx(1.0, rel=0.02)


# ---------------------------------------------------------------------------------------------------------------------
# statistics


def test_counts_per_window_by_hand():
    t = np.array([0.1, 0.2, 1.5, 2.5, 2.6, 2.7, 3.2])
    np.testing.assert_array_equal(arr.counts_per_window(t, 1.0, start_s=0.0, end_s=3.0), [2, 1, 3])


def test_idc_poisson_is_one_and_constant_spacing_is_zero():
    t = arr.arrival_times(arr.Poisson(5.0), 300_000, seed=1)
    assert arr.index_of_dispersion(t, 20.0) == pytest.approx(1.0, abs=0.06)
    d = arr.arrival_times(arr.Deterministic(5.0), 10_000)
    assert arr.index_of_dispersion(d, 2.0, start_s=0.1) < 1e-9  # window edges between arrivals


def test_idc_vector_windows():
    t = arr.arrival_times(arr.Gamma.from_cv(1.0, 2.0), 400_000, seed=2)
    idc = arr.index_of_dispersion(t, np.array([1.0, 300.0]), start_s=0.0)
    assert idc.shape == (2,) and idc[0] < idc[1] and idc[1] == pytest.approx(4.0, rel=0.2)


@pytest.mark.parametrize("shape", [0.1, 0.5, 2.0])
def test_fit_gamma_recovers_shape_and_rate(shape):
    gaps = arr.Gamma(4.0, shape).interarrivals(300_000, seed=int(shape * 10))
    fit = arr.fit_gamma(gaps)
    assert fit.shape == pytest.approx(shape, rel=0.02)
    assert fit.rate_rps == pytest.approx(4.0, rel=0.02)
    assert fit.p_value < 1e-6 and fit.gamma_preferred
    assert fit.ks_gamma < 0.01


def test_fit_gamma_matches_scipy_mle():
    gaps = arr.Gamma(1.0, 0.7).interarrivals(20_000, seed=3)
    k, _, scale = stats.gamma.fit(gaps, floc=0)
    fit = arr.fit_gamma(gaps)
    assert fit.shape == pytest.approx(k, rel=1e-3) and fit.scale_s == pytest.approx(scale, rel=1e-3)


def test_fit_gamma_on_exponential_does_not_reject_poisson():
    fit = arr.fit_gamma(arr.Poisson(1.0).interarrivals(50_000, seed=12))
    assert fit.shape == pytest.approx(1.0, rel=0.03) and fit.p_value > 0.01 and not fit.gamma_preferred


def test_fit_gamma_rejects_zero_gaps_with_hint():
    with pytest.raises(ValueError, match="dequantize"):
        arr.fit_gamma(np.array([1.0, 0.0, 2.0]))


# ---------------------------------------------------------------------------------------------------------------------
# queues


def _lindley_loop(a, s):
    w = np.zeros(a.size)
    for i in range(1, a.size):
        w[i] = max(0.0, w[i - 1] + s[i - 1] - a[i])
    return w


@settings(max_examples=50)
@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 10)), min_size=1, max_size=60))
def test_lindley_closed_form_equals_recursion(pairs):
    a, s = np.array(pairs).T
    np.testing.assert_allclose(arr.lindley_waits(a, s), _lindley_loop(a, s), atol=1e-9)


def test_mm1_against_closed_form():
    w = arr.queue_waits(arr.Poisson(1.0), 0.8, 1_000_000, seed=5)
    exact = arr.gim1_wait(arr.Poisson(1.0), 0.8)
    assert w.mean() == pytest.approx(exact.mean_s, rel=0.05)  # 0.8 / (1.25 - 1) = 3.2
    assert exact.mean_s == pytest.approx(3.2)
    assert np.mean(w > 0) == pytest.approx(0.8, abs=0.01)


@pytest.mark.parametrize("process", [arr.Gamma.from_cv(1.0, 3.0), arr.Gamma.from_cv(1.0, 0.5), arr.Deterministic(1.0)])
def test_simulated_tail_matches_exact_gim1(process):
    w = arr.queue_waits(process, 0.7, 1_000_000, seed=6)
    exact = arr.gim1_wait(process, 0.7)
    assert np.mean(w > 0) == pytest.approx(exact.sigma, abs=0.01)
    assert np.quantile(w, 0.99) == pytest.approx(float(exact.quantile(0.99)), rel=0.06)


@pytest.mark.parametrize("utilization", [0.9, 0.95, 0.99, 0.999, 1 - 1e-9])
@pytest.mark.parametrize(
    "process", [arr.Gamma.from_cv(1.0, 3.0), arr.Gamma.from_cv(1.0, 0.3), arr.Deterministic(1.0), arr.Poisson(2.0)]
)
def test_gim1_root_is_non_trivial_at_high_load(process, utilization):
    """The root finder lands in (0, 1), never on the trivial root sigma = 1, up to utilizations next to 1; the
    heavy-traffic limit holds there: decay -> 2 (1 - rho) / ((ca^2 + cs^2) E[S]) (Kingman)."""
    w = arr.gim1_wait(process, utilization)
    assert 0.0 < w.sigma < 1.0 and w.decay_per_s > 0
    mean_service = utilization / process.rate_rps
    heavy = 2 * (1 - utilization) / ((process.cv**2 + 1.0) * mean_service)
    assert w.decay_per_s == pytest.approx(heavy, rel=0.25 if utilization < 0.99 else 0.02)
    assert np.isfinite(w.quantile(0.99)) and w.quantile(0.99) < 1e3 / (1 - utilization)


def test_gim1_gamma_cv3_at_095_is_finite():
    """The defect seen in notebook 00: sigma came back as 0.999999999999999 and the decay 1e-15 /s."""
    w = arr.gim1_wait(arr.Gamma.from_cv(1.0, cv=3.0), 0.95)
    assert w.sigma == pytest.approx(0.98986, abs=1e-4)
    assert w.decay_per_s == pytest.approx(0.010671, rel=1e-3)


@settings(max_examples=12, deadline=None)
@given(cv=st.floats(0.2, 3.0), utilization=st.floats(0.3, 0.9))
def test_gim1_matches_lindley_simulation(cv, utilization):
    """Property: for Gamma arrivals of any CV and load, the exact GI/M/1 probability of waiting and mean wait match
    the Lindley simulation of the same queue."""
    process = arr.Gamma.from_cv(1.0, cv)
    exact = arr.gim1_wait(process, utilization)
    assert 0.0 < exact.sigma < 1.0
    w = arr.queue_waits(process, utilization, 400_000, seed=11)
    assert np.mean(w > 0) == pytest.approx(exact.sigma, abs=0.02)
    assert w.mean() == pytest.approx(exact.mean_s, rel=0.15)


def test_kingman_exact_for_mm1_and_quantile():
    assert arr.kingman_mean_wait(0.7, 1.0, 1.0, 1.0) == pytest.approx(0.7 / 0.3)
    assert arr.kingman_wait_quantile(0.99, 0.7, 1.0, 1.0, 1.0) == pytest.approx(0.7 / 0.3 * math.log(100))


def test_compare_waits_table():
    df = arr.compare_waits(10.0, 1 / 9, 0.7, n=200_000, seed=1)
    assert list(df.index) == ["poisson", "gamma"]
    assert df.loc["gamma", "sim_p99_s"] > 3 * df.loc["poisson", "sim_p99_s"]
    assert df.loc["gamma", "cv"] == pytest.approx(3.0)


def test_ccdf_is_monotone():
    x, p = ccdf(arr.Poisson(1.0).interarrivals(10_000, seed=0))
    assert np.all(np.diff(x) >= 0) and np.all(np.diff(p) <= 0)


# ---------------------------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: arr.Poisson(0.0), "rate_rps must be > 0"),
        (lambda: arr.Poisson(-1.0), "rate_rps"),
        (lambda: arr.Poisson(float("nan")), "rate_rps must be a number"),
        (lambda: arr.Gamma.from_burstiness(1.0, 0.0), "burstiness"),
        (lambda: arr.Gamma.from_burstiness(1.0, -2.0), "burstiness"),
        (lambda: arr.Gamma.from_cv(1.0, -0.5), r"cv must be in \[0.0, 10000.0\]"),
        (lambda: arr.Gamma.from_cv(1.0, 1e6), r"cv must be in \[0.0, 10000.0\], got 1000000.0"),
        (
            lambda: arr.Gamma(1.0, shape=1e-12),
            r"shape must be >= 1e-08 \(gap CV <= 10000\), got 1e-12: below it float64 gaps underflow",
        ),
        (lambda: arr.renewal(1.0, 1e6), r"cv must be in \[0.0, 10000.0\]"),
        (lambda: arr.arrival_times(arr.Gamma.from_cv(1.0, 1e4), 10, seed=0, normalize=True), "underflowed to 0 s"),
        (lambda: arr.Weibull(1.0, -1.0), "cv must be >= 0"),
        (lambda: arr.renewal(1.0, 1.0, "lognormal"), "family must be one of"),
        (lambda: arr.arrival_times(arr.Poisson(1.0), 0), "n must be >= 1"),
        (lambda: arr.arrival_times(arr.Poisson(1.0), 2.5), "n must be an integer"),
        (lambda: arr.piecewise_arrivals(0, 0.0, 1.0, 1.0), "duration_s must be >"),
        (lambda: arr.piecewise_arrivals(0, 1.0, -1.0, 1.0), "rate_rps must be >= 0"),  # 0: a window without arrivals
        (lambda: arr.piecewise_arrivals(0, 1.0, 1.0, float("nan")), "cv must be a number, got NaN"),
        (lambda: arr.piecewise_arrivals([], 1.0, 1.0, 1.0), None),
        (
            lambda: arr.piecewise_arrivals([0.0, 1.0, 2.0], [1.0, 1.0], 1.0, 1.0),
            "scalar or have one entry per row; got lengths start_s=3, duration_s=2, rate_rps=1, cv=1",
        ),
        (lambda: arr.piecewise_arrivals([0, 1], 1.0, 1.0, 1.0, family=["gamma", "pareto"]), "row 1"),
        (lambda: arr.counts_per_window(np.array([0.0, 1.0]), 5.0), "no complete window"),
        (lambda: arr.index_of_dispersion(np.array([0.0, 1.0, 2.0]), 1.5), "need at least 2"),
        (lambda: arr.interarrival_cv(np.array([0.0, 2.0, 1.0])), "non-decreasing"),
        (lambda: arr.cv(np.array([1.0])), "at least 2"),
        (lambda: arr.queue_waits(arr.Poisson(1.0), 1.0, 10), "utilization must be < 1"),
        (lambda: arr.lindley_waits(np.ones(3), np.ones(2)), "same length"),
        (lambda: arr.Poisson(1.0).interarrivals(5, seed=-1), "seed"),
        (lambda: arr.Poisson(1.0).interarrivals(5, seed="a"), "seed must be"),
    ],
)
def test_bad_input_names_the_parameter(call, match):
    if match is None:  # empty rows: a valid call with nothing to generate
        t, row = call()
        assert t.size == 0 and row.size == 0
        return
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_index_of_dispersion_at_windows_far_shorter_than_the_gaps(monkeypatch):
    """arrivals-idc's declared shortest window, 1e-6 mean gaps, over 200,000 arrivals is 2e11 windows: counted
    densely that was a 1.6 TB allocation (MemoryError). Beyond a dense count only the non-empty windows are counted;
    for Poisson it is 1 there too (a window holds 0 or 1 arrival), and the two counts agree where both run."""
    import workbench.arrivals.statistics as S

    poisson = arr.arrival_times(arr.Poisson(1.0), 200_000, seed=3)
    assert float(arr.index_of_dispersion(poisson, 1e-6, start_s=0.0)) == pytest.approx(1.0, abs=1e-3)
    t = arr.arrival_times(arr.Gamma.from_cv(1.0, 2.0), 200_000, seed=3)
    windows = np.array([0.1, 1.0, 10.0])
    dense = arr.index_of_dispersion(t, windows, start_s=0.0)
    monkeypatch.setattr(S, "_DENSE_WINDOWS", 10)
    np.testing.assert_allclose(arr.index_of_dispersion(t, windows, start_s=0.0), dense, rtol=1e-12)
    with pytest.raises(ValueError, match="window_s=1e-06 cuts the span"):
        arr.counts_per_window(t, 1e-6)


def test_idc_windows_longer_than_the_arrivals_span_are_refused_by_the_experiments_parameters():
    """A random point inside arrivals-idc's ranges (158 arrivals, windows up to 10^11 mean gaps) was refused by the
    statistic with a window length in seconds; the experiment names its own parameters before drawing anything."""
    from workbench import experiments as ex

    fn = ex.get("arrivals-idc").fn
    point = {"process": "gamma", "cv": 2.0, "job_seed": 3, "job_index": 9}
    with pytest.raises(ValueError, match=r"10\^11 mean gaps \(first_decade=3 \+ decades=9 - 1\).*first_decade$"):
        fn(**point, arrivals=158, first_decade=3, decades=9, seed=0)
    with pytest.raises(ValueError, match=r"lower decades or first_decade, or raise arrivals to 30,000 or more$"):
        fn(**point, arrivals=5_000, first_decade=2, decades=3, seed=0)
    assert len(fn(**point, arrivals=30_000, first_decade=2, decades=3, seed=0)) == 3
