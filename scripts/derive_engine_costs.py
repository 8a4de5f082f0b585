"""Derive the eager-vLLM ("vllm-v0", and "vllm-2023") engine costs of ``datasets/serving_specs/engines.csv`` from Vidur's measured CPU
overheads (``vidur-profiles/cpu_overheads/a100.csv`` on the data search path).

Per iteration, the engine's CPU work between GPU forward passes is schedule + prepare inputs + sampler +
process model outputs (the medians Vidur recorded, each an end-to-end CPU time). For every model and tensor-parallel
degree the script fits ``cpu_ms = fixed + per_seq * batch_size`` by least squares over the measured batch sizes
(8-128), then takes the median over models: the TP = 1 fit gives ``iteration_s`` and ``per_seq_s``; the extra fixed
CPU of TP >= 2 (more workers to feed) gives ``tp_iteration_s``; the mean Ray communication time at TP >= 2 gives
``tp_rpc_s``. A100 only: the A40 rows (PCIe, slower host) are noisier and serve as a check, not as the source.

Run ``python scripts/derive_engine_costs.py`` to print the row; ``--check`` compares it with the committed table
(exit 1 on a difference above 2%).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from workbench.data import require

CPU_PARTS = ("schedule_median", "sampler_e2e_median", "prepare_inputs_e2e_median", "process_model_outputs_median")


def derive(path=None) -> dict[str, float]:
    """The vllm-v0 costs (seconds) from Vidur's A100 CPU-overhead profile."""
    df = pd.read_csv(path or require("vidur-profiles/cpu_overheads/a100.csv"))
    df["cpu_ms"] = df[list(CPU_PARTS)].sum(axis=1)
    fits = []
    for (model, tp), g in df.groupby(["model_name", "tensor_parallel_degree"]):
        slope, intercept = np.polyfit(g["batch_size"].to_numpy(float), g["cpu_ms"].to_numpy(float), 1)
        fits.append({"model": model, "tp": int(tp), "fixed_ms": intercept, "per_seq_ms": slope})
    f = pd.DataFrame(fits)
    tp1 = f[f.tp == 1]
    tpn = f[f.tp > 1]
    ray = df.loc[df.tensor_parallel_degree > 1, "ray_comm_time_mean"]
    return {
        "iteration_s": float(tp1.fixed_ms.median()) / 1e3,
        "per_seq_s": float(tp1.per_seq_ms.median()) / 1e3,
        "tp_iteration_s": float(tpn.fixed_ms.median() - tp1.fixed_ms.median()) / 1e3,
        "tp_rpc_s": float(ray.mean()) / 1e3,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with datasets/serving_specs/engines.csv")
    args = ap.parse_args(argv)
    row = derive()
    print(", ".join(f"{k}={v:.6g}" for k, v in row.items()))
    if args.check:
        from workbench.serving.engines import engine

        off = {}
        for name in ("vllm-v0", "vllm-2023"):  # the 2023 releases' row shares the eager engine's host costs
            committed = engine(name)
            off.update({f"{name}.{k}": (getattr(committed, k), v) for k, v in row.items()
                        if abs(getattr(committed, k) - v) > 0.02 * v})  # fmt: skip
        if off:
            print(f"engines.csv differs from the profile: {off}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
