"""Notebook 12's panel: builds at its defaults, every control reaches both ends, and fusion never loses to
sequential 1F1B on the instances it draws."""

from __future__ import annotations

import pytest

from workbench.widgets.rlhf import panel_model


@pytest.mark.parametrize("method", ["anneal", "greedy", "sequential-1f1b"])
@pytest.mark.parametrize(
    ("pp0", "pp1", "m0", "m1", "size"), [(2, 1, 1, 1, 0.1), (16, 8, 32, 32, 1.0), (8, 4, 8, 4, 0.5)]
)
def test_panel_model_at_the_ends_of_its_controls(method, pp0, pp1, m0, m1, size):
    tasks = panel_model(pp0=pp0, pp1=pp1, m0=m0, m1=m1, critic_size=size, method=method)
    r = tasks.iloc[0]
    assert r.lower_bound <= r.makespan <= r.sequential_makespan
    assert r.makespan == pytest.approx(tasks.end.max())  # the checker's makespan is the schedule's last task


def test_panel_builds():
    import ipywidgets as W

    from workbench.widgets.rlhf import fused_pipeline_panel

    assert isinstance(fused_pipeline_panel(), W.Box)
