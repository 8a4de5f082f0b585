"""``sweep``: an experiment over a grid of points x seeds, cached per point x seed, on Dask or in process.

:func:`run_sweep` returns a :class:`SweepRun` record: the tidy table beside the run's own numbers (points computed,
read from the cache, failed with their tracebacks). :func:`sweep` returns the table alone and raises
:class:`SweepError` naming the failed points if any point raised, so a table is never silently missing rows. A
table's ``attrs`` carry provenance only (``experiment``, ``version``, ``base_seed``: what it is a table of), never
results.
"""

from __future__ import annotations

import contextlib
import numbers
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa

from .._deps import Deps, code_fingerprint, note_module, replay
from ..cache import CacheWarning
from ._engine import resolve, run_dask, run_serial
from ._space import Experiment, get
from ._store import (
    RECORD_SUFFIX,
    cache_folder,
    cache_key,
    encode_record,
    point_seed,
    read_record,
    schema_conflicts,
    write_record,
)

__all__ = ["sweep", "run_sweep", "run_point", "summarize", "SweepRun", "SweepError"]

_ERROR_COLUMNS = ["seed", "error", "traceback"]


#: The most point x seed jobs one sweep may hold (each is a task, a cache record and a row): a larger study is
#: split into several sweeps, which the cache stitches together.
MAX_JOBS = 1_000_000


def _replicates(seeds) -> list[int]:
    if isinstance(seeds, numbers.Integral) and not isinstance(seeds, bool):
        n_seeds = int(seeds)
        if not 1 <= n_seeds <= MAX_JOBS:
            raise ValueError(f"seeds must be in [1, {MAX_JOBS:,}] (the number of seeds per point), got {seeds}")
        return list(range(n_seeds))
    if isinstance(seeds, Sequence) and not isinstance(seeds, str) and seeds:
        reps = [int(s) for s in seeds if isinstance(s, numbers.Integral) and not isinstance(s, bool) and int(s) >= 0]
        if len(reps) != len(seeds) or len(set(reps)) != len(reps):
            raise ValueError(f"seeds must be distinct non-negative integers, got {list(seeds)!r}")
        return reps
    raise TypeError(f"seeds must be a positive int or a non-empty list of seed indices, got {seeds!r}")


