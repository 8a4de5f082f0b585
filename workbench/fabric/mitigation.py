"""Failure mitigation ranked by connection-level performance: a fast flow-level estimator on a leaf-spine (SWARM).

The module is longer than ~500 lines because the estimator, the mitigations and the ranking share one flow model
(the per-cable weights, drop rates and capacities each reads); :mod:`workbench.aqm.mitigation_check` holds the packet-level check.

SWARM (Namyar et al., "Enhancing Network Failure Mitigation with Performance-Aware Ranking", NSDI'25; arXiv
2305.13792) ranks the mitigations an operator could install for a failure (take a lossy link down, drain a switch,
re-weight ECMP, do nothing) by their estimated effect on *connection-level performance* (CLP: short-flow FCT tails,
long-flow throughput) instead of by connectivity rules and proxy metrics (§1-§2), using a scalable CLP estimator
(§3-§4) that samples traffic and routing, computes max-min fair rates per epoch and models TCP on lossy paths.
This module is that estimator and ranking, at the scale of this workbench.

Model (each piece stated; none fitted)
--------------------------------------
- **Fabric**: :func:`workbench.fabric.leaf_spine` ids; a failure is a leaf-spine cable (both directions) that drops
  packets at rate ``p`` (:attr:`LinkFailure.drop_rate`) and/or runs at a fraction of its capacity.
- **Workload**: Poisson flows at ``load`` x the hosts' aggregate NIC capacity, uniform random host pairs, sizes from
  the DCTCP web-search distribution (:func:`workbench.fabric.flow_sizes.web_search`).
- **Routing**: every inter-leaf flow takes one spine, drawn with probability proportional to its path weight (ECMP:
  1 for every live path; WCMP: the product of its two cables' weights). The draw uses one uniform number per flow,
  shared by all mitigations (common random numbers, so two mitigations differ only by what they change).
- **Sharing**: flows present share links max-min fairly (progressive filling, :mod:`workbench.fabric._fluid`),
  recomputed at every arrival and at least every ``epoch_s``; a flow's rate is also capped by its NIC and by the
  TCP loss-rate bound of its path (Mathis, Semke, Mahdavi & Ott, "The Macroscopic Behavior of the TCP Congestion
  Avoidance Algorithm", CCR 1997): ``rate <= MSS / RTT * sqrt(3/2) / sqrt(p)`` with ``p = 1 - prod(1 - p_link)``.
- **FCT**: fluid transfer time + ``RTT x`` slow-start rounds (``ceil(log2(n / init_cwnd + 1))`` for ``n`` packets) +
  loss recovery: ``K ~ Binomial(n, p)`` packets are lost; a loss among a flow's last three packets (or in a flow of
  fewer than four) has no three duplicate ACKs behind it and waits a retransmission timeout ``rto_s``, any other
  costs one RTT (fast retransmit). That timeouts dominate short-flow latency on lossy paths is the observation of
  Cardwell, Savage & Anderson ("Modeling TCP Latency", INFOCOM 2000); SWARM models the same effect from offline
  measured distributions (§4), here it is closed form.
- **Metrics** (SWARM §3: 99th-percentile FCT of short flows, throughput of long flows): small flows are < 100 KB,
  long flows >= 1 MB; throughput is ``size / FCT``.

Mitigations and the operators' rule
-----------------------------------
``"none"``, ``"disable"`` (every failed cable down), ``"drain"`` (every spine carrying a failed cable drained) and
``"reweight"`` (WCMP: a cable's weight is its capacity fraction, times ``lossy_weight`` if it drops packets). The
operators' rule SWARM compares with is CorrOpt's (Zhuo et al., SIGCOMM'17; SWARM §2, §6): disable a lossy link
only if every leaf keeps at least ``threshold`` of its uplinks (the capacity constraint; 0.75 here); links that
only lost capacity are left alone (CorrOpt acts on corruption). :func:`operator_rule` returns the action it takes.

The ranking (:func:`rank_mitigations`) orders by small-flow p99 FCT, by long-flow throughput, and combined as SWARM's
comparators do (§4.3: a primary metric, ties within a tolerance broken by the next): FCT first, then throughput
among mitigations within ``tolerance`` of the best FCT.

Examples
--------
>>> fab = Fabric(leaves=4, spines=4, hosts_per_leaf=4)
>>> scen = (LinkFailure(0, 0, drop_rate=0.05),)
>>> operator_rule(fab, scen)
'disable'
>>> r = rank_mitigations(fab, scen, load=0.3, duration_s=0.02, seeds=(0,))
>>> sorted(r.mitigation) == sorted(MITIGATIONS)
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._contracts import Array, Choice, Instance, Int, Items, Real, Rule, accepts, same_length
from .._rng import Seed, generator
from .._validate import in_range, integer, nonnegative, one_of, positive, probability
from ._fluid import fluid_completion, max_min_rates
from .flow_sizes import web_search
from .topology import LeafSpine, leaf_spine, path_links

__all__ = [
    "MITIGATIONS",
    "Fabric",
    "LinkFailure",
    "mathis_rate_bps",
    "max_min_fair",
    "flows_for_load",
    "routing_weights",
    "choose_spines",
    "estimate_flows",
    "clp_metrics",
    "operator_rule",
    "rank_mitigations",
    "combined_order",
    "SMALL_BYTES",
    "LONG_BYTES",
    "FAILURES",
    "failure_scenario",
    "rank_table",
]

MITIGATIONS = ("none", "disable", "drain", "reweight")
#: The failure scenarios of the studies (:func:`failure_scenario`).
FAILURES = ("lossy", "capacity", "concurrent")
#: Small flows for the FCT tail, long flows for throughput (bytes).
SMALL_BYTES = 100_000
LONG_BYTES = 1_000_000
#: Mathis et al.'s constant for periodic loss and delayed ACKs off: sqrt(3/2).
MATHIS_C = float(np.sqrt(1.5))


@accepts()
@dataclass(frozen=True)
class Fabric:
    """A leaf-spine and its TCP: counts, capacities (Gbit/s), one-way link delay, packet size, initial window, RTO.

    The default is 2:1 oversubscribed (16 x 10 Gbit/s hosts under 4 x 20 Gbit/s uplinks), so that removing capacity
    matters at moderate load, as in the production fabrics SWARM studies.
    """

    leaves: int = 8
    spines: int = 4
    hosts_per_leaf: int = 16
    host_gbps: float = 10.0
    uplink_gbps: float = 20.0
    link_delay_s: float = 1e-6
    packet_bytes: int = 1500
    init_cwnd_pkts: int = 10
    rto_s: float = 0.010

    def __post_init__(self) -> None:
        for name in ("leaves", "spines", "hosts_per_leaf"):
            integer(name, getattr(self, name), minimum=1, maximum=4096)
        positive("host_gbps", self.host_gbps)
        positive("uplink_gbps", self.uplink_gbps)
        nonnegative("link_delay_s", self.link_delay_s)
        integer("packet_bytes", self.packet_bytes, minimum=64)
        integer("init_cwnd_pkts", self.init_cwnd_pkts, minimum=1)
        positive("rto_s", self.rto_s)

    @accepts()
    def topology(self) -> LeafSpine:
        return leaf_spine(self.leaves, self.spines, self.hosts_per_leaf, self.host_gbps, self.uplink_gbps)

    @property
    def mss_bytes(self) -> int:
        return self.packet_bytes - 40

    @accepts()
    def rtt_s(self, hops: int = 4) -> float:
        """Base RTT of a ``hops``-link path: propagation both ways plus one packet's serialization per hop."""
        return hops * (2.0 * self.link_delay_s + 8.0 * self.packet_bytes / (self.host_gbps * 1e9))


