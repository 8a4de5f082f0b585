"""Panel for the BurstGPT notebook: pick a trace, a model, a log type, a window length and a rate multiplier; see the
arrival rate (trace and its BurstGPT-style regeneration at that scale), per-window CV and Gamma shape, request-length
distribution with fits, and response vs request length.

Every control is constrained to valid values: the sources are those on this machine (BurstGPT or its labelled
stand-in, Azure code and conversation, Mooncake conversation), the model and log-type menus list what the chosen
trace has, and a selection too small to fit is reported in the status line instead of raising.
"""

from __future__ import annotations

import ipywidgets as W
import plotly.graph_objects as go

from ..viz import workloads as fig_wl
from ..workloads import trace_analysis as ta
from . import FigurePane, clear, panel, redraw

__all__ = ["BurstGPTPanel", "burstgpt_panel"]

_ALL = "(all)"


class BurstGPTPanel:
    """Controls wired to :func:`workbench.workloads.trace_analysis.analyze`; ``.widget`` is what a notebook shows."""

    def __init__(self, scale: str = "quick", window_min: int = 20, rate_scale: float = 1.0, seed: int = 0) -> None:
        self.scale = scale
        self.seed = seed
        self.traces = self._traces()
        self.source = W.Dropdown(options=list(self.traces), description="trace")
        self.model = W.Dropdown(options=[_ALL], description="model")
        self.log_type = W.Dropdown(options=[_ALL], description="log type")
        self.window = W.IntSlider(value=window_min, min=5, max=60, step=5, description="window (min)")
        self.rate_scale = W.FloatLogSlider(value=rate_scale, base=2, min=-2, max=3, step=0.25, description="rate scale")
        self.status = W.HTML()
        self.rate = FigurePane()
        self.windows = FigurePane()
        self.lengths = FigurePane()
        self.rr = FigurePane()
        self._refresh_menus()
        self.update()
        self.source.observe(self._on_source, names="value")
        for c in (self.model, self.log_type, self.window, self.rate_scale):
            c.observe(lambda _change: self.update(), names="value")
        self.widget = panel(
            [self.source, self.model, self.log_type, self.window, self.rate_scale],
            {"Arrival rate": [self.rate, self.windows], "Lengths": [self.lengths, self.rr]},
            info=self.status,
            fidelity="workbench.widgets.burstgpt:burstgpt_panel",
        )

    def _traces(self) -> dict:
        out = {ta.burstgpt_label(self.scale): ta.burstgpt_trace(self.scale)}
        for name in ta.REAL_TRACES:
            df = ta.real_trace(name)
            if df is not None:
                out[name] = df
        return out

    def _refresh_menus(self) -> None:
        df = self.traces[self.source.value]
        for control, col in ((self.model, "model"), (self.log_type, "log_type")):
            values = sorted(map(str, df[col].dropna().unique()))
            control.options = [_ALL, *values] if len(values) > 1 else [_ALL]
            control.value = _ALL

    def _on_source(self, _change) -> None:
        self._refresh_menus()
        self.update()

    def update(self) -> None:
        """Recompute for the current controls and redraw the figures in place."""
        df = ta.select(
            self.traces[self.source.value],
            model=None if self.model.value == _ALL else self.model.value,
            log_type=None if self.log_type.value == _ALL else self.log_type.value,
        )
        try:
            out = ta.analyze(df, window_s=60.0 * self.window.value, rate_scale=self.rate_scale.value, seed=self.seed)
        except ValueError as exc:
            self.status.value = f"<b>cannot analyze this selection</b>: {exc}"
            for pane in (self.rate, self.windows, self.lengths, self.rr):
                clear(pane, "this selection cannot be analyzed")
            return
        s, m = out.summary, out.model
        label = (
            "<i>stand-in generated from the paper's parameters, not BurstGPT data</i><br>"
            if df.attrs.get("stand_in")
            else ""
        )
        self.status.value = (
            f"{label}<b>{len(df):,}</b> requests, {s.rate_rps:.3g} req/s; gap CV {s.gap_cv:.2f}, "
            f"IDC(60 s) {s.idc_60s:.2f}<br>median Gamma shape {s.median_shape:.2f} "
            f"({s.share_windows_shape_lt_1:.0%} of windows < 1, Gamma better in {s.share_gamma_better:.0%})<br>"
            f"Zipf exponent {s.zipf_alpha:.2f}; response ~ request^{m.response_slope:.2f} "
            f"(Spearman {s.spearman_in_out:.2f})<br>generated x{self.rate_scale.value:g}: {len(out.generated):,} "
            f"requests over {out.generated['arrival_s'].iloc[-1] / 3600:.2f} h"
        )
        redraw(self.rate, fig_wl.arrivals_over_time(out.series, fig=go.Figure()), height=340)
        redraw(
            self.windows,
            fig_wl.window_fits({self.source.value: out.fits}, window_s=60.0 * self.window.value, fig=go.Figure()),
            height=340,
        )
        lengths = fig_wl.length_ccdf({self.source.value: out.length}, title="Request lengths", fig=go.Figure())
        redraw(self.lengths, lengths, height=340)
        redraw(self.rr, fig_wl.request_response({self.source.value: out.request_response}, fig=go.Figure()), height=340)


def burstgpt_panel(**defaults) -> W.VBox:
    """Build the BurstGPT panel and return its top-level widget (see :class:`BurstGPTPanel` for the defaults)."""
    return BurstGPTPanel(**defaults).widget
