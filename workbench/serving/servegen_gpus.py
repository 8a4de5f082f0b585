"""ServeGen's use case in GPUs: the real hardware each ServeGen model is sized on, and one workload's plan on it.

For a ServeGen model and an hour of the day, the per-client workload (each client's rate share, burstiness and
length distributions) and the naive one built from the same requests (one Poisson process at the same mean rate,
pooled lengths) are each sized on real hardware with :func:`~workbench.serving.gpus.capacity_gpus` (p99 TTFT and
TBT SLOs, the hardware-grounded replica with vLLM's scheduler): :func:`plan_gpus` is one such sizing; the study over
hours, workloads and seeds is the registered experiment ``serving-gpus``
(:func:`workbench.experiments.serving.provisioning_gap_gpus`). The *under-provisioning* of the naive
plan is ``1 - C_composed / C_naive`` where ``C`` is the rate one replica sustains under the SLO, i.e. one minus the
ratio of the GPU counts ``rate / C x TP`` the two models imply before rounding up to whole replicas: 0 when the
naive model is faithful, positive when it buys too few. The whole-replica counts at the span's load are reported
too (at a few replicas they round the difference away).

ServeGen's models are Alibaba's unnamed Qwen deployments; :data:`HARDWARE` maps each to a public model of similar
role and a GPU and TP degree (an assumption, stated here): M-large to Qwen2-72B on 4 x H100, M-mid to Mixtral-8x7B on
2 x H100, M-small to Llama-3.1-8B on one H100, DeepSeek-R1 to itself in FP8 on 8 x H200.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from .._contracts import accepts
from .._validate import positive
from .capacity import SLO
from .engine import Scheduler
from .gpus import GpuCapacity, capacity_gpus
from .specs import model as model_spec

__all__ = ["HARDWARE", "hardware_label", "plan_gpus"]

#: ServeGen model -> (model spec, GPU, TP degree, SLO, vLLM's max_num_batched_tokens). Reasoning prompts reach 20k+
#: tokens: its batch budget covers them (vLLM sets it to the model length without chunked prefill) and its TTFT
#: target is looser.
HARDWARE: dict[str, tuple[str, str, int, SLO, int]] = {
    "m-large": ("Qwen2-72B", "H100-SXM", 4, SLO(ttft_s=2.0, tbt_s=0.1), 8192),
    "m-mid": ("Mixtral-8x7B", "H100-SXM", 2, SLO(ttft_s=2.0, tbt_s=0.1), 8192),
    "m-small": ("Llama-3.1-8B", "H100-SXM", 1, SLO(ttft_s=2.0, tbt_s=0.1), 8192),
    "deepseek-r1": ("DeepSeek-R1", "H200", 8, SLO(ttft_s=10.0, tbt_s=0.1), 65536),
}


def _hardware(model: str) -> tuple[str, str, int, SLO, int]:
    if model not in HARDWARE:
        raise ValueError(f"model must be one of {sorted(HARDWARE)}, got {model!r}")
    return HARDWARE[model]


@accepts()
def hardware_label(model: str) -> str:
    """What ServeGen ``model`` is sized on, in words.

    Examples
    --------
    >>> hardware_label("m-large")
    'Qwen2-72B on 4 x H100-SXM'
    """
    name, gpu, tp, _, _ = _hardware(model)
    return f"{name} on {tp} x {gpu}"


@accepts()
def plan_gpus(model: str, requests: pd.DataFrame, duration_s: float) -> GpuCapacity:
    """One workload of ServeGen ``model`` sized on its hardware (:data:`HARDWARE`): the :func:`capacity_gpus` record
    of its one TP degree (its table's one row: ``replica_rps``, the rate one replica sustains under the SLO, even when
    no replica count meets it; ``replicas`` and ``gpus``, whole replicas at the workload's own load, verified by
    simulation).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> req = pd.DataFrame({"arrival_s": np.sort(rng.uniform(0, 60, 300)), "input_tokens": rng.integers(100, 2000, 300),
    ...                     "output_tokens": rng.integers(20, 300, 300)})
    >>> plan_gpus("m-small", req, 60.0).gpus
    1.0
    """
    name, gpu, tp, slo, budget = _hardware(model)
    spec = model_spec(name)
    if name.startswith("DeepSeek"):  # served in its native FP8
        spec = dataclasses.replace(spec, model=f"{name}-fp8", bytes_per_param=1.0)
    scheduler = Scheduler("vllm", max_num_batched_tokens=budget)
    duration = positive("duration_s", duration_s)
    return capacity_gpus(requests, spec, gpu, slo, tps=(tp,), scheduler=scheduler, duration_s=duration)
