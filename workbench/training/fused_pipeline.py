"""Fused bidirectional pipelines for RLHF training (RLHFuse's intra-stage fusion): the task model, schedules, a lower
bound, and a reader and checker for the published schedules.

Zhong et al., "RLHFuse: Efficient RLHF Training for Large Language Models with Inter- and Intra-Stage Fusion"
(NSDI 2025, arXiv 2409.13221) train the Actor and the Critic of an RLHF iteration at the same time on the same GPUs:
the Actor with ``pp0`` pipeline stages on GPUs ``0 .. pp0-1``, the Critic with ``pp1`` stages replicated
``pp0 / pp1`` times and laid on the GPUs in the reverse direction, so that each pipeline fills the other's bubbles.

**Task model** (an :class:`Instance`). Model 0 is the Actor (``m0`` micro-batches, forward ``f0`` per stage), models
``1 .. R`` are the Critic's replicas (``m1`` micro-batches each, forward ``f1``). Each micro-batch of a model is a
*chain* of ``2S`` tasks numbered as in the published traces: task ``p < S`` is the forward of stage ``p``, task
``p >= S`` the backward of stage ``2S-1-p`` (a backward takes twice its forward). The chain order is exactly the
pipeline dependencies: a forward after the previous stage's forward, the last stage's backward after its forward, a
backward after the next stage's backward. Stage ``s`` of the Actor runs on GPU ``s``; stage ``s`` of Critic replica
``r`` on GPU ``r*pp1 + pp1-1-s``. A GPU runs one task at a time. Activation memory (``mem0``/``mem1`` per
micro-batch and stage) is taken when a forward completes and released when the matching backward completes (the
traces' ``memory`` column: a GPU's activation memory after each task); peak memory is the largest such value.

**Schedules** (:class:`Schedule`: per task its model, micro-batch, task number, GPU, start and end):

- :func:`one_f_one_b` -- 1F1B for one model alone; makespan ``(m + p - 1) * 3f`` for ``m >= p``.
- :func:`sequential_1f1b` -- the unfused baseline: the Actor's 1F1B, then (after it ends) the Critic's replicas' 1F1B.
- :func:`greedy` -- a list schedule of the fused problem (Giffler-Thompson active-schedule decoder, priority the
  longest remaining path of a task's chain).
- :func:`anneal` -- simulated annealing over per-GPU task priority orders, each order decoded by the same compiled
  list scheduler (numba); seeded, deterministic for a given iteration count; a time budget is turned into an
  iteration count by timing the decoder first (the count is recorded in :attr:`Schedule.info`).

**Lower bound** (:func:`lower_bound`, the four terms of the authors' lower-bound tool): the critical path of a
micro-batch pipeline ``(m + p - 1) * 3f`` (largest over the models); all work spread evenly over the GPUs; one GPU's
work back to back ``m0*3f0 + m1*3f1``; and that GPU's work plus its unavoidable head (the earliest its first forward
can start, ``min(s0*f0, s1*f1)`` from its stage ``s0`` in the Actor and ``s1`` in the Critic) and tail (the shortest
chain of backward passes left after its last task, ``min(2*s0*f0, 2*s1*f1)``), largest over GPUs.

**Published schedules** (:func:`read_schedule`, :func:`published_schedule`, :func:`check_schedule`): the traces of
``rlhfuse-schedules`` (see its PROVENANCE) are read item by item; a schedule is valid iff every task appears once,
on its GPU, with its duration, after its predecessor, and no two tasks overlap on a GPU. The makespan and peak
memory are recomputed from the tasks. A violation raises :class:`ScheduleError` naming the file line and the two
tasks.

The compiled kernels (decoder, fixed-order timing, annealing loop) are in :mod:`._fused_kernels`. This module is
longer than ~500 lines because the task model, the schedules, the bound and the checker share one flat layout of
the task arrays and its conventions (task numbering, GPU placement, signed memory); split, each part would
re-derive them. Like every model package it imports nothing from ``viz``, ``experiments``, ``reproductions`` or
``widgets``.
"""

from __future__ import annotations

import functools
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import data
from .._contracts import accepts, output
from .._rng import generator
from .._validate import integer, positive
from ..tables import TableError, read_table
from ._fused_kernels import _anneal_kernel, _decode, _times_from_orders

__all__ = [
    "DATA_DIR",
    "Instance",
    "InstanceError",
    "LowerBound",
    "Schedule",
    "ScheduleCheck",
    "ScheduleError",
    "anneal",
    "check_schedule",
    "greedy",
    "load_instances",
    "lower_bound",
    "one_f_one_b",
    "published_schedule",
    "read_schedule",
    "sequential_1f1b",
    "task_table",
]

#: Folder of the published instances and schedules on the data search path.
DATA_DIR = "rlhfuse-schedules"
_INSTANCE_COLUMNS = ("exp", "pp0", "pp1", "m0", "m1", "f0", "f1", "mem0", "mem1")


