"""The loaders of each trace format (BurstGPT, Azure LLM inference, Mooncake JSONL). :func:`load_trace`, which
detects the format and dispatches, is in the format registry (:mod:`workbench.workloads.formats`)."""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.json as pajson

from ..._contracts import accepts
from ..characterize import detect_resolution
from ..schema import standardize
from .files import (
    _BLOCK_BYTES,
    _LOG_TYPES,
    AZURE_COLUMNS,
    BURSTGPT_V1_COLUMNS,
    BURSTGPT_V3_COLUMNS,
    MOONCAKE_FIELDS,
    TraceFormatError,
    _cached,
    _check_monotone,
    _check_present,
    _check_times,
    _check_tokens,
    _csv_batches,
    _err,
    _first_line,
    _header,
    _is_gzip,
    _kind,
    _raw_lines,
    _resolve,
)

# BurstGPT


@accepts()
def load_burstgpt(
    path: str | os.PathLike, *, cache: bool = True, allow_unsorted: bool = False, allow_extreme: bool = False
) -> pd.DataFrame:
    """Load a BurstGPT CSV (v1 six-column or v3 eight-column layout, detected from the header).

    Parameters
    ----------
    path : path
        The file (plain or ``.gz``), absolute or relative to the data search path (e.g. ``"burstgpt/BurstGPT_1.csv"``).
    cache : bool
        Read/write the verified parquet cache under ``$WORKBENCH_CACHE/traces`` (never beside the data).
    allow_unsorted : bool
        Sort rows whose timestamps go backwards instead of raising.
    allow_extreme : bool
        Load negative timestamps and token counts above :data:`MAX_TOKENS` (10 million) instead of raising
        :class:`TraceFormatError` (they are almost always a damaged or mis-converted file).

    Returns
    -------
    DataFrame
        The request schema; v3 adds ``session_id`` and ``elapsed_s``. ``failed`` is ``output_tokens == 0``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "b.csv"
    >>> _ = p.write_text("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\\n"
    ...                  "5,ChatGPT,472,18,490,Conversation log\\n7,GPT-4,10,0,10,API log\\n")
    >>> df = load_burstgpt(p, cache=False)
    >>> df[["arrival_s", "input_tokens", "output_tokens", "log_type", "failed"]].values.tolist()
    [[5.0, 472, 18, 'conversation', False], [7.0, 10, 0, 'api', True]]
    """
    p = _resolve(path)
    kind = _kind("burstgpt", allow_unsorted=allow_unsorted, allow_extreme=allow_extreme)
    return _cached(p, kind, cache, lambda: _parse_burstgpt(p, allow_unsorted, allow_extreme))


def _parse_burstgpt(p: Path, allow_unsorted: bool, allow_extreme: bool) -> pd.DataFrame:
    header = _header(p)
    if all(c in header for c in BURSTGPT_V3_COLUMNS):
        layout = "v3"
    elif all(c in header for c in BURSTGPT_V1_COLUMNS):
        layout = "v1"
    else:
        missing = [c for c in BURSTGPT_V1_COLUMNS if c not in header]
        raise _err(p, 1, f"not a BurstGPT header: missing column(s) {', '.join(missing)}; found {', '.join(header)}")
    types = {
        "Timestamp": pa.float64(),
        "Model": pa.string(),
        "Request tokens": pa.int64(),
        "Response tokens": pa.int64(),
        "Total tokens": pa.int64(),
        "Log Type": pa.string(),
    }
    numeric: dict[str, type] = {"Timestamp": float, "Request tokens": int, "Response tokens": int, "Total tokens": int}
    if layout == "v3":
        types.update({"Session ID": pa.string(), "Elapsed time": pa.float64()})
        numeric["Elapsed time"] = float
    parts: dict[str, list] = {k: [] for k in ("t", "model", "req", "resp", "log", "sid", "elapsed")}
    prev = None
    for row0, batch in _csv_batches(p, types, numeric, header):
        t = batch.column("Timestamp").to_numpy(zero_copy_only=False)
        req = batch.column("Request tokens").to_numpy(zero_copy_only=False)
        resp = batch.column("Response tokens").to_numpy(zero_copy_only=False)
        _check_present(p, row0, batch, ("Timestamp", "Request tokens", "Response tokens"), 2)
        _check_times(p, row0, "Timestamp", t, 2, allow_extreme)
        _check_tokens(p, row0, "Request tokens", req, 2, allow_extreme)
        _check_tokens(p, row0, "Response tokens", resp, 2, allow_extreme)
        if not allow_unsorted:
            _check_monotone(p, row0, t, prev, 2, "Timestamp")
        prev = t[-1] if t.size else prev
        parts["t"].append(t)
        parts["req"].append(req)
        parts["resp"].append(resp)
        parts["model"].append(batch.column("Model"))
        parts["log"].append(batch.column("Log Type"))
        if layout == "v3":
            parts["sid"].append(batch.column("Session ID"))
            parts["elapsed"].append(batch.column("Elapsed time").to_numpy(zero_copy_only=False))
    if not parts["t"] or sum(a.size for a in parts["t"]) == 0:
        raise _err(p, 2, "no data rows after the header")
    out = {
        "arrival_s": np.concatenate(parts["t"]),
        "input_tokens": np.concatenate(parts["req"]),
        "output_tokens": np.concatenate(parts["resp"]),
    }
    df = pd.DataFrame(out)
    df["model"] = _categorical(parts["model"])
    log = _categorical(parts["log"])
    df["log_type"] = log.rename_categories(lambda c: _LOG_TYPES.get(c, c))
    if layout == "v3":
        sid = pa.chunked_array(parts["sid"]).to_pandas().astype("string")
        sid = sid.mask(sid.str.strip() == "")
        df["session_id"] = sid.to_numpy()
        df["elapsed_s"] = np.concatenate(parts["elapsed"])
    df["failed"] = pd.array(df["output_tokens"].to_numpy() == 0, dtype="boolean")
    if allow_unsorted:
        df = df.sort_values("arrival_s", kind="stable", ignore_index=True)
    df.attrs = {
        "source": str(p),
        "format": f"burstgpt-{layout}",
        "origin": "day 1 00:00 (local time)",
        "origin_s_of_day": 0.0,
        "origin_weekday": None,
        "time_resolution_s": detect_resolution(df["arrival_s"].to_numpy()),
    }
    return standardize(df)


