"""The workload file formats, one :class:`Format` record each, and every decision about which format a file is in.

A record says how a format is recognised (its file-name ``endings``; ``sniff``, a test of its first line), how a file
is ``read`` into the request schema (:mod:`workbench.workloads.schema`), how request tables are written into it
(``write_chunk``, one table after another; ``write``, a whole table) and which columns it ``keeps``:

========== ======================== =========================== ======= =======
name       endings                  first line                  read    write
========== ======================== =========================== ======= =======
mooncake   ``.mooncake.jsonl``      a JSON object               yes     yes
azure      (none)                   CSV header with TIMESTAMP   yes     no
burstgpt   ``.burstgpt.csv``        CSV header with Timestamp   yes     yes
csv        ``.csv``                 ``arrival_s,...``           yes     yes
jsonl      ``.jsonl``, ``.json``    ``{"arrival_s": ...``       yes     yes
parquet    ``.parquet``, ``.pq``    (binary: by ending)         yes     yes
========== ======================== =========================== ======= =======

:func:`for_path` picks the format a file name selects (for writing; the longest matching ending), :func:`sniff` the
format of an existing file from its content (as :func:`workbench.workloads.convert.read_table` reads it: parquet by its
ending, the workbench's own timestamped CSV/JSONL by a first line naming ``arrival_s``, then the published trace
layouts, which may be gzip-compressed, by their decoded header), :func:`by_name` a format by name. The exporters
(:mod:`.export`), ``read_table``, :func:`load_trace` and :func:`detect_format` (re-exported by :mod:`.traces`) and
``workbench workload`` look formats up here and nowhere else. The per-format parsing stays in the trace loaders
(:mod:`.traces.formats`) and the row layouts in :mod:`._frames`.

Examples
--------
>>> for_path("w.mooncake.jsonl").name, for_path("w.jsonl").name, by_name("burstgpt").endings
('mooncake', 'jsonl', ('.burstgpt.csv',))
>>> sorted(by_name("mooncake").keeps)
['arrival_s', 'hash_ids', 'input_tokens', 'output_tokens']
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .. import _validate as V
from .._contracts import Opaque, accepts, output
from ..cache import atomic_path
from ._frames import (
    PARQUET_ROW_GROUP_ROWS,
    _arrow,
    _burstgpt_frame,
    _check_table,
    _csv_frame,
    _jsonl_frame,
    _mooncake_frame,
    _prepare,
    _target,
)
from .schema import standardize, validate_requests
from .traces.files import (
    AZURE_COLUMNS,
    BURSTGPT_V1_COLUMNS,
    _err,
    _header,
    _resolve,
    check_last_line,
)
from .traces.files import _first_line as _decoded_first_line
from .traces.formats import load_azure, load_burstgpt, load_mooncake

__all__ = [
    "Format",
    "REGISTRY",
    "by_name",
    "for_path",
    "sniff",
    "writable",
    "write_stream",
    "write_checked",
    "load_trace",
    "detect_format",
]

_BASE = frozenset({"arrival_s", "input_tokens", "output_tokens"})


@output
@dataclass(frozen=True)
class Format:
    """One workload file format.

    Attributes
    ----------
    name : str
        The name ``--format`` and ``write_stream(format=)`` take.
    endings : tuple of str
        File-name endings that select it (lower case; longest first where they overlap).
    sniff : callable or None
        ``sniff(first_line) -> bool``: whether a file starting with this line is in the format; None when the content
        cannot tell (parquet: recognised by its ending).
    read : callable or None
        ``read(path, **options) -> DataFrame`` in the request schema; None for a write-only format. The trace layouts
        take the loaders' options (``cache``, ``log_type``, ``allow_unsorted``, ``allow_extreme``).
    write_chunk : callable or None
        ``write_chunk(fh, df, n, state, **options)`` appends the checked table ``df`` (``n`` rows already written;
        ``state`` a dict the format keeps between chunks) to the open file; None for a read-only format.
    keeps : frozenset of str or None
        The columns a write preserves (None: every column).
    trace : bool
        A published trace layout: sniffed from the decoded first line (plain or ``.gz``, a UTF-8 BOM dropped) and read
        by :func:`load_trace`.
    header : str
        What the first line looks like, for the error on an unrecognised one.
    binary : bool
        Written in binary mode.
    finish : callable or None
        ``finish(fh, state)`` after the last chunk.
    """

    name: str
    endings: tuple[str, ...]
    sniff: Callable[[str], bool] | None
    read: Callable[..., pd.DataFrame] | None
    write_chunk: Callable[..., None] | None
    keeps: frozenset[str] | None
    trace: bool = False
    header: str = ""
    binary: bool = False
    finish: Callable[[Any, dict], None] | None = None

    @property
    def write(self) -> Callable[..., Path] | None:
        """``write(df, path, *, overwrite=False, **options) -> Path``: one table, checked, written atomically (None
        for a read-only format)."""
        return None if self.write_chunk is None else partial(_write_table, self)


# Sniffing the first line


def _csv_header(line: str) -> list[str] | None:
    """A CSV header's stripped names; None for a line that is a JSON object."""
    if line.lstrip().startswith("{"):
        return None
    return [h.strip() for h in next(csv.reader([line]))]


