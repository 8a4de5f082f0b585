"""The serving models against published measurements: model vs published value and the error, per point.

The published points (``datasets/serving_specs/published.csv``) state their configuration: engine, model, GPU,
precision, tensor parallelism, batch size and input/output lengths. Each is replayed as the benchmark ran it:

* ``output_tokens_per_s_per_gpu`` and ``ttft_s`` (TensorRT-LLM's ``gptSessionBenchmark``): on the hardware-grounded
  replica (:func:`~workbench.serving.engine.simulate_replica`), ``batch`` requests present at once, prefilled together
  in one iteration, then decoded to their output length (static batching); TTFT is the end of the prefill iteration.
* ``prefill_iteration_s`` and ``decode_iteration_s`` (Sarathi-Serve's artifact): one iteration of the roofline
  (:meth:`~workbench.serving.roofline.Deployment.iteration_s`): ``batch`` whole prompts of ``input_tokens``, or
  ``batch`` decodes each over a context of ``input_tokens``.
* ``total_tokens_per_s_per_gpu`` (NanoFlow's offline throughput, prompt plus output tokens): ``batch`` requests present
  at once on a replica executing overlapped (``overlap=True``) with chunked prefill under a 2,048-token dense batch
  (:data:`DENSE_BATCH_TOKENS`), prompt and output tokens over the makespan, per GPU.

Nothing is fitted: the efficiencies are the stated per-generation constants of
:data:`~workbench.serving.roofline.EFFICIENCY`, and the engine's host work comes from its profile
(:mod:`~workbench.serving.engines`, the engine of each row by :data:`ENGINE_OF`). FP8 rows use one byte per weight and per KV element (TensorRT-LLM's FP8 with
an FP8 KV cache: the 13B batch of 1,024 needs ~214 GB of BF16 KV, more than an H200 holds, so the KV was 8-bit).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .engine import Scheduler, simulate_replica
from .roofline import Deployment
from .specs import SPECS_DIR, model

__all__ = ["DENSE_BATCH_TOKENS", "ENGINE_OF", "published", "replay", "validation_table"]

#: The engine profile (``engines.csv``) of each engine named in the published table: Sarathi-Serve's artifact ran
#: its vLLM 0.x fork, the TensorRT-LLM tables v0.5 (a C++ runtime, not overlapped), NanoFlow its asynchronous engine.
ENGINE_OF = {"vllm": "vllm-v0", "sarathi-serve": "sarathi-serve", "tensorrt-llm": "trtllm-v0.5", "nanoflow": "nanoflow"}

#: Tokens per iteration of NanoFlow's dense batch (chunked prefill topping up the decodes); its search picks the size,
#: here stated once (a throughput-oriented engine keeps the GEMMs at thousands of tokens).
DENSE_BATCH_TOKENS = 2048


def published() -> pd.DataFrame:
    """The published measurements, one row per point, with their source."""
    return pd.read_csv(SPECS_DIR / "published.csv")


def _deployment(row) -> Deployment:
    m = model(row["model"])
    if row["dtype"] == "fp8":
        m = dataclasses.replace(m, model=f"{m.model}-fp8", bytes_per_param=1.0, bytes_per_kv=1.0)
    return Deployment(
        m,
        row["gpu"],
        tp=int(row["tp"]),
        dtype=row["dtype"],
        engine=ENGINE_OF[row["engine"]],
        overlap=row["engine"] == "nanoflow",
    )


def replay(row) -> float:
    """The model's value of one published point (a row of :func:`published`)."""
    dep = _deployment(row)
    b, isl, osl = int(row["batch"]), int(row["input_tokens"]), int(row["output_tokens"])
    if row["metric"] == "prefill_iteration_s":
        return dep.iteration_s(b * isl, b * isl * (isl + 1) / 2, 0, 0, sampled=b)
    if row["metric"] == "decode_iteration_s":
        return dep.iteration_s(0, 0, b, b * isl)
    if row["metric"] == "total_tokens_per_s_per_gpu":
        r = simulate_replica(
            np.zeros(b),
            np.full(b, isl),
            np.full(b, osl),
            dep,
            Scheduler("sarathi", max_num_seqs=DENSE_BATCH_TOKENS // 2, max_num_batched_tokens=DENSE_BATCH_TOKENS),
        )
        return float(b * (isl + osl) / np.max(r.finish_s) / dep.gpus)
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
        return float(b * osl / np.max(r.finish_s) / dep.gpus)
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