def _categorical(chunks: list) -> pd.Categorical:
    arr = pa.chunked_array(chunks, type=pa.string()).dictionary_encode().combine_chunks()
    codes = arr.indices.to_numpy(zero_copy_only=False)
    cats = arr.dictionary.to_pylist()
    # dictionary_encode may list a category twice across chunks after combine; unify with pandas
    return (
        pd.Categorical.from_codes(codes, categories=pd.Index(cats))
        if len(set(cats)) == len(cats)
        else pd.Categorical(arr.to_pandas())
    )


# Azure


@accepts()
def load_azure(
    path: str | os.PathLike,
    *,
    log_type: str | None = None,
    cache: bool = True,
    allow_unsorted: bool = False,
    allow_extreme: bool = False,
) -> pd.DataFrame:
    """Load an Azure LLM inference trace (2023 one-hour or 2024 one-week CSV).

    Parameters
    ----------
    path : path
        e.g. ``"azure-llm-2023/AzureLLMInferenceTrace_conv.csv"`` (on the search path) or a local file.
    log_type : str, optional
        Service label; default from the file name (``code`` or ``conversation``).
    cache, allow_unsorted, allow_extreme : bool
        As in :func:`load_burstgpt`.

    Returns
    -------
    DataFrame
        ``arrival_s`` from the first request; ``df.attrs["origin"]`` is its wall-clock time (UTC), with
        ``origin_s_of_day`` and ``origin_weekday`` (Monday = 0) for time-of-day profiles. ``model`` and
        ``session_id`` are NA and ``failed`` is NA (the trace does not record failures).

    Examples
    --------
    >>> df = load_azure("azure-llm-2023/AzureLLMInferenceTrace_code.csv")  # doctest: +SKIP
    >>> len(df), df.attrs["origin"]  # doctest: +SKIP
    (8819, '2023-11-16T18:17:03.979960')
    """
    p = _resolve(path)
    if log_type is None:
        low = p.name.lower()
        log_type = "code" if "code" in low else "conversation" if "conv" in low else "unknown"
    kind = _kind(f"azure-{log_type}", allow_unsorted=allow_unsorted, allow_extreme=allow_extreme)
    return _cached(p, kind, cache, lambda: _parse_azure(p, log_type, allow_unsorted, allow_extreme))


#: Date-times pandas can hold in nanoseconds (a date outside them used to wrap around silently).
_AZURE_DATES = (pd.Timestamp.min.ceil("D").tz_localize("UTC"), pd.Timestamp.max.floor("D").tz_localize("UTC"))


