"""The request table: one schema for every trace source and every generator.

A workload is a pandas DataFrame with one row per request, sorted by arrival time. The columns are

=================  ====================  ===========================================================================
column             dtype                 meaning
=================  ====================  ===========================================================================
``arrival_s``      float64               seconds from the trace origin (non-decreasing); required
``input_tokens``   int64                 prompt (request, context) tokens, >= 0; required
``output_tokens``  int64                 generated (response) tokens, >= 0; required
``model``          category              model name as the source spells it (``ChatGPT``, ``GPT-4``), NA if unknown
``log_type``       category              ``conversation``, ``api``, ``code``, ``synthetic``... (service or log kind)
``session_id``     string                conversation id where the source has one (BurstGPT v3), else NA
``failed``         boolean (nullable)    the request failed (BurstGPT: zero response tokens); NA if unknown
``elapsed_s``      float64               BurstGPT v3: seconds from submission to last token
``hash_ids``       list<int64> (arrow)   Mooncake: prefix-block hashes (512-token blocks), for cache studies
``client_id``      int64 / category      ServeGen: the client a request belongs to
=================  ====================  ===========================================================================

Only the three required columns must exist; the others are used when present. Loaders in
:mod:`workbench.workloads.traces` always return the first seven (NA where the source has no such field) so that
characterization code can rely on them. ``df.attrs`` carries provenance: ``source`` (file), ``format``,
``origin`` (the wall-clock time ``arrival_s == 0`` stands for, ISO 8601, when known), ``origin_s_of_day`` and
``origin_weekday`` (for hour-of-day and day-of-week profiles), and ``time_resolution_s`` (1.0 for BurstGPT's
integer-second timestamps, 0.001 for Mooncake's milliseconds) used to dequantize inter-arrival gaps.

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"arrival_s": [0.0, 1.5], "input_tokens": [10, 20], "output_tokens": [5, 0]})
>>> validate_requests(df) is df
True
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._contracts import accepts

__all__ = [
    "REQUIRED",
    "OPTIONAL",
    "STANDARD",
    "validate_requests",
    "empty_requests",
    "standardize",
]

REQUIRED: dict[str, str] = {"arrival_s": "float64", "input_tokens": "int64", "output_tokens": "int64"}
OPTIONAL: dict[str, str] = {
    "model": "category",
    "log_type": "category",
    "session_id": "string",
    "failed": "boolean",
    "elapsed_s": "float64",
    "hash_ids": "list<int64>",
    "client_id": "any",
}
#: Columns every loader returns.
STANDARD = ("arrival_s", "input_tokens", "output_tokens", "model", "log_type", "session_id", "failed")


@accepts()
def validate_requests(
    df: pd.DataFrame, *, name: str = "df", sorted_: bool = True, max_tokens: int | None = None
) -> pd.DataFrame:
    """Check that ``df`` is a request table and return it unchanged: the project's one request validator (loaders,
    exporters and the serving simulators all call it).

    Raises TypeError when ``df`` is not a DataFrame or a column has the wrong kind, and ValueError (naming the first
    offending row) for missing required columns, NaN or infinite arrival times, negative, fractional or missing
    token counts, token counts above ``max_tokens`` (when given), or, when ``sorted_``, arrival times that go
    backwards.

    Examples
    --------
    >>> import pandas as pd
    >>> validate_requests(pd.DataFrame({"arrival_s": [1.0, 0.5], "input_tokens": [1, 1], "output_tokens": [1, 1]}))
    Traceback (most recent call last):
    ...
    ValueError: df.arrival_s must be non-decreasing; row 1 (0.5) < row 0 (1.0)
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise ValueError(
            f"{name} must have columns {', '.join(REQUIRED)}; missing {', '.join(missing)} "
            f"(has {', '.join(map(str, df.columns))})"
        )
    t = df["arrival_s"]
    if not pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t):
        raise TypeError(f"{name}.arrival_s must be numeric seconds, got dtype {t.dtype}")
    tv = t.to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(tv)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name}.arrival_s must be finite; row {i} is {tv[i]}")
    if sorted_ and tv.size > 1:
        d = np.diff(tv)
        if (d < 0).any():
            i = int(np.argmax(d < 0)) + 1
            raise ValueError(f"{name}.arrival_s must be non-decreasing; row {i} ({tv[i]}) < row {i - 1} ({tv[i - 1]})")
    for col in ("input_tokens", "output_tokens"):
        s = df[col]
        if not pd.api.types.is_integer_dtype(s) and not pd.api.types.is_float_dtype(s):
            raise TypeError(f"{name}.{col} must hold integer token counts, got dtype {s.dtype}")
        v = s.to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isfinite(v) | (v < 0) | (v != np.floor(v))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{name}.{col} must be non-negative integers; row {i} is {v[i]}")
        if max_tokens is not None and (v > max_tokens).any():
            i = int(np.argmax(v > max_tokens))
            raise ValueError(f"{name}.{col} must be at most {max_tokens:,} tokens; row {i} is {v[i]:,.0f}")
    return df


@accepts()
def empty_requests() -> pd.DataFrame:
    """A request table with the standard columns and no rows.

    Examples
    --------
    >>> df = empty_requests()
    >>> len(df), list(df.columns[:3])
    (0, ['arrival_s', 'input_tokens', 'output_tokens'])
    """
    return standardize(pd.DataFrame({c: np.array([], dtype=float if c == "arrival_s" else np.int64) for c in REQUIRED}))


@accepts()
def standardize(df: pd.DataFrame) -> pd.DataFrame:
    """Return ``df`` with the standard columns present (NA where absent) and the documented dtypes.

    Examples
    --------
    >>> import pandas as pd
    >>> out = standardize(pd.DataFrame({"arrival_s": [0.0], "input_tokens": [3], "output_tokens": [0]}))
    >>> list(out.columns)[:7]
    ['arrival_s', 'input_tokens', 'output_tokens', 'model', 'log_type', 'session_id', 'failed']
    """
    out = df.copy(deep=False)
    n = len(out)
    out["arrival_s"] = out["arrival_s"].astype("float64")
    out["input_tokens"] = out["input_tokens"].astype("int64")
    out["output_tokens"] = out["output_tokens"].astype("int64")
    for col in ("model", "log_type"):
        if col in out:
            out[col] = out[col].astype("category")
        else:
            out[col] = pd.Categorical.from_codes(np.full(n, -1), categories=pd.Index([], dtype=object))
    out["session_id"] = out["session_id"].astype("string") if "session_id" in out else pd.array([None] * n, "string")
    out["failed"] = out["failed"].astype("boolean") if "failed" in out else pd.array([None] * n, "boolean")
    first = list(STANDARD)
    rest = [c for c in out.columns if c not in first]
    out = out[first + rest]
    out.attrs = dict(df.attrs)
    return out
