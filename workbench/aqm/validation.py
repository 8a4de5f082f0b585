"""The per-packet engine's validation as data: its nine FCT statistics on every workload that two independent
per-packet simulators replayed, against the envelope the two references span.

The references are ns-3 (``scripts/ns3_replay.py`` with the README sender corrections) and htsim (Broadcom's
csg-htsim, the simulator the ``fabric-websearch-128`` README derives from, driven by a small driver described in
``docs/htsim_reference.md``). Both replayed the same flows on the same pinned spines on the README's network: the
dataset's two shared connection matrices (25 and 50 ms of arrivals at 90% load) and eight generated ones (loads 30,
50, 70 and 90%, seeds 1 and 2, 20 ms each, :func:`workbench.aqm.workload.websearch_matrix`). Their per-flow FCTs are
committed under ``datasets/validation/packets/`` (its README says how they were produced); the generated workloads'
``.cm``/``.spines`` files are committed there too, the shared ones are read from the data search path.

The two references disagree with each other where rare events dominate (a 250 ms retransmission timeout moves a
class's mean or p99 by tens of percent), so agreement with either alone is not the test: a statistic of the engine
is *within* when it lies in ``[(1 - TOLERANCE) x the lower reference, (1 + TOLERANCE) x the higher]``.
:func:`validation_points` gives one row per (workload, statistic); :func:`engine_fct` replays a workload on the
engine (cached under ``$WORKBENCH_CACHE/aqm-validation``, keyed by the workload's files and the engine's sources).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib

import numpy as np
import pandas as pd

from .. import data
from .._contracts import NONNEGATIVE, AnyOf, Array, Choice, Int, Items, Real, Text, accepts
from .._deps import code_fingerprint, remember
from .._rng import keyed
from ..cache import cached_arrays
from ..tables import frame
from .cm_files import read_connection_matrix, read_spines
from .replay import MIN_RTO_S, LeafSpineNetwork, fct_statistics, replay

__all__ = [
    "LOSS_RECOVERIES",
    "TOLERANCE",
    "REFERENCES",
    "DATA_DIR",
    "workloads",
    "load_workload",
    "reference_fct",
    "engine_fct",
    "envelope_error",
    "validation_points",
    "flow_agreement",
    "JITTER_PS",
    "timing_spread",
]

#: Issue 40's bar: the engine within 15% outside the two references' span.
TOLERANCE = 0.15
#: The engine's two sender models (``simulate_packets``'s ``loss_recovery``): NewReno with the README's conventions
#: (what replays of recorded networks use) and the SACK-like variant (the PRED scenarios' and the mitigation check's).
LOSS_RECOVERIES = ("newreno", "sack")
#: The two independent simulators and their FCT columns in the reference files.
REFERENCES = {"ns-3": "ns3_fct_ns", "htsim": "htsim_fct_ns"}
#: Where the reference data lives on the data search path (the project's ``datasets/`` folder).
DATA_DIR = "validation/packets"
#: The network every workload was replayed on (the dataset README's).
NETWORK_DATASET = "fabric-websearch-128"
_STATS = (("mean", "mean_s"), ("p50", "p50_s"), ("p99", "p99_s"))
#: The start-time perturbation of a jittered replay (:func:`engine_fct`'s ``jitter_seed``): each flow starts a whole
#: number of picoseconds later, drawn uniformly from ``[0, JITTER_PS)``, i.e. under a nanosecond.
JITTER_PS = 1000


@accepts()
@remember
def workloads() -> pd.DataFrame:
    """The validated workloads: ``workload, load, seed, window_ms, flows, cm, spines, cm_sha256`` (``cm`` and
    ``spines`` relative to the data search path).

    Examples
    --------
    >>> w = workloads()
    >>> len(w), sorted(w.load.unique().tolist())
    (10, [0.3, 0.5, 0.7, 0.9])
    """
    return frame(data.require(f"{DATA_DIR}/workloads.csv"), what="workload table")


def _row(workload: str) -> pd.Series:
    w = workloads()
    sel = w[w.workload == workload]
    if sel.empty:
        raise ValueError(f"workload must be one of {', '.join(w.workload)}; got {workload!r}")
    return sel.iloc[0]


def available(workload: str) -> bool:
    """Whether ``workload``'s ``.cm`` and ``.spines`` files are on the data search path (the shared ones need
    ``fabric-websearch-128``)."""
    w = _row(workload)
    return data.find(w.cm) is not None and data.find(w.spines) is not None


@accepts()
def load_workload(workload: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The flows (:func:`~workbench.aqm.cm_files.read_connection_matrix`, file order) and per-flow spines of
    ``workload``; ``FileNotFoundError`` naming the search path if its files are not on it, ``ValueError`` if its
    ``.cm`` is not the one the references ran (its text's sha256 differs from ``workloads.csv``'s)."""
    w = _row(workload)
    cm, sp = data.require(w.cm), data.require(w.spines)
    raw = cm.read_bytes()
    digest = hashlib.sha256(gzip.decompress(raw) if cm.suffix == ".gz" else raw).hexdigest()
    if digest != w.cm_sha256:
        raise ValueError(
            f"{cm}: sha256 {digest} is not {w.cm_sha256}, the file the references ran ({DATA_DIR}/workloads.csv)"
        )
    flows = read_connection_matrix(cm)
    net = LeafSpineNetwork.of_dataset(NETWORK_DATASET)
    return flows, read_spines(sp, flows, net.spines, net.hosts_per_leaf)