def _azure_times(p: Path, row0: int, text: np.ndarray) -> np.ndarray:
    """Nanoseconds since the epoch (UTC) of each TIMESTAMP; a value that is not a date-time, or a date outside
    what nanoseconds can hold, is an error naming its line."""
    ts = pd.to_datetime(pd.Series(text), format="ISO8601", errors="coerce", utc=True)
    if ts.isna().any():
        i = int(np.argmax(ts.isna().to_numpy()))
        lo, hi = _AZURE_DATES
        outside = f"TIMESTAMP {text[i]!r} is outside the supported dates {lo.date()} to {hi.date()}"
        try:
            pd.to_datetime(text[i], format="ISO8601", utc=True)  # parses alone (at a coarser unit) but not in ns
            what = outside
        except pd.errors.OutOfBoundsDatetime:
            what = outside
        except (ValueError, TypeError):
            try:  # a valid date-time that nanoseconds cannot hold (year 1600, 3000) is out of range, not garbage
                _dt.datetime.fromisoformat(str(text[i]).strip()[:26])
                what = outside
            except ValueError:
                what = f"TIMESTAMP is not a date-time: {text[i]!r}"
        raise _err(p, row0 + i + 2, what)
    return ts.dt.tz_localize(None).to_numpy().astype("datetime64[ns]").astype(np.int64)


def _parse_azure(p: Path, log_type: str, allow_unsorted: bool, allow_extreme: bool) -> pd.DataFrame:
    header = _header(p)
    missing = [c for c in AZURE_COLUMNS if c not in header]
    if missing:
        raise _err(
            p, 1, f"not an Azure LLM trace header: missing column(s) {', '.join(missing)}; found {', '.join(header)}"
        )
    types = {"TIMESTAMP": pa.string(), "ContextTokens": pa.int64(), "GeneratedTokens": pa.int64()}
    numeric: dict[str, type] = {"ContextTokens": int, "GeneratedTokens": int}
    ns_parts, req_parts, resp_parts = [], [], []
    prev = None
    for row0, batch in _csv_batches(p, types, numeric, header):
        _check_present(p, row0, batch, ("ContextTokens", "GeneratedTokens"), 2)
        ns = _azure_times(p, row0, batch.column("TIMESTAMP").to_numpy(zero_copy_only=False))
        req = batch.column("ContextTokens").to_numpy(zero_copy_only=False)
        resp = batch.column("GeneratedTokens").to_numpy(zero_copy_only=False)
        _check_tokens(p, row0, "ContextTokens", req, 2, allow_extreme)
        _check_tokens(p, row0, "GeneratedTokens", resp, 2, allow_extreme)
        if not allow_unsorted:
            _check_monotone(p, row0, ns, prev, 2, "TIMESTAMP")
        prev = ns[-1] if ns.size else prev
        ns_parts.append(ns)
        req_parts.append(req)
        resp_parts.append(resp)
    if not ns_parts or sum(a.size for a in ns_parts) == 0:
        raise _err(p, 2, "no data rows after the header")
    ns = np.concatenate(ns_parts)
    order = np.argsort(ns, kind="stable") if allow_unsorted else None
    req, resp = np.concatenate(req_parts), np.concatenate(resp_parts)
    if order is not None:
        ns, req, resp = ns[order], req[order], resp[order]
    t0 = int(ns[0])
    df = pd.DataFrame({"arrival_s": (ns - t0) / 1e9, "input_tokens": req, "output_tokens": resp})
    df["log_type"] = pd.Categorical([log_type] * len(df))
    origin = pd.Timestamp(t0)
    day_start = origin.normalize()
    df.attrs = {
        "source": str(p),
        "format": "azure",
        "origin": origin.isoformat(),
        "origin_s_of_day": (origin - day_start).total_seconds(),
        "origin_weekday": int(origin.weekday()),
        "time_resolution_s": 0.0,
    }
    return standardize(df)


# Mooncake


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _locate_json_error(path: Path, exc: Exception) -> TraceFormatError:
    """Re-scan ``path`` line by line (decoding each line on its own) to find the first bad record."""
    try:
        located = _scan_json(path)
    except TraceFormatError as err:
        return err
    return located or _err(path, None, f"could not parse the file: {exc}")


