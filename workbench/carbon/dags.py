"""TPC-H job DAGs with measured Spark task durations (the Decima / PCAPS job set).

Each ``carbon-dag/tpch/<scale>/qNN.json`` holds one query at one input scale: ``adjacency[i][j] == 1`` means stage
``j`` depends on stage ``i``; ``task_durations_ms[stage]`` holds, for each executor count the stage was profiled
with, the durations of first-wave tasks, later-wave tasks and tasks on freshly started executors (Mao et al.,
"Learning Scheduling Algorithms for Data Processing Clusters", SIGCOMM 2019; decima-sim ``spark_env``).

Loading follows decima-sim's job loader in what it draws from the data (our own code):

- a stage's task count is the first-wave plus later-wave task count at the first executor key in the file;
- an executor count with no first-wave samples borrows the nearest profiled count's first wave; missing later-wave
  or fresh samples fall back to the first wave of the same count;
- a task's duration is drawn by the executor count of its job (nearest profiled count at or below, with the next
  one above chosen with probability proportional to the distance) and by the executor's history: *fresh* if the
  executor did not run a task of this job before, *rest-wave* if its last task was of the same stage, else
  *first-wave*.

Examples
--------
>>> import numpy as np
>>> dag = JobDAG.from_dict({"adjacency": [[0, 1], [0, 0]],
...     "task_durations_ms": [{"first_wave": {"2": [1000, 3000]}, "rest_wave": {"2": []},
...                            "fresh_durations": {"2": []}}] * 2}, name="toy")
>>> dag.num_tasks.tolist(), dag.mean_task_s.tolist(), dag.critical_path_s().tolist()
([2, 2], [2.0, 2.0], [8.0, 4.0])
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import _validate as V
from .. import data
from .._contracts import MappingOf, Text, accepts
from .._deps import remember

__all__ = ["SCALES", "QUERIES", "DagError", "JobDAG", "load_job", "load_jobs"]

SCALES = ("2g", "5g", "10g", "20g", "50g", "80g", "100g")
QUERIES = tuple(range(1, 23))
_ROOT = "carbon-dag/tpch"
KINDS = ("first_wave", "rest_wave", "fresh_durations")


class DagError(ValueError):
    """A job DAG that cannot be used: the message names the file (or job) and what is wrong."""


@accepts()
@dataclass(frozen=True, eq=False)
class JobDAG:
    """One job: stages, precedence and per-stage task-duration pools (seconds).

    Attributes
    ----------
    name : e.g. ``"q09@10g"``.
    parents : ``parents[j]`` is the tuple of stages ``j`` waits for.
    children : ``children[i]`` is the tuple of stages that wait for ``i``.
    num_tasks : tasks per stage.
    keys : executor counts the stages were profiled with (sorted, shared by all stages after loading).
    pools : ``pools[kind][stage][k]`` is an array of durations (s) for ``kind`` in 0 (first wave), 1 (rest wave),
        2 (fresh), at ``keys[k]`` executors; never empty.
    mean_task_s : mean first-wave task duration of each stage (s).
    """

    name: str
    parents: tuple[tuple[int, ...], ...]
    children: tuple[tuple[int, ...], ...]
    num_tasks: np.ndarray
    keys: np.ndarray
    pools: tuple[tuple[tuple[np.ndarray, ...], ...], ...]
    mean_task_s: np.ndarray
    topo_order: tuple[int, ...] = field(default=())

    @functools.cached_property
    def pool_lists(self) -> tuple:
        """:attr:`pools` as nested Python lists (fast scalar indexing in the simulator's event loop)."""
        return tuple(tuple(tuple(p.tolist() for p in st) for st in kind) for kind in self.pools)

    @property
    def num_stages(self) -> int:
        """Number of stages."""
        return int(self.num_tasks.size)

    @property
    def work_s(self) -> np.ndarray:
        """Work of each stage: task count x mean first-wave task duration (executor-seconds)."""
        return self.num_tasks * self.mean_task_s

    @property
    def total_work_s(self) -> float:
        """Total work of the job (executor-seconds)."""
        return float(self.work_s.sum())

    @accepts()
    def critical_path_s(self) -> np.ndarray:
        """Per stage: the largest total work along any path from the stage to a sink, the stage included.

        This is Decima's critical-path heuristic's stage value (SIGCOMM 2019, Sec. 7.1 baselines) and PCAPS's
        notion of a stage's precedence importance (arXiv 2502.09717, Sec. 4.2).
        """
        w = self.work_s
        cp = np.zeros(self.num_stages)
        for s in reversed(self.topo_order):
            cp[s] = w[s] + max((cp[c] for c in self.children[s]), default=0.0)
        return cp

    @staticmethod
    @accepts(d=MappingOf(Text()), name=Text(), source=Text())
    def from_dict(d: dict, name: str = "job", source: str = "<dict>") -> JobDAG:
        """Build a DAG from a decoded TPC-H JSON dict, validating it; errors name ``source``."""
        if not isinstance(d, dict):
            raise DagError(f"{source}: a job file holds a JSON object, got {type(d).__name__}")
        try:
            raw_adj, durs = d["adjacency"], d["task_durations_ms"]
        except KeyError as exc:
            raise DagError(f"{source}: missing field {exc.args[0]!r}") from None
        try:
            adj_f = np.asarray(raw_adj, dtype=float)
        except (TypeError, ValueError):
            raise DagError(f"{source}: adjacency must be a square matrix of 0/1 (rows of equal length)") from None
        if adj_f.ndim != 2 or adj_f.shape[0] != adj_f.shape[1] or adj_f.shape[0] == 0:
            raise DagError(f"{source}: adjacency must be a non-empty square matrix, got shape {adj_f.shape}")
        if not np.isin(adj_f, (0.0, 1.0)).all():
            i, j = np.argwhere(~np.isin(adj_f, (0.0, 1.0)))[0]
            raise DagError(f"{source}: adjacency[{i}][{j}] must be 0 or 1, got {raw_adj[i][j]!r}")
        adj = adj_f.astype(np.int64)
        if not isinstance(durs, list):
            raise DagError(f"{source}: task_durations_ms must be a list (one entry per stage)")
        n = adj.shape[0]
        if len(durs) != n:
            raise DagError(f"{source}: {len(durs)} task-duration entries for {n} stages")
        if np.diag(adj).any():
            s = int(np.argmax(np.diag(adj)))
            raise DagError(f"{source}: cycle: stage {s} depends on itself")
        parents = tuple(tuple(int(i) for i in np.flatnonzero(adj[:, j])) for j in range(n))
        children = tuple(tuple(int(j) for j in np.flatnonzero(adj[i])) for i in range(n))
        # Kahn's algorithm: stages left over sit on a cycle
        indeg = adj.sum(axis=0).astype(int)
        order, ready = [], [i for i in range(n) if indeg[i] == 0]
        while ready:
            i = ready.pop()
            order.append(i)
            for j in children[i]:
                indeg[j] -= 1
                if indeg[j] == 0:
                    ready.append(j)
        if len(order) < n:
            left = sorted(set(range(n)) - set(order))
            raise DagError(f"{source}: cycle among stages {left}")
        all_keys: set[int] = set()
        for s, st in enumerate(durs):
            fw = st.get("first_wave", {}) if isinstance(st, dict) else {}
            if not any(len(v) for v in fw.values()):
                raise DagError(f"{source}: stage {s} has no first-wave task durations")
            try:
                all_keys.update(int(k) for k in fw)
            except (TypeError, ValueError):
                raise DagError(f"{source}: stage {s}: first_wave keys must be integers, got {list(fw)}") from None
            for wave in ("first_wave", "rest_wave", "fresh_durations"):
                for k, v in (st.get(wave) or {}).items():
                    try:
                        arr = np.asarray(v, dtype=float)
                    except (TypeError, ValueError):
                        raise DagError(f"{source}: stage {s} {wave}[{k!r}] must be a list of numbers") from None
                    if arr.ndim != 1 or not np.isfinite(arr).all() or (arr < 0).any():
                        raise DagError(
                            f"{source}: stage {s} {wave}[{k!r}] must hold finite durations >= 0 (ms), got {v!r:.80}"
                        )
        keys = np.array(sorted(all_keys), dtype=np.int64)
        num_tasks = np.empty(n, dtype=np.int64)
        pools: list[list[list[np.ndarray]]] = [[], [], []]
        mean = np.empty(n)
        for s, st in enumerate(durs):
            first_key = next(iter(st["first_wave"]))
            num_tasks[s] = len(st["first_wave"][first_key]) + len(st.get("rest_wave", {}).get(first_key, []))
            fw = {int(k): np.asarray(v, float) / 1e3 for k, v in st["first_wave"].items() if len(v)}
            have = np.array(sorted(fw))
            per_kind: list[list[np.ndarray]] = [[], [], []]
            for k in keys:
                near = int(have[np.argmin(np.abs(have - k))])
                first = fw[near] if k not in fw else fw[int(k)]
                rest = np.asarray(st.get("rest_wave", {}).get(str(k), []), float) / 1e3
                fresh = np.asarray(st.get("fresh_durations", {}).get(str(k), []), float) / 1e3
                per_kind[0].append(first)
                per_kind[1].append(rest if rest.size else first)
                per_kind[2].append(fresh if fresh.size else first)
            for kk in range(3):
                pools[kk].append(per_kind[kk])
            allfw = np.concatenate(list(fw.values()))
            if not np.isfinite(allfw).all() or (allfw < 0).any():
                raise DagError(f"{source}: stage {s} has negative or non-finite durations")
            mean[s] = allfw.mean()
        if (num_tasks < 1).any():
            raise DagError(f"{source}: stage {int(np.argmin(num_tasks))} has no tasks")
        return JobDAG(
            name=name,
            parents=parents,
            children=children,
            num_tasks=num_tasks,
            keys=keys,
            pools=tuple(tuple(tuple(p) for p in kind) for kind in pools),
            mean_task_s=mean,
            topo_order=tuple(order),
        )


def _path(query: int, scale: str) -> Path:
    V.one_of("scale", scale, SCALES)
    query = V.integer("query", query, minimum=1, maximum=22)
    rel = f"{_ROOT}/{scale}/q{query:02d}.json"
    p = data.find(rel)
    if p is None:
        raise DagError(f"no job file {rel} on the data search path")
    return p


@accepts()
@remember
def load_job(query: int, scale: str) -> JobDAG:
    """Load TPC-H query ``query`` (1-22) at input ``scale`` (one of :data:`SCALES`), validated and cached."""
    return load_json(_path(query, scale), name=f"q{int(query):02d}@{scale}")


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def load_json(path: str | os.PathLike, name: str | None = None) -> JobDAG:
    """Load one job file (any path), validating it; errors (:class:`DagError`) name the file."""
    path = Path(path)
    try:
        if path.exists() and not path.is_file():
            raise DagError(f"{path}: not a regular file (a directory or FIFO); give a job JSON file")
        d = json.loads(path.read_text(encoding="utf-8-sig"), object_pairs_hook=_unique_keys)
    except FileNotFoundError:
        raise DagError(f"{path}: no such job file") from None
    except json.JSONDecodeError as exc:
        raise DagError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except UnicodeDecodeError:
        raise DagError(f"{path}: not UTF-8 text") from None
    except _DuplicateKey as exc:
        raise DagError(f"{path}: key {exc.args[0]!r} appears twice in one object (which one holds the data?)") from None
    return JobDAG.from_dict(d, name=name or path.stem, source=str(path))


@accepts()
def load_jobs(scales: tuple[str, ...] = SCALES) -> list[JobDAG]:
    """All 22 queries at each of ``scales`` (the Decima / PCAPS job pool)."""
    return [load_job(q, s) for s in scales for q in QUERIES]
