"""The serving models against published measurements: model vs published value and the error, per point.

The published points (``datasets/serving_specs/published.csv``) state their configuration: engine, model, GPU,
precision, tensor parallelism, batch size and input/output lengths. Each is replayed on the hardware-grounded replica
(:func:`~workbench.serving.engine.simulate_replica`) as the benchmark ran it: ``batch`` requests present at once,
prefilled together in one iteration, then decoded to their output length (static batching, as TensorRT-LLM's
``gptSessionBenchmark`` measures "max throughput"). Throughput is output tokens per second per GPU; TTFT is the end
of the prefill iteration.

Nothing is fitted: the efficiencies are the stated per-generation constants of
:data:`~workbench.serving.roofline.EFFICIENCY`, and the only engine-specific constant is the per-iteration CPU
overhead in :data:`ENGINE_OVERHEAD_S`. FP8 rows use one byte per weight and per KV element (TensorRT-LLM's FP8 with
an FP8 KV cache: the 13B batch of 1,024 needs ~214 GB of BF16 KV, more than an H200 holds, so the KV was 8-bit).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .engine import Scheduler, simulate_replica
from .roofline import Deployment
from .specs import SPECS_DIR, model

__all__ = ["ENGINE_OVERHEAD_S", "published", "replay", "validation_table"]

#: Per-iteration CPU/launch overhead of an engine (stated, not fitted): vLLM 0.x schedules and samples in Python
#: between iterations (milliseconds); TensorRT-LLM runs a C++ runtime with CUDA graphs (a fraction of a millisecond).
ENGINE_OVERHEAD_S = {"vllm": 4e-3, "tensorrt-llm": 0.5e-3}


def published() -> pd.DataFrame:
    """The published measurements, one row per point, with their source."""
    return pd.read_csv(SPECS_DIR / "published.csv")


def _deployment(row) -> Deployment:
    m = model(row["model"])
    if row["dtype"] == "fp8":
        m = dataclasses.replace(m, model=f"{m.model}-fp8", bytes_per_param=1.0, bytes_per_kv=1.0)
    return Deployment(m, row["gpu"], tp=int(row["tp"]), dtype=row["dtype"], overhead_s=ENGINE_OVERHEAD_S[row["engine"]])


def replay(row) -> float:
    """The model's value of one published point (a row of :func:`published`)."""
    dep = _deployment(row)
    b, isl, osl = int(row["batch"]), int(row["input_tokens"]), int(row["output_tokens"])
    r = simulate_replica(
        np.zeros(b),
        np.full(b, isl),
        np.full(b, osl),
        dep,
        Scheduler("vllm", max_num_seqs=b, max_num_batched_tokens=max(b * isl, 1)),
    )
    if row["metric"] == "ttft_s":
        return float(np.max(r.first_token_s))
    if row["metric"] == "output_tokens_per_s_per_gpu":
        return float(b * osl / np.max(r.finish_s) / dep.tp)
    raise ValueError(f"unknown metric {row['metric']!r} in the published table")


def validation_table() -> pd.DataFrame:
    """One row per published point: its configuration, ``published``, ``model_estimate`` and ``error``
    (model / published - 1).

    Examples
    --------
    >>> t = validation_table()
    >>> len(t) >= 4 and bool(t["model_estimate"].gt(0).all())
    True
    """
    pub = published()
    rows = []
    for row in pub.to_dict("records"):  # a dozen points
        value = replay(row)
        rows.append(
            {
                **{
                    k: row[k]
                    for k in (
                        "point",
                        "model",
                        "gpu",
                        "dtype",
                        "tp",
                        "batch",
                        "input_tokens",
                        "output_tokens",
                        "metric",
                    )
                },
                "published": float(row["value"]),
                "model_estimate": value,
                "error": value / float(row["value"]) - 1,
                "source": row["source"],
            }
        )
    return pd.DataFrame(rows)
