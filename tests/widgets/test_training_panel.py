"""Notebook 07's iteration panel: its two figures show one computation, and a plan that does not fit clears them."""

from __future__ import annotations

import pytest

from workbench.widgets.training import IterationPanel


@pytest.mark.slow
def test_bars_and_weak_scaling_agree_at_the_panel_gpu_count():
    """The defect seen: at 1024 GPUs the bars said ECMP 3.24 s, the weak-scaling curve 2.46 s (one with full
    recomputation, the other none; one seed against two)."""
    p = IterationPanel()
    n = p.gpus.value
    for routing in ("ecmp", "planned"):
        bar = p.table.set_index("routing").loc[routing, "iteration_s"]
        curve = p.scale[(p.scale.gpus == n) & (p.scale.routing == routing)].iteration_s.item()
        assert bar == pytest.approx(curve, rel=1e-9)
    shown = {t.name: t for t in p.fig_scale.data}
    assert shown  # the curve is drawn
    p.tp.value, p.pp.value = 1, 1  # GPT-3 175B unsharded: does not fit
    assert "does not fit" in p.status.value
    for pane in (p.fig_bars, p.fig_scale):
        assert not pane.data and "does not fit" in pane.figure.layout.title.text.replace("<br>", " ")
