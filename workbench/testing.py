"""Helpers for tests of the workbench and of code built on it (in the spirit of ``xarray.testing``)."""

from __future__ import annotations

from pathlib import Path

from . import data

__all__ = ["need_data", "find_widget"]


def need_data(relpath: str) -> Path:
    """Return the path of ``relpath`` on the data search path, or skip the calling test saying what is missing."""
    import pytest

    found = data.find(relpath)
    if found is None:
        where = ", ".join(map(str, data.search_path())) or "no search-path directory exists"
        pytest.skip(f"real data {relpath!r} is not on the data search path ({where})")
    return found


def find_widget(root, *, description: str | None = None, kind: str | None = None):
    """The first widget under ``root`` (depth-first through ``children``) whose ``description`` equals
    ``description`` and/or whose class name is ``kind`` (e.g. ``"HTML"``); ``KeyError`` if there is none.

    Examples
    --------
    >>> import ipywidgets as W
    >>> box = W.VBox([W.HTML("hi"), W.IntSlider(description="n")])
    >>> find_widget(box, description="n").value, find_widget(box, kind="HTML").value
    (0, 'hi')
    """
    if description is None and kind is None:
        raise ValueError("find_widget needs description and/or kind")
    stack = [root]
    while stack:
        w = stack.pop(0)
        if (description is None or getattr(w, "description", None) == description) and (
            kind is None or type(w).__name__ == kind
        ):
            return w
        stack[:0] = list(getattr(w, "children", ()))
    raise KeyError(f"no widget with description={description!r} kind={kind!r} under {type(root).__name__}")
