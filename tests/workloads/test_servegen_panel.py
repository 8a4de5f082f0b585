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


def test_requests_the_kv_budget_cannot_hold_are_drawn_as_never_served():
    """A KV budget smaller than some requests' contexts rejects them (no first token, an infinite TTFT): the CDF
    draws the served requests only, its legend says what share was never served, and the table says "never"."""
    import numpy as np

    from workbench.testing import figure_problems
    from workbench.widgets import FIGURE_MIN_PX

    p = ServeGenPanel(model="m-large", hour=23, span_s=100, mean_rate_rps=20.0)
    p.kv.value = 1000
    curves = [t for t in p.ttft.data if t.name != "SLO"]
    assert len(curves) == 2 and all(np.isfinite(np.asarray(t.x, dtype=float)).all() for t in curves)
    assert all("never served" in t.name for t in curves)
    assert "never (rejected)" in p.stats.value
    assert not figure_problems(p.ttft.figure, width_px=FIGURE_MIN_PX)
