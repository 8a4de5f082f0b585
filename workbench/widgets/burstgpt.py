"""Panel for the BurstGPT notebook: pick a trace, a model, a log type, a window length and a rate multiplier; see the
arrival rate (trace and its BurstGPT-style regeneration at that scale), per-window CV and Gamma shape, request-length
distribution with fits, and response vs request length.

Every control is a parameter of the ``burstgpt-trace-analysis`` experiment (:mod:`workbench.experiments.workloads`)
and every number a row of its point. The trace menu offers the traces on this machine (BurstGPT or its labelled
stand-in, and the real traces whose files are on the data search path), the model and log-type menus what the chosen
trace has (the point's ``menu`` rows), and a selection too small to fit is reported in the status line.
"""

from __future__ import annotations

from types import SimpleNamespace

import ipywidgets as W
import plotly.graph_objects as go

from .. import data
from .. import experiments as ex
from .._units import number_text
from ..experiments.workloads import ALL, BURSTGPT
from ..viz import workloads as fig_wl
from ..workloads.trace_analysis import BURSTGPT_FILES, REAL_TRACES
from . import FigurePane, clear, panel, param_controls, param_values, redraw

__all__ = ["BurstGPTPanel", "burstgpt_panel"]

EXPERIMENT = "burstgpt-trace-analysis"
#: What the trace menu shows for BurstGPT: its own files, or the stand-in generated from the paper's parameters.
STAND_IN_LABEL = "BurstGPT stand-in (generated)"


class BurstGPTPanel:
    """Controls wired to the ``burstgpt-trace-analysis`` experiment; ``.widget`` is what a notebook shows."""

    def __init__(self, scale: str = "quick", window_min: int = 20, rate_scale: float = 1.0, seed: int = 0) -> None:
        self.scale = scale
        self.seed = seed
        exp = ex.get(EXPERIMENT)
        burstgpt = BURSTGPT if any(data.find(f) is not None for f in BURSTGPT_FILES) else STAND_IN_LABEL
        (self.source,) = param_controls(exp, ["trace"], trace={"labels": {BURSTGPT: burstgpt}})
        here = [o for o in self.source.options if o[1] == BURSTGPT or data.find(REAL_TRACES[o[1]]) is not None]
        self.source.options = here  # the traces on this machine
        self.model = W.Dropdown(options=[ALL], description=exp.param("model").title)
        self.log_type = W.Dropdown(options=[ALL], description=exp.param("log_type").title)
        self.window, self.rate_scale = param_controls(
            exp, ["window_s", "rate_scale"], {"window_s": 60.0 * window_min, "rate_scale": rate_scale}
        )
        self.controls = [self.source, self.model, self.log_type, self.window, self.rate_scale]
        self.status = W.HTML()
        self.rate = FigurePane()
        self.windows = FigurePane()
        self.lengths = FigurePane()
        self.rr = FigurePane()
        self._syncing = False
        self.rows = None
        self.update()
        self._refresh_menus()
        self.source.observe(self._on_source, names="value")
        for c in (self.model, self.log_type, self.window, self.rate_scale):
            c.observe(self._on_change, names="value")
        self.widget = panel(
            self.controls,
            {"Arrival rate": [self.rate, self.windows], "Lengths": [self.lengths, self.rr]},
            info=self.status,
            fidelity="workbench.widgets.burstgpt:burstgpt_panel",
        )

    def point(self) -> dict:
        """The experiment's point at the current settings."""
        values = param_values([self.source, self.window, self.rate_scale])
        return {**values, "scale": self.scale, "model": self.model.value, "log_type": self.log_type.value}

    def _refresh_menus(self) -> None:
        """The model and log-type menus of the chosen trace (the point's ``menu`` rows), each at every value."""
        rows = self.rows
        if rows is None:
            return
        self._syncing = True
        try:
            for control, menu in ((self.model, "model"), (self.log_type, "log_type")):
                values = rows.loc[(rows.kind == "menu") & (rows.menu == menu), "value"].tolist()
                control.options = [ALL, *values] if len(values) > 1 else [ALL]
                control.value = ALL
        finally:
            self._syncing = False

    def _on_change(self, _change) -> None:
        if not self._syncing:
            self.update()

    def _on_source(self, _change) -> None:
        self._syncing = True
        try:
            self.model.options, self.log_type.options = [ALL], [ALL]
        finally:
            self._syncing = False
        self.update()
        self._refresh_menus()

    def update(self) -> None:
        """Read the point for the current controls and redraw the figures in place."""
        try:
            rows = ex.run_point(EXPERIMENT, self.point(), seed=self.seed)
        except ex.SweepError as exc:
            self.rows = None
            self.status.value = f"<b>cannot analyze this selection</b>: {exc.reason}"
            for pane in (self.rate, self.windows, self.lengths, self.rr):
                clear(pane, "this selection cannot be analyzed")
            return
        self.rows = rows
        s = rows[rows.kind == "summary"].iloc[0]
        name, window_s = self.source.label, self.window.value
        label = "<i>stand-in generated from the paper's parameters, not BurstGPT data</i><br>" if s.stand_in else ""
        self.status.value = (
            f"{label}<b>{int(s.requests):,}</b> requests, {number_text(s.rate_rps)} req/s; gap CV {s.gap_cv:.2f}, "
            f"IDC(60 s) {s.idc_60s:.2f}<br>median Gamma shape {s.median_shape:.2f} "
            f"({s.share_windows_shape_lt_1:.0%} of windows < 1, Gamma better in {s.share_gamma_better:.0%})<br>"
            f"Zipf exponent {s.zipf_alpha:.2f}; response ~ request^{s.response_slope:.2f} "
            f"(Spearman {s.spearman:.2f})<br>generated x{self.rate_scale.value:g}: {int(s.generated_requests):,} "
            f"requests over {s.generated_span_s / 3600:.2f} h"
        )
        series = rows[rows.kind == "series"]
        by_series = {k: g[["start_s", "rate_per_s"]] for k, g in series.groupby("series", sort=False)}
        fits = rows[rows.kind == "fits"][["start_s", "cv", "shape"]]
        tail = rows[rows.kind == "length"]
        fitted = rows[rows.kind == "length_fit"]
        length = {
            "values": tail.length.to_numpy(),
            "ccdf": tail.ccdf.to_numpy(),
            "grid": fitted.length[fitted.fit == fitted.fit.iloc[0]].to_numpy(),
            "fits": {k: g.ccdf.to_numpy() for k, g in fitted.groupby("fit", sort=False)},
        }
        bins = rows[rows.kind == "request_response"].dropna(axis=1, how="all")
        binned = SimpleNamespace(table=bins.reset_index(drop=True), spearman=float(s.spearman))
        redraw(self.rate, fig_wl.arrivals_over_time(by_series, fig=go.Figure()), height=340)
        redraw(self.windows, fig_wl.window_fits({name: fits}, window_s=window_s, fig=go.Figure()), height=340)
        lengths = fig_wl.length_ccdf({name: length}, title="Request lengths", fig=go.Figure())
        redraw(self.lengths, lengths, height=340)
        redraw(self.rr, fig_wl.request_response({name: binned}, fig=go.Figure()), height=340)


def burstgpt_panel(**defaults) -> W.VBox:
    """Build the BurstGPT panel and return its top-level widget (see :class:`BurstGPTPanel` for the defaults)."""
    return BurstGPTPanel(**defaults).widget
