"""Checkpointing panel for notebook 12: model size, job size and the storage bandwidths -> each method's stall,
save and load time, and ETTR vs checkpoint interval with each method's optimum (the ``checkpoint`` experiment's
numbers)."""

from __future__ import annotations

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import experiments as ex
from ..experiments.checkpointing import storage_of
from ..training import checkpointing as ck
from ..viz import checkpointing as vc
from . import FigurePane, html_table, panel, param_controls, param_values, redraw

__all__ = ["checkpoint_panel", "panel_model", "CONTROLS", "GPU_STOPS"]

#: The ``checkpoint`` parameters the panel controls besides the job size.
CONTROLS = ("params_b", "node_gbps", "aggregate_gbps", "serialise_gbps")
#: Job sizes offered (multiples of the default tp x pp = 128).
GPU_STOPS = (1024, 2048, 4096, 8192, 16384)
#: Intervals of the ETTR curve (s).
INTERVALS = np.geomspace(5, 20_000, 40)


def panel_model(**values) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The panel's model call: one ``checkpoint`` row per method at ``values`` (the experiment's own numbers), and
    each method's ETTR over :data:`INTERVALS`.

    Examples
    --------
    >>> rows, curve = panel_model(params_b=70.0, gpus=1024)
    >>> rows.method.tolist(), bool((curve.ettr > 0).all())
    (['bytecheckpoint', 'dcp', 'mcp'], True)
    """
    exp = ex.get("checkpoint")
    p = {**exp.defaults(), **values}
    rows = pd.concat([ex.run_point("checkpoint", {**values, "method": m}, cache=False) for m in ck.METHODS],
                     ignore_index=True)  # fmt: skip
    st = storage_of(**p)
    curve = ck.ettr_curve(p["params_b"] * 1e9, p["gpus"], INTERVALS, ck.METHODS, st, tp=p["tp"], pp=p["pp"])
    return rows, curve


def checkpoint_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    gpus = W.SelectionSlider(options=list(GPU_STOPS), value=1024, description="GPUs", continuous_update=False)
    gpus.param_name = "gpus"
    controls = [gpus, *param_controls("checkpoint", CONTROLS)]
    info = W.HTML()
    fig = FigurePane()

    def update(*_):
        rows, curve = panel_model(**param_values(controls))
        opt = rows.assign(interval_s=rows.optimal_interval_s)[["method", "interval_s", "ettr"]]
        redraw(fig, vc.ettr_vs_interval(curve, opt), height=340)
        info.value = html_table(
            ["method", "stall / save", "save until durable", "load (same / 2x TP)", "optimal interval", "ETTR"],
            [[vc.NAMES[r.method], f"{r.stall_s:.3g} s", f"{r.save_s:.3g} s",
              f"{r.load_s:.3g} s / {r.reshard_load_s:.3g} s", f"{r.optimal_interval_s:.0f} s", f"{r.ettr:.4f}"]
             for r in rows.itertuples()],
            caption="Llama 3's failure rates; each method at its own ETTR-optimal interval (diamonds)",
        )  # fmt: skip

    for c in controls:
        c.observe(update, "value")
    update()
    return panel(controls, [fig], info=info, fidelity="workbench.widgets.checkpointing:checkpoint_panel")
