"""The one cache facility: derived files under ``$WORKBENCH_CACHE``, keyed by what the source *contains*.

Every cache the workbench keeps (parquet copies of parsed traces, ``.npz`` arrays of parsed ServeGen pools, in-memory
memos of either) goes through this module, which guarantees four things:

* **Location.** Cache files live only under :func:`cache_dir` (``$WORKBENCH_CACHE``, default
  ``~/.cache/workbench``), never beside the source data, whatever that directory's permissions: a shared data
  directory stays exactly as it was published.
* **Key.** A cache entry is keyed by the content fingerprint of every source file (:func:`fingerprint`: sha256 of
  the whole file) plus the parser version. An edit that keeps the size and the modification time still changes the
  key. An entry on disk is also keyed by the code of its build function (:func:`workbench._deps.code_fingerprint`
  of the module defining it: its source and every workbench module it imports), so an edited parser re-parses even
  when nobody bumped its version. sha256 is what ``fetch`` verifies and records, so one hash serves both; its cost
  is measured in ``benchmarks/bench_cache.py``.
* **Integrity.** Each cache file has a sidecar ``<file>.sha256`` holding its own sha256. A read verifies it; on any
  mismatch (a flipped byte, a truncated file, a missing sidecar) the entry is rebuilt with a :class:`CacheWarning`
  that names the cache file and the source.
* **Atomicity.** Files are written to a temporary file in the destination directory, flushed, fsynced and renamed
  over the target (:func:`atomic_path`), so a reader never sees half a file and a failed write leaves the old one.
* **One computation.** A per-entry lock (:func:`locked`) makes concurrent callers (test workers, notebook kernels,
  Dask tasks) compute an entry once: the second waits and reads.

Within one process the fingerprint of an unchanged file is remembered, and re-hashed within :data:`RACY_WINDOW_S`
of an edit (:mod:`workbench._fingerprint`, re-exported here).

Examples
--------
>>> import pandas as pd, tempfile, pathlib
>>> src = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
>>> _ = src.write_text("a,b\\n1,2\\n")
>>> df = cached_frame(src, 1, lambda: pd.read_csv(src))
>>> cached_frame(src, 1, lambda: 1 / 0).equals(df)  # served from the cache: build is not called
True
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import WorkbenchWarning, _fingerprint
from ._atomic import atomic_path, check_target
from ._contracts import Opaque, accepts
from ._deps import code_fingerprint
from ._fingerprint import RACY_WINDOW_S, _sha256_file, fingerprint, path_digest
from ._paths import cache_root

__all__ = [
    "CacheWarning",
    "RACY_WINDOW_S",
    "cache_dir",
    "fingerprint",
    "path_digest",
    "cache_key",
    "atomic_path",
    "check_target",
    "cached_frame",
    "cached_arrays",
    "memo",
    "clear_memo",
]


@accepts()
class CacheWarning(WorkbenchWarning):
    """A cache entry failed verification and is being rebuilt (the message names the cache file and the source)."""


@accepts()
def cache_dir(*parts: str) -> Path:
    """``$WORKBENCH_CACHE`` (default ``~/.cache/workbench``, also when set but empty), or a sub-directory of it;
    created on first use (a directory that cannot be created warns once and is returned anyway: writers then warn
    and the work goes on uncached).

    Examples
    --------
    >>> cache_dir("traces").name
    'traces'
    """
    d = cache_root()
    for part in parts:
        d = d / part
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a read-only or full cache only costs speed: writers warn and carry on
        if str(d) not in _unwritable:
            _unwritable.add(str(d))
            warnings.warn(
                f"cache directory {d} cannot be created ({exc.strerror or exc}); running uncached",
                CacheWarning,
                stacklevel=2,
            )
    return d


_unwritable: set[str] = set()


@accepts(parser_version=Opaque("anything with a stable repr: a version number, a tuple of settings"))
def cache_key(sources: str | os.PathLike | Sequence[str | os.PathLike], parser_version: Any, kind: str = "") -> str:
    """A 24-hex-digit key from the content of every source file, the parser version and ``kind``.

    The source files' names are part of the key (a renamed file parses to a different ``attrs["source"]``), their
    directories are not (the same bytes found through another search-path directory share the entry).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x"
    >>> _ = p.write_bytes(b"abc")
    >>> cache_key(p, 1) != cache_key(p, 2)
    True
    """
    paths = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    h = hashlib.sha256(json.dumps({"version": str(parser_version), "kind": kind}).encode())
    for p in paths:
        h.update(f"{Path(p).name}\0{fingerprint(p)}\0".encode())
    return h.hexdigest()[:24]


# ----------------------------------------------------------------------------------------------------------------------
# Verified cache entries
# ----------------------------------------------------------------------------------------------------------------------


def _sidecar(entry: Path) -> Path:
    return entry.with_name(entry.name + ".sha256")


def _verified(entry: Path, source: str) -> bool:
    """True if ``entry`` exists and matches its sidecar; warn (naming both paths) and drop it when it does not."""
    if not entry.exists():
        return False
    side = _sidecar(entry)
    try:
        recorded = side.read_text(encoding="ascii").split()[0]
    except (OSError, IndexError, UnicodeDecodeError):  # missing, empty or damaged sidecar: rebuild the entry
        recorded = None
    actual = _sha256_file(entry)
    if recorded == actual:
        return True
    why = (
        "has no readable checksum sidecar"
        if recorded is None
        else f"sha256 {actual[:12]}... != recorded {recorded[:12]}..."
    )
    warnings.warn(
        f"cache file {entry} for {source} failed verification ({why}); rebuilding it", CacheWarning, stacklevel=5
    )
    with contextlib.suppress(OSError):
        entry.unlink(missing_ok=True)
        side.unlink(missing_ok=True)
    return False


def _store(entry: Path, write: Callable[[Path], None]) -> None:
    """Write ``entry`` atomically with ``write(tmp_path)``, its sidecar first: a reader that sees the entry sees its
    checksum (callers hold :func:`locked`, so no second writer replaces either in between). A failure to write leaves
    no entry."""
    try:
        with atomic_path(entry) as tmp:
            write(tmp)
            with atomic_path(_sidecar(entry)) as side:
                side.write_text(f"{_sha256_file(tmp)}  {entry.name}\n")
    except OSError as exc:  # a full or read-only cache is not fatal: the result is still returned
        entry.unlink(missing_ok=True)
        _sidecar(entry).unlink(missing_ok=True)
        warnings.warn(f"could not write cache file {entry}: {exc}", CacheWarning, stacklevel=5)


def _entry(namespace: str, sources, parser_version: Any, kind: str, suffix: str, build_fn) -> tuple[Path, str]:
    paths = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if not paths:
        raise ValueError("sources must name at least one file")
    key = cache_key(paths, (parser_version, code_fingerprint(build_fn)), kind)
    stem = Path(paths[0]).name if len(paths) == 1 else f"{Path(paths[0]).parent.name}-{len(paths)}files"
    label = str(Path(paths[0]).resolve()) if len(paths) == 1 else f"{len(paths)} files in {Path(paths[0]).parent}"
    return cache_dir(namespace) / f"{stem}{'.' + kind if kind else ''}-{key}{suffix}", label


@accepts(parser_version=Opaque("anything with a stable repr: a version number, a tuple of settings"))
def cached_frame(
    source_path: str | os.PathLike,
    parser_version: Any,
    build_fn: Callable[[], pd.DataFrame],
    *,
    kind: str = "",
    namespace: str = "traces",
) -> pd.DataFrame:
    """``build_fn()``, cached as verified parquet under ``cache_dir(namespace)``, keyed by the content of
    ``source_path``, ``parser_version``, ``kind`` and the code of ``build_fn``.

    Column dtypes (categories, nullable strings and booleans, pyarrow list columns) and ``df.attrs`` survive the
    round trip. A corrupt or unverifiable entry is rebuilt with a :class:`CacheWarning`; an unwritable cache
    directory only warns.

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> src = pathlib.Path(tempfile.mkdtemp()) / "s.txt"
    >>> _ = src.write_text("1 2 3")
    >>> cached_frame(src, "v1", lambda: pd.DataFrame({"x": [1, 2, 3]}))["x"].tolist()
    [1, 2, 3]
    """
    entry, label = _entry(namespace, source_path, parser_version, kind, ".parquet", build_fn)
    with locked(entry):  # one process builds an entry; the others wait and read it
        return _cached_frame(entry, label, build_fn)


def _cached_frame(entry: Path, label: str, build_fn: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if _verified(entry, label):
        table = pq.read_table(entry)
        meta = json.loads((table.schema.metadata or {}).get(b"workbench", b"{}"))
        df = table.to_pandas(types_mapper=lambda t: pd.ArrowDtype(t) if pa.types.is_list(t) else None)
        for col, dtype in meta.get("dtypes", {}).items():  # e.g. an all-NA category column comes back as object
            if str(df[col].dtype) != dtype:
                df[col] = df[col].astype(dtype)
        df.attrs = meta.get("attrs", {})
        return df
    df = build_fn()
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"build_fn must return a pandas DataFrame, got {type(df).__name__}")

    def write(tmp: Path) -> None:
        table = pa.Table.from_pandas(df, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        dtypes = {str(c): str(t) for c, t in df.dtypes.items()}
        meta[b"workbench"] = json.dumps({"attrs": df.attrs, "dtypes": dtypes}, default=str).encode()
        pq.write_table(table.replace_schema_metadata(meta), tmp, use_compliant_nested_type=False)

    _store(entry, write)
    return df


@accepts(parser_version=Opaque("anything with a stable repr: a version number, a tuple of settings"))
def cached_arrays(
    source_paths: str | os.PathLike | Sequence[str | os.PathLike],
    parser_version: Any,
    build_fn: Callable[[], dict[str, np.ndarray]],
    *,
    kind: str = "",
    namespace: str = "arrays",
) -> dict[str, np.ndarray]:
    """``build_fn()`` (a dict of numpy arrays), cached as a verified ``.npz`` under ``cache_dir(namespace)``, keyed
    by the content of every file in ``source_paths``, ``parser_version``, ``kind`` and the code of ``build_fn``.

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> src = pathlib.Path(tempfile.mkdtemp()) / "s.txt"
    >>> _ = src.write_text("1 2 3")
    >>> cached_arrays([src], 1, lambda: {"x": np.arange(3)})["x"].tolist()
    [0, 1, 2]
    """
    entry, label = _entry(namespace, source_paths, parser_version, kind, ".npz", build_fn)
    with locked(entry):  # one process builds an entry; the others wait and read it
        return _cached_arrays(entry, label, build_fn)


def _cached_arrays(entry: Path, label: str, build_fn: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    if _verified(entry, label):
        with np.load(entry, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    arrays = build_fn()
    if not isinstance(arrays, dict):
        raise TypeError(f"build_fn must return a dict of numpy arrays, got {type(arrays).__name__}")

    def write(tmp: Path) -> None:
        named: dict[str, Any] = arrays
        with open(tmp, "wb") as fh:
            np.savez(fh, **named)

    _store(entry, write)
    return arrays


@accepts()
@contextlib.contextmanager
def locked(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock on ``path``'s entry (``<name>.lock`` beside it: one per entry, whatever its suffix) for
    the block, so that a second process computing the same entry waits and then reads it rather than computing it
    again. Where no lock file can be made (a read-only cache) the block runs unlocked.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with locked(pathlib.Path(tempfile.mkdtemp()) / "entry.parquet"):
    ...     pass
    """
    entry = Path(path)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fh = open(entry.with_name(entry.name + ".lock"), "a")  # noqa: SIM115 - held for the block
    except OSError:
        yield
        return
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


