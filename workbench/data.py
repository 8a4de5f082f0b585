"""Where data comes from: the data search path.

Data files are looked up, in order, in

1. ``$WORKBENCH_DATA`` (one or more directories separated by ``os.pathsep``),
2. the project's ``datasets/`` folder (dataset cards, small generated samples, derived parameter files),
3. ``../shared/data`` beside the project checkout (real public traces for development and CI).

Upstream traces are never committed to the repository; they are read in place from the search path.

Examples
--------
>>> from workbench import data
>>> [p.name for p in data.search_path()][:1]  # doctest: +SKIP
['datasets']
>>> data.find("no/such/file.csv") is None
True
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["PROJECT_ROOT", "search_path", "find", "require", "cache_dir"]

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def search_path() -> list[Path]:
    """The directories searched for data, in order (only those that exist)."""
    dirs: list[Path] = []
    env = os.environ.get("WORKBENCH_DATA", "")
    dirs += [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    dirs.append(PROJECT_ROOT / "datasets")
    dirs.append(PROJECT_ROOT.parent / "shared" / "data")
    seen: list[Path] = []
    for d in dirs:
        d = d.resolve()
        if d.is_dir() and d not in seen:
            seen.append(d)
    return seen


def find(relpath: str | os.PathLike) -> Path | None:
    """Return the first ``<dir>/<relpath>`` that exists on the search path, or ``None``."""
    rel = Path(relpath)
    if rel.is_absolute():
        return rel if rel.exists() else None
    for d in search_path():
        candidate = d / rel
        if candidate.exists():
            return candidate
    return None


def require(relpath: str | os.PathLike, *, hint: str = "") -> Path:
    """Like :func:`find` but raise :class:`FileNotFoundError` naming the places searched (and ``hint``)."""
    found = find(relpath)
    if found is None:
        where = ", ".join(str(d) for d in search_path()) or "(no search-path directory exists)"
        msg = f"data file {str(relpath)!r} not found on the data search path: {where}. Set WORKBENCH_DATA to add one."
        raise FileNotFoundError(msg + (f" {hint}" if hint else ""))
    return found


def cache_dir() -> Path:
    """Directory for derived caches (parquet copies of parsed traces, ...): ``$WORKBENCH_CACHE`` or
    ``~/.cache/workbench``. Created on first use."""
    d = Path(os.environ.get("WORKBENCH_CACHE", Path.home() / ".cache" / "workbench")).expanduser()
    d.mkdir(parents=True, exist_ok=True)
    return d
