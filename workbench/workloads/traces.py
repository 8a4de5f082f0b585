"""Trace loaders: BurstGPT, Azure LLM inference (2023, 2024) and Mooncake into one request schema.

Every loader returns the table of :mod:`workbench.workloads.schema` (``arrival_s``, ``input_tokens``,
``output_tokens``, ``model``, ``log_type``, ``session_id``, ``failed`` and source-specific extras), reading columns by
name, never by position:

* **BurstGPT** (Wang et al., KDD 2025). v1 files (``BurstGPT_1.csv``, ``_2``) have the header
  ``Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type``; v3 files (``_3``) add ``Session ID`` and
  ``Elapsed time``. The layout is detected from the header. ``Timestamp`` is whole seconds from 00:00 of day 1, so
  ``arrival_s`` keeps it as is (origin = midnight of day 1) and ``time_resolution_s`` is 1. A failed request has zero
  response tokens: it is kept and flagged ``failed=True``, never dropped (about 3% of rows are exact duplicates at
  1-second resolution; they are legitimate and kept too). ``Log Type`` becomes ``conversation`` or ``api``.
* **Azure LLM inference traces** (Splitwise 2023, DynamoLLM 2024): ``TIMESTAMP,ContextTokens,GeneratedTokens`` with
  wall-clock timestamps (7 fractional digits in 2023, a ``+00:00`` offset in 2024). ``arrival_s`` counts from the
  first request; the wall-clock origin is kept in ``df.attrs`` for hour-of-day profiles. ``log_type`` is ``code`` or
  ``conversation`` from the file name (or the ``log_type`` argument).
* **Mooncake** FAST'25 JSONL: ``{"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}``. ``hash_ids``
  (512-token prefix blocks; equal ids mean a reusable KV block) are kept as a list column for cache studies.

Large files are streamed in blocks with pyarrow (memory bounded by the block size plus the compact result), and the
parsed table is cached as parquet next to the source when that directory is writable, else in
``workbench.data.cache_dir()/traces``; the cache is keyed on the source's path, size and modification time and is
rebuilt when they change. A malformed file raises ValueError naming the file and line: wrong or missing columns, a
field that is not a number, negative tokens, timestamps that go backwards, an empty file, a ``.gz`` that is not gzip.
JSON is parsed with a JSON parser and nothing is ever ``eval``-ed.

Examples
--------
>>> from workbench.workloads import traces
>>> df = traces.load_trace("azure-llm-2023/AzureLLMInferenceTrace_code.csv")  # doctest: +SKIP
>>> df[["arrival_s", "input_tokens", "output_tokens"]].head(2)  # doctest: +SKIP
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from .. import data as _data
from .._validate import one_of
from .characterize import detect_resolution
from .schema import standardize

__all__ = [
    "TraceFormatError",
    "BURSTGPT_V1_COLUMNS",
    "BURSTGPT_V3_COLUMNS",
    "AZURE_COLUMNS",
    "MOONCAKE_FIELDS",
    "detect_format",
    "load_trace",
    "load_burstgpt",
    "load_azure",
    "load_mooncake",
    "cache_path",
]

BURSTGPT_V1_COLUMNS = ("Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens", "Log Type")
BURSTGPT_V3_COLUMNS = (
    "Timestamp",
    "Session ID",
    "Elapsed time",
    "Model",
    "Request tokens",
    "Response tokens",
    "Total tokens",
    "Log Type",
)
AZURE_COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
MOONCAKE_FIELDS = ("timestamp", "input_length", "output_length")
_LOG_TYPES = {"Conversation log": "conversation", "API log": "api"}
_LOADER_VERSION = "2"
_BLOCK_BYTES = 8 << 20
_FORMATS = ("auto", "burstgpt", "azure", "mooncake")


class TraceFormatError(ValueError):
    """A malformed trace file; the message names the file and line."""


def _err(path: Path, line: int | None, msg: str) -> TraceFormatError:
    where = f"{path}, line {line}" if line is not None else str(path)
    return TraceFormatError(f"{where}: {msg}")


# ------------------------------------------------------------------------------------------------------------------
# Opening files (plain or gzip) and detecting the format
# ------------------------------------------------------------------------------------------------------------------


def _resolve(path: str | os.PathLike) -> Path:
    p = Path(path).expanduser()
    if p.exists():
        return p
    return _data.require(path)


def _is_gzip(path: Path) -> bool:
    if path.suffix != ".gz":
        return False
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic != b"\x1f\x8b":
        raise _err(path, 1, f"the file name ends in .gz but it is not gzip (first bytes {magic!r})")
    return True


def _open_text(path: Path) -> io.TextIOBase:
    if _is_gzip(path):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _first_line(path: Path) -> str:
    try:
        with _open_text(path) as fh:
            line = fh.readline()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise _err(path, 1, f"cannot read the file: {exc}") from None
    if not line.strip():
        raise _err(path, 1, "empty file (no header or first record)")
    return line.rstrip("\r\n")


def detect_format(path: str | os.PathLike) -> str:
    """Return ``"burstgpt"``, ``"azure"`` or ``"mooncake"`` from the file's first line.

    Examples
    --------
    >>> detect_format("mooncake-fast25/conversation_trace.jsonl")  # doctest: +SKIP
    'mooncake'
    """
    p = _resolve(path)
    line = _first_line(p)
    if line.lstrip().startswith("{"):
        return "mooncake"
    header = [h.strip() for h in next(csv.reader([line]))]
    if "TIMESTAMP" in header:
        return "azure"
    if "Timestamp" in header and "Request tokens" in header:
        return "burstgpt"
    raise _err(
        p,
        1,
        "unrecognised header "
        f"{header!r}: expected BurstGPT ({', '.join(BURSTGPT_V1_COLUMNS)}), Azure ({', '.join(AZURE_COLUMNS)}) "
        "or Mooncake JSONL",
    )


# ------------------------------------------------------------------------------------------------------------------
# Parquet cache
# ------------------------------------------------------------------------------------------------------------------


def _stamp(path: Path) -> dict:
    st = path.stat()
    return {"source": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "version": _LOADER_VERSION}


def cache_path(path: str | os.PathLike, kind: str = "") -> Path:
    """Where the parquet cache of ``path`` lives: beside it when its directory's permission bits allow writing, else in
    ``workbench.data.cache_dir()/traces`` (the shared data directory is read-only, even for root)."""
    p = Path(path).resolve()
    name = f"{p.name}{'.' + kind if kind else ''}.workbench.parquet"
    if p.parent.stat().st_mode & 0o222 and os.access(p.parent, os.W_OK):
        return p.parent / name
    digest = hashlib.sha256(str(p).encode()).hexdigest()[:16]
    d = _data.cache_dir() / "traces"
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{digest}-{name}"


def _read_cache(cpath: Path, stamp: dict) -> pd.DataFrame | None:
    if not cpath.exists():
        return None
    try:
        table = pq.read_table(cpath)
        meta = json.loads((table.schema.metadata or {}).get(b"workbench", b"{}"))
    except (OSError, pa.ArrowException, ValueError):
        return None
    if meta.get("stamp") != stamp:
        return None
    df = table.to_pandas(ignore_metadata=True)
    if "hash_ids" in df.columns:
        df["hash_ids"] = pd.array(table.column("hash_ids"), dtype=pd.ArrowDtype(table.schema.field("hash_ids").type))
    df.attrs = meta.get("attrs", {})
    return standardize(df)


def _write_cache(df: pd.DataFrame, cpath: Path, stamp: dict) -> None:
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[b"workbench"] = json.dumps({"stamp": stamp, "attrs": df.attrs}).encode()
    table = table.replace_schema_metadata(meta)
    tmp = cpath.with_name(cpath.name + f".tmp{os.getpid()}")
    try:
        pq.write_table(table, tmp)
        tmp.replace(cpath)
    except OSError:
        tmp.unlink(missing_ok=True)


def _cached(path: Path, kind: str, cache: bool, build) -> pd.DataFrame:
    if not cache:
        return build()
    stamp = _stamp(path)
    stamp["kind"] = kind
    cpath = cache_path(path, kind)
    df = _read_cache(cpath, stamp)
    if df is not None:
        return df
    df = build()
    _write_cache(df, cpath, stamp)
    return df


# ------------------------------------------------------------------------------------------------------------------
# Streaming CSV with error location
# ------------------------------------------------------------------------------------------------------------------


def _locate_csv_error(path: Path, header: list[str], numeric: dict[str, type], exc: Exception) -> TraceFormatError:
    """Re-scan ``path`` with the csv module to find the first bad line after pyarrow rejected a block."""
    idx = {c: header.index(c) for c in numeric}
    with _open_text(path) as fh:
        reader = csv.reader(fh)
        next(reader, None)
        for lineno, row in enumerate(reader, start=2):
            if len(row) != len(header):
                return _err(path, lineno, f"expected {len(header)} fields ({', '.join(header)}), got {len(row)}: {row!r}")
            for col, kind in numeric.items():
                text = row[idx[col]].strip()
                try:
                    kind(text)
                except ValueError:
                    return _err(path, lineno, f"column {col!r} must be {kind.__name__}, got {text!r}")
    return _err(path, None, f"could not parse the file: {exc}")


def _csv_batches(path: Path, column_types: dict[str, pa.DataType], numeric: dict[str, type], header: list[str]):
    """Yield ``(first_row_index, RecordBatch)`` over the file, in blocks of about 8 MB."""
    try:
        source = pa.input_stream(str(path), compression="gzip" if _is_gzip(path) else None)
        reader = pacsv.open_csv(
            source,
            read_options=pacsv.ReadOptions(block_size=_BLOCK_BYTES, encoding="utf8"),
            parse_options=pacsv.ParseOptions(ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types=column_types, include_columns=list(column_types), strings_can_be_null=False
            ),
        )
        row0 = 0
        for batch in reader:
            yield row0, batch
            row0 += batch.num_rows
    except pa.ArrowInvalid as exc:
        raise _locate_csv_error(path, header, numeric, exc) from None


def _check_tokens(path: Path, row0: int, name: str, values: np.ndarray, line_offset: int) -> None:
    bad = values < 0
    if bad.any():
        i = int(np.argmax(bad))
        raise _err(path, row0 + i + line_offset, f"{name} must be >= 0, got {values[i]}")


def _check_monotone(path: Path, row0: int, t: np.ndarray, prev, line_offset: int, what: str) -> None:
    if t.size == 0:
        return
    if prev is not None and t[0] < prev:
        i, before = 0, prev
    else:
        bad = t[1:] < t[:-1]
        if not bad.any():
            return
        i = int(np.argmax(bad)) + 1
        before = t[i - 1]
    raise _err(
        path,
        row0 + i + line_offset,
        f"{what} goes backwards ({t[i]} after {before}); timestamps must be non-decreasing "
        "(pass allow_unsorted=True to sort instead)",
    )


def _header(path: Path) -> list[str]:
    return [h.strip() for h in next(csv.reader([_first_line(path)]))]


# ------------------------------------------------------------------------------------------------------------------
# BurstGPT
# ------------------------------------------------------------------------------------------------------------------


def load_burstgpt(path: str | os.PathLike, *, cache: bool = True, allow_unsorted: bool = False) -> pd.DataFrame:
    """Load a BurstGPT CSV (v1 six-column or v3 eight-column layout, detected from the header).

    Parameters
    ----------
    path : path
        The file (plain or ``.gz``), absolute or relative to the data search path (e.g. ``"burstgpt/BurstGPT_1.csv"``).
    cache : bool
        Read/write the parquet cache.
    allow_unsorted : bool
        Sort rows whose timestamps go backwards instead of raising.

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
    return _cached(p, "burstgpt", cache, lambda: _parse_burstgpt(p, allow_unsorted))


