"""What every trace loader shares: formats and errors, opening plain or gzip files, the verified parquet cache and the
streaming CSV reader that locates a malformed line."""

from __future__ import annotations

import csv
import gzip
import io
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from ... import WorkbenchWarning
from ... import cache as _cache
from ... import data as _data
from ..._contracts import Items, Opaque, accepts
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
#: Parser version: part of every cache key, bumped whenever a loader's output or checks change.
LOADER_VERSION = "3"
#: Token counts above this are a format error unless ``allow_extreme=True`` (the released traces stay far below it).
MAX_TOKENS = 10_000_000
_BLOCK_BYTES = 8 << 20


class TraceFormatError(ValueError):
    """A malformed trace file; the message names the file and line."""


class TruncationWarning(WorkbenchWarning):
    """A data file does not end in a newline, so its last line may have been cut short (the message names the file
    and line). Published files that match their registry checksum are exempt: they are known to be whole."""


def _err(path: Path, line: int | None, msg: str) -> TraceFormatError:
    where = f"{path}, line {line}" if line is not None else str(path)
    return TraceFormatError(f"{where}: {msg}")


# Opening files (plain or gzip); the format is detected by workbench.workloads.formats


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


# The parquet cache (workbench.cache: under $WORKBENCH_CACHE, keyed by the source's content)


def _cached(path: Path, kind: str, cache: bool, build) -> pd.DataFrame:
    """``build()``, after checking ``path`` against its registry or trust-on-first-use sha256 (a file that changed
    since it was fetched is a :class:`workbench.data.ChecksumError`, never silently different data); with ``cache``
    the parsed table is kept as verified parquet under ``workbench.cache.cache_dir("traces")``, keyed by the source's
    content, :data:`LOADER_VERSION` and ``kind`` (the format and every option that changes the result)."""
    _data.verify_file(path)
    first = _first_line(path)
    check_last_line(path, None if first.lstrip().startswith("{") else len(_header(path)))
    if not cache:
        return build()
    return standardize(_cache.cached_frame(path, LOADER_VERSION, build, kind=kind))


# Streaming CSV with error location


