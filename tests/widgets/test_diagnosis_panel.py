"""The fault-localization panel redraws when a control changes and reports each detector's verdict."""

from __future__ import annotations

from workbench.widgets import diagnosis as wd


def test_panel_model_marks_truth_and_suspects():
    out = wd.panel_model(kind="slow_gpu", severity=3.0, ranks=64, detectors="c4d", jobs=1)
    job = out["job"]
    scores = job[job.part == "score"]
    assert scores.detector.tolist() == ["c4d"] and bool(scores.top1.iloc[0])
    fault = job[job.part == "fault"].iloc[0]
    suspects = job[job.part == "suspect"]
    assert set(suspects.detector) == {"c4d"} and suspects["rank"].iloc[0] == fault["rank"]  # found: on the truth
    assert set(out["sweep"].detector) == {"c4d"} and out["pr_ranks"] == 64


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
