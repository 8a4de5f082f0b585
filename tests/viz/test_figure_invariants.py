"""Every figure the reproductions build passes the figure invariants (what a reader sees is checked, not only that
it renders), and the shared figure settings hold: paper-ready camera export, no axis drawn over rounding noise."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from workbench.data import find
from workbench.reproductions import build_figures, load_all
from workbench.testing import figure_problems
from workbench.viz import EXPORT_SCALE, export_config, setup_notebook, tidy_axes

PAPERS = list(dict.fromkeys(f.paper.id for f in load_all().select_figures(None)))


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_reproduction_figures_pass_the_invariants(paper):
    missing = [f for f in load_all().papers[paper].requires_data if find(f) is None]
    if missing:
        pytest.skip(f"{paper} needs data not on the search path: {', '.join(missing)}")
    figures = build_figures(paper, "quick")
    assert figures
    found = {key: figure_problems(fig) for key, fig in figures.items()}
    assert not any(found.values()), {k: v for k, v in found.items() if v}


def test_checker_catches_each_defect():
    noisy = go.Figure(go.Scatter(x=[1, 2, 3], y=[0.99999999999999778, 0.99999999999999889, 0.9999999999999980]))
    assert any("float noise" in p for p in figure_problems(noisy))
    assert not figure_problems(tidy_axes(noisy))  # tidy_axes gives such an axis a +-5% range around the value
    crowded = go.Figure([go.Scatter(y=[i], name=f"series {i}") for i in range(9)])
    assert figure_problems(crowded) == ["9 legend entries (at most 8)"]
    units = go.Figure(go.Scatter(y=[1]), layout={"yaxis": {"title": {"text": "latency (us)"}}})
    assert figure_problems(units) == ["ASCII unit in yaxis: 'latency (us)'"]
    assert not figure_problems(go.Figure(go.Scatter(y=[1, float("nan"), 2], name="p99 wait (µs)")))


def test_camera_button_exports_paper_ready_png():
    cfg = export_config(go.Figure(layout={"title": {"text": "Small-flow p99 FCT vs load"}}))
    assert cfg["toImageButtonOptions"] == {
        "format": "png",
        "scale": EXPORT_SCALE,
        "filename": "small-flow-p99-fct-vs-load",
    }
    assert EXPORT_SCALE * 463 >= 1200  # a panel figure ~463 px wide on screen is saved >= 1,200 px wide
    import plotly.io as pio

    setup_notebook()
    assert pio.renderers["plotly_mimetype"].config["toImageButtonOptions"]["scale"] == EXPORT_SCALE


def test_coinciding_lines_stay_visible():
    same = go.Figure([go.Scatter(x=[1, 2, 3], y=[4.0, 5.0, 6.0], name=n) for n in ("ecmp", "spray", "planned")])
    same.add_scatter(x=[1, 2, 3], y=[4.0, 5.0, 6.000001], name="other")  # close, but not the same line
    assert figure_problems(same) == [
        "trace 1 (spray) hides trace 0 (ecmp): same points, same dash",
        "trace 2 (planned) hides trace 0 (ecmp): same points, same dash",
        "trace 2 (planned) hides trace 1 (spray): same points, same dash",
    ]
    tidy_axes(same)  # what style() and every panel's redraw call
    assert not figure_problems(same)
    dashes = [t.line.dash for t in same.data]
    assert dashes[0] is None and dashes[3] is None and len({dashes[1], dashes[2]}) == 2
    tidy_axes(same)  # idempotent
    assert [t.line.dash for t in same.data] == dashes


def test_a_line_over_a_dotted_line_is_not_dotted_too():
    """The microservices panel at a spike below capacity: DAGOR's goodput equals the offered load, drawn dotted, and
    a third line already took "dash"; the next dash style must differ from the dotted line beneath as well."""
    fig = go.Figure(go.Scatter(x=[0, 1, 2], y=[1.0, 2.0, 3.0], name="offered load", line={"dash": "dot"}))
    for name in ("Breakwater", "DAGOR"):
        fig.add_scatter(x=[0, 1, 2], y=[1.0, 2.0, 3.0], name=name)
    tidy_axes(fig)
    assert not figure_problems(fig)
    assert len({t.line.dash for t in fig.data}) == 3


def test_an_entity_has_one_colour_in_every_figure():
    """Topic figures, panels and explore panels take an entity's colour from the one table (viz.COLORS)."""
    import pandas as pd

    from workbench.viz import COLORS, carbon, diagnosis, fabric, servegen
    from workbench.viz.experiments import errorbar_lines

    for table in (fabric.ROUTING_COLORS, carbon.SCHEDULER_COLORS, diagnosis.DETECTOR_COLORS, servegen.MODEL_COLORS):
        assert table.items() <= COLORS.items()
    summary = pd.DataFrame(
        {"load": [0.5, 0.9] * 2, "routing": ["ecmp"] * 2 + ["spray"] * 2, "mean": [1.0, 2.0, 1.0, 1.5], "sem": 0.1}
    )
    fig = errorbar_lines(summary, "load", series=["routing"], title="FCT", x_title="load", y_title="FCT (s)")
    assert {t.name: t.line.color for t in fig.data} == {"ecmp": COLORS["ecmp"], "spray": COLORS["spray"]}
