"""BurstGPT fit -> generate -> fit vs rate scale: does the generator keep the burstiness and lengths it was fitted
to when it is asked for ``rate_scale`` times the traffic?

One point generates a labelled stand-in trace from BurstGPT's published parameters
(:func:`workbench.workloads.burstgpt.stand_in`, ``days`` long), fits the generator to it
(:func:`~workbench.workloads.burstgpt.fit_model`), generates ``rate_scale`` times the rate from the fit, and re-fits
the generated table. Reported: the mean rate ratio (should equal ``rate_scale``), the median per-window Gamma shape
and the Zipf exponent before and after.

``burstgpt-trace-analysis`` is BurstGPT's analysis of one request trace (BurstGPT, or its labelled stand-in of the
``scale``'s days when its files are absent, or a real production trace of
:data:`~workbench.workloads.trace_analysis.REAL_TRACES`), optionally one model's or one log type's requests
(:func:`workbench.workloads.trace_analysis.analyze`): per-window Gamma fits, a BurstGPT-style regeneration at
``rate_scale`` times the rate from the trace's own fit, both arrival-rate series, the request-length tail with its
Zipf and lognormal fits, and request-response bins. Its rows are tidy by ``kind``: one ``summary``, ``series`` (one
row per bin of each rate series), ``fits`` (one per window), ``length`` and ``length_fit`` (the tail and the fits on
their grid), ``request_response`` (one per request bin) and ``menu`` (the trace's models and log types, what a
selection may name).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._rng import spawn
from ..workloads import burstgpt
from ..workloads import trace_analysis as ta
from ._space import Param, experiment

__all__ = ["burstgpt_round_trip", "burstgpt_trace_analysis", "ALL", "BURSTGPT"]

#: A selection's value that keeps every model (or log type).
ALL = "(all)"
#: The ``trace`` choice that names BurstGPT (its stand-in when its files are absent).
BURSTGPT = "BurstGPT"

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


def _trace(trace: str, scale: str) -> pd.DataFrame:
    if trace == BURSTGPT:
        return ta.burstgpt_trace(scale)
    df = ta.real_trace(trace)
    if df is None:
        raise FileNotFoundError(f"trace {trace!r} needs {ta.REAL_TRACES[trace]} on the data search path")
    return df


@experiment(
    "burstgpt-trace-analysis",
    version="1",
    small={"window_s": 1200.0, "rate_scale": [0.5, 2.0]},
    params=[
        Param(
            "trace",
            BURSTGPT,
            choices=(BURSTGPT, *ta.REAL_TRACES),
            seeded=False,
            doc="request trace (BurstGPT: its stand-in generated from the paper's parameters when its files are absent)",
        ),
        Param(
            "scale",
            "quick",
            choices=tuple(ta.STAND_IN_DAYS),
            seeded=False,
            doc="days of BurstGPT's stand-in (quick: 3, full: 7; BurstGPT's own files are used when present)",
        ),
        Param("model", ALL, seeded=False, doc=f"the requests of one model of the trace ({ALL!r}: every model)"),
        Param("log_type", ALL, seeded=False, doc=f"the requests of one log type ({ALL!r}: every log type)"),
        Param(
            "window_s",
            1200.0,
            "s",
            low=300.0,
            high=3600.0,
            label="window",
            doc="window of the Gamma fits and of the regeneration (BurstGPT's: 20 minutes)",
        ),
        Param(
            "rate_scale",
            1.0,
            "",
            low=0.25,
            high=8.0,
            log=True,
            label="rate scale",
            doc="multiplier of the fitted rate in the regeneration",
        ),
    ],
)
def burstgpt_trace_analysis(*, trace, scale, model, log_type, window_s, rate_scale, seed):
    """BurstGPT's analysis of one trace (or one model's or log type's requests of it) and its regeneration."""
    full = _trace(trace, scale)
    df = ta.select(full, model=None if model == ALL else model, log_type=None if log_type == ALL else log_type)
    out = ta.analyze(df, window_s=window_s, rate_scale=rate_scale, seed=seed)
    s, rr = out.summary, out.request_response
    summary = {
        "requests": len(df),
        "stand_in": bool(df.attrs.get("stand_in", False)),
        "rate_rps": float(s.rate_rps),
        "gap_cv": float(s.gap_cv),
        "idc_60s": float(s.idc_60s),
        "median_shape": float(s.median_shape),
        "share_windows_shape_lt_1": float(s.share_windows_shape_lt_1),
        "share_gamma_better": float(s.share_gamma_better),
        "zipf_alpha": float(s.zipf_alpha),
        "response_slope": float(out.model.response_slope),
        "spearman": float(rr.spearman),
        "generated_requests": len(out.generated),
        "generated_span_s": float(out.generated["arrival_s"].iloc[-1]),
    }
    menus = [
        pd.DataFrame({"kind": "menu", "menu": column, "value": sorted(map(str, full[column].dropna().unique()))})
        for column in ("model", "log_type")
    ]
    length = out.length
    return pd.concat(
        [
            pd.DataFrame([{"kind": "summary", **summary}]),
            *(
                pd.DataFrame({"kind": "series", "series": name, "start_s": r["start_s"], "rate_per_s": r["rate_per_s"]})
                for name, r in out.series.items()
            ),
            pd.DataFrame(
                {"kind": "fits", "start_s": out.fits["start_s"], "cv": out.fits["cv"], "shape": out.fits["shape"]}
            ),
            pd.DataFrame({"kind": "length", "length": length["values"], "ccdf": length["ccdf"]}),
            *(
                pd.DataFrame({"kind": "length_fit", "fit": label, "length": length["grid"], "ccdf": y})
                for label, y in length["fits"].items()
            ),
            rr.table.assign(kind="request_response"),
            *menus,
        ],
        ignore_index=True,
    )
