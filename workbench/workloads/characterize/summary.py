"""One row of headline statistics per trace, gathered from the burstiness, time-profile and length analyses."""

from __future__ import annotations

import numpy as np
import pandas as pd

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
