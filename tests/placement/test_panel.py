"""The hotspot panel builds and redraws on a control change."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench.testing import find_widget
from workbench.widgets import placement as B


def _figures(widget):
    return [c for c in widget.children[-1].children]


def test_hotspot_panel_redraws():
    panel = B.hotspot_panel()
    lat, _cdf = _figures(panel)
    before = np.asarray(lat.data[0].y).copy()
    find_widget(panel, description="arrival CV").value = 4.0
    assert not np.array_equal(before, np.asarray(lat.data[0].y))
    assert "hot ToRs" in find_widget(panel, kind="HTML").value


def test_panel_model_is_a_frozen_view_of_tidy_tables():
    v = B.panel_model(2.0, racks=100)  # the hot-ToR rows and the utilization rows are the same placements
    assert v.policies.policy.tolist() == ["random", "aware"] and set(v.utilization) == {"random", "aware"}
    assert v.policies.hot_tors.tolist() == [int((v.utilization[p] > 0.75).sum()) for p in ("random", "aware")]
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.knee = 0.5
