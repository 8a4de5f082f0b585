"""Per-point seeds, cache keys and the parquet records of one point x seed.

A point's random stream is ``SeedSequence(base_seed, spawn_key=(*digest(seeded parameters), replicate))``: the child
that ``SeedSequence(base_seed).spawn`` would hand out, addressed by the point's own values instead of its position
in the grid, so the same point gets the same stream whatever the grid around it, the worker count, the completion
order or a restart. The cache key hashes the experiment's name and version, every parameter, the base seed and the
replicate. Records are written atomically (a temporary file in the same directory, then :func:`os.replace`), so a
reader never sees a partial file even when the writer is killed.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..data import cache_dir
from ._space import Experiment

__all__ = [
    "point_seed",
    "cache_key",
    "cache_folder",
    "cache_path",
    "compute",
    "compute_batch",
    "read_record",
    "write_record",
]


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def point_seed(exp: Experiment, params: dict[str, Any], base_seed: int, replicate: int) -> int:
    """The integer seed handed to ``exp.fn`` at ``params`` for ``replicate`` (only seeded parameters count).

    Examples
    --------
    >>> from workbench.experiments import get
    >>> exp = get("pred-fct-vs-load")
    >>> a = point_seed(exp, {**exp.defaults(), "marking": "static"}, 0, 1)
    >>> a == point_seed(exp, {**exp.defaults(), "marking": "pred"}, 0, 1)   # a treatment: common random numbers
    True
    >>> a == point_seed(exp, {**exp.defaults(), "load": 0.5}, 0, 1)
    False
    """
    seeded = {p.name: params[p.name] for p in exp.params if p.seeded}
    words = np.frombuffer(hashlib.sha256(_canonical(seeded)).digest()[:16], dtype="<u4")
    seq = np.random.SeedSequence(base_seed, spawn_key=(*(int(w) for w in words), replicate))
    return int(seq.generate_state(1, np.uint64)[0])


def cache_key(exp: Experiment, params: dict[str, Any], base_seed: int, replicate: int) -> str:
    """Hex digest naming the record of one point x seed."""
    what = {
        "experiment": exp.name,
        "version": exp.version,
        "params": params,
        "base_seed": base_seed,
        "replicate": replicate,
    }
    return hashlib.sha256(_canonical(what)).hexdigest()[:32]


def cache_folder(exp: Experiment) -> Path:
    """``$WORKBENCH_CACHE/experiments/<name>/``: where the records of ``exp`` live."""
    return cache_dir() / "experiments" / exp.name


def cache_path(exp: Experiment, key: str) -> Path:
    """``$WORKBENCH_CACHE/experiments/<name>/<key>.parquet``."""
    return cache_folder(exp) / f"{key}.parquet"


_ARROW_TYPES = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: pa.string()}


def _table(result: Any, params: dict[str, Any], replicate: int) -> pa.Table:
    if isinstance(result, Mapping):
        table = pa.table({k: [v] for k, v in result.items()})
    elif isinstance(result, pd.DataFrame):
        table = pa.Table.from_pandas(result, preserve_index=False).replace_schema_metadata(None)
    else:
        raise TypeError(f"an experiment returns a dict of scalars or a DataFrame, got {type(result).__name__}")
    clash = [c for c in table.column_names if c in params or c == "seed"]
    if clash:
        raise ValueError(f"result columns {clash} repeat a parameter name or 'seed'")
    n = table.num_rows
    head = [pa.array([v] * n, type=_ARROW_TYPES[type(v)]) for v in params.values()]
    head.append(pa.array(np.full(n, replicate, dtype=np.int64)))
    return pa.Table.from_arrays(head + table.columns, names=[*params, "seed", *table.column_names])


def compute(fn, params: dict[str, Any], seed: int, replicate: int) -> tuple[str, bytes | str]:
    """Run one point x seed (on a worker or in process): ``("ok", parquet bytes)`` or ``("error", traceback)``."""
    try:
        buf = io.BytesIO()
        pq.write_table(_table(fn(**params, seed=seed), params, replicate), buf)
        return "ok", buf.getvalue()
    except Exception:
        return "error", traceback.format_exc()


def compute_batch(fn, batch: list[tuple]) -> list[tuple[int, str, bytes | str]]:
    """:func:`compute` for each ``(index, params, seed, replicate)`` of ``batch``: ``(index, status, payload)``."""
    return [(i, *compute(fn, params, seed, replicate)) for i, params, seed, replicate in batch]


def read_record(data: bytes | Path) -> pa.Table | None:
    """Parse a record (bytes or a file); ``None`` when the file is missing or unreadable (it is then recomputed)."""
    try:
        return pq.ParquetFile(pa.BufferReader(data) if isinstance(data, bytes) else data).read(use_threads=False)
    except (OSError, pa.ArrowException):
        return None


def write_record(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (the folder must exist)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
