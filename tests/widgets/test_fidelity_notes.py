"""Every panel shows, beside its numbers, how far its engines lie from their independent references for the region
its controls are in, and a note naming each control that leaves the validated envelope (issue 40, item 3)."""

from __future__ import annotations

import importlib
import re

import ipywidgets as W
import pytest

from workbench import fidelity
from workbench.widgets import FidelityNote, panel
from workbench.widgets.explore import explore_panel


def _build(key: str):
    module, name = key.split(":")
    return getattr(importlib.import_module(module), name)()


@pytest.mark.parametrize("key", sorted(fidelity.PANELS))
def test_every_panel_shows_its_engines_validation(key):
    widget = _build(key)
    note = getattr(widget, "fidelity", None)
    assert isinstance(note, FidelityNote), f"{key} shows no fidelity note"
    note.wait()  # a fresh cache computes the validation in the background
    assert note in widget.children or note in widget.children[0].children, f"{key}: the note is not in the panel"
    assert [n.engine for n in note.notes] == list(fidelity.PANELS[key])
    for n in note.notes:
        assert n.text.startswith(f"{n.engine}: ")
        assert "validated on" in n.text or "not validated" in n.text
    assert "white-space:normal" in note.value  # the text wraps at the panel's width: never clipped
    summary = _summary(note)
    for n in note.notes:  # each engine's headline is on the line shown without opening anything
        assert n.summary and _text(n.summary) in summary


def _summary(note: FidelityNote) -> str:
    """What the note shows without opening anything: its ``<summary>`` line."""
    found = re.search(r"<summary[^>]*>(.*)</summary>", note.value, re.S)
    assert found, note.value
    return found.group(1)


def _text(s: str) -> str:
    import html

    return html.escape(s)


def test_a_control_leaving_the_envelope_is_named_and_the_note_follows_the_controls():
    widget = _build("workbench.widgets.serving_hw:serving_hardware_panel")
    note = widget.fidelity
    note.wait()
    gpu = note.controls["gpu"]
    measured = [g for g in gpu.options if not any("GPU " + g in o for o in _outside(note, gpu, g))]
    unmeasured = [g for g in gpu.options if any(f"GPU {g}" in o for o in _outside(note, gpu, g))]
    assert measured and unmeasured, "the GPU menu should hold measured and unmeasured GPUs"
    gpu.value = unmeasured[0]
    assert any(f"no measured point for GPU {unmeasured[0]}" in o for o in note.outside), note.outside
    shown = _summary(note)  # the warning is on the line that is always shown, highlighted, naming the GPU
    assert "wb-fidelity-outside" in shown and "Outside the validated envelope" in shown and unmeasured[0] in shown
    gpu.value = measured[0]
    assert not any(f"GPU {measured[0]}" in o for o in note.outside)


def _outside(note: FidelityNote, control, value) -> list[str]:
    control.value = value
    return list(note.outside)


def test_a_deep_pipeline_beyond_the_validated_one_is_named():
    n = fidelity.region_note("training", pp=128)
    assert not n.in_envelope and any("PP 128" in o for o in n.outside)


def test_a_sweep_value_outside_the_envelope_is_named_in_an_explore_panel():
    """An explore panel's lists of values: each value is checked, and the note follows the text as it is edited."""
    p = explore_panel(
        "arrivals-queue-wait",
        x="utilization",
        values=["mean_wait_s"],
        grid={"utilization": [0.5, 0.7], "process": ["poisson"]},
        seeds=1,
        client=False,
        autorun=False,
    )
    note = p.fidelity
    note.wait()
    assert not any("utilization" in o for o in note.outside), note.outside
    p.controls["utilization"].value = "0.5, 0.99"
    assert any("utilization 0.99" in o for o in note.outside), note.outside
    assert "utilization 0.99" in _summary(note)
    p.controls["utilization"].value = "0.5, x"  # being typed: the note keeps the last values that parsed
    assert any("utilization 0.99" in o for o in note.outside)
    p.controls["utilization"].value = "0.5"
    assert not any("utilization" in o for o in note.outside), note.outside


