"""A BurstGPT-style workload generator: "modeled scaling" of a real trace.

(This module is longer than ~500 lines since the formatter spread its long calls: the model record, its fit, the
generator, the parameter files and the fit-generate-fit round trip share private helpers. The round trip and the
parameter files are the next split, into their own modules.)

BurstGPT (Wang et al., KDD 2025) describes its traces with a few models and scales them up by re-sampling from those
models instead of replaying the trace faster. This module does the same with three parts, each fitted from a trace by
:func:`fit_model` (or set by hand with :func:`from_params`; the paper's starting point is Gamma shape 0.5 and Zipf
exponent 1.1):

* **Arrivals**: a piecewise Gamma renewal process whose (shape, rate) change from window to window (20 minutes by
  default). Each window's parameters are the maximum-likelihood fit of that window in the source trace
  (:func:`workbench.workloads.characterize.window_gamma_fits`); generation is one vectorized call to
  :func:`workbench.arrivals.piecewise_arrivals` with CV = 1/sqrt(shape).
* **Token lengths**: request lengths from a truncated Zipf law fitted by maximum likelihood; the response is drawn
  conditional on the request, ``log(response) = a + b log(request) + sigma * N(0, 1)`` (least squares on the log-log
  cloud of successful requests), so the response grows with the request when ``b > 0``, with the spread the trace has.
* **Failures**: Bernoulli per window with that window's failure share; a failed request has zero response tokens,
  as in BurstGPT.

**Rate scaling** divides the time axis by ``rate_scale``: the same sequence of windows, compressed, so every window's
rate is multiplied and its CV (burstiness) is kept. A round trip (fit, generate, re-fit) recovers the parameters
within sampling error (:func:`round_trip`; :func:`round_trip_summary` gives the share of parameters within two
standard errors), which the tests and the notebook check.

:func:`stand_in` builds the clearly labelled stand-in the notebook uses when the BurstGPT files are not on the data
search path: the paper's Gamma shape 0.5 and Zipf 1.1, with the other ingredients (rates, diurnal profile, response
model, failure share, model mix) set to stated assumptions, not measured values.

Examples
--------
>>> m = from_params(duration_s=7200.0, rate_rps=1.0, shape=0.5, zipf_alpha=1.1)
>>> df = generate(m, seed=0)
>>> len(df) > 0, list(df.columns)[:3]
(True, ['arrival_s', 'input_tokens', 'output_tokens'])
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from .. import _validate as V
from .._rng import Seed, generator, spawn
from ..arrivals import piecewise_arrivals
from . import characterize as C
from .schema import standardize, validate_requests

__all__ = [
    "BurstGPTModel",
    "from_params",
    "fit_model",
    "generate",
    "sample_requests",
    "save_params",
    "load_params",
    "round_trip",
    "round_trip_summary",
    "stand_in",
    "STAND_IN_ASSUMPTIONS",
]


@dataclass(frozen=True)
class BurstGPTModel:
    """Parameters of the generator; arrays have one entry per window.

    Attributes
    ----------
    window_s : float
        Window length (seconds).
    rate_rps, shape, failure_prob : ndarray
        Per-window mean arrival rate, Gamma shape (CV = 1/sqrt(shape)) and failure probability.
    zipf_alpha : float
        Exponent of the truncated Zipf law of request lengths on ``1..request_max``.
    request_max : int
    response_intercept, response_slope, response_sigma : float
        ``log(response) = intercept + slope * log(request) + sigma * N(0, 1)``.
    response_max : int
        Responses are clipped to ``1..response_max`` (before failures zero them).
    model, log_type : str or None
        Labels written into the generated table.
    """

    window_s: float
    rate_rps: np.ndarray
    shape: np.ndarray
    failure_prob: np.ndarray
    zipf_alpha: float
    request_max: int
    response_intercept: float
    response_slope: float
    response_sigma: float
    response_max: int
    model: str | None = None
    log_type: str | None = None
    source: str = field(default="parameters", compare=False)

    def __post_init__(self) -> None:
        V.positive("window_s", self.window_s)
        rate = V.array_1d("rate_rps", self.rate_rps, min_size=1, low=0.0)
        shape = V.array_1d("shape", self.shape, min_size=1, low=0.0, low_inclusive=False)
        fail = V.array_1d("failure_prob", self.failure_prob, min_size=1, low=0.0, high=1.0)
        if not (rate.size == shape.size == fail.size):
            raise ValueError(
                f"rate_rps, shape and failure_prob must have one entry per window; got sizes {rate.size}, "
                f"{shape.size}, {fail.size}"
            )
        object.__setattr__(self, "rate_rps", rate)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "failure_prob", fail)
        V.positive("zipf_alpha", self.zipf_alpha)
        V.integer("request_max", self.request_max, minimum=1)
        V.finite("response_intercept", self.response_intercept)
        V.finite("response_slope", self.response_slope)
        V.nonnegative("response_sigma", self.response_sigma)
        V.integer("response_max", self.response_max, minimum=1)

    @property
    def n_windows(self) -> int:
        return int(self.rate_rps.size)

    @property
    def duration_s(self) -> float:
        return self.window_s * self.n_windows

    @property
    def expected_requests(self) -> float:
        return float(self.rate_rps.sum() * self.window_s)

    def summary(self) -> dict:
        """Scalar summary for tables: rates, shapes, Zipf exponent, response model."""
        return {
            "windows": self.n_windows,
            "window_s": self.window_s,
            "mean_rate_rps": float(self.rate_rps.mean()),
            "median_shape": float(np.median(self.shape)),
            "zipf_alpha": self.zipf_alpha,
            "response_slope": self.response_slope,
            "response_sigma": self.response_sigma,
            "mean_failure_prob": float(self.failure_prob.mean()),
        }


def from_params(
    duration_s: float,
    rate_rps: float | np.ndarray,
    *,
    shape: float | np.ndarray = 0.5,
    zipf_alpha: float = 1.1,
    window_s: float = 1200.0,
    request_max: int = 16_384,
    response_intercept: float = 3.5,
    response_slope: float = 0.3,
    response_sigma: float = 0.8,
    response_max: int = 8_192,
    failure_prob: float | np.ndarray = 0.0,
    model: str | None = None,
    log_type: str | None = None,
) -> BurstGPTModel:
    """A generator model from user parameters (the paper's starting point: shape 0.5, Zipf 1.1).

    ``rate_rps``, ``shape`` and ``failure_prob`` are scalars or one value per window; the number of windows is
    ``ceil(duration_s / window_s)``. The response defaults (intercept 3.5, slope 0.3, sigma 0.8 in log space) are
    assumptions, not BurstGPT measurements: fit a trace with :func:`fit_model` for measured ones.

    Examples
    --------
    >>> m = from_params(3600.0, 2.0, window_s=600.0)
    >>> m.n_windows, float(m.shape[0])
    (6, 0.5)
    """
    duration_s = V.positive("duration_s", duration_s)
    window_s = V.positive("window_s", window_s)
    n = max(1, math.ceil(duration_s / window_s - 1e-9))

    def per_window(name, v):
        a = np.asarray(v, dtype=float)
        if a.ndim == 0:
            return np.full(n, float(a))
        if a.shape != (n,):
            raise ValueError(f"{name} must be a scalar or have one value per window ({n}), got shape {a.shape}")
        return a

    return BurstGPTModel(
        window_s=window_s,
        rate_rps=per_window("rate_rps", rate_rps),
        shape=per_window("shape", shape),
        failure_prob=per_window("failure_prob", failure_prob),
        zipf_alpha=zipf_alpha,
        request_max=request_max,
        response_intercept=response_intercept,
        response_slope=response_slope,
        response_sigma=response_sigma,
        response_max=response_max,
        model=model,
        log_type=log_type,
    )


def fit_model(
    df: pd.DataFrame, *, window_s: float = 1200.0, seed: Seed = 0, min_gaps: int = 20, resolution_s: float | None = None
) -> BurstGPTModel:
    """Fit the generator to a request table (a real trace or a generated one).

    Per window: rate = requests / ``window_s``, shape = Gamma MLE of the (dequantized) gaps; windows with fewer than
    ``min_gaps`` gaps take the median fitted shape (their rate is still their own). Failure probability per window is
    the share of ``failed`` rows (0 where the source records no failures). Request lengths: truncated Zipf MLE.
    Responses: least squares of ``log(output)`` on ``log(input)`` over successful rows with both lengths >= 1.

    Examples
    --------
    >>> m = from_params(6 * 1200.0, 2.0, shape=0.5)
    >>> fitted = fit_model(generate(m, seed=1))
    >>> bool(abs(np.median(fitted.shape) - 0.5) < 0.1), bool(abs(fitted.zipf_alpha - 1.1) < 0.05)
    (True, True)
    """
    validate_requests(df)
    fits = C.window_gamma_fits(df, window_s, seed=seed, min_gaps=min_gaps, resolution_s=resolution_s, start_s=0.0)
    shape = fits["shape"].to_numpy()
    if np.all(np.isnan(shape)):
        raise ValueError(f"no window of {window_s} s has {min_gaps} gaps: use a longer window_s or a longer trace")
    shape = np.where(np.isnan(shape), np.nanmedian(shape), shape)
    t = df["arrival_s"].to_numpy(dtype=float)
    w = np.floor(t / window_s).astype(np.int64)
    nw = len(fits)
    if "failed" in df and df["failed"].notna().any():
        f = df["failed"].fillna(False).to_numpy(dtype=bool)
        fail = np.bincount(w, weights=f, minlength=nw) / np.maximum(np.bincount(w, minlength=nw), 1)
        ok = ~f
    else:
        fail = np.zeros(nw)
        ok = np.ones(len(df), bool)
    x = df["input_tokens"].to_numpy(dtype=float)
    y = df["output_tokens"].to_numpy(dtype=float)
    zipf = C.fit_zipf(x)
    use = ok & (x >= 1) & (y >= 1)
    if use.sum() < 3:
        raise ValueError("df needs at least 3 successful requests with input and output tokens >= 1")
    lx, ly = np.log(x[use]), np.log(y[use])
    if np.ptp(lx) > 0:
        slope, intercept = np.polyfit(lx, ly, 1)
    else:
        slope, intercept = 0.0, float(ly.mean())
    sigma = float(np.std(ly - (intercept + slope * lx)))
    return BurstGPTModel(
        window_s=float(window_s),
        rate_rps=fits["rate_rps"].to_numpy(dtype=float),
        shape=shape,
        failure_prob=fail,
        zipf_alpha=zipf.params["alpha"],
        request_max=int(zipf.params["x_max"]),
        response_intercept=float(intercept),
        response_slope=float(slope),
        response_sigma=sigma,
        response_max=int(max(y.max(), 1)),
        model=_single_label(df, "model"),
        log_type=_single_label(df, "log_type"),
        source=str(df.attrs.get("source", "request table")),
    )


def save_params(model: BurstGPTModel, path) -> Path:
    """Write a model as JSON (per-window arrays as lists), atomically; :func:`load_params` reads it back.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> m = from_params(3600.0, 2.0)
    >>> back = load_params(save_params(m, pathlib.Path(tempfile.mkdtemp()) / "m.json"))
    >>> np.array_equal(back.rate_rps, m.rate_rps), back.zipf_alpha == m.zipf_alpha
    (True, True)
    """
    from ..cache import atomic_path

    if not isinstance(model, BurstGPTModel):
        raise TypeError(f"model must be a BurstGPTModel, got {type(model).__name__}")
    doc = {f.name: getattr(model, f.name) for f in fields(model)}
    doc = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in doc.items()}
    p = Path(path).expanduser()
    with atomic_path(p) as tmp:
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
    return p


def load_params(path) -> BurstGPTModel:
    """Read a model from JSON: a file :func:`save_params` wrote (every field), or the keyword arguments of
    :func:`from_params` (``{"duration_s": 3600, "rate_rps": 2.0, "shape": 0.5, ...}``)."""
    p = Path(path).expanduser()
    try:
        doc = json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{p}: expected a JSON object of model parameters")
    names = {f.name for f in fields(BurstGPTModel)}
    try:
        if "duration_s" in doc:
            return from_params(**doc)
        unknown = set(doc) - names
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(sorted(unknown))}")
        values: dict[str, Any] = {k: np.asarray(v, float) if isinstance(v, list) else v for k, v in doc.items()}
        return BurstGPTModel(**values)
    except TypeError as exc:
        raise ValueError(f"{p}: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{p}: {exc}") from None


def _single_label(df: pd.DataFrame, col: str) -> str | None:
    if col not in df:
        return None
    vals = df[col].dropna().unique()
    return str(vals[0]) if len(vals) == 1 else None


def sample_requests(model: BurstGPTModel, n: int, *, seed: Seed = None) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` (request, response) token-length pairs from the model's length laws (no failures applied).

    Examples
    --------
    >>> req, resp = sample_requests(from_params(60.0, 1.0), 1000, seed=0)
    >>> int(req.min()) >= 1, int(resp.min()) >= 1
    (True, True)
    """
    n = V.integer("n", n, minimum=0)
    rng = generator(seed)
    k = np.arange(1, model.request_max + 1, dtype=float)
    logp = -model.zipf_alpha * np.log(k)
    cdf = np.cumsum(np.exp(logp - special.logsumexp(logp)))
    cdf[-1] = 1.0
    req = np.searchsorted(cdf, rng.random(n), side="right") + 1
    req = np.minimum(req, model.request_max).astype(np.int64)
    mu = model.response_intercept + model.response_slope * np.log(req)
    resp = np.rint(np.exp(mu + model.response_sigma * rng.standard_normal(n)))
    resp = np.clip(resp, 1, model.response_max).astype(np.int64)
    return req, resp


def generate(model: BurstGPTModel, *, rate_scale: float = 1.0, seed: Seed = None) -> pd.DataFrame:
    """Generate a request table from the model.

    Parameters
    ----------
    model : BurstGPTModel
    rate_scale : float
        Divide the time axis by this factor: ``rate_scale`` times the request rate in every window, same CV, the
        whole trace ``rate_scale`` times shorter.
    seed : int, Generator or None

    Returns
    -------
    DataFrame
        The request schema (``failed`` rows have ``output_tokens == 0``); ``attrs["generator"]`` records the model's
        summary and the scale.

    Examples
    --------
    >>> m = from_params(3600.0, 1.0)
    >>> a, b = generate(m, seed=3), generate(m, rate_scale=2.0, seed=3)
    >>> len(a) == len(b), float(b["arrival_s"].max()) <= 1800.0
    (True, True)
    """
    if not isinstance(model, BurstGPTModel):
        raise TypeError(f"model must be a BurstGPTModel, got {type(model).__name__}")
    rate_scale = V.positive("rate_scale", rate_scale)
    r_arr, r_len, r_fail = spawn(seed, 3)
    starts = model.window_s * np.arange(model.n_windows)
    t, row = piecewise_arrivals(
        starts, model.window_s, model.rate_rps, 1.0 / np.sqrt(model.shape), family="gamma", seed=r_arr
    )
    req, resp = sample_requests(model, t.size, seed=r_len)
    failed = r_fail.random(t.size) < model.failure_prob[row]
    resp = np.where(failed, 0, resp)
    df = pd.DataFrame({"arrival_s": t / rate_scale, "input_tokens": req, "output_tokens": resp})
    n = len(df)
    if model.model is not None:
        df["model"] = pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), categories=[model.model])
    if model.log_type is not None:
        df["log_type"] = pd.Categorical.from_codes(np.zeros(n, dtype=np.int8), categories=[model.log_type])
    df["failed"] = pd.array(failed, dtype="boolean")
    out = standardize(df)
    out.attrs = {
        "source": f"generated (BurstGPT-style) from {model.source}",
        "format": "generated",
        "origin": "trace start",
        "origin_s_of_day": None,
        "origin_weekday": None,
        "time_resolution_s": 0.0,
        "generator": {**model.summary(), "rate_scale": rate_scale},
    }
    return out


