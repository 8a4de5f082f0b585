"""The characterization people ask for first, as one tidy table: ``workbench workload describe`` and ``compare``.

:func:`describe` gathers the measurements of :mod:`workbench.workloads.characterize` into rows of ``section``,
``metric``, ``value`` and ``unit``: request rate and its hour-of-day profile, inter-arrival CV and index of dispersion,
per-window Gamma fits (BurstGPT's 20-minute windows by default) with the Weibull shape that matches each window's CV,
token-length distributions and their best fits, input/output rank correlation, and conversations, clients and
failures where the table has them. :func:`compare` puts two descriptions side by side with ratios.

Examples
--------
>>> from workbench.workloads import burstgpt
>>> df = burstgpt.generate(burstgpt.from_params(7200.0, 2.0, shape=0.5), seed=0)
>>> d = describe(df)
>>> list(d.columns)
['section', 'metric', 'value', 'unit']
>>> bool(abs(d.set_index("metric").at["median_window_shape", "value"] - 0.5) < 0.1)
True
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import _validate as V
from .._contracts import accepts
from .._rng import Seed
from ..arrivals import weibull_shape_from_cv
from . import characterize as C
from .characterize.burstiness import _resolution_for, dequantize
from .characterize.summary import _idc
from .schema import validate_requests

__all__ = ["describe", "compare", "as_json"]


def _row(section: str, metric: str, value, unit: str = "") -> dict:
    return {"section": section, "metric": metric, "value": float(value), "unit": unit}


@accepts()
def describe(df: pd.DataFrame, *, window_s: float = 1200.0, seed: Seed = 0) -> pd.DataFrame:
    """One row per statistic of a request table (see the module docstring); NaN where a statistic is undefined.

    The hour-of-day profile uses the wall clock where the table records its origin (``attrs["origin_s_of_day"]``),
    else hours from the trace start (the ``profile`` rows' unit says which).
    """
    validate_requests(df)
    window_s = V.positive("window_s", window_s)
    if len(df) < 3:
        raise ValueError(f"a description needs at least 3 requests, got {len(df)}")
    # The numbers of characterize.summarize, computed here once each (its window fits and length fits are the
    # expensive parts, and describe needs more of both).
    t = df["arrival_s"].to_numpy(dtype=float)
    gaps = np.diff(dequantize(t, _resolution_for(df, None), seed=seed))
    duration_s = float(t[-1] - t[0])
    fits = C.window_gamma_fits(df, window_s, seed=seed).dropna(subset=["shape"])
    some = len(fits) > 0
    rows = [
        _row("rate", "requests", len(df), "requests"),
        _row("rate", "duration_s", duration_s, "s"),
        _row("rate", "rate_rps", len(df) / max(duration_s, 1e-9), "req/s"),
        _row("arrivals", "gap_cv", gaps.std(ddof=1) / gaps.mean() if gaps.mean() > 0 else np.nan),
        _row("arrivals", "idc_60s", _idc(t, 60.0)),
        _row("windows", "window_s", window_s, "s"),
        _row("windows", "windows_fitted", len(fits), "windows"),
        _row("windows", "median_window_rate_rps", fits["rate_rps"].median() if some else np.nan, "req/s"),
        _row("windows", "median_window_shape", fits["shape"].median() if some else np.nan),
        _row("windows", "median_window_cv", fits["cv"].median() if some else np.nan),
        _row(
            "windows",
            "median_window_weibull_shape",
            np.median(weibull_shape_from_cv(fits["cv"].to_numpy())) if some else np.nan,
        ),
        _row("windows", "share_windows_shape_lt_1", (fits["shape"] < 1).mean() if some else np.nan),
        _row("windows", "share_gamma_better", fits["gamma_better"].mean() if some else np.nan),
    ]
    if duration_s >= 2 * 3600:
        prof = C.time_profile(df, "hour")
        clock = "wall" if C.wall_clock(df) else "relative"
        busy = prof["requests"][prof["observed"] > 0]
        rows += [
            _row("profile", "peak_hour", busy.idxmax() if len(busy) else np.nan, f"hour ({clock})"),
            _row("profile", "peak_to_mean_hourly", busy.max() / busy.mean() if len(busy) else np.nan),
            _row("profile", "periodicity", C.periodicity(df) if duration_s >= 2 * 86400 else np.nan),
        ]
    for col in ("input_tokens", "output_tokens"):
        x = df[col].to_numpy()
        q = np.quantile(x, [0.5, 0.9, 0.99])
        rows += [
            _row("lengths", f"mean_{col}", x.mean(), "tokens"),
            _row("lengths", f"p50_{col}", q[0], "tokens"),
            _row("lengths", f"p90_{col}", q[1], "tokens"),
            _row("lengths", f"p99_{col}", q[2], "tokens"),
        ]
        if (x >= 1).sum() >= 3:
            zipf, logn = C.fit_zipf(x), C.fit_lognormal(x)
            rows += [
                _row("fits", f"{col}_zipf_alpha", zipf.params["alpha"]),
                _row("fits", f"{col}_zipf_ks", zipf.ks),
                _row("fits", f"{col}_lognormal_mu", logn.params["mu"]),
                _row("fits", f"{col}_lognormal_sigma", logn.params["sigma"]),
                _row("fits", f"{col}_lognormal_ks", logn.ks),
            ]
    from scipy import stats  # imported where used: ~0.5 s at import

    rho = stats.spearmanr(df["input_tokens"].to_numpy(), df["output_tokens"].to_numpy()).statistic
    rows.append(_row("lengths", "spearman_in_out", rho))
    if "session_id" in df and df["session_id"].notna().any():
        conv = C.conversation_stats(df)
        rows += [
            _row("conversations", "sessions", conv.sessions, "sessions"),
            _row("conversations", "mean_turns", conv.mean_turns, "turns"),
        ]
    if "client_id" in df:
        counts = np.sort(df["client_id"].value_counts().to_numpy())[::-1]
        rows += [
            _row("clients", "clients", counts.size, "clients"),
            _row("clients", "top10_share", counts[:10].sum() / counts.sum()),
        ]
    if "failed" in df and df["failed"].notna().any():
        rows.append(_row("failures", "failed_share", df["failed"].fillna(False).to_numpy(dtype=bool).mean()))
    return pd.DataFrame(rows)


@accepts()
def compare(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Two :func:`describe` tables side by side: ``section``, ``metric``, ``a``, ``b``, ``ratio`` (b / a), ``unit``;
    metrics only one side has are kept with NaN on the other.

    Examples
    --------
    >>> a = pd.DataFrame([_row("rate", "rate_rps", 2.0, "req/s")])
    >>> compare(a, a.assign(value=3.0))[["metric", "a", "b", "ratio"]].to_dict("records")
    [{'metric': 'rate_rps', 'a': 2.0, 'b': 3.0, 'ratio': 1.5}]
    """
    key = ["section", "metric"]
    left = a.rename(columns={"value": "a"}).merge(b[[*key, "value"]].rename(columns={"value": "b"}), on=key, how="left")
    only_b = b.merge(a[key], on=key, how="left", indicator=True)
    only_b = only_b[only_b["_merge"] == "left_only"].drop(columns="_merge").rename(columns={"value": "b"})
    m = pd.concat([left, only_b.assign(a=np.nan)], ignore_index=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        m["ratio"] = np.where(m["a"] != 0, m["b"] / m["a"], np.nan)
    return m[["section", "metric", "a", "b", "ratio", "unit"]]


@accepts()
def as_json(table: pd.DataFrame) -> dict:
    """A description (or comparison) as plain JSON-ready data: ``{section: {metric: value or {a, b, ratio}}}`` with
    NaN as None.

    Examples
    --------
    >>> as_json(pd.DataFrame([_row("rate", "rate_rps", 2.0, "req/s")]))
    {'rate': {'rate_rps': 2.0}}
    """

    def clean(v):
        return None if v is None or (isinstance(v, float) and not np.isfinite(v)) else float(v)

    out: dict = {}
    for r in table.to_dict("records"):
        if "value" in r:
            val = clean(r["value"])
        else:
            val = {k: clean(r[k]) for k in ("a", "b", "ratio")}
        out.setdefault(r["section"], {})[r["metric"]] = val
    return out
