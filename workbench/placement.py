"""Hotspot-aware placement: ToR uplink utilization, queueing latency, and where network-intensive tasks land.

Two parts, following "Preventing Network Bottlenecks: Accelerating Datacenter Services with Hotspot-Aware Placement
for Compute and Storage" (Google, NSDI 2025).

Latency vs utilization (:func:`latency_vs_utilization`). A ToR uplink is a FIFO fed by bursty traffic: Gamma-renewal
arrivals with a coefficient of variation above 1 (bursty sources) and exponential service, simulated with the Lindley
recursion of :mod:`workbench.arrivals` at each utilization. Latency is flat at low utilization and turns up sharply
past a knee (:func:`knee_utilization`, the point of the normalized curve farthest below its chord, the "Kneedle"
rule). The same queue has an exact mean (:func:`exact_mean_latency`, GI/M/1): burstier sources raise the latency at
every utilization (by about ``(1 + cv^2) / 2`` in heavy traffic), but the normalized curve keeps its shape, so the
knee of the exact curve stays at 78% utilization over 5-95% for any CV; a simulated curve's knee moves by a grid step
or two between seeds (75-85% at 50,000 packets per point), which is noise, not burstiness.

Placement (:func:`place`, :func:`placement_study`). A cluster of ``racks`` racks, each with ``slots_per_rack`` task
slots and a ToR uplink whose capacity is drawn from a few hardware generations (heterogeneous uplinks). Tasks have
heavy-tailed (lognormal) bandwidth demands; the scheduler sees a *predicted* demand (the job's history) while the
realized demand is the prediction times lognormal noise. A job is network-intensive if its demand is in the top decile.
Policies:

* ``"random"``: every task on a uniformly random free slot (network-oblivious);
* ``"aware"``: tasks arrive in batches; each task samples ``choices`` candidate racks with free slots and takes the one
  whose ToR utilization (predicted load / uplink capacity, as of the batch start: schedulers act on slightly stale
  state) is lowest; afterwards tasks whose realized demand is at least ``migrate_min_gbps`` are migrated off any ToR
  whose utilization exceeds ``hot_threshold``, heaviest first, to the ToRs with the most headroom.

A ToR is *hot* when its realized utilization exceeds ``hot_threshold`` (default 0.75, the latency knee). Everything
is vectorized over tasks and racks; the only loops are over placement batches and migration passes. The module is
longer than ~500 lines because the placement comparison (:func:`place_policies`, one definition for the study and the
examples) sits beside the placement it compares; the latency half is the natural split if it grows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import arrivals
from ._contracts import NONNEGATIVE, Array, accepts, output
from ._rng import Seed, generator, spawn
from ._validate import array_1d, in_range, integer, nonnegative, one_of, positive

__all__ = [
    "latency_vs_utilization",
    "knee_utilization",
    "exact_mean_latency",
    "KNEE_GRID",
    "Cluster",
    "Placement",
    "make_cluster",
    "place",
    "POLICIES",
    "place_policies",
    "placement_summary",
    "placement_replicas",
    "placement_study",
    "tor_latency",
    "latency_by_policy",
]


# ---------------------------------------------------------------------------------------------------------------------
# latency vs utilization
# ---------------------------------------------------------------------------------------------------------------------
@accepts()
def latency_vs_utilization(
    utilization,
    *,
    cv: float = 2.0,
    service_s: float = 1.2e-6,
    n: int = 200_000,
    quantile: float = 0.99,
    seed: Seed = 0,
) -> pd.DataFrame:
    """Queueing latency of a link fed by bursty (Gamma, CV ``cv``) arrivals at each utilization.

    Parameters
    ----------
    utilization : array-like
        Link utilizations in ``(0, 1)``.
    cv : float
        Coefficient of variation of inter-arrival gaps (1 is Poisson; datacenter traffic is burstier).
    service_s : float
        Mean (exponential) transmission time of one packet, e.g. 1.2 us for 1500 B at 10 Gbit/s.
    n : int
        Packets simulated per utilization point.
    quantile : float
        Tail quantile reported next to the mean.
    seed : int, Generator or None
        One independent stream per utilization point is derived from it.

    Returns
    -------
    DataFrame with ``utilization, mean_latency_s, tail_latency_s`` (waiting plus service), and
    ``mean_wait_s``.

    Examples
    --------
    >>> df = latency_vs_utilization([0.3, 0.9], n=20_000)
    >>> bool(df.mean_latency_s.iloc[1] > 2 * df.mean_latency_s.iloc[0])
    True
    """
    u = array_1d("utilization", utilization, min_size=1, low=0.0, low_inclusive=False)
    if (u >= 1).any():
        raise ValueError(f"utilization must be < 1 for a steady state, got max {u.max()}")
    cv = positive("cv", cv)
    service_s = positive("service_s", service_s)
    n = integer("n", n, minimum=100)
    quantile = in_range("quantile", quantile, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    rows = []
    for rho, rng in zip(u, spawn(seed, u.size)):
        process = arrivals.Gamma.from_cv(float(rho) / service_s, cv)
        gaps = process.interarrivals(n, rng)
        svc = rng.exponential(service_s, n)
        waits = arrivals.lindley_waits(gaps, svc)[n // 10 :]  # drop the start from an empty queue
        lat = waits + svc[n // 10 :]
        rows.append((float(rho), float(lat.mean()), float(np.quantile(lat, quantile)), float(waits.mean())))
    return pd.DataFrame(rows, columns=["utilization", "mean_latency_s", "tail_latency_s", "mean_wait_s"])


#: Utilizations over which the knee is located (5-95% in 1% steps): the range sets the Kneedle normalization.
KNEE_GRID = np.round(np.arange(0.05, 0.9501, 0.01), 2)


@accepts()
def exact_mean_latency(utilization, *, cv: float = 2.0, service_s: float = 1.2e-6) -> np.ndarray:
    """Mean latency (wait plus service, seconds) of the link :func:`latency_vs_utilization` simulates, exactly:
    Gamma-renewal arrivals of CV ``cv`` at an exponential server (GI/M/1, :func:`workbench.arrivals.gim1_wait`).

    Examples
    --------
    >>> lat = exact_mean_latency([0.5], cv=1.0, service_s=1.0)   # M/M/1: E[T] = 1 / (mu - lambda) = 2
    >>> round(float(lat[0]), 6)
    2.0
    """
    u = array_1d("utilization", utilization, min_size=1, low=0.0, low_inclusive=False)
    if (u >= 1).any():
        raise ValueError(f"utilization must be < 1 for a steady state, got max {u.max()}")
    cv = positive("cv", cv)
    service_s = positive("service_s", service_s)
    return np.array([service_s + arrivals.gim1_wait(arrivals.Gamma.from_cv(x / service_s, cv), x).mean_s for x in u])


@accepts(utilization=Array(ge=0.0, le=1.0, min_size=3), latency=Array(ge=0.0, min_size=3))
def knee_utilization(utilization, latency) -> float:
    """Utilization at the knee of a latency curve: the point farthest below the chord of the normalized curve.

    Examples
    --------
    >>> u = np.linspace(0.05, 0.95, 19)
    >>> round(knee_utilization(u, 1 / (1 - u)), 2)   # M/M/1 latency over 5-95% utilization
    0.8
    """
    u = array_1d("utilization", utilization, min_size=3)
    y = array_1d("latency", latency, min_size=3)
    if u.size != y.size:
        raise ValueError(f"utilization and latency must have the same length, got {u.size} and {y.size}")
    order = np.argsort(u)
    u, y = u[order], y[order]
    un = (u - u[0]) / (u[-1] - u[0])
    span = y[-1] - y[0]
    if span <= 0:
        raise ValueError("latency must rise over the utilization range to have a knee")
    yn = (y - y[0]) / span
    return float(u[int(np.argmax(un - yn))])


# ---------------------------------------------------------------------------------------------------------------------
# placement
# ---------------------------------------------------------------------------------------------------------------------
@accepts()
@dataclass(frozen=True)
class Cluster:
    """Racks and tasks of one placement experiment.

    Attributes
    ----------
    uplink_gbps : ndarray, shape (racks,)
        ToR uplink capacity per rack.
    slots_per_rack : int
    predicted_gbps, demand_gbps : ndarray, shape (tasks,)
        Demand the scheduler sees and the demand that materializes.
    intensive : ndarray of bool, shape (tasks,)
        Network-intensive tasks (top decile of predicted demand).
    """

    uplink_gbps: np.ndarray
    slots_per_rack: int
    predicted_gbps: np.ndarray
    demand_gbps: np.ndarray
    intensive: np.ndarray

    @property
    def racks(self) -> int:
        return int(self.uplink_gbps.size)

    @property
    def tasks(self) -> int:
        return int(self.demand_gbps.size)


@accepts(uplink_weights=Array(ge=0.0, min_size=1))
def make_cluster(
    racks: int = 1000,
    *,
    slots_per_rack: int = 40,
    fill: float = 0.8,
    mean_utilization: float = 0.4,
    uplink_choices_gbps=(100.0, 200.0, 400.0),
    uplink_weights=(0.3, 0.4, 0.3),
    demand_sigma: float = 1.5,
    noise_sigma: float = 0.5,
    intensive_quantile: float = 0.9,
    seed: Seed = None,
) -> Cluster:
    """A cluster with heterogeneous ToR uplinks and heavy-tailed (lognormal) task bandwidth demands.

    Parameters
    ----------
    racks, slots_per_rack : int
        Cluster size.
    fill : float
        Fraction of slots occupied by tasks, in ``(0, 1]``.
    mean_utilization : float
        Mean ToR uplink utilization the demands are scaled to (total demand / total uplink capacity), in ``(0, 1)``.
    uplink_choices_gbps, uplink_weights : sequence
        Uplink capacities of the hardware generations and their shares.
    demand_sigma : float
        Log-standard deviation of task demand (heavy tail: 1.5 puts about 40% of the bandwidth in the top 5% of
        tasks).
    noise_sigma : float
        Log-standard deviation of realized over predicted demand.
    intensive_quantile : float
        Tasks above this quantile of predicted demand are network-intensive.
    seed : int, Generator or None

    Examples
    --------
    >>> c = make_cluster(50, seed=0)
    >>> c.racks, c.tasks
    (50, 1600)
    >>> round(float(c.predicted_gbps.sum() / c.uplink_gbps.sum()), 2)
    0.4
    """
    racks = integer("racks", racks, minimum=2)
    slots_per_rack = integer("slots_per_rack", slots_per_rack, minimum=1)
    fill = in_range("fill", fill, 0.0, 1.0, low_inclusive=False)
    mean_utilization = in_range(
        "mean_utilization", mean_utilization, 0.0, 1.0, low_inclusive=False, high_inclusive=False
    )
    caps = array_1d("uplink_choices_gbps", uplink_choices_gbps, min_size=1, low=0.0, low_inclusive=False)
    weights = array_1d("uplink_weights", uplink_weights, min_size=1, low=0.0)
    if weights.size != caps.size or weights.sum() <= 0:
        raise ValueError("uplink_weights must have one non-negative weight per uplink choice, not all zero")
    demand_sigma = positive("demand_sigma", demand_sigma)
    noise_sigma = nonnegative("noise_sigma", noise_sigma)
    intensive_quantile = in_range(
        "intensive_quantile", intensive_quantile, 0.0, 1.0, low_inclusive=False, high_inclusive=False
    )
    rng = generator(seed)
    uplink = rng.choice(caps, size=racks, p=weights / weights.sum())
    tasks = max(1, int(round(fill * racks * slots_per_rack)))
    predicted = rng.lognormal(0.0, demand_sigma, tasks)
    predicted *= mean_utilization * uplink.sum() / predicted.sum()
    realized = predicted * rng.lognormal(-0.5 * noise_sigma**2, noise_sigma, tasks)
    intensive = predicted >= np.quantile(predicted, intensive_quantile)
    return Cluster(uplink, slots_per_rack, predicted, realized, intensive)


@output
@dataclass(frozen=True)
class Placement:
    """Where every task ended up and the resulting ToR utilizations.

    Attributes
    ----------
    rack : ndarray of int, shape (tasks,)
    utilization : ndarray, shape (racks,)
        Realized ToR uplink utilization (demand / capacity; may exceed 1 = overloaded).
    hot : ndarray of bool, shape (racks,)
    migrated : int
        Tasks moved by the migration step.
    """

    rack: np.ndarray
    utilization: np.ndarray
    hot: np.ndarray
    migrated: int

    @property
    def hot_tors(self) -> int:
        return int(self.hot.sum())


def _utilization(cluster: Cluster, rack: np.ndarray, demand: np.ndarray) -> np.ndarray:
    return np.bincount(rack, weights=demand, minlength=cluster.racks) / cluster.uplink_gbps


@accepts()
def place(
    cluster: Cluster,
    policy: str = "aware",
    *,
    choices: int = 4,
    batch: int | None = None,
    hot_threshold: float = 0.75,
    migrate: bool = True,
    migrate_min_gbps: float | None = None,
    migration_passes: int = 4,
    seed: Seed = None,
) -> Placement:
    """Place the tasks of ``cluster`` with ``policy`` ("random" or "aware"); see the module docstring.

    Parameters
    ----------
    cluster : Cluster
    policy : {"random", "aware"}
    choices : int
        Candidate racks sampled per task by the aware policy (power of d choices).
    batch : int, optional
        Tasks placed per scheduling round on the same utilization snapshot (default: a tenth of the racks).
    hot_threshold : float
        ToR utilization above which a ToR is hot (and migration kicks in).
    migrate : bool
        Aware policy only: migrate high-bandwidth tasks off hot ToRs after placement.
    migrate_min_gbps : float, optional
        Only tasks with at least this realized demand are migrated (default: the network-intensive cut-off).
    migration_passes : int
        Rounds of migration.
    seed : int, Generator or None

    Examples
    --------
    >>> c = make_cluster(200, seed=1)
    >>> place(c, "random", seed=2).hot_tors > place(c, "aware", seed=2).hot_tors
    True
    """
    if not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a Cluster, got {type(cluster).__name__}")
    policy = one_of("policy", policy, ("random", "aware"))
    choices = integer("choices", choices, minimum=1)
    hot_threshold = positive("hot_threshold", hot_threshold)
    migration_passes = integer("migration_passes", migration_passes, minimum=0)
    rng = generator(seed)
    R, T, S = cluster.racks, cluster.tasks, cluster.slots_per_rack
    if T > R * S:
        raise ValueError(f"cluster has {T} tasks but only {R * S} slots")
    if policy == "random":
        slots = rng.permutation(R * S)[:T]
        rack = slots // S
        migrated = 0
    else:
        batch = max(1, R // 10) if batch is None else integer("batch", batch, minimum=1)
        rack = np.full(T, -1, dtype=np.int64)
        used = np.zeros(R, dtype=np.int64)
        load = np.zeros(R)
        pending = rng.permutation(T)  # arrival order
        while pending.size:
            now, pending = pending[:batch], pending[batch:]
            free = np.flatnonzero(used < S)
            cand = free[rng.integers(0, free.size, (now.size, choices))]
            util = (load / cluster.uplink_gbps)[cand]
            pick = cand[np.arange(now.size), np.argmin(util, axis=1)]
            # a rack takes at most its free slots from one batch; the rest retry in the next batch
            order = np.argsort(pick, kind="stable")
            sp = pick[order]
            first = np.searchsorted(sp, sp, side="left")
            rank = np.arange(sp.size) - first
            ok = np.empty(now.size, dtype=bool)
            ok[order] = rank < (S - used[sp])
            rack[now[ok]] = pick[ok]
            np.add.at(used, pick[ok], 1)
            np.add.at(load, pick[ok], cluster.predicted_gbps[now[ok]])
            pending = np.concatenate([now[~ok], pending])
        migrated = 0
        if migrate:
            cut = (
                float(cluster.predicted_gbps[cluster.intensive].min())
                if migrate_min_gbps is None
                else nonnegative("migrate_min_gbps", migrate_min_gbps)
            )
            rack, migrated = _migrate(cluster, rack, cut, hot_threshold, migration_passes)
    util = _utilization(cluster, rack, cluster.demand_gbps)
    return Placement(rack, util, util > hot_threshold, migrated)


def _migrate(cluster: Cluster, rack: np.ndarray, cut_gbps: float, threshold: float, passes: int):
    """Move the heaviest migratable tasks off ToRs above ``threshold`` to the ToRs with the most headroom."""
    rack = rack.copy()
    demand = cluster.demand_gbps
    cap = cluster.uplink_gbps
    S = cluster.slots_per_rack
    moved = 0
    for _ in range(passes):
        load = np.bincount(rack, weights=demand, minlength=cluster.racks)
        excess = load - threshold * cap
        hot = excess > 0
        if not hot.any():
            break
        movable = np.flatnonzero(hot[rack] & (demand >= cut_gbps))
        if movable.size == 0:
            break
        # per hot rack, heaviest first: move the shortest prefix whose demand covers the excess
        order = movable[np.lexsort((-demand[movable], rack[movable]))]
        r = rack[order]
        csum = np.cumsum(demand[order])
        start = np.searchsorted(r, r, side="left")
        before = csum - demand[order] - np.where(start > 0, csum[start - 1], 0.0)
        go = order[before < excess[r]]
        if go.size == 0:
            break
        used = np.bincount(rack, minlength=cluster.racks)
        headroom = threshold * cap - load
        cold = np.flatnonzero((headroom > 0) & (used < S) & ~hot)
        if cold.size == 0:
            break
        cold = cold[np.argsort(-headroom[cold])]
        go = go[np.argsort(-demand[go])][: cold.size]  # heaviest task to the roomiest rack, one per rack per pass
        rack[go] = cold[: go.size]
        moved += int(go.size)
    return rack, moved


#: The placement policies, the baseline first.
POLICIES = ("random", "aware")


@accepts()
def place_policies(cluster: Cluster, *, seed: Seed = None, **kwargs) -> dict[str, Placement]:
    """``{policy: Placement}``: ``cluster`` placed by :func:`place` (``kwargs``) under each of :data:`POLICIES` (an int
    ``seed`` gives each policy the same fresh stream, a Generator is drawn from by each in turn)."""
    return {policy: place(cluster, policy, seed=seed, **kwargs) for policy in POLICIES}


@accepts(utilization=NONNEGATIVE)
def tor_latency(utilization, curve: pd.DataFrame, column: str = "mean_latency_s") -> np.ndarray:
    """Latency of each ToR read off a latency-vs-utilization curve (ToRs at or above the curve's end get its end).

    Examples
    --------
    >>> curve = pd.DataFrame({"utilization": [0.1, 0.9], "mean_latency_s": [1.0, 5.0]})
    >>> tor_latency([0.5, 2.0], curve).tolist()
    [3.0, 5.0]
    """
    u = array_1d("utilization", utilization, low=0.0)
    if column not in curve:
        raise ValueError(f"curve has no column {column!r}")
    return np.interp(u, curve["utilization"].to_numpy(), curve[column].to_numpy())


@accepts()
def latency_by_policy(cluster: Cluster, placements: dict, curve: pd.DataFrame) -> pd.DataFrame:
    """Per policy: hot ToRs and the queueing latency of tasks read off ``curve`` at their ToR's utilization.

    ToRs beyond the curve's last utilization get its last value, so overloaded ToRs are understated.

    Returns
    -------
    DataFrame ``policy, hot_tors, mean_latency_s, p99_latency_s, intensive_mean_latency_s``.

    Examples
    --------
    >>> c = make_cluster(100, seed=0)
    >>> curve = pd.DataFrame({"utilization": [0.0, 1.0], "mean_latency_s": [1.0, 2.0]})
    >>> latency_by_policy(c, {"random": place(c, "random", seed=1)}, curve).columns.tolist()[:2]
    ['policy', 'hot_tors']
    """
    if not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a Cluster, got {type(cluster).__name__}")
    rows = []
    for policy, p in placements.items():
        lat = tor_latency(p.utilization, curve)[p.rack]
        rows.append(
            {
                "policy": policy,
                "hot_tors": p.hot_tors,
                "mean_latency_s": float(lat.mean()),
                "p99_latency_s": float(np.quantile(lat, 0.99)),
                "intensive_mean_latency_s": float(lat[cluster.intensive].mean()),
            }
        )
    return pd.DataFrame(rows)


@accepts()
def placement_summary(cluster: Cluster, placements: dict[str, Placement]) -> pd.DataFrame:
    """Per policy: hot ToRs, where network-intensive and other tasks land, peak utilization, migrations.

    Returns
    -------
    DataFrame ``policy, hot_tors, hot_fraction, intensive_on_hot`` (fraction of network-intensive tasks on hot
    ToRs), ``other_on_hot, max_utilization, migrated``.

    Examples
    --------
    >>> c = make_cluster(100, seed=0)
    >>> placement_summary(c, {"random": place(c, "random", seed=1)}).columns.tolist()[:3]
    ['policy', 'hot_tors', 'hot_fraction']
    """
    if not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a Cluster, got {type(cluster).__name__}")
    rows = []
    for policy, p in placements.items():
        on_hot = p.hot[p.rack]
        rows.append(
            (
                policy,
                p.hot_tors,
                p.hot_tors / cluster.racks,
                float(on_hot[cluster.intensive].mean()),
                float(on_hot[~cluster.intensive].mean()),
                float(p.utilization.max()),
                p.migrated,
            )
        )
    return pd.DataFrame(
        rows,
        columns=[
            "policy",
            "hot_tors",
            "hot_fraction",
            "intensive_on_hot",
            "other_on_hot",
            "max_utilization",
            "migrated",
        ],
    )


@accepts()
def placement_replicas(
    racks: int = 1000,
    *,
    seeds: int = 4,
    hot_threshold: float = 0.75,
    cluster_kwargs: dict | None = None,
    place_kwargs: dict | None = None,
    seed: Seed = 0,
):
    """``(replica, cluster, {"random": Placement, "aware": Placement})`` for each of ``seeds`` independent clusters
    (one stream per replica, drawn from ``seed``): the placements :func:`placement_study` summarizes, for a caller
    that also shows their ToR utilizations.

    Examples
    --------
    >>> [(i, sorted(p)) for i, _, p in placement_replicas(50, seeds=2)]
    [(0, ['aware', 'random']), (1, ['aware', 'random'])]
    """
    seeds = integer("seeds", seeds, minimum=1)
    for i, rng in enumerate(spawn(seed, seeds)):
        cluster = make_cluster(racks, seed=rng, **(cluster_kwargs or {}))
        yield i, cluster, place_policies(cluster, hot_threshold=hot_threshold, seed=rng, **(place_kwargs or {}))


@accepts()
def placement_study(
    racks: int = 1000,
    *,
    seeds: int = 4,
    hot_threshold: float = 0.75,
    cluster_kwargs: dict | None = None,
    place_kwargs: dict | None = None,
    seed: Seed = 0,
) -> pd.DataFrame:
    """Random vs aware placement over ``seeds`` independent clusters.

    Returns
    -------
    DataFrame, one row per (replica, policy): ``replica, policy, hot_tors, hot_fraction,
    intensive_on_hot`` (fraction of network-intensive tasks on hot ToRs), ``other_on_hot``, ``max_utilization``,
    ``migrated``.

    Examples
    --------
    >>> df = placement_study(100, seeds=2)
    >>> sorted(df.policy.unique())
    ['aware', 'random']
    """
    seeds = integer("seeds", seeds, minimum=1)
    frames = []
    for i, cluster, placed in placement_replicas(
        racks,
        seeds=seeds,
        hot_threshold=hot_threshold,
        cluster_kwargs=cluster_kwargs,
        place_kwargs=place_kwargs,
        seed=seed,
    ):
        frames.append(placement_summary(cluster, placed).assign(replica=i))
    table = pd.concat(frames, ignore_index=True)
    return table[["replica", *table.columns[:-1]]]
