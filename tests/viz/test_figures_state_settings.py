"""Figures on one subject say the settings that make their numbers differ (issue 41, item 3): in every committed
notebook, figures plotting the same quantity against the same axis state different settings or agree; and the cases
seen, one by one: the ETTR curves of the Young/Daly reproduction and of the failures panel (08), the iteration
figures of 07, the knee of 06."""

from __future__ import annotations

import json
import re
from itertools import combinations
from pathlib import Path

import pytest

from workbench.reproductions import load_all

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


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


def _text(title) -> str:
    return (title.get("text") or "") if isinstance(title, dict) else (title or "")


def _numbers(data: list) -> list:
    """What a figure's traces plot, rounded (a float printed twice need not agree in its last digits)."""

    def rounded(v):
        if isinstance(v, float):
            return float(f"{v:.6g}")
        if isinstance(v, list):
            return [rounded(x) for x in v]
        if isinstance(v, dict):
            return {k: rounded(x) for k, x in v.items() if k not in ("uid", "meta")}
        return v

    return [rounded({k: t.get(k) for k in ("type", "x", "y", "z", "name")}) for t in data]


def same_subject_conflicts(figures: list[dict]) -> list[str]:
    """Pairs of figures (plotly JSON) on one subject, the same quantity against the same axis (their axis titles),
    whose titles state the same settings but whose numbers differ: a reader would take one for the other."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for fig in figures:
        layout = fig.get("layout", {})
        key = (_text(layout.get("xaxis", {}).get("title")), _text(layout.get("yaxis", {}).get("title")))
        if any(key):
            groups.setdefault(key, []).append(fig)
    out = []
    for key, figs in groups.items():
        for a, b in combinations(figs, 2):
            ta, tb = (re.sub(r"\s+", " ", _text(f.get("layout", {}).get("title"))).strip() for f in (a, b))
            if ta == tb and _numbers(a.get("data", [])) != _numbers(b.get("data", [])):
                out.append(f"{ta!r} ({key[1]} vs {key[0]}): two figures, one title, different numbers")
    return out


def _notebook_figures(path: Path) -> list[dict]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [
        out["data"][kind]
        for cell in nb["cells"]
        for out in cell.get("outputs", [])
        for kind in out.get("data", {})
        if "plotly" in kind
    ]


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_figures_of_a_notebook_on_one_subject_say_what_differs(path):
    """Item 3, generically: in every notebook as committed (what a reader opens), two figures that plot the same
    quantity against the same axis either state different settings in their titles or show the same numbers."""
    figures = _notebook_figures(path)
    assert figures, f"{path.name} shows no figure"
    assert same_subject_conflicts(figures) == []


def test_the_same_subject_rule_can_fail():
    def fig(title, y):
        return {"layout": {"title": {"text": title}, "xaxis": {"title": {"text": "GPUs"}},
                           "yaxis": {"title": {"text": "iteration (s)"}}}, "data": [{"type": "scatter", "y": y}]}  # fmt: skip

    assert same_subject_conflicts([fig("Iteration vs GPUs", [4.45]), fig("Iteration vs GPUs", [2.54])])
    assert not same_subject_conflicts(
        [fig("Iteration vs GPUs (PP 4)", [4.45]), fig("Iteration vs GPUs (PP 8)", [2.54])]
    )
    assert not same_subject_conflicts([fig("Iteration vs GPUs", [4.45]), fig("Iteration vs GPUs", [4.450000001])])
