"""The arrivals panel redraws on every control and no slider setting reaches an invalid point of its experiment."""

from __future__ import annotations

import itertools

import numpy as np

from workbench.experiments.arrivals import MIN_WINDOWS
from workbench.widgets.arrivals import ArrivalsPanel


def test_panel_updates_figures():
    panel = ArrivalsPanel()
    before = np.asarray(panel.hist.data[0].y).copy()
    panel.burstiness.value = 5.0
    assert not np.array_equal(before, np.asarray(panel.hist.data[0].y))
    assert "CV" in panel.stats.value
    assert len(panel.waits.data) == 4  # simulated bars + exact ticks for Poisson and Gamma


def _ends(control):
    if hasattr(control, "options"):
        return control.options[0][1], control.options[-1][1]
    return control.min, control.max


def test_every_slider_corner_is_valid():
    panel = ArrivalsPanel()
    for rate, burst, util in itertools.product(_ends(panel.rate), _ends(panel.burstiness), _ends(panel.utilization)):
        panel.rate.value = rate
        panel.burstiness.value = burst
        panel.utilization.value = util
        panel.window.value = panel.window.options[-1][1]  # the largest window the rate allows
        assert panel.window.value <= panel.largest_window()
        assert len(panel.counts.data[0].y) >= MIN_WINDOWS  # at least four complete windows
        panel.window.value = panel.window.options[0][1]
    assert len(panel.counts.data[0].y) >= MIN_WINDOWS
