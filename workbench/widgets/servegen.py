"""Panel for ServeGen: compose a per-client workload and its naive twin, serve both, compare TTFT and capacity.

Controls (the ``servegen-serving`` experiment's parameters, :mod:`workbench.experiments.serving`): model, day and
hour, span, mean aggregate rate (the data's own rate curve over the span, scaled to that mean), client filter (the
busiest *k* clients), SLO and the server's cost parameters (each starting at the model's default server). Every change
reads the experiment's point for the composed and for the naive workload (composing, ~10-50 ms, and serving on the
linear-cost server, a few hundred ms, when not cached) and updates the two figures; the "capacity" button reads the
``serving-capacity`` points of both workloads at the same settings (the capacity search, about a second). The day
slider follows the model's number of days (``MODELS``) and the top-k slider its number of clients (the point's
``pool_clients``), so every setting is a point the experiment runs.
"""

from __future__ import annotations

import math

import ipywidgets as W
import plotly.graph_objects as go

from .. import experiments as ex
from ..viz import servegen as fig_sg
from ..workloads.servegen import MODELS
from . import FigurePane, clear, html_table, load_note, panel, param_controls, param_values, redraw

__all__ = ["ServeGenPanel", "servegen_panel"]

EXPERIMENT = "servegen-serving"
#: The experiment's parameters the panel controls, in the order shown.
CONTROLS = (
    "model",
    "day",
    "hour",
    "span_s",
    "mean_rate_rps",
    "top_clients",
    "ttft_slo_s",
    "prefill_us_per_token",
    "decode_us_per_seq",
    "kv_budget_tokens",
)
#: The server's parameters: 0 stands for the model's default server's value (its control says which).
SERVER = {
    "prefill_us_per_token": "server_prefill_us_per_token",
    "decode_us_per_seq": "server_decode_us_per_seq",
    "kv_budget_tokens": "server_kv_budget_tokens",
}
#: The two workloads compared (``workload`` choices of the experiment).
SHOWN = ("composed", "naive")


