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
