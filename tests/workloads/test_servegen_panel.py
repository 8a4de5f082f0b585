"""The ServeGen panel builds, reacts to its controls, keeps them in range per model, and runs the capacity search."""

from __future__ import annotations

import ipywidgets as W

from workbench.widgets import Panel
from workbench.widgets.servegen import ServeGenPanel, servegen_panel


def test_panel_builds_and_updates():
    p = ServeGenPanel(model="deepseek-r1", hour=12, span_s=600, mean_rate_rps=1.0)
    assert isinstance(p.widget, Panel) and "p99 TTFT" in p.stats.value
    assert len(p.timeline.data) == 2 and len(p.ttft.data) == 3  # composed, naive, SLO line
    assert p.day.max == 0 and p.top.max == 73
    before = p.stats.value
    p.mean_rate.value = 2.0
    assert p.stats.value != before
    p.model.value = "m-small"
    assert p.day.max == 13 and p.top.max == 43 and p.top.value == 43
    p.top.value = 3
    p.button.click()
    assert "under-provisions" in p.capacity.value


def test_panel_function_returns_widget():
    assert isinstance(servegen_panel(model="mm-image", span_s=600, mean_rate_rps=1.0), W.Widget)
