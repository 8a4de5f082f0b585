"""PRED / RED panel: concurrency, load, RTT, thresholds or slope, controllers on/off -> fluid sweep and packet FCT.

The panel follows the widgets pattern: :func:`panel_model` runs the registered experiments through
:func:`workbench.experiments.sweep` (serially: a fluid curve of ``pred-queue-vs-concurrency`` and one
``pred-dumbbell-fct`` run per marking, cached, so returning to a setting is instant) and returns tidy results; the
figures come from :mod:`workbench.viz.aqm` and are updated with :func:`~workbench.widgets.redraw`.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import aqm
from .. import experiments as ex
from ..viz import aqm as viz
from . import FigurePane, html_table, panel, redraw

__all__ = ["PanelResult", "pred_panel", "panel_model"]

#: Concurrency points of the fluid curve.
N_GRID = np.unique(np.geomspace(1, 64, 24).astype(int))


@dataclass(frozen=True)
class PanelResult:
    """What the panel shows: ``sweep`` (``marking, model, n_flows, queue_pkts, utilization``: the fluid curve plus
    the packet run's point) and ``fct`` (the packet runs: ``marking, size_class, count, unfinished, p50_s, p99_s,
    mean_queue_pkts, utilization``)."""

    sweep: pd.DataFrame
    fct: pd.DataFrame


def panel_model(
    n_flows: int,
    load: float,
    rtt_us: float,
    min_k: float,
    max_k: float,
    max_p: float,
    slope_per_pkt: float,
    fcs: bool,
    qla: bool,
    duration_s: float = 0.15,
    seed: int = 0,
) -> PanelResult:
    """The panel's model call: fluid queue vs concurrency and one packet run per marking (a second or two).

    ``duration_s`` is long enough that even the lowest load of the panel brings several small web-search flows
    after the warm-up (a fifth of it), so the table's small-flow FCT is a measurement, not NaN.

    Examples
    --------
    >>> r = panel_model(4, 0.3, 100.0, 20, 200, 0.1, 0.01, True, True, duration_s=0.005)
    >>> r.fct.marking.unique().tolist()
    ['static', 'pred']
    """
    marking = {
        "marking": ["static", "pred"],
        "min_k_pkts": float(min_k),
        "max_k_pkts": float(max_k),
        "max_p": float(max_p),
        "slope_per_pkt": float(slope_per_pkt),
        "fcs": bool(fcs),
        "qla": bool(qla),
        "rtt_s": rtt_us * 1e-6,
    }
    cols = ["marking", "model", "n_flows", "queue_pkts", "utilization"]
    fluid = ex.sweep(
        "pred-queue-vs-concurrency",
        {"n_flows": N_GRID.tolist(), "model": "fluid", **marking},
        base_seed=seed,
        client=False,
        cache=False,
        progress=False,
    )[cols]
    fct = ex.sweep(
        "pred-dumbbell-fct",
        {"n_long_flows": int(n_flows), "load": float(load), "duration_s": float(duration_s), **marking},
        base_seed=seed,
        client=False,
        progress=False,
    )
    point = (
        fct.groupby("marking", sort=False)[["mean_queue_pkts", "utilization"]]
        .first()
        .reset_index()
        .assign(model="packet", n_flows=int(n_flows))
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
    n_flows = W.IntSlider(value=8, min=1, max=64, description="long flows")
    load = W.FloatSlider(value=0.3, min=0.1, max=0.8, step=0.05, description="short load")
    rtt = W.FloatSlider(value=100.0, min=20.0, max=400.0, step=10.0, description="RTT (µs)")
    min_k = W.FloatSlider(value=20.0, min=0.0, max=150.0, step=5.0, description="static minK")
    max_k = W.FloatSlider(value=200.0, min=160.0, max=800.0, step=10.0, description="static maxK")
    max_p = W.FloatSlider(value=0.1, min=0.01, max=1.0, step=0.01, description="static maxP")
    slope = W.FloatLogSlider(value=0.01, base=10, min=-3, max=-0.5, step=0.1, description="PRED slope/flow")
    fcs = W.Checkbox(value=True, description="FCS (slope x flows)")
    qla = W.Checkbox(value=True, description="QLA (utility hill-climb)")
    info = W.HTML()
    fig_fluid = FigurePane()
    fig_fct = FigurePane()

    def update(*_):
        out = panel_model(
            n_flows.value,
            load.value,
            rtt.value,
            min_k.value,
            max_k.value,
            max_p.value,
            slope.value,
            fcs.value,
            qla.value,
        )
        redraw(fig_fluid, viz.queue_vs_concurrency(out.sweep))
        redraw(fig_fct, viz.fct_by_class(out.fct, title="Packet level: FCT by size class"))
        info.value = _table(out)

    def clamp_thresholds(*_):
        if min_k.value >= max_k.value:
            min_k.value = max_k.value - 10.0

    max_k.observe(clamp_thresholds, "value")
    min_k.observe(clamp_thresholds, "value")
    for w in (n_flows, load, rtt, min_k, max_k, max_p, slope, fcs, qla):
        w.continuous_update = False
        w.observe(update, "value")
    update()
    return panel(
        [n_flows, load, rtt, min_k, max_k, max_p, slope, fcs, qla],
        [fig_fluid, fig_fct],
        info=info,
        fidelity="workbench.widgets.aqm:pred_panel",
        fidelity_controls={"load": load},
    )