def _raw_lines(path: Path):
    """Yield ``(line_number, text)`` decoding each line on its own, so that a bad byte is reported on its own line
    and a truncated ``.gz`` after the last whole line."""
    opener = gzip.open if _is_gzip(path) else open
    lineno = 0
    try:
        with opener(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    raise _err(
                        path, lineno, f"not UTF-8: byte 0x{raw[exc.start]:02x} at column {exc.start + 1}"
                    ) from None
                yield lineno, text.rstrip("\r\n")
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise _err(
            path, lineno + 1, f"the compressed stream ends early or is damaged (truncated download?): {exc}"
        ) from None


def _locate_csv_error(path: Path, header: list[str], numeric: dict[str, type], exc: Exception) -> TraceFormatError:
    """Re-scan ``path`` line by line to find the first bad line after pyarrow rejected a block."""
    idx = {c: header.index(c) for c in numeric}
    try:
        for lineno, text in _raw_lines(path):
            if lineno == 1:
                continue
            row = next(csv.reader([text]), [])
            if len(row) != len(header):
                return _err(
                    path, lineno, f"expected {len(header)} fields ({', '.join(header)}), got {len(row)}: {row!r}"
                )
            for col, kind in numeric.items():
                field = row[idx[col]].strip()
                if not field:
                    return _err(path, lineno, f"column {col!r} is empty")
                try:
                    kind(field)
                except ValueError:
                    return _err(path, lineno, f"column {col!r} must be {kind.__name__}, got {field!r}")
    except TraceFormatError as located:
        return located
    return _err(path, None, f"could not parse the file: {exc}")


def _csv_batches(path: Path, column_types: dict[str, pa.DataType], numeric: dict[str, type], header: list[str]):
    """Yield ``(first_row_index, RecordBatch)`` over the file, in blocks of about 8 MB; a malformed line (including a
    bad byte or a truncated ``.gz``) is a :class:`TraceFormatError` naming it."""
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
    except (pa.ArrowInvalid, OSError, EOFError) as exc:
        raise _locate_csv_error(path, header, numeric, exc) from None


def _check_present(path: Path, row0: int, batch: pa.RecordBatch, names, line_offset: int) -> None:
    """An empty or missing field in one of the ``names`` columns is an error naming its line."""
    for name in names:
        col = batch.column(name)
        if col.null_count:
            i = int(np.argmax(col.is_null().to_numpy(zero_copy_only=False)))
            raise _err(path, row0 + i + line_offset, f"column {name!r} is empty")


def _fail_first(path: Path, row0: int, line_offset: int, bad: np.ndarray, message) -> None:
    """Raise ``TraceFormatError`` at the first ``True`` of ``bad`` with ``message(i)`` (``i``: index in the block)."""
    if bad.any():
        i = int(np.argmax(bad))
        raise _err(path, row0 + i + line_offset, message(i))


_EXTREME_HINT = "(pass allow_extreme=True to load it anyway)"


def _check_tokens(
    path: Path, row0: int, name: str, values: np.ndarray, line_offset: int, allow_extreme: bool = False
) -> None:
    """Token counts must be >= 0, and <= :data:`MAX_TOKENS` unless ``allow_extreme``."""
    _fail_first(path, row0, line_offset, values < 0, lambda i: f"{name} must be >= 0, got {values[i]}")
    if not allow_extreme:
        _fail_first(
            path,
            row0,
            line_offset,
            values > MAX_TOKENS,
            lambda i: (
                f"{name} is {values[i]}, above the plausible maximum of {MAX_TOKENS:,} tokens per request "
                + _EXTREME_HINT
            ),
        )


def _check_times(path: Path, row0: int, name: str, t: np.ndarray, line_offset: int, allow_extreme: bool) -> None:
    """Timestamps must be finite, and >= 0 unless ``allow_extreme``."""
    _fail_first(path, row0, line_offset, ~np.isfinite(t), lambda i: f"{name} must be finite, got {t[i]}")
    if not allow_extreme:
        _fail_first(
            path,
            row0,
            line_offset,
            t < 0,
            lambda i: f"{name} is negative ({t[i]}): times count from the trace's origin " + _EXTREME_HINT,
        )


def _kind(fmt: str, *, allow_unsorted: bool, allow_extreme: bool) -> str:
    """The cache ``kind`` of a parse: its format plus every option that changes the result."""
    return fmt + ("-unsorted" if allow_unsorted else "") + ("-extreme" if allow_extreme else "")


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
    """The CSV header's column names; a name that appears twice is an error (which one holds the data?)."""
    names = [h.strip() for h in next(csv.reader([_first_line(path)]))]
    check_unique_columns(path, names)
    return names


@accepts(names=Items(Opaque("a header cell")))
def check_unique_columns(path: Path, names) -> None:
    """A header that names a column twice is a :class:`TraceFormatError` naming the column and both positions."""
    seen: dict[str, int] = {}
    for i, name in enumerate(names, start=1):
        if name in seen:
            raise _err(
                path,
                1,
                f"column {name!r} appears twice (columns {seen[name]} and {i}): which one holds the data is "
                "ambiguous; remove or rename one",
            )
        seen[name] = i


def _count_lines(path: Path) -> int:
    n = 0
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK_BYTES):
            n += block.count(b"\n")
    return n


@accepts()
def check_last_line(path: Path, n_fields: int | None = None) -> None:
    """Notice a file that may have been cut short: one that does not end in a newline.

    A CSV whose last line has fewer fields than the header (``n_fields``), or an empty last field, is a
    :class:`TraceFormatError` naming that line (the cut fell inside the row). Otherwise the last line is still
    suspect (``198`` cut to ``19`` parses fine): a :class:`TruncationWarning` names the file and line. Gzip files
    are checked by their own trailer; a published file matching its registry sha256 is known to be whole.
    """
    if _is_gzip(path):
        return
    size = path.stat().st_size
    if size == 0:
        return
    with open(path, "rb") as fh:
        fh.seek(max(0, size - 65536))
        tail = fh.read()
    if tail.endswith(b"\n"):
        return
    entry = _data.registry_file(path)
    if entry is not None and entry.sha256 is not None and _cache.fingerprint(path) == entry.sha256:
        return
    lineno = _count_lines(path) + 1
    last = tail.rsplit(b"\n", 1)[-1].decode("utf-8", "replace").rstrip("\r")
    if n_fields is not None and lineno > 1:
        fields = next(csv.reader([last]), [])
        if len(fields) < n_fields or not fields[-1].strip():
            raise _err(
                path,
                lineno,
                f"the last line has {len(fields)} of the header's {n_fields} fields and the file does not end in "
                f"a newline: it was cut short ({last[:80]!r})",
            )
    warnings.warn(
        f"{path}, line {lineno}: the file does not end in a newline, so its last line may have been cut short "
        f"({last[:80]!r}); check the values of that row",
        TruncationWarning,
        stacklevel=3,
    )
