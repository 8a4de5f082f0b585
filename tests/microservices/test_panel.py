"""The microservices panel shows the experiment's own numbers, builds at its defaults and survives its controls."""

import ipywidgets as W
import pytest

from workbench import experiments as ex

SMALL = {"graph": "chain-2", "duration_s": 1.0, "spike_start_s": 0.2, "spike_len_s": 0.5}


def test_panel_number_equals_experiment_number():
    from workbench.widgets.microservices import panel_model

    v = panel_model(**SMALL).summary.set_index("controller")
    for c in ("dagor", "rajomon"):
        row = ex.run_point("microservice-overload", {**SMALL, "controller": c}, cache=False).iloc[0]
        for m in ("goodput_rps", "p99_ms", "wasted_work_frac"):
            assert v.loc[c, m] == pytest.approx(row[m], rel=1e-9)


def test_panel_builds_at_defaults():
    from workbench.widgets.microservices import microservices_panel

    p = microservices_panel()
    controls = [c for c in p.children[0].children if c is not p.fidelity]  # the note sits in the controls grid
    info = p.children[1]
    (fig,) = list(p.children[-1].children)
    assert [c.description for c in controls] == ["graph", "base load", "spike load", "pattern", "threshold (s)"]
    assert all(c.continuous_update is False for c in controls)
    assert isinstance(info, W.HTML) and info.value.count("<tr>") == 5
    assert "Rajomon" in info.value and "Breakwater" in info.value
    # offered load + goodput, drops, p95 per controller
    assert len(fig.data) == 1 + 3 * 4 + 1  # offered load, goodput / drops / p95 per controller, the SLO


@pytest.mark.slow
def test_every_control_moves_to_both_ends():
    from workbench.widgets.microservices import microservices_panel

    p = microservices_panel()
    controls = [c for c in p.children[0].children if c is not p.fidelity]  # the note sits in the controls grid
    info = p.children[1]
    for c in controls:
        ends = (c.options[0], c.options[-1]) if hasattr(c, "options") else (c.min, c.max)
        for end in ends:
            c.value = end[1] if isinstance(end, tuple) else end
            assert info.value.count("<tr>") == 5
        c.value = ends[0][1] if isinstance(ends[0], tuple) else ends[0]