class ServeGenPanel:
    """Controls wired to the ``servegen-serving`` and ``serving-capacity`` experiments' points."""

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
        exp = ex.get(EXPERIMENT)
        values = {"model": model, "hour": hour, "span_s": float(span_s), "mean_rate_rps": mean_rate_rps}
        sentinels = {name: {"sentinel": (0, "model's")} for name in SERVER}
        self.controls = param_controls(exp, CONTROLS, {**values, "ttft_slo_s": ttft_slo_s}, **sentinels)
        (self.model, self.day, self.hour, self.span, self.mean_rate, self.top, self.slo, self.prefill, self.decode,
         self.kv) = self.controls  # fmt: skip
        self.every_client = exp.param("top_clients").default  # keeps every client of any pool
        self.button = W.Button(description="search capacity")
        self.stats = W.HTML()
        self.capacity = W.HTML()
        self.timeline = FigurePane()
        self.ttft = FigurePane()
        self._sync_model()
        self.update()
        redrawing = self.controls[1:]
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

    # ---- the experiments' points
    def point(self, workload: str = "composed") -> dict:
        """The ``servegen-serving`` point of the current settings for ``workload`` (every client when the top-k
        slider is at its end: the parameter's default)."""
        point = {**param_values(self.controls), "workload": workload}
        if self.top.value >= self.top.max:
            point["top_clients"] = self.every_client
        return point

    def rows(self, workload: str = "composed"):
        """The experiment's rows for ``workload`` at the current settings."""
        return ex.run_point(EXPERIMENT, self.point(workload), seed=self.seed)

    def _sync_model(self) -> None:
        """Bound the day and top-k sliders by the model's data and name its default server's costs; the server
        controls go back to that server (0)."""
        self._syncing = True
        try:
            self.day.max = MODELS[self.model.value][1] - 1
            for name in SERVER:
                getattr(self, _ATTR[name]).value = 0
            self.top.max = self.every_client
            self.top.value = self.every_client
            try:
                s = self._summary(self.rows())
            except ex.SweepError:  # a span in which the model's data is silent: update() says so, nothing to size
                s = None
            if s is not None:
                self.top.max = int(s.pool_clients)
                self.top.value = int(s.pool_clients)
            for name, column in SERVER.items():
                control = getattr(self, _ATTR[name])
                options = list(control.options)
                if s is None:
                    text = "model's"
                else:
                    own = float(s[column])
                    text = f"{own:,.0f}" if own.is_integer() else f"{own:g}"
                # the default server's own value, bare: a slider's readout shows about nine characters, and a
                # "150,000 (m-large)" was cut to "150,000 (m" (its tooltip names the model)
                options[0] = (text, options[0][1])
                doc = ex.get(EXPERIMENT).param(name).doc
                control.tooltip = f"{doc} (first stop: {self.model.value}'s default server)"
                control.options = options
                control.value = 0
        finally:
            self._syncing = False

    @staticmethod
    def _summary(rows):
        return rows[rows.kind == "summary"].iloc[0]

    def update(self) -> None:
        try:
            runs = {name: self.rows(name) for name in SHOWN}
        except ex.SweepError as exc:  # e.g. the selected clients are silent during the whole span
            self.stats.value = f"<b>{exc.reason}</b>"
            self.capacity.value = ""
            for pane in (self.timeline, self.ttft):
                clear(pane, "no workload at these settings (see above)")
            return
        table, timelines, curves, notes = [], {}, {}, ""
        for name, rows in runs.items():
            s = self._summary(rows)
            notes += load_note(s, int(s.requests), self.span.value, who=name)
            line = rows[rows.kind == "timeline"]
            timelines["naive (Poisson)" if name == "naive" else name] = (
                line.bin_start_s.to_numpy(),
                line.rate_rps.to_numpy(),
            )
            cdf = rows[rows.kind == "ttft"]
            curves[name] = (cdf.ttft_s.to_numpy(), cdf.fraction.to_numpy())
            ok = "meets" if s.meets_slo else "misses"
            table.append(
                [name, int(s.requests), _ttft(s.ttft_p50_s), _ttft(s.ttft_p99_s), f"{1000 * s.tbt_p50_s:.0f}", ok]
            )
        redraw(self.timeline, fig_sg.rate_timeline_figure(timelines, fig=go.Figure()), height=320)
        redraw(self.ttft, fig_sg.ttft_cdf_figure(curves, slo_s=self.slo.value, fig=go.Figure()), height=320)
        self.stats.value = notes + html_table(
            ["workload", "requests", "p50 TTFT (s)", "p99 TTFT (s)", "p50 TBT (ms)", "SLO"], table
        )
        self.capacity.value = ""

    def search_capacity(self) -> tuple[float, float]:
        """Capacity (req/s) of one replica under the composed and the naive workload: the ``serving-capacity``
        points at the current settings."""
        capacity = ex.get("serving-capacity")
        names = {p.name for p in capacity.params}
        out = []
        for name in SHOWN:
            point = {k: v for k, v in self.point(name).items() if k in names}
            out.append(float(ex.run_point(capacity, point, seed=self.seed).capacity_rps.iloc[0]))
        return out[0], out[1]

    # ---- callbacks
    def _on_change(self, change) -> None:
        if not self._syncing:
            self.update()

    def _on_model(self, change) -> None:
        self._sync_model()
        self.update()

    def _on_capacity(self, button) -> None:
        try:
            c, n = self.search_capacity()
        except ex.SweepError as exc:
            self.capacity.value = f"capacity: not searched: <b>{exc.reason}</b>"
            return
        gap = 1 - c / n if n > 0 else float("nan")
        self.capacity.value = (
            f"capacity: composed <b>{c:.2f}</b> req/s, naive <b>{n:.2f}</b> req/s; "
            f"naive plan under-provisions by <b>{gap:.0%}</b>"
        )


#: The panel's attribute holding each server control.
_ATTR = {"prefill_us_per_token": "prefill", "decode_us_per_seq": "decode", "kv_budget_tokens": "kv"}


def _ttft(seconds: float) -> str:
    """A TTFT percentile for the summary table: seconds, or "never" where that share of requests was rejected (their
    context beyond the KV budget: no first token)."""
    return f"{seconds:.2f}" if math.isfinite(seconds) else "never (rejected)"


def servegen_panel(**kwargs) -> W.Widget:
    """Build the ServeGen panel and return its top-level widget (see :class:`ServeGenPanel`)."""
    return ServeGenPanel(**kwargs).widget
