"""Exporters: write any request table in the formats that serving benchmarks read.

The exporters are driven by the request schema (:mod:`workbench.workloads.schema`), not by where a table came from:
a loaded trace, the BurstGPT-style generator or the ServeGen composer (``client_id``, ``arrival_s``,
``input_tokens``, ``output_tokens``, ...) all go through the same functions. Required columns are ``arrival_s``,
``input_tokens`` and ``output_tokens``; optional ones are used when present.

* :func:`to_burstgpt_csv` -- BurstGPT v1 CSV (``Timestamp,Model,Request tokens,Response tokens,Total tokens,Log
  Type``). vLLM's ``vllm bench serve --dataset-name burstgpt`` takes its request/response lengths from this file
  (its loader keeps only ``Model == "GPT-4"`` rows with positive response tokens and samples them, and arrival times
  come from ``--request-rate`` and ``--burstiness``, not from the timestamps); AIPerf's ``burst_gpt_trace`` dataset
  type replays the ``Timestamp`` column.
* :func:`to_mooncake_jsonl` -- Mooncake-style JSONL (``timestamp`` in integer milliseconds, ``input_length``,
  ``output_length`` and, when present, ``hash_ids``): AIPerf's ``--custom-dataset-type mooncake_trace`` with
  ``--fixed-schedule`` sends each request at its timestamp.
* :func:`to_timestamped_csv` / :func:`to_timestamped_jsonl` -- every schema column (times in seconds), for the
  workbench's own round trips and for tools that take a plain table.

Examples
--------
>>> import pandas as pd, tempfile, pathlib
>>> df = pd.DataFrame({"arrival_s": [0.0, 0.25], "input_tokens": [600, 100], "output_tokens": [5, 7]})
>>> p = pathlib.Path(tempfile.mkdtemp()) / "t.jsonl"
>>> _ = to_mooncake_jsonl(df, p)
>>> p.read_text().splitlines()[1]
'{"timestamp":250,"input_length":100,"output_length":7}'
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .. import _validate as V
from .schema import validate_requests

__all__ = ["to_burstgpt_csv", "to_mooncake_jsonl", "to_timestamped_csv", "to_timestamped_jsonl"]

_LOG_TYPE_NAMES = {"conversation": "Conversation log", "api": "API log"}


def _prepare(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    validate_requests(df)
    if len(df) == 0:
        raise ValueError("df must have at least one request to export")
    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def _labels(df: pd.DataFrame, col: str, fill: str, mapping: dict | None = None) -> np.ndarray:
    if col not in df:
        return np.full(len(df), fill, dtype=object)
    s = df[col].astype("string").fillna(fill)
    if mapping:
        s = s.replace(mapping)
    bad = s.str.contains(r'[",\r\n]', regex=True)
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise ValueError(
            f"df.{col} row {i} ({s.iloc[i]!r}) contains a comma, quote or newline, not allowed in BurstGPT CSV"
        )
    return s.to_numpy(dtype=object)


def to_burstgpt_csv(
    df: pd.DataFrame,
    path: str | os.PathLike,
    *,
    time_resolution_s: float | None = 1.0,
    model: str = "GPT-4",
    log_type: str = "API log",
    line_terminator: str = "\n",
) -> Path:
    """Write ``df`` as a BurstGPT v1 CSV.

    Parameters
    ----------
    df : DataFrame
        A request table (any source).
    path : path
    time_resolution_s : float or None
        Floor timestamps to this resolution (1.0: whole seconds, as BurstGPT; the integer form is written). ``None``
        writes seconds with millisecond precision (AIPerf reads fractional seconds).
    model, log_type : str
        Fill for rows or tables without ``model`` / ``log_type``. ``"GPT-4"`` is the default because vLLM's BurstGPT
        loader keeps only GPT-4 rows; workbench labels ``conversation``/``api`` become ``Conversation log``/``API log``.
    line_terminator : str
        ``"\\n"`` or ``"\\r\\n"`` (the release files use CRLF).

    Returns
    -------
    Path

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> df = pd.DataFrame({"arrival_s": [5.7, 45.2], "input_tokens": [472, 1087], "output_tokens": [18, 0]})
    >>> p = to_burstgpt_csv(df, pathlib.Path(tempfile.mkdtemp()) / "b.csv")
    >>> print(p.read_text(), end="")
    Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
    5,GPT-4,472,18,490,API log
    45,GPT-4,1087,0,1087,API log
    """
    p = _prepare(df, path)
    V.one_of("line_terminator", line_terminator, ("\n", "\r\n"))
    t = df["arrival_s"].to_numpy(dtype=float)
    if time_resolution_s is None:
        ts = pd.Series(np.round(t, 3)).map("{:.3f}".format)
    else:
        r = V.positive("time_resolution_s", time_resolution_s)
        q = np.floor(t / r + 1e-9) * r
        ts = pd.Series(q.astype(np.int64)) if r == 1.0 else pd.Series(np.round(q, 6))
    req = df["input_tokens"].to_numpy(dtype=np.int64)
    resp = df["output_tokens"].to_numpy(dtype=np.int64)
    out = pd.DataFrame(
        {
            "Timestamp": ts.to_numpy(),
            "Model": _labels(df, "model", model),
            "Request tokens": req,
            "Response tokens": resp,
            "Total tokens": req + resp,
            "Log Type": _labels(df, "log_type", log_type, _LOG_TYPE_NAMES),
        }
    )
    out.to_csv(p, index=False, lineterminator=line_terminator)
    return p


def to_mooncake_jsonl(df: pd.DataFrame, path: str | os.PathLike, *, hash_ids: bool = True) -> Path:
    """Write ``df`` as Mooncake-style JSONL: ``timestamp`` (ms, integer), ``input_length``, ``output_length``.

    ``hash_ids`` (prefix-block hashes) are written when the table has them and ``hash_ids=True``. The file loads in
    :func:`workbench.workloads.traces.load_mooncake` and in AIPerf (``--custom-dataset-type mooncake_trace``).

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> df = pd.DataFrame({"arrival_s": [0.0], "input_tokens": [1], "output_tokens": [2]})
    >>> to_mooncake_jsonl(df, pathlib.Path(tempfile.mkdtemp()) / "m.jsonl").read_text()
    '{"timestamp":0,"input_length":1,"output_length":2}\\n'
    """
    p = _prepare(df, path)
    out = pd.DataFrame(
        {
            "timestamp": np.rint(df["arrival_s"].to_numpy(dtype=float) * 1000.0).astype(np.int64),
            "input_length": df["input_tokens"].to_numpy(dtype=np.int64),
            "output_length": df["output_tokens"].to_numpy(dtype=np.int64),
        }
    )
    if hash_ids and "hash_ids" in df:
        out["hash_ids"] = _lists(df["hash_ids"])
    out.to_json(p, orient="records", lines=True)
    return p


def _lists(column: pd.Series) -> list[list[int]]:
    """Plain Python lists of ints for a list column (NA becomes an empty list)."""
    return [list(map(int, v)) if v is not None and not isinstance(v, float) else [] for v in column]


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy(deep=False)
    if "hash_ids" in out:
        out["hash_ids"] = _lists(out["hash_ids"])
    return out


def to_timestamped_csv(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write every schema column as CSV with a header (``arrival_s`` in seconds; ``hash_ids`` as a JSON list).

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> df = pd.DataFrame({"arrival_s": [0.5], "input_tokens": [1], "output_tokens": [2], "client_id": [7]})
    >>> to_timestamped_csv(df, pathlib.Path(tempfile.mkdtemp()) / "t.csv").read_text().splitlines()
    ['arrival_s,input_tokens,output_tokens,client_id', '0.5,1,2,7']
    """
    p = _prepare(df, path)
    out = _plain(df)
    if "hash_ids" in out:
        out["hash_ids"] = ["[" + ",".join(map(str, v)) + "]" for v in out["hash_ids"]]
    out.to_csv(p, index=False)
    return p


def to_timestamped_jsonl(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write every schema column as JSON lines (``arrival_s`` in seconds, NA as null).

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> df = pd.DataFrame({"arrival_s": [0.5], "input_tokens": [1], "output_tokens": [2]})
    >>> to_timestamped_jsonl(df, pathlib.Path(tempfile.mkdtemp()) / "t.jsonl").read_text()
    '{"arrival_s":0.5,"input_tokens":1,"output_tokens":2}\\n'
    """
    p = _prepare(df, path)
    out = _plain(df)
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype) or out[c].dtype == "string":
            out[c] = out[c].astype(object).where(out[c].notna(), None)
        elif out[c].dtype == "boolean":
            out[c] = out[c].astype(object).where(out[c].notna(), None)
    out.to_json(p, orient="records", lines=True)
    return p