_memo_lock = threading.Lock()
_memo: dict[tuple[str, str], Any] = {}
_MEMO_MAX = 16


@accepts(parser_version=Opaque("anything with a stable repr: a version number, a tuple of settings"))
def memo(
    source_paths: str | os.PathLike | Sequence[str | os.PathLike],
    parser_version: Any,
    build_fn: Callable[[], Any],
    *,
    kind: str = "",
) -> Any:
    """``build_fn()`` remembered in memory under the content key of ``source_paths`` (:func:`cache_key`): an edited
    source gives a new key, so the stale value is never returned. Holds the 16 most recent values.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> src = pathlib.Path(tempfile.mkdtemp()) / "s.txt"
    >>> _ = src.write_text("1")
    >>> memo(src, 1, lambda: [1]) is memo(src, 1, lambda: [2])
    True
    """
    paths = [source_paths] if isinstance(source_paths, (str, os.PathLike)) else list(source_paths)
    key = (kind, cache_key(paths, parser_version, kind))
    with _memo_lock:
        if key in _memo:
            _memo[key] = _memo.pop(key)  # most recently used last
            return _memo[key]
    value = build_fn()
    with _memo_lock:
        _memo[key] = value
        while len(_memo) > _MEMO_MAX:
            _memo.pop(next(iter(_memo)))
    return value


@accepts()
def clear_memo() -> None:
    """Forget every in-memory value and remembered fingerprint (the on-disk cache is kept)."""
    with _memo_lock:
        _memo.clear()
    _fingerprint.forget()
