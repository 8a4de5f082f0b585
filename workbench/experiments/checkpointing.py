"""Checkpointing studies: ByteCheckpoint's stall-free saves against blocking baselines, on the failures model
(issue 27, part 3).

* ``checkpoint`` -- one training job (``params_b`` billion parameters on ``gpus`` GPUs laid out ``tp x pp x dp``)
  checkpointed by ``method`` (:mod:`workbench.training.checkpointing`): the stall (training blocked), the save
  (until durable), the load (same layout, and into ``reshard_tp`` times the tensor parallelism), and the effective
  training time ratio under Llama 3's failure rates at the optimal interval (``interval_s = 0``) or a given one
  (``optimal_interval_s`` reports the interval used).
  Bandwidths are parameters in Gbit/s (defaults = :class:`~workbench.training.checkpointing.Storage`'s in GB/s x 8,
  with their sources there).

Nothing is random here (the closed-form ETTR); ``method`` is a treatment.
"""

from __future__ import annotations

from ..training import checkpointing as ck
from ._space import Param, experiment

__all__ = ["checkpoint", "storage_of"]


def storage_of(*, gpu, pcie_gbps, serialise_gbps, node_gbps, aggregate_gbps, plan_s_per_rank, **_) -> ck.Storage:
    """The :class:`~workbench.training.checkpointing.Storage` of the experiment's parameters (Gbit/s -> GB/s; a
    ``pcie_gbps`` of 0 takes the hardware table's)."""
    return ck.Storage(gpu=gpu, pcie_gbs=pcie_gbps / 8 or None, serialise_gbs=serialise_gbps / 8,
                      node_gbs=node_gbps / 8, aggregate_gbs=aggregate_gbps / 8, plan_s_per_rank=plan_s_per_rank)  # fmt: skip


@experiment(
    "checkpoint",
    version="1",
    small={"method": list(ck.METHODS), "gpus": [1024, 4096]},
    params=[
        Param(
            "params_b",
            405.0,
            "",
            low=0.1,
            high=10_000.0,
            log=True,
            label="parameters (billions)",
            doc="model parameters (billions)",
        ),
        Param("gpus", 1024, "", low=1, high=1e6, log=True, label="GPUs", doc="GPUs of the job (a multiple of tp * pp)"),
        Param("tp", 8, "", low=1, high=64, doc="tensor parallelism"),
        Param("pp", 16, "", low=1, high=256, doc="pipeline parallelism"),
        Param("method", "bytecheckpoint", choices=ck.METHODS, seeded=False, doc="checkpointing system"),
        Param("interval_s", 0.0, "s", low=0.0, high=1e7, doc="work between checkpoints (0: the ETTR optimum)"),
        Param("reshard_tp", 2, "", low=1, high=64, doc="load into tp x this (resharding)"),
        Param("node_gbps", 200.0, "Gbit/s", low=0.1, high=1e5, log=True, doc="one node's link to storage"),
        Param("aggregate_gbps", 16_000.0, "Gbit/s", low=1.0, high=1e7, log=True, doc="storage system total bandwidth"),
        Param("serialise_gbps", 32.0, "Gbit/s", low=0.1, high=1e5, log=True, doc="serialisation per rank"),
        Param("pcie_gbps", 0.0, "Gbit/s", low=0.0, high=1e5, doc="device-to-host per GPU (0: the hardware table)"),
        Param("plan_s_per_rank", 2e-4, "s", low=0.0, high=0.1, doc="save planning per rank of the job"),
        Param("gpu", "H100-SXM", doc="GPU (hardware table)"),
    ],
)
def checkpoint(*, params_b, gpus, tp, pp, method, interval_s, reshard_tp, node_gbps, aggregate_gbps, serialise_gbps,
               pcie_gbps, plan_s_per_rank, gpu, seed):  # fmt: skip
    """Stall, save and load seconds and ETTR of one job checkpointed by one method."""
    del seed  # deterministic
    st = storage_of(gpu=gpu, pcie_gbps=pcie_gbps, serialise_gbps=serialise_gbps, node_gbps=node_gbps,
                    aggregate_gbps=aggregate_gbps, plan_s_per_rank=plan_s_per_rank)  # fmt: skip
    p = params_b * 1e9
    lay = ck.Layout.for_gpus(gpus, tp, pp)
    s = ck.save_time(p, lay, method, st)
    if lay.dp % reshard_tp:
        raise ValueError(f"reshard_tp must divide dp = {lay.dp} (the job keeps its GPUs), got {reshard_tp}")
    new = ck.Layout(tp * reshard_tp, pp, lay.dp // reshard_tp)
    row = ck.ettr_table(p, [gpus], (method,), st, tp=tp, pp=pp, interval_s=interval_s or None).iloc[0]
    return {
        "stall_s": s["stall"],
        "save_s": s["save"],
        "copy_s": s["copy"],
        "upload_s": s["upload"],
        "shard_gb": s["bytes"] / 1e9,
        "load_s": float(row.load_s),
        "reshard_load_s": ck.load_time(p, lay, new, method, st)["load"],
        "optimal_interval_s": float(row.interval_s),
        "young_daly_s": float(row.young_daly_s),
        "ettr": float(row.ettr),
        "checkpoint_loss": float(row.checkpoint_loss),
    }
