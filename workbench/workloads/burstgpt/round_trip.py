"""The fit-generate-fit round trip of the BurstGPT-style generator: are the parameters recovered within their sampling
error? :func:`round_trip` compares every parameter with its standard error, :func:`round_trip_summary` reduces
several round trips to one row each."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from ..._contracts import accepts, output
from ..._rng import Seed, spawn
from .model import BurstGPTModel, fit_model, generate

__all__ = ["RoundTrip", "round_trip", "round_trip_summary"]


@output
@dataclass(frozen=True)
class RoundTrip:
    """:func:`round_trip`'s answer: the per-parameter table and the two models it compares.

    Attributes
    ----------
    table : DataFrame
        One row per parameter: ``parameter``, ``window`` (-1 for the global ones), ``fit``, ``refit``, ``se`` and
        ``z = (refit - fit) / se``.
    fit, refit : BurstGPTModel
        The model fitted to the trace and the one re-fitted to what it generated.
    """

    table: pd.DataFrame
    fit: BurstGPTModel
    refit: BurstGPTModel


def _shape_se(shape: np.ndarray, n_gaps: np.ndarray) -> np.ndarray:
    """Asymptotic standard error of the Gamma shape MLE: 1 / sqrt(n (trigamma(k) - 1/k))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / np.sqrt(n_gaps * (special.polygamma(1, shape) - 1.0 / shape))


@accepts()
def round_trip(df: pd.DataFrame, *, window_s: float = 1200.0, seed: Seed = 0, min_gaps: int = 20) -> RoundTrip:
    """Fit ``df``, generate from the fit, re-fit, and compare the parameters with their sampling error.

    Returns a :class:`RoundTrip`: the two models and a table with one row per parameter (per-window shapes and rates,
    Zipf exponent, response slope) holding the fitted value, the re-fitted value, the standard error of the re-fit
    (asymptotic for the Gamma shape and the Zipf MLE, Poisson-count for rates, least-squares for the slope) and
    ``z = (refit - fit) / se``. Parameters are recovered within sampling error when ``|z|`` is small (about 95%
    below 2).

    Examples
    --------
    >>> from workbench.workloads.burstgpt import from_params
    >>> df = generate(from_params(4 * 1200.0, 2.0, shape=0.5), seed=5)
    >>> rt = round_trip(df, seed=1)
    >>> bool((rt.table["z"].abs() < 4).all())
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
    return RoundTrip(out, fit, refit)


@accepts()
def round_trip_summary(round_trips: dict[str, RoundTrip | pd.DataFrame]) -> pd.DataFrame:
    """One row per round trip (:func:`round_trip` answers, or their tables, by trace name): ``trace``, ``parameters``,
    ``share_within_2se`` (the share of parameters with ``|z| < 2``; about 95% when only sampling error separates the
    fit from the re-fit) and ``max_abs_z``.

    Examples
    --------
    >>> rt = pd.DataFrame({"z": [0.5, -1.0, 3.0, 1.9]})
    >>> round_trip_summary({"t": rt}).to_dict("records")
    [{'trace': 't', 'parameters': 4, 'share_within_2se': 0.75, 'max_abs_z': 3.0}]
    """
    tables = {name: rt.table if isinstance(rt, RoundTrip) else rt for name, rt in round_trips.items()}
    rows = [
        {
            "trace": name,
            "parameters": int(len(rt)),
            "share_within_2se": float((rt["z"].abs() < 2).mean()),
            "max_abs_z": float(rt["z"].abs().max()),
        }
        for name, rt in tables.items()
    ]
    return pd.DataFrame(rows, columns=["trace", "parameters", "share_within_2se", "max_abs_z"])


def _count_dispersion(shape: float | np.ndarray) -> float | np.ndarray:
    """Index of dispersion of counts of a long window of a Gamma renewal process: CV^2 = 1/shape."""
    return 1.0 / shape
