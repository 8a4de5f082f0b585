"""Per-point seeds, cache keys and the parquet records of one point x seed.

A point's random stream is ``keyed(base_seed, seeded parameters, replicate)`` (:func:`workbench._rng.keyed`:
``SeedSequence(base_seed, spawn_key=(*digest(seeded parameters), replicate))``): the child
that ``SeedSequence(base_seed).spawn`` would hand out, addressed by the point's own values instead of its position
in the grid, so the same point gets the same stream whatever the grid around it, the worker count, the completion
order or a restart.

The cache key hashes the experiment's name and version, every parameter, the base seed, the replicate and the
:func:`~workbench._deps.code_fingerprint` of the experiment's function: the source of its module and of every module
that module imports, transitively, plus the versions of the numerical libraries. An edited model changes the key of
every experiment that can reach it and of no other. The data a point reads is recorded while it runs (every file it
resolves on the data search path, by content, or its absence: :mod:`workbench._deps`) and stored in the record's
header; a record whose data now resolves to other content (a file shadowed through ``$WORKBENCH_DATA``, edited,
added or removed) is recomputed. The ``version`` an experiment declares is documentation, and still part of the key.

A record is a verified file: one JSON header line (format, key, experiment, version, parameters, base seed,
replicate, the data it read, and the sha256 and length of the payload), then the payload (the point's table as parquet). A read checks
every header field against the point it is looking for and the payload against its checksum; any mismatch (a flipped
bit, a truncated file, two records swapped, a record of another version) is reported with a :class:`CacheWarning`
naming the file, the record is removed and the point recomputed. Records are written through the project's one
atomic writer (:func:`workbench.cache.atomic_path`), so a reader never sees a partial file even when the writer is
killed.
"""

from __future__ import annotations

import contextlib
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

from .._deps import Deps, code_fingerprint, mismatched, recording, replay, search_env
from .._rng import keyed_int
from ..cache import CacheWarning, atomic_path
from ..data import cache_dir, stale
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


def cache_key(exp: Experiment, params: dict[str, Any], base_seed: int, replicate: int, code: str = "") -> str:
    """Hex digest naming the record of one point x seed: the experiment, its version, the point, the seeds and the
    fingerprint of the code the experiment's function can reach (``code``, when the caller has it already)."""
    what = {
        "experiment": exp.name,
        "version": exp.version,
        "params": params,
        "base_seed": base_seed,
        "replicate": replicate,
        "code": code or code_fingerprint(exp.fn),
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


def compute(
    fn, params: dict[str, Any], seed: int, replicate: int, context: tuple[dict[str, str], str] | None = None
) -> tuple[str, bytes | str, dict | None]:
    """Run one point x seed (on a worker or in process): ``("ok", parquet bytes, deps)`` or ``("error", traceback,
    None)``, where ``deps`` is the :class:`~workbench._deps.Deps` (as JSON) of the data the point read.

    ``context`` is ``(module digests of fn's code, $WORKBENCH_DATA)`` as the caller saw them when it computed the
    key: the point runs under the caller's data search path, and refuses to run when this process runs other code
    (a worker started before an edit), since its result would be stored under the key of code that did not run.
    """
    try:
        data_env = None
        if context is not None:
            digests, data_env = context
            differ = mismatched(digests)
            if differ:
                raise RuntimeError(
                    f"this worker runs other code than the process that started the sweep ({', '.join(differ)} "
                    "changed between them); restart the workers (workbench.experiments.shutdown(), or restart the "
                    "cluster) and sweep again"
                )
        buf = io.BytesIO()
        with search_env(data_env), recording() as rec:
            result = fn(**params, seed=seed)
        pq.write_table(_table(result, params, replicate), buf)
        return "ok", buf.getvalue(), rec.deps().to_json()
    except Exception:
        return "error", traceback.format_exc(), None


def compute_batch(fn, batch: list[tuple], context: tuple[dict[str, str], str] | None = None) -> list[tuple]:
    """:func:`compute` for each ``(index, params, seed, replicate)`` of ``batch``: ``(index, status, payload,
    deps)``."""
    return [(i, *compute(fn, params, seed, replicate, context)) for i, params, seed, replicate in batch]


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
    exp: Experiment,
    key: str,
    params: dict[str, Any],
    base_seed: int,
    replicate: int,
    payload: bytes,
    deps: dict | None = None,
) -> bytes:
    """The bytes of a record: the magic line, the JSON header (with the data the point read, ``deps`` as
    :meth:`Deps.to_json` gives it, and the payload's sha256 and length), the payload."""
    head = _header(exp, key, params, base_seed, replicate)
    head |= {"deps": deps or Deps().to_json(), "sha256": hashlib.sha256(payload).hexdigest(), "bytes": len(payload)}
    return _MAGIC + json.dumps(head, sort_keys=True, separators=(",", ":")).encode() + b"\n" + payload


def read_record(
    data: bytes | Path,
    expect: tuple[Experiment, str, dict[str, Any], int, int] | None = None,
) -> pa.Table | None:
    """Parse a payload (``bytes``, as a worker returns it) or a record file (a ``Path``, verified against ``expect``
    = ``(experiment, key, params, base_seed, replicate)``).

    ``None`` when the file is missing; when it is unreadable or fails verification, ``None`` too, after a
    :class:`~workbench.cache.CacheWarning` naming the file and what failed, and the file is removed (the point is
    then recomputed). A record whose data has changed since it was computed (:func:`workbench.data.stale`) is
    ``None`` without a warning; an accepted record's dependencies are noted in any active recording (a paper run
    that reads it depends on the same data).
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
        deps = Deps.from_json(head.get("deps"))
    except ValueError:
        return _reject(path, "has no valid record of the data it read")
    if stale(deps):  # computed from data that has changed since: recomputed (the normal course, no warning)
        return None
    try:
        table = pq.ParquetFile(pa.BufferReader(payload)).read(use_threads=False)
    except (OSError, pa.ArrowException) as exc:
        return _reject(path, f"has an unreadable payload ({exc})")
    replay(deps)
    return table


def _reject(path: Path, why: str) -> pa.Table | None:
    warnings.warn(f"experiment record {path} {why}; recomputing the point", CacheWarning, stacklevel=3)
    with contextlib.suppress(OSError):
        path.unlink()
    return None


def write_record(path: Path, data: bytes) -> None:
    """Write the record ``data`` (from :func:`encode_record`) to ``path`` atomically (the folder must exist)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
