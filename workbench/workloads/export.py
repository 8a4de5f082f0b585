"""Exporters: write any request table in the formats that serving benchmarks read.

The exporters are driven by the request schema (:mod:`workbench.workloads.schema`), not by where a table came from:
a loaded trace, the BurstGPT-style generator or the ServeGen composer (``client_id``, ``arrival_s``,
``input_tokens``, ``output_tokens``, ...) all go through the same functions. Required columns are ``arrival_s``,
``input_tokens`` and ``output_tokens``; optional ones are used when present.

* :func:`to_burstgpt_csv` -- BurstGPT v1 CSV (``Timestamp,Model,Request tokens,Response tokens,Total tokens,Log
  Type``). vLLM's ``vllm bench serve --dataset-name burstgpt`` takes its request/response lengths from this file
  (its loader keeps only ``Model == "GPT-4"`` rows with positive response tokens and samples them, and arrival times
  come from ``--request-rate`` and ``--burstiness``, not from the timestamps); AIPerf's ``burst_gpt_trace`` dataset
  type replays the ``Timestamp`` column (in seconds, multiplied by 1000; so sub-second times are kept by default).
* :func:`to_mooncake_jsonl` -- Mooncake-style JSONL (``timestamp`` in integer milliseconds, ``input_length``,
  ``output_length`` and ``hash_ids``, the table's own or synthetic prefix blocks with ``hash_block_tokens``):
  AIPerf's ``--custom-dataset-type mooncake_trace`` with ``--fixed-schedule`` sends each request at its timestamp;
  vLLM's timed-trace loader builds each prompt from its ``hash_ids`` (without them the prompts are empty), replayed
  with ``--timed-trace-chunk-hash-size 512 --timed-trace-sec-multiplier 0.001`` for 512-token blocks and
  millisecond timestamps.
* :func:`to_timestamped_csv` / :func:`to_timestamped_jsonl` -- every schema column (times in seconds), for the
  workbench's own round trips and for tools that take a plain table.

Every exporter checks the table before writing (schema, arrival times in ``[0, MAX_ARRIVAL_S]``, token counts at
most :data:`MAX_TOKENS`, so no integer conversion can wrap), refuses to replace an existing file unless
``overwrite=True``, and writes atomically (a temporary file in the destination directory, flushed, fsynced and
renamed): a failure mid-write (a full disk) leaves the previous file untouched and no partial file behind.

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
import pyarrow as pa
import pyarrow.parquet as pq

from .. import _validate as V
from ..cache import atomic_path, check_target
from .schema import validate_requests

__all__ = [
    "MAX_ARRIVAL_S",
    "MAX_TOKENS",
    "to_burstgpt_csv",
    "to_mooncake_jsonl",
    "to_timestamped_csv",
    "to_timestamped_jsonl",
    "to_parquet",
    "write_stream",
    "format_for",
    "FORMATS",
    "PARQUET_ROW_GROUP_ROWS",
    "synthetic_hash_ids",
]

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


def to_burstgpt_csv(
    df: pd.DataFrame,
    path: str | os.PathLike,
    *,
    time_resolution_s: float | None = None,
    model: str = "GPT-4",
    log_type: str = "API log",
    line_terminator: str = "\n",
    overwrite: bool = False,
) -> Path:
    """Write ``df`` as a BurstGPT v1 CSV.

    Parameters
    ----------
    df : DataFrame
        A request table (any source).
    path : path
        The file to write (its directory is created).
    time_resolution_s : float or None
        ``None`` (default) writes seconds with millisecond precision, trailing zeros dropped (``5``, ``5.25``):
        AIPerf's ``burst_gpt_trace`` multiplies the column by 1000, so floored times would replay a 100 req/s
        stream as one burst per second. A number floors timestamps to that resolution; ``1.0`` writes integer
        seconds, as the release files do.
    model, log_type : str
        Fill for rows or tables without ``model`` / ``log_type``. ``"GPT-4"`` is the default because vLLM's BurstGPT
        loader keeps only GPT-4 rows; workbench labels ``conversation``/``api`` become ``Conversation log``/``API log``.
    line_terminator : str
        ``"\\n"`` or ``"\\r\\n"`` (the release files use CRLF).
    overwrite : bool
        Replace an existing file (otherwise :class:`FileExistsError`).

    Returns
    -------
    Path

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> df = pd.DataFrame({"arrival_s": [5.7, 45.25], "input_tokens": [472, 1087], "output_tokens": [18, 0]})
    >>> p = to_burstgpt_csv(df, pathlib.Path(tempfile.mkdtemp()) / "b.csv")
    >>> print(p.read_text(), end="")
    Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
    5.7,GPT-4,472,18,490,API log
    45.25,GPT-4,1087,0,1087,API log
    >>> print(to_burstgpt_csv(df, p, time_resolution_s=1.0, overwrite=True).read_text().splitlines()[1])
    5,GPT-4,472,18,490,API log
    """
    p = _prepare(df, path, overwrite)
    V.one_of("line_terminator", line_terminator, ("\n", "\r\n"))
    out = _burstgpt_frame(df, time_resolution_s, model, log_type)
    with atomic_path(p, overwrite=overwrite) as tmp:
        out.to_csv(tmp, index=False, lineterminator=line_terminator)
    return p


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


def to_mooncake_jsonl(
    df: pd.DataFrame,
    path: str | os.PathLike,
    *,
    hash_ids: bool = True,
    hash_block_tokens: int | None = None,
    overwrite: bool = False,
) -> Path:
    """Write ``df`` as Mooncake-style JSONL: ``timestamp`` (ms, integer), ``input_length``, ``output_length`` and
    ``hash_ids``.

    Parameters
    ----------
    df : DataFrame
        A request table (any source).
    path : path
    hash_ids : bool
        Write the table's own ``hash_ids`` column when it has one (Mooncake traces: 512-token blocks).
    hash_block_tokens : int, optional
        For a table without ``hash_ids``: write synthetic prefix blocks of this many tokens
        (:func:`synthetic_hash_ids`): unique ids per request, ``ceil(input_tokens / hash_block_tokens)`` of them,
        shared between consecutive requests of a ``session_id`` where the table has one. vLLM's timed-trace loader
        builds prompts from ``hash_ids`` only; use 512 with ``--timed-trace-chunk-hash-size 512``.
    overwrite : bool
        Replace an existing file (otherwise :class:`FileExistsError`).

    The file loads in :func:`workbench.workloads.traces.load_mooncake` and in AIPerf (``--custom-dataset-type
    mooncake_trace``).

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> df = pd.DataFrame({"arrival_s": [0.0, 0.25], "input_tokens": [600, 100], "output_tokens": [5, 7]})
    >>> p = to_mooncake_jsonl(df, pathlib.Path(tempfile.mkdtemp()) / "m.jsonl", hash_block_tokens=512)
    >>> print(p.read_text(), end="")
    {"timestamp":0,"input_length":600,"output_length":5,"hash_ids":[0,1]}
    {"timestamp":250,"input_length":100,"output_length":7,"hash_ids":[2]}
    """
    p = _prepare(df, path, overwrite)
    out = _mooncake_frame(df, hash_ids, hash_block_tokens)
    with atomic_path(p, overwrite=overwrite) as tmp:
        out.to_json(tmp, orient="records", lines=True)
    return p


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


def to_timestamped_csv(df: pd.DataFrame, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write every schema column as CSV with a header (``arrival_s`` in seconds; ``hash_ids`` as a JSON list).

    ``overwrite`` replaces an existing file (otherwise :class:`FileExistsError`).

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> df = pd.DataFrame({"arrival_s": [0.5], "input_tokens": [1], "output_tokens": [2], "client_id": [7]})
    >>> to_timestamped_csv(df, pathlib.Path(tempfile.mkdtemp()) / "t.csv").read_text().splitlines()
    ['arrival_s,input_tokens,output_tokens,client_id', '0.5,1,2,7']
    """
    p = _prepare(df, path, overwrite)
    out = _csv_frame(df)
    with atomic_path(p, overwrite=overwrite) as tmp:
        out.to_csv(tmp, index=False)
    return p


