"""The clearly labelled BurstGPT stand-in, generated from the paper's two published parameters plus stated
assumptions, for when the BurstGPT files are not on the data search path."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ... import _validate as V
from ..._contracts import Real, Rule, accepts
from ..._rng import Seed, spawn
from ..schema import standardize
from .model import from_params, generate

__all__ = ["STAND_IN_ASSUMPTIONS", "stand_in"]


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


@accepts(
    Rule(
        ("days", "window_s"),
        lambda days, window_s: days * 86400.0 / window_s <= 1e6,
        lambda days, window_s: (
            f"window_s={window_s:g} s gives {days * 86400.0 / window_s:.3g} windows over {days:g} days, "
            "more than 1,000,000: choose a longer window"
        ),
    ),
    window_s=Real(gt=0.0),
    days=Real(gt=0.0, le=3650.0),
)
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
