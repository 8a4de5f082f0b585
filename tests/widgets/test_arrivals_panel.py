"""The arrivals panel redraws on every control and no slider setting reaches an invalid model call."""

from __future__ import annotations

import itertools

import numpy as np

from workbench.widgets.arrivals import ArrivalsPanel


def test_panel_updates_figures():
    panel = ArrivalsPanel()
    before = np.asarray(panel.hist.data[0].y).copy()
    panel.burstiness.value = 4.0
    assert not np.array_equal(before, np.asarray(panel.hist.data[0].y))
    assert "CV" in panel.stats.value
    assert len(panel.waits.data) == 4  # simulated bars + exact ticks for Poisson and Gamma


def test_every_slider_corner_is_valid():
    panel = ArrivalsPanel()
    for rate, burst, util in itertools.product(
        (10**panel.rate.min, 10**panel.rate.max),
        (10**panel.burstiness.min, 10**panel.burstiness.max),
        (panel.utilization.min, panel.utilization.max),
    ):
        panel.rate.value = rate
        panel.burstiness.value = burst
        panel.utilization.value = util
        panel.window.value = 10**panel.window.max  # the largest window the rate allows
        panel.window.value = 10**panel.window.min
    assert len(panel.counts.data[0].y) >= 4  # the window limit leaves at least four complete windows