def to_timestamped_jsonl(df: pd.DataFrame, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write every schema column as JSON lines (``arrival_s`` in seconds, NA as null).

    ``overwrite`` replaces an existing file (otherwise :class:`FileExistsError`).

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> df = pd.DataFrame({"arrival_s": [0.5], "input_tokens": [1], "output_tokens": [2]})
    >>> to_timestamped_jsonl(df, pathlib.Path(tempfile.mkdtemp()) / "t.jsonl").read_text()
    '{"arrival_s":0.5,"input_tokens":1,"output_tokens":2}\\n'
    """
    p = _prepare(df, path, overwrite)
    out = _jsonl_frame(df)
    with atomic_path(p, overwrite=overwrite) as tmp:
        out.to_json(tmp, orient="records", lines=True)
    return p


#: Output formats: name -> file name endings that select it.
FORMATS: dict[str, tuple[str, ...]] = {
    "mooncake": (".mooncake.jsonl",),
    "burstgpt": (".burstgpt.csv",),
    "csv": (".csv",),
    "jsonl": (".jsonl", ".json"),
    "parquet": (".parquet", ".pq"),
}
#: Rows per parquet row group (fixed, so a file's bytes do not depend on how its rows were chunked).
PARQUET_ROW_GROUP_ROWS = 1 << 20


def format_for(path: str | os.PathLike) -> str:
    """The output format a file name selects (``x.mooncake.jsonl``, ``x.burstgpt.csv``, ``.csv``, ``.jsonl``,
    ``.parquet``).

    Examples
    --------
    >>> format_for("w.mooncake.jsonl"), format_for("w.parquet")
    ('mooncake', 'parquet')
    """
    name = Path(path).name.lower()
    for fmt, ends in FORMATS.items():
        if name.endswith(ends):
            return fmt
    known = ", ".join(e for ends in FORMATS.values() for e in ends)
    raise ValueError(f"cannot tell the format of {str(path)!r} from its name (known endings: {known}); give --format")


def _arrow(df: pd.DataFrame) -> pa.Table:
    out = _plain(df)
    for c in out.columns:  # categories as plain strings: every chunk then has the same schema
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype("string")
    table = pa.Table.from_pandas(out, preserve_index=False)
    return table.replace_schema_metadata(None)


def write_stream(
    chunks,
    path: str | os.PathLike,
    format: str,
    *,
    overwrite: bool = False,
    time_resolution_s: float | None = None,
    hash_block_tokens: int | None = None,
    model: str = "GPT-4",
    log_type: str = "API log",
    line_terminator: str = "\n",
) -> tuple[Path, int]:
    """Write request tables one after another into one file of ``format`` (see :data:`FORMATS`), atomically.

    ``chunks`` is an iterable of request tables in time order (e.g. :func:`workbench.workloads.streaming.iter_chunks`);
    each is checked as the single-table exporters check theirs. The file is the same bytes however the rows are
    split into chunks: text formats are appended, parquet is written in row groups of exactly
    :data:`PARQUET_ROW_GROUP_ROWS` rows, synthetic ``hash_ids`` continue their numbering across chunks. Options as in
    :func:`to_burstgpt_csv` and :func:`to_mooncake_jsonl`. Returns the path and the number of requests written.

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> df = pd.DataFrame({"arrival_s": [0.0, 0.5, 1.0], "input_tokens": [600, 100, 3], "output_tokens": [5, 7, 1]})
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> a, _ = write_stream([df], d / "a.jsonl", "mooncake", hash_block_tokens=512)
    >>> b, n = write_stream([df[:1], df[1:]], d / "b.jsonl", "mooncake", hash_block_tokens=512)
    >>> a.read_bytes() == b.read_bytes(), n
    (True, 3)
    """
    V.one_of("format", format, tuple(FORMATS))
    V.one_of("line_terminator", line_terminator, ("\n", "\r\n"))
    if hash_block_tokens is not None:
        V.integer("hash_block_tokens", hash_block_tokens, minimum=1)
    p = _target(path, overwrite)
    n, last, id_offset = 0, -np.inf, 0
    columns: list[str] | None = None
    with atomic_path(p, overwrite=overwrite) as tmp:
        writer, buffered = None, []
        with open(tmp, "wb") if format == "parquet" else open(tmp, "w", newline="") as fh:
            for df in chunks:
                if len(df) == 0:
                    continue
                _check_table(df)
                if df["arrival_s"].iat[0] < last:
                    raise ValueError(f"chunks must be in time order; row {n} ({df['arrival_s'].iat[0]}) < {last}")
                last = float(df["arrival_s"].iat[-1])
                if format == "burstgpt":
                    _burstgpt_frame(df, time_resolution_s, model, log_type).to_csv(
                        fh, index=False, header=n == 0, lineterminator=line_terminator
                    )
                elif format == "mooncake":
                    out = _mooncake_frame(df, True, hash_block_tokens, id_offset)
                    if hash_block_tokens is not None and "hash_ids" not in df:
                        id_offset += int((-(-out["input_length"].to_numpy() // hash_block_tokens)).sum())
                    out.to_json(fh, orient="records", lines=True)
                elif format == "csv":
                    frame = _csv_frame(df)
                    if columns is None:
                        columns = list(frame.columns)
                    elif list(frame.columns) != columns:  # rows must match the one header already written
                        raise ValueError(
                            f"chunk starting at row {n} has columns {list(frame.columns)}, but the file's header "
                            f"(from the first chunk) is {columns}; every chunk must have the same columns"
                        )
                    frame.to_csv(fh, index=False, header=n == 0)
                elif format == "jsonl":
                    _jsonl_frame(df).to_json(fh, orient="records", lines=True)
                else:
                    table = _arrow(df)
                    if writer is None:
                        writer = pq.ParquetWriter(fh, table.schema)
                    buffered.append(table.cast(writer.schema))
                    rows = sum(t.num_rows for t in buffered)
                    if rows >= PARQUET_ROW_GROUP_ROWS:
                        whole = pa.concat_tables(buffered)
                        cut = rows - rows % PARQUET_ROW_GROUP_ROWS
                        writer.write_table(whole.slice(0, cut), row_group_size=PARQUET_ROW_GROUP_ROWS)
                        buffered = [whole.slice(cut)]
                n += len(df)
            if n == 0:
                raise ValueError("nothing to write: every chunk was empty")
            if writer is not None:
                writer.write_table(pa.concat_tables(buffered), row_group_size=PARQUET_ROW_GROUP_ROWS)
                writer.close()
    return p, n


def to_parquet(df: pd.DataFrame, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Write every schema column as parquet (categories as strings, ``hash_ids`` as a list column).

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> df = pd.DataFrame({"arrival_s": [0.5], "input_tokens": [1], "output_tokens": [2]})
    >>> p = to_parquet(df, pathlib.Path(tempfile.mkdtemp()) / "t.parquet")
    >>> pd.read_parquet(p)["output_tokens"].tolist()
    [2]
    """
    return write_stream([df], path, "parquet", overwrite=overwrite)[0]
