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

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .._contracts import accepts
from . import formats as F
from .export import FORMATS, write_stream
from .schema import OPTIONAL

__all__ = ["read_table", "losses", "convert"]


@accepts()
def read_table(path: str | os.PathLike) -> pd.DataFrame:
    """Load a workload file into the request schema, whatever the workbench format.

    The format is :func:`workbench.workloads.formats.sniff`'s: files with an ``arrival_s`` column (the timestamped CSV
    and JSONL exporters, parquet) are read directly, the trace layouts by their loaders. Malformed input raises
    ValueError naming the file and line.

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
    fmt = F.sniff(p)
    assert fmt.read is not None
    return fmt.read(p)


@accepts()
def losses(
    df: pd.DataFrame, fmt: str, *, hash_block_tokens: int | None = None, time_resolution_s: float | None = None
) -> list[str]:
    """What writing ``df`` as ``fmt`` loses, one sentence per column or precision (empty: nothing)."""
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FORMATS)}, got {fmt!r}")
    out = []
    keeps = F.by_name(fmt).keeps
    if keeps is not None:
        for col in df.columns:
            if col in keeps:
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


@accepts()
def convert(
    src: str | os.PathLike, dst: str | os.PathLike, *, fmt: str | None = None, overwrite: bool = False, **options
) -> tuple[Path, int, list[str]]:
    """Convert ``src`` (any :func:`read_table` file) to ``dst`` in ``fmt`` (default: from ``dst``'s name).

    ``options`` go to :func:`workbench.workloads.export.write_stream`. Returns the written path, the number of
    requests and :func:`losses`.
    """
    fmt = fmt or F.for_path(dst).name
    df = read_table(src)
    lost = losses(
        df, fmt, hash_block_tokens=options.get("hash_block_tokens"), time_resolution_s=options.get("time_resolution_s")
    )
    keeps = F.by_name(fmt).keeps
    if keeps is not None:  # drop what the format cannot carry before writing
        df = df[[c for c in df.columns if c in keeps]]
    p, n = write_stream([df], dst, fmt, overwrite=overwrite, **options)
    return p, n, lost