class InstanceError(ValueError):
    """An instance (or a row of ``instances.csv``) outside the allowed ranges; the message names the file line."""


class ScheduleError(ValueError):
    """A schedule that is malformed or invalid; the message names the file line (or item) and the tasks involved."""


# ----------------------------------------------------------------------------------------------------------------------
# Instances and the task model
# ----------------------------------------------------------------------------------------------------------------------


@accepts()
@dataclass(frozen=True)
class Instance:
    """One fused-pipeline problem: the Actor (``pp0`` stages, ``m0`` micro-batches, forward ``f0``, activation
    memory ``mem0`` per micro-batch and stage) and the Critic (``pp1`` stages replicated ``pp0 // pp1`` times,
    ``m1`` micro-batches per replica, ``f1``, ``mem1``) on ``pp0`` GPUs. ``f0``/``f1`` are integers (time units);
    a backward takes ``2f``. ``exp`` is the instance's number in the published evaluation (``-1``: none).

    Examples
    --------
    >>> inst = Instance(pp0=4, pp1=2, m0=4, m1=2, f0=2, f1=1)
    >>> inst.replicas, inst.n_tasks
    (2, 48)
    """

    pp0: int
    pp1: int
    m0: int
    m1: int
    f0: int
    f1: int
    mem0: float = 1.0
    mem1: float = 1.0
    exp: int = -1

    def __post_init__(self) -> None:
        for name in ("pp0", "pp1", "m0", "m1", "f0", "f1"):
            integer(name, getattr(self, name), minimum=1)
        for name in ("mem0", "mem1"):
            if not (isinstance(getattr(self, name), (int, float)) and getattr(self, name) >= 0):
                raise InstanceError(f"{name} must be a number >= 0, got {getattr(self, name)!r}")
        if self.pp1 > self.pp0 or self.pp0 % self.pp1:
            raise InstanceError(
                f"pp1 must divide pp0 (the Critic is replicated pp0/pp1 times), got {self.pp1}, {self.pp0}"
            )

    @property
    def replicas(self) -> int:
        """Replicas of the Critic (``pp0 // pp1``)."""
        return self.pp0 // self.pp1

    @property
    def gpus(self) -> int:
        """GPUs (``pp0``)."""
        return self.pp0

    @property
    def n_tasks(self) -> int:
        """Tasks: ``2 pp0 m0`` of the Actor plus ``2 pp1 m1`` per Critic replica."""
        return 2 * self.pp0 * self.m0 + self.replicas * 2 * self.pp1 * self.m1

    @property
    def work(self) -> int:
        """Total busy time of all tasks (``3f`` per micro-batch and stage)."""
        return 3 * self.f0 * self.pp0 * self.m0 + self.replicas * 3 * self.f1 * self.pp1 * self.m1


def _instances_path() -> Path:
    return data.require(f"{DATA_DIR}/instances.csv", hint="(the RLHFuse published instances, see its PROVENANCE.md)")


@accepts()
def load_instances(path: str | os.PathLike | None = None) -> tuple[Instance, ...]:
    """The published instances (``rlhfuse-schedules/instances.csv`` on the data search path, or ``path``), in file
    order. A missing column or a value out of range raises :class:`InstanceError` naming the file and line.

    Examples
    --------
    >>> [i.exp for i in load_instances()][:3]  # doctest: +SKIP
    [0, 1, 2]
    """
    p = Path(path) if path is not None else _instances_path()
    try:
        table = read_table(p, what="RLHF instance table")
    except TableError as exc:
        raise InstanceError(str(exc)) from None
    if table.header != _INSTANCE_COLUMNS:
        raise InstanceError(f"{p}:1: header must be {','.join(_INSTANCE_COLUMNS)}, got {','.join(table.header)}")
    out = []
    for lineno, row in zip(table.lines, table.rows, strict=True):
        values: dict[str, Any] = {}
        for name, text in zip(_INSTANCE_COLUMNS, row, strict=True):
            try:
                values[name] = float(text) if name.startswith("mem") else int(text)
            except ValueError:
                kind = "a number" if name.startswith("mem") else "an integer"
                raise InstanceError(f"{p}:{lineno}: {name} must be {kind}, got {text!r}") from None
        try:
            out.append(Instance(**values))
        except (TypeError, ValueError) as exc:
            raise InstanceError(f"{p}:{lineno}: {exc}") from None
    return tuple(out)


@dataclass(frozen=True)
class _Layout:
    """Flat task arrays of an instance (task id = chain start + position in chain)."""

    chain_start: np.ndarray
    chain_len: np.ndarray
    chain_model: np.ndarray
    chain_mb: np.ndarray
    model: np.ndarray
    mb: np.ndarray
    task: np.ndarray
    stage: np.ndarray
    gpu: np.ndarray
    dur: np.ndarray
    mem: np.ndarray  # signed: +mem for a forward, -mem for a backward
    tail: np.ndarray  # this task plus the rest of its chain


