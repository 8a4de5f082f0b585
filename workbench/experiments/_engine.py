"""Where sweeps run: Dask distributed clients, the shared LocalCluster, and in-process serial execution.

``client=None`` uses ``$WORKBENCH_SCHEDULER`` when it is set (a scheduler address such as ``tcp://host:8786``: any
dask-jobqueue, Kubernetes or SSH cluster) and otherwise one :class:`distributed.LocalCluster` per process (worker
processes with one thread each, as many as there are cores), started on first use and reused by every later sweep.
A string is a scheduler address; a :class:`distributed.Client` is used as given; ``False`` runs in this process.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator
from typing import Any

from .._deps import closure_digests, data_env
from ._store import compute, compute_batch

__all__ = ["cluster", "shutdown", "resolve", "dashboard_link", "run_serial", "run_dask", "batch_size"]

_CLIENTS: dict[str, Any] = {}


def cluster(address: str | None = None, *, n_workers: int | None = None):
    """The shared :class:`distributed.Client`: to the scheduler at ``address``, else the process's LocalCluster.

    The LocalCluster has ``n_workers`` worker processes (default: the number of cores) of one thread each; its
    dashboard link is ``cluster().dashboard_link`` (served when ``bokeh`` is installed).
    """
    from distributed import Client, LocalCluster

    name = address or "local"
    client = _CLIENTS.get(name)
    if client is not None and client.status in ("running", "connecting"):
        return client
    if address:
        client = _connect(Client, address)
    else:
        workers = n_workers or os.cpu_count() or 1
        # a free port: on a shared machine 8787 is often taken by someone else's cluster
        local = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
        )
        client = Client(local, set_as_default=False)
    _CLIENTS[name] = client
    return client


#: Seconds to wait for a scheduler given by address before giving up with a clear error.
CONNECT_TIMEOUT_S = 10


def _connect(Client, address: str):
    """A client to the scheduler at ``address``; a malformed address or an unreachable scheduler is a ValueError /
    ConnectionError naming it (not a 60 s wait ending in a TimeoutError traceback)."""
    import re

    text = str(address).strip()
    m = re.fullmatch(r"(?:(tcp|tls|inproc|ucx|ws|wss)://)?([A-Za-z0-9.\-\[\]:]+?)(?::(\d{1,5}))?", text)
    if not m or (m.group(3) is not None and not 0 < int(m.group(3)) < 65536):
        raise ValueError(
            f"scheduler address {text!r} is not a Dask scheduler address (e.g. tcp://127.0.0.1:8786); "
            "check --scheduler or WORKBENCH_SCHEDULER"
        )
    try:
        return Client(text, set_as_default=False, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise ConnectionError(
            f"no Dask scheduler answered at {text!r} within {CONNECT_TIMEOUT_S} s ({type(exc).__name__}); start one "
            "with `dask scheduler`, fix --scheduler / WORKBENCH_SCHEDULER, or use --serial"
        ) from None


def shutdown() -> None:
    """Close every client this module opened (and the LocalCluster with its workers)."""
    while _CLIENTS:
        _, client = _CLIENTS.popitem()
        local = client.cluster
        client.close()
        if local is not None:
            local.close()


def resolve(client):
    """The client a sweep runs on (``None`` for serial execution in this process)."""
    if client is False:
        return None
    if client is None or client is True:
        return cluster(os.environ.get("WORKBENCH_SCHEDULER") or None)
    if isinstance(client, str):
        return cluster(client)
    from distributed import Client

    if not isinstance(client, Client):
        raise TypeError(
            f"client must be None, False, a scheduler address or a distributed.Client, got {type(client).__name__}"
        )
    return client


def dashboard_link(client=None) -> str:
    """The Dask dashboard address of the cluster a sweep with this ``client`` runs on (``""`` for ``client=False``);
    starts the shared LocalCluster if it is not running. The dashboard is served when ``bokeh`` is installed."""
    resolved = resolve(client)
    return "" if resolved is None else str(resolved.dashboard_link)


def run_serial(fn, tasks: list[tuple]) -> Iterator[tuple]:
    """Yield ``(index, status, payload, deps)`` for ``tasks`` of ``(index, key, params, seed, replicate)``, in
    order."""
    for i, _, params, seed, replicate in tasks:
        yield (i, *compute(fn, params, seed, replicate))


def batch_size(n_tasks: int, n_workers: int) -> int:
    """Points per Dask task: 1 unless there are more than 64 points per worker, then enough to keep 64 tasks per
    worker (Dask's own cost per task, ~1 ms, would otherwise dominate cheap points; 64 per worker keeps the load
    balanced and loses little work when a client is interrupted)."""
    return max(1, n_tasks // (64 * max(n_workers, 1)))


def run_dask(client, name: str, fn, tasks: list[tuple]) -> Iterator[tuple]:
    """Yield ``(index, status, payload, deps)`` as the cluster completes ``tasks``; what is left is cancelled on exit.

    Each batch carries this process's code fingerprint of ``fn`` and its ``$WORKBENCH_DATA``: a worker runs the point
    under that search path and refuses it if its own code differs (:func:`~workbench.experiments._store.compute`).

    Tasks are grouped by :func:`batch_size`. A batch's Dask key is ``<name>-<hash of its cache keys>``, so the same
    batch submitted twice (by two sweeps on one cluster) runs once. A batch whose workers keep dying
    (:class:`distributed.KilledWorker`) or that fails inside Dask is reported as an error for each of its points.
    """
    import traceback

    from distributed import as_completed

    size = batch_size(len(tasks), sum(client.nthreads().values()))
    batches = {}
    for start in range(0, len(tasks), size):
        chunk = tasks[start : start + size]
        digest = hashlib.sha256("".join(t[1] for t in chunk).encode()).hexdigest()[:32]
        batches[f"{name}-{digest}"] = chunk
    context = (closure_digests(fn), data_env())
    futures = client.map(
        compute_batch,
        [fn] * len(batches),
        [[(i, p, s, r) for i, _, p, s, r in chunk] for chunk in batches.values()],
        [context] * len(batches),
        key=list(batches),
    )
    pending = set(futures)
    try:
        for fut in as_completed(futures, loop=client.loop):
            pending.discard(fut)
            try:
                results = fut.result()
            except Exception as exc:
                message = "".join(traceback.format_exception(exc))
                results = [(t[0], "error", message, None) for t in batches[fut.key]]
            yield from results
            fut.release()
    finally:
        if pending:
            client.cancel(list(pending))