def _scan_json(path: Path) -> TraceFormatError | None:
    for lineno, line in _raw_lines(path):
        if not line.strip():
            return _err(path, lineno, "empty line in JSONL")
        try:
            rec = json.loads(line, parse_constant=_reject_constant)
        except json.JSONDecodeError as e:
            return _err(path, lineno, f"not valid JSON ({e.msg} at column {e.colno})")
        except ValueError as e:
            return _err(path, lineno, f"not valid JSON ({e})")
        if not isinstance(rec, dict):
            return _err(path, lineno, f"expected a JSON object, got {type(rec).__name__}")
        for key in MOONCAKE_FIELDS:
            if key not in rec:
                return _err(path, lineno, f"missing field {key!r}")
            v = rec[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return _err(path, lineno, f"field {key!r} must be a number, got {v!r}")
        h = rec.get("hash_ids", [])
        if not isinstance(h, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in h):
            return _err(path, lineno, f"hash_ids must be a list of integers, got {h!r}")
    return None


@accepts()
def load_mooncake(
    path: str | os.PathLike,
    *,
    log_type: str | None = None,
    cache: bool = True,
    allow_unsorted: bool = False,
    allow_extreme: bool = False,
) -> pd.DataFrame:
    """Load a Mooncake-style JSONL trace (``timestamp`` in ms, ``input_length``, ``output_length``, ``hash_ids``).

    Parameters
    ----------
    path : path
        e.g. ``"mooncake-fast25/conversation_trace.jsonl"``.
    log_type : str, optional
        Default from the file name: ``conversation``, ``synthetic``, ``toolagent``, else ``mooncake``.
    cache, allow_unsorted, allow_extreme : bool
        As in :func:`load_burstgpt`.

    Returns
    -------
    DataFrame
        The request schema with ``hash_ids`` (a list<int64> column) when the file has them; ``time_resolution_s`` is
        0.001.

    Examples
    --------
    >>> df = load_mooncake("mooncake-fast25/conversation_trace.jsonl")  # doctest: +SKIP
    >>> int(df["input_tokens"].mean())  # doctest: +SKIP
    12035
    """
    p = _resolve(path)
    if log_type is None:
        low = p.name.lower()
        log_type = next((k for k in ("conversation", "synthetic", "toolagent") if k in low), "mooncake")
    kind = _kind(f"mooncake-{log_type}", allow_unsorted=allow_unsorted, allow_extreme=allow_extreme)
    return _cached(p, kind, cache, lambda: _parse_mooncake(p, log_type, allow_unsorted, allow_extreme))


def _parse_mooncake(p: Path, log_type: str, allow_unsorted: bool, allow_extreme: bool) -> pd.DataFrame:
    _first_line(p)  # empty-file check
    schema = pa.schema(
        [
            ("timestamp", pa.float64()),
            ("input_length", pa.int64()),
            ("output_length", pa.int64()),
            ("hash_ids", pa.list_(pa.int64())),
        ]
    )
    try:
        source = pa.input_stream(str(p), compression="gzip" if _is_gzip(p) else None)
        reader = pajson.open_json(
            source,
            read_options=pajson.ReadOptions(block_size=_BLOCK_BYTES),
            parse_options=pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"),
        )
        batches = []
        row0 = 0
        prev = None
        for batch in reader:
            for key in MOONCAKE_FIELDS:
                col = batch.column(key)
                if col.null_count:
                    i = int(np.argmax(col.is_null().to_numpy(zero_copy_only=False)))
                    raise _err(p, row0 + i + 1, f"missing or null field {key!r}")
            t = batch.column("timestamp").to_numpy(zero_copy_only=False)
            _check_times(p, row0, "timestamp", t, 1, allow_extreme)
            for key in ("input_length", "output_length"):
                values = batch.column(key).to_numpy(zero_copy_only=False)
                _check_tokens(p, row0, key, values, 1, allow_extreme)
            if not allow_unsorted:
                _check_monotone(p, row0, t, prev, 1, "timestamp")
            prev = t[-1] if t.size else prev
            batches.append(batch)
            row0 += batch.num_rows
    except (pa.ArrowInvalid, OSError, EOFError) as exc:
        raise _locate_json_error(p, exc) from None
    table = pa.Table.from_batches(batches, schema=schema)
    if table.num_rows == 0:
        raise _err(p, 1, "no records")
    ms = table.column("timestamp").to_numpy()
    df = pd.DataFrame(
        {
            "arrival_s": ms / 1000.0,
            "input_tokens": table.column("input_length").to_numpy(),
            "output_tokens": table.column("output_length").to_numpy(),
        }
    )
    df["log_type"] = pd.Categorical([log_type] * len(df))
    if table.column("hash_ids").null_count < table.num_rows:
        df["hash_ids"] = pd.array(table.column("hash_ids"), dtype=pd.ArrowDtype(pa.list_(pa.int64())))
    if allow_unsorted:
        df = df.sort_values("arrival_s", kind="stable", ignore_index=True)
    df.attrs = {
        "source": str(p),
        "format": "mooncake",
        "origin": "trace start",
        "origin_s_of_day": None,
        "origin_weekday": None,
        "time_resolution_s": detect_resolution(ms / 1000.0),
    }
    return standardize(df)