def _parse_burstgpt(p: Path, allow_unsorted: bool) -> pd.DataFrame:
    header = _header(p)
    if all(c in header for c in BURSTGPT_V3_COLUMNS):
        layout, cols = "v3", BURSTGPT_V3_COLUMNS
    elif all(c in header for c in BURSTGPT_V1_COLUMNS):
        layout, cols = "v1", BURSTGPT_V1_COLUMNS
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
        if batch.column("Timestamp").null_count or batch.column("Request tokens").null_count or batch.column(
            "Response tokens"
        ).null_count:
            for name in ("Timestamp", "Request tokens", "Response tokens"):
                col = batch.column(name)
                if col.null_count:
                    i = int(np.argmax(col.is_null().to_numpy(zero_copy_only=False)))
                    raise _err(p, row0 + i + 2, f"column {name!r} is empty")
        bad_t = ~np.isfinite(t)
        if bad_t.any():
            i = int(np.argmax(bad_t))
            raise _err(p, row0 + i + 2, f"Timestamp must be finite, got {t[i]}")
        _check_tokens(p, row0, "Request tokens", req, 2)
        _check_tokens(p, row0, "Response tokens", resp, 2)
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
    return pd.Categorical.from_codes(codes, categories=pd.Index(cats)) if len(set(cats)) == len(cats) else pd.Categorical(
        arr.to_pandas()
    )