@functools.lru_cache(maxsize=64)
def _layout(inst: Instance) -> _Layout:
    r = inst.replicas
    n_chains = inst.m0 + r * inst.m1
    chain_model = np.concatenate([np.zeros(inst.m0, np.int64), np.repeat(np.arange(1, r + 1), inst.m1)])
    chain_mb = np.concatenate([np.arange(inst.m0), np.tile(np.arange(inst.m1), r)]).astype(np.int64)
    stages = np.where(chain_model == 0, inst.pp0, inst.pp1)
    chain_len = 2 * stages
    chain_start = np.concatenate([[0], np.cumsum(chain_len)[:-1]]).astype(np.int64)
    n = int(chain_len.sum())
    chain = np.repeat(np.arange(n_chains), chain_len)
    task = np.arange(n) - chain_start[chain]
    s_count = stages[chain]
    stage = np.where(task < s_count, task, 2 * s_count - 1 - task)
    model = chain_model[chain]
    actor = model == 0
    gpu = np.where(actor, stage, (model - 1) * inst.pp1 + inst.pp1 - 1 - stage)
    f = np.where(actor, inst.f0, inst.f1)
    fwd = task < s_count
    dur = np.where(fwd, f, 2 * f).astype(np.int64)
    mem = np.where(actor, inst.mem0, inst.mem1) * np.where(fwd, 1.0, -1.0)
    # remaining path: reverse cumulative sum of durations within each chain
    csum = np.cumsum(dur)
    chain_end = csum[chain_start + chain_len - 1]
    tail = chain_end[chain] - csum + dur
    return _Layout(
        chain_start, chain_len.astype(np.int64), chain_model, chain_mb, model.astype(np.int64), chain_mb[chain],
        task.astype(np.int64), stage.astype(np.int64), gpu.astype(np.int64), dur, mem, tail.astype(np.int64),
    )  # fmt: skip


@accepts()
def task_table(inst: Instance):
    """Every task of ``inst`` as a DataFrame (task id order): model, micro-batch, task number, stage, direction,
    GPU, duration and signed activation memory (+ taken by a forward, - released by its backward).

    Examples
    --------
    >>> t = task_table(Instance(2, 2, 2, 2, 5, 4))
    >>> len(t), sorted(set(t["model"]))
    (16, [0, 1])
    """
    import pandas as pd

    lay = _layout(inst)
    s = np.where(lay.model == 0, inst.pp0, inst.pp1)
    return pd.DataFrame(
        {
            "model": lay.model,
            "microbatch": lay.mb,
            "task": lay.task,
            "stage": lay.stage,
            "direction": np.where(lay.task < s, "forward", "backward"),
            "gpu": lay.gpu,
            "duration": lay.dur,
            "memory": lay.mem,
        }
    )


# ----------------------------------------------------------------------------------------------------------------------
# Lower bound
# ----------------------------------------------------------------------------------------------------------------------


@output
@dataclass(frozen=True)
class LowerBound:
    """The four lower-bound terms of an instance and their maximum (``value``)."""

    critical_path: float
    average_work: float
    gpu_work: float
    gpu_work_head_tail: float

    @property
    def value(self) -> float:
        """The bound: the largest of the four terms."""
        return max(self.critical_path, self.average_work, self.gpu_work, self.gpu_work_head_tail)


@accepts()
def lower_bound(inst: Instance) -> LowerBound:
    """The four-term lower bound on the makespan of any valid schedule of ``inst`` (see the module docstring).

    Examples
    --------
    >>> b = lower_bound(Instance(pp0=4, pp1=4, m0=8, m1=8, f0=2, f1=1))
    >>> b.critical_path, b.average_work, b.gpu_work, b.gpu_work_head_tail, b.value
    (66, 72.0, 72, 78, 78)
    """
    cp = max((inst.m0 + inst.pp0 - 1) * 3 * inst.f0, (inst.m1 + inst.pp1 - 1) * 3 * inst.f1)
    per_gpu = inst.m0 * 3 * inst.f0 + inst.m1 * 3 * inst.f1
    g = np.arange(inst.pp0)
    s1 = inst.pp1 - 1 - g % inst.pp1  # the Critic's stage on GPU g
    head = np.minimum(g * inst.f0, s1 * inst.f1)
    tail = np.minimum(2 * g * inst.f0, 2 * s1 * inst.f1)
    return LowerBound(cp, inst.work / inst.pp0, per_gpu, per_gpu + int((head + tail).max()))


# ----------------------------------------------------------------------------------------------------------------------
# Schedules
# ----------------------------------------------------------------------------------------------------------------------


