"""Panel for serving on real hardware: a model on GPUs, a scheduler, a workload; latencies, the bound, GPUs needed.

Controls (the ``serving-hardware`` experiment's parameters, :mod:`workbench.experiments.serving_hw`): model and GPU
(from the spec tables), tensor-parallel degree, the serving engine (its host work per step, ``engines.csv``), where
operator costs come from (measured curves, Vidur's profiles, stated constants), the scheduler (vLLM, Sarathi-Serve,
Orca) and its token budget, overlapped execution (NanoFlow), prefill/decode disaggregation (one prefill and one decode
replica), the workload (a ServeGen model's composed traffic or its naive Poisson twin, at a mean rate) and the SLO
(``serving-hardware-gpus``'s). Every change serves the workload on one replica (well under a second once compiled):
the TTFT and TBT CDFs are the point's ``serving-hardware-requests`` rows, the summary its ``serving-hardware`` row
(throughput against NanoFlow's optimal bound, the resource that binds; a model too large for the chosen TP is
reported, not simulated). The "GPUs needed" button reads the ``serving-hardware-gpus`` point: the capacity search
over TP and replicas (a few seconds).
"""

from __future__ import annotations

import ipywidgets as W

from .. import experiments as ex
from ..viz import serving_hw as viz
from . import FigurePane, clear, load_note, panel, param_controls, param_values, redraw

__all__ = ["ServingHardwarePanel", "serving_hardware_panel", "COST_LABELS"]

#: What the operator-cost menu shows for each of the ``costs`` choices.
COST_LABELS = {"curves": "measured curves", "profiled": "Vidur's profiles", "stated": "stated constants"}
#: The ``serving-hardware`` parameters the panel controls, in the order shown (before the SLO and the two switches).
SERVED = ("model", "gpu", "tp", "engine", "costs", "scheduler", "budget_tokens", "source", "workload", "mean_rate_rps")


class ServingHardwarePanel:
    """Controls wired to the ``serving-hardware`` experiments' points (:func:`workbench.experiments.run_point`)."""

    def __init__(
        self,
        model: str = "Llama-3.1-8B",
        gpu: str = "H100-SXM",
        tp: int = 1,
        scheduler: str = "sarathi",
        source: str = "m-large",
        rate_rps: float = 10.0,
        span_s: int = 600,
        seed: int = 0,
    ) -> None:
        self.seed = seed
        self.span_s = span_s
        exp = ex.get("serving-hardware")
        values = {"model": model, "gpu": gpu, "tp": tp, "scheduler": scheduler, "source": source}
        served = param_controls(exp, SERVED, {**values, "mean_rate_rps": rate_rps}, costs={"labels": COST_LABELS})
        (self.model, self.gpu, self.tp, self.engine, self.costs, self.scheduler, self.budget, self.source,
         self.workload, self.rate) = served  # fmt: skip
        self.ttft_slo, self.tbt_slo = param_controls("serving-hardware-gpus", ["ttft_slo_s", "tbt_slo_s"])
        self.overlap, self.disagg = param_controls(exp, ["overlap", "disaggregated"])
        self.disagg.tooltip = "one prefill replica and one decode replica"
        self.served = [*served, self.overlap, self.disagg]
        self.button = W.Button(description="GPUs needed")
        self.stats = W.HTML()
        self.plan = W.HTML()
        self.ttft = FigurePane()
        self.tbt = FigurePane()
        self.update()
        for c in (*self.served, self.ttft_slo, self.tbt_slo):
            c.observe(self._on_change, names="value")
        self.button.on_click(self._on_plan)
        self.widget = panel(
            [*served, self.ttft_slo, self.tbt_slo, self.overlap, self.disagg, self.button],
            [self.ttft, self.tbt],
            info=W.VBox([self.stats, self.plan]),
            fidelity="workbench.widgets.serving_hw:serving_hardware_panel",
            fidelity_controls={"model": self.model, "gpu": self.gpu, "tp": self.tp, "engine": self.engine,
                               "costs": self.costs},
        )  # fmt: skip

    # ---- the experiments' points
    def point(self) -> dict:
        """The ``serving-hardware`` point of the current settings (the panel's span of traffic)."""
        return {**param_values(self.served), "duration_s": float(self.span_s)}

    def rows(self):
        """(``serving-hardware`` row, ``serving-hardware-requests`` rows) of the current settings."""
        point = self.point()
        row = ex.run_point("serving-hardware", point, seed=self.seed).iloc[0]
        return row, ex.run_point("serving-hardware-requests", point, seed=self.seed)

    def update(self) -> None:
        try:
            row, requests = self.rows()
        except ex.SweepError as exc:  # does not fit (by how much), or costs not covered: said, not drawn
            self.stats.value = f"<b>{exc.reason}</b>"
            self.plan.value = ""
            for pane in (self.ttft, self.tbt):
                clear(pane, "this deployment does not run (see above)")
            return
        name, ttft, tbt = self.workload.value, requests["ttft_s"].to_numpy(), requests["tbt_s"].to_numpy()
        redraw(self.ttft, viz.latency_cdf_figure({name: ttft}, metric="TTFT", slo_s=self.ttft_slo.value))
        redraw(self.tbt, viz.latency_cdf_figure({name: tbt}, metric="TBT", slo_s=self.tbt_slo.value))
        self.stats.value = load_note(row, int(row.requests), self.span_s) + (
            f"{row.requests:,} requests, KV cache {row.kv_capacity_tokens:,} tokens, {row.preemptions} "
            f"preemptions<br>p99 TTFT {row.ttft_p99_s:.2f} s, p99 TBT {1000 * row.tbt_p99_s:.0f} ms<br>throughput "
            f"{row.output_tokens_per_s_per_gpu:,.0f} output tokens/s per GPU; optimal bound "
            f"{row.optimal_tokens_per_s:,.0f} ({row.bound}-bound at batch {row.bound_batch:.0f})"
        )
        self.plan.value = ""

    def gpus_needed(self):
        """The ``serving-hardware-gpus`` row of the current workload and SLO (the search over TP and replicas)."""
        exp = ex.get("serving-hardware-gpus")
        values = {**self.point(), **param_values([self.ttft_slo, self.tbt_slo])}
        point = {p.name: values[p.name] for p in exp.params if p.name in values}
        return ex.run_point(exp, point, seed=self.seed).iloc[0]

    # ---- callbacks
    def _on_change(self, change) -> None:
        if change["owner"] is self.overlap and change["new"] and self.engine.value != "nanoflow":
            self.engine.value = "nanoflow"  # overlapped execution is NanoFlow's engine (redraws through its observer)
            return
        self.update()

    def _on_plan(self, button) -> None:
        try:
            plan = self.gpus_needed()
        except ex.SweepError as exc:  # the deployment does not run (said above): no plan to search
            self.plan.value = f"GPUs needed: not searched: <b>{exc.reason}</b>"
            return
        if not plan.feasible:
            self.plan.value = "<b>no TP degree meets the SLO</b>"
            return
        self.plan.value = f"<b>{plan.gpus:.0f} GPUs</b>: {plan.replicas:.0f} replicas of TP {plan.best_tp} ({plan.slo})"


def serving_hardware_panel(**kwargs) -> W.Widget:
    """Build the panel and return its top-level widget (see :class:`ServingHardwarePanel`)."""
    return ServingHardwarePanel(**kwargs).widget
