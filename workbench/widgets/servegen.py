"""Panel for ServeGen: compose a per-client workload and its naive twin, serve both, compare TTFT and capacity.

Controls: model, day and hour, span, mean aggregate rate (the data's own rate curve over the span, scaled to that
mean: ``compose(mean_rate_rps=...)``), client filter (the busiest *k* clients), SLO and the server's
cost parameters. Every change recomposes the workload (~10-50 ms), serves the composed and the naive workload on the
linear-cost server (a few hundred ms) and updates the two figures in place; the "capacity" button runs the capacity
search for both workloads (about a second). Ranges are limited so that every setting is a valid model call (the day
slider follows the model's number of days, the top-k slider its number of clients).
"""

from __future__ import annotations

import dataclasses

import ipywidgets as W
import plotly.graph_objects as go

from ..distributions import ecdf
from ..serving import SLO, ServerConfig, capacity_search, latency_summary, serve
from ..serving.capacity import server_for
from ..serving.metrics import backlog
from ..viz import servegen as fig_sg
from ..workloads import servegen as sg
from ..workloads.servegen import stats as st
from . import FigurePane, clear, html_table, load_note, panel, redraw

__all__ = ["ServeGenPanel", "servegen_panel"]


class ServeGenPanel:
    """Controls wired to :func:`~workbench.workloads.servegen.compose` and :func:`~workbench.serving.serve`."""

    def __init__(
        self,
        model: str = "m-large",
        hour: int = 14,
        span_s: int = 1200,
        mean_rate_rps: float = 3.0,
        ttft_slo_s: float = 2.0,
        seed: int = 0,
    ) -> None:
        self.seed = seed
        self._syncing = False
        self.model = W.Dropdown(options=list(sg.MODELS), value=model, description="model")
        self.day = W.IntSlider(value=0, min=0, max=sg.MODELS[model][1] - 1, description="day")
        self.hour = W.IntSlider(value=hour, min=0, max=23, description="hour of day")
        self.span = W.Dropdown(options=[600, 1200, 1800, 3600], value=span_s, description="span (s)")
        self.mean_rate = W.FloatLogSlider(
            value=mean_rate_rps, base=10, min=-0.5, max=1.5, step=0.05, description="mean rate (req/s)"
        )
        self.top = W.IntSlider(value=1, min=1, max=1, description="busiest k clients")
        self.slo = W.FloatLogSlider(
            value=ttft_slo_s, base=10, min=-0.7, max=1.3, step=0.05, description="p99 TTFT SLO (s)"
        )
        cfg = server_for(model)
        self.prefill = W.FloatLogSlider(
            value=cfg.prefill_token_s * 1e6, base=10, min=0.5, max=2.7, step=0.05, description="prefill (µs/token)"
        )
        self.decode = W.FloatLogSlider(
            value=cfg.decode_seq_s * 1e6, base=10, min=1.0, max=3.3, step=0.05, description="decode (µs/seq/iter)"
        )
        self.kv = W.IntSlider(
            value=cfg.kv_budget_tokens // 1000, min=20, max=1000, step=10, description="KV budget (k tokens)"
        )
        self.button = W.Button(description="search capacity")
        self.stats = W.HTML()
        self.capacity = W.HTML()
        self.timeline = FigurePane()
        self.ttft = FigurePane()
        self._sync_model()
        self.update()
        redrawing = [
            self.day,
            self.hour,
            self.span,
            self.mean_rate,
            self.top,
            self.slo,
            self.prefill,
            self.decode,
            self.kv,
        ]
        for c in redrawing:
            c.observe(self._on_change, names="value")
        self.model.observe(self._on_model, names="value")
        self.button.on_click(self._on_capacity)
        self.widget = panel(
            [self.model, *redrawing, self.button],
            [self.timeline, self.ttft],
            info=W.VBox([self.stats, self.capacity]),
            fidelity="workbench.widgets.servegen:servegen_panel",
        )

    # ---- model calls
    def _sync_model(self) -> None:
        self._syncing = True
        try:
            self._sync_controls()
        finally:
            self._syncing = False

    def _sync_controls(self) -> None:
        pool = sg.load_pool(self.model.value)
        self.day.max = sg.MODELS[self.model.value][1] - 1
        self.top.max = pool.n_clients
        self.top.value = pool.n_clients
        cfg = server_for(self.model.value)
        self.prefill.value = cfg.prefill_token_s * 1e6
        self.decode.value = cfg.decode_seq_s * 1e6
        self.kv.value = cfg.kv_budget_tokens // 1000

    def config(self) -> ServerConfig:
        return dataclasses.replace(
            server_for(self.model.value),
            prefill_token_s=self.prefill.value * 1e-6,
            decode_seq_s=self.decode.value * 1e-6,
            kv_budget_tokens=self.kv.value * 1000,
        )

    def workloads(self):
        """The composed workload of the current settings and its naive twin."""
        start = self.day.value * 86400 + self.hour.value * 3600
        pool = sg.load_pool(self.model.value).select(start, self.span.value).filter(top=self.top.value)
        comp = sg.compose(
            pool, start_s=start, duration_s=self.span.value, mean_rate_rps=self.mean_rate.value, seed=self.seed
        )
        return comp, sg.naive_workload(comp, seed=self.seed)

    def update(self) -> None:
        try:
            comp, naive = self.workloads()
        except ValueError as exc:  # e.g. the selected clients are silent during the whole span
            self.stats.value = f"<b>{exc}</b>"
            self.capacity.value = ""
            for pane in (self.timeline, self.ttft):
                clear(pane, "no workload at these settings (see above)")
            return
        cfg = self.config()
        slo = SLO(ttft_s=self.slo.value)
        rows, curves, notes = [], {}, ""
        for name, w in (("composed", comp), ("naive", naive)):
            m = serve(w, cfg).table
            s = latency_summary(m)
            notes += load_note(backlog(m), len(m), self.span.value, who=name)
            curves[name] = ecdf(m["ttft_s"].where(~m["rejected"], float("inf")).to_numpy())
            ok = "meets" if s["ttft_p99_s"] <= slo.ttft_s else "misses"
            rows.append(
                [name, len(w), f"{s['ttft_p50_s']:.2f}", f"{s['ttft_p99_s']:.2f}", f"{1000 * s['tbt_p50_s']:.0f}", ok]
            )
        redraw(
            self.timeline,
            fig_sg.rate_timeline_figure(
                {
                    "composed": st.rate_timeline(comp["arrival_s"].to_numpy(), bin_s=10, duration_s=self.span.value),
                    "naive (Poisson)": st.rate_timeline(
                        naive["arrival_s"].to_numpy(), bin_s=10, duration_s=self.span.value
                    ),
                },
                fig=go.Figure(),
            ),
            height=320,
        )
        redraw(self.ttft, fig_sg.ttft_cdf_figure(curves, slo_s=slo.ttft_s, fig=go.Figure()), height=320)
        self.stats.value = notes + html_table(
            ["workload", "requests", "p50 TTFT (s)", "p99 TTFT (s)", "p50 TBT (ms)", "SLO"], rows
        )
        self.capacity.value = ""

    def search_capacity(self) -> tuple[float, float]:
        """Capacity (req/s) of one replica under the composed and the naive workload."""
        comp, naive = self.workloads()
        cfg, slo = self.config(), SLO(ttft_s=self.slo.value)
        span = self.span.value
        return (
            capacity_search(comp, cfg, slo, duration_s=span).capacity_rps,
            capacity_search(naive, cfg, slo, duration_s=span).capacity_rps,
        )

    # ---- callbacks
    def _on_change(self, change) -> None:
        if not self._syncing:
            self.update()

    def _on_model(self, change) -> None:
        self._sync_model()
        self.update()

    def _on_capacity(self, button) -> None:
        c, n = self.search_capacity()
        gap = 1 - c / n if n > 0 else float("nan")
        self.capacity.value = (
            f"capacity: composed <b>{c:.2f}</b> req/s, naive <b>{n:.2f}</b> req/s; "
            f"naive plan under-provisions by <b>{gap:.0%}</b>"
        )


def servegen_panel(**kwargs) -> W.Widget:
    """Build the ServeGen panel and return its top-level widget (see :class:`ServeGenPanel`)."""
    return ServeGenPanel(**kwargs).widget