@dataclass(frozen=True)
class SweepRun:
    """A sweep's result: ``table`` (one tidy row per point x seed x result row, parameters first, then ``seed``,
    then the results), ``failures`` (one row per failed point x seed: its parameters, ``seed``, the ``error`` line
    and the full ``traceback``; empty when everything ran) and the run's counts."""

    experiment: str
    version: str
    base_seed: int
    table: pd.DataFrame
    failures: pd.DataFrame
    total: int
    computed: int
    cache_hits: int

    @property
    def ok(self) -> bool:
        """Whether every point x seed ran."""
        return self.failures.empty


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (for messages: ``2.5``, not ``np.float64(2.5)``)."""
    return value.item() if hasattr(value, "item") else value


class SweepError(RuntimeError):
    """Points of a sweep raised: the message names them and the first error; ``.run`` is the :class:`SweepRun`
    (the points that completed are in ``.run.table``)."""

    def __init__(self, run: SweepRun) -> None:
        first = run.failures.iloc[0]
        params = [c for c in run.failures.columns if c not in _ERROR_COLUMNS]
        point = ", ".join(f"{c}={_plain(first[c])!r}" for c in params)
        super().__init__(
            f"{run.experiment}: {len(run.failures)} of {run.total} point(s) failed; first at {point}, seed "
            f"{first['seed']}: {first['error']}"
        )
        self.run = run

    @property
    def reason(self) -> str:
        """The first failed point's error message without its exception's name (what a panel shows the reader:
        ``tests/widgets/test_panels_recover.py`` reads it in the ServeGen and serving-hardware panels)."""
        error = str(self.run.failures.error.iloc[0])
        name, sep, message = error.partition(": ")
        return message if sep and name.rsplit(".", 1)[-1].endswith("Error") else error


def sweep(
    experiment: str | Experiment,
    grid: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    seeds: int | Sequence[int] = 1,
    *,
    base_seed: int = 0,
    client=None,
    cache: bool | str = True,
    progress: bool = True,
) -> pd.DataFrame:
    """Run ``experiment`` at every point of ``grid`` x ``seeds`` and return the tidy table (see :func:`run_sweep`
    for the parameters); :class:`SweepError` naming the failed points if any point raised.

    Examples
    --------
    >>> df = sweep("placement-hot-tors", {"mean_utilization": [0.3, 0.5], "racks": 50}, seeds=2, client=False,
    ...            cache=False, progress=False)
    >>> df[["mean_utilization", "policy", "seed"]].shape
    (8, 3)
    """
    run = run_sweep(experiment, grid, seeds, base_seed=base_seed, client=client, cache=cache, progress=progress)
    if not run.ok:
        raise SweepError(run)
    return run.table


def run_sweep(
    experiment: str | Experiment,
    grid: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    seeds: int | Sequence[int] = 1,
    *,
    base_seed: int = 0,
    client=None,
    cache: bool | str = True,
    progress: bool = True,
) -> SweepRun:
    """Run ``experiment`` at every point of ``grid`` x ``seeds``: the table (one tidy row per point x seed x result
    row) beside the failures and the run's counts.

    Parameters
    ----------
    experiment : str or Experiment
        A registered experiment (``workbench sweep list``).
    grid : mapping or list of mappings, optional
        ``{"load": [0.3, 0.9], "marking": ["static", "pred"]}`` is the Cartesian product (a scalar is a one-value
        axis); a list of dicts is an explicit list of points. Parameters left out take their defaults. Validated
        before anything runs: an unknown parameter, an empty list or a value out of range raises ``ValueError``
        naming the parameter.
    seeds : int or list of int
        ``n`` runs seed indices ``0 .. n-1``; a list names the seed indices. Index ``r`` of a point draws from
        ``SeedSequence(base_seed)`` keyed by the point's seeded parameters and ``r`` (see :func:`point_seed`), so a
        row is the same whatever the grid, the worker count, the order or restarts.
    base_seed : int
        Root entropy of every stream.
    client : None, False, str or distributed.Client
        ``None``: ``$WORKBENCH_SCHEDULER`` if set, else the process's shared LocalCluster (started on first use).
        A scheduler address or a Client: that cluster. ``False``: serially in this process (same bytes).
    cache : bool or "refresh"
        ``True`` reads each point x seed from ``$WORKBENCH_CACHE/experiments/<name>/<key>.rec`` when present
        and verified (checksum, key, parameters, seeds and version; a damaged record is recomputed with a
        warning) and writes what it computes (atomically, as each result arrives, so an interrupted sweep resumes
        where it stopped); ``"refresh"`` recomputes everything and rewrites; ``False`` neither reads nor writes.
    progress : bool
        A tqdm bar (terminal or notebook): points done of the total, cache hits, failures.

    Returns
    -------
    SweepRun
        ``table``: parameter columns first, then ``seed`` (the index), then the experiment's result columns; rows in
        grid order, seeds within a point. Points that raised are left out of it and listed in ``failures`` (the
        other points complete).

    Examples
    --------
    >>> run = run_sweep("placement-hot-tors", {"mean_utilization": [0.3, 0.5], "racks": 50}, seeds=2,
    ...                 client=False, cache=False, progress=False)
    >>> run.table.shape[0], run.computed, run.ok
    (8, 4, True)
    """
    from tqdm.auto import tqdm

    exp = get(experiment)
    if cache not in (True, False, "refresh"):
        raise ValueError(f"cache must be True, False or 'refresh', got {cache!r}")
    if isinstance(base_seed, bool) or not isinstance(base_seed, numbers.Integral) or base_seed < 0:
        raise ValueError(f"base_seed must be a non-negative integer, got {base_seed!r}")
    reps = _replicates(seeds)
    points = exp.points(grid)
    if len(points) * len(reps) > MAX_JOBS:
        raise ValueError(
            f"{len(points):,} points x {len(reps):,} seeds = {len(points) * len(reps):,} jobs, more than one sweep "
            f"holds ({MAX_JOBS:,}); split the grid or use fewer seeds"
        )
    note_module(exp.fn.__module__)  # a paper run that sweeps depends on the experiment's code (when recording)
    jobs = [(p, r) for p in points for r in reps]
    code = code_fingerprint(exp.fn)
    keys = [cache_key(exp, p, int(base_seed), r, code) for p, r in jobs]
    tables: list[pa.Table | None] = [None] * len(jobs)
    folder = cache_folder(exp)
    writable = bool(cache)
    if cache:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            writable = False
            warnings.warn(
                f"sweep cache {folder} is not usable ({exc.strerror or exc}); running uncached",
                CacheWarning,
                stacklevel=2,
            )
    if cache is True and folder.is_dir():
        present = set(os.listdir(folder))
        for i, key in enumerate(keys):
            if f"{key}{RECORD_SUFFIX}" in present:
                point, rep = jobs[i]
                tables[i] = read_record(folder / f"{key}{RECORD_SUFFIX}", (exp, key, point, int(base_seed), rep))
    reference = next((t.schema for t in tables if t is not None), None)
    for i, t in enumerate(tables):  # records cached before a model changed its output types are recomputed
        if t is not None and schema_conflicts(reference, t):
            warnings.warn(
                f"experiment record {folder / (keys[i] + RECORD_SUFFIX)} has a result schema that differs from the "
                f"other points' ({'; '.join(schema_conflicts(reference, t))}); recomputing the point",
                CacheWarning,
                stacklevel=2,
            )
            tables[i] = None
    hits = sum(t is not None for t in tables)
    tasks = [
        (i, keys[i], p, point_seed(exp, p, int(base_seed), r), r) for i, (p, r) in enumerate(jobs) if tables[i] is None
    ]
    failed: list[dict[str, Any]] = []
    bar = tqdm(total=len(jobs), initial=hits, desc=exp.name, unit="pt", disable=not progress, leave=progress)
    bar.set_postfix(cached=hits, failed=0)
    try:
        if tasks:
            dask_client = resolve(client)
            stream = (
                run_serial(exp.fn, tasks) if dask_client is None else run_dask(dask_client, exp.name, exp.fn, tasks)
            )
            with contextlib.closing(stream):  # an interrupt cancels what the cluster has not finished
                for i, status, payload, deps in stream:
                    point, rep = jobs[i]
                    if status == "ok":
                        replay(Deps.from_json(deps))
                        table = read_record(payload)
                        conflicts = schema_conflicts(reference, table)
                        if conflicts:
                            status, payload = "error", f"TypeError: result schema differs: {'; '.join(conflicts)}"
                        else:
                            tables[i] = table
                            reference = table.schema if reference is None else reference
                            if writable:
                                record = encode_record(exp, keys[i], point, int(base_seed), rep, payload, deps)
                                try:
                                    write_record(folder / f"{keys[i]}{RECORD_SUFFIX}", record)
                                except OSError as exc:  # a full or read-only cache: keep going, uncached
                                    writable = False
                                    warnings.warn(
                                        f"cannot write to sweep cache {folder} ({exc.strerror or exc}); "
                                        "the rest of the sweep runs uncached",
                                        CacheWarning,
                                        stacklevel=2,
                                    )
                    if status != "ok":
                        failed.append(
                            {**point, "seed": rep, "error": payload.strip().splitlines()[-1], "traceback": payload}
                        )
                    bar.update(1)
                    bar.set_postfix(cached=hits, failed=len(failed))
    finally:
        bar.close()
    out = _assemble(exp, [t for t in tables if t is not None])
    out.attrs = {"experiment": exp.name, "version": exp.version, "base_seed": int(base_seed)}
    return SweepRun(
        exp.name,
        exp.version,
        int(base_seed),
        out,
        pd.DataFrame(failed, columns=[p.name for p in exp.params] + _ERROR_COLUMNS),
        len(jobs),
        len(tasks) - len(failed),
        hits,
    )


def run_point(
    experiment: str | Experiment,
    params: Mapping[str, Any] | None = None,
    *,
    seed: int = 0,
    base_seed: int = 0,
    cache: bool | str = True,
) -> pd.DataFrame:
    """One point of ``experiment`` (``params`` over its defaults) for seed index ``seed``, in this process.

    The row(s) are exactly those :func:`sweep` gives for that point and seed (same stream, same cache entry), so a
    panel that calls this shows the experiment's own numbers. A point that raises re-raises its error here (with
    the point named) instead of being listed.

    Examples
    --------
    >>> row = run_point("arrivals-queue-wait", {"customers": 2000}, cache=False)
    >>> row[["utilization", "process", "seed"]].values.tolist()
    [[0.7, 'gamma', 0]]
    """
    point = dict(params or {})
    return sweep(experiment, point, seeds=[int(seed)], base_seed=base_seed, client=False, cache=cache, progress=False)


def _assemble(exp: Experiment, tables: list[pa.Table]) -> pd.DataFrame:
    if not tables:
        return pd.DataFrame(columns=[p.name for p in exp.params] + ["seed"])
    return pa.concat_tables(tables, promote_options="permissive").to_pandas()


def summarize(result: pd.DataFrame | SweepRun, values: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean and spread over seeds of a :func:`sweep`'s numeric results: the table behind error bars.

    Rows are grouped by the parameters and the non-numeric result columns (a size class, a policy); each numeric
    result column in ``values`` (default: all of them) gives one row per group with ``quantity, mean, std, sem, n``.

    Examples
    --------
    >>> df = sweep("placement-hot-tors", {"mean_utilization": [0.3, 0.6], "racks": 50}, seeds=3, client=False,
    ...            cache=False, progress=False)
    >>> s = summarize(df, ["hot_fraction"])
    >>> list(s.columns[-6:]), len(s), int(s.n.max())
    (['policy', 'quantity', 'mean', 'std', 'sem', 'n'], 4, 3)
    """
    if isinstance(result, SweepRun):
        result = result.table
    if "experiment" not in result.attrs:
        raise ValueError("summarize needs a table from sweep (its attrs name the experiment) or a SweepRun")
    exp = get(result.attrs["experiment"])
    params = [p.name for p in exp.params]
    results = [c for c in result.columns if c not in params and c != "seed"]
    numeric = [
        c for c in results if pd.api.types.is_numeric_dtype(result[c]) and not pd.api.types.is_bool_dtype(result[c])
    ]
    values = numeric if values is None else list(values)
    unknown = [v for v in values if v not in numeric]
    if unknown:
        raise ValueError(f"values must be numeric result columns of {exp.name!r} ({', '.join(numeric)}); got {unknown}")
    keys = params + [c for c in results if c not in numeric]
    long = result.melt(id_vars=keys, value_vars=values, var_name="quantity")
    stats = long.groupby([*keys, "quantity"], sort=False, dropna=False)["value"].agg(["mean", "std", "sem", "count"])
    return stats.rename(columns={"count": "n"}).reset_index()