@accepts()
def reference_fct(workload: str) -> pd.DataFrame:
    """Per flow of ``workload`` (file order): ``size_bytes`` (from its ``.cm``) and each reference's FCT in seconds
    (``ns-3``, ``htsim`` columns; NaN for a flow that did not finish)."""
    flows, _ = load_workload(workload)
    path = data.require(f"{DATA_DIR}/fct/{workload}.csv.gz")
    df = frame(path, what="reference FCT table")
    if len(df) != len(flows):
        raise ValueError(f"{path}: {len(df)} rows for the {len(flows)} flows of {workload}")
    fct = {name: df[col].to_numpy(dtype=float) * 1e-9 for name, col in REFERENCES.items()}
    return pd.DataFrame({"size_bytes": flows["size_bytes"].to_numpy()} | fct)


@accepts(loss_recovery=Choice(*LOSS_RECOVERIES), jitter_seed=Int(ge=0, optional=True))
def engine_fct(workload: str, loss_recovery: str = "newreno", jitter_seed: int | None = None) -> pd.DataFrame:
    """The per-packet engine's replay of ``workload`` on the README's network and the workload's spines: per flow
    (file order) ``size_bytes, start_s, fct_s, finished``. Cached on disk, keyed by the workload's files, the
    network, ``jitter_seed`` and the code fingerprint of the replay (:func:`workbench._deps.code_fingerprint`: any
    edit the replay can reach re-runs it).

    ``jitter_seed`` replays it with every flow starting up to a nanosecond later (a whole number of picoseconds,
    uniform in ``[0, JITTER_PS)``, drawn from the seed and the workload's name; ``start_s`` in the result stays the
    file's): how much the statistics owe to the exact timing (:func:`timing_spread`).

    ``loss_recovery="sack"`` replays it with the engine's SACK-like variant instead (the senders of the PRED
    scenarios and of the mitigation check): the README's network and RTO floor, but that variant's own senders (a
    loss found by three later ACKs or one fixed timeout after the drop, queues counted in whole packets, no
    slow-start threshold, no initial RTO; :func:`workbench.aqm.perpacket.simulate_packets`)."""
    w = _row(workload)
    flows, spines = load_workload(workload)
    net = dataclasses.replace(LeafSpineNetwork.of_dataset(NETWORK_DATASET), loss_recovery=loss_recovery)

    run_flows = flows
    if jitter_seed is not None:
        late_ps = keyed(jitter_seed, "packet-validation-jitter", workload).integers(0, JITTER_PS, len(flows))
        run_flows = flows.assign(start_s=flows["start_s"].to_numpy() + late_ps * 1e-12)

    def run() -> dict[str, np.ndarray]:
        return {"fct_s": replay(run_flows, net, spines=spines)["fct_s"].to_numpy(dtype=float)}

    sources = [data.require(w.cm), data.require(w.spines)]
    version = (repr(net), code_fingerprint("workbench.aqm.replay")) + (() if jitter_seed is None else (jitter_seed,))
    fct = cached_arrays(sources, version, run, kind="engine-fct", namespace="aqm-validation")["fct_s"]
    return pd.DataFrame(
        {"size_bytes": flows["size_bytes"], "start_s": flows["start_s"], "fct_s": fct, "finished": np.isfinite(fct)}
    )


@accepts(model=AnyOf(Real(ge=0.0, allow_nan=True), Array(ndim=None, ge=0.0, allow_nan=True)), low=NONNEGATIVE,
         high=NONNEGATIVE)  # fmt: skip
def envelope_error(model, low, high) -> np.ndarray:
    """Signed relative distance of ``model`` outside ``[low, high]``: 0 inside, ``model / high - 1`` above,
    ``model / low - 1`` below (NaN where ``model`` is NaN: the engine was not run).

    Examples
    --------
    >>> envelope_error([1.0, 3.0, 0.5], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]).tolist()
    [0.0, 0.5, -0.5]
    """
    m, lo, hi = (np.asarray(x, dtype=float) for x in (model, low, high))
    return np.where(m > hi, m / hi - 1.0, np.where(m < lo, m / lo - 1.0, 0.0))