@output
@dataclass(frozen=True)
class Schedule:
    """A schedule: per task its ``model`` (0 Actor, 1.. Critic replicas), ``microbatch``, ``task`` number, ``gpu``,
    ``start`` and ``end``. Read from a file it keeps each item's ``line`` (1-based) and recorded ``memory`` and the
    file's ``summary`` blocks; a computed one records how it was made in ``info``."""

    model: np.ndarray
    microbatch: np.ndarray
    task: np.ndarray
    gpu: np.ndarray
    start: np.ndarray
    end: np.ndarray
    memory: np.ndarray | None = None
    line: np.ndarray | None = None
    path: str | None = None
    summary: dict[str, dict[str, float]] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def makespan(self) -> float:
        """The latest end of a task."""
        return float(self.end.max()) if len(self.end) else 0.0

    def __len__(self) -> int:
        return len(self.start)


def _from_starts(inst: Instance, start: np.ndarray, **info: Any) -> Schedule:
    lay = _layout(inst)
    start = np.asarray(start, np.int64)
    return Schedule(lay.model, lay.mb, lay.task, lay.gpu, start, start + lay.dur, info=dict(info))


def _greedy_priority(inst: Instance) -> np.ndarray:
    lay = _layout(inst)
    chain = np.repeat(np.arange(len(lay.chain_start)), lay.chain_len)
    return lay.tail - chain / (len(lay.chain_start) + 1.0)


def _start_priorities(inst: Instance) -> dict[str, np.ndarray]:
    """Heuristic priority orders annealing may start from: longest remaining path (:func:`greedy`), backwards
    first, earliest micro-batch first, earliest micro-batch with backwards first, and progress through each model's
    own 1F1B schedule (a task's 1F1B start over that schedule's makespan: the two models interleaved in step)."""
    lay = _layout(inst)
    cp = _greedy_priority(inst)
    backward = lay.task >= np.where(lay.model == 0, inst.pp0, inst.pp1)
    by_mb = -(lay.mb * 1000.0) + lay.tail / 1e4
    actor = one_f_one_b(inst.pp0, inst.m0, inst.f0)
    critic = one_f_one_b(inst.pp1, inst.m1, inst.f1)
    progress = np.empty(inst.n_tasks)
    progress[lay.model == 0] = actor.start / actor.makespan
    progress[lay.model > 0] = np.tile(critic.start / critic.makespan, inst.replicas)  # replicas in model order
    return {
        "longest-path": cp,
        "backward-first": cp + 1e6 * backward,
        "micro-batch": by_mb,
        "micro-batch-backward-first": by_mb + 1e6 * backward,
        "1f1b-progress": -progress,
    }


def _run_decode(inst: Instance, prio: np.ndarray, memory_limit: float = np.inf) -> tuple[np.ndarray, int, float, int]:
    lay = _layout(inst)
    start = np.zeros(len(lay.dur), np.int64)
    ms, peak, comp = _decode(
        np.asarray(prio, np.float64), lay.chain_start, lay.chain_len, lay.gpu, lay.dur, lay.mem, inst.gpus,
        float(memory_limit), start,
    )  # fmt: skip
    return start, int(ms), float(peak), int(comp)


def _limit(memory_limit: float | None) -> float:
    # a hair of slack so that sums of activation memories equal to the limit fit despite rounding
    return np.inf if memory_limit is None else positive("memory_limit", memory_limit) + 1e-9


@accepts()
def greedy(inst: Instance, *, memory_limit: float | None = None) -> Schedule:
    """A greedy list schedule of the fused problem: whenever a GPU can start work, the ready task whose chain has the
    longest remaining path goes first (earlier micro-batches on ties), as an active schedule (Giffler-Thompson).
    With ``memory_limit`` a forward waits while it would lift its GPU's activation memory above the limit (lifted
    if that deadlocks; ``info["peak_memory"]`` tells).

    Examples
    --------
    >>> inst = Instance(pp0=2, pp1=2, m0=2, m1=2, f0=1, f1=1)
    >>> greedy(inst).makespan >= lower_bound(inst).value
    True
    """
    limit = _limit(memory_limit)
    start, _, peak, _ = _run_decode(inst, _greedy_priority(inst), limit)
    return _from_starts(inst, start, method="greedy", peak_memory=peak, memory_limit=memory_limit)


def _one_model_orders(stages: int, m: int) -> list[list[tuple[int, int]]]:
    """Per stage the 1F1B sequence of (micro-batch, task number): ``stages - 1 - s`` warm-up forwards, then one
    forward one backward, then the remaining backwards."""
    seqs = []
    for s in range(stages):
        fwd = [(b, s) for b in range(m)]
        bwd = [(b, 2 * stages - 1 - s) for b in range(m)]
        warm = min(stages - 1 - s, m)
        seq = fwd[:warm]
        for i in range(m - warm):
            seq += [fwd[warm + i], bwd[i]]
        seq += bwd[m - warm :]
        seqs.append(seq)
    return seqs


