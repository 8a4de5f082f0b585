"""Shared fixtures. Tests that need real data use ``shared_data`` and skip cleanly when it is absent."""

from __future__ import annotations

import pytest

from workbench import data


def need_data(relpath: str):
    """Return the path of ``relpath`` on the data search path, or skip the test saying what is missing."""
    found = data.find(relpath)
    if found is None:
        pytest.skip(f"real data {relpath!r} not on the data search path ({', '.join(map(str, data.search_path()))})")
    return found