def _is_mooncake(line: str) -> bool:
    return line.lstrip().startswith("{")


def _is_azure(line: str) -> bool:
    header = _csv_header(line)
    return header is not None and "TIMESTAMP" in header


def _is_burstgpt(line: str) -> bool:
    header = _csv_header(line)
    return header is not None and "Timestamp" in header and "Request tokens" in header


def _is_timestamped_csv(line: str) -> bool:
    return line.startswith("arrival_s,") or line == "arrival_s"


def _is_timestamped_jsonl(line: str) -> bool:
    return line.startswith("{") and '"arrival_s"' in line


def _raw_first_line(p: Path) -> str:
    """The first line as the timestamped formats are sniffed: raw bytes (never decompressed), stripped."""
    with open(p, "rb") as fh:
        return fh.readline(65536).decode("utf-8", "replace").strip()


# Reading the workbench's own formats (the trace layouts are read by their loaders)


def _check(df: pd.DataFrame, p: Path, first_data_line: int) -> pd.DataFrame:
    try:
        validate_requests(df)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        if " row " in msg:
            row = int(msg.split(" row ")[1].split()[0])
            raise ValueError(f"{p}:{row + first_data_line}: {msg}") from None
        raise ValueError(f"{p}: {msg}") from None
    return df


def _timestamped(out: pd.DataFrame, p: Path) -> pd.DataFrame:
    for col in ("model", "log_type"):
        if col in out:
            out[col] = out[col].astype("category")
    out = standardize(out)
    out.attrs.update({"source": str(p), "format": "timestamped", "time_resolution_s": None})
    return out


def _read_csv(p: Path) -> pd.DataFrame:
    header = _header(p)  # a duplicated column is an error, not a silent "arrival_s.1"
    check_last_line(p, len(header))
    try:
        df = pd.read_csv(p, dtype={"session_id": "string"})
    except (ValueError, pd.errors.ParserError) as exc:
        raise ValueError(f"{p}: {exc}") from None
    if "hash_ids" in df:
        df["hash_ids"] = [json.loads(v) if isinstance(v, str) else [] for v in df["hash_ids"]]
    return _timestamped(_check(df, p, 2), p)


def _read_jsonl(p: Path) -> pd.DataFrame:
    check_last_line(p)
    try:
        df = pd.read_json(p, lines=True, dtype={"session_id": "string"})
    except ValueError as exc:
        raise ValueError(f"{p}: not valid JSON lines ({exc})") from None
    return _timestamped(_check(df, p, 1), p)


def _read_parquet(p: Path) -> pd.DataFrame:
    try:
        df = pq.read_table(p).to_pandas()
    except Exception as exc:
        raise ValueError(f"{p}: not a readable parquet file ({exc})") from None
    return _timestamped(_check(df, p, 0), p)


def _read_burstgpt(path, *, log_type: str | None = None, **options) -> pd.DataFrame:
    """:func:`load_burstgpt`; ``log_type`` is ignored (the file has its own ``Log Type`` column)."""
    return load_burstgpt(path, **options)


# Writing one chunk


