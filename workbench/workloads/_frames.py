"""The rows of each written workload format: the checks every export makes before writing (schema, value ranges, the
target file) and the frame builders (BurstGPT, Mooncake, timestamped CSV/JSONL, parquet) that
:mod:`workbench.workloads.formats` writes. Moved here unchanged from :mod:`workbench.workloads.export`, so that the
format registry can sit below the exporters that look formats up in it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from .. import _validate as V
from .._contracts import Opaque, accepts
from ..cache import check_target
from .schema import validate_requests

#: Largest arrival time written: integer milliseconds stay exact in a float64 up to 2**53.
MAX_ARRIVAL_S = 2.0**53 / 1000.0
#: Largest token count written (exact as float64; a sum of two stays far from the int64 limit).
MAX_TOKENS = 2**53

_LOG_TYPE_NAMES = {"conversation": "Conversation log", "api": "API log"}


def _first_bad(mask: np.ndarray) -> int:
    return int(np.argmax(mask))


def _prepare(df: pd.DataFrame, path: str | os.PathLike, overwrite: bool) -> Path:
    """Validate ``df`` and ``path`` before any work: schema, value ranges, and an existing file."""
    _check_table(df)
    return _target(path, overwrite)


def _check_table(df: pd.DataFrame) -> None:
    validate_requests(df)
    if len(df) == 0:
        raise ValueError("df must have at least one request to export")
    t = df["arrival_s"].to_numpy(dtype=float)
    bad = (t < 0) | (t > MAX_ARRIVAL_S)
    if bad.any():
        i = _first_bad(bad)
        raise ValueError(
            f"df.arrival_s must be in [0, {MAX_ARRIVAL_S:.6g}] s to be written exactly; row {i} is {t[i]!r} "
            "(shift the table so that it starts at 0)"
        )
    for col in ("input_tokens", "output_tokens"):
        v = df[col].to_numpy(dtype=float)
        if (v > MAX_TOKENS).any():
            i = _first_bad(v > MAX_TOKENS)
            raise ValueError(
                f"df.{col} must be at most 2**53 ({MAX_TOKENS}) to be written exactly; row {i} is {v[i]!r}"
            )


def _target(path: str | os.PathLike, overwrite: bool) -> Path:
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite must be a bool, got {type(overwrite).__name__}")
    p = check_target(Path(path).expanduser(), overwrite=overwrite)  # regular files only; --force to replace
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


def _seconds_text(t: np.ndarray) -> np.ndarray:
    """Seconds with millisecond precision and no trailing zeros (``5``, ``5.25``, ``5.001``)."""
    return pd.Series(np.round(t, 3)).map("{:.3f}".format).str.rstrip("0").str.rstrip(".").to_numpy(dtype=object)


def _burstgpt_frame(df: pd.DataFrame, time_resolution_s: float | None, model: str, log_type: str) -> pd.DataFrame:
    t = df["arrival_s"].to_numpy(dtype=float)
    if time_resolution_s is None:
        ts = _seconds_text(t)
    else:
        r = V.positive("time_resolution_s", time_resolution_s)
        q = np.floor(t / r + 1e-9) * r
        ts = q.astype(np.int64) if r == 1.0 else _seconds_text(q)
    req = df["input_tokens"].to_numpy(dtype=np.int64)
    resp = df["output_tokens"].to_numpy(dtype=np.int64)
    return pd.DataFrame(
        {
            "Timestamp": ts,
            "Model": _labels(df, "model", model),
            "Request tokens": req,
            "Response tokens": resp,
            "Total tokens": req + resp,
            "Log Type": _labels(df, "log_type", log_type, _LOG_TYPE_NAMES),
        }
    )


@accepts(session=Opaque("the session label of each request (any hashable values)"))
def synthetic_hash_ids(
    input_tokens: np.ndarray, block_tokens: int = 512, session: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Prefix-block ids for requests that have none: ``ceil(input_tokens / block_tokens)`` ids per request.

    Without ``session`` every block is unique (no two requests share a prefix). With ``session`` (one label per
    request, NA for none), consecutive requests of a session are taken to share their common prefix, as turns of a
    conversation do: request *k* reuses the first ``floor(min(input_k-1, input_k) / block_tokens)`` block ids of
    the previous request of its session (only whole blocks are reusable), and gets new ids for the rest.

    Returns
    -------
    offsets, ids : ndarray of int64
        Request ``i``'s ids are ``ids[offsets[i]:offsets[i + 1]]``.

    Examples
    --------
    >>> off, ids = synthetic_hash_ids(np.array([1000, 1500, 10]), 512, session=np.array(["a", "a", None], object))
    >>> [ids[off[i]:off[i + 1]].tolist() for i in range(3)]
    [[0, 1], [0, 3, 4], [5]]
    """
    block_tokens = V.integer("block_tokens", block_tokens, minimum=1)
    tokens = np.asarray(input_tokens, dtype=np.int64)
    n = -(-tokens // block_tokens)
    offsets = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
    if session is None:
        return offsets, np.arange(offsets[-1], dtype=np.int64)
    codes = pd.factorize(pd.Series(session, dtype=object), use_na_sentinel=True)[0]
    if len(codes) != len(tokens):
        raise ValueError(f"session must have one label per request ({len(tokens)}), got {len(codes)}")
    # Sessions as contiguous runs (stable: arrival order within a session); NA sessions are runs of one.
    key = np.where(codes >= 0, codes, np.arange(len(codes)) + codes.max() + 1)
    order = np.argsort(key, kind="stable")
    k, nt, ns = key[order], tokens[order], n[order]
    first = np.r_[True, k[1:] != k[:-1]]
    shared = np.where(first, 0, np.minimum(np.r_[0, nt[:-1]], nt) // block_tokens)
    base = offsets[order]  # each request's own block slots: [base, base + n)
    ids_sorted = np.empty(offsets[-1], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(ns)])[:-1]
    pos = np.arange(len(order))
    for j in range(int(ns.max(initial=0))):  # one pass per block position, vectorized over requests
        # origin of block j: the last request of the chain that did not inherit it (first of session or shared <= j)
        origin = np.maximum.accumulate(np.where(shared <= j, pos, -1))
        has = ns > j
        ids_sorted[start[has] + j] = base[origin[has]] + j
    # back to request order
    q = np.repeat(pos, ns)
    ids = np.empty_like(ids_sorted)
    ids[offsets[order[q]] + np.arange(offsets[-1]) - start[q]] = ids_sorted
    return offsets, ids


def _mooncake_frame(
    df: pd.DataFrame, hash_ids: bool, hash_block_tokens: int | None, id_offset: int = 0
) -> pd.DataFrame:
    out = pd.DataFrame(
        {
            "timestamp": np.rint(df["arrival_s"].to_numpy(dtype=float) * 1000.0).astype(np.int64),
            "input_length": df["input_tokens"].to_numpy(dtype=np.int64),
            "output_length": df["output_tokens"].to_numpy(dtype=np.int64),
        }
    )
    if hash_ids and "hash_ids" in df:
        if hash_block_tokens not in (None, 512):
            raise ValueError(
                f"hash_block_tokens must be None or 512 for a table with its own hash_ids (Mooncake's 512-token "
                f"blocks); got {hash_block_tokens!r}. Drop the hash_ids column to synthesize other blocks."
            )
        out["hash_ids"] = _lists(df["hash_ids"])
    elif hash_block_tokens is not None:
        session = df["session_id"].to_numpy(dtype=object) if "session_id" in df else None
        offsets, ids = synthetic_hash_ids(out["input_length"].to_numpy(), hash_block_tokens, session)
        out["hash_ids"] = pa.ListArray.from_arrays(offsets, ids + id_offset).to_pylist()
    return out


def _lists(column: pd.Series) -> list[list[int]]:
    """Plain Python lists of ints for a list column (NA becomes an empty list)."""
    return [list(map(int, v)) if v is not None and not isinstance(v, float) else [] for v in column]


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy(deep=False)
    if "hash_ids" in out:
        out["hash_ids"] = _lists(out["hash_ids"])
    return out


def _csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    out = _plain(df)
    if "hash_ids" in out:
        out["hash_ids"] = ["[" + ",".join(map(str, v)) + "]" for v in out["hash_ids"]]
    return out


def _jsonl_frame(df: pd.DataFrame) -> pd.DataFrame:
    out = _plain(df)
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype) or out[c].dtype in ("string", "boolean"):
            out[c] = out[c].astype(object).where(out[c].notna(), None)
    return out


#: Rows per parquet row group (fixed, so a file's bytes do not depend on how its rows were chunked).
PARQUET_ROW_GROUP_ROWS = 1 << 20


def _arrow(df: pd.DataFrame) -> pa.Table:
    out = _plain(df)
    for c in out.columns:  # categories as plain strings: every chunk then has the same schema
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype("string")
    table = pa.Table.from_pandas(out, preserve_index=False)
    return table.replace_schema_metadata(None)