def _nine(fct: pd.DataFrame) -> dict[tuple[str, str], float]:
    """The nine statistics (seconds) keyed by (size class, statistic)."""
    s = fct_statistics(fct)
    return {(r.size_class, name): float(getattr(r, col)) for r in s.itertuples() for name, col in _STATS}


@accepts(
    workload_names=Items(Text(), min_size=1, optional=True),
    loss_recovery=Choice(*LOSS_RECOVERIES),
    jitter_seed=Int(ge=0, optional=True),
)
def validation_points(
    workload_names=None,
    *,
    engine: bool = True,
    without_timeouts: bool = False,
    loss_recovery: str = "newreno",
    jitter_seed: int | None = None,
) -> pd.DataFrame:
    """One row per (workload, statistic): the engine's value against the two references.

    Parameters
    ----------
    workload_names : sequence of str, optional
        Default: every workload of :func:`workloads` whose files are on the data search path (the shared ones
        need ``fabric-websearch-128``; the generated ones are committed).
    engine : bool
        Replay each workload on the engine (about 1-7 s of CPU each, then cached); False leaves ``model``,
        ``error`` and ``within`` empty (the references alone).
    without_timeouts : bool
        Leave out, in all three simulators alike, every flow that waited a retransmission timeout in any of them (an
        FCT of at least the 250 ms minimum RTO): a timeout is a rare event that lands on different flows in different
        simulators (sub-microsecond timing decides which flow loses the tail of a window) and moves a class's mean
        or p99 by tens of percent on its own. Needs ``engine``.
    loss_recovery : {"newreno", "sack"}
        The engine's senders (:func:`engine_fct`): NewReno with the README's conventions (the validated engine), or
        the SACK-like variant the PRED scenarios and the mitigation check run, on the same workloads and network.
    jitter_seed : int, optional
        The engine's replay with start times moved by under a nanosecond (:func:`engine_fct`); the references are
        the same runs.

    Returns
    -------
    DataFrame
        ``workload, load, seed, flows, window_ms`` (where the references lie), ``size_class, statistic, metric``
        (``"p99 FCT, small (<100KB)"``), ``source`` (``"ns-3 / htsim"``), ``ns3, htsim`` (each reference, s),
        ``reference_low, reference_high`` (their span, s), ``model`` (the engine, s), ``error`` (signed:
        :func:`envelope_error`), ``within`` (inside ``[(1 - TOLERANCE) low, (1 + TOLERANCE) high]``) and
        ``loss_recovery`` (the engine's senders).
    """
    if without_timeouts and not engine:
        raise ValueError("without_timeouts=True needs engine=True (the flows left out include the engine's)")
    names = [w for w in workloads().workload if available(w)] if workload_names is None else list(workload_names)
    rows = []
    for name in names:
        w = _row(name)
        fct = reference_fct(name)
        if engine:
            fct["engine"] = engine_fct(name, loss_recovery, jitter_seed)["fct_s"].to_numpy()
        if without_timeouts:
            waited = (fct[[*REFERENCES, "engine"]] >= MIN_RTO_S).any(axis=1)
            fct = fct[~waited]
        stats = {
            sim: _nine(pd.DataFrame({"size_bytes": fct.size_bytes, "fct_s": fct[sim], "finished": fct[sim].notna()}))
            for sim in [*REFERENCES, *(["engine"] if engine else [])]
        }
        model = stats.get("engine", {})
        for key, ns3 in stats["ns-3"].items():
            size_class, stat = key
            rows.append(
                {
                    "workload": name,
                    "load": float(w.load),
                    "seed": int(w.seed),
                    "flows": int(w.flows),
                    "window_ms": float(w.window_ms),
                    "size_class": size_class,
                    "statistic": stat,
                    "metric": f"{stat} FCT, {size_class}",
                    "source": " / ".join(REFERENCES),
                    "ns3": ns3,
                    "htsim": stats["htsim"][key],
                    "model": model.get(key, np.nan),
                }
            )
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["reference_low"] = out[["ns3", "htsim"]].min(axis=1)
    out["reference_high"] = out[["ns3", "htsim"]].max(axis=1)
    out["error"] = envelope_error(out.model, out.reference_low, out.reference_high)
    inside = (out.model >= (1 - TOLERANCE) * out.reference_low) & (out.model <= (1 + TOLERANCE) * out.reference_high)
    out["within"] = inside.where(out.model.notna())
    out["loss_recovery"] = loss_recovery
    cols = ["workload", "load", "seed", "flows", "window_ms", "size_class", "statistic", "metric", "source", "ns3",
            "htsim", "reference_low", "reference_high", "model", "error", "within", "loss_recovery"]  # fmt: skip
    return out[cols]


