"""Helpers for tests of the workbench and of code built on it (in the spirit of ``xarray.testing``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import data

__all__ = ["requires_data", "data_file", "find_widget", "notebook_missing_data"]


def _missing_reason(missing: list[str]) -> str:
    where = ", ".join(map(str, data.search_path())) or "no search-path directory exists"
    return f"real data not on the data search path ({where}): {', '.join(missing)}"


def requires_data(*relpaths: str):
    """A pytest mark that skips the test, naming what is missing, unless every file in ``relpaths`` (paths relative
    to the data search path) is on the data search path. Use it on tests that read real traces::

        @requires_data("azure-llm-2023/AzureLLMInferenceTrace_code.csv")
        def test_load_azure():
            df = load_trace(data_file("azure-llm-2023/AzureLLMInferenceTrace_code.csv"))
    """
    import pytest

    if not relpaths:
        raise ValueError("requires_data needs at least one relative path")
    missing = [rel for rel in relpaths if data.find(rel) is None]
    # ``workbench_data`` (ignored by skipif) is how the test session marks the test ``data``: ``-m "not data"``
    return pytest.mark.skipif(  # type: ignore[call-arg]  # extra keywords are kept on the mark
        bool(missing), reason=_missing_reason(missing) if missing else "", workbench_data=tuple(relpaths)
    )


def data_file(relpath: str) -> Path:
    """The path of ``relpath`` on the data search path, for a test marked with :func:`requires_data`
    (``FileNotFoundError`` naming the search path if the mark is missing and so is the file)."""
    found = data.find(relpath)
    if found is None:
        raise FileNotFoundError(_missing_reason([relpath]) + " (mark the test with workbench.testing.requires_data)")
    return found


def notebook_missing_data(notebook: str | os.PathLike) -> list[str]:
    """The files a notebook's printed outputs were computed from (its ``workbench.requires_data`` metadata, paths
    relative to the data search path) that are not on the data search path here.

    The committed outputs of such a notebook describe the real data; where the data is absent the notebook still runs
    (on its stand-ins) but its outputs cannot match, so the test suite executes it without comparing outputs.
    """
    path = Path(notebook)
    try:
        metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable notebook ({exc})") from exc
    required = metadata.get("workbench", {}).get("requires_data", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ValueError(f"{path}: metadata workbench.requires_data must be a list of relative paths, got {required!r}")
    return [rel for rel in required if data.find(rel) is None]


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
