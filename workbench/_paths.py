"""Paths given on the command line (checked before any work starts) and the cache root."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["out_dir", "cache_root"]


def cache_root() -> Path:
    """``$WORKBENCH_CACHE``, or ``~/.cache/workbench`` when it is unset **or empty** (an empty value would otherwise
    put the cache in the current directory, beside whatever data is there). Not created here."""
    value = os.environ.get("WORKBENCH_CACHE", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".cache" / "workbench"


def out_dir(option: str, value: str) -> Path:
    """Check that ``value`` can be an output directory (an existing directory, or creatable) before any work."""
    p = Path(value).expanduser()
    if p.exists() and not p.is_dir():
        raise NotADirectoryError(f"{option} {value!r} exists and is not a directory")
    parent = p
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise NotADirectoryError(f"{option} {value!r}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(f"{option} {value!r}: {parent} is not writable")
    return p
