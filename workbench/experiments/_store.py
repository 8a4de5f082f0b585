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
import tempfile
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

__all__ = ["point_seed", "cache_key", "cache_path", "compute", "read_record", "write_record"]


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
    what = {"experiment": exp.name, "version": exp.version, "params": params, "base_seed": base_seed,
            "replicate": replicate}
    return hashlib.sha256(_canonical(what)).hexdigest()[:32]


def cache_path(exp: Experiment, key: str) -> Path:
    """``$WORKBENCH_CACHE/experiments/<name>/<key>.parquet``."""
    return cache_dir() / "experiments" / exp.name / f"{key}.parquet"


def _frame(result: Any, params: dict[str, Any], replicate: int) -> pd.DataFrame:
    if isinstance(result, Mapping):
        result = pd.DataFrame([dict(result)])
    if not isinstance(result, pd.DataFrame):
        raise TypeError(f"an experiment returns a dict of scalars or a DataFrame, got {type(result).__name__}")
    clash = [c for c in result.columns if c in params or c == "seed"]
    if clash:
        raise ValueError(f"result columns {clash} repeat a parameter name or 'seed'")
    n = len(result)
    head = pd.DataFrame({**{k: [v] * n for k, v in params.items()}, "seed": np.full(n, replicate, dtype=np.int64)})
    return pd.concat([head, result.reset_index(drop=True)], axis=1)


def compute(fn, params: dict[str, Any], seed: int, replicate: int) -> tuple[str, bytes | str]:
    """Run one point x seed (on a worker or in process): ``("ok", parquet bytes)`` or ``("error", traceback)``."""
    try:
        frame = _frame(fn(**params, seed=seed), params, replicate)
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buf)
        return "ok", buf.getvalue()
    except Exception:
        return "error", traceback.format_exc()


def read_record(data: bytes | Path) -> pa.Table | None:
    """Parse a record (bytes or a file); ``None`` when the file is missing or unreadable (it is then recomputed)."""
    try:
        return pq.read_table(pa.BufferReader(data) if isinstance(data, bytes) else data)
    except (OSError, pa.ArrowException):
        return None


def write_record(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
