"""The PRED panel builds, redraws on a control change, and its slider ranges stay valid."""

from __future__ import annotations

import numpy as np

from workbench.testing import find_widget
from workbench.widgets import aqm as A


def _figures(widget):
    return [c for c in widget.children[1].children]


def test_pred_panel_redraws():
    panel = A.pred_panel()
    fluid, trace = _figures(panel)
    before = np.asarray(fluid.data[1].y).copy()
    find_widget(panel, description="long flows").value = 24
    assert not np.array_equal(before, np.asarray(fluid.data[1].y))
    assert len(trace.data[0].x) > 10


def test_pred_panel_thresholds_stay_ordered():
    panel = A.pred_panel()
    min_k, max_k = find_widget(panel, description="static minK"), find_widget(panel, description="static maxK")
    min_k.value = min_k.max
    max_k.value = max_k.min
    assert min_k.value < max_k.value


def test_pred_panel_model_at_slider_extremes():
    out = A.panel_model(64, 0.8, 400.0, 0.0, 160.0, 1.0, 10**-0.5, True, True, duration_s=0.005)
    assert set(out["runs"]) == {"static", "pred"}
