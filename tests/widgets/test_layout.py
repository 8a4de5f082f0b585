"""The shared panel layout's info table."""

import re

import pytest

from workbench.widgets import html_table


def test_info_table_aligns_every_cell_left_and_escapes():
    out = html_table(["a", "b"], [[1, "<x>"], [2, 3.5]], caption="note & more")
    cells = re.findall(r'<(t[hd]) style="([^"]*)">', out)
    assert len(cells) == 6
    assert all("text-align:left" in style for _, style in cells)
    assert "&lt;x&gt;" in out and "note &amp; more" in out
    assert out.index("note") < out.index("<table")


def test_info_table_rejects_a_ragged_row():
    with pytest.raises(ValueError, match="row 1 has 1 cells, the header has 2"):
        html_table(["a", "b"], [[1, 2], [3]])


def _continuous(widget) -> list[str]:
    found = (
        [getattr(widget, "description", "") or type(widget).__name__] if getattr(widget, "continuous_update", 0) else []
    )
    for child in getattr(widget, "children", ()):
        found += _continuous(child)
    return found


def test_controls_update_on_release_not_on_every_drag_step():
    import ipywidgets as W

    from workbench.widgets import controls_grid

    nested = W.VBox([W.FloatSlider(description="load"), W.HBox([W.IntSlider(description="n"), W.Text()])])
    grid = controls_grid([W.FloatLogSlider(description="rate"), nested, W.Dropdown(options=["a"])])
    assert _continuous(grid) == []


def _panes(widget) -> list:
    from workbench.widgets import FigurePane

    found = [widget] if isinstance(widget, FigurePane) else []
    for child in getattr(widget, "children", ()):
        found += _panes(child)
    return found


@pytest.mark.slow
def test_every_paper_panel_updates_on_release_and_draws_true_figures():
    """Every dashboard's panel at its defaults: controls update on release, and every figure it shows passes the
    figure invariants (finite values, no axis over float noise, words not identifiers, units from the table, no
    hidden line, a readable legend)."""
    import importlib

    from workbench.reproductions import load_all
    from workbench.testing import figure_problems, paper_missing_data
    from workbench.widgets import FIGURE_MIN_PX

    problems = {}
    for paper in load_all().papers.values():
        if not paper.panel or paper_missing_data(paper):
            continue
        module, name = paper.panel.split(":")
        widget = getattr(importlib.import_module(module), name)()
        assert _continuous(widget) == [], paper.id
        panes = _panes(widget)
        assert panes, f"{paper.id}: the panel shows no figure"
        for i, pane in enumerate(panes):
            if pane.figure.data and (found := figure_problems(pane.figure, width_px=FIGURE_MIN_PX)):
                problems[f"{paper.id}[{i}]"] = found
    assert not problems, problems


def test_more_figures_than_a_row_go_in_tabs_of_two():
    """Three or four figures stacked put the last row below the fold at 1366x768 (00, 01 and 03 did): a panel takes
    at most two figures in a row, more as tabs of at most two."""
    import ipywidgets as W

    from workbench.widgets import FigurePane, panel

    panes = [FigurePane() for _ in range(3)]
    with pytest.raises(ValueError, match="at most 2 figures in a row, got 3"):
        panel([W.IntSlider()], panes)
    tabs = panel([W.IntSlider()], {"Waits and gaps": panes[:2], "Arrival counts": panes[2:]}).children[-1]
    assert isinstance(tabs, W.Tab) and tabs.titles == ("Waits and gaps", "Arrival counts")
    assert [len(page.children) for page in tabs.children] == [2, 1]
    with pytest.raises(ValueError, match="page 'all' has 3 figures"):
        panel([W.IntSlider()], {"all": panes})
    assert [p for p in _panes(panel([], {"a": panes[:2], "b": panes[2:]}))] == panes


#: A slider's description longer than this leaves no room for its track in the narrowest control cell
#: (CONTROL_MIN_PX, 300 px: ~7 px a character, plus the readout).
SLIDER_DESCRIPTION_CHARS = 24