def _schedule_from_orders(inst: Instance, per_gpu: list[list[int]], **info: Any) -> Schedule:
    lay = _layout(inst)
    chain_of = np.repeat(np.arange(len(lay.chain_start)), lay.chain_len)
    order = np.array([t for seq in per_gpu for t in seq], np.int64)
    ptr = np.concatenate([[0], np.cumsum([len(s) for s in per_gpu])]).astype(np.int64)
    start = np.zeros(len(lay.dur), np.int64)
    ms = _times_from_orders(order, ptr, chain_of, lay.chain_start, lay.dur, start)
    if ms < 0:  # pragma: no cover - the 1F1B orders never deadlock
        raise RuntimeError("per-GPU orders deadlock")
    return _from_starts(inst, start, **info)


@accepts()
def one_f_one_b(stages: int, microbatches: int, forward: int = 1, memory: float = 1.0) -> Schedule:
    """1F1B for one model alone on ``stages`` GPUs: stage ``s`` runs ``stages - 1 - s`` warm-up forwards, then
    alternates one forward and one backward, then drains its backwards. With ``microbatches >= stages`` the makespan
    is ``(microbatches + stages - 1) * 3 * forward``.

    Examples
    --------
    >>> one_f_one_b(4, 8, forward=2).makespan
    66.0
    """
    stages = integer("stages", stages, minimum=1)
    microbatches = integer("microbatches", microbatches, minimum=1)
    forward = integer("forward", forward, minimum=1)
    inst = Instance(stages, stages, microbatches, 1, forward, 1, memory, 0.0)
    lay = _layout(inst)
    per_gpu = [[int(lay.chain_start[b] + p) for b, p in seq] for seq in _one_model_orders(stages, microbatches)]
    full = _schedule_from_orders(inst, per_gpu, method="1f1b")
    keep = lay.model == 0
    return Schedule(
        full.model[keep], full.microbatch[keep], full.task[keep], full.gpu[keep], full.start[keep], full.end[keep],
        info={"method": "1f1b"},
    )  # fmt: skip


@accepts()
def sequential_1f1b(inst: Instance) -> Schedule:
    """The unfused baseline: the Actor trained alone with 1F1B on all GPUs, then (once it has finished) the Critic's
    replicas trained with 1F1B side by side. Makespan ``(m0 + pp0 - 1) 3 f0 + (m1 + pp1 - 1) 3 f1`` when the
    micro-batches fill the pipelines (``m >= p``).

    Examples
    --------
    >>> sequential_1f1b(Instance(pp0=4, pp1=2, m0=8, m1=4, f0=2, f1=1)).makespan
    81.0
    """
    lay = _layout(inst)
    actor = one_f_one_b(inst.pp0, inst.m0, inst.f0)
    critic = one_f_one_b(inst.pp1, inst.m1, inst.f1)
    start = np.zeros(len(lay.dur), np.int64)
    a = lay.model == 0
    start[a] = actor.start  # same task order (chain-major) as the Actor's rows of the layout
    offset = int(actor.makespan)
    n1 = len(critic.start)
    for r in range(inst.replicas):
        sel = np.flatnonzero(lay.model == r + 1)
        assert len(sel) == n1
        start[sel] = critic.start + offset
    return _from_starts(inst, start, method="sequential-1f1b")


