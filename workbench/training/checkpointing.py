"""Checkpoint stall, save and load time per rank, and what they do to effective training time (issue 27, part 3).

ByteCheckpoint (Wan et al., NSDI'25; arXiv 2407.20143v3, the NSDI version: "an average reduction of 54.20x" in
runtime checkpoint stalls, saves up to 9.96x and loads up to 8.80x faster than PyTorch DCP and Megatron MCP, abstract;
the first arXiv version, "A Unified Checkpointing System for LLM Development", reported other numbers) makes only
the device-to-host copy blocking and pipelines serialisation and upload behind training, caches its save plan, and
reshards at load time reading only the bytes each new rank needs.

**What a rank saves.** The model states of mixed-precision Adam: BF16 weights (2 bytes per parameter) and FP32
master weights and two moments (12 bytes per parameter), gradients not saved. A layout is ``tp x pp x dp`` over
``gpus``: the weights are split over ``tp * pp`` ranks and replicated over ``dp``; the optimizer states are split
over all ranks (a distributed optimizer). Saved once: ``balanced`` spreads the weights' single copy over the
``dp`` replicas (``2P/gpus`` each), otherwise the first replica's ranks save them (``2P/(tp pp)`` each).

**Phases of a save, per rank** (bytes ``B``; a node's ``gpus_per_node`` ranks share its storage link):

* ``copy``: device to host over the GPU's PCIe link, ``B / pcie`` (blocking in every method);
* ``plan``: the save plan, ``plan_s_per_rank * gpus`` (a coordinator gathers every rank's metadata); blocking when
  not cached;
* ``serialise``: ``B / serialise_gbs``;
* ``upload``: the node's bytes through its link and the storage system's aggregate, shared max-min fairly by the
  nodes still writing (:meth:`Storage.upload_s`): every node gets ``min(node link, aggregate / nodes)`` while all
  write; when some nodes hold more (DCP's first replica), they go on alone after the others finish, at
  ``min(node link, aggregate / those nodes)``.

Methods (:data:`METHODS`): ``"bytecheckpoint"`` (stall = copy, plus the plan on the first save only; serialise and
upload pipelined behind training, the save durable after copy + max(serialise, upload)); ``"dcp"`` and ``"mcp"``
(the baselines as blocking saves: plan, copy, serialise and upload one after another, all stalling training; DCP
saves the replicated weights from the first data-parallel replica, MCP's fully parallel save balances them).

**Load with resharding** (:func:`load_time`): each new rank needs its new shard; ByteCheckpoint reads exactly those
byte ranges and pipelines download, deserialisation and the host-to-device copy; the baselines read every old shard
file that overlaps the new shard (a new ``tp``/``pp`` finer than the old reads whole coarser files: amplification
``max(1, new/old)`` per dimension) and run the phases one after another.

**Effective training time** (:func:`ettr_table`): the stall is the failures model's ``checkpoint_s``, the rest of
the save its ``checkpoint_lag_s`` (the time until the checkpoint is durable), the load replaces the 60 s load
inside the restart (:class:`~workbench.training.failures.Recovery`), and the interval is the ETTR-optimal one
(:func:`~workbench.training.failures.optimal_interval_s`), at least one iteration and at least the asynchronous
save (a save does not start before the previous one is durable).

Every bandwidth is a parameter of :class:`Storage` with its source; the defaults are stated assumptions where no
measurement was available (each says so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .._contracts import AnyOf, Array, Choice, Int, Items, Real, accepts
from .._validate import integer, nonnegative, one_of, positive
from ..serving.specs import gpu as hardware_gpu
from . import failures as fl

__all__ = [
    "METHODS",
    "Storage",
    "Layout",
    "shard_bytes",
    "save_time",
    "load_time",
    "ettr_table",
    "ettr_curve",
    "BYTES_PER_PARAM",
]

METHODS = ("bytecheckpoint", "dcp", "mcp")
#: Saved bytes per parameter: BF16 weights (2) + FP32 master weights and Adam's two moments (12).
BYTES_PER_PARAM = {"weights": 2.0, "optimizer": 12.0}


@accepts()
@dataclass(frozen=True)
class Storage:
    """Bandwidths (GB/s = 1e9 bytes/s) and fixed costs of the checkpoint path; every default with its source.

    Parameters
    ----------
    pcie_gbs : float, optional
        Device-to-host per GPU; default: one direction of the GPU's PCIe link from the hardware table
        (``datasets/serving_specs/gpus.csv``: H100 PCIe Gen5 x16, 128 GB/s bidirectional -> 64 GB/s).
    serialise_gbs : float
        Serialisation per rank (host memory to a byte buffer); 4 GB/s is an assumption (a memory-copy-speed
        tensor serialiser on one CPU core), not a measurement.
    node_gbs : float
        One node's link to the storage system: 25 GB/s = one 200 Gb/s front-end NIC per node (an assumption: DGX
        H100 has ConnectX-7 front-end ports for storage; the NIC actually dedicated to storage varies by site).
    aggregate_gbs : float
        The storage system's total write (and read) bandwidth: 2,000 GB/s, the sustained throughput Meta reports
        for Llama 3's checkpoint storage (Tectonic; "2 TB/s sustained, 7 TB/s peak", Llama 3 paper arXiv 2407.21783,
        §3.3.1).
    plan_s_per_rank : float
        Save planning per rank of the job (metadata gathered and checked by a coordinator): 0.2 ms per rank, an
        assumption (DCP's planning all-gathers every rank's plan; ByteCheckpoint caches it after the first save).
    gpus_per_node : int
        Ranks sharing a node's storage link (8, DGX H100).
    """

    gpu: str = "H100-SXM"
    pcie_gbs: float | None = None
    serialise_gbs: float = 4.0
    node_gbs: float = 25.0
    aggregate_gbs: float = 2000.0
    plan_s_per_rank: float = 2e-4
    gpus_per_node: int = 8

    def __post_init__(self) -> None:
        if self.pcie_gbs is None:
            g = hardware_gpu(self.gpu)
            if not g.pcie_gbps or math.isnan(g.pcie_gbps):
                raise ValueError(f"GPU {self.gpu!r} has no pcie_gbps in the hardware table; pass pcie_gbs")
            object.__setattr__(self, "pcie_gbs", g.pcie_bytes_per_s / 1e9)
        for f in ("pcie_gbs", "serialise_gbs", "node_gbs", "aggregate_gbs"):
            positive(f, getattr(self, f))
        nonnegative("plan_s_per_rank", self.plan_s_per_rank)
        integer("gpus_per_node", self.gpus_per_node, minimum=1)

    @accepts()
    def upload_gbs(self, gpus: int) -> float:
        """Bandwidth of one node's upload when every node of a ``gpus``-GPU job writes at once."""
        nodes = max(1, math.ceil(gpus / self.gpus_per_node))
        return min(self.node_gbs, self.aggregate_gbs / nodes)

    @accepts(big_bytes=Real(ge=0.0), small_bytes=Real(ge=0.0), big_nodes=Int(ge=1))
    def upload_s(self, gpus: int, big_bytes: float, small_bytes: float, big_nodes: int) -> float:
        """Seconds until the busiest node has written its ``big_bytes`` when ``big_nodes`` of the ``gpus``-GPU job's
        nodes write that much and the others ``small_bytes`` (at most ``big_bytes``), all starting together, each
        node capped by its link and the nodes writing sharing the aggregate equally (max-min fair).

        Examples
        --------
        >>> st = Storage(pcie_gbs=50.0, node_gbs=25.0, aggregate_gbs=100.0, gpus_per_node=8)   # 16 nodes: 6.25 each
        >>> st.upload_s(128, 50e9, 50e9, 16)                # every node 50 GB at 6.25 GB/s
        8.0
        >>> st.upload_s(128, 50e9, 10e9, 2)                 # 10 GB each in 1.6 s, then 40 GB at 25 GB/s (node cap)
        3.2
        """
        nodes = max(1, math.ceil(gpus / self.gpus_per_node))
        big_nodes = min(big_nodes, nodes)
        small_bytes = min(small_bytes, big_bytes)
        together = min(self.node_gbs, self.aggregate_gbs / nodes) * 1e9
        if big_nodes == nodes or small_bytes == big_bytes:
            return big_bytes / together
        alone = min(self.node_gbs, self.aggregate_gbs / big_nodes) * 1e9
        return small_bytes / together + (big_bytes - small_bytes) / alone


