"""The hotspot panel builds and redraws on a control change."""

from __future__ import annotations

import numpy as np

from workbench.widgets import placement as B


def _find(widget, description):
    stack = [widget]
    while stack:
        w = stack.pop()
        if getattr(w, "description", None) == description:
            return w
        stack.extend(getattr(w, "children", ()))
    raise KeyError(description)


def _figures(widget):
    return [c for c in widget.children[1].children]


def test_hotspot_panel_redraws():
    panel = B.hotspot_panel()
    lat, cdf = _figures(panel)
    before = np.asarray(lat.data[0].y).copy()
    _find(panel, "arrival CV").value = 4.0
    assert not np.array_equal(before, np.asarray(lat.data[0].y))
    assert "hot ToRs" in _find_html(panel)


def _find_html(widget):
    stack = [widget]
    while stack:
        w = stack.pop()
        if type(w).__name__ == "HTML":
            return w.value
        stack.extend(getattr(w, "children", ()))
    return ""