def _shape_se(shape: np.ndarray, n_gaps: np.ndarray) -> np.ndarray:
    """Asymptotic standard error of the Gamma shape MLE: 1 / sqrt(n (trigamma(k) - 1/k))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / np.sqrt(n_gaps * (special.polygamma(1, shape) - 1.0 / shape))


def round_trip(df: pd.DataFrame, *, window_s: float = 1200.0, seed: Seed = 0, min_gaps: int = 20) -> pd.DataFrame:
    """Fit ``df``, generate from the fit, re-fit, and compare the parameters with their sampling error.

    Returns a DataFrame with one row per parameter (per-window shapes and rates, Zipf exponent, response slope) holding
    the fitted value, the re-fitted value, the standard error of the re-fit (asymptotic for the Gamma shape and the
    Zipf MLE, Poisson-count for rates, least-squares for the slope) and ``z = (refit - fit) / se``. Parameters are
    recovered within sampling error when ``|z|`` is small (about 95% below 2).

    Examples
    --------
    >>> df = generate(from_params(4 * 1200.0, 2.0, shape=0.5), seed=5)
    >>> rt = round_trip(df, seed=1)
    >>> bool((rt["z"].abs() < 4).all())
    True
    """
    rngs = spawn(seed, 2)
    fit = fit_model(df, window_s=window_s, seed=rngs[0], min_gaps=min_gaps)
    gen = generate(fit, seed=rngs[1])
    refit = fit_model(gen, window_s=window_s, seed=rngs[0], min_gaps=min_gaps, resolution_s=0.0)
    nw = min(fit.n_windows, refit.n_windows)
    counts = refit.rate_rps[:nw] * window_s
    gaps = np.maximum(counts - 1, 1)
    se_shape = _shape_se(refit.shape[:nw], gaps)
    win = np.flatnonzero(counts >= min_gaps + 1)
    fit_rate, fit_shape = fit.rate_rps[:nw][win], fit.shape[:nw][win]
    se_rate = np.sqrt(np.maximum(fit_rate * window_s, 1.0) * _count_dispersion(fit_shape)) / window_s

    def pairs(shape_values, rate_values):  # window by window: shape then rate
        return np.column_stack([shape_values, rate_values]).ravel()

    per_window = pd.DataFrame(
        {
            "parameter": np.tile(np.array(["shape", "rate_rps"]), win.size),
            "window": np.repeat(win, 2),
            "fit": pairs(fit_shape, fit_rate),
            "refit": pairs(refit.shape[:nw][win], refit.rate_rps[:nw][win]),
            "se": pairs(se_shape[win], se_rate),
        }
    )
    rows = []
    x = gen["input_tokens"].to_numpy(dtype=float)
    lx = np.log(x[x >= 1])
    # Zipf MLE standard error: 1 / sqrt(n * Var_model(log X)); use the sample variance of log X
    rows.append(("zipf_alpha", -1, fit.zipf_alpha, refit.zipf_alpha, 1.0 / math.sqrt(lx.size * lx.var())))
    rows.append(
        (
            "response_slope",
            -1,
            fit.response_slope,
            refit.response_slope,
            fit.response_sigma / math.sqrt(lx.size * max(lx.var(), 1e-12)),
        )
    )
    out = pd.concat([per_window, pd.DataFrame(rows, columns=per_window.columns)], ignore_index=True)
    out["z"] = (out["refit"] - out["fit"]) / out["se"]
    out.attrs = {"fit": fit.summary(), "refit": refit.summary()}
    return out


def round_trip_summary(round_trips: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per round trip (:func:`round_trip` tables by trace name): ``trace``, ``parameters``,
    ``share_within_2se`` (the share of parameters with ``|z| < 2``; about 95% when only sampling error separates the
    fit from the re-fit) and ``max_abs_z``.

    Examples
    --------
    >>> rt = pd.DataFrame({"z": [0.5, -1.0, 3.0, 1.9]})
    >>> round_trip_summary({"t": rt}).to_dict("records")
    [{'trace': 't', 'parameters': 4, 'share_within_2se': 0.75, 'max_abs_z': 3.0}]
    """
    rows = [
        {
            "trace": name,
            "parameters": int(len(rt)),
            "share_within_2se": float((rt["z"].abs() < 2).mean()),
            "max_abs_z": float(rt["z"].abs().max()),
        }
        for name, rt in round_trips.items()
    ]
    return pd.DataFrame(rows, columns=["trace", "parameters", "share_within_2se", "max_abs_z"])


