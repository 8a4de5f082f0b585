"""The PRED panel builds, redraws on a control change, shows measured small-flow FCTs, and its ranges stay valid."""

from __future__ import annotations

import numpy as np

from workbench import experiments as ex
from workbench.testing import find_widget
from workbench.widgets import FigurePane
from workbench.widgets import aqm as A

#: The panel's starting values (the experiment's defaults but the panel's lighter load).
DEFAULTS = {**{n: ex.get("pred-dumbbell-fct").param(n).default for n in A.CONTROLS}, **A.START}


def _figures(widget):
    """The panel's figure panes, in order (the shared layout puts them in its figures grid)."""
    return [c for c in widget.children[-1].children if isinstance(c, FigurePane)]


def test_pred_panel_redraws():
    panel = A.pred_panel()
    fluid, fct = _figures(panel)
    packet = next(t for t in fluid.data if t.name == "static (packet)")
    before = np.asarray(packet.y).copy()
    find_widget(panel, description="long flows").value = 20
    packet = next(t for t in fluid.data if t.name == "static (packet)")
    assert not np.array_equal(before, np.asarray(packet.y))
    assert {t.name for t in fct.data} == {"static p50", "static p99", "pred p50", "pred p99"}


def test_pred_panel_table_measures_small_flows_at_every_load():
    # issue 10: the table showed NaN p50 and 0 small flows at every load (too few web-search flows in 15 ms)
    for load in (0.1, 0.8):
        fct = A.panel_model(**{**DEFAULTS, "load": load}).fct
        small = fct[fct.size_class.str.startswith("small")]
        assert (small["count"] >= 3).all() and np.isfinite(small["p50_s"]).all()


def test_pred_panel_thresholds_stay_ordered():
    panel = A.pred_panel()
    min_k = find_widget(panel, description="static min K (packets)")
    max_k = find_widget(panel, description="static max K (packets)")
    min_k.value = min_k.options[-1][1]
    assert min_k.value < max_k.value
    max_k.value = max_k.options[0][1]
    assert min_k.value < max_k.value


def test_pred_panel_controls_are_the_experiment_params():
    """Each control offers the Param's range: the RTT in µs over the Param's seconds, the thresholds' 1-2-5 stops."""
    panel = A.pred_panel()
    exp = ex.get("pred-dumbbell-fct")
    rtt = find_widget(panel, description="RTT (µs)")
    assert rtt.options[0][1] == exp.param("rtt_s").low and rtt.value == exp.param("rtt_s").default
    assert dict(rtt.options)["100"] == rtt.value
    flows = find_widget(panel, description="long flows")
    assert flows.options[0][1] == 0 and flows.options[-1][1] == exp.param("n_long_flows").high


def test_pred_panel_model_at_slider_extremes():
    """Both ends of every control's range are runs of the experiment (short runs: the range is the point)."""
    low = {**DEFAULTS, "n_long_flows": 0, "load": 0.01, "rtt_s": 1e-6, "min_k_pkts": 0.0, "max_k_pkts": 1.0}
    high = {**DEFAULTS, "n_long_flows": 1024, "load": 0.99, "rtt_s": 1e-3, "max_k_pkts": 10_000.0, "max_p": 1.0}
    for params in (low, {**low, "slope_per_pkt": 1e-4}, high, {**high, "slope_per_pkt": 1.0}):
        out = A.panel_model(**params, duration_s=0.005)
        assert out.fct.marking.unique().tolist() == ["static", "pred"]
    assert out.sweep.n_flows.max() == 1024  # the fluid curve reaches the packet run's concurrency
