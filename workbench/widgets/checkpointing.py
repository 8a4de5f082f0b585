"""Checkpointing panel for notebook 12: model size, job size and the storage bandwidths -> each method's stall,
save and load time, and ETTR vs checkpoint interval with each method's optimum.

Every number is a point of the ``checkpoint`` experiment (:func:`workbench.experiments.run_point` at the optimal
interval, and its sweep over ``interval_s`` for the curve), so the panel shows the experiment's own rows."""

from __future__ import annotations

import math

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import experiments as ex
from .._units import number_text
from ..training.checkpointing import METHODS
from ..viz import checkpointing as vc
from . import FigurePane, html_table, panel, param_control, param_controls, param_values, redraw

__all__ = ["checkpoint_panel", "panel_model", "gpu_stops", "CONTROLS", "INTERVALS"]

#: The ``checkpoint`` parameters the panel controls besides the job size.
CONTROLS = ("params_b", "node_gbps", "aggregate_gbps", "serialise_gbps")
#: Intervals of the ETTR curve (s): the ``checkpoint`` experiment swept over ``interval_s``.
INTERVALS = tuple(float(t) for t in np.geomspace(5, 20_000, 40))


def gpu_stops(experiment="checkpoint") -> list[int]:
    """The job sizes the panel offers: the experiment's default layout (``tp x pp``) with a data parallelism of
    ``reshard_tp x 2^k`` (the experiment needs ``dp`` to be a multiple of ``reshard_tp``: the resharded load keeps the
    job's GPUs), within the ``gpus`` parameter's range. The log ``Param`` cannot state "multiples of tp x pp".

    Examples
    --------
    >>> gpu_stops()[:3], gpu_stops()[-1]
    ([256, 512, 1024], 524288)
    """
    exp = ex.get(experiment)
    gpus = exp.param("gpus")
    unit = exp.param("tp").default * exp.param("pp").default * exp.param("reshard_tp").default
    top = int(math.floor(math.log2(gpus.high / unit)))
    return [unit * 2**k for k in range(top + 1) if unit * 2**k >= gpus.low]


def panel_model(**values) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The panel's numbers: one ``checkpoint`` row per method at ``values`` (at the ETTR-optimal interval), and
    each method's ETTR over :data:`INTERVALS` (the experiment swept over ``interval_s``; ``interval_s`` and ``ettr``
    columns, sorted by method and interval).

    Examples
    --------
    >>> rows, curve = panel_model(params_b=70.0, gpus=1024)
    >>> rows.method.tolist(), bool((curve.ettr > 0).all()), len(curve)
    (['bytecheckpoint', 'dcp', 'mcp'], True, 120)
    """
    rows = pd.concat([ex.run_point("checkpoint", {**values, "method": m}) for m in METHODS], ignore_index=True)
    curve = ex.sweep("checkpoint", {**values, "method": list(METHODS), "interval_s": list(INTERVALS)}, client=False,
                     progress=False)  # fmt: skip
    return rows, curve.sort_values(["method", "interval_s"], ignore_index=True)


def checkpoint_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    exp = ex.get("checkpoint")
    controls = [param_control(exp.param("gpus"), stops=gpu_stops(exp)), *param_controls(exp, CONTROLS)]
    info = W.HTML()
    fig = FigurePane()

    def update(*_):
        rows, curve = panel_model(**param_values(controls))
        opt = rows.assign(interval_s=rows.optimal_interval_s)[["method", "interval_s", "ettr"]]
        redraw(fig, vc.ettr_vs_interval(curve, opt), height=340)
        info.value = html_table(
            ["method", "stall / save", "save until durable", "load (same / 2x TP)", "optimal interval", "ETTR"],
            [[vc.NAMES[r.method], f"{number_text(r.stall_s)} s", f"{number_text(r.save_s)} s",
              f"{number_text(r.load_s)} s / {number_text(r.reshard_load_s)} s", f"{r.optimal_interval_s:.0f} s", f"{r.ettr:.4f}"]
             for r in rows.itertuples()],
            caption="Llama 3's failure rates; each method at its own ETTR-optimal interval (diamonds)",
        )  # fmt: skip

    for c in controls:
        c.observe(update, "value")
    update()
    return panel(controls, [fig], info=info, fidelity="workbench.widgets.checkpointing:checkpoint_panel")
