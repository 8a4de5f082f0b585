"""Derive the 2023 vLLM's per-sequence Ray cost (``rpc_per_seq_s`` of the ``vllm-2023`` row of
``datasets/serving_specs/engines.csv``) from vLLM PR #2221's measured throughput.

Before vLLM PR #2221 (https://github.com/vllm-project/vllm/pull/2221, "Use NCCL instead of ray for control-plane
communication to remove serialization overhead", merged 2024-01), the driver sent every scheduled sequence's metadata
(its token ids, block table and sampling parameters) to each tensor-parallel Ray worker every step, pickled once per
worker; the PR moved one worker into the driver and broadcast the inputs as tensors. Its description measures the
change on LLaMA-70B over 8 A100-40GB GPUs: with 512 requests of 1,031 prompt and 317 output tokens, 2.48 requests/s
before and 3.48 after.

The script replays that benchmark on the workbench's engine (Llama-2-70B, 8 x A100-40GB at TP 8, the ``vllm-2023``
profile, vLLM's prefill-first scheduler with its default 256 sequences, all requests at t = 0) and finds by bisection
the host cost per running sequence and worker, ``c``, for which the throughput without it is 3.48 / 2.48 times the
throughput with it (the PR changed nothing else on the step's path). ``c`` is per sequence at that benchmark's
contexts (1-1.3k tokens); the pickled token lists grow with the context, which the profile does not follow.

Run ``python scripts/derive_vllm2023_rpc.py`` to print ``c``; ``--check`` compares it with the committed row (exit 1
on a difference above 2%).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import numpy as np

from workbench.serving import Deployment, Scheduler, simulate_replica
from workbench.serving.engines import engine

#: vLLM PR #2221's measurement: requests/s before and after, and its benchmark.
BEFORE_RPS, AFTER_RPS = 2.48, 3.48
REQUESTS, INPUT_TOKENS, OUTPUT_TOKENS, TP, MAX_NUM_SEQS = 512, 1031, 317, 8, 256


def throughput(rpc_per_seq_s: float) -> float:
    """Requests per second of the PR's benchmark on the model with ``rpc_per_seq_s``."""
    prof = dataclasses.replace(engine("vllm-2023"), rpc_per_seq_s=rpc_per_seq_s)
    dep = Deployment("Llama-2-70B", "A100-40GB", tp=TP, engine=prof)
    n = REQUESTS
    run = simulate_replica(np.zeros(n), np.full(n, INPUT_TOKENS), np.full(n, OUTPUT_TOKENS), dep,
                           Scheduler("vllm", max_num_seqs=MAX_NUM_SEQS))  # fmt: skip
    return n / float(np.nanmax(run.finish_s))


def derive() -> float:
    """The per-sequence, per-worker seconds that make the modelled speed-up the measured one."""
    target = AFTER_RPS / BEFORE_RPS
    base = throughput(0.0)
    lo, hi = 0.0, 1e-3
    for _ in range(30):
        mid = (lo + hi) / 2
        if base / throughput(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with datasets/serving_specs/engines.csv")
    args = ap.parse_args(argv)
    c = derive()
    print(f"rpc_per_seq_s={c:.4g}")
    if args.check:
        committed = engine("vllm-2023").rpc_per_seq_s
        if abs(committed - c) > 0.02 * c:
            print(f"engines.csv differs: committed {committed:.4g}, derived {c:.4g}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
