"""The declarations of the fidelity scoreboard: every engine whose numbers a panel shows, its independent
references and the controls that place a point, and which engines each panel and each registered experiment shows.

An :class:`Engine` either has references (:class:`Reference`, each labelled with its ``kind``: a published
measurement, an independent simulator on the same input, or exact theory) and a function computing its points
through the engine's own validation module, or says in ``no_reference`` why it has none and what checks it has
instead. Its :class:`Control` records name the panel's controls and the point columns they compare with (what
:func:`workbench.fidelity.region_note` checks). The functions computing points are here, so this file's source is
part of every cached points' key (:func:`workbench.fidelity.points_key`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .._validate import one_of

__all__ = [
    "Control",
    "Engine",
    "ENGINES",
    "EXPERIMENTS",
    "PANELS",
    "PACKET_ENGINES",
    "POINT_COLUMNS",
    "REFERENCE_KINDS",
    "Reference",
    "engine",
]

#: What a reference is: a published measurement, an independent simulator on the same input, or exact theory.
REFERENCE_KINDS = ("measurement", "simulator", "theory")
#: The columns every engine's points have (then its control columns).
POINT_COLUMNS = ("source", "metric", "reference", "model", "error", "reference_kind", "citation")


@dataclass(frozen=True)
class Reference:
    """An independent reference: its ``source`` as it appears in the points (``"*"``: every source of the engine's
    points, e.g. each publication of a measured corpus), its ``kind`` (:data:`REFERENCE_KINDS`) and ``citation``."""

    source: str
    kind: str
    citation: str

    def __post_init__(self) -> None:
        one_of("kind", self.kind, REFERENCE_KINDS)


@dataclass(frozen=True)
class Control:
    """A control of a panel that places a point: its ``name`` (the keyword :func:`region_note` takes), the points'
    ``column`` it compares with, the ``label`` a note uses, whether it is ``numeric`` (a range) or categorical (a set
    of values), and ``canonical`` (``"module:function"`` whose result's ``attribute`` spells a value as the points
    do: ``"H100"`` is the ``H100-SXM`` row)."""

    name: str
    column: str
    label: str
    numeric: bool = False
    canonical: str = ""
    attribute: str = ""

    def spell(self, value: Any) -> Any:
        if self.numeric:
            return float(value)
        if not self.canonical:
            return str(value)
        import importlib

        module, _, fn = self.canonical.partition(":")
        try:
            record = getattr(importlib.import_module(module), fn)(value)
        except ValueError:  # unknown to the table: compared as given, so the note says no point has it
            return str(value)
        return str(getattr(record, self.attribute)) if self.attribute else str(record)


@dataclass(frozen=True)
class Engine:
    """One engine whose numbers a panel shows: ``name``, ``what`` it is, ``code`` (the module whose closure computes
    its points: part of the cache key), its ``references`` and ``metrics``, the ``controls`` that place a point, the
    function computing its points (``compute(scale)``, ``None`` without a reference) and, for an engine with no
    independent reference, ``no_reference``: why, and what checks it instead. ``scaled``: its points differ between
    the ``quick`` and ``full`` scales (a smaller simulation); otherwise both scales read the same points."""

    name: str
    what: str
    code: str
    references: tuple[Reference, ...] = ()
    metrics: tuple[str, ...] = ()
    controls: tuple[Control, ...] = ()
    compute: Callable[[str], pd.DataFrame] | None = field(default=None, compare=False, repr=False)
    no_reference: str = ""
    scaled: bool = False

    def __post_init__(self) -> None:
        if (self.compute is None) == (not self.no_reference):
            raise ValueError(f"engine {self.name!r}: declare either references with a compute function or no_reference")

    @property
    def validated(self) -> bool:
        return self.compute is not None

    def kind_of(self, source: str) -> str:
        for r in self.references:
            if r.source in (source, "*"):
                return r.kind
        raise ValueError(f"engine {self.name!r}: source {source!r} is not one of its declared references")

    def control(self, name: str) -> Control:
        for c in self.controls:
            if c.name == name:
                return c
        known = ", ".join(c.name for c in self.controls) or "none"
        raise ValueError(f"engine {self.name!r} has no control {name!r}; its controls: {known}")


# ----------------------------------------------------------------------------------------------------------------------
# The engines' points (each through the engine's own validation module)
# ----------------------------------------------------------------------------------------------------------------------


def _serving(scale: str) -> pd.DataFrame:
    from ..serving.opcurves import gpu_curves
    from ..serving.specs import gpu
    from ..serving.validation import validation_points

    p = validation_points().rename(columns={"kind": "point_kind"})
    # the operator costs each point ran on: a Deployment's default, measured curves where the GPU (profiled itself)
    # or its generation has them
    measured = {g: gpu_curves(gpu(g)) is not None for g in p["gpu"].unique()}
    p["costs"] = ["curves" if measured[g] else "stated" for g in p["gpu"]]
    return p


def _training(scale: str) -> pd.DataFrame:
    from ..training.validation import corpus, corpus_model, validation_points

    p = validation_points()
    c = corpus().set_index("id")
    p["params_b"] = [corpus_model(c.loc[i].rename(i)).params / 1e9 for i in p["id"]]
    p["citation"] = p["source_name"].astype(str) + ", " + p["locator"].astype(str)
    return p


def _packets(scale: str, loss_recovery: str = "newreno") -> pd.DataFrame:
    from ..aqm.validation import REFERENCES, validation_points

    p = validation_points(loss_recovery=loss_recovery)
    low, high = p["reference_low"], p["reference_high"]
    parts = []
    for name, col in zip(REFERENCES, ("ns3", "htsim")):
        parts.append(p.assign(source=name, reference=p[col]))
    # against the envelope the two span: the reference is the nearest end of it (0 error inside)
    parts.append(p.assign(source="ns-3 / htsim span", reference=p["model"].clip(low, high)))
    out = pd.concat(parts, ignore_index=True)
    out["error"] = (out["model"] - out["reference"]) / out["reference"]
    out["topology"] = "leaf-spine"
    out["marking"] = "static"
    out["citation"] = "datasets/validation/packets/README.md (per-flow FCTs of both references on the same paths)"
    return out


def _packets_sack(scale: str) -> pd.DataFrame:
    return _packets(scale, "sack")


def _arrivals(scale: str) -> pd.DataFrame:
    from ..arrivals.validation import validation_points

    p = validation_points(customers=100_000 if scale == "full" else 20_000)
    p["burstiness"] = 1.0 / p["cv"] ** 2  # vLLM's convention (Gamma shape): a panel's control; inf for constant gaps
    return p


#: The GPU control, spelled as the one hardware table does (``"H100"`` is the ``H100-SXM`` row).
_GPU = Control("gpu", "gpu", "GPU", canonical="workbench.serving.specs:gpu", attribute="name")


def _none(name: str, what: str, code: str, why: str) -> Engine:
    return Engine(name, what, code, no_reference=why)


#: The packet engine's references, metrics and controls (both its sender models are checked on the same ones).
_PACKET_REFERENCES = (
    Reference(
        "ns-3",
        "simulator",
        "ns-3 on the same flows and spines (scripts/ns3_replay.py, README sender corrections); docs/ns3_reference.md",
    ),
    Reference(
        "htsim",
        "simulator",
        "htsim (Broadcom/csg-htsim, BSD-2-Clause) with a small driver on the same flows and spines; "
        "docs/htsim_reference.md",
    ),
    Reference(
        "ns-3 / htsim span",
        "simulator",
        "the span of the two references; issue 40's rule: within [0.85 x lower, 1.15 x higher]",
    ),
)
_PACKET_METRICS = ("mean, p50 and p99 FCT of small, medium and large flows",)
_PACKET_CONTROLS = (
    Control("topology", "topology", "topology"),
    Control("load", "load", "load", numeric=True),
    Control("marking", "marking", "marking"),
)
#: The packet engine's fidelity entry for each of its sender models (``simulate_packets``'s ``loss_recovery``): a
#: panel or experiment shows the entry of the senders it runs (``tests/test_fidelity.py`` checks the PRED scenarios'
#: and the mitigation check's constants against the entries below).
PACKET_ENGINES = {"newreno": "packets", "sack": "packets-sack"}

#: Every engine whose numbers a panel shows, by name.
ENGINES: dict[str, Engine] = {
    e.name: e
    for e in (
        Engine(
            "packets",
            "the compiled per-packet network engine (NewReno/DCTCP senders, ECN marking, pinned paths: "
            "workbench.aqm.perpacket), replaying a dataset's connection matrix on its leaf-spine",
            "workbench.aqm.validation",
            _PACKET_REFERENCES,
            _PACKET_METRICS,
            _PACKET_CONTROLS,
            _packets,
        ),
        Engine(
            "packets-sack",
            "the per-packet engine with its SACK-like senders (a loss found by three later ACKs or one fixed "
            "timeout after the drop, queues in whole packets, no slow-start threshold: loss_recovery='sack'), the "
            "senders of the PRED scenarios and of the mitigation check, replayed on the packet engine's validation "
            "workloads with the README network's RTO floor",
            "workbench.aqm.validation",
            _PACKET_REFERENCES,
            _PACKET_METRICS,
            _PACKET_CONTROLS,
            _packets_sack,
        ),
        _none(
            "aqm-fluid",
            "the fluid (delay-differential) model of DCTCP queues under RED or PRED marking (workbench.aqm.fluid)",
            "workbench.aqm.fluid",
            "no independent reference: the PRED panel draws it beside the per-packet engine's point at the same "
            "setting, an engine of this project, not an independent check",
        ),
        Engine(
            "serving",
            "the serving engine (one replica's event loop, paged KV cache, vLLM/Sarathi/Orca scheduling) on the "
            "hardware cost model (roofline over measured operator costs, engine host costs)",
            "workbench.serving.validation",
            (
                Reference(
                    "*",
                    "measurement",
                    "published serving measurements, datasets/serving_specs/published.csv "
                    "(per point its document, table or figure)",
                ),
            ),
            ("iteration times (prefill, decode, chunked prefill)", "TTFT, ITL, tokens/s per GPU, offline tokens/s"),
            (
                _GPU,
                Control("model", "model_name", "model", canonical="workbench.serving.specs:model", attribute="model"),
                Control("tp", "tp", "TP", numeric=True),
                Control("pp", "pp", "PP", numeric=True),
                Control(
                    "engine",
                    "engine",
                    "engine profile",
                    canonical="workbench.serving.engines:engine",
                    attribute="engine",
                ),
                Control("costs", "costs", "operator costs"),
                Control("dtype", "dtype", "precision"),
                Control("batch", "batch", "batch", numeric=True),
                Control("input_tokens", "input_tokens", "input tokens", numeric=True),
                Control("output_tokens", "output_tokens", "output tokens", numeric=True),
            ),
            _serving,
        ),
        _none(
            "serving-linear",
            "the serving engine on the abstract linear cost model (ServerConfig: iteration "
            "time linear in tokens; workbench.serving.linear)",
            "workbench.serving.linear",
            "no independent reference: its coefficients are stated or derived from the hardware cost model "
            "(linear_fit), which is validated as the 'serving' engine; the linear form itself is not",
        ),
        Engine(
            "training",
            "the training iteration formula (measured kernels by era and GPU, pipeline at its slowest rank, "
            "TP/PP/DP communication at measured NCCL rates) and the execution graph built from it",
            "workbench.training.validation",
            (
                Reference(
                    "*",
                    "measurement",
                    "69 fully stated public training runs, "
                    "datasets/training_validation/corpus.csv, leave-one-source-out",
                ),
            ),
            ("iteration time", "MFU", "model and hardware TFLOP/s per GPU"),
            (
                _GPU,
                Control("model", "model_name", "model"),
                Control("params_b", "params_b", "parameters (billions)", numeric=True),
                Control("tp", "tp", "TP", numeric=True),
                Control("pp", "pp", "PP", numeric=True),
                Control("dp", "dp", "DP", numeric=True),
                Control("gpus", "gpus", "GPUs", numeric=True),
                Control("batch", "global_batch", "global batch", numeric=True),
                Control("recompute", "recompute", "recomputation"),
                Control("seq_len", "seq_len", "sequence length", numeric=True),
                Control("era", "era", "software era"),
                Control("pipeline", "pipeline", "pipeline engine"),
            ),
            _training,
        ),
        _none(
            "training-failures",
            "ETTR of a training job under failures, checkpoints and recovery: closed form "
            "and Monte-Carlo (workbench.training.failures)",
            "workbench.training.failures",
            "no independent reference: its closed form and its Monte-Carlo agree (the same assumptions twice, "
            "an internal check); no published ETTR measurement is replayed",
        ),
        Engine(
            "arrivals",
            "one FIFO server fed by an arrival process, simulated by the Lindley recursion (workbench.arrivals)",
            "workbench.arrivals.validation",
            (
                Reference(
                    "GI/M/1 exact",
                    "theory",
                    "exact GI/M/1 waiting time (Kleinrock 1975, section 6.4; M/M/1 "
                    "its Poisson case): theory, not a measurement",
                ),
            ),
            ("mean and p99 wait",),
            (
                Control("process", "process", "arrival process"),
                Control("cv", "cv", "gap CV", numeric=True),
                Control("burstiness", "burstiness", "burstiness", numeric=True),
                Control("utilization", "utilization", "utilization", numeric=True),
                Control("service", "service", "service times"),
            ),
            _arrivals,
            scaled=True,
        ),
        _none(
            "fabric",
            "the flow-level fabric model: ECMP/spraying/planned routing, congestion ratios, collective "
            "times, balls-into-bins (workbench.fabric)",
            "workbench.fabric",
            "no independent reference: no measured fabric or other simulator is replayed on its inputs",
        ),
        _none(
            "fabric-mitigation",
            "SWARM's flow-level estimator of failure mitigations (max-min fluid with a "
            "stated TCP loss model; workbench.fabric.mitigation)",
            "workbench.fabric.mitigation",
            "no independent reference: its ranking is checked against this project's per-packet engine "
            "(mitigation_check), which is not independent",
        ),
        _none(
            "carbon",
            "carbon-aware scheduling of job DAGs on grid-intensity traces (workbench.carbon)",
            "workbench.carbon",
            "no independent reference: no published scheduler run is replayed on its inputs",
        ),
        _none(
            "microservices",
            "microservice call graphs under overload with Rajomon, DAGOR or Breakwater (workbench.microservices)",
            "workbench.microservices",
            "no independent reference: no measured deployment or other simulator is replayed on its inputs",
        ),
        _none(
            "placement",
            "task placement and hot ToRs (workbench.placement)",
            "workbench.placement",
            "no independent reference: no measured cluster is replayed",
        ),
        _none(
            "checkpointing",
            "checkpoint stall, save and load times and ETTR by method (workbench.training.checkpointing)",
            "workbench.training.checkpointing",
            "no independent reference: no published checkpoint timing is replayed",
        ),
        _none(
            "diagnosis",
            "fault detectors on simulated training jobs with injected faults (workbench.training.diagnosis)",
            "workbench.training.diagnosis",
            "no independent reference: detection is scored against the faults injected, not a measured job",
        ),
        _none(
            "rlhf-fused",
            "RLHFuse's fused pipeline schedules: bound, schedulers and checker (workbench.training.fused_pipeline)",
            "workbench.training.fused_pipeline",
            "no independent reference: schedules are checked task by task for validity, not against measured "
            "iteration times",
        ),
        _none(
            "workload-generators",
            "request-trace statistics and the BurstGPT/ServeGen workload generators (workbench.workloads)",
            "workbench.workloads",
            "no model to validate in the trace statistics (they are the data's); the generators' round trip "
            "(fit, generate, refit) is a self-consistency check, not an independent reference",
        ),
    )
}

#: Every panel (``Paper.panel``) and the engines whose numbers it shows.
PANELS: dict[str, tuple[str, ...]] = {
    "workbench.widgets.arrivals:arrivals_panel": ("arrivals",),
    "workbench.widgets.burstgpt:burstgpt_panel": ("workload-generators",),
    "workbench.widgets.checkpointing:checkpoint_panel": ("checkpointing",),
    "workbench.widgets.fabric:c4_panel": ("fabric",),
    "workbench.widgets.fabric:spraying_panel": ("fabric",),
    "workbench.widgets.training:iteration_panel": ("training",),
    "workbench.widgets.training:what_if_panel": ("training",),
    "workbench.widgets.training:failures_panel": ("training-failures",),
    "workbench.widgets.diagnosis:fault_panel": ("diagnosis",),
    "workbench.widgets.preemption:preemption_panel": ("serving",),
    "workbench.widgets.placement:hotspot_panel": ("placement",),
    "workbench.widgets.serving_hw:serving_hardware_panel": ("serving",),
    "workbench.widgets.carbon:carbon_panel": ("carbon",),
    "workbench.widgets.aqm:pred_panel": ("aqm-fluid", "packets-sack"),
    "workbench.widgets.microservices:microservices_panel": ("microservices",),
    "workbench.widgets.rlhf:fused_pipeline_panel": ("rlhf-fused", "serving"),
    "workbench.widgets.servegen:servegen_panel": ("serving-linear", "workload-generators"),
    "workbench.widgets.mitigation:mitigation_panel": ("fabric-mitigation", "packets-sack"),
}

#: Every registered experiment (what an explore panel shows) and the engines whose numbers it gives.
EXPERIMENTS: dict[str, tuple[str, ...]] = {
    "arrivals-burstiness": ("arrivals",),
    "arrivals-exact-wait": ("arrivals",),
    "arrivals-gap-cv": ("arrivals",),
    "arrivals-idc": ("arrivals",),
    "arrivals-pooled-waits": ("arrivals",),
    "arrivals-queue-wait": ("arrivals",),
    "ballsbins-max-load": ("fabric",),
    "burstgpt-round-trip": ("workload-generators",),
    "burstgpt-trace-analysis": ("workload-generators",),
    "c4-gain": ("fabric",),
    "c4d-collective-faults": ("diagnosis",),
    "carbon-busy-hours": ("carbon",),
    "carbon-scheduling": ("carbon",),
    "checkpoint": ("checkpointing",),
    "collective-time-vs-size": ("fabric",),
    "diagnosis-detection": ("diagnosis",),
    "diagnosis-function-faults": ("diagnosis",),
    "fabric-congestion": ("fabric",),
    "fault-localization-job": ("diagnosis",),
    "fault-localization-thresholds": ("diagnosis",),
    "holmes-iteration-localization": ("diagnosis",),
    "llm-preemption": ("serving",),
    "microservice-overload": ("microservices",),
    "microservice-overload-series": ("microservices",),
    "minder-healthy-alarms": ("diagnosis",),
    "minimal-split-subflows": ("fabric",),
    "minimal-split-vs-spray": ("fabric",),
    "mitigation": ("fabric-mitigation", "packets-sack"),
    "mitigation-ranking": ("fabric-mitigation", "packets-sack"),
    "perftracker-healthy-alarms": ("diagnosis",),
    "placement-hot-tors": ("placement",),
    "placement-latency-curve": ("placement",),
    "placement-tor-utilization": ("placement",),
    "planned-vs-ecmp-worst-step": ("fabric",),
    "pred-dumbbell-fct": ("packets-sack",),
    "pred-fct-vs-load": ("packets-sack",),
    "pred-leafspine-mix": ("packets-sack",),
    "pred-queue-vs-concurrency": ("aqm-fluid", "packets-sack"),
    "rlhf-fused-pipeline": ("rlhf-fused",),
    "rlhf-fused-schedule": ("rlhf-fused",),
    "rlhf-generation-tail": ("serving",),
    "rlhf-generation-tail-samples": ("serving",),
    "servegen-serving": ("serving-linear",),
    "serving-capacity": ("serving-linear",),
    "serving-gpus": ("serving",),
    "serving-hardware": ("serving",),
    "serving-hardware-gpus": ("serving",),
    "serving-hardware-requests": ("serving",),
    "serving-iteration": ("serving",),
    "serving-replica": ("serving",),
    "serving-replica-gpus": ("serving",),
    "serving-replica-requests": ("serving",),
    "serving-swap-cost": ("serving",),
    "serving-throughput-bound": ("serving",),
    "step-congestion": ("fabric",),
    "sunk-carbon-placement": ("carbon",),
    "training-dse": ("training",),
    "training-ettr": ("training-failures",),
    "training-ettr-vs-interval": ("training-failures",),
    "training-iteration-breakdown": ("training",),
    "training-iteration-time": ("training",),
    "training-plan-routing-gain": ("training",),
    "training-recovery-vs-gpus": ("training-failures",),
    "training-what-if": ("training",),
    "uplink-loads": ("fabric",),
}


def engine(name: str | Engine) -> Engine:
    """The declared engine ``name`` (an :class:`Engine` is returned as is); ``ValueError`` naming the known ones."""
    if isinstance(name, Engine):
        return name
    one_of("engine", name, tuple(ENGINES))
    return ENGINES[name]