def _count_dispersion(shape: float | np.ndarray) -> float | np.ndarray:
    """Index of dispersion of counts of a long window of a Gamma renewal process: CV^2 = 1/shape."""
    return 1.0 / shape


#: What the stand-in assumes beyond the paper's two published parameters (Gamma shape 0.5, Zipf exponent 1.1).
STAND_IN_ASSUMPTIONS = {
    "conversation_rate_rps": "0.20 mean, diurnal: x (1 + 0.6 sin(2 pi (hour - 8) / 24)) (assumed profile)",
    "api_rate_rps": "0.10 mean, aperiodic: each 20-min window x lognormal(sigma 0.8), mean 1 (assumed)",
    "gamma_shape": "0.5 in every window, both services (paper's starting point)",
    "zipf_alpha": "1.1 on 1..16384 request tokens (paper's starting point; the cap is assumed)",
    "response": "log(resp) = 3.5 + 0.3 log(req) + 0.8 N(0,1), capped at 8192 (assumed)",
    "failure_prob": "0.01 conversation, 0.03 api (assumed)",
    "model_mix": "ChatGPT 80%, GPT-4 20% (assumed)",
    "timestamps": "floored to whole seconds, as in BurstGPT",
}


def stand_in(*, days: float = 7.0, seed: Seed = 0, window_s: float = 1200.0) -> pd.DataFrame:
    """A clearly labelled BurstGPT stand-in generated from the paper's parameters plus stated assumptions.

    Two services are superposed: conversation traffic with a diurnal rate and API traffic with an aperiodic,
    randomly varying rate, both Gamma(shape 0.5) within each window, request lengths Zipf(1.1); see
    :data:`STAND_IN_ASSUMPTIONS` for every other choice. Timestamps are floored to whole seconds as in BurstGPT, so
    the table round-trips through the BurstGPT v1 CSV format. ``attrs["stand_in"]`` is True and ``attrs["source"]``
    says "stand-in".

    Examples
    --------
    >>> df = stand_in(days=1.0, seed=0)
    >>> df.attrs["stand_in"], sorted(df["log_type"].cat.categories)
    (True, ['api', 'conversation'])
    """
    days = V.positive("days", days)
    rng_conv, rng_api, rng_rate, rng_model = spawn(seed, 4)
    duration = days * 86400.0
    n = max(1, math.ceil(duration / window_s - 1e-9))
    centre_h = (np.arange(n) + 0.5) * window_s / 3600.0
    conv_rate = 0.20 * (1 + 0.6 * np.sin(2 * np.pi * (centre_h - 8) / 24))
    api_rate = 0.10 * rng_rate.lognormal(-0.5 * 0.8**2, 0.8, n)
    common: dict[str, Any] = dict(
        shape=0.5,
        zipf_alpha=1.1,
        window_s=window_s,
        request_max=16_384,
        response_intercept=3.5,
        response_slope=0.3,
        response_sigma=0.8,
        response_max=8_192,
    )
    conv = generate(
        from_params(n * window_s, conv_rate, failure_prob=0.01, log_type="conversation", **common), seed=rng_conv
    )
    api = generate(from_params(n * window_s, api_rate, failure_prob=0.03, log_type="api", **common), seed=rng_api)
    df = pd.concat([conv, api], ignore_index=True)
    df["arrival_s"] = np.floor(df["arrival_s"].to_numpy())
    df = df[df["arrival_s"] < duration]
    df = df.sort_values("arrival_s", kind="stable", ignore_index=True)
    df["log_type"] = df["log_type"].astype(pd.CategoricalDtype(["conversation", "api"]))
    models = np.where(rng_model.random(len(df)) < 0.8, 0, 1).astype(np.int8)
    df["model"] = pd.Categorical.from_codes(models, categories=["ChatGPT", "GPT-4"])
    out = standardize(df)
    out.attrs = {
        "source": "stand-in generated from BurstGPT's published parameters (Gamma shape 0.5, Zipf 1.1) and stated "
        "assumptions; not BurstGPT data",
        "stand_in": True,
        "format": "generated",
        "origin": "day 1 00:00",
        "origin_s_of_day": 0.0,
        "origin_weekday": None,
        "time_resolution_s": 1.0,
        "assumptions": dict(STAND_IN_ASSUMPTIONS),
    }
    return out
