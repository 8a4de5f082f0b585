"""The mitigation panel shows the ``mitigation`` experiment's own numbers, ranked."""

from __future__ import annotations

import ipywidgets as W
import pytest

from workbench import experiments as ex
from workbench.widgets.mitigation import DURATION_S, mitigation_panel, panel_model


def test_panel_number_is_the_experiment_number():
    t = panel_model("concurrent", 0.05, 0.5, 0.4).set_index("mitigation")
    for mit in ("reweight", "operator"):
        row = ex.run_point(
            "mitigation",
            {
                "failure": "concurrent",
                "drop_rate": 0.05,
                "capacity_fraction": 0.5,
                "load": 0.4,
                "mitigation": mit,
                "duration_s": DURATION_S,
            },
        ).iloc[0]
        assert t.loc[mit, "small_p99_fct_ms"] == pytest.approx(row.small_p99_fct_ms, rel=1e-9)
        assert t.loc[mit, "long_tput_gbps"] == pytest.approx(row.long_tput_gbps, rel=1e-9)
    assert sorted(t["rank"]) == [0, 1, 2, 3, 4]


def _html(widget):
    if isinstance(widget, W.HTML):
        yield widget.value
    for child in getattr(widget, "children", ()):
        yield from _html(child)


def test_panel_builds_and_shows_the_ranking():
    text = " ".join(_html(mitigation_panel()))
    assert "operators" in text and "reweight" in text
