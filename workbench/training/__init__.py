"""Training-cluster models: iteration time on the fabric, effective training time under failures, and finding the
faulty machine or the irregular iteration (:mod:`workbench.training.diagnosis`).

- :mod:`~workbench.training.specs`: :class:`GPU` and :class:`Model`, the one hardware and architecture records of
  :mod:`workbench.serving.specs` (:data:`GPUS` and :data:`MODELS` by the training papers' names; the compute
  efficiency per GPU generation beside them, :data:`~.specs.EFFICIENCY`), :class:`Plan`, memory per GPU and
  :func:`check_plan` (named :class:`PlanError`).
- :mod:`~workbench.training.kernels`: measured kernel costs (GEMM efficiency by size, attention by software era,
  element-wise kernels, NCCL send/recv) behind the compute and exchange terms.
- :mod:`~workbench.training.iteration`: :func:`iteration_table` (vectorized over plans) and :func:`iteration_time`,
  with the data-parallel collective routed on a :mod:`workbench.fabric` topology; :data:`CALIBRATION`, the two
  parameters estimated on the validation corpus.
- :mod:`~workbench.training.scaling`: plan grids, routing comparisons (ECMP vs planned per plan) and weak scaling.
- :mod:`~workbench.training.validation`: the corpus of fully stated public runs (a data file), the published
  iteration breakdowns, the estimated parameters and the model's leave-one-source-out error on every run
  (:func:`~.validation.validation_points`).
- :mod:`~workbench.training.rendezvous`: waiting at the blocking exchanges of a 1F1B pipeline under per-stage
  variability, by Monte-Carlo of Megatron's schedule.
- :mod:`~workbench.training.exec_graph`: the iteration as an execution graph (Lumos): CPU launches and syncs,
  kernels on compute/TP/PP/DP streams, four dependency kinds, list-scheduling simulation, breakdown, critical path,
  what-if edits and a dPRO-like mode.
- :mod:`~workbench.training.dse`: design-space exploration over TP x PP x DP x micro-batch x recomputation, formula
  first, graph re-ranking.
- :mod:`~workbench.training.failures`: failure rates per component class (Llama 3), checkpoint-restart vs live
  migration, ETTR in closed form (renewal-reward) and by Monte-Carlo, Young/Daly, GPU-hours lost.
- :mod:`~workbench.training.fused_pipeline`: RLHFuse's fused Actor/Critic pipelines: the task model, the four-term
  lower bound, 1F1B, sequential 1F1B, greedy and simulated-annealing schedules, and the published schedules' reader
  and checker.

Like every model package it imports nothing from ``viz``, ``experiments``, ``reproductions`` or ``widgets``.
"""

from .iteration import (
    CALIBRATION,
    COMPONENTS,
    Breakdown,
    Calibration,
    group_seconds_per_byte,
    iteration_table,
    iteration_time,
)
from .specs import GPU, GPUS, MODELS, Model, Plan, PlanError, check_plan, memory_bytes

__all__ = [
    "CALIBRATION",
    "COMPONENTS",
    "Calibration",
    "Breakdown",
    "GPU",
    "GPUS",
    "MODELS",
    "Model",
    "Plan",
    "PlanError",
    "check_plan",
    "group_seconds_per_byte",
    "iteration_table",
    "iteration_time",
    "memory_bytes",
]
