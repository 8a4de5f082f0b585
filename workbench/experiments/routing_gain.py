"""Planned paths vs ECMP over every parallelism plan of a job (issue 36: the study of
:mod:`workbench.reproductions.c4_training` as an experiment).

* ``training-plan-routing-gain`` -- every plan of ``n_gpus`` GPUs of type ``gpu`` (TP within a node, PP up to the
  layers, one micro-batch, selective recomputation; :func:`workbench.training.scaling.plan_grid`) that fits a
  ``global_batch``-sequence iteration of ``model`` in memory, its data-parallel collectives routed on a
  non-blocking leaf-spine of ``hosts_per_leaf`` hosts per leaf and ``spines`` spines (host links at the GPU's NIC
  rate) by ECMP (averaged over ``hashings`` independent per-job hashings), spraying and planned paths
  (:func:`workbench.training.scaling.routing_comparison`): one row per plan and routing with ``plan`` (its index),
  ``tp``, ``pp``, ``dp``, ``iteration_s`` (s), ``mfu`` (fraction), ``fabric_share`` (exposed DP communication
  under planned paths over the iteration, fraction), ``gain`` (iteration time over the planned one, minus 1) and
  ``shortcut_gain`` (what ``fabric_share x (DP slowdown - 1)`` predicts).

The hashings are numbered ``0 .. hashings - 1`` (every plan and model sees the same ones); the sweep's seed is not
used.
"""

from __future__ import annotations

from ..fabric.topology import leaf_spine
from ..training import GPUS, MODELS
from ..training.scaling import plan_grid, routing_comparison
from ._space import Param, experiment

__all__ = ["training_plan_routing_gain"]


@experiment(
    "training-plan-routing-gain",
    small={"model": "gpt-18b", "n_gpus": 64, "global_batch": 64, "hosts_per_leaf": 8, "spines": 8, "hashings": [1, 2]},
    params=[
        Param("model", "gpt-18b", choices=tuple(MODELS), doc="model"),
        Param("gpu", "H100", choices=tuple(GPUS), doc="GPU type (its NIC sets the host links)"),
        Param("n_gpus", 1024, "", low=2, high=65_536, log=True, doc="GPUs of the job (one NIC each)"),
        Param("global_batch", 1024, "", low=1, high=1_000_000, log=True, doc="sequences per iteration"),
        Param("hosts_per_leaf", 16, "", low=1, high=256, doc="hosts (GPUs) per leaf; leaves = n_gpus / hosts_per_leaf"),
        Param("spines", 16, "", low=1, high=256, doc="spine switches (non-blocking when = hosts_per_leaf)"),
        Param("hashings", 4, "", low=1, high=1000, doc="independent ECMP hashings of the job averaged"),
    ],
)
def training_plan_routing_gain(*, model, gpu, n_gpus, global_batch, hosts_per_leaf, spines, hashings, seed):
    """ECMP, spraying and planned paths' iteration time for every plan of one job that fits."""
    del seed  # the hashings are numbered 0 .. hashings - 1
    if n_gpus % hosts_per_leaf:
        raise ValueError(f"n_gpus must be a multiple of hosts_per_leaf = {hosts_per_leaf}, got {n_gpus}")
    spec = GPUS[gpu]
    topo = leaf_spine(n_gpus // hosts_per_leaf, spines, hosts_per_leaf, host_gbps=spec.nic_gbps)
    plans = plan_grid(MODELS[model], n_gpus, spec, global_batch, micro_batches=(1,), recompute=("selective",))
    if not plans:
        raise ValueError(f"no plan of {model} on {n_gpus} {gpu} GPUs fits a batch of {global_batch} in memory")
    return routing_comparison(MODELS[model], plans, spec, topo, ("ecmp", "spray", "planned"), seeds=hashings)
