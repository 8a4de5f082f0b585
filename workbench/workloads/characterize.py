"""Characterization of request traces: burstiness, time profiles, token lengths, conversations and failures.

These are the measurements of BurstGPT (Wang et al., KDD 2025), written once and reused by the claims, the notebook,
the widget and the generator's fit:

* **Burstiness.** BurstGPT splits the trace into windows (20 minutes by default) and fits the inter-arrival gaps of
  each window with a Gamma distribution by maximum likelihood; a shape below 1 (CV above 1) is burstier than
  Poisson, and in such windows the Gamma fits much better than the exponential. :func:`window_gamma_fits` does every
  window at once: gaps are grouped with ``bincount`` and every window's shape comes from one vectorized call of
  :func:`workbench.arrivals.gamma_shape_mle` (the estimator :func:`workbench.arrivals.fit_gamma` uses, which tests
  check window by window), and the Kolmogorov-Smirnov distances of
  the Gamma and exponential fits come from one lexsort. BurstGPT timestamps have 1-second resolution, so many gaps
  are zero and the Gamma likelihood is undefined; :func:`dequantize` spreads each arrival uniformly over its
  timestamp's resolution interval (the maximum-entropy reconstruction) before gaps are taken.
* **Time profiles.** Requests and tokens per hour of day and per day of week (:func:`time_profile`), and
  :func:`periodicity`, the share of the variance of hourly counts that the hour of day explains (close to 1 for a
  strongly diurnal service, close to 0 for aperiodic traffic).
* **Token lengths.** Empirical distributions and maximum-likelihood fits of a truncated Zipf law (BurstGPT finds request
  lengths Zipf-like), a lognormal and an exponential, all compared as distributions over the integers with a
  Kolmogorov-Smirnov distance and AIC (:func:`fit_lengths`). :func:`request_response` bins requests by length and
  gives the mean and a quantile band of the response length, plus rank correlation.
* **Conversations and failures.** Turns per session and gaps between turns where the trace has sessions
  (BurstGPT v3), and failure rates by model, log type and hour.

Examples
--------
>>> import numpy as np
>>> from workbench import arrivals
>>> t = arrivals.arrival_times(arrivals.Gamma(rate_rps=2.0, shape=0.5), 20_000, seed=1)
>>> fits = window_gamma_fits(t, window_s=1200.0, resolution_s=0.0)
>>> bool(abs(np.nanmedian(fits["shape"]) - 0.5) < 0.05)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from .. import _validate as V
from .._rng import Seed, generator
from ..arrivals import gamma_shape_mle
from .schema import validate_requests

__all__ = [
    "detect_resolution",
    "dequantize",
    "window_gamma_fits",
    "rate_series",
    "time_profile",
    "periodicity",
    "LengthFit",
    "fit_zipf",
    "fit_lognormal",
    "fit_exponential",
    "fit_lengths",
    "zipf_cdf",
    "request_response",
    "conversation_stats",
    "failure_rates",
    "summarize",
]


# ------------------------------------------------------------------------------------------------------------------
# Burstiness
# ------------------------------------------------------------------------------------------------------------------


def detect_resolution(arrival_s: np.ndarray) -> float:
    """The effective timestamp resolution of a trace, for :func:`dequantize`.

    If most gaps are zero and every positive gap is (within 1%) a multiple of one step, arrivals were recorded on a
    clock tick of that step (Mooncake's conversation trace puts all requests on a ~3-second tick): the step is
    returned. Otherwise 1.0 if every time is a whole second (BurstGPT), 0.001 if whole milliseconds, else 0.

    Examples
    --------
    >>> detect_resolution(np.array([0.0, 1.0, 5.0])), detect_resolution(np.array([0.25, 0.5]))
    (1.0, 0.001)
    >>> detect_resolution(np.repeat([0.0, 3.0, 6.001, 9.0], 5))
    3.0
    """
    t = V.array_1d("arrival_s", arrival_s)
    if t.size == 0:
        return 0.0
    g = np.diff(np.sort(t))
    pos = g[g > 0]
    if g.size and pos.size and (g == 0).mean() >= 0.5:
        step = float(np.median(pos))
        ratio = pos / step
        k = np.maximum(np.round(ratio), 1)
        if np.all(np.abs(ratio - k) <= 0.01 * k):
            return round(step, 3) if step >= 0.001 else step
    if np.all(t == np.round(t)):
        return 1.0
    ms = t * 1000.0
    if np.all(np.abs(ms - np.round(ms)) < 1e-6):
        return 0.001
    return 0.0


def dequantize(arrival_s: np.ndarray, resolution_s: float, *, seed: Seed = 0) -> np.ndarray:
    """Spread quantized timestamps uniformly over their resolution interval and sort.

    A timestamp ``t`` recorded at resolution ``r`` means the arrival happened in ``[t, t + r)``; drawing the offset
    uniformly removes the zero gaps that make a Gamma likelihood undefined while keeping every count per interval.
    ``resolution_s = 0`` returns a sorted copy.

    Uniform offsets erase any clustering finer than the resolution, so a Gamma shape fitted afterwards is biased
    towards 1 (Poisson): for Gamma(shape 0.5) arrivals floored to whole seconds the estimate is about 0.58 at
    0.05 req/s and 0.73 at 1 req/s (measured). The bias is conservative: a dequantized shape below 1 means burstier
    still.

    Examples
    --------
    >>> t = dequantize(np.array([0.0, 0.0, 1.0]), 1.0, seed=0)
    >>> bool(np.all(np.diff(t) > 0)), bool(np.all((t >= [0, 0, 1]) | True))
    (True, True)
    """
    t = V.array_1d("arrival_s", arrival_s)
    r = V.nonnegative("resolution_s", resolution_s)
    if r == 0:
        return np.sort(t)
    return np.sort(t + generator(seed).random(t.size) * r)


def _resolution_for(df_or_t, resolution_s: float | None) -> float:
    if resolution_s is not None:
        return V.nonnegative("resolution_s", resolution_s)
    if isinstance(df_or_t, pd.DataFrame):
        r = df_or_t.attrs.get("time_resolution_s")
        if r is not None:
            return float(r)
        return detect_resolution(df_or_t["arrival_s"].to_numpy())
    return detect_resolution(df_or_t)


def window_gamma_fits(
    arrival_s: np.ndarray | pd.DataFrame,
    window_s: float = 1200.0,
    *,
    resolution_s: float | None = None,
    seed: Seed = 0,
    min_gaps: int = 20,
    start_s: float | None = None,
) -> pd.DataFrame:
    """Maximum-likelihood Gamma fit of the inter-arrival gaps in every window, vectorized over windows.

    Parameters
    ----------
    arrival_s : array or request DataFrame
        Arrival times in seconds (a DataFrame's ``arrival_s`` column; its ``attrs["time_resolution_s"]`` sets the
        default resolution).
    window_s : float
        Window length in seconds (BurstGPT: 20 minutes).
    resolution_s : float, optional
        Timestamp resolution to dequantize (1.0 for BurstGPT, 0.001 for Mooncake, 0 for none); default: from the
        DataFrame's attrs or :func:`detect_resolution`.
    seed : int, Generator or None
        For the dequantization offsets.
    min_gaps : int
        Windows with fewer positive gaps get NaN fits (their counts are still reported).
    start_s : float, optional
        Origin of the window grid (default: the first arrival, floored to a multiple of ``window_s``).

    Returns
    -------
    DataFrame
        One row per window from the first to the last: ``start_s``, ``n_requests``, ``rate_rps`` (requests /
        ``window_s``), ``cv`` (sample CV of the gaps), ``shape`` and ``gamma_rate`` (the Gamma's rate parameter,
        ``shape / mean gap``), ``ks_gamma``, ``ks_exponential``, ``lr_p_value`` (likelihood ratio against the
        exponential, chi-square with 1 degree of freedom) and ``gamma_better`` (smaller KS distance and p < 0.05).

    Examples
    --------
    >>> from workbench import arrivals
    >>> t = arrivals.arrival_times(arrivals.Poisson(1.0), 10_000, seed=3)
    >>> f = window_gamma_fits(t, 1200.0, resolution_s=0.0)
    >>> bool(np.all(np.abs(f["shape"].dropna() - 1) < 0.15))
    True
    """
    if isinstance(arrival_s, pd.DataFrame):
        validate_requests(arrival_s, name="arrival_s")
        raw = arrival_s["arrival_s"].to_numpy(dtype=float)
    else:
        raw = V.array_1d("arrival_s", arrival_s, min_size=2)
    window_s = V.positive("window_s", window_s)
    min_gaps = V.integer("min_gaps", min_gaps, minimum=2)
    res = _resolution_for(arrival_s, resolution_s)
    t = dequantize(raw, res, seed=seed)
    if t.size < 2:
        raise ValueError(f"arrival_s must have at least 2 arrivals, got {t.size}")
    origin = math.floor(t[0] / window_s) * window_s if start_s is None else V.finite("start_s", start_s)
    w = np.floor((t - origin) / window_s).astype(np.int64)
    if w[0] < 0:
        raise ValueError(f"start_s={origin} is after the first arrival {t[0]}")
    n_win = int(w[-1]) + 1
    counts = np.bincount(w, minlength=n_win)
    g = np.diff(t)
    gw = w[1:]
    keep = (gw == w[:-1]) & (g > 0)
    g, gw = g[keep], gw[keep]
    n = np.bincount(gw, minlength=n_win).astype(float)
    s1 = np.bincount(gw, weights=g, minlength=n_win)
    s2 = np.bincount(gw, weights=g * g, minlength=n_win)
    slog = np.bincount(gw, weights=np.log(g), minlength=n_win)
    ok = n >= min_gaps
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = s1 / n
        var = (s2 - n * mean**2) / (n - 1)
        cvs = np.sqrt(np.maximum(var, 0)) / mean
        s = np.log(mean) - slog / n
    ok &= s > 1e-12
    shape = np.full(n_win, np.nan)
    shape[ok] = gamma_shape_mle(s[ok])
    beta = shape / mean
    with np.errstate(divide="ignore", invalid="ignore"):
        loglik = n * (shape * np.log(beta) - special.gammaln(shape)) + (shape - 1) * slog - beta * s1
        loglik_e = -n * np.log(mean) - n
        lr = np.maximum(0.0, 2 * (loglik - loglik_e))
    p = np.where(ok, stats.chi2.sf(np.where(ok, lr, 0.0), 1), np.nan)
    # KS distances, all windows at once: sort gaps within windows, compare the ECDF with both fitted CDFs
    sel = ok[gw]
    g_ok, w_ok = g[sel], gw[sel]
    order = np.lexsort((g_ok, w_ok))
    gs, ws = g_ok[order], w_ok[order]
    ks_g = np.full(n_win, np.nan)
    ks_e = np.full(n_win, np.nan)
    if gs.size:
        seg_start = np.flatnonzero(np.r_[True, ws[1:] != ws[:-1]])
        first = np.repeat(seg_start, np.diff(np.r_[seg_start, gs.size]))
        i = np.arange(gs.size) - first
        m = n[ws]
        hi, lo = (i + 1) / m, i / m
        fg = special.gammainc(shape[ws], beta[ws] * gs)
        fe = -np.expm1(-gs / mean[ws])
        dg = np.maximum(hi - fg, fg - lo)
        de = np.maximum(hi - fe, fe - lo)
        wids = ws[seg_start]
        ks_g[wids] = np.maximum.reduceat(dg, seg_start)
        ks_e[wids] = np.maximum.reduceat(de, seg_start)
    out = pd.DataFrame(
        {
            "start_s": origin + window_s * np.arange(n_win),
            "n_requests": counts,
            "rate_rps": counts / window_s,
            "cv": np.where(ok, cvs, np.nan),
            "shape": shape,
            "gamma_rate": np.where(ok, beta, np.nan),
            "ks_gamma": ks_g,
            "ks_exponential": ks_e,
            "lr_p_value": p,
        }
    )
    out["gamma_better"] = (out["ks_gamma"] < out["ks_exponential"]) & (out["lr_p_value"] < 0.05)
    out.attrs = {"window_s": window_s, "resolution_s": res}
    return out


def rate_series(arrival_s: np.ndarray | pd.DataFrame, bin_s: float = 60.0, *, weights=None) -> pd.DataFrame:
    """Requests (or ``weights``, e.g. tokens) per bin of ``bin_s`` seconds from 0 to the last arrival.

    Examples
    --------
    >>> rate_series(np.array([0.5, 1.5, 1.7, 3.2]), 1.0)["count"].tolist()
    [1.0, 2.0, 0.0, 1.0]
    """
    t = arrival_s["arrival_s"].to_numpy(dtype=float) if isinstance(arrival_s, pd.DataFrame) else np.asarray(arrival_s)
    t = V.array_1d("arrival_s", t, min_size=1)
    bin_s = V.positive("bin_s", bin_s)
    b = np.floor((t - min(0.0, t.min())) / bin_s).astype(np.int64)
    w = None if weights is None else np.asarray(weights, dtype=float)
    counts = np.bincount(b, weights=w if w is not None else None, minlength=int(b.max()) + 1).astype(float)
    return pd.DataFrame({"start_s": bin_s * np.arange(counts.size), "count": counts, "rate_per_s": counts / bin_s})


# ------------------------------------------------------------------------------------------------------------------
# Time profiles
# ------------------------------------------------------------------------------------------------------------------


def _clock(df: pd.DataFrame, origin_s_of_day: float | None) -> tuple[np.ndarray, bool]:
    off = origin_s_of_day if origin_s_of_day is not None else df.attrs.get("origin_s_of_day")
    known = off is not None
    return df["arrival_s"].to_numpy(dtype=float) + (float(off) if known else 0.0), known


def time_profile(
    df: pd.DataFrame,
    by: str = "hour",
    *,
    origin_s_of_day: float | None = None,
    origin_weekday: int | None = None,
) -> pd.DataFrame:
    """Mean requests and tokens per hour of day (``by="hour"``) or per day of week (``by="weekday"``).

    Each hour (day) of the profile is the total over the trace divided by the number of such hours (days) the trace
    spans, so a trace that covers some hours more often than others is not biased. The clock origin comes from
    ``df.attrs`` (``origin_s_of_day``, ``origin_weekday``) unless given; without it hours count from the trace start
    (``attrs["clock"] = "relative"``).

    Returns
    -------
    DataFrame
        ``hour`` (0-23) or ``weekday`` (0 = Monday), ``requests``, ``input_tokens``, ``output_tokens`` (per hour or
        per day), ``observed`` (how many such periods the trace spans).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"arrival_s": [10.0, 20.0, 3700.0], "input_tokens": [1, 2, 3], "output_tokens": [1, 1, 1]})
    >>> time_profile(df, origin_s_of_day=0.0)["requests"].tolist()[:2]
    [2.0, 1.0]
    """
    validate_requests(df)
    V.one_of("by", by, ("hour", "weekday"))
    clock, known = _clock(df, origin_s_of_day)
    period, n_bins = (3600.0, 24) if by == "hour" else (86400.0, 7)
    shift = 0
    if by == "weekday":
        wd = origin_weekday if origin_weekday is not None else df.attrs.get("origin_weekday")
        known = known and wd is not None
        shift = int(wd) if wd is not None else 0
    absolute = np.floor(clock / period).astype(np.int64)
    label = (absolute + shift) % n_bins
    spanned = np.arange(absolute.min(), absolute.max() + 1)
    observed = np.bincount((spanned + shift) % n_bins, minlength=n_bins).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        per = lambda w: np.bincount(label, weights=w, minlength=n_bins) / observed  # noqa: E731
        out = pd.DataFrame(
            {
                by: np.arange(n_bins),
                "requests": per(None),
                "input_tokens": per(df["input_tokens"].to_numpy(dtype=float)),
                "output_tokens": per(df["output_tokens"].to_numpy(dtype=float)),
                "observed": observed.astype(int),
            }
        )
    out.attrs["clock"] = "wall" if known else "relative"
    return out


def periodicity(df: pd.DataFrame, *, bin_s: float = 3600.0, period_s: float = 86400.0) -> float:
    """Share of the variance of per-bin request counts explained by the position in the period.

    With hourly bins and a daily period: 1 means every day repeats the same hourly profile (diurnal), 0 means the
    hour of day says nothing about the load (aperiodic). The plain ratio (eta squared) of ``N`` bins over ``P``
    phases is biased upwards by chance, by about ``(P - 1) / (N - 1)`` for aperiodic traffic (0.32 for three days
    of hours), so the adjusted ratio ``1 - (1 - eta2) (N - 1) / (N - P)`` is returned (clipped at 0), the same
    correction as adjusted R squared. Needs at least two full periods (NaN otherwise).

    Examples
    --------
    >>> import pandas as pd
    >>> hours = np.arange(24 * 4)
    >>> n = (10 + 9 * np.sin(2 * np.pi * hours / 24)).astype(int)
    >>> t = np.repeat(hours * 3600.0 + 1, n)
    >>> df = pd.DataFrame({"arrival_s": t, "input_tokens": 1, "output_tokens": 1})
    >>> round(periodicity(df), 2)
    1.0
    """
    validate_requests(df)
    bin_s = V.positive("bin_s", bin_s)
    period_s = V.positive("period_s", period_s)
    per_period = int(round(period_s / bin_s))
    clock, _ = _clock(df, None)
    b = np.floor(clock / bin_s).astype(np.int64)
    b0 = b.min()
    counts = np.bincount(b - b0).astype(float)
    if counts.size < 2 * per_period:
        return float("nan")
    phase = (np.arange(counts.size) + b0) % per_period
    total_var = counts.var()
    if total_var == 0:
        return 0.0
    means = np.bincount(phase, weights=counts, minlength=per_period) / np.bincount(phase, minlength=per_period)
    eta2 = float(np.var(means[phase]) / total_var)
    n = counts.size
    return max(0.0, 1.0 - (1.0 - eta2) * (n - 1) / (n - per_period))


# ------------------------------------------------------------------------------------------------------------------
# Token lengths
# ------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LengthFit:
    """A maximum-likelihood fit of token lengths (integers >= 1) with its goodness of fit.

    ``params`` holds the family's parameters (``alpha``, ``x_max`` for Zipf; ``mu``, ``sigma`` for lognormal;
    ``mean`` for exponential); ``ks`` is the Kolmogorov-Smirnov distance between the empirical and fitted CDFs over
    the integers, ``loglik`` and ``aic`` are on the same discrete support, ``n`` is the number of lengths fitted and
    ``n_zero`` the number of zero lengths left out (e.g. failed responses), reported rather than dropped silently.
    """

    family: str
    params: dict
    n: int
    n_zero: int
    loglik: float
    aic: float
    ks: float

    def cdf(self, k: np.ndarray) -> np.ndarray:
        """Model CDF at integer lengths ``k`` (>= 1)."""
        k = np.asarray(k, dtype=float)
        if self.family == "zipf":
            return zipf_cdf(k, self.params["alpha"], self.params["x_max"])
        if self.family == "lognormal":
            z = (np.log(k + 0.5) - self.params["mu"]) / self.params["sigma"]
            z0 = (math.log(0.5) - self.params["mu"]) / self.params["sigma"]
            f0 = stats.norm.cdf(z0)
            return (stats.norm.cdf(z) - f0) / (1 - f0)
        lam = 1.0 / self.params["mean"]
        return (np.exp(-0.5 * lam) - np.exp(-lam * (k + 0.5))) / np.exp(-0.5 * lam)


def _positive_ints(name: str, x) -> tuple[np.ndarray, int]:
    a = V.array_1d(name, x, low=0.0)
    if a.size and np.any(a != np.floor(a)):
        raise ValueError(f"{name} must be integer token counts")
    pos = a[a >= 1]
    if pos.size < 2:
        raise ValueError(f"{name} must have at least 2 lengths >= 1, got {pos.size}")
    return pos, int(a.size - pos.size)


def _ks_discrete(x: np.ndarray, cdf) -> float:
    vals, cnt = np.unique(x, return_counts=True)
    ecdf = np.cumsum(cnt) / x.size
    ecdf_before = ecdf - cnt / x.size
    f = cdf(vals)
    f_before = cdf(vals - 1)
    return float(max(np.max(np.abs(ecdf - f)), np.max(np.abs(ecdf_before - f_before))))


def _zipf_logH(alpha: float, logk: np.ndarray) -> float:
    return float(special.logsumexp(-alpha * logk))


def zipf_cdf(k: np.ndarray, alpha: float, x_max: int) -> np.ndarray:
    """CDF of the Zipf law truncated to ``1..x_max`` (``P(X = k)`` proportional to ``k**-alpha``).

    Examples
    --------
    >>> zipf_cdf(np.array([1, 2]), 1.0, 2).round(3).tolist()
    [0.667, 1.0]
    """
    k = np.clip(np.floor(np.asarray(k, dtype=float)), 0, x_max).astype(np.int64)
    pmf = np.arange(1, x_max + 1, dtype=float) ** -alpha
    c = np.concatenate([[0.0], np.cumsum(pmf)])
    return c[k] / c[-1]


def fit_zipf(x, *, x_max: int | None = None) -> LengthFit:
    """Maximum-likelihood truncated Zipf law on ``1..x_max`` (default: the largest length observed).

    The log-likelihood ``-alpha * sum(log x) - n log H(alpha)`` with ``H(alpha) = sum_{k<=x_max} k**-alpha`` is
    concave in ``alpha``; it is maximized by a bounded scalar search on ``alpha in (0, 6)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> k = np.arange(1, 5001)
    >>> p = k ** -1.1 / (k ** -1.1).sum()
    >>> round(fit_zipf(rng.choice(k, 50_000, p=p), x_max=5000).params["alpha"], 2)
    1.1
    """
    pos, n_zero = _positive_ints("x", x)
    top = int(pos.max()) if x_max is None else V.integer("x_max", x_max, minimum=int(pos.max()))
    logk = np.log(np.arange(1, top + 1, dtype=float))
    n = pos.size
    slog = float(np.log(pos).sum())
    res = optimize.minimize_scalar(
        lambda a: a * slog + n * _zipf_logH(a, logk), bounds=(1e-3, 6.0), method="bounded", options={"xatol": 1e-6}
    )
    alpha = float(res.x)
    ll = -float(res.fun)
    ks = _ks_discrete(pos, lambda v: zipf_cdf(v, alpha, top))
    return LengthFit("zipf", {"alpha": alpha, "x_max": top}, n, n_zero, ll, 2 * 1 - 2 * ll, ks)


def fit_lognormal(x) -> LengthFit:
    """Lognormal fit of lengths >= 1 (``mu``, ``sigma`` of log length), discretized to integers for KS and AIC.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> f = fit_lognormal(np.round(rng.lognormal(5, 1, 20_000)) + 1)
    >>> round(f.params["sigma"], 1)
    1.0
    """
    pos, n_zero = _positive_ints("x", x)
    lx = np.log(pos)
    mu, sigma = float(lx.mean()), float(max(lx.std(), 1e-9))
    fit = LengthFit("lognormal", {"mu": mu, "sigma": sigma}, pos.size, n_zero, 0.0, 0.0, 0.0)
    pmf = np.maximum(fit.cdf(pos) - fit.cdf(pos - 1), 1e-300)
    ll = float(np.log(pmf).sum())
    return LengthFit("lognormal", fit.params, pos.size, n_zero, ll, 2 * 2 - 2 * ll, _ks_discrete(pos, fit.cdf))


def fit_exponential(x) -> LengthFit:
    """Exponential fit (mean of lengths >= 1), discretized to integers for KS and AIC.

    Examples
    --------
    >>> round(fit_exponential(np.array([1, 2, 3, 4])).params["mean"], 2)
    2.5
    """
    pos, n_zero = _positive_ints("x", x)
    fit = LengthFit("exponential", {"mean": float(pos.mean())}, pos.size, n_zero, 0.0, 0.0, 0.0)
    pmf = np.maximum(fit.cdf(pos) - fit.cdf(pos - 1), 1e-300)
    ll = float(np.log(pmf).sum())
    return LengthFit("exponential", fit.params, pos.size, n_zero, ll, 2 * 1 - 2 * ll, _ks_discrete(pos, fit.cdf))


def fit_lengths(x, *, x_max: int | None = None) -> pd.DataFrame:
    """Fit Zipf, lognormal and exponential laws to token lengths; one row per family, best (lowest KS) first.

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> fit_lengths(np.round(rng.lognormal(6, 0.5, 5000)))["family"].iloc[0]
    'lognormal'
    """
    fits = [fit_zipf(x, x_max=x_max), fit_lognormal(x), fit_exponential(x)]
    rows = [
        {"family": f.family, "ks": f.ks, "aic": f.aic, "loglik": f.loglik, "n": f.n, "n_zero": f.n_zero,
         "params": f.params, "fit": f}
        for f in fits
    ]
    return pd.DataFrame(rows).sort_values("ks", ignore_index=True)


def request_response(df: pd.DataFrame, *, bins: int = 20, quantiles=(0.1, 0.5, 0.9)) -> pd.DataFrame:
    """Response length against request length: log-spaced request bins with the mean and quantiles of the response.

    Rows with zero request tokens are left out of the bins (their count is in ``attrs["n_zero_request"]``).
    ``attrs`` also holds ``spearman`` (rank correlation over all rows) and ``pearson_log`` (Pearson on
    ``log1p`` of both lengths).

    Examples
    --------
    >>> import pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> x = rng.integers(1, 4000, 5000)
    >>> df = pd.DataFrame({"arrival_s": np.arange(5000.0), "input_tokens": x, "output_tokens": x // 4})
    >>> rr = request_response(df)
    >>> bool(rr["mean_output"].is_monotonic_increasing), round(rr.attrs["spearman"], 2)
    (True, 1.0)
    """
    validate_requests(df)
    bins = V.integer("bins", bins, minimum=1)
    x = df["input_tokens"].to_numpy(dtype=float)
    y = df["output_tokens"].to_numpy(dtype=float)
    pos = x >= 1
    xp, yp = x[pos], y[pos]
    if xp.size < 2:
        raise ValueError("df must have at least 2 requests with input_tokens >= 1")
    edges = np.unique(np.geomspace(xp.min(), xp.max() + 1, bins + 1))
    b = np.clip(np.searchsorted(edges, xp, side="right") - 1, 0, edges.size - 2)
    nb = edges.size - 1
    cnt = np.bincount(b, minlength=nb)
    order = np.lexsort((yp, b))
    ys = yp[order]
    starts = np.concatenate([[0], np.cumsum(cnt)[:-1]])
    out = {
        "input_lo": edges[:-1],
        "input_hi": edges[1:],
        "n": cnt,
        "mean_input": np.bincount(b, weights=xp, minlength=nb) / np.maximum(cnt, 1),
        "mean_output": np.bincount(b, weights=yp, minlength=nb) / np.maximum(cnt, 1),
    }
    for q in quantiles:
        idx = starts + np.clip(np.floor(q * (cnt - 1)).astype(np.int64), 0, None)
        out[f"q{int(round(q * 100)):02d}_output"] = np.where(cnt > 0, ys[np.minimum(idx, ys.size - 1)], np.nan)
    res = pd.DataFrame(out)
    res = res[res["n"] > 0].reset_index(drop=True)
    constant = np.ptp(x) == 0 or np.ptp(y) == 0  # correlation undefined
    res.attrs = {
        "spearman": float("nan") if constant else float(stats.spearmanr(x, y).statistic),
        "pearson_log": float("nan") if constant else float(np.corrcoef(np.log1p(x), np.log1p(y))[0, 1]),
        "n_zero_request": int((~pos).sum()),
    }
    return res


# ------------------------------------------------------------------------------------------------------------------
# Conversations and failures
# ------------------------------------------------------------------------------------------------------------------


def conversation_stats(df: pd.DataFrame) -> dict:
    """Turns per conversation and gaps between consecutive turns, for traces with ``session_id`` (BurstGPT v3).

    Returns a dict with ``sessions``, ``turns`` (array, one per session), ``gaps_s`` (array, between consecutive
    turns of a session) and ``mean_turns``; empty arrays when the trace has no sessions.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"arrival_s": [0.0, 1.0, 5.0, 9.0], "input_tokens": 1, "output_tokens": 1,
    ...                    "session_id": pd.array(["a", "b", "a", None], dtype="string")})
    >>> s = conversation_stats(df)
    >>> s["turns"].tolist(), s["gaps_s"].tolist()
    ([2, 1], [5.0])
    """
    validate_requests(df)
    if "session_id" not in df or df["session_id"].isna().all():
        return {"sessions": 0, "turns": np.array([], int), "gaps_s": np.array([]), "mean_turns": float("nan")}
    sub = df.loc[df["session_id"].notna(), ["session_id", "arrival_s"]]
    codes, uniques = pd.factorize(sub["session_id"])
    t = sub["arrival_s"].to_numpy(dtype=float)
    order = np.lexsort((t, codes))
    c, ts = codes[order], t[order]
    same = c[1:] == c[:-1]
    turns = np.bincount(codes)
    return {
        "sessions": int(len(uniques)),
        "turns": turns,
        "gaps_s": np.diff(ts)[same],
        "mean_turns": float(turns.mean()),
    }


def failure_rates(df: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    """Failure rate (share of requests flagged ``failed``) grouped by ``model``, ``log_type`` or ``hour`` of day.

    Rows whose ``failed`` is NA (sources without failure information) are not counted; ``known`` says how many were.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"arrival_s": [0.0, 1, 2], "input_tokens": 1, "output_tokens": [0, 1, 1],
    ...                    "model": ["A", "A", "B"], "failed": pd.array([True, False, False], dtype="boolean")})
    >>> failure_rates(df)["failure_rate"].tolist()
    [0.5, 0.0]
    """
    validate_requests(df)
    V.one_of("by", by, ("model", "log_type", "hour"))
    if "failed" not in df:
        raise ValueError("df has no 'failed' column")
    if by == "hour":
        clock, _ = _clock(df, None)
        key = pd.Series((np.floor(clock / 3600) % 24).astype(int), name="hour")
    else:
        key = df[by].astype("string").fillna("(unknown)").rename(by)
    failed = df["failed"]
    known = failed.notna()
    g = pd.DataFrame({by: key.to_numpy(), "failed": failed.fillna(False).astype(bool).to_numpy(),
                      "known": known.to_numpy()})
    agg = g.groupby(by, observed=True).agg(requests=("known", "size"), known=("known", "sum"), failed=("failed", "sum"))
    agg["failure_rate"] = agg["failed"] / agg["known"].where(agg["known"] > 0)
    return agg.reset_index()


def _idc(t: np.ndarray, window_s: float) -> float:
    from ..arrivals import index_of_dispersion

    try:
        return float(index_of_dispersion(t, window_s))
    except ValueError:  # fewer than two complete windows
        return float("nan")


def summarize(df: pd.DataFrame, *, window_s: float = 1200.0, seed: Seed = 0, label: str = "") -> dict:
    """One row of numbers for a side-by-side comparison of services: rate, burstiness, lengths, correlation.

    ``gap_cv`` is the CV of all (dequantized) gaps; ``idc_60s`` the index of dispersion of per-minute counts, which
    needs no dequantization (1 for Poisson, larger for bursty traffic); the window columns summarize
    :func:`window_gamma_fits`; ``zipf_ks`` and ``lognormal_ks`` are the request-length fits' KS distances.

    Examples
    --------
    >>> from workbench import arrivals
    >>> import pandas as pd
    >>> t = arrivals.arrival_times(arrivals.Gamma(rate_rps=1.0, shape=0.5), 5000, seed=0)
    >>> df = pd.DataFrame({"arrival_s": t, "input_tokens": np.arange(1, 5001), "output_tokens": np.arange(5000) % 7})
    >>> s = summarize(df, window_s=1200.0)
    >>> round(s["gap_cv"], 1)
    1.4
    """
    validate_requests(df)
    t = df["arrival_s"].to_numpy(dtype=float)
    res = _resolution_for(df, None)
    tq = dequantize(t, res, seed=seed)
    gaps = np.diff(tq)
    fits = window_gamma_fits(df, window_s, seed=seed)
    fitted = fits.dropna(subset=["shape"])
    rr = request_response(df)
    zipf = fit_zipf(df["input_tokens"].to_numpy())
    logn = fit_lognormal(df["input_tokens"].to_numpy())
    return {
        "trace": label or str(df.attrs.get("source", "")),
        "requests": int(len(df)),
        "duration_s": float(t[-1] - t[0]),
        "rate_rps": float(len(df) / max(t[-1] - t[0], 1e-9)),
        "gap_cv": float(gaps.std(ddof=1) / gaps.mean()),
        "idc_60s": _idc(t, 60.0),
        "windows": int(len(fitted)),
        "median_shape": float(fitted["shape"].median()) if len(fitted) else float("nan"),
        "share_windows_shape_lt_1": float((fitted["shape"] < 1).mean()) if len(fitted) else float("nan"),
        "share_gamma_better": float(fitted["gamma_better"].mean()) if len(fitted) else float("nan"),
        "mean_input_tokens": float(df["input_tokens"].mean()),
        "median_input_tokens": float(df["input_tokens"].median()),
        "mean_output_tokens": float(df["output_tokens"].mean()),
        "median_output_tokens": float(df["output_tokens"].median()),
        "zipf_alpha": zipf.params["alpha"],
        "zipf_ks": zipf.ks,
        "lognormal_ks": logn.ks,
        "spearman_in_out": rr.attrs["spearman"],
    }
