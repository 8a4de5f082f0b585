"""Helpers for tests of the workbench and of code built on it (in the spirit of ``xarray.testing``)."""

from __future__ import annotations

from pathlib import Path

from . import data

__all__ = ["need_data"]


def need_data(relpath: str) -> Path:
    """Return the path of ``relpath`` on the data search path, or skip the calling test saying what is missing."""
    import pytest

    found = data.find(relpath)
    if found is None:
        where = ", ".join(map(str, data.search_path())) or "no search-path directory exists"
        pytest.skip(f"real data {relpath!r} is not on the data search path ({where})")
    return found
