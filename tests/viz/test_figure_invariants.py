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


def _panel_default_sweep():
    """Notebook 09's precision/recall sweep at the panel's defaults (degraded NIC x2, 256 ranks, 2 faulty and 2
    healthy jobs): with two faulty jobs recall is 0, 0.5 or 1, so the five detectors share their points."""
    import pandas as pd

    rows = {
        "c4d": [(2, 0.5, 1), (3, 2 / 3, 1), (4, 1, 1), (6, 1, 1), (10, 1, 1), (20, 1, 1), (50, None, 0)],
        "holmes": [(1.1, 2 / 3, 1), (1.25, 0, 0), (1.5, None, 0), (2, None, 0)],
        "minder": [(1.5, 1, 1), (2, 1, 1), (3, 1, 1), (64, 1, 1)],
        "naive": [(1.05, 0.5, 1), (1.1, 0.5, 1), (1.2, 1, 1), (1.35, None, 0)],
        "perftracker": [(0.02, 0, 0), (0.04, 2 / 3, 1), (0.07, 1, 1), (0.15, 1, 1), (0.25, None, 0)],
    }
    return pd.DataFrame(
        [{"detector": d, "threshold": t, "precision": p, "recall": r} for d, rs in rows.items() for t, p, r in rs]
    ).astype({"precision": float})


def test_coinciding_markers_are_hidden_legend_entries():
    """Five marker series on the same points at the same size show as the last one drawn: reported like coinciding
    lines; distinct positions or a larger marker beneath are not."""
    same = go.Figure([go.Scatter(x=[1, 1], y=[0.5, 1.0], mode="markers", name=n) for n in ("minder", "holmes")])
    assert figure_problems(same) == ["trace 0 (minder) hidden under trace(s) 1 (holmes): same points, markers as large"]
    same.data[0].marker.size = 12  # larger beneath: its rim shows
    assert not figure_problems(same)
    # what style() and every panel's redraw do: each series beneath grows into a ring round the ones over it
    rings = go.Figure(
        [go.Scatter(x=[1, 2], y=[3.0, 4.0], mode="markers", name=n) for n in ("ecmp", "spray", "planned")]
    )
    tidy_axes(rings)
    assert not figure_problems(rings)
    sizes = [t.marker.size for t in rings.data]
    assert sizes[0] > sizes[1] > (sizes[2] or 6)
    assert [t.marker.size for t in tidy_axes(rings).data] == sizes  # idempotent
    apart = go.Figure([go.Scatter(x=[x, 1], y=[0.5, 1.0], mode="markers", name=n) for x, n in ((1, "a"), (0.97, "b"))])
    assert not figure_problems(apart)
    # a line of its own shows even when its markers are covered; one along a later line of its dash does not
    line = go.Figure(go.Scatter(x=[0, 1], y=[0, 1], name="holmes"))
    line.add_scatter(x=[0, 1], y=[0, 1], mode="markers", name="minder")
    assert not figure_problems(line)
    line.add_scatter(x=[0, 0.5, 1], y=[0, 0.5, 1], mode="lines", name="c4d")
    assert figure_problems(line) == ["trace 0 (holmes) hidden under trace(s) 1 (minder): same points, markers as large"]


def test_precision_recall_keeps_every_detector_visible():
    """Notebook 09's panel at its defaults drew the five detectors' precision/recall points on top of each other
    (two visible); every detector must stay visible, with the true precision and recall in the hover."""
    import numpy as np

    from workbench.viz.diagnosis import pr_curves

    sweep = _panel_default_sweep()
    fig = pr_curves(sweep)
    assert figure_problems(fig) == []
    assert {t.name for t in fig.data} == set(sweep.detector)
    for t in fig.data:  # hover shows the true values, whatever the drawn position
        g = sweep[sweep.detector == t.name].dropna(subset=["precision"]).sort_values("threshold")
        np.testing.assert_allclose(np.asarray(t.customdata)[:, 0], g.recall)
        np.testing.assert_allclose(t.y, g.precision)
        assert "customdata[0]" in t.hovertemplate and "%{x" not in t.hovertemplate
        assert np.abs(np.asarray(t.x) - g.recall.to_numpy()).max() <= 0.1


def test_labels_and_titles_stay_in_view():
    """Notebook 11's panel: the "γ=0.5" label of the highest point was cut off by the plot area, and the right
    figure's title ran under the mode bar a hovered figure shows at its top right."""
    import pandas as pd

    from workbench.viz import carbon as vc
    from workbench.widgets import FIGURE_MIN_PX, FigurePane, redraw

    top = go.Figure(go.Scatter(x=[1, 2], y=[140.0, 139.9], mode="markers+text", text=["", "γ=0.5"], name="PCAPS"))
    top.add_scatter(x=[3], y=[122.0], name="CAP")
    top.data[0].textposition = "top center"
    assert figure_problems(top) == ["text of trace 0 (PCAPS) cut off at the top of the plot: 'γ=0.5'"]
    top.data[0].cliponaxis = False
    assert not figure_problems(top)
    runs = pd.DataFrame(
        {"scheduler": ["agnostic", "cap", "pcaps"], "gamma": 0.5, "cap_minimum": 10, "carbon_kg": [0.14, 0.122, 0.1399],
         "mean_jct_s": [16.7, 34.4, 19.3]}
    )  # fmt: skip
    assert not figure_problems(vc.carbon_vs_jct(runs))

    title = "Executors busy per trace hour against the grid's carbon intensity"
    long = go.Figure(
        go.Scatter(y=[1, 2]), layout={"title": {"text": "Executors busy per trace hour against<br>the grid"}}
    )
    assert any("under the mode bar" in p for p in figure_problems(long, width_px=FIGURE_MIN_PX))
    pane = FigurePane()
    redraw(pane, vc.busy_vs_intensity({"agnostic": [1, 2, 3]}, [100, 200, 300], title=title))
    assert not figure_problems(pane.figure, width_px=FIGURE_MIN_PX)  # redraw wraps it clear of the mode bar


def test_a_number_that_is_not_one_in_a_title_is_a_figure_problem():
    import plotly.graph_objects as go

    from workbench.testing import figure_problems

    fig = go.Figure(go.Scatter(y=[1, 2], name="NanoFlow"), layout={"title": "Burstiness per nan-minute window"})
    assert figure_problems(fig) == ["not a number printed in title: 'Burstiness per nan-minute window'"]
    assert figure_problems(go.Figure(go.Scatter(y=[1, 2], name="NanoFlow"), layout={"title": "Inference"})) == []


def test_a_point_label_in_exponent_notation_is_a_figure_problem():
    import plotly.graph_objects as go

    from workbench.testing import figure_problems

    bad = go.Figure(go.Bar(x=["vllm", "fastswitch"], y=[1080.0, 100.0], text=["1.08e+03", "100"], name="p99"))
    assert figure_problems(bad) == ["exponent notation in trace 0 (p99) label: '1.08e+03'"]
    good = go.Figure(go.Bar(x=["vllm", "fastswitch"], y=[1080.0, 100.0], text=["1,080", "100"], name="p99"))
    assert figure_problems(good) == []
