"""Panel for serving on real hardware: a model on GPUs, a scheduler, a workload; latencies, the bound, GPUs needed.

Controls: model and GPU (from the spec tables), tensor-parallel degree, the serving engine (its host work per step,
``engines.csv``), where operator costs come from (measured curves, Vidur's profiles, stated constants), scheduler
(vLLM, Sarathi-Serve, Orca),
overlapped execution (NanoFlow), prefill/decode disaggregation (one prefill and one decode replica), the workload (a ServeGen model's composed traffic or its naive Poisson twin, at a
mean rate) and the SLO. Every change serves the workload on one replica (well under a second) and redraws the TTFT
and TBT CDFs; the summary shows the throughput against NanoFlow's optimal bound, the resource that binds, and what
does not fit (a model too large for the chosen TP is reported, not simulated). The "GPUs needed" button runs
:func:`~workbench.serving.gpus.capacity_gpus` over TP in {1, 2, 4, 8} (a few seconds).
"""

from __future__ import annotations

import ipywidgets as W

from ..serving import SLO, Deployment, Scheduler, latency_summary, serve, specs
from ..serving.disagg import serve_disaggregated
from ..serving.engines import engines
from ..serving.gpus import capacity_gpus, optimal_throughput
from ..serving.metrics import backlog
from ..serving.roofline import COST_SOURCES
from ..viz import serving_hw as viz
from ..workloads import servegen as sg
from . import FigurePane, clear, load_note, panel, redraw

__all__ = ["ServingHardwarePanel", "serving_hardware_panel"]

WORKLOADS = ("composed", "naive")


