"""The explore panel maps parameters to controls, sweeps on a button press (then from the cache) and plots error bars."""

from __future__ import annotations

import pytest

from workbench import experiments as ex
from workbench.widgets.explore import explore_panel, parse_values, value_text


def test_explore_panel_runs_the_sweep_and_plots_error_bars(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    monkeypatch.setenv("WORKBENCH_BACKGROUND_VALIDATION", "0")  # notes: tests/widgets/test_fidelity_notes.py
    p = explore_panel(
        "pred-fct-vs-load",
        x="load",
        series=["marking"],
        values=["p50_s", "p99_s"],
        grid={
            "load": [0.3, 0.6],
            "leaves": 2,
            "spines": 2,
            "hosts_per_leaf": 4,
            "duration_s": 0.005,
            "marking": ["static", "pred"],
        },
        seeds=2,
        facet_col="size_class",
        client=False,
        scale=1e3,
        log_y=True,
        y_title="FCT (ms)",
        autorun=False,
    )
    assert type(p.controls["marking"]).__name__ == "SelectMultiple" and p.controls["marking"].value == (
        "static",
        "pred",
    )
    assert p.controls["load"].value == "0.3, 0.6"
    p.run.click()
    assert "8 point x seed runs: 8 computed" in p.info.value
    traces = [t for t in p.figure.data if t.name == "static"]
    assert traces and all(len(t.x) == 2 and t.error_y.array is not None for t in traces)
    assert {t.name for t in p.figure.data} == {"static", "pred"}
    p.controls["routing"].value = ("ecmp", "spray")  # a second routing joins the series as dashes
    p.controls["load"].value = "0.3:0.6:2"
    p.run.click()
    assert "16 point x seed runs: 8 computed, 8 from the cache" in p.info.value
    assert {t.name for t in p.figure.data} == {"static, ecmp", "static, spray", "pred, ecmp", "pred, spray"}
    from workbench.testing import figure_problems

    assert figure_problems(p.figure.figure) == []  # axis titles and facet titles in words, units from the table


def test_explore_panel_reports_bad_values_before_running(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    monkeypatch.setenv("WORKBENCH_BACKGROUND_VALIDATION", "0")  # notes: tests/widgets/test_fidelity_notes.py
    p = explore_panel("pred-fct-vs-load", x="load", values=["p99_s"], client=False, autorun=False)
    p.controls["load"].value = "0.5, 1.5"
    p.run.click()
    assert "Grid error" in p.info.value and "'load'" in p.info.value and not p.figure.data
    with pytest.raises(ValueError, match="hosts"):
        explore_panel("pred-fct-vs-load", x="hosts", values=["p99_s"])
    assert parse_values(ex.get("pred-fct-vs-load").param("leaves"), "2:8:4") == [2, 4, 6, 8]
    # a range's count: a whole number up to MAX_RANGE_COUNT, else a grid error naming the parameter ("inf" raised an
    # OverflowError past the panel, "1e6" built a million-point grid, "2.5" was cut to 2)
    for count in ("inf", "2.5", "1000000"):
        p.controls["load"].value = f"0.3:0.9:{count}"
        p.run.click()
        assert "Grid error" in p.info.value and "'load'" in p.info.value and "count" in p.info.value, count


def test_explore_panel_runs_its_initial_grid_when_built(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    monkeypatch.setenv("WORKBENCH_BACKGROUND_VALIDATION", "0")  # notes: tests/widgets/test_fidelity_notes.py
    grid = {"utilization": [0.5, 0.9], "process": ["poisson", "gamma"], "customers": 2000}
    p = explore_panel("arrivals-queue-wait", x="utilization", series=["process"], values=["mean_wait_s"], grid=grid,
                      seeds=2, client=False)  # fmt: skip
    assert "8 point x seed runs: 8 computed" in p.info.value and "dashboard" not in p.info.value
    assert {t.name for t in p.figure.data} == {"poisson", "gamma"}
    again = explore_panel("arrivals-queue-wait", x="utilization", series=["process"], values=["mean_wait_s"],
                          grid=grid, seeds=2, client=False)  # fmt: skip
    assert "8 from the cache" in again.info.value
    assert [list(t.y) for t in again.figure.data] == [list(t.y) for t in p.figure.data]


def test_every_float_default_reads_back_exactly_from_its_text_field():
    """The text field of a number parameter holds values the sweep reads back as the same point. ``:g`` wrote six
    significant digits: a 1 GiB ``size_bytes`` showed as ``1.07374e+09`` and ran 1,073,740,000 bytes, another point
    than the experiment's default (and the claims' cached one)."""

    checked = 0
    for name in ex.names():
        for param in ex.get(name).params:
            if isinstance(param.default, float):
                text = value_text(param.default)
                assert parse_values(param, text) == [param.default], (name, param.name, text)
                assert "e+" not in text or abs(param.default) >= 1e16, (name, param.name, text)
                checked += 1
    assert checked > 50
    assert value_text(1073741824.0) == "1073741824" and value_text(0.1) == "0.1"
