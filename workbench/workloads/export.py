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

import pandas as pd

from .. import _validate as V
from .._contracts import Opaque, accepts
from . import formats as F
from ._frames import MAX_ARRIVAL_S, MAX_TOKENS, PARQUET_ROW_GROUP_ROWS, _prepare, synthetic_hash_ids

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


@accepts()
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
    return F.write_checked(
        F.BURSTGPT,
        df,
        p,
        overwrite=overwrite,
        time_resolution_s=time_resolution_s,
        model=model,
        log_type=log_type,
        line_terminator=line_terminator,
    )


@accepts()
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
    return F.write_checked(
        F.MOONCAKE, df, p, overwrite=overwrite, hash_ids=hash_ids, hash_block_tokens=hash_block_tokens
    )


@accepts()
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
    return F.write_checked(F.CSV, df, _prepare(df, path, overwrite), overwrite=overwrite)


@accepts()
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
    return F.write_checked(F.JSONL, df, _prepare(df, path, overwrite), overwrite=overwrite)


#: Output formats: name -> file name endings that select it (from :data:`workbench.workloads.formats.REGISTRY`).
FORMATS: dict[str, tuple[str, ...]] = {f.name: f.endings for f in F.writable()}


@accepts()
def format_for(path: str | os.PathLike) -> str:
    """The output format a file name selects (``x.mooncake.jsonl``, ``x.burstgpt.csv``, ``.csv``, ``.jsonl``,
    ``.parquet``).

    Examples
    --------
    >>> format_for("w.mooncake.jsonl"), format_for("w.parquet")
    ('mooncake', 'parquet')
    """
    return F.for_path(path).name


@accepts(chunks=Opaque("an iterable of request tables"))
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
    return F.write_stream(
        chunks,
        path,
        format,
        overwrite=overwrite,
        time_resolution_s=time_resolution_s,
        hash_block_tokens=hash_block_tokens,
        model=model,
        log_type=log_type,
        line_terminator=line_terminator,
    )


@accepts()
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
