"""Per-point seeds, cache keys and the parquet records of one point x seed.

A point's random stream is ``keyed(base_seed, seeded parameters, replicate)`` (:func:`workbench._rng.keyed`:
``SeedSequence(base_seed, spawn_key=(*digest(seeded parameters), replicate))``): the child
that ``SeedSequence(base_seed).spawn`` would hand out, addressed by the point's own values instead of its position
in the grid, so the same point gets the same stream whatever the grid around it, the worker count, the completion
order or a restart. The cache key hashes the experiment's name and version, every parameter, the base seed, the
replicate and the fingerprint of the project's committed model data (:func:`data_fingerprint`: every table under
``datasets/``), so a changed spec, profile or curve table never serves results computed from the old one, version
bump or not.

A record is a verified file: one JSON header line (format, key, experiment, version, parameters, base seed,
replicate, and the sha256 and length of the payload), then the payload (the point's table as parquet). A read checks
every header field against the point it is looking for and the payload against its checksum; any mismatch (a flipped
bit, a truncated file, two records swapped, a record of another version) is reported with a :class:`CacheWarning`
naming the file, the record is removed and the point recomputed. Records are written through the project's one
atomic writer (:func:`workbench.cache.atomic_path`), so a reader never sees a partial file even when the writer is
killed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import traceback
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .._rng import keyed_int
from ..cache import CacheWarning, atomic_path
from ..data import PROJECT_ROOT, cache_dir
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
    "encode_record",
    "RECORD_SUFFIX",
]

#: File ending of an experiment record (a JSON header line, then the parquet payload).
RECORD_SUFFIX = ".rec"
_MAGIC = b"workbench-record 1\n"


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
    return keyed_int(base_seed, seeded, replicate)


@functools.cache
def data_fingerprint() -> str:
    """sha256 over the project's committed model data (path and bytes of every ``.csv``, ``.json`` and ``.npz``
    under ``datasets/``): the tables models read (GPU and model specs, engine profiles, operator curves, ServeGen
    summaries)."""
    h = hashlib.sha256()
    root = PROJECT_ROOT / "datasets"
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".csv", ".json", ".npz") and p.is_file()):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_key(exp: Experiment, params: dict[str, Any], base_seed: int, replicate: int) -> str:
    """Hex digest naming the record of one point x seed."""
    what = {
        "experiment": exp.name,
        "version": exp.version,
        "params": params,
        "base_seed": base_seed,
        "replicate": replicate,
        "data": data_fingerprint(),
    }
    return hashlib.sha256(_canonical(what)).hexdigest()[:32]


def cache_folder(exp: Experiment) -> Path:
    """``$WORKBENCH_CACHE/experiments/<name>/``: where the records of ``exp`` live."""
    return cache_dir() / "experiments" / exp.name


def cache_path(exp: Experiment, key: str) -> Path:
    """``$WORKBENCH_CACHE/experiments/<name>/<key>.rec``."""
    return cache_folder(exp) / f"{key}{RECORD_SUFFIX}"


_ARROW_TYPES = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: pa.string()}


def _table(result: Any, params: dict[str, Any], replicate: int) -> pa.Table:
    if isinstance(result, Mapping):
        bad = {k: type(v).__name__ for k, v in result.items() if not _is_scalar(v)}
        if bad:
            raise TypeError(
                "an experiment's dict result holds scalars (bool, int, float, str or None); "
                + ", ".join(f"{k!r} is a {t}" for k, t in bad.items())
            )
        table = pa.table({k: [v] for k, v in result.items()})
    elif isinstance(result, pd.DataFrame):
        table = pa.Table.from_pandas(result, preserve_index=False).replace_schema_metadata(None)
    else:
        raise TypeError(f"an experiment returns a dict of scalars or a DataFrame, got {type(result).__name__}")
    nested = [f.name for f in table.schema if not _is_primitive(f.type)]
    if nested:
        raise TypeError(f"result columns {nested} are not scalar columns (bool, integer, float or string)")
    clash = [c for c in table.column_names if c in params or c == "seed"]
    if clash:
        raise ValueError(f"result columns {clash} repeat a parameter name or 'seed'")
    n = table.num_rows
    head = [pa.array([v] * n, type=_ARROW_TYPES[type(v)]) for v in params.values()]
    head.append(pa.array(np.full(n, replicate, dtype=np.int64)))
    return pa.Table.from_arrays(head + table.columns, names=[*params, "seed", *table.column_names])


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str, np.bool_, np.integer, np.floating))


def _is_primitive(t: pa.DataType) -> bool:
    return (
        pa.types.is_boolean(t)
        or pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_null(t)
        or (pa.types.is_dictionary(t) and (pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type)))
    )


def _kind(t: pa.DataType) -> str:
    """The comparable kind of a result column: numbers (bool, int and float mix freely), text, or nothing yet."""
    if pa.types.is_null(t):
        return "null"
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_floating(t):
        return "number"
    return "text"


def schema_conflicts(reference: pa.Schema | None, table: pa.Table) -> list[str]:
    """Columns of ``table`` whose kind (number or text) differs from the same column in ``reference``.

    A sweep checks each computed point against the first one before caching it, so a point that returns a string
    where the others return numbers is reported as a failure naming that point, instead of being cached and breaking
    every later run of the sweep when the records are concatenated.
    """
    if reference is None:
        return []
    out = []
    for field in table.schema:
        i = reference.get_field_index(field.name)
        if i < 0:
            continue
        a, b = _kind(reference.field(i).type), _kind(field.type)
        if "null" not in (a, b) and a != b:
            out.append(f"{field.name!r} is {field.type} here but {reference.field(i).type} at other points")
    return out


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


def _header(exp: Experiment, key: str, params: dict[str, Any], base_seed: int, replicate: int) -> dict[str, Any]:
    return {
        "key": key,
        "experiment": exp.name,
        "version": exp.version,
        "params": params,
        "base_seed": base_seed,
        "replicate": replicate,
    }


def encode_record(
    exp: Experiment, key: str, params: dict[str, Any], base_seed: int, replicate: int, payload: bytes
) -> bytes:
    """The bytes of a record: the magic line, the JSON header (with the payload's sha256 and length), the payload."""
    head = _header(exp, key, params, base_seed, replicate)
    head |= {"sha256": hashlib.sha256(payload).hexdigest(), "bytes": len(payload)}
    return _MAGIC + json.dumps(head, sort_keys=True, separators=(",", ":")).encode() + b"\n" + payload


def read_record(
    data: bytes | Path,
    expect: tuple[Experiment, str, dict[str, Any], int, int] | None = None,
) -> pa.Table | None:
    """Parse a payload (``bytes``, as a worker returns it) or a record file (a ``Path``, verified against ``expect``
    = ``(experiment, key, params, base_seed, replicate)``).

    ``None`` when the file is missing; when it is unreadable or fails verification, ``None`` too, after a
    :class:`~workbench.cache.CacheWarning` naming the file and what failed, and the file is removed (the point is
    then recomputed).
    """
    if isinstance(data, bytes):
        return pq.ParquetFile(pa.BufferReader(data)).read(use_threads=False)
    path = Path(data)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return _reject(path, f"cannot be read ({exc.strerror or exc})")
    if not raw.startswith(_MAGIC):
        return _reject(path, "is not a workbench record (bad magic line)")
    line_end = raw.find(b"\n", len(_MAGIC))
    try:
        head = json.loads(raw[len(_MAGIC) : line_end].decode())
        if not isinstance(head, dict):
            raise ValueError("header is not an object")
    except (ValueError, UnicodeDecodeError):
        return _reject(path, "has a damaged header")
    payload = raw[line_end + 1 :]
    if head.get("bytes") != len(payload):
        return _reject(path, f"is truncated or padded ({len(payload)} payload bytes, header says {head.get('bytes')})")
    if head.get("sha256") != hashlib.sha256(payload).hexdigest():
        return _reject(path, "failed its checksum (the payload was altered)")
    if expect is not None:
        want = json.loads(json.dumps(_header(*expect)))  # the same JSON round trip the header went through
        wrong = [k for k in want if head.get(k) != want[k]]
        if wrong:
            return _reject(path, f"belongs to another point ({', '.join(wrong)} differ)")
    try:
        return pq.ParquetFile(pa.BufferReader(payload)).read(use_threads=False)
    except (OSError, pa.ArrowException) as exc:
        return _reject(path, f"has an unreadable payload ({exc})")


def _reject(path: Path, why: str) -> pa.Table | None:
    warnings.warn(f"experiment record {path} {why}; recomputing the point", CacheWarning, stacklevel=3)
    with contextlib.suppress(OSError):
        path.unlink()
    return None


def write_record(path: Path, data: bytes) -> None:
    """Write the record ``data`` (from :func:`encode_record`) to ``path`` atomically (the folder must exist)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