@accepts()
@dataclass(frozen=True)
class LinkFailure:
    """A failed leaf-spine cable (both directions): it drops ``drop_rate`` of packets and carries
    ``capacity_fraction`` of its capacity."""

    leaf: int
    spine: int
    drop_rate: float = 0.0
    capacity_fraction: float = 1.0

    def __post_init__(self) -> None:
        integer("leaf", self.leaf, minimum=0)
        integer("spine", self.spine, minimum=0)
        in_range("drop_rate", self.drop_rate, 0.0, 1.0, high_inclusive=False)
        in_range("capacity_fraction", self.capacity_fraction, 0.0, 1.0, low_inclusive=False)


@accepts(rtt_s=Real(gt=0.0), mss_bytes=Real(gt=0.0))
def mathis_rate_bps(mss_bytes: float, rtt_s: float, loss: float | np.ndarray) -> np.ndarray:
    """TCP's loss-limited rate ``MSS / RTT * sqrt(3/2) / sqrt(p)`` in bit/s (Mathis et al. 1997); ``inf`` at ``p=0``.

    Examples
    --------
    >>> round(float(mathis_rate_bps(1460, 100e-6, 0.01)) / 1e9, 3)   # 11680 bit / 100 us * 1.2247 / 0.1
    1.431
    """
    p = np.asarray(loss, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(p > 0, 8.0 * mss_bytes / rtt_s * MATHIS_C / np.sqrt(np.maximum(p, 1e-300)), np.inf)


def _csr(paths: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(paths) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(p) for p in paths])
    flat = np.fromiter((j for p in paths for j in p), dtype=np.int64, count=int(ptr[-1]))
    return ptr, flat


