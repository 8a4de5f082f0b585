"""Time profiles of a request trace: requests and tokens per hour of day and day of week, and periodicity."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import _validate as V
from ..._contracts import accepts
from ..schema import validate_requests


def _clock(df: pd.DataFrame, origin_s_of_day: float | None) -> tuple[np.ndarray, bool]:
    off = origin_s_of_day if origin_s_of_day is not None else df.attrs.get("origin_s_of_day")
    known = off is not None
    return df["arrival_s"].to_numpy(dtype=float) + (float(off) if known else 0.0), known


@accepts()
def wall_clock(df: pd.DataFrame) -> bool:
    """Whether ``df`` records its wall-clock origin (``attrs["origin_s_of_day"]``, the trace's provenance): then
    :func:`time_profile` bins by hour of day, otherwise by hours from the trace start.

    Examples
    --------
    >>> import pandas as pd
    >>> wall_clock(pd.DataFrame({"arrival_s": [0.0]}))
    False
    """
    return df.attrs.get("origin_s_of_day") is not None


@accepts()
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
    ``df.attrs`` (``origin_s_of_day``, ``origin_weekday``: the trace's provenance) unless given; without it hours
    count from the trace start (:func:`wall_clock` tells which).

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
    clock, _ = _clock(df, origin_s_of_day)
    period, n_bins = (3600.0, 24) if by == "hour" else (86400.0, 7)
    shift = 0
    if by == "weekday":
        wd = origin_weekday if origin_weekday is not None else df.attrs.get("origin_weekday")
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
    return out


@accepts()
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
