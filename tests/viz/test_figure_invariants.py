"""Every figure the reproductions build passes the figure invariants (what a reader sees is checked, not only that
it renders), and the shared figure settings hold: paper-ready camera export, no axis drawn over rounding noise."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from workbench.data import find
from workbench.reproductions import build_figures, load_all
from workbench.testing import figure_problems
from workbench.viz import EXPORT_SCALE, FULL_WIDTH_PX, export_config, setup_notebook, tidy_axes

PAPERS = list(dict.fromkeys(f.paper.id for f in load_all().select_figures(None)))


@pytest.fixture(autouse=True)
def _workbench_template():
    """The hand-made figures below take the workbench's template (its palette), as every styled figure does; a test
    of the palette rule says otherwise itself."""
    import plotly.io as pio

    from workbench.viz import TEMPLATE

    before = pio.templates.default
    pio.templates.default = TEMPLATE
    yield
    pio.templates.default = before


@pytest.mark.slow
@pytest.mark.parametrize("paper", PAPERS)
def test_reproduction_figures_pass_the_invariants(paper):
    missing = [f for f in load_all().papers[paper].requires_data if find(f) is None]
    if missing:
        pytest.skip(f"{paper} needs data not on the search path: {', '.join(missing)}")
    figures = build_figures(paper, "quick")
    assert figures
    # shown full width (a notebook's output area, the scoreboard, an export): titles clear of the mode bar there
    found = {key: figure_problems(fig, width_px=FULL_WIDTH_PX) for key, fig in figures.items()}
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


def test_more_coinciding_lines_than_named_dash_styles_stay_apart():
    """The spraying panel on a one-spine fabric with all seven routings: every routing loads the one spine alike, so
    seven lines coincide, one more than plotly's named dash styles (solid and five others); each keeps a dash of its
    own."""
    routings = ("ecmp", "mp-2", "mp-4", "mp-8", "spray", "minimal", "planned", "extra")
    fig = go.Figure([go.Scatter(x=[1, 2, 3], y=[4.0, 5.0, 6.0], name=n) for n in routings])
    tidy_axes(fig)
    assert not figure_problems(fig)
    assert len({t.line.dash or "solid" for t in fig.data}) == len(routings)


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


def test_log_axes_label_full_values_and_at_least_two_ticks():
    """A log axis's labels between powers of ten were bare digits (0.5 read "5", 20 read "2": notebooks 00, 05, 12,
    14, 15), an axis spanning less than a decade got one tick or none (03, 05, 13): the axis policy labels powers of
    ten, or 1-2-5 in full, and draws an axis under a decade linear; the invariants catch each case."""
    bare = go.Figure(go.Scatter(y=[0.15, 3.0], name="CV"), layout={"yaxis": {"type": "log", "dtick": "D2"}})
    assert figure_problems(bare) == [
        "yaxis: log axis labels the ticks between powers of ten with a bare digit (2 for 0.2 or 20)"
    ]
    auto = go.Figure(go.Scatter(y=[0.15, 3.0], name="CV"), layout={"yaxis": {"type": "log"}})
    assert "plotly's automatic ticks" in figure_problems(auto)[0]
    one = go.Figure(go.Scatter(y=[2.0, 9.0], name="CV"))
    one.update_yaxes(type="log", dtick=1, exponentformat="power")
    assert figure_problems(one) == ["yaxis: 0 labelled tick(s) in view on a log axis (at least 2)"]
    si = go.Figure(go.Scatter(y=[1e-6, 1e-3], name="t"), layout={"yaxis": {"type": "log", "dtick": 1}})
    assert "exponentformat" in figure_problems(si)[0]  # plotly's default prints 1μ

    single = go.Figure(go.Scatter(x=[16], y=[2.0], name="ECMP"))  # one GPU count: the builder's one tick
    single.update_xaxes(type="log", tickvals=[16], ticktext=["16"])
    assert figure_problems(single) == ["xaxis: 1 labelled tick(s) in view (at least 2)"]
    for fig in (bare, auto, one, si, single):
        tidy_axes(fig)
        assert not figure_problems(fig), figure_problems(fig)
    assert (bare.layout.yaxis.dtick, bare.layout.yaxis.tickformat) == ("D2", ",~g")  # 0.2, 0.5, 1, 2: in full
    assert one.layout.yaxis.type == "linear"  # 2 to 9: under a decade
    assert si.layout.yaxis.dtick == 1 and si.layout.yaxis.exponentformat == "power"


def test_an_axis_switched_to_linear_keeps_its_marks_and_drops_its_log_title():
    from workbench.viz import mark_x

    fig = go.Figure(go.Scatter(x=[0.6, 3.0], y=[0.1, 0.9], name="CDF"))
    fig.update_xaxes(type="log", title_text="inter-arrival CV (ratio, log)")
    mark_x(fig, 1.0, "Poisson")
    assert fig.layout.annotations[0].x == 0.0  # log10(1), as plotly places it on a log axis
    tidy_axes(fig)
    assert fig.layout.xaxis.type == "linear" and fig.layout.xaxis.title.text == "inter-arrival CV (ratio)"
    assert fig.layout.annotations[0].x == 1.0 and not figure_problems(fig)
    said = go.Figure(go.Scatter(x=[1, 2], y=[1, 2], name="a"), layout={"xaxis": {"title": {"text": "x (log scale)"}}})
    assert figure_problems(said) == ["xaxis: the title says log on a linear axis: 'x (log scale)'"]


def test_bars_start_at_zero_or_say_where():
    """13's "none" 0.526 ms against "drain" 0.820 ms drew on a log axis as bars of 12x the length ratio: a log bar
    axis under a decade is drawn linear (bars from zero); one over a decade starts at a power of ten the axis title
    states; bars are never stacked on a log axis."""
    near = go.Figure(go.Bar(x=["none", "drain"], y=[0.526, 0.820], name="p99"), layout={"yaxis": {"type": "log"}})
    near.update_yaxes(dtick=1, title_text="p99 FCT (ms)")
    assert any("without a stated baseline" in p for p in figure_problems(near))
    tidy_axes(near)
    assert near.layout.yaxis.type == "linear" and not figure_problems(near)

    wide = go.Figure(go.Bar(x=["vllm", "fastswitch"], y=[1080.0, 3.1], name="p99"))
    wide.update_yaxes(type="log", title_text="p99 TTFT (s)")
    tidy_axes(wide)
    assert wide.layout.yaxis.range[0] == 0.0 and wide.layout.yaxis.title.text == "p99 TTFT (s; bars from 1)"
    assert not figure_problems(wide)
    assert tidy_axes(wide).layout.yaxis.title.text == "p99 TTFT (s; bars from 1)"  # idempotent
    from workbench.viz import fit_titles

    fit_titles(wide, 440, 150)  # a short panel figure wraps its axis title: the baseline is still stated
    assert "<br>" in wide.layout.yaxis.title.text and not figure_problems(tidy_axes(wide))
    assert wide.layout.yaxis.title.text.count("bars from") == 1

    above = go.Figure(go.Bar(x=["a", "b"], y=[1.02, 1.3], name="makespan"), layout={"yaxis": {"range": [0.95, None]}})
    assert any("not including zero" in p for p in figure_problems(above))
    tidy_axes(above)
    assert above.layout.yaxis.title.text == "bars from 0.95" and not figure_problems(above)

    stacked = go.Figure([go.Bar(y=[10.0, 200.0], name="rest"), go.Bar(y=[1.0, 50.0], name="stall")])
    stacked.update_layout(barmode="stack")
    stacked.update_yaxes(type="log", dtick=1, exponentformat="power", title_text="p99 TBT (ms; bars from 1)")
    stacked.update_yaxes(range=[0, 2.5])
    assert figure_problems(stacked) == ["yaxis: bars stacked on a log axis (a segment's length means nothing)"]


def test_annotations_sit_where_they_say_on_log_axes():
    """00's "p99" label sat at 1 instead of 10^-2 and 04's "Poisson" at CV 10 instead of 1: plotly places an
    annotation on a log axis at log10 of its coordinate, and add_hline/add_vline give it the raw value."""
    from workbench.viz import mark_y

    ccdf = go.Figure(go.Scatter(x=[0, 10, 60], y=[1.0, 0.1, 0.001], name="gamma"), layout={"yaxis": {"type": "log"}})
    wrong = go.Figure(ccdf)
    wrong.add_hline(y=0.01, annotation_text="p99")
    assert figure_problems(tidy_axes(wrong)) == [
        "annotation 'p99' at y=0.01 on a log axis is drawn at 10^0.01, not at the line it labels (0.01): a log axis "
        "places annotations at log10 of their value"
    ]
    right = mark_y(go.Figure(ccdf), 0.01, "p99")
    assert right.layout.annotations[0].y == -2.0 and not figure_problems(tidy_axes(right))
    far = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="a"))
    far.add_annotation(x=1.5, y=40, text="note", showarrow=False)
    assert "stretches the axis" in figure_problems(far)[0]


def test_figures_take_the_workbench_palette():
    """Four figures drew in plotly's default palette while the rest use viz.COLORS: a figure's colorway is the
    workbench's palette, and a colour of plotly's default palette is a figure problem."""
    import plotly.io as pio

    plain = go.Figure(go.Bar(x=["a"], y=[1], name="compute"), layout={"template": pio.templates["plotly_white"]})
    assert figure_problems(plain) == [
        "trace 0 (compute) takes plotly's default palette (no colour of its own; the figure's colorway is plotly's)"
    ]
    assert not figure_problems(tidy_axes(plain))
    painted = go.Figure(go.Scatter(y=[1, 2], name="x", line={"color": "#636EFA"}))
    assert figure_problems(painted) == ["trace 0 (x) is drawn in a colour of plotly's default palette"]


def test_identifiers_in_categories_and_legends_read_as_words():
    """10's operator bars were labelled attn_prefill, 12's legend said sequential-1f1b: categories are checked like
    legends, and viz.label names such values for readers."""
    from workbench.viz import label

    bars = go.Figure(go.Bar(x=["linear", "attn_prefill"], y=[1, 2], name="compute"))
    assert figure_problems(bars) == ["identifier in category label: 'attn_prefill'"]
    legend = go.Figure(go.Bar(x=["1"], y=[1.2], name="sequential-1f1b"))
    assert figure_problems(legend) == ["identifier in legend: 'sequential-1f1b'"]
    assert [label(v) for v in ("attn_prefill", "sequential-1f1b", "halving_doubling", "nic_degraded")] == [
        "attention (prefill)", "sequential 1F1B", "halving-doubling", "degraded NIC"
    ]  # fmt: skip


def test_titles_fit_a_full_width_figure_and_rewrap_in_a_panel():
    """A full-width figure's title ran under the mode bar (the notebooks' reproduction figures): style() wraps it
    for FULL_WIDTH_PX, and a panel wraps it again for its narrower cell (not twice)."""
    from workbench.viz import FULL_WIDTH_PX, HARD_BREAK, fit_titles, style
    from workbench.widgets import FIGURE_MIN_PX

    title = "PRED's change of small-flow p99 FCT vs each static baseline, leaf-spine at 90% load, every mix"
    fig = go.Figure(go.Scatter(y=[1, 2], name="a"))
    assert any("title runs" in p for p in figure_problems(go.Figure(fig, layout_title_text=title),
                                                          width_px=FULL_WIDTH_PX))  # fmt: skip
    style(fig, title=title)
    assert not figure_problems(fig, width_px=FULL_WIDTH_PX)
    fit_titles(fig, FIGURE_MIN_PX)
    narrow = fig.layout.title.text.count("<br>")
    assert narrow >= 2 and not figure_problems(fig, width_px=FIGURE_MIN_PX)
    fit_titles(fig, FIGURE_MIN_PX)
    assert fig.layout.title.text.count("<br>") == narrow and fig.layout.margin.t == 60 + int(1.3 * 17) * narrow
    kept = go.Figure(layout={"title": {"text": f"Title{HARD_BREAK}its setting"}})
    assert fit_titles(kept, FULL_WIDTH_PX).layout.title.text == f"Title{HARD_BREAK}its setting"


def test_figures_read_back_from_json_are_checked_too():
    """The reproductions' figures come back from their cache as JSON, where plotly writes numpy arrays as typed
    arrays ({"dtype", "bdata"}): the invariants read them (they skipped every such trace before)."""
    import numpy as np
    import plotly.io as pio

    fig = go.Figure([go.Scatter(x=np.arange(3.0), y=np.ones(3), name=n) for n in ("ecmp", "spray")])
    back = pio.from_json(fig.to_json())
    assert isinstance(back.data[0].y, dict)  # a typed array
    assert figure_problems(back) == ["trace 1 (spray) hides trace 0 (ecmp): same points, same dash"]


def test_the_template_set_without_validation_is_the_validated_one():
    """``style`` sets the workbench template as plotly sets its default one (unvalidated, 10x faster): the figure is
    the one a validated assignment gives, and validation is back on for what follows."""
    from workbench import viz

    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    validated = go.Figure(fig)
    validated.update_layout(template=viz.TEMPLATE)
    viz._apply_template(fig)
    assert fig.to_plotly_json() == validated.to_plotly_json()
    assert fig.layout.template.layout.colorway == viz.PALETTE
    with pytest.raises(ValueError):
        fig.update_layout(height=-5)


def test_a_redrawn_pane_shows_the_figure_given_with_the_panes_layout():
    """``redraw`` shows a built figure itself (no re-validated copy), sized to fill its cell."""
    from workbench.widgets import FigurePane, redraw

    pane, fig = FigurePane(), go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    fig.update_layout(width=900)
    redraw(pane, fig, height=300)
    assert pane.figure is fig
    assert (fig.layout.width, fig.layout.autosize, fig.layout.height) == (None, True, 300)
    widget = go.FigureWidget(go.Scatter(y=[1]))  # not a go.Figure: shown as a copy
    redraw(pane, widget)
    assert type(pane.figure) is go.Figure and pane.figure.data[0].y == (1,)
