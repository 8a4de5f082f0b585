"""The fault-localization panel redraws when a control changes and reports each detector's verdict."""

from __future__ import annotations

from workbench.widgets import diagnosis as wd


def test_panel_model_marks_truth_and_suspects():
    out = wd.panel_model("slow_gpu", 3.0, 64, 1.0, detector="c4d", pr_jobs=1)
    assert list(out["suspects"]) == ["c4d"] and bool(out["scores"].loc["c4d", "top1"])
    assert set(out["sweep"].detector) == {"c4d"}


def test_panel_redraws_on_change():
    panel = wd.fault_panel()
    controls, info, *_note, figures = panel.children  # the fidelity note sits between info and figures
    heat, curves = figures.children
    before = heat.data[0].z.copy()
    kind = controls.children[0]
    kind.value = "cpu_contention"
    assert heat.data[0].z.shape != before.shape or (heat.data[0].z != before).any()
    assert "cpu contention" in [t.name.removeprefix("fault: ") for t in heat.data if t.name]
    assert "detector" in info.value and len(curves.data) >= 1
