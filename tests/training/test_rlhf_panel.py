"""Notebook 12's panel: builds at its defaults, every control reaches both ends, and fusion never loses to
sequential 1F1B on the instances it draws."""

from __future__ import annotations

import pytest

from workbench.widgets.rlhf import panel_model


@pytest.mark.parametrize("method", ["anneal", "greedy", "sequential"])
@pytest.mark.parametrize(
    ("pp0", "pp1", "m0", "m1", "size"), [(2, 1, 1, 1, 0.1), (16, 8, 32, 32, 1.0), (8, 4, 8, 4, 0.5)]
)
def test_panel_model_at_the_ends_of_its_controls(method, pp0, pp1, m0, m1, size):
    r = panel_model(pp0, pp1, m0, m1, size, method)
    assert r["bound"] <= r["schedule"].makespan <= r["sequential"].makespan
    assert r["check"].makespan == pytest.approx(r["schedule"].makespan)


def test_panel_builds():
    import ipywidgets as W

    from workbench.widgets.rlhf import fused_pipeline_panel

    assert isinstance(fused_pipeline_panel(), W.Box)
