"""One row of headline statistics per trace, gathered from the burstiness, time-profile and length analyses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._contracts import accepts, output
from ..._rng import Seed
from ..schema import validate_requests
from .burstiness import _resolution_for, dequantize, window_gamma_fits
from .lengths import fit_lognormal, fit_zipf, request_response


def _idc(t: np.ndarray, window_s: float) -> float:
    from ...arrivals import index_of_dispersion

    try:
        return float(index_of_dispersion(t, window_s))
    except ValueError:  # fewer than two complete windows
        return float("nan")


@output
@dataclass(frozen=True)
class TraceSummary:
    """Headline statistics of one request trace (:func:`summarize`); ``pd.DataFrame(map(dataclasses.asdict, ...))``
    of several is a side-by-side table with one row per trace.

    Attributes
    ----------
    trace : str
        The label given, else the table's ``attrs["source"]``.
    requests, duration_s, rate_rps : int, float, float
        Request count, first-to-last arrival span and mean rate over it.
    gap_cv : float
        CV of all (dequantized) inter-arrival gaps.
    idc_60s : float
        Index of dispersion of per-minute counts, which needs no dequantization (1 for Poisson, larger for bursty
        traffic); NaN with fewer than two complete minutes.
    windows, median_shape, share_windows_shape_lt_1, share_gamma_better : int, float, float, float
        Of :func:`window_gamma_fits`: windows fitted, their median Gamma shape, the share with shape below 1 and the
        share where the Gamma fits better than the exponential (NaN without a fitted window).
    mean_input_tokens, median_input_tokens, mean_output_tokens, median_output_tokens : float
        Request and response lengths.
    zipf_alpha, zipf_ks, lognormal_ks : float
        The request-length fits: Zipf exponent and the Zipf and lognormal KS distances.
    spearman_in_out : float
        Rank correlation of request and response lengths.
    """

    trace: str
    requests: int
    duration_s: float
    rate_rps: float
    gap_cv: float
    idc_60s: float
    windows: int
    median_shape: float
    share_windows_shape_lt_1: float
    share_gamma_better: float
    mean_input_tokens: float
    median_input_tokens: float
    mean_output_tokens: float
    median_output_tokens: float
    zipf_alpha: float
    zipf_ks: float
    lognormal_ks: float
    spearman_in_out: float


@accepts()
def summarize(df: pd.DataFrame, *, window_s: float = 1200.0, seed: Seed = 0, label: str = "") -> TraceSummary:
    """Headline numbers of one trace for a side-by-side comparison of services: rate, burstiness, lengths,
    correlation (see :class:`TraceSummary`).

    Examples
    --------
    >>> from workbench import arrivals
    >>> import pandas as pd
    >>> t = arrivals.arrival_times(arrivals.Gamma(rate_rps=1.0, shape=0.5), 5000, seed=0)
    >>> df = pd.DataFrame({"arrival_s": t, "input_tokens": np.arange(1, 5001), "output_tokens": np.arange(5000) % 7})
    >>> s = summarize(df, window_s=1200.0)
    >>> round(s.gap_cv, 1), s.requests
    (1.4, 5000)
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
    return TraceSummary(
        trace=label or str(df.attrs.get("source", "")),
        requests=int(len(df)),
        duration_s=float(t[-1] - t[0]),
        rate_rps=float(len(df) / max(t[-1] - t[0], 1e-9)),
        gap_cv=float(gaps.std(ddof=1) / gaps.mean()),
        idc_60s=_idc(t, 60.0),
        windows=int(len(fitted)),
        median_shape=float(fitted["shape"].median()) if len(fitted) else float("nan"),
        share_windows_shape_lt_1=float((fitted["shape"] < 1).mean()) if len(fitted) else float("nan"),
        share_gamma_better=float(fitted["gamma_better"].mean()) if len(fitted) else float("nan"),
        mean_input_tokens=float(df["input_tokens"].mean()),
        median_input_tokens=float(df["input_tokens"].median()),
        mean_output_tokens=float(df["output_tokens"].mean()),
        median_output_tokens=float(df["output_tokens"].median()),
        zipf_alpha=zipf.params["alpha"],
        zipf_ks=zipf.ks,
        lognormal_ks=logn.ks,
        spearman_in_out=rr.spearman,
    )
