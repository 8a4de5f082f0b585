"""NanoFlow's throughput bound of one replica for one constant-length workload (issue 36: the study of
:mod:`workbench.reproductions.nanoflow` as an experiment).

* ``serving-throughput-bound`` -- ``model`` on ``tp`` x ``gpu`` with a batch as large as the KV cache holds, serving
  requests of ``input_tokens`` prompt and ``output_tokens`` output tokens (:func:`workbench.serving.gpus.optimal_throughput`).
  Reported, in tokens/s per GPU (prompt and output tokens): the optimum at the datasheet peaks
  (``optimal_tokens_per_s``, NanoFlow's bound) and its compute-only headline (``headline_tokens_per_s``); with the
  measured operator costs (``costs="curves"``) of ``engine`` the overlapped (``overlapped_tokens_per_s``) and
  sequential (``sequential_tokens_per_s``) execution, and the sequential execution of ``baseline_engine``, which
  also pays its host work between steps (``eager_tokens_per_s``); ``batch`` (requests) and ``bound`` (the resource
  that binds at the peak: compute, memory or network).

Nothing is random here (closed-form roofline); the engines are treatments.
"""

from __future__ import annotations

from ..serving import specs
from ..serving.engines import engines
from ..serving.gpus import optimal_throughput
from ..serving.roofline import Deployment
from ._space import Param, experiment

__all__ = ["serving_throughput_bound"]


@experiment(
    "serving-throughput-bound",
    small={"model": "Llama-3.1-8B", "input_tokens": [512, 1024], "tp": 1},
    params=[
        Param("model", "Llama-2-70B", choices=tuple(specs.models()["model"]), seeded=False, doc="served model"),
        Param("gpu", "A100-80GB", choices=tuple(specs.gpus()["gpu"]), seeded=False, doc="accelerator"),
        Param("tp", 8, "", low=1, high=8, seeded=False, doc="tensor-parallel degree (GPUs of the replica)"),
        Param("input_tokens", 512, "tokens", low=1, high=1_000_000, log=True, doc="prompt length of every request"),
        Param("output_tokens", 512, "tokens", low=1, high=1_000_000, log=True, doc="output length of every request"),
        Param(
            "engine",
            "nanoflow",
            choices=tuple(engines()),
            seeded=False,
            doc="engine of the overlapped and sequential execution (its host work hidden)",
        ),
        Param(
            "baseline_engine",
            "vllm-v0",
            choices=tuple(engines()),
            seeded=False,
            doc="eager baseline engine (pays its host work between steps)",
        ),
    ],
)
def serving_throughput_bound(*, model, gpu, tp, input_tokens, output_tokens, engine, baseline_engine, seed):
    """Optimal, overlapped, sequential and eager tokens/s per GPU and the binding resource of one replica."""
    del seed  # deterministic
    dep = Deployment(specs.model(model), specs.gpu(gpu), tp=tp, engine=engine)
    eager = Deployment(specs.model(model), specs.gpu(gpu), tp=tp, engine=baseline_engine)
    peak = optimal_throughput(dep, input_tokens, output_tokens)
    eff = optimal_throughput(dep, input_tokens, output_tokens, at_peak=False)
    eager_eff = optimal_throughput(eager, input_tokens, output_tokens, at_peak=False)
    return {
        "batch": peak["batch"],
        "bound": peak["bound"],
        "optimal_tokens_per_s": peak["optimal_tokens_per_s"],
        "overlapped_tokens_per_s": eff["optimal_tokens_per_s"],
        "sequential_tokens_per_s": eff["sequential_tokens_per_s"],
        "eager_tokens_per_s": eager_eff["sequential_tokens_per_s"],
        "headline_tokens_per_s": peak["headline_tokens_per_s"],
    }
