"""ServeGen's capacity-planning use case re-measured in GPUs on the hardware-grounded replica.

The claim belongs to the ServeGen paper (same :class:`Paper` record as :mod:`workbench.reproductions.servegen`): a
naive workload model (Poisson arrivals, pooled lengths) under-provisions a deployment against the per-client composed
workload. Here the deployment is real hardware (:data:`workbench.serving.servegen_gpus.HARDWARE`), the replica runs
vLLM's scheduler with a paged KV cache, and the SLO is p99 TTFT and p99 TBT.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .._deps import remember
from ..experiments.serving import provisioning_gap_gpus
from ..serving.servegen_gpus import HARDWARE
from . import AtLeast, Measured, Scale, claim
from .servegen import PAPER


@dataclass(frozen=True)
class Setting:
    """The models, hours of the day, span and mean rate one scale measures."""

    models: tuple[str, ...]
    hours: tuple[int, ...]
    span_s: float
    mean_rate_rps: float


#: Per scale: ServeGen models, hours of day, seconds per span, mean request rate of the span.
SETTINGS = {
    "full": Setting(models=tuple(HARDWARE), hours=(2, 8, 14, 20), span_s=900.0, mean_rate_rps=20.0),
    "quick": Setting(models=("m-large", "m-mid"), hours=(2, 14), span_s=300.0, mean_rate_rps=10.0),
}


@remember
def gap_table(scale: Scale) -> pd.DataFrame:
    """Rows of :func:`~workbench.experiments.serving.provisioning_gap_gpus` for every model of the scale."""
    cfg = SETTINGS[scale]
    frames = [
        provisioning_gap_gpus(m, cfg.hours, span_s=cfg.span_s, mean_rate_rps=cfg.mean_rate_rps) for m in cfg.models
    ]
    return pd.concat(frames, ignore_index=True)


@claim(
    PAPER,
    "underprovision_gpus",
    text="Sizing a deployment with a naive workload model (Poisson arrivals, pooled lengths) buys too few GPUs.",
    paper_value="the naive workload under-provisions",
    compare=AtLeast(0.05, partial=0.0),
    note="Median over (model, hour) of 1 - C_composed / C_naive, C the rate one replica of real hardware sustains "
    "with p99 TTFT and TBT within the SLO (vLLM scheduling, paged KV, roofline costs). ServeGen's models are "
    "mapped to public ones of similar role (an assumption: see HARDWARE).",
)
def _underprovision(scale: Scale) -> Measured:
    t = gap_table(scale)
    v = float(t["underprovision"].median())
    return Measured(
        v,
        f"{v:.0%} fewer GPUs than needed (median)",
        {"per_model": t.groupby("model")["underprovision"].median().round(3).to_dict()},
    )
