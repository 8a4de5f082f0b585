"""The BurstGPT-style generator's model: the :class:`BurstGPTModel` record, set by hand (:func:`from_params`) or
fitted to a trace (:func:`fit_model`), its length laws (:func:`sample_requests`) and the generator (:func:`generate`).
The package docstring (:mod:`workbench.workloads.burstgpt`) describes the three parts and rate scaling.

Examples
--------
>>> m = from_params(duration_s=3600.0, rate_rps=[1.0, 3.0], window_s=1800.0)
>>> m.n_windows, m.expected_requests
(2, 7200.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special

from ... import _validate as V
from ..._contracts import accepts
from ..._rng import Seed, generator
from ...arrivals import piecewise_arrivals
from .. import characterize as C
from ..blocks import BlockPlan, materialize, n_blocks
from ..schema import standardize, validate_requests

__all__ = ["BurstGPTModel", "from_params", "fit_model", "sample_requests", "generate", "generate_plan"]


@accepts()
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

    @accepts()
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


@accepts()
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


@accepts()
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


def _single_label(df: pd.DataFrame, col: str) -> str | None:
    if col not in df:
        return None
    vals = df[col].dropna().unique()
    return str(vals[0]) if len(vals) == 1 else None


@accepts()
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


@accepts()
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
    df = materialize(generate_plan(model, rate_scale=rate_scale), seed)
    rate_scale = float(rate_scale)
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


@accepts()
def generate_plan(model: BurstGPTModel, *, rate_scale: float = 1.0, duration_s: float | None = None) -> BlockPlan:
    """:func:`generate` as a :class:`~workbench.workloads.blocks.BlockPlan`, one block per window of the model.

    Block ``k`` lasts ``window_s / rate_scale`` output seconds and is the model's window ``k mod n_windows`` (windows
    repeat cyclically when ``duration_s`` is longer than the model's duration divided by ``rate_scale``, the
    default): Gamma arrivals at the window's rate and shape, started in equilibrium, then Zipf requests, conditional
    responses and failures, all from the block's own stream. ``generate(model, rate_scale=r, seed=s)`` is this plan
    materialized; ``workbench workload generate burstgpt`` streams it to a file.
    """
    if not isinstance(model, BurstGPTModel):
        raise TypeError(f"model must be a BurstGPTModel, got {type(model).__name__}")
    scale = V.positive("rate_scale", rate_scale)
    block_s = model.window_s / scale
    dur = model.duration_s / scale if duration_s is None else V.positive("duration_s", duration_s)
    n = n_blocks(dur, block_s)
    labels = {c: v for c, v in (("model", model.model), ("log_type", model.log_type)) if v is not None}

    def draw(k: int, rng: np.random.Generator) -> pd.DataFrame:
        w = k % model.n_windows
        span = min(block_s, dur - k * block_s) * scale
        t, _ = piecewise_arrivals(0.0, span, model.rate_rps[w], 1.0 / np.sqrt(model.shape[w]), seed=rng)
        req, resp = sample_requests(model, t.size, seed=rng)
        failed = rng.random(t.size) < model.failure_prob[w]
        df = pd.DataFrame(
            {"arrival_s": k * block_s + t / scale, "input_tokens": req, "output_tokens": np.where(failed, 0, resp)}
        )
        for c, v in labels.items():
            df[c] = pd.Categorical.from_codes(np.zeros(t.size, dtype=np.int8), categories=[v])
        df["failed"] = pd.array(failed, dtype="boolean")
        return df

    reps = np.resize(model.rate_rps, n)
    return BlockPlan(
        n,
        block_s,
        dur,
        draw,
        float(reps.sum() * model.window_s) * min(1.0, dur / (n * block_s)),
        f"BurstGPT-style from {model.source}, rate_scale {scale:g}",
    )
