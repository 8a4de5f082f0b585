"""PRED / RED panel: concurrency, load, RTT, thresholds or slope, controllers on/off -> fluid sweep and packet FCT.

The panel follows the widgets pattern: its controls are the ``pred-dumbbell-fct`` experiment's ``Param``s
(:func:`~workbench.widgets.param_controls`: labels, units, ranges and 1-2-5 stops as the experiment states them);
:func:`panel_model` runs the registered experiments through :func:`workbench.experiments.sweep` (serially: a fluid
curve of ``pred-queue-vs-concurrency`` and one ``pred-dumbbell-fct`` run per marking, cached, so returning to a
setting is instant) and returns tidy results; the figures come from :mod:`workbench.viz.aqm` and are updated with
:func:`~workbench.widgets.redraw`.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import aqm
from .. import experiments as ex
from ..viz import aqm as viz
from . import FigurePane, clear, html_table, panel, param_controls, param_values, redraw

__all__ = ["PanelResult", "pred_panel", "panel_model", "CONTROLS", "START"]

#: Concurrency points of the fluid curve (it reaches further when the packet run has more long flows).
N_GRID = np.unique(np.geomspace(1, 64, 24).astype(int))
#: The ``pred-dumbbell-fct`` parameters the panel controls, in the order shown.
CONTROLS = ("n_long_flows", "load", "rtt_s", "min_k_pkts", "max_k_pkts", "max_p", "slope_per_pkt", "fcs", "qla")
#: The panel's starting point where it differs from the experiment's defaults (a lighter web-search load).
START = {"load": 0.3}


@dataclass(frozen=True)
class PanelResult:
    """What the panel shows: ``sweep`` (``marking, model, n_flows, queue_pkts, utilization``: the fluid curve plus
    the packet run's point) and ``fct`` (the packet runs: ``marking, size_class, count, unfinished, p50_s, p99_s,
    mean_queue_pkts, utilization``)."""

    sweep: pd.DataFrame
    fct: pd.DataFrame


def panel_model(
    *,
    n_long_flows: int,
    load: float,
    rtt_s: float,
    min_k_pkts: float,
    max_k_pkts: float,
    max_p: float,
    slope_per_pkt: float,
    fcs: bool,
    qla: bool,
    duration_s: float | None = None,
    seed: int = 0,
) -> PanelResult:
    """The panel's model call: fluid queue vs concurrency and one packet run per marking (a few seconds).

    ``duration_s`` defaults to the experiment's (0.2 s): at a load of 0.1 it brings several small web-search flows
    after the warm-up (a fifth of it), so the table's small-flow FCT is a measurement, not NaN; at the lowest loads
    the table says no small flow finished.

    Examples
    --------
    >>> r = panel_model(n_long_flows=4, load=0.3, rtt_s=100e-6, min_k_pkts=20, max_k_pkts=200, max_p=0.1,
    ...                 slope_per_pkt=0.01, fcs=True, qla=True, duration_s=0.005)
    >>> r.fct.marking.unique().tolist()
    ['static', 'pred']
    """
    marking = {
        "marking": ["static", "pred"],
        "min_k_pkts": float(min_k_pkts),
        "max_k_pkts": float(max_k_pkts),
        "max_p": float(max_p),
        "slope_per_pkt": float(slope_per_pkt),
        "fcs": bool(fcs),
        "qla": bool(qla),
        "rtt_s": float(rtt_s),
    }
    window = ex.get("pred-dumbbell-fct").param("duration_s").default
    n_grid = N_GRID if n_long_flows <= N_GRID[-1] else np.unique(np.geomspace(1, n_long_flows, 24).astype(int))
    cols = ["marking", "model", "n_flows", "queue_pkts", "utilization"]
    fluid = ex.sweep(
        "pred-queue-vs-concurrency",
        {"n_flows": n_grid.tolist(), "model": "fluid", **marking},
        base_seed=seed,
        client=False,
        cache=False,
        progress=False,
    )[cols]
    fct = ex.sweep(
        "pred-dumbbell-fct",
        {"n_long_flows": int(n_long_flows), "load": float(load), "duration_s": duration_s or window, **marking},
        base_seed=seed,
        client=False,
        progress=False,
    )
    point = (
        fct.groupby("marking", sort=False)[["mean_queue_pkts", "utilization"]]
        .first()
        .reset_index()
        .assign(model="packet", n_flows=int(n_long_flows))
        .rename(columns={"mean_queue_pkts": "queue_pkts"})
    )
    fct = fct[["marking", "size_class", "count", "unfinished", "p50_s", "p99_s", "mean_queue_pkts", "utilization"]]
    return PanelResult(pd.concat([fluid, point[cols]], ignore_index=True), fct.reset_index(drop=True))


def _table(result: PanelResult) -> str:
    fct = result.fct
    first = fct[fct.size_class == aqm.SIZE_CLASSES[0][0]].set_index("marking")
    rows = [
        [
            m,
            f"{first.loc[m, 'utilization']:.3f}",
            f"{first.loc[m, 'mean_queue_pkts']:.1f}",
            f"{first.loc[m, 'p50_s'] * 1e6:.0f}" if first.loc[m, "count"] else "no small flow finished",
            int(first.loc[m, "count"]),
        ]
        for m in first.index
    ]
    header = ["marking", "utilization", "mean queue (pkts)", "small-flow p50 FCT (µs)", "small flows"]
    return html_table(header, rows)


def pred_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    controls = param_controls(
        "pred-dumbbell-fct",
        CONTROLS,
        START,
        n_long_flows={"sentinel": (0, "0 (none)")},  # 0 and the 1-2-5 stops up to the Param's maximum
        min_k_pkts={"sentinel": (0.0, "0")},  # a ramp from the empty queue, then 1-2-5 stops
        rtt_s={"shown_in": (1e6, "us")},
    )
    by_name = {c.param_name: c for c in controls}
    load, min_k, max_k = by_name["load"], by_name["min_k_pkts"], by_name["max_k_pkts"]
    info = W.HTML()
    fig_fluid = FigurePane()
    fig_fct = FigurePane()

    def update(*_):
        out = panel_model(**param_values(controls))
        redraw(fig_fluid, viz.queue_vs_concurrency(out.sweep))
        if out.fct["count"].sum():
            redraw(fig_fct, viz.fct_by_class(out.fct, title="Packet level: FCT by size class"))
        else:  # a light load over the window: no web-search flow arrived after the warm-up
            clear(fig_fct, "no web-search flow measured at this load")
        info.value = _table(out)

    def clamp_thresholds(*_):
        # the static ramp starts below its end: min K moves to its largest stop under max K
        if min_k.value >= max_k.value:
            min_k.value = max(v for _, v in min_k.options if v < max_k.value)

    max_k.observe(clamp_thresholds, "value")
    min_k.observe(clamp_thresholds, "value")
    for w in controls:
        w.observe(update, "value")
    update()
    return panel(
        controls,
        [fig_fluid, fig_fct],
        info=info,
        fidelity="workbench.widgets.aqm:pred_panel",
        fidelity_controls={"load": load},
    )
