"""Read any workload file the workbench knows and convert between formats, saying what each conversion loses.

:func:`read_table` reads what the trace loaders read (BurstGPT CSV, Azure CSV, Mooncake JSONL; see
:mod:`workbench.workloads.traces`) and what the exporters write (timestamped CSV and JSONL with an ``arrival_s``
column, parquet). :func:`losses` lists, for a table and an output format, every column or precision the format
cannot carry; :func:`convert` writes the file (atomically, refusing to overwrite unless asked) and returns them.

Examples
--------
>>> import tempfile, pathlib
>>> df = pd.DataFrame({"arrival_s": [0.0, 0.0004], "input_tokens": [600, 100], "output_tokens": [5, 7],
...                    "client_id": [3, 4]})
>>> losses(df, "mooncake", hash_block_tokens=None)[0]
'client_id is dropped (mooncake has no such field)'
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from . import traces
from .export import FORMATS, format_for, write_stream
from .schema import OPTIONAL, standardize, validate_requests
from .traces.files import _header, check_last_line

__all__ = ["read_table", "losses", "convert"]

_KEEPS = {
    "mooncake": {"hash_ids"},
    "burstgpt": {"model", "log_type", "failed"},
    "csv": None,  # None: every column
    "jsonl": None,
    "parquet": None,
}


def _first_line(p: Path) -> str:
    with open(p, "rb") as fh:
        return fh.readline(65536).decode("utf-8", "replace").strip()


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


def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Load a workload file into the request schema, whatever the workbench format.

    Files with an ``arrival_s`` column (the timestamped CSV and JSONL exporters, parquet) are read directly; anything
    else goes to :func:`workbench.workloads.traces.load_trace`. Malformed input raises ValueError naming the file and
    line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from workbench.workloads.export import to_timestamped_csv
    >>> d = pd.DataFrame({"arrival_s": [0.0, 1.0], "input_tokens": [5, 6], "output_tokens": [1, 2]})
    >>> read_table(to_timestamped_csv(d, pathlib.Path(tempfile.mkdtemp()) / "t.csv"))["input_tokens"].tolist()
    [5, 6]
    """
    p = Path(path).expanduser()
    if not p.exists() and not p.is_absolute():
        from ..data import find

        p = find(str(path)) or p  # relative to the data search path, as the loaders take it
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such file")
    if p.suffix.lower() in (".parquet", ".pq"):
        try:
            df = pq.read_table(p).to_pandas()
        except Exception as exc:
            raise ValueError(f"{p}: not a readable parquet file ({exc})") from None
        out = _check(df, p, 0)
    else:
        head = _first_line(p)
        if head.startswith("arrival_s,") or head == "arrival_s":
            header = _header(p)  # a duplicated column is an error, not a silent "arrival_s.1"
            check_last_line(p, len(header))
            try:
                df = pd.read_csv(p, dtype={"session_id": "string"})
            except (ValueError, pd.errors.ParserError) as exc:
                raise ValueError(f"{p}: {exc}") from None
            if "hash_ids" in df:
                df["hash_ids"] = [json.loads(v) if isinstance(v, str) else [] for v in df["hash_ids"]]
            out = _check(df, p, 2)
        elif head.startswith("{") and '"arrival_s"' in head:
            check_last_line(p)
            try:
                df = pd.read_json(p, lines=True, dtype={"session_id": "string"})
            except ValueError as exc:
                raise ValueError(f"{p}: not valid JSON lines ({exc})") from None
            out = _check(df, p, 1)
        else:
            return traces.load_trace(p)
    for col in ("model", "log_type"):
        if col in out:
            out[col] = out[col].astype("category")
    out = standardize(out)
    out.attrs.update({"source": str(p), "format": "timestamped", "time_resolution_s": None})
    return out


def losses(
    df: pd.DataFrame, fmt: str, *, hash_block_tokens: int | None = None, time_resolution_s: float | None = None
) -> list[str]:
    """What writing ``df`` as ``fmt`` loses, one sentence per column or precision (empty: nothing)."""
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FORMATS)}, got {fmt!r}")
    out = []
    keeps = _KEEPS[fmt]
    if keeps is not None:
        for col in df.columns:
            if col in ("arrival_s", "input_tokens", "output_tokens") or col in keeps:
                continue
            if col in OPTIONAL and df[col].isna().all():
                continue
            out.append(f"{col} is dropped ({fmt} has no such field)")
    t = df["arrival_s"].to_numpy(dtype=float)
    if fmt == "mooncake" and np.any(np.rint(t * 1000) != t * 1000):
        out.append("arrival times are rounded to whole milliseconds")
    if fmt == "burstgpt":
        res = time_resolution_s
        if res is None and np.any(np.round(t, 3) != t):
            out.append("arrival times are rounded to milliseconds")
        elif res is not None:
            out.append(f"arrival times are floored to {res:g} s")
        if "hash_ids" in df:
            out.append("hash_ids are dropped (BurstGPT CSV has no prefix blocks)")
        for col, fill in (("model", "GPT-4"), ("log_type", "API log")):
            if col not in df or df[col].isna().any():
                out.append(f"missing {col} is written as {fill!r}")
    if fmt == "mooncake":
        if "hash_ids" not in df and hash_block_tokens is not None:
            out.append(f"hash_ids are synthetic ({hash_block_tokens}-token blocks), not measured prefixes")
        elif "hash_ids" not in df:
            out.append("no hash_ids are written (vLLM's timed-trace loader needs them: give --hash-block-tokens)")
    if fmt == "csv" and "hash_ids" in df:
        out.append("hash_ids become JSON list text")
    return out


def convert(
    src: str | os.PathLike, dst: str | os.PathLike, *, fmt: str | None = None, overwrite: bool = False, **options
) -> tuple[Path, int, list[str]]:
    """Convert ``src`` (any :func:`read_table` file) to ``dst`` in ``fmt`` (default: from ``dst``'s name).

    ``options`` go to :func:`workbench.workloads.export.write_stream`. Returns the written path, the number of
    requests and :func:`losses`.
    """
    fmt = fmt or format_for(dst)
    df = read_table(src)
    lost = losses(
        df, fmt, hash_block_tokens=options.get("hash_block_tokens"), time_resolution_s=options.get("time_resolution_s")
    )
    keeps = _KEEPS[fmt]
    if keeps is not None:  # drop what the format cannot carry before writing
        df = df[[c for c in df.columns if c in ("arrival_s", "input_tokens", "output_tokens") or c in keeps]]
    p, n = write_stream([df], dst, fmt, overwrite=overwrite, **options)
    return p, n, lost