@accepts(capacity=Array(ge=0.0), paths=Items(Items(Int(ge=0))), flow_cap=Array(ge=0.0, finite=False, optional=True))
def max_min_fair(capacity, paths, flow_cap=None) -> np.ndarray:
    """Max-min fair rates of flows on fixed paths (progressive filling).

    Parameters
    ----------
    capacity : array-like
        Capacity of every link (any unit; rates come back in it).
    paths : sequence of sequences of int
        Link ids each flow crosses.
    flow_cap : array-like, optional
        Each flow's own ceiling (default none).

    Examples
    --------
    Flow 0 crosses links 0 (capacity 10) and 1 (capacity 4); flow 1 only link 0, flow 2 only link 1. Link 1 is the
    bottleneck (4 / 2 = 2 each for flows 0 and 2); flow 1 takes what link 0 has left (10 - 2 = 8):

    >>> max_min_fair([10, 4], [[0, 1], [0], [1]]).round(2).tolist()
    [2.0, 8.0, 2.0]
    """
    cap = np.asarray(capacity, dtype=float)
    if cap.ndim != 1 or (cap < 0).any() or not np.isfinite(cap).all():
        raise ValueError("capacity must be a 1-D array of finite values >= 0")
    paths = [list(map(int, p)) for p in paths]
    if any(j < 0 or j >= cap.size for p in paths for j in p):
        raise ValueError(f"paths must hold link ids in 0..{cap.size - 1}")
    fc = np.full(len(paths), np.inf) if flow_cap is None else np.asarray(flow_cap, dtype=float)
    if fc.shape != (len(paths),) or (fc < 0).any():
        raise ValueError("flow_cap must hold one value >= 0 per flow")
    ptr, flat = _csr(paths)
    big = float(cap.sum() + 1.0)
    return np.asarray(max_min_rates(cap, ptr, flat, np.minimum(fc, big)))