def test_every_slider_shows_its_track():
    """Notebook 14's 'priority-change rate (per iteration)' slider showed only its handle: the description took the
    whole cell."""
    import importlib

    import ipywidgets as W

    from workbench.reproductions import load_all

    def walk(w):
        yield w
        for c in getattr(w, "children", ()):
            yield from walk(c)

    sliders = (W.IntSlider, W.FloatSlider, W.FloatLogSlider, W.SelectionSlider, W.IntRangeSlider, W.FloatRangeSlider)
    long = {}
    for paper in load_all().papers.values():
        if not paper.panel:
            continue
        module, name = paper.panel.split(":")
        try:
            widget = getattr(importlib.import_module(module), name)()
        except (OSError, ValueError) as exc:  # a panel over real data, absent here: checked where the data is
            if "data search path" in str(exc):
                continue
            raise
        for c in walk(widget):
            if isinstance(c, sliders) and len(c.description) > SLIDER_DESCRIPTION_CHARS:
                long[f"{paper.id}: {c.description}"] = len(c.description)
    assert not long, long


def test_a_sentinel_value_reads_as_what_it_stands_for():
    """``pcie_gbs=0`` means "the GPU table's rate": the control shows that rate, never a "0.00 GB/s"."""
    from workbench import experiments as ex
    from workbench.serving import specs
    from workbench.widgets import param_control

    param = ex.get("llm-preemption").param("pcie_gbs")
    gpu = specs.gpu("A100-80GB")
    c = param_control(param, sentinel=(0.0, f"{gpu.pcie_bytes_per_s / 1e9:g} (GPU)"))
    assert c.value == 0.0 and c.options[c.index][0] == "32 (GPU)"  # short: a slider's readout shows ~9 characters
    assert [v for _, v in c.options][1:4] == [1.0, 2.0, 5.0] and c.options[-1][1] == param.high
    assert not any(label.startswith("0") for label, _ in c.options)
    moved = param_control(param, 24.0, sentinel=(0.0, "GPU's"))  # a value off the stops is kept, in order
    assert moved.value == 24.0 and [v for _, v in moved.options][:1] == [0.0]
    assert [v for _, v in moved.options] == sorted(v for _, v in moved.options)
    with pytest.raises(ValueError, match="pcie_gbs"):
        param_control(param, -1.0, sentinel=(0.0, "GPU's"))


def test_a_parameter_of_multiples_offers_and_accepts_only_multiples():
    """A job's ranks fill machines of 8: the declared space says so, a control offers only such values (the
    1-2-5 stops of a log slider would offer 10, 20, 50, which the job refuses), and a typed 19 is refused by name."""
    import ipywidgets as W

    from workbench import experiments as ex
    from workbench.widgets import param_control

    ranks = ex.get("holmes-iteration-localization").param("ranks")
    assert ranks.multiple == 8 and ranks.allowed == "[8, 65536], a multiple of 8"
    with pytest.raises(ValueError, match=r"parameter 'ranks' must be a multiple of 8, got 19"):
        ranks.validate(19)
    assert ranks.validate(24) == 24 and ranks.parse("24") == 24
    stops = [v for _, v in param_control(ranks).options]
    assert stops[:4] == [8, 16, 32, 64] and stops[-1] == 65_536 and all(v % 8 == 0 for v in stops)
    assert param_control(ranks, 24).value == 24 and 24 in [v for _, v in param_control(ranks, 24).options]
    linear = ex.Param("gpus", 16, "", low=3, high=70, multiple=8)
    c = param_control(linear)
    assert isinstance(c, W.IntSlider) and (c.min, c.max, c.step) == (8, 64, 8)
    for bad in ({"default": 1.5}, {"default": 8, "choices": (8, 16)}, {"default": 8, "multiple": 0}):
        kwargs = {"multiple": 8, **bad}
        with pytest.raises((TypeError, ValueError), match="multiple"):
            ex.Param("x", **kwargs)
