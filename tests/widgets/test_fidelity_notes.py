"""Every panel shows, beside its numbers, how far its engines lie from their independent references for the region
its controls are in, and a note naming each control that leaves the validated envelope (issue 40, item 3)."""

from __future__ import annotations

import importlib

import pytest

from workbench import fidelity
from workbench.widgets import FidelityNote


def _build(key: str):
    module, name = key.split(":")
    return getattr(importlib.import_module(module), name)()


@pytest.mark.parametrize("key", sorted(fidelity.PANELS))
def test_every_panel_shows_its_engines_validation(key):
    widget = _build(key)
    note = getattr(widget, "fidelity", None)
    assert isinstance(note, FidelityNote), f"{key} shows no fidelity note"
    assert note in widget.children, f"{key}: the note is not part of the panel"
    assert [n.engine for n in note.notes] == list(fidelity.PANELS[key])
    for n in note.notes:
        assert n.text.startswith(f"{n.engine}: ")
        assert "validated on" in n.text or "not validated" in n.text
    assert "white-space:normal" in note.value  # the text wraps at the panel's width: never clipped


def test_a_control_leaving_the_envelope_is_named_and_the_note_follows_the_controls():
    widget = _build("workbench.widgets.serving_hw:serving_hardware_panel")
    note = widget.fidelity
    gpu = note.controls["gpu"]
    measured = [g for g in gpu.options if not any("GPU " + g in o for o in _outside(note, gpu, g))]
    unmeasured = [g for g in gpu.options if any(f"GPU {g}" in o for o in _outside(note, gpu, g))]
    assert measured and unmeasured, "the GPU menu should hold measured and unmeasured GPUs"
    gpu.value = unmeasured[0]
    assert any(f"no measured point for GPU {unmeasured[0]}" in o for o in note.outside), note.outside
    assert "Outside the validated envelope" in note.value and unmeasured[0] in note.value
    gpu.value = measured[0]
    assert not any(f"GPU {measured[0]}" in o for o in note.outside)


def _outside(note: FidelityNote, control, value) -> list[str]:
    control.value = value
    return list(note.outside)


def test_a_deep_pipeline_beyond_the_validated_one_is_named():
    n = fidelity.region_note("training", pp=128)
    assert not n.in_envelope and any("PP 128" in o for o in n.outside)