@accepts()
@dataclass(frozen=True)
class Layout:
    """A parallel layout: ``tp * pp * dp`` GPUs.

    Examples
    --------
    >>> Layout(8, 16, 8).gpus
    1024
    """

    tp: int
    pp: int
    dp: int

    def __post_init__(self) -> None:
        for f in ("tp", "pp", "dp"):
            integer(f, getattr(self, f), minimum=1)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

    @classmethod
    @accepts()
    def for_gpus(cls, gpus: int, tp: int = 8, pp: int = 16) -> Layout:
        """``tp x pp`` model parallelism and the rest data-parallel (``gpus`` a multiple of ``tp * pp``)."""
        gpus = integer("gpus", gpus, minimum=1)
        if gpus % (tp * pp):
            raise ValueError(f"gpus must be a multiple of tp * pp = {tp * pp}, got {gpus}")
        return cls(tp, pp, gpus // (tp * pp))


@accepts()
def shard_bytes(params: float, layout: Layout, balanced: bool = True) -> float:
    """Bytes the busiest rank saves (see the module docstring).

    Examples
    --------
    >>> shard_bytes(1e9, Layout(2, 2, 4)) / 1e9        # 14 GB over 16 ranks
    0.875
    >>> shard_bytes(1e9, Layout(2, 2, 4), balanced=False) / 1e9  # 2 GB of weights over 4 ranks + 12 GB / 16
    1.25
    """
    p = positive("params", params)
    opt = BYTES_PER_PARAM["optimizer"] * p / layout.gpus
    w = BYTES_PER_PARAM["weights"] * p / (layout.gpus if balanced else layout.tp * layout.pp)
    return opt + w


@accepts()
def save_time(
    params: float,
    layout: Layout,
    method: str = "bytecheckpoint",
    storage: Storage | None = None,
    *,
    first: bool = False,
) -> dict[str, float]:
    """One save's phases (seconds, the busiest rank), its ``stall`` (training blocked) and ``save`` (until durable).

    ``first``: the first save of a job (ByteCheckpoint plans it; later saves reuse the cached plan).

    Examples
    --------
    >>> st = Storage(pcie_gbs=50.0, serialise_gbs=5.0, node_gbs=20.0, aggregate_gbs=1e6, plan_s_per_rank=0.0,
    ...              gpus_per_node=8)
    >>> t = save_time(8e9, Layout(1, 1, 8), "bytecheckpoint", st)   # 14 GB per rank, 112 GB per node
    >>> round(t["copy"], 2), round(t["upload"], 2), round(t["stall"], 2), round(t["save"], 2)
    (0.28, 5.6, 0.28, 5.88)
    >>> round(save_time(8e9, Layout(1, 1, 8), "mcp", st)["stall"], 2)   # copy + serialise + upload, blocking
    8.68
    """
    one_of("method", method, METHODS)
    st = storage if storage is not None else Storage()
    pcie = float(st.pcie_gbs or 0.0)  # resolved by Storage.__post_init__
    b = shard_bytes(params, layout, balanced=method != "dcp")
    node = min(st.gpus_per_node, layout.gpus)
    if method == "dcp":  # the first replica's nodes hold the weights, the others only optimizer shards
        other = BYTES_PER_PARAM["optimizer"] * params / layout.gpus
        replica = layout.tp * layout.pp  # ranks of the first replica
        big_nodes = max(1, math.ceil(replica / node))
        big = b * min(node, replica) + other * max(0, node - replica)
        upload = st.upload_s(layout.gpus, big, other * node, big_nodes)
    else:
        upload = st.upload_s(layout.gpus, b * node, b * node, 1)
    phases = {
        "bytes": b,
        "copy": b / (pcie * 1e9),
        "plan": st.plan_s_per_rank * layout.gpus,
        "serialise": b / (st.serialise_gbs * 1e9),
        "upload": upload,
    }
    if method == "bytecheckpoint":
        plan = phases["plan"] if first else 0.0
        stall = phases["copy"] + plan
        save = stall + max(phases["serialise"], phases["upload"])
    else:
        stall = save = phases["plan"] + phases["copy"] + phases["serialise"] + phases["upload"]
    return {**phases, "stall": stall, "save": save}


@accepts()
def load_time(
    params: float, saved: Layout, loaded: Layout, method: str = "bytecheckpoint", storage: Storage | None = None
) -> dict[str, float]:
    """Loading a checkpoint saved under ``saved`` into ``loaded`` (seconds, the busiest rank).

    Each new rank needs its weights shard (``2P/(tp pp)``) and its optimizer shard (``12P/gpus``).
    ``amplification`` is the read bytes over the needed bytes (1 for ByteCheckpoint; for the baselines
    ``max(1, tp_new/tp_old) * max(1, pp_new/pp_old)`` when the layout changes).

    Examples
    --------
    >>> st = Storage(pcie_gbs=50.0, serialise_gbs=5.0, node_gbs=20.0, aggregate_gbs=1e6, gpus_per_node=8)
    >>> a, b = Layout(2, 2, 2), Layout(4, 2, 1)
    >>> load_time(1e9, a, b, "dcp", st)["amplification"], load_time(1e9, a, b, "bytecheckpoint", st)["amplification"]
    (2.0, 1.0)
    """
    one_of("method", method, METHODS)
    st = storage if storage is not None else Storage()
    p = positive("params", params)
    need = BYTES_PER_PARAM["weights"] * p / (loaded.tp * loaded.pp) + BYTES_PER_PARAM["optimizer"] * p / loaded.gpus
    amp = 1.0
    if method != "bytecheckpoint":
        amp = max(1.0, loaded.tp / saved.tp) * max(1.0, loaded.pp / saved.pp)
    read = need * amp
    node = min(st.gpus_per_node, loaded.gpus)
    phases = {
        "bytes": need,
        "amplification": amp,
        "download": read * node / (st.upload_gbs(loaded.gpus) * 1e9),
        "deserialise": read / (st.serialise_gbs * 1e9),
        "copy": need / (float(st.pcie_gbs or 0.0) * 1e9),
    }
    parts = (phases["download"], phases["deserialise"], phases["copy"])
    phases["load"] = max(parts) if method == "bytecheckpoint" else sum(parts)
    return phases


#: The restart's phases other than the checkpoint load (failures.Recovery's 270 s restart minus its 60 s load).
RESTART_WITHOUT_LOAD_S = 210.0


@accepts(
    methods=Items(Choice("bytecheckpoint", "dcp", "mcp"), min_size=1),
    gpus=AnyOf(Int(ge=1, le=10**7), Array(integer=True, gt=0, min_size=1)),
)
def ettr_table(
    params: float,
    gpus,
    methods=METHODS,
    storage: Storage | None = None,
    *,
    tp: int = 8,
    pp: int = 16,
    recovery: fl.Recovery | None = None,
    interval_s: float | None = None,
) -> pd.DataFrame:
    """ETTR under failures (Llama 3's rates) per job size and method, at the optimal interval or a given one.

    One row per (gpus, method): ``stall_s``, ``save_s``, ``load_s``, ``interval_s`` (the optimum unless given),
    ``young_daly_s`` (``sqrt(2 stall MTBF)``), ``ettr`` and ``checkpoint_loss`` (the fraction of wall time stalled
    plus lost to rollback).

    Examples
    --------
    >>> t = ettr_table(70e9, [1024], methods=("bytecheckpoint", "dcp"), tp=8, pp=8)
    >>> bool(t.set_index("method").ettr["bytecheckpoint"] > t.set_index("method").ettr["dcp"])
    True
    """
    st = storage if storage is not None else Storage()
    base = recovery if recovery is not None else fl.Recovery()
    rows = []
    for n in np.atleast_1d(gpus):
        lay = Layout.for_gpus(int(n), tp, pp)
        lf = sum(fl.job_rates_per_s(lay.gpus, gpus_per_host=st.gpus_per_node).values())
        lp = fl.planned_rate_per_s(lay.gpus, gpus_per_host=st.gpus_per_node)
        for m in methods:
            s = save_time(params, lay, m, st)
            load = load_time(params, lay, lay, m, st)["load"]
            rec = replace(
                base,
                checkpoint_s=s["stall"],
                checkpoint_lag_s=s["save"] - s["stall"],
                restart_s=RESTART_WITHOUT_LOAD_S + load,
            )
            floor = max(base.iteration_s, s["save"] - s["stall"])
            tau = interval_s if interval_s is not None else max(fl.optimal_interval_s(lf, rec, lp), floor)
            rec = replace(rec, interval_s=float(tau))
            out = fl.ettr(lf, rec, lp)
            rows.append(
                {
                    "gpus": lay.gpus,
                    "method": m,
                    "stall_s": s["stall"],
                    "save_s": s["save"],
                    "load_s": load,
                    "interval_s": float(tau),
                    "young_daly_s": fl.young_daly_s(max(s["stall"], 1e-9), 1 / (lf + lp)),
                    "ettr": out["ettr"],
                    "checkpoint_loss": out["checkpoint"] + out["lost_work"],
                }
            )
    return pd.DataFrame(rows)


@accepts(methods=Items(Choice("bytecheckpoint", "dcp", "mcp"), min_size=1), intervals_s=Array(gt=0.0, min_size=1))
def ettr_curve(
    params: float, gpus: int, intervals_s, methods=METHODS, storage: Storage | None = None, *, tp: int = 8, pp: int = 16
) -> pd.DataFrame:
    """ETTR vs checkpoint interval per method (one :func:`ettr_table` row per interval and method).

    Examples
    --------
    >>> t = ettr_curve(70e9, 1024, [60, 600], methods=("mcp",), tp=8, pp=8)
    >>> list(t.columns[:3]), len(t)
    (['gpus', 'method', 'stall_s'], 2)
    """
    frames = [ettr_table(params, [gpus], methods, storage, tp=tp, pp=pp, interval_s=float(t)) for t in intervals_s]
    return pd.concat(frames, ignore_index=True).sort_values(["method", "interval_s"], ignore_index=True)
