"""Figures on one subject say the settings that make their numbers differ (issue 41, item 3): the ETTR curves of the
Young/Daly reproduction and of the failures panel (08), the iteration figures of 07, the knee of 06."""

from __future__ import annotations

import re

from workbench.reproductions import load_all


def _title(fig) -> str:
    return re.sub(r"<br>", " ", fig.layout.title.text or "")


def test_the_ettr_figures_state_their_recovery_settings():
    from workbench.widgets.training import failures_panel

    figure = _title(load_all().figures["young-daly/ettr_vs_interval"].build("quick"))
    panel = failures_panel()
    pane = next(w for w in _walk(panel) if getattr(w, "figure", None) is not None and "ETTR" in _title(w.figure))
    shown = _title(pane.figure)
    for title in (figure, shown):
        for setting in ("GPUs", "detect", "isolate", "restart", "checkpoint"):
            assert setting in title, f"{title!r} does not state its {setting}"
    assert figure.split(":")[0] != shown.split(":")[0]  # different settings, stated, so different ETTRs read right


def test_iteration_figures_state_their_plan():
    title = _title(load_all().figures["c4-training/iteration_vs_gpus"].build("quick"))
    assert "TP 8" in title and "PP 8" in title


def test_the_knee_marked_is_the_knee_the_claim_measures():
    reg = load_all()
    fig = reg.figures["hotspots/latency_vs_utilization"].build("quick")
    measured = reg.claims["hotspots/knee_near_75"].measure("quick")
    mark = [a.text for a in fig.layout.annotations if "knee" in a.text]
    assert mark and f"{measured.value:.0%}" in mark[0], (mark, measured.summary)


def _walk(widget):
    stack = [widget]
    while stack:
        w = stack.pop()
        yield w
        stack.extend(getattr(w, "children", ()))
