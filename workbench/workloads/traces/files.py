"""What every trace loader shares: formats and errors, opening plain or gzip files, the parquet cache and the
streaming CSV reader that locates a malformed line."""

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
import pyarrow.parquet as pq

from ... import data as _data
from ..schema import standardize

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


# Opening files (plain or gzip) and detecting the format


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


# Parquet cache


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


# Streaming CSV with error location


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