@accepts()
def flows_for_load(fabric: Fabric, load: float, duration_s: float, seed: Seed = None) -> pd.DataFrame:
    """Poisson web-search flows at ``load`` x the hosts' aggregate NIC capacity, uniform distinct host pairs.

    Returns ``src, dst, start_s, size_bytes, u`` (``u``: the flow's uniform routing draw).

    Examples
    --------
    >>> f = flows_for_load(Fabric(leaves=2, spines=2, hosts_per_leaf=2), 0.5, 0.01, seed=0)
    >>> bool((f.src != f.dst).all()), list(f.columns)
    (True, ['src', 'dst', 'start_s', 'size_bytes', 'u'])
    """
    load = in_range("load", load, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    duration_s = positive("duration_s", duration_s)
    rng = generator(seed)
    n_hosts = fabric.leaves * fabric.hosts_per_leaf
    if n_hosts < 2:
        raise ValueError("the fabric needs at least 2 hosts")
    dist = web_search()
    rate = load * n_hosts * fabric.host_gbps * 1e9 / (8.0 * dist.mean_bytes)
    n = int(rng.poisson(rate * duration_s))
    start = np.sort(rng.uniform(0.0, duration_s, n))
    size = dist.sample(n, rng)
    src = rng.integers(0, n_hosts, n)
    dst = (src + rng.integers(1, n_hosts, n)) % n_hosts
    return pd.DataFrame(
        {"src": src, "dst": dst, "start_s": start, "size_bytes": np.maximum(size, 1), "u": rng.random(n)}
    )


def _cables(fabric: Fabric, failures) -> tuple[np.ndarray, np.ndarray]:
    """``(leaves, spines)`` drop rate and capacity fraction of every cable."""
    drop = np.zeros((fabric.leaves, fabric.spines))
    frac = np.ones((fabric.leaves, fabric.spines))
    for f in failures:
        if not isinstance(f, LinkFailure):
            raise TypeError(f"failures must be LinkFailure records, got {type(f).__name__}")
        if f.leaf >= fabric.leaves or f.spine >= fabric.spines:
            raise ValueError(
                f"failure on cable ({f.leaf}, {f.spine}) outside {fabric.leaves} leaves x {fabric.spines} spines"
            )
        drop[f.leaf, f.spine] = 1 - (1 - drop[f.leaf, f.spine]) * (1 - f.drop_rate)
        frac[f.leaf, f.spine] *= f.capacity_fraction
    return drop, frac


@accepts(failures=Items(Instance(LinkFailure)))
def routing_weights(fabric: Fabric, failures, mitigation: str, *, lossy_weight: float = 0.1):
    """Per-cable ``(weight, drop_rate, capacity_fraction)`` arrays, each ``(leaves, spines)``, after ``mitigation``.

    Examples
    --------
    >>> fab = Fabric(leaves=2, spines=2, hosts_per_leaf=1)
    >>> w, p, c = routing_weights(fab, [LinkFailure(0, 1, capacity_fraction=0.5)], "reweight")
    >>> w.tolist(), c.tolist()
    ([[1.0, 0.5], [1.0, 1.0]], [[1.0, 0.5], [1.0, 1.0]])
    """
    one_of("mitigation", mitigation, (*MITIGATIONS, "operator"))
    probability("lossy_weight", lossy_weight)
    if mitigation == "operator":
        mitigation = operator_rule(fabric, failures)
    drop, frac = _cables(fabric, failures)
    failed = (drop > 0) | (frac < 1)
    weight = np.ones_like(drop)
    if mitigation == "disable":
        weight[failed] = 0.0
    elif mitigation == "drain":
        weight[:, failed.any(axis=0)] = 0.0
    elif mitigation == "reweight":
        weight = frac * np.where(drop > 0, lossy_weight, 1.0)
    elif mitigation.startswith("disable:"):  # the operators' partial action: listed cables down
        for pair in mitigation.split(":", 1)[1].split(";"):
            a, b = map(int, pair.split(","))
            weight[a, b] = 0.0
    return weight, drop, frac


@accepts(failures=Items(Instance(LinkFailure)))
def operator_rule(fabric: Fabric, failures, threshold: float = 0.75) -> str:
    """CorrOpt's capacity-constrained rule (SWARM §2): disable lossy cables, worst first, while every leaf keeps at
    least ``threshold`` of its uplinks; capacity-only failures are left alone. Returns a mitigation name:
    ``"none"``, ``"disable"`` (all failed cables down) or ``"disable:l,s;..."`` (only those listed).

    Examples
    --------
    >>> fab = Fabric(leaves=2, spines=4, hosts_per_leaf=1)
    >>> operator_rule(fab, [LinkFailure(0, 0, drop_rate=0.01), LinkFailure(0, 1, drop_rate=0.02)])
    'disable:0,1'
    """
    in_range("threshold", threshold, 0.0, 1.0)
    drop, frac = _cables(fabric, failures)
    up = np.ones((fabric.leaves, fabric.spines), dtype=bool)
    order = np.argsort(-drop, axis=None, kind="stable")
    taken = []
    for idx in order:
        a, b = divmod(int(idx), fabric.spines)
        if drop[a, b] <= 0:
            break
        up[a, b] = False
        if up[a].mean() >= threshold - 1e-12:
            taken.append((a, b))
        else:
            up[a, b] = True
    if not taken:
        return "none"
    if len(taken) == int(((drop > 0) | (frac < 1)).sum()):
        return "disable"
    return "disable:" + ";".join(f"{a},{b}" for a, b in sorted(taken))


@accepts(
    same_length("src", "dst", "u"),
    Rule(
        ("fabric", "weight"),
        lambda fabric, weight: weight.shape == (fabric.leaves, fabric.spines),
        lambda fabric, weight: (
            f"weight must be (leaves, spines) = ({fabric.leaves}, {fabric.spines}), got {weight.shape}"
        ),
    ),
    src=Array(integer=True, ge=0),
    dst=Array(integer=True, ge=0),
    u=Array(ge=0.0, le=1.0),
    weight=Array(ndim=2, ge=0.0),
)
def choose_spines(fabric: Fabric, src, dst, u, weight) -> np.ndarray:
    """Spine of every flow drawn from its path weights with its uniform ``u`` (-1: rack-local; -2: no live path)."""
    src_leaf = np.asarray(src) // fabric.hosts_per_leaf
    dst_leaf = np.asarray(dst) // fabric.hosts_per_leaf
    w = weight[src_leaf] * weight[dst_leaf]  # (F, spines): WCMP entry per (src leaf, dst leaf)
    tot = w.sum(axis=1)
    cum = np.cumsum(w, axis=1) / np.where(tot > 0, tot, 1.0)[:, None]
    spine = (np.asarray(u)[:, None] >= cum).sum(axis=1)
    spine = np.minimum(spine, fabric.spines - 1)
    spine = np.where(tot > 0, spine, -2)
    return np.where(src_leaf == dst_leaf, -1, spine)


@accepts(failures=Items(Instance(LinkFailure)))
def estimate_flows(
    fabric: Fabric,
    failures,
    mitigation: str,
    flows: pd.DataFrame,
    *,
    lossy_weight: float = 0.1,
    epoch_s: float = 50e-6,
    horizon_s: float = 1.0,
    seed: Seed = 0,
) -> pd.DataFrame:
    """Every flow's estimated FCT under ``failures`` and ``mitigation`` (the model of the module docstring).

    Returns ``flows`` with ``spine, loss, fct_s, timeouts`` added (``fct_s`` inf for a flow with no live path or not
    done by ``horizon_s``).
    """
    positive("epoch_s", epoch_s)
    positive("horizon_s", horizon_s)
    topo = fabric.topology()
    weight, drop, frac = routing_weights(fabric, failures, mitigation, lossy_weight=lossy_weight)
    src = flows["src"].to_numpy(np.int64)
    dst = flows["dst"].to_numpy(np.int64)
    start = flows["start_s"].to_numpy(float)
    size = flows["size_bytes"].to_numpy(np.int64)
    spine = choose_spines(fabric, src, dst, flows["u"].to_numpy(float), weight)
    links = path_links(topo, src, dst, np.maximum(spine, -1))  # (F, 4), -1 padded for rack-local
    cap = np.array(topo.capacity_gbps, dtype=float) * 1e9
    ls = fabric.leaves * fabric.spines
    cap[topo.leaf_up_base : topo.leaf_up_base + ls] *= frac.ravel()
    cap[topo.spine_down_base :] *= frac.ravel()
    link_drop = np.zeros(topo.n_links)
    link_drop[topo.leaf_up_base : topo.leaf_up_base + ls] = drop.ravel()
    link_drop[topo.spine_down_base :] = drop.ravel()
    ok = links >= 0
    keep = np.where(ok, 1.0 - link_drop[np.maximum(links, 0)], 1.0)
    loss = 1.0 - keep.prod(axis=1)
    rtt = fabric.rtt_s(4)
    fcap = np.minimum(mathis_rate_bps(fabric.mss_bytes, rtt, loss), fabric.host_gbps * 1e9)
    fcap = np.where(spine == -2, 0.0, fcap)
    ptr = np.zeros(src.size + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(ok.sum(axis=1))
    order = np.argsort(start, kind="stable")
    inv = np.empty_like(order)
    inv[order] = np.arange(order.size)
    okd = ok[order]
    flat = links[order][okd]
    ptr_o = np.zeros(src.size + 1, dtype=np.int64)
    ptr_o[1:] = np.cumsum(okd.sum(axis=1))
    finish = fluid_completion(
        start[order],
        8.0 * size[order].astype(float),
        cap,
        ptr_o,
        flat,
        np.minimum(fcap[order], cap.sum()),
        epoch_s,
        horizon_s,
    )[inv]
    # slow-start rounds and loss recovery (module docstring)
    n_pkts = np.ceil(size / fabric.mss_bytes).astype(np.int64)
    rounds = np.ceil(np.log2(n_pkts / fabric.init_cwnd_pkts + 1.0))
    rng = generator(seed)
    lost = rng.binomial(n_pkts, np.clip(loss, 0.0, 1.0))
    tail = np.minimum(1.0, 3.0 / n_pkts)
    timeouts = rng.binomial(lost, tail)
    fct = (finish - start) + rtt * rounds + timeouts * fabric.rto_s + (lost - timeouts) * rtt
    fct = np.where(np.isfinite(finish), fct, np.inf)
    out = flows.copy()
    out["spine"] = spine
    out["loss"] = loss
    out["fct_s"] = fct
    out["timeouts"] = timeouts
    return out


@accepts()
def clp_metrics(fct: pd.DataFrame, horizon_s: float = 1.0) -> dict:
    """SWARM's CLP metrics of a per-flow table (``size_bytes, fct_s``): small-flow p99 and mean FCT (ms), long-flow
    mean and 10th-percentile throughput (Gbit/s), the fraction of flows that did not finish (counted at
    ``horizon_s``)."""
    size = fct["size_bytes"].to_numpy(float)
    t = np.minimum(fct["fct_s"].to_numpy(float), horizon_s)
    small, long_ = size < SMALL_BYTES, size >= LONG_BYTES
    tput = 8.0 * size[long_] / t[long_] / 1e9 if long_.any() else np.array([np.nan])
    return {
        "small_p99_fct_ms": float(np.percentile(t[small], 99) * 1e3) if small.any() else np.nan,
        "small_mean_fct_ms": float(t[small].mean() * 1e3) if small.any() else np.nan,
        "long_tput_gbps": float(np.mean(tput)),
        "long_tput_p10_gbps": float(np.percentile(tput, 10)),
        "unfinished": float(np.mean(~np.isfinite(fct["fct_s"].to_numpy(float)))),
        "n_flows": int(size.size),
    }


@accepts(p99_fct=Array(ge=0.0, min_size=1, allow_nan=True), tput=Array(ge=0.0, min_size=1, allow_nan=True))
def combined_order(p99_fct, tput, tolerance: float = 0.1) -> np.ndarray:
    """SWARM-style comparator (§4.3): order by small-flow p99 FCT; among those within ``tolerance`` (relative) of
    the best remaining FCT, higher long-flow throughput first. Returns indices, best first.

    Examples
    --------
    >>> combined_order([1.0, 1.05, 3.0], [5.0, 9.0, 9.9]).tolist()
    [1, 0, 2]
    """
    f = np.nan_to_num(np.asarray(p99_fct, dtype=float), nan=np.inf)  # nothing measured: last
    g = np.nan_to_num(np.asarray(tput, dtype=float), nan=-np.inf)
    left = list(np.argsort(f, kind="stable"))
    out: list[int] = []
    while left:
        best = f[left[0]]
        band = [i for i in left if f[i] <= best * (1.0 + tolerance) + 1e-15] or [left[0]]
        band.sort(key=lambda i: -g[i])
        out += band
        left = [i for i in left if i not in band]
    return np.asarray(out, dtype=np.int64)


@accepts(
    failures=Items(Instance(LinkFailure)),
    mitigations=Items(Choice("none", "disable", "drain", "reweight", "operator"), min_size=1),
    seeds=Items(Int(ge=0), min_size=1),
)
def rank_mitigations(
    fabric: Fabric,
    failures,
    load: float,
    *,
    mitigations=MITIGATIONS,
    duration_s: float = 0.02,
    seeds=(0, 1),
    tolerance: float = 0.1,
    lossy_weight: float = 0.1,
    epoch_s: float = 50e-6,
    horizon_s: float = 1.0,
) -> pd.DataFrame:
    """Estimate every mitigation's CLP on the same sampled workloads (one per seed, averaged) and rank them.

    Returns one row per mitigation: the :func:`clp_metrics` columns, ``rank_fct`` (1 = lowest small p99 FCT),
    ``rank_tput`` (1 = highest long throughput), ``rank`` (the combined order, :func:`combined_order`) and
    ``operator`` (True for the operators' rule's action).
    """
    failures = tuple(failures)
    mits = [one_of("mitigations", m, (*MITIGATIONS, "operator")) for m in mitigations]
    per: dict[str, list[dict]] = {m: [] for m in mits}
    for s in seeds:
        flows = flows_for_load(fabric, load, duration_s, seed=s)  # one workload per seed, shared by every mitigation
        for m in mits:
            est = estimate_flows(
                fabric, failures, m, flows, lossy_weight=lossy_weight, epoch_s=epoch_s, horizon_s=horizon_s, seed=s
            )
            per[m].append(clp_metrics(est, horizon_s))
    rows = []
    for m in mits:
        row = pd.DataFrame(per[m]).mean(numeric_only=True).to_dict()
        row["mitigation"] = m
        rows.append(row)
    out = rank_table(pd.DataFrame(rows), tolerance)
    op = operator_rule(fabric, failures)
    out["operator"] = out["mitigation"] == (op if op in MITIGATIONS else "operator")
    cols = ["mitigation", "rank", "rank_fct", "rank_tput", "small_p99_fct_ms", "small_mean_fct_ms"]
    cols += ["long_tput_gbps", "long_tput_p10_gbps", "unfinished", "n_flows", "operator"]
    return out[cols].sort_values("rank").reset_index(drop=True)


@accepts()
def failure_scenario(kind: str, drop_rate: float = 0.01, capacity_fraction: float = 0.5) -> tuple[LinkFailure, ...]:
    """The studies' failures (issue 23 part 5): ``"lossy"``, cable (leaf 0, spine 0) drops ``drop_rate``;
    ``"capacity"``, it runs at ``capacity_fraction``; ``"concurrent"``, cables (0, 0) and (0, 1) both drop
    ``drop_rate`` (the operators' rule may take only one down: the capacity constraint) and cable (3, 2) runs at
    ``capacity_fraction``.

    Examples
    --------
    >>> [(f.leaf, f.spine) for f in failure_scenario("concurrent")]
    [(0, 0), (0, 1), (3, 2)]
    """
    one_of("failure", kind, FAILURES)
    if kind == "lossy":
        return (LinkFailure(0, 0, drop_rate=drop_rate),)
    if kind == "capacity":
        return (LinkFailure(0, 0, capacity_fraction=capacity_fraction),)
    return (
        LinkFailure(0, 0, drop_rate=drop_rate),
        LinkFailure(0, 1, drop_rate=drop_rate),
        LinkFailure(3, 2, capacity_fraction=capacity_fraction),
    )


@accepts()
def rank_table(metrics: pd.DataFrame, tolerance: float = 0.1) -> pd.DataFrame:
    """Rank the mitigations of one scenario from a table of ``mitigation, small_p99_fct_ms, long_tput_gbps`` (one
    row per mitigation): adds ``rank_fct``, ``rank_tput`` and the combined ``rank`` (:func:`combined_order`), sorted
    best first.

    Examples
    --------
    >>> t = pd.DataFrame({"mitigation": ["none", "disable"], "small_p99_fct_ms": [5.0, 0.3],
    ...                   "long_tput_gbps": [4.0, 3.9]})
    >>> rank_table(t).mitigation.tolist()
    ['disable', 'none']
    """
    out = metrics.reset_index(drop=True).copy()
    fct = out["small_p99_fct_ms"].fillna(np.inf)  # no short (long) flows: ranked last
    tput = out["long_tput_gbps"].fillna(-np.inf)
    out["rank_fct"] = fct.rank(method="min").astype(int)
    out["rank_tput"] = tput.rank(ascending=False, method="min").astype(int)
    order = combined_order(fct, tput, tolerance)
    rank = np.empty(len(out), dtype=np.int64)
    rank[order] = np.arange(1, len(out) + 1)
    out["rank"] = rank
    return out.sort_values("rank").reset_index(drop=True)
