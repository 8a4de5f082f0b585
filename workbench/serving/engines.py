"""Serving-engine profiles: the host (CPU) work an engine does per iteration, and whether it overlaps the GPU step.

One row of ``datasets/serving_specs/engines.csv`` per engine, each number with its source. Per iteration the engine's
CPU work is ``iteration_s + per_seq_s * sequences`` plus, with ``tp >= 2``, ``tp_iteration_s + tp_rpc_s`` (feeding
more workers; the worker RPC of Ray-based engines). An engine with ``overlap_cpu`` prepares the next step while the
GPU runs this one, so the iteration takes ``max(GPU time, CPU time)``; an eager engine pays ``GPU time + CPU time``.
GPU-side efficiency (kernels, CUDA graphs vs eager launches) is not part of a profile: the roofline's stated
efficiencies hold for every engine.

Examples
--------
>>> e = engine("vllm-v0")
>>> e.overlap_cpu, round(e.cpu_s(32, tp=1) * 1e3, 2), round(e.cpu_s(32, tp=4) * 1e3, 2)
(False, 2.17, 9.08)
>>> engine("vllm").combine(gpu_s=0.010, cpu_s=0.002)   # async scheduling hides the CPU step
0.01
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache

from .specs import SPECS_DIR

__all__ = ["ENGINES_CSV", "EngineProfile", "engine", "engines"]

ENGINES_CSV = SPECS_DIR / "engines.csv"
_NUMBERS = ("iteration_s", "per_seq_s", "tp_iteration_s", "tp_rpc_s")


@dataclass(frozen=True)
class EngineProfile:
    """One engine's per-iteration host costs (seconds) and whether they overlap the GPU step; ``source`` says where
    each number comes from."""

    engine: str
    iteration_s: float
    per_seq_s: float
    tp_iteration_s: float
    tp_rpc_s: float
    overlap_cpu: bool
    description: str = ""
    source: str = ""
    allreduce: str = "nccl"  # "custom": a one-/two-shot all-reduce kernel over NVLink for small messages
    attention: str = "flash2"  # prefill attention kernel family (workbench.serving.attention.KERNELS)

    def cpu_s(self, sequences: float, *, tp: int = 1) -> float:
        """Host seconds of one iteration over ``sequences`` running sequences on a ``tp``-GPU replica."""
        extra = self.tp_iteration_s + self.tp_rpc_s if tp > 1 else 0.0
        return self.iteration_s + self.per_seq_s * sequences + extra

    def combine(self, gpu_s: float, cpu_s: float) -> float:
        """The iteration's duration: ``max`` of the two when the engine overlaps them, else their sum."""
        return max(gpu_s, cpu_s) if self.overlap_cpu else gpu_s + cpu_s


@cache
def engines() -> dict[str, EngineProfile]:
    """Every profile of ``engines.csv``, by name; a malformed row is an error naming the file and line."""
    out: dict[str, EngineProfile] = {}
    with open(ENGINES_CSV, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        for lineno, row in enumerate(reader, start=2):
            try:
                values = {k: float(row[k]) for k in _NUMBERS}
                if any(not 0 <= v < 1 for v in values.values()):
                    raise ValueError(f"costs must be in [0, 1) s, got {values}")
                overlap = {"true": True, "false": False}[row["overlap_cpu"].strip().lower()]
                allreduce = (row.get("allreduce") or "nccl").strip()
                if allreduce not in ("nccl", "custom"):
                    raise ValueError(f"allreduce must be 'nccl' or 'custom', got {allreduce!r}")
                attention = (row.get("attention") or "flash2").strip()
                if attention not in ("xformers", "flash2", "flash2-paged", "flash3"):
                    raise ValueError(f"attention must be xformers, flash2, flash2-paged or flash3, got {attention!r}")
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{ENGINES_CSV}:{lineno}: malformed engine row ({exc})") from None
            name = row["engine"].strip()
            if name in out:
                raise ValueError(f"{ENGINES_CSV}:{lineno}: engine {name!r} is listed twice")
            out[name] = EngineProfile(
                name,
                **values,
                overlap_cpu=overlap,
                description=row["description"],
                source=row["source"],
                allreduce=allreduce,
                attention=attention,
            )
    return out


def engine(name: str | EngineProfile) -> EngineProfile:
    """The profile called ``name`` (a profile passes through); ``ValueError`` listing the known engines otherwise."""
    if isinstance(name, EngineProfile):
        return name
    table = engines()
    if name not in table:
        raise ValueError(f"unknown engine {name!r}; engines.csv has: {', '.join(table)}")
    return table[name]