# ------------------------------------------------------------------------------------------------------------------
# Azure
# ------------------------------------------------------------------------------------------------------------------


def load_azure(
    path: str | os.PathLike, *, log_type: str | None = None, cache: bool = True, allow_unsorted: bool = False
) -> pd.DataFrame:
    """Load an Azure LLM inference trace (2023 one-hour or 2024 one-week CSV).

    Parameters
    ----------
    path : path
        e.g. ``"azure-llm-2023/AzureLLMInferenceTrace_conv.csv"`` (on the search path) or a local file.
    log_type : str, optional
        Service label; default from the file name (``code`` or ``conversation``).
    cache, allow_unsorted : bool
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
    return _cached(p, f"azure-{log_type}", cache, lambda: _parse_azure(p, log_type, allow_unsorted))


def _parse_azure(p: Path, log_type: str, allow_unsorted: bool) -> pd.DataFrame:
    header = _header(p)
    missing = [c for c in AZURE_COLUMNS if c not in header]
    if missing:
        raise _err(p, 1, f"not an Azure LLM trace header: missing column(s) {', '.join(missing)}; found "
                   f"{', '.join(header)}")
    types = {"TIMESTAMP": pa.string(), "ContextTokens": pa.int64(), "GeneratedTokens": pa.int64()}
    numeric: dict[str, type] = {"ContextTokens": int, "GeneratedTokens": int}
    ns_parts, req_parts, resp_parts = [], [], []
    prev = None
    for row0, batch in _csv_batches(p, types, numeric, header):
        text = batch.column("TIMESTAMP").to_numpy(zero_copy_only=False)
        ts = pd.to_datetime(pd.Series(text), format="ISO8601", errors="coerce", utc=True)
        if ts.isna().any():
            i = int(np.argmax(ts.isna().to_numpy()))
            raise _err(p, row0 + i + 2, f"TIMESTAMP is not a date-time: {text[i]!r}")
        ns = ts.dt.tz_localize(None).to_numpy().astype("datetime64[ns]").astype(np.int64)
        req = batch.column("ContextTokens").to_numpy(zero_copy_only=False)
        resp = batch.column("GeneratedTokens").to_numpy(zero_copy_only=False)
        _check_tokens(p, row0, "ContextTokens", req, 2)
        _check_tokens(p, row0, "GeneratedTokens", resp, 2)
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


# ------------------------------------------------------------------------------------------------------------------
# Mooncake
# ------------------------------------------------------------------------------------------------------------------


def _locate_json_error(path: Path, exc: Exception) -> TraceFormatError:
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                return _err(path, lineno, "empty line in JSONL")
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                return _err(path, lineno, f"not valid JSON ({e.msg} at column {e.colno})")
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
    return _err(path, None, f"could not parse the file: {exc}")


def load_mooncake(
    path: str | os.PathLike, *, log_type: str | None = None, cache: bool = True, allow_unsorted: bool = False
) -> pd.DataFrame:
    """Load a Mooncake-style JSONL trace (``timestamp`` in ms, ``input_length``, ``output_length``, ``hash_ids``).

    Parameters
    ----------
    path : path
        e.g. ``"mooncake-fast25/conversation_trace.jsonl"``.
    log_type : str, optional
        Default from the file name: ``conversation``, ``synthetic``, ``toolagent``, else ``mooncake``.
    cache, allow_unsorted : bool
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
    return _cached(p, f"mooncake-{log_type}", cache, lambda: _parse_mooncake(p, log_type, allow_unsorted))


