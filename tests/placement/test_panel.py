"""The hotspot panel builds and redraws on a control change."""

from __future__ import annotations

import numpy as np

from workbench.testing import find_widget
from workbench.widgets import placement as B


def _figures(widget):
    return [c for c in widget.children[1].children]


def test_hotspot_panel_redraws():
    panel = B.hotspot_panel()
    lat, cdf = _figures(panel)
    before = np.asarray(lat.data[0].y).copy()
    find_widget(panel, description="arrival CV").value = 4.0
    assert not np.array_equal(before, np.asarray(lat.data[0].y))
    assert "hot ToRs" in find_widget(panel, kind="HTML").value

