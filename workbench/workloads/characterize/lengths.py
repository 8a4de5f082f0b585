"""Token lengths of a request trace: truncated-Zipf, lognormal and exponential fits over the integers, and the response
length against the request length."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from ... import _validate as V
from ..._contracts import Array, Int, Items, Real, accepts, output
from ..schema import validate_requests


@output
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
            from scipy import stats  # imported where used: ~0.5 s at import

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


@accepts()
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


@accepts(x=Array(ge=0.0, min_size=1))
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
    from scipy import optimize  # imported where used: ~0.5 s at import

    res = optimize.minimize_scalar(
        lambda a: a * slog + n * _zipf_logH(a, logk), bounds=(1e-3, 6.0), method="bounded", options={"xatol": 1e-6}
    )
    alpha = float(res.x)
    ll = -float(res.fun)
    ks = _ks_discrete(pos, lambda v: zipf_cdf(v, alpha, top))
    return LengthFit("zipf", {"alpha": alpha, "x_max": top}, n, n_zero, ll, 2 * 1 - 2 * ll, ks)


@accepts(x=Array(ge=0.0, min_size=1))
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


@accepts(x=Array(ge=0.0, min_size=1))
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


@accepts(x=Array(ge=0.0, min_size=1))
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
        {
            "family": f.family,
            "ks": f.ks,
            "aic": f.aic,
            "loglik": f.loglik,
            "n": f.n,
            "n_zero": f.n_zero,
            "params": f.params,
            "fit": f,
        }
        for f in fits
    ]
    return pd.DataFrame(rows).sort_values("ks", ignore_index=True)


@output
@dataclass(frozen=True)
class RequestResponse:
    """:func:`request_response`'s answer: the binned table and the scalars measured beside it.

    Attributes
    ----------
    table : DataFrame
        One row per non-empty log-spaced request bin: ``input_lo``, ``input_hi``, ``n``, ``mean_input``,
        ``mean_output`` and the response quantiles (``q10_output``, ``q50_output``, ``q90_output`` by default).
    spearman : float
        Rank correlation of request and response lengths over the requests that did not fail (NaN if either is
        constant).
    pearson_log : float
        Pearson correlation of ``log1p`` of both lengths (same requests).
    n_zero_request : int
        Requests with zero request tokens, left out of the bins.
    n_failed : int
        Failed requests, left out entirely.
    """

    table: pd.DataFrame
    spearman: float
    pearson_log: float
    n_zero_request: int
    n_failed: int


@accepts(quantiles=Items(Real(gt=0.0, lt=1.0), min_size=1), bins=Int(ge=1, le=10**4))
def request_response(df: pd.DataFrame, *, bins: int = 20, quantiles=(0.1, 0.5, 0.9)) -> RequestResponse:
    """Response length against request length: log-spaced request bins with the mean and quantiles of the response,
    and the rank and log-log correlations (a :class:`RequestResponse`).

    Requests flagged ``failed`` are left out entirely (a failed request has no response: BurstGPT records zero
    response tokens; their count is ``n_failed``), as the BurstGPT generator's fit leaves them out. Rows with zero
    request tokens are left out of the bins (their count is ``n_zero_request``).

    Examples
    --------
    >>> import pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> x = rng.integers(1, 4000, 5000)
    >>> df = pd.DataFrame({"arrival_s": np.arange(5000.0), "input_tokens": x, "output_tokens": x // 4})
    >>> rr = request_response(df)
    >>> bool(rr.table["mean_output"].is_monotonic_increasing), round(rr.spearman, 2)
    (True, 1.0)
    """
    validate_requests(df)
    bins = V.integer("bins", bins, minimum=1)
    failed = df["failed"].fillna(False).to_numpy(dtype=bool) if "failed" in df else np.zeros(len(df), dtype=bool)
    x = df["input_tokens"].to_numpy(dtype=float)[~failed]
    y = df["output_tokens"].to_numpy(dtype=float)[~failed]
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
    from scipy import stats  # imported where used: ~0.5 s at import

    constant = np.ptp(x) == 0 or np.ptp(y) == 0  # correlation undefined
    return RequestResponse(
        table=res,
        spearman=float("nan") if constant else float(stats.spearmanr(x, y).statistic),
        pearson_log=float("nan") if constant else float(np.corrcoef(np.log1p(x), np.log1p(y))[0, 1]),
        n_zero_request=int((~pos).sum()),
        n_failed=int(failed.sum()),
    )