def _parse_mooncake(p: Path, log_type: str, allow_unsorted: bool) -> pd.DataFrame:
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
            _check_tokens(p, row0, "input_length", batch.column("input_length").to_numpy(zero_copy_only=False), 1)
            _check_tokens(p, row0, "output_length", batch.column("output_length").to_numpy(zero_copy_only=False), 1)
            if not allow_unsorted:
                _check_monotone(p, row0, t, prev, 1, "timestamp")
            prev = t[-1] if t.size else prev
            batches.append(batch)
            row0 += batch.num_rows
    except pa.ArrowInvalid as exc:
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


# ------------------------------------------------------------------------------------------------------------------
# Dispatcher
# ------------------------------------------------------------------------------------------------------------------


def load_trace(
    path: str | os.PathLike,
    *,
    format: str = "auto",  # noqa: A002 - the natural name
    cache: bool = True,
    log_type: str | None = None,
    allow_unsorted: bool = False,
) -> pd.DataFrame:
    """Load any supported trace into the request schema, detecting the format from the first line.

    Parameters
    ----------
    path : path
        Absolute, or relative to the data search path.
    format : {"auto", "burstgpt", "azure", "mooncake"}
    cache : bool
        Use the parquet cache (beside the source, or in ``workbench.data.cache_dir()``).
    log_type : str, optional
        Override the service label (Azure and Mooncake).
    allow_unsorted : bool
        Sort out-of-order rows instead of raising.

    Examples
    --------
    >>> df = load_trace("azure-llm-2023/AzureLLMInferenceTrace_conv.csv")  # doctest: +SKIP
    >>> str(df["log_type"].iloc[0])  # doctest: +SKIP
    'conversation'
    """
    one_of("format", format, _FORMATS)
    p = _resolve(path)
    fmt = detect_format(p) if format == "auto" else format
    if fmt == "burstgpt":
        return load_burstgpt(p, cache=cache, allow_unsorted=allow_unsorted)
    if fmt == "azure":
        return load_azure(p, log_type=log_type, cache=cache, allow_unsorted=allow_unsorted)
    return load_mooncake(p, log_type=log_type, cache=cache, allow_unsorted=allow_unsorted)

