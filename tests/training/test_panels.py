"""The training panels build, react to a control and report a plan that does not fit instead of drawing it."""

from workbench.widgets.training import FailuresPanel, IterationPanel


def test_iteration_panel_updates_and_reports_misfit():
    p = IterationPanel()
    before = p.status.value
    assert "ECMP" in before and len(p.fig_bars.data) > 0
    p.batch.value = 4
    assert p.status.value != before
    p.tp.value, p.pp.value = 1, 1
    assert "does not fit" in p.status.value and "GiB" in p.status.value


def test_failures_panel_updates():
    p = FailuresPanel()
    before = p.status.value
    p.gpus.value = 100_000
    assert p.status.value != before and "MTBF" in p.status.value and len(p.fig_loss.data) == 6


def test_failures_panel_log_controls_stop_at_their_defaults_and_ends():
    """08's log sliders snapped to 631 s where 600 s was meant; now they stop at 1-2-5 values and the defaults, and
    every control moves to both ends of its range without an error."""
    p = FailuresPanel()
    assert (p.detect.value, p.isolate.value, p.rate.value) == (600, 1800, 1)
    for control in (p.rate, p.detect, p.isolate, p.gpus):
        assert control.continuous_update is False
        values = [v for _, v in control.options]  # (label, value) stops
        for end in (values[0], values[-1]):
            control.value = end
            assert "MTBF" in p.status.value
        control.value = values[len(values) // 2]


def test_what_if_panel_matches_the_graph_and_reports_misfit():
    from workbench.training import GPUS, MODELS, Plan
    from workbench.training.exec_graph import build_graph, simulate
    from workbench.widgets.training import WhatIfPanel

    p = WhatIfPanel()
    p.pp.value = 4
    p.dp.value = 16
    expected = simulate(build_graph(MODELS["gpt3-175b"], Plan(8, 4, 16, 512, recompute="full"), GPUS["H100"]))
    assert float(p.rows.iteration_s.iloc[0]) == expected.iteration_s
    assert f"{expected.iteration_s:.2f} s" in p.status.value
    p.recompute.value = "selective"
    p.pp.value, p.tp.value = 1, 1
    assert "does not fit" in p.status.value and "GiB" in p.status.value