def _burstgpt_chunk(
    fh, df, n, state, *, time_resolution_s=None, model="GPT-4", log_type="API log", line_terminator="\n", **_
) -> None:
    _burstgpt_frame(df, time_resolution_s, model, log_type).to_csv(
        fh, index=False, header=n == 0, lineterminator=line_terminator
    )


def _mooncake_chunk(fh, df, n, state, *, hash_block_tokens=None, hash_ids=True, **_) -> None:
    out = _mooncake_frame(df, hash_ids, hash_block_tokens, state.get("id_offset", 0))
    if hash_block_tokens is not None and not (hash_ids and "hash_ids" in df):  # synthetic ids continue
        state["id_offset"] = state.get("id_offset", 0) + int(
            (-(-out["input_length"].to_numpy() // hash_block_tokens)).sum()
        )
    out.to_json(fh, orient="records", lines=True)


def _csv_chunk(fh, df, n, state, **_) -> None:
    frame = _csv_frame(df)
    columns = state.setdefault("columns", list(frame.columns))
    if list(frame.columns) != columns:  # rows must match the one header already written
        raise ValueError(
            f"chunk starting at row {n} has columns {list(frame.columns)}, but the file's header "
            f"(from the first chunk) is {columns}; every chunk must have the same columns"
        )
    frame.to_csv(fh, index=False, header=n == 0)


def _json_lines(fh, frame: pd.DataFrame) -> None:
    """``frame.to_json(fh, orient="records", lines=True)``, the same bytes. A frame of numbers and booleans only is
    written from pandas' records string by splitting it at ``},{`` (no value can hold one), which skips the
    character-by-character line conversion pandas runs after it (40% of writing a numeric chunk)."""
    numeric = all(pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t) for t in frame.dtypes)
    if not numeric or frame.empty:
        frame.to_json(fh, orient="records", lines=True)
        return
    records = frame.to_json(orient="records")
    fh.write(records[1:-1].replace("},{", "}\n{"))
    fh.write("\n")


def _jsonl_chunk(fh, df, n, state, **_) -> None:
    _json_lines(fh, _jsonl_frame(df))


def _parquet_chunk(fh, df, n, state, **_) -> None:
    table = _arrow(df)
    if "writer" not in state:
        state["writer"], state["buffered"] = pq.ParquetWriter(fh, table.schema), []
    writer, buffered = state["writer"], state["buffered"]
    buffered.append(table.cast(writer.schema))
    rows = sum(t.num_rows for t in buffered)
    if rows >= PARQUET_ROW_GROUP_ROWS:  # whole row groups only: the bytes do not depend on the chunking
        whole = pa.concat_tables(buffered)
        cut = rows - rows % PARQUET_ROW_GROUP_ROWS
        writer.write_table(whole.slice(0, cut), row_group_size=PARQUET_ROW_GROUP_ROWS)
        state["buffered"] = [whole.slice(cut)]


def _parquet_finish(fh, state) -> None:
    state["writer"].write_table(pa.concat_tables(state["buffered"]), row_group_size=PARQUET_ROW_GROUP_ROWS)
    state["writer"].close()


# The registry. Order matters twice: trace layouts are sniffed in this order (a JSON line is Mooncake before a CSV
# header is looked at; an Azure TIMESTAMP header wins over BurstGPT columns), and the writable formats are listed in
# it (``--format`` choices, the known endings in errors).

MOONCAKE = Format(
    "mooncake",
    (".mooncake.jsonl",),
    _is_mooncake,
    load_mooncake,
    _mooncake_chunk,
    _BASE | {"hash_ids"},
    trace=True,
    header="Mooncake JSONL",
)
AZURE = Format(
    "azure",
    (),
    _is_azure,
    load_azure,
    None,
    _BASE | {"log_type"},
    trace=True,
    header=f"Azure ({', '.join(AZURE_COLUMNS)})",
)
BURSTGPT = Format(
    "burstgpt",
    (".burstgpt.csv",),
    _is_burstgpt,
    _read_burstgpt,
    _burstgpt_chunk,
    _BASE | {"model", "log_type", "failed"},
    trace=True,
    header=f"BurstGPT ({', '.join(BURSTGPT_V1_COLUMNS)})",
)
CSV = Format("csv", (".csv",), _is_timestamped_csv, _read_csv, _csv_chunk, None, header="arrival_s,...")
JSONL = Format(
    "jsonl", (".jsonl", ".json"), _is_timestamped_jsonl, _read_jsonl, _jsonl_chunk, None, header='{"arrival_s": ...}'
)
PARQUET = Format(
    "parquet",
    (".parquet", ".pq"),
    None,
    _read_parquet,
    _parquet_chunk,
    None,
    binary=True,
    finish=_parquet_finish,
)
REGISTRY: tuple[Format, ...] = (MOONCAKE, AZURE, BURSTGPT, CSV, JSONL, PARQUET)
#: The trace layouts in the order their names are shown (``load_trace(format=)``, the unrecognised-header error).
_TRACE_ORDER = (BURSTGPT, AZURE, MOONCAKE)
_TRACE_CHOICES = ("auto", *(f.name for f in _TRACE_ORDER))


@accepts()
def by_name(name: str) -> Format:
    """The format called ``name``.

    Examples
    --------
    >>> by_name("parquet").endings
    ('.parquet', '.pq')
    """
    V.one_of("format", name, tuple(f.name for f in REGISTRY))
    return next(f for f in REGISTRY if f.name == name)


@accepts()
def writable() -> tuple[Format, ...]:
    """The formats that can be written, in registry order."""
    return tuple(f for f in REGISTRY if f.write_chunk is not None)


@accepts()
def for_path(path: str | os.PathLike) -> Format:
    """The format a file name selects: the one with the longest matching ending (``x.mooncake.jsonl`` is Mooncake,
    ``x.jsonl`` timestamped JSONL), case-insensitive.

    Examples
    --------
    >>> for_path("w.burstgpt.csv").name, for_path("W.CSV").name
    ('burstgpt', 'csv')
    >>> for_path("w.txt")
    Traceback (most recent call last):
    ...
    ValueError: cannot tell the format of 'w.txt' from its name (known endings: .mooncake.jsonl, .burstgpt.csv, .csv, .jsonl, .json, .parquet, .pq); give --format
    """
    name = Path(path).name.lower()
    matches = [(len(e), f) for f in REGISTRY for e in f.endings if name.endswith(e)]
    if matches:
        return max(matches, key=lambda m: m[0])[1]
    known = ", ".join(e for f in REGISTRY for e in f.endings)
    raise ValueError(f"cannot tell the format of {str(path)!r} from its name (known endings: {known}); give --format")


@accepts()
def sniff(path: str | os.PathLike, *, traces_only: bool = False) -> Format:
    """The format of the existing file ``path``, from its content.

    Parquet (binary) is recognised by its ending; then the workbench's timestamped CSV and JSONL by their raw first line
    (``arrival_s,...`` or a JSON object with ``"arrival_s"``); then the trace layouts by the decoded first line (gzip
    and a UTF-8 BOM handled): Mooncake (a JSON object), Azure (a ``TIMESTAMP`` column), BurstGPT (``Timestamp`` and
    ``Request tokens``). ``traces_only`` considers the trace layouts alone (what :func:`load_trace` reads). An empty
    or unrecognised file is a :class:`workbench.workloads.traces.TraceFormatError` naming the file, line 1 and the
    expected headers.
    """
    p = Path(path)
    if not traces_only:
        for f in REGISTRY:
            if f.sniff is None and f.read is not None and p.suffix.lower() in f.endings:
                return f
        head = _raw_first_line(p)
        for f in REGISTRY:
            if not f.trace and f.sniff is not None and f.sniff(head):
                return f
    line = _decoded_first_line(p)
    for f in REGISTRY:
        if f.trace and f.sniff is not None and f.sniff(line):
            return f
    header = _csv_header(line) or []
    expected = [f.header for f in _TRACE_ORDER]
    raise _err(p, 1, f"unrecognised header {header!r}: expected {', '.join(expected[:-1])} or {expected[-1]}")


@accepts()
def detect_format(path: str | os.PathLike) -> str:
    """Return ``"burstgpt"``, ``"azure"`` or ``"mooncake"`` from the file's first line (:func:`sniff` among the trace
    layouts).

    Examples
    --------
    >>> detect_format("mooncake-fast25/conversation_trace.jsonl")  # doctest: +SKIP
    'mooncake'
    """
    return sniff(_resolve(path), traces_only=True).name


@accepts()
def load_trace(
    path: str | os.PathLike,
    *,
    format: str = "auto",
    cache: bool = True,
    log_type: str | None = None,
    allow_unsorted: bool = False,
    allow_extreme: bool = False,
) -> pd.DataFrame:
    """Load any supported trace into the request schema, detecting the format from the first line.

    Parameters
    ----------
    path : path
        Absolute, or relative to the data search path.
    format : {"auto", "burstgpt", "azure", "mooncake"}
    cache : bool
        Use the verified parquet cache under ``$WORKBENCH_CACHE/traces`` (never beside the source).
    log_type : str, optional
        Override the service label (Azure and Mooncake).
    allow_unsorted : bool
        Sort out-of-order rows instead of raising.
    allow_extreme : bool
        Load negative timestamps and token counts above 10 million instead of raising.

    Examples
    --------
    >>> df = load_trace("azure-llm-2023/AzureLLMInferenceTrace_conv.csv")  # doctest: +SKIP
    >>> str(df["log_type"].iloc[0])  # doctest: +SKIP
    'conversation'
    """
    V.one_of("format", format, _TRACE_CHOICES)
    p = _resolve(path)
    fmt = sniff(p, traces_only=True) if format == "auto" else by_name(format)
    assert fmt.read is not None
    return fmt.read(p, cache=cache, log_type=log_type, allow_unsorted=allow_unsorted, allow_extreme=allow_extreme)


# Writing


def _write(fmt: Format, chunks: Iterable[pd.DataFrame], p: Path, overwrite: bool, options: dict, checked: bool) -> int:
    """Write ``chunks`` (request tables in time order) into ``p`` atomically; the number of rows written."""
    write_chunk = fmt.write_chunk
    if write_chunk is None:
        raise ValueError(f"format {fmt.name!r} cannot be written")
    n, last = 0, -np.inf
    state: dict = {}
    with (
        atomic_path(p, overwrite=overwrite) as tmp,
        open(tmp, "wb") if fmt.binary else open(tmp, "w", newline="") as fh,
    ):
        for df in chunks:
            if len(df) == 0:
                continue
            if not checked:
                _check_table(df)
            if df["arrival_s"].iat[0] < last:
                raise ValueError(f"chunks must be in time order; row {n} ({df['arrival_s'].iat[0]}) < {last}")
            last = float(df["arrival_s"].iat[-1])
            write_chunk(fh, df, n, state, **options)
            n += len(df)
        if n == 0:
            raise ValueError("nothing to write: every chunk was empty")
        if fmt.finish is not None:
            fmt.finish(fh, state)
    return n


@accepts()
def write_checked(fmt: Format, df: pd.DataFrame, p: Path, *, overwrite: bool, **options) -> Path:
    """Write one table already checked, with its target, by ``_frames._prepare`` (the exporters' ``to_*``)."""
    _write(fmt, [df], p, overwrite, options, checked=True)
    return p


def _write_table(fmt: Format, df: pd.DataFrame, path: str | os.PathLike, *, overwrite: bool = False, **options) -> Path:
    return write_checked(fmt, df, _prepare(df, path, overwrite), overwrite=overwrite, **options)


@accepts(chunks=Opaque("an iterable of request tables"))
def write_stream(
    chunks, path: str | os.PathLike, format: str, *, overwrite: bool = False, **options
) -> tuple[Path, int]:
    """:func:`workbench.workloads.export.write_stream` (which documents it): check the format and the options, then
    write every chunk."""
    V.one_of("format", format, tuple(f.name for f in writable()))
    V.one_of("line_terminator", options.get("line_terminator", "\n"), ("\n", "\r\n"))
    if options.get("hash_block_tokens") is not None:
        V.integer("hash_block_tokens", options["hash_block_tokens"], minimum=1)
    p = _target(path, overwrite)
    return p, _write(by_name(format), chunks, p, overwrite, options, checked=False)