class ServingHardwarePanel:
    """Controls wired to :class:`~workbench.serving.Deployment` and :func:`~workbench.serving.serve`."""

    def __init__(
        self,
        model: str = "Llama-3.1-8B",
        gpu: str = "H100-SXM",
        tp: int = 1,
        scheduler: str = "vllm",
        source: str = "m-large",
        rate_rps: float = 10.0,
        span_s: int = 600,
        seed: int = 0,
    ) -> None:
        self.seed = seed
        self.model = W.Dropdown(options=list(specs.models()["model"]), value=model, description="model")
        self.gpu = W.Dropdown(options=list(specs.gpus()["gpu"]), value=gpu, description="GPU")
        self.tp = W.Dropdown(options=[1, 2, 4, 8], value=tp, description="tensor parallel")
        self.scheduler = W.Dropdown(options=["vllm", "sarathi", "orca"], value=scheduler, description="scheduler")
        self.engine = W.Dropdown(options=list(engines()), value="vllm", description="engine")
        self.costs = W.Dropdown(
            options=[("measured curves", "curves"), ("Vidur's profiles", "profiled"), ("stated constants", "stated")],
            value="curves",
            description="operator costs",
        )
        assert {v for _, v in self.costs.options} == set(COST_SOURCES)
        self.overlap = W.Checkbox(value=False, description="overlapped (NanoFlow)")
        self.disagg = W.Checkbox(
            value=False, description="disaggregated", tooltip="one prefill replica and one decode replica"
        )
        self.source = W.Dropdown(
            options=[m for m, (kind, _) in sg.MODELS.items() if kind == "language"],
            value=source,
            description="ServeGen traffic",
        )
        # a menu, not toggle buttons: two buttons stacked in a grid cell took a row and a half of the 768 px screen
        self.workload = W.Dropdown(options=WORKLOADS, value="composed", description="workload")
        self.rate = W.FloatLogSlider(value=rate_rps, base=10, min=0, max=2, step=0.05, description="mean rate (req/s)")
        self.ttft_slo = W.FloatLogSlider(value=2.0, base=10, min=-1, max=1, step=0.05, description="p99 TTFT SLO (s)")
        self.tbt_slo = W.FloatLogSlider(value=0.1, base=10, min=-2, max=0, step=0.05, description="p99 TBT SLO (s)")
        self.span_s = span_s
        self.button = W.Button(description="GPUs needed")
        self.stats = W.HTML()
        self.plan = W.HTML()
        self.ttft = FigurePane()
        self.tbt = FigurePane()
        self.update()
        for c in (
            self.model,
            self.gpu,
            self.tp,
            self.scheduler,
            self.engine,
            self.costs,
            self.overlap,
            self.disagg,
            self.source,
            self.workload,
            self.rate,
            self.ttft_slo,
            self.tbt_slo,
        ):
            c.observe(self._on_change, names="value")
        self.button.on_click(self._on_plan)
        self.widget = panel(
            [
                self.model,
                self.gpu,
                self.tp,
                self.engine,
                self.costs,
                self.scheduler,
                self.source,
                self.workload,
                self.rate,
                self.ttft_slo,
                self.tbt_slo,
                self.overlap,
                self.disagg,
                self.button,
            ],
            [self.ttft, self.tbt],
            info=W.VBox([self.stats, self.plan]),
            fidelity="workbench.widgets.serving_hw:serving_hardware_panel",
            fidelity_controls={"model": self.model, "gpu": self.gpu, "tp": self.tp, "engine": self.engine,
                               "costs": self.costs},
        )  # fmt: skip

    # ---- model calls
    def slo(self) -> SLO:
        return SLO(ttft_s=self.ttft_slo.value, tbt_s=self.tbt_slo.value)

    def sched(self) -> Scheduler:
        budget = 2048 if self.scheduler.value == "sarathi" else 16384
        return Scheduler(self.scheduler.value, max_num_batched_tokens=budget)

    def requests(self):
        """The workload of the current settings (composed, or its naive twin)."""
        start = 14 * 3600
        pool = sg.load_pool(self.source.value).select(start, self.span_s)
        w = sg.compose(pool, start_s=start, duration_s=self.span_s, mean_rate_rps=self.rate.value, seed=self.seed)
        return w if self.workload.value == "composed" else sg.naive_workload(w, seed=self.seed)

    def deployment(self) -> Deployment:
        return Deployment(
            self.model.value,
            self.gpu.value,
            tp=self.tp.value,
            overlap=self.overlap.value,
            engine=self.engine.value,
            costs=self.costs.value,
        )

    def update(self) -> None:
        try:
            dep = self.deployment()
        except (ValueError, FileNotFoundError) as exc:  # does not fit (by how much), or costs not covered
            self.stats.value = f"<b>{exc}</b>"
            self.plan.value = ""
            for pane in (self.ttft, self.tbt):
                clear(pane, "this deployment does not run (see above)")
            return
        req = self.requests()
        if self.disagg.value:
            run = serve_disaggregated(req, dep, dep, prefill_scheduler=self.sched(), decode_scheduler=self.sched())
        else:
            run = serve(req, dep, self.sched())
        m = run.table
        summary = latency_summary(m)  # the one definition of each statistic, as the serving-hardware experiment
        tokens = summary["output_tokens_per_s"] / run.gpus
        bound = optimal_throughput(dep, float(req["input_tokens"].mean()) + 1, float(req["output_tokens"].mean()))
        slo = self.slo()
        redraw(
            self.ttft,
            viz.latency_cdf_figure({self.workload.value: m["ttft_s"].to_numpy()}, metric="TTFT", slo_s=slo.ttft_s),
        )
        redraw(
            self.tbt,
            viz.latency_cdf_figure({self.workload.value: m["tbt_s"].to_numpy()}, metric="TBT", slo_s=slo.tbt_s),
        )
        self.stats.value = load_note(backlog(m), len(m), self.span_s) + (
            f"{len(m)} requests, KV cache {dep.kv_capacity_tokens:,} tokens, {int(m['preemptions'].sum())} "
            f"preemptions<br>p99 TTFT {summary['ttft_p99_s']:.2f} s, p99 TBT "
            f"{1000 * summary['tbt_p99_s']:.0f} ms<br>throughput {tokens:,.0f} output tokens/s per GPU; optimal bound "
            f"{bound['optimal_tokens_per_s']:,.0f} ({bound['bound']}-bound at batch {bound['batch']:.0f})"
        )
        self.plan.value = ""

    def gpus_needed(self):
        """:func:`capacity_gpus` of the current workload over TP in {1, 2, 4, 8}."""
        return capacity_gpus(
            self.requests(),
            self.model.value,
            self.gpu.value,
            self.slo(),
            scheduler=self.sched(),
            overlap=self.overlap.value,
            engine=self.engine.value,
            costs=self.costs.value,
            duration_s=self.span_s,
        )

    # ---- callbacks
    def _on_change(self, change) -> None:
        if change["owner"] is self.overlap and change["new"] and self.engine.value != "nanoflow":
            self.engine.value = "nanoflow"  # overlapped execution is NanoFlow's engine (redraws through its observer)
            return
        self.update()

    def _on_plan(self, button) -> None:
        plan = self.gpus_needed()
        if not plan.feasible:
            self.plan.value = "<b>no TP degree meets the SLO</b>"
            return
        self.plan.value = (
            f"<b>{plan.gpus:.0f} GPUs</b>: {plan.replicas:.0f} replicas of TP {plan.tp} ({self.slo().describe()})"
        )


def serving_hardware_panel(**kwargs) -> W.Widget:
    """Build the panel and return its top-level widget (see :class:`ServingHardwarePanel`)."""
    return ServingHardwarePanel(**kwargs).widget
