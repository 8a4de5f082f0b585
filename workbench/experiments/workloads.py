"""BurstGPT fit -> generate -> fit vs rate scale: does the generator keep the burstiness and lengths it was fitted
to when it is asked for ``rate_scale`` times the traffic?

One point generates a labelled stand-in trace from BurstGPT's published parameters
(:func:`workbench.workloads.burstgpt.stand_in`, ``days`` long), fits the generator to it
(:func:`~workbench.workloads.burstgpt.fit_model`), generates ``rate_scale`` times the rate from the fit, and re-fits
the generated table. Reported: the mean rate ratio (should equal ``rate_scale``), the median per-window Gamma shape
and the Zipf exponent before and after.
"""

from __future__ import annotations

import numpy as np

from .._rng import spawn
from ..workloads import burstgpt
from ._space import Param, experiment

__all__ = ["burstgpt_round_trip"]

#: The generator's keyword for the dimensionless rate multiplier (the one line to change if the model renames it).
_RATE_SCALE_KW = "rate_scale"


@experiment(
    "burstgpt-round-trip",
    version="2",  # 2: generate and stand_in draw window by window from keyed block streams (1: one stream per span)
    small={"days": 0.5, "rate_scale": [0.5, 2.0]},
    params=[
        Param(
            "rate_scale",
            1.0,
            "",
            low=0.0,
            high=100.0,
            low_inclusive=False,
            doc="multiplier of the fitted rate in every window",
        ),
        Param("days", 2.0, "d", low=0.1, high=30.0, doc="length of the stand-in source trace"),
        Param("window_s", 1200.0, "s", low=60.0, high=86_400.0, doc="fitting window"),
    ],
)
def burstgpt_round_trip(*, rate_scale, days, window_s, seed):
    """Rate, burstiness and length parameters of a fit before and after generating at ``rate_scale``."""
    rng_source, rng_fit, rng_generate = spawn(seed, 3)
    source = burstgpt.stand_in(days=days, seed=rng_source, window_s=window_s)
    fit = burstgpt.fit_model(source, window_s=window_s, seed=rng_fit)
    generated = burstgpt.generate(fit, seed=rng_generate, **{_RATE_SCALE_KW: rate_scale})
    # the generated trace is rate_scale times shorter: windows of window_s / rate_scale keep the same count per window
    refit = burstgpt.fit_model(generated, window_s=window_s / rate_scale, seed=rng_fit, resolution_s=0.0)
    return {
        "requests": len(generated),
        "rate_ratio": float(refit.rate_rps.mean() / fit.rate_rps.mean()),
        "shape_fit": float(np.median(fit.shape)),
        "shape_refit": float(np.median(refit.shape)),
        "zipf_alpha_fit": float(fit.zipf_alpha),
        "zipf_alpha_refit": float(refit.zipf_alpha),
    }
