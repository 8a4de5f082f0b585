"""Failure-mitigation panel (SWARM): failure, drop rate, capacity, load -> every mitigation's small-flow p99 FCT and
long-flow throughput, and the ranking, with the operators' rule's action marked.

:func:`panel_model` runs one point of the registered ``mitigation-ranking`` experiment (flow-level estimator):
every mitigation and the operators' rule on the same flows and routing draws, ranked by the experiment (each row is
the ``mitigation`` experiment's row at that point), so the panel shows the experiments' own numbers and ranks them
with nothing of its own.
"""

from __future__ import annotations

import ipywidgets as W
import pandas as pd

from .. import experiments as ex
from ..viz import mitigation as vm
from . import FigurePane, html_table, panel, param_controls, param_values, redraw

__all__ = ["panel_model", "mitigation_panel", "CONTROLS", "DURATION_S"]

#: The ``mitigation-ranking`` parameters the panel controls.
CONTROLS = ("failure", "drop_rate", "capacity_fraction", "load")
#: Arrivals per panel point (the reproduction's estimator studies use the same).
DURATION_S = 0.1


def panel_model(failure: str, drop_rate: float, capacity_fraction: float, load: float, seed: int = 0) -> pd.DataFrame:
    """Every mitigation (and the operators' rule) at one point of the ``mitigation`` experiment, ranked: the
    ``mitigation-ranking`` experiment's point.

    Returns one row per mitigation: the experiment's metrics, ``rank`` (combined order among the four candidate
    mitigations, best first; the operators' rule's row, last, has rank 0) and ``operator_action``.

    Examples
    --------
    >>> t = panel_model("lossy", 0.05, 0.5, 0.3)  # doctest: +SKIP
    >>> t.mitigation.tolist()[-1]  # doctest: +SKIP
    'operator'
    """
    point = {
        "failure": failure,
        "drop_rate": drop_rate,
        "capacity_fraction": capacity_fraction,
        "load": load,
        "duration_s": DURATION_S,
    }
    return ex.run_point("mitigation-ranking", point, seed=seed)


def mitigation_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    controls = param_controls("mitigation-ranking", CONTROLS)
    info = W.HTML()
    fig = FigurePane()

    def update(*_):
        v = param_values(controls)
        t = panel_model(v["failure"], v["drop_rate"], v["capacity_fraction"], v["load"])
        redraw(fig, vm.mitigation_bars(t, title=f"Mitigations of a {v['failure']} failure at load {v['load']:.0%}"))
        op = t.operator_action.iloc[0]
        info.value = html_table(
            ["rank", "mitigation", "small p99 FCT (ms)", "small mean FCT (ms)", "long throughput (Gbit/s)"],
            [
                [
                    r.rank if r.rank else "-",
                    f"operators' rule ({op})" if r.mitigation == "operator" else r.mitigation,
                    f"{r.small_p99_fct_ms:.3f}",
                    f"{r.small_mean_fct_ms:.3f}",
                    f"{r.long_tput_gbps:.2f}",
                ]
                for r in t.itertuples()
            ],
            caption="Flow-level estimator, 64-host 2:1 leaf-spine, 100 ms of web-search flows; ranked by small-flow "
            "p99 FCT, ties within 10% broken by long-flow throughput (SWARM's comparator). One draw of flows "
            "(seed 0): its p99 moves from seed to seed, and the reproduction's claims average 2 seeds (3 at full "
            "scale).",
        )

    for w in controls:
        w.continuous_update = False
        w.observe(update, "value")
    update()
    return panel(controls, [fig], info=info, fidelity="workbench.widgets.mitigation:mitigation_panel")