def test_the_note_sits_beside_the_info_and_costs_no_row_of_its_own():
    """The panel's info and note share a row (the note in the width the info leaves), the controls and the figures
    span the panel: the note adds no height where the info is shorter than the panel is wide."""
    info = W.HTML("one line")
    p = panel([W.IntSlider()], [W.Output()], info=info, fidelity="workbench.widgets.carbon:carbon_panel")
    assert p.layout.display == "grid"
    assert p.layout.grid_template_areas == '"controls controls" "info note" "figures figures"'
    assert [c.layout.grid_area for c in p.children] == ["controls", "info", "note", "figures"]
    assert p.children[1] is info and p.children[2] is p.fidelity


def test_a_panel_never_waits_for_its_validation(tmp_path, monkeypatch):
    """On a fresh cache the note says the validation is being computed and fills in when it is, the panel built
    at once."""
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    assert not fidelity.points_cached("arrivals")
    note = FidelityNote("workbench.widgets.arrivals:arrivals_panel")
    assert "being computed" in note.value or fidelity.points_cached("arrivals")
    note.wait(600)
    assert fidelity.points_cached("arrivals") and "arrivals: validated on" in _summary(note)


def test_background_validation_can_be_turned_off(tmp_path, monkeypatch):
    """With WORKBENCH_BACKGROUND_VALIDATION=0 a note on a cache without the validation starts nothing and says how
    to compute it; once computed, the note shows it as usual."""
    import workbench.widgets as widgets

    started: list[tuple[str, ...]] = []
    monkeypatch.setattr(widgets, "_validate_in_background", lambda names, done: started.append(names))
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    monkeypatch.setenv(widgets.BACKGROUND_VALIDATION, "0")
    note = FidelityNote("workbench.widgets.arrivals:arrivals_panel")
    assert started == [] and "not in this cache" in note.value
    assert "workbench validate --engine arrivals" in note.value
    fidelity.points("arrivals")
    note.refresh()
    assert started == [] and "arrivals: validated on" in _summary(note)
    monkeypatch.setenv(widgets.BACKGROUND_VALIDATION, "1")
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "other"))
    FidelityNote("workbench.widgets.arrivals:arrivals_panel")
    assert started == [("arrivals",)]


def test_the_note_can_sit_in_the_controls_grid():
    p = panel([W.IntSlider()], [W.Output()], info=W.HTML("x"), fidelity="workbench.widgets.carbon:carbon_panel",
              note_beside="controls")  # fmt: skip
    assert p.children[0].children[-1] is p.fidelity and p.fidelity not in p.children
    with pytest.raises(ValueError, match="note_beside"):
        panel([W.IntSlider()], [W.Output()], fidelity="workbench.widgets.carbon:carbon_panel", note_beside="below")


def test_a_validation_ending_after_the_cache_changed_leaves_that_cache_alone(tmp_path, monkeypatch):
    """A note's background validation that ends once the process names another cache (a test switching
    ``WORKBENCH_CACHE``) neither reads nor starts a validation in that cache: a later test's fresh cache stayed
    empty only by luck before (a leftover panel's note created it)."""
    import workbench.widgets as widgets

    started: list[tuple[str, ...]] = []
    monkeypatch.setattr(widgets, "_validate_in_background", lambda names, done: started.append(names))
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "built"))
    note = FidelityNote("workbench.widgets.arrivals:arrivals_panel")
    assert started == [("arrivals",)] and "being computed" in note.value
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "later"))
    note._computed("")
    assert not (tmp_path / "later").exists() and started == [("arrivals",)] and "being computed" in note.value
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "built"))
    note._worker = None
    note._computed("")  # in its own cache the note refreshes: still missing there, so it asks again
    assert started == [("arrivals",), ("arrivals",)]