@accepts(workload_names=Items(Text(), min_size=1, optional=True), replicas=Int(ge=2, le=64))
def timing_spread(workload_names=None, *, replicas: int = 8) -> pd.DataFrame:
    """How much of the envelope check is decided by timing below a nanosecond: the engine replayed ``replicas``
    times per workload, as given and with start times moved by under a nanosecond (``jitter_seed`` 1 to
    ``replicas - 1``, :func:`engine_fct`), each statistic against the same two references.

    Which flow loses the tail of a window at a full port, and so waits a 250 ms timeout, is decided by the order of
    arrivals a fraction of a packet time apart; such a timeout moves a class's mean or p99 by tens of percent. A
    statistic that leaves the envelope in some replicas and not in others is decided by that timing, not by a
    mechanism of the engine.

    Returns
    -------
    DataFrame
        One row per (workload, statistic): ``workload, size_class, statistic, metric, reference_low,
        reference_high`` (s), ``model`` (the replay as given, s), ``replica_min, replica_max`` (over all
        replicas, that one included, s), ``replicas``, ``within_share`` (the share of replicas inside
        ``[(1 - TOLERANCE) low, (1 + TOLERANCE) high]``) and ``timeouts_min, timeouts_max`` (flows of the workload
        that waited a retransmission timeout in the engine, over the replicas).

    Examples
    --------
    >>> s = timing_spread(["ws_128_10g_30_20ms_s1"], replicas=2)   # about 3 s: two replays of 546 flows
    >>> len(s), bool((s.replica_min <= s.model).all() and (s.model <= s.replica_max).all())
    (9, True)
    """
    names = [w for w in workloads().workload if available(w)] if workload_names is None else list(workload_names)
    runs = []
    for k in range(replicas):
        p = validation_points(names, jitter_seed=k or None)
        waited = {w: int((engine_fct(w, jitter_seed=k or None)["fct_s"] >= MIN_RTO_S).sum()) for w in names}
        runs.append(p.assign(replica=k, timeouts=p.workload.map(waited)))
    all_runs = pd.concat(runs, ignore_index=True)
    keys = ["workload", "size_class", "statistic", "metric", "reference_low", "reference_high"]
    out = all_runs.groupby(keys, sort=False).agg(
        replica_min=("model", "min"),
        replica_max=("model", "max"),
        replicas=("replica", "size"),
        within_share=("within", lambda x: float(x.astype(bool).mean())),
        timeouts_min=("timeouts", "min"),
        timeouts_max=("timeouts", "max"),
    )
    out.insert(0, "model", runs[0].set_index(keys)["model"])
    return out.reset_index()[[*keys, "model", "replica_min", "replica_max", "replicas", "within_share",
                              "timeouts_min", "timeouts_max"]]  # fmt: skip


#: The simulators compared flow by flow, as (name, column) pairs: the engine against each reference, and the two
#: references against each other (how far apart two independent simulators are on the same flows).
_PAIRS = (("workbench", "ns-3"), ("workbench", "htsim"), ("ns-3", "htsim"))


@accepts(workload_names=Items(Text(), min_size=1, optional=True))
def flow_agreement(workload_names=None, *, factor: float = 1.5) -> pd.DataFrame:
    """Flow-by-flow agreement of the three simulators on each workload and size class: the share of flows whose FCTs
    differ by more than ``factor`` x, and the median ratio, for the engine against each reference and for the two
    references against each other.

    Returns
    -------
    DataFrame
        ``workload, size_class, pair`` (``"workbench / ns-3"``, ``"workbench / htsim"``, ``"ns-3 / htsim"``),
        ``flows, median_ratio, share_beyond`` (flows that waited a timeout included: a rare event that lands on
        different flows counts as a disagreement).
    """
    from .workload import VALIDATION_SIZE_CLASSES, size_class

    names = [w for w in workloads().workload if available(w)] if workload_names is None else list(workload_names)
    rows = []
    for name in names:
        fct = reference_fct(name).assign(workbench=engine_fct(name)["fct_s"].to_numpy())
        cls = size_class(fct["size_bytes"].to_numpy(), VALIDATION_SIZE_CLASSES)
        for label, _, _ in VALIDATION_SIZE_CLASSES:
            sel = fct[cls == label]
            for a, b in _PAIRS:
                ratio = (sel[a] / sel[b]).to_numpy(dtype=float)
                beyond = np.abs(np.log(ratio)) > np.log(factor)
                rows.append((name, label, f"{a} / {b}", len(sel), float(np.median(ratio)) if len(sel) else np.nan,
                             float(beyond.mean()) if len(sel) else np.nan))  # fmt: skip
    return pd.DataFrame(rows, columns=["workload", "size_class", "pair", "flows", "median_ratio", "share_beyond"])