def _orders_by_priority(inst: Instance, prio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lay = _layout(inst)
    counts = np.bincount(lay.gpu, minlength=inst.gpus).astype(np.int64)
    orders = np.full((inst.gpus, int(counts.max())), -1, np.int64)
    idx = np.lexsort((-prio, lay.gpu))  # by GPU, then priority descending
    k = 0
    for g in range(inst.gpus):  # a handful of GPUs
        orders[g, : counts[g]] = idx[k : k + counts[g]]
        k += counts[g]
    return orders, counts


@accepts()
def anneal(
    inst: Instance,
    *,
    seed: int = 0,
    iterations: int | None = None,
    time_budget_s: float | None = None,
    temperature: tuple[float, float] = (0.003, 0.0001),
    window: int | None = None,
    memory_limit: float | None = None,
    chains: int = 2,
) -> Schedule:
    """Simulated annealing over task priority orders, from the best of five heuristic orders (the :func:`greedy`
    one, backwards first, earliest micro-batch first, both, and progress through each model's own 1F1B).

    ``chains`` independent chains start from the best ``chains`` orders, the iterations split evenly between them;
    the best schedule found is returned (``info["start_order"]`` names its start). A state is one priority order of
    the tasks on each GPU; a move swaps two tasks at most ``window`` places apart in one GPU's order (default: a
    quarter of a GPU's tasks, at least 4); a state is evaluated by the compiled list-scheduling decoder of
    :func:`greedy`. The cost is the makespan plus a small weight (1/(micro-batches x 100)) on the sum of micro-batch
    completion times (to steer across
    makespan plateaus). With ``memory_limit`` the decoder holds forwards back as in :func:`greedy`, and a state whose
    decoding had to lift the limit pays 10 x its peak memory above the limit. Metropolis acceptance at a
    temperature falling geometrically from ``temperature[0]`` to ``temperature[1]`` times the greedy makespan. The
    best state found is returned.

    Deterministic for a given ``seed`` and ``iterations``. Give exactly one of ``iterations`` and ``time_budget_s``:
    a time budget is turned into an iteration count by timing the decoder, so runs with a budget are reproducible
    from the recorded ``info["iterations"]``.

    Examples
    --------
    >>> inst = Instance(pp0=4, pp1=2, m0=4, m1=2, f0=2, f1=1)
    >>> a = anneal(inst, seed=1, iterations=200)
    >>> a.makespan >= lower_bound(inst).value and a.makespan <= greedy(inst).makespan
    True
    """
    seed = integer("seed", seed, minimum=0, maximum=2**31 - 1)
    if (iterations is None) == (time_budget_s is None):
        raise ValueError("anneal needs exactly one of iterations (>= 0) and time_budget_s (> 0)")
    t_hi, t_lo = (positive("temperature[0]", temperature[0]), positive("temperature[1]", temperature[1]))
    per_gpu = inst.n_tasks // inst.gpus
    window = max(4, per_gpu // 4) if window is None else integer("window", window, minimum=1)
    chains = integer("chains", chains, minimum=1, maximum=5)
    lay = _layout(inst)
    limit = _limit(memory_limit)
    orders0 = _start_priorities(inst)
    starts = {k: _run_decode(inst, p, limit) for k, p in orders0.items()}

    def cost(k: str) -> float:
        return starts[k][1] + 10.0 * max(0.0, starts[k][2] - limit)

    ranked = sorted(starts, key=lambda k: (cost(k), k != "longest-path"))[:chains]
    if iterations is None:
        budget = positive("time_budget_s", time_budget_s)
        t = time.perf_counter()
        reps = 0
        while reps < 3 or time.perf_counter() - t < 0.05:  # the decoder's time per call
            _run_decode(inst, orders0[ranked[0]], limit)
            reps += 1
        per = (time.perf_counter() - t) / reps
        iterations = max(0, int(budget * 0.9 / per))
    iterations = integer("iterations", iterations, minimum=0)
    weight = 1.0 / (len(lay.chain_start) * 100.0)
    rng = generator(seed)
    best: tuple[float, int, str] | None = None
    for c, first in enumerate(ranked):  # independent chains from the best start orders, iterations split evenly
        n = iterations // len(ranked) + (c < iterations % len(ranked))
        prio0 = orders0[first]
        orders, counts = _orders_by_priority(inst, prio0)
        draws = (rng.integers(0, inst.gpus, n), rng.random(n), rng.integers(1, window + 1, n), rng.random(n))
        ms0 = starts[first][1]
        prio, accepted = _anneal_kernel(
            prio0.copy(), orders, counts, lay.chain_start, lay.chain_len, lay.gpu, lay.dur, lay.mem, inst.gpus,
            *draws, t_hi * ms0, t_lo * ms0, weight, limit, 10.0,
        )  # fmt: skip
        start, ms, peak, _ = _run_decode(inst, prio, limit)
        value = ms + 10.0 * max(0.0, peak - limit)
        if best is None or value < best[0]:
            best = (value, c, first)
            kept = (start, peak, int(accepted))
    assert best is not None
    start, peak, accepted = kept
    return _from_starts(
        inst, start, method="anneal", seed=seed, iterations=iterations, accepted=accepted, peak_memory=peak,
        memory_limit=memory_limit, start_order=best[2], window=window, chains=len(ranked),
    )  # fmt: skip


# ----------------------------------------------------------------------------------------------------------------------
# Reading and checking schedules
# ----------------------------------------------------------------------------------------------------------------------

_ITEM = re.compile(r"\[([^\[\]]*)\]")
_BLOCKS = ("Theoretically best", "Greedy", "Ours")


@accepts()
def read_schedule(path: str | os.PathLike) -> Schedule:
    """Read a published schedule: one line per GPU (line ``g+1`` is GPU ``g``) of items
    ``[model, micro-batch, task, start, end, memory]`` in execution order, then the summary blocks
    ("Theoretically best", "Greedy", "Ours": E2E time, peak memory, utilization, bubble rate) and the solver's
    run time. A malformed item raises :class:`ScheduleError` naming the file and line."""
    p = Path(path)
    cols: list[list[float]] = [[] for _ in range(6)]
    gpus: list[int] = []
    lines: list[int] = []
    summary: dict[str, dict[str, float]] = {}
    block: str | None = None
    gpu = 0
    with open(p, encoding="utf-8") as fh:
        text = fh.read().splitlines()
    for lineno, raw in enumerate(text, start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("["):
            if block is not None:
                raise ScheduleError(f"{p}:{lineno}: schedule line after the summary blocks")
            items = _ITEM.findall(line)
            rest = _ITEM.sub("", line).replace(",", "").strip()
            if rest:
                raise ScheduleError(f"{p}:{lineno}: unexpected text outside items: {rest[:40]!r}")
            for k, item in enumerate(items, start=1):
                parts = [x.strip() for x in item.split(",")]
                if len(parts) != 6:
                    raise ScheduleError(f"{p}:{lineno}: item {k} must have 6 fields, got {len(parts)}: [{item}]")
                try:
                    vals = [int(x) for x in parts[:3]] + [float(x) for x in parts[3:]]
                except ValueError:
                    raise ScheduleError(
                        f"{p}:{lineno}: item {k} is not [int, int, int, num, num, num]: [{item}]"
                    ) from None
                if min(vals[:3]) < 0 or vals[4] < vals[3]:
                    raise ScheduleError(
                        f"{p}:{lineno}: item {k} has a negative index or ends before it starts: [{item}]"
                    )
                for c, v in zip(cols, vals, strict=True):
                    c.append(v)
                gpus.append(gpu)
                lines.append(lineno)
            gpu += 1
            continue
        head = line.rstrip(":")
        if head in _BLOCKS:
            block = head
            summary[block] = {}
            continue
        key, _, value = line.partition(":")
        num = re.match(r"\s*([-+0-9.eE]+)\s*(%|ms)?\s*$", value)
        if not _ or num is None:
            raise ScheduleError(f"{p}:{lineno}: unreadable line {line[:60]!r}")
        v = float(num.group(1)) / (100.0 if num.group(2) == "%" else 1.0)
        name = key.strip().lower().replace(" ", "_")
        if block is None:
            raise ScheduleError(f"{p}:{lineno}: summary value before any block")
        if name == "time_usage":  # the solver's run time, after the last block
            summary["solver"] = {"time_ms": v}
        else:
            summary[block][name] = v
    if not gpus:
        raise ScheduleError(f"{p}: no schedule items")
    a = [np.asarray(c) for c in cols]
    return Schedule(
        a[0].astype(np.int64), a[1].astype(np.int64), a[2].astype(np.int64), np.asarray(gpus, np.int64), a[3], a[4],
        memory=a[5], line=np.asarray(lines, np.int64), path=str(p), summary=summary,
    )  # fmt: skip


@accepts()
def published_schedule(exp: int) -> Schedule:
    """The authors' published schedule of instance ``exp`` (``traces/trace_exp<exp>.txt`` on the data search path)."""
    exp = integer("exp", exp, minimum=0)
    return read_schedule(data.require(f"{DATA_DIR}/traces/trace_exp{exp}.txt"))


@output
@dataclass(frozen=True)
class ScheduleCheck:
    """What :func:`check_schedule` recomputes from a valid schedule's tasks."""

    makespan: float
    peak_memory: float
    utilization: float
    gpu_peak_memory: np.ndarray

    @property
    def bubble_rate(self) -> float:
        """Idle share of GPU time up to the makespan (``1 - utilization``)."""
        return 1.0 - self.utilization


def _where(s: Schedule, k: int) -> str:
    if s.line is not None:
        return f"{s.path or 'schedule'}:{int(s.line[k])}"
    return f"{s.path or 'schedule'} item {k}"


def _name(inst: Instance, s: Schedule, k: int) -> str:
    m, b, t = int(s.model[k]), int(s.microbatch[k]), int(s.task[k])
    stages = inst.pp0 if m == 0 else inst.pp1
    who = "Actor" if m == 0 else f"Critic replica {m - 1}"
    d = f"forward stage {t}" if t < stages else f"backward stage {2 * stages - 1 - t}"
    return f"[{m}, {b}, {t}] ({who} micro-batch {b} {d}, {s.start[k]:g}-{s.end[k]:g} on GPU {int(s.gpu[k])})"


@accepts()
def check_schedule(inst: Instance, schedule: Schedule, *, tol: float = 1e-6) -> ScheduleCheck:
    """Check ``schedule`` against ``inst`` and recompute its makespan, peak memory and utilization.

    Valid iff every task of the instance appears exactly once, on its GPU, lasting its duration, starting no earlier
    than its predecessor in the pipeline ends, and no two tasks overlap on a GPU. Otherwise :class:`ScheduleError`
    naming the line (of a file; the item index otherwise) and the tasks involved. Memory is recomputed per GPU in
    execution order (+ at the end of a forward, - at the end of its backward).

    Examples
    --------
    >>> inst = Instance(pp0=2, pp1=2, m0=2, m1=1, f0=1, f1=1)
    >>> check_schedule(inst, sequential_1f1b(inst)).makespan  # (2 + 2 - 1) 3 + (1 + 2 - 1) 3
    15.0
    """
    lay = _layout(inst)
    s = schedule
    n = len(s)
    m, b, t = s.model, s.microbatch, s.task
    # 1. every item names a task of the instance
    m_ok = (m >= 0) & (m <= inst.replicas)
    mbs = np.where(m == 0, inst.m0, inst.m1)
    stages = np.where(m == 0, inst.pp0, inst.pp1)
    bad = np.flatnonzero(~m_ok | (b < 0) | (b >= mbs) | (t < 0) | (t >= 2 * stages))
    if len(bad):
        k = int(bad[0])
        raise ScheduleError(
            f"{_where(s, k)}: item [{m[k]}, {b[k]}, {t[k]}] is not a task of the instance (model 0..{inst.replicas}, "
            f"micro-batch < {inst.m0} for the Actor / {inst.m1} for the Critic, task < 2 x stages)"
        )
    chain = np.where(m == 0, b, inst.m0 + (m - 1) * inst.m1 + b)
    tid = lay.chain_start[chain] + t
    # 2. each task once
    order = np.argsort(tid, kind="stable")
    dup = np.flatnonzero(np.diff(tid[order]) == 0)
    if len(dup):
        k1, k2 = int(order[dup[0]]), int(order[dup[0] + 1])
        raise ScheduleError(f"{_where(s, k2)}: task {_name(inst, s, k2)} also at {_where(s, k1)}")
    if n != len(lay.dur):
        missing = np.setdiff1d(np.arange(len(lay.dur)), tid)[0]
        raise ScheduleError(
            f"{s.path or 'schedule'}: {len(lay.dur) - n} tasks missing, e.g. [{lay.model[missing]}, "
            f"{lay.mb[missing]}, {lay.task[missing]}]"
        )
    # 3. at a time >= 0 (a schedule's clock starts at 0: an earlier start would fake a makespan below the bound)
    early = np.flatnonzero(~np.isfinite(s.start) | ~np.isfinite(s.end) | (s.start < -tol))
    if len(early):
        k = int(early[0])
        raise ScheduleError(
            f"{_where(s, k)}: task {_name(inst, s, k)} starts at {s.start[k]:g}: starts must be finite and >= 0"
        )
    # 4. on its GPU, with its duration
    wrong = np.flatnonzero(s.gpu != lay.gpu[tid])
    if len(wrong):
        k = int(wrong[0])
        raise ScheduleError(f"{_where(s, k)}: task {_name(inst, s, k)} belongs on GPU {lay.gpu[tid[k]]}")
    wrong = np.flatnonzero(np.abs((s.end - s.start) - lay.dur[tid]) > tol)
    if len(wrong):
        k = int(wrong[0])
        raise ScheduleError(f"{_where(s, k)}: task {_name(inst, s, k)} must last {lay.dur[tid[k]]}")
    # 5. dependencies: a task starts after its predecessor in the chain ends
    pos = np.empty(n, np.int64)
    pos[tid] = np.arange(n)  # item of each task id
    has_pred = t > 0
    pred_item = np.where(has_pred, pos[np.maximum(tid - 1, 0)], 0)
    viol = np.flatnonzero(has_pred & (s.start < s.end[pred_item] - tol))
    if len(viol):
        k = int(viol[np.argmin(s.start[viol])])
        j = int(pred_item[k])
        raise ScheduleError(
            f"{_where(s, k)}: dependency violated: task {_name(inst, s, k)} starts before its predecessor "
            f"{_name(inst, s, j)} (at {_where(s, j)}) ends"
        )
    # 6. one task per GPU at a time
    by_gpu = np.lexsort((s.end, s.start, s.gpu))
    same = s.gpu[by_gpu][1:] == s.gpu[by_gpu][:-1]
    clash = np.flatnonzero(same & (s.start[by_gpu][1:] < s.end[by_gpu][:-1] - tol))
    if len(clash):
        k1, k2 = int(by_gpu[clash[0]]), int(by_gpu[clash[0] + 1])
        raise ScheduleError(
            f"{_where(s, k2)}: GPU {int(s.gpu[k2])} double-booked: task {_name(inst, s, k2)} overlaps "
            f"{_name(inst, s, k1)} (at {_where(s, k1)})"
        )
    # 7. memory per GPU in execution order
    delta = lay.mem[tid][by_gpu]
    g_sorted = s.gpu[by_gpu]
    csum = np.cumsum(delta)
    first = np.flatnonzero(np.r_[True, g_sorted[1:] != g_sorted[:-1]])
    base = np.repeat(np.r_[0.0, csum[first[1:] - 1]], np.diff(np.r_[first, n]))
    level = csum - base
    gpu_peak = np.zeros(inst.gpus)
    np.maximum.at(gpu_peak, g_sorted, level)
    makespan = float(s.end.max())
    return ScheduleCheck(makespan, float(gpu_peak.max()), inst.work / (inst.gpus * makespan), gpu_peak)
