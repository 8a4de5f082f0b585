"""The mitigation ranking checked on packets: the same flows, paths and failures replayed by the per-packet engine
(:func:`workbench.aqm.perpacket.simulate_packets`, DCTCP hosts), ranked the same way, and compared with the
flow-level estimator's ranking (:mod:`workbench.fabric.mitigation`). It lives in ``aqm`` because it runs the
packet engine: the flow-level model below it (``fabric``) never imports the packet layer above it.

SWARM validates its estimator's *ranking* (not its absolute numbers) against packet-level simulation (§5: the
estimator need only order mitigations correctly). Here every scenario is run under every mitigation on identical
flows and identical spine choices (the estimator's own draw, so the two differ only in how they compute FCTs): a
lossy cable drops packets with the engine's per-link ``loss_prob`` when the engine has it, a degraded cable has a
lower capacity, a disabled cable or drained spine simply carries no flow. Agreement is Kendall's tau between the two
combined orders and whether their top choice is the same.

One setting differs from the estimator on purpose: the engine's sender NIC neither marks nor drops (a host's own
queue is unbounded), so a long flow whose bottleneck is its own NIC grows its window without bound and holds every
other flow of that host behind milliseconds of queue (measured: a 19 KB flow behind one 24 MB rack-local flow of the
same host takes 6 ms). That delay is the same under every mitigation and would drown their differences in the
small-flow tail, so the check runs sender NICs ``nic_speedup`` (2x) faster: every bottleneck is then a switch port,
where DCTCP's marking holds the queue down.

Examples
--------
>>> from workbench.fabric.mitigation import Fabric, LinkFailure, flows_for_load
>>> fab = Fabric(leaves=2, spines=2, hosts_per_leaf=2, uplink_gbps=10.0)
>>> flows = flows_for_load(fab, 0.3, 0.0005, seed=0)
>>> out = perpacket_flows(fab, (LinkFailure(0, 0, capacity_fraction=0.5),), "none", flows)
>>> bool(out.fct_s.notna().all())
True
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._contracts import Choice, Instance, Items, accepts
from .._validate import integer, one_of, positive
from ..fabric.mitigation import (
    MITIGATIONS,
    Fabric,
    LinkFailure,
    choose_spines,
    clp_metrics,
    combined_order,
    estimate_flows,
    flows_for_load,
    routing_weights,
)
from ..fabric.topology import path_links
from .perpacket import check_packets, data_packets, simulate_packets
from .red import RedMarking

__all__ = ["CHECK_LOSS_RECOVERY", "perpacket_flows", "rank_both", "agreement"]

#: Loss recovery of the check's senders: the engine's SACK-like variant (a loss found by three later ACKs, else one
#: fixed timeout of ``fabric.rto_s`` after the drop; random loss on data packets past the sender's NIC), the model the
#: estimator's timeout term describes. The NewReno variant (initial 3 s RTO before an RTT sample, loss on ACKs too)
#: replays the fabric-websearch-128 network; comparing rankings on it is the next step. These senders' own check against
#: ns-3 and htsim (the fidelity scoreboard's ``packets-sack``, ``docs/packet_validation.md``) is what the mitigation
#: panel's fidelity note shows.
CHECK_LOSS_RECOVERY = "sack"


def _rows(links: np.ndarray) -> list[tuple]:
    return [(tuple(int(x) for x in r if x >= 0),) for r in links]


@accepts(failures=Items(Instance(LinkFailure)))
def perpacket_flows(
    fabric: Fabric,
    failures,
    mitigation: str,
    flows: pd.DataFrame,
    *,
    buffer_pkts: int = 1000,
    ecn_k_pkts: int = 20,
    lossy_weight: float = 0.1,
    nic_speedup: float = 2.0,
    seed: int = 0,
) -> pd.DataFrame:
    """Run ``flows`` packet by packet under ``failures`` and ``mitigation``: ``flows`` with ``spine`` and ``fct_s``.

    Flows with no live path are given ``fct_s = inf``. Refused up front past the packet engine's limit
    (:func:`~workbench.aqm.perpacket.check_packets`).
    """
    one_of("mitigation", mitigation, (*MITIGATIONS, "operator"))
    positive("nic_speedup", nic_speedup)
    integer("buffer_pkts", buffer_pkts, minimum=1)
    check_packets(data_packets(flows["size_bytes"], fabric.packet_bytes), "lower the flows' load or duration")
    topo = fabric.topology()
    weight, drop, frac = routing_weights(fabric, failures, mitigation, lossy_weight=lossy_weight)
    src = flows["src"].to_numpy(np.int64)
    dst = flows["dst"].to_numpy(np.int64)
    spine = choose_spines(fabric, src, dst, flows["u"].to_numpy(float), weight)
    routed = spine != -2
    order = np.flatnonzero(routed)[np.argsort(flows["start_s"].to_numpy(float)[routed], kind="stable")]
    fwd = path_links(topo, src[order], dst[order], spine[order])
    back = path_links(topo, dst[order], src[order], spine[order])
    ls = fabric.leaves * fabric.spines
    cap = np.array(topo.capacity_gbps, dtype=float)
    cap[topo.leaf_up_base : topo.leaf_up_base + ls] *= frac.ravel()
    cap[topo.spine_down_base :] *= frac.ravel()
    cap[: topo.n_hosts] *= nic_speedup  # sender NICs (module docstring)
    loss = np.zeros(topo.n_links)
    loss[topo.leaf_up_base : topo.leaf_up_base + ls] = drop.ravel()
    loss[topo.spine_down_base :] = drop.ravel()
    res = simulate_packets(
        cap,
        np.asarray(topo.link_kind) != 0,
        RedMarking.step(ecn_k_pkts),
        _rows(fwd),
        _rows(back),
        flows["start_s"].to_numpy(float)[order],
        flows["size_bytes"].to_numpy(np.int64)[order],
        link_delay_s=fabric.link_delay_s,
        buffer_pkts=buffer_pkts,
        packet_bytes=fabric.packet_bytes,
        init_cwnd_pkts=fabric.init_cwnd_pkts,
        min_rto_s=fabric.rto_s,
        seed=seed,
        loss_prob=loss,
        loss_recovery=CHECK_LOSS_RECOVERY,
    ).flows
    fct = np.full(src.size, np.inf)
    fct[order] = np.where(res["finished"].to_numpy(), res["fct_s"].to_numpy(float), np.inf)
    out = flows.copy()
    out["spine"] = spine
    out["fct_s"] = fct
    tmo = np.zeros(src.size, dtype=np.int64)
    tmo[order] = res["timeouts"].to_numpy()
    out["timeouts"] = tmo
    return out


@accepts(
    failures=Items(Instance(LinkFailure)),
    mitigations=Items(Choice("none", "disable", "drain", "reweight", "operator"), min_size=1),
)
def rank_both(
    fabric: Fabric,
    failures,
    load: float,
    *,
    duration_s: float = 0.02,
    seed: int = 0,
    mitigations=MITIGATIONS,
    tolerance: float = 0.1,
    lossy_weight: float = 0.1,
    horizon_s: float = 1.0,
) -> pd.DataFrame:
    """Every mitigation's CLP metrics from the estimator and from the per-packet engine, on the same flows.

    Returns one row per (engine, mitigation): ``engine`` ("estimator" or "perpacket"), the :func:`clp_metrics`
    columns and ``rank`` (the combined order within that engine).
    """
    flows = flows_for_load(fabric, load, duration_s, seed=seed)
    rows = []
    for engine in ("estimator", "perpacket"):
        for m in mitigations:
            if engine == "estimator":
                per = estimate_flows(
                    fabric, failures, m, flows, lossy_weight=lossy_weight, horizon_s=horizon_s, seed=seed
                )
            else:
                per = perpacket_flows(fabric, failures, m, flows, lossy_weight=lossy_weight, seed=seed)
            rows.append({"engine": engine, "mitigation": m, **clp_metrics(per, horizon_s)})
    out = pd.DataFrame(rows)
    out["rank"] = 0
    for _engine, grp in out.groupby("engine"):
        order = combined_order(grp["small_p99_fct_ms"], grp["long_tput_gbps"], tolerance)
        rank = np.empty(len(grp), dtype=np.int64)
        rank[order] = np.arange(1, len(grp) + 1)
        out.loc[grp.index, "rank"] = rank
    return out


@accepts()
def agreement(both: pd.DataFrame) -> dict:
    """Kendall's tau between the estimator's and the engine's combined ranks, and whether the top choices match.

    Examples
    --------
    >>> t = pd.DataFrame({"engine": ["estimator"] * 3 + ["perpacket"] * 3, "mitigation": list("abc") * 2,
    ...                   "rank": [1, 2, 3, 1, 3, 2]})
    >>> agreement(t)
    {'kendall_tau': 0.333, 'top1_agree': True, 'estimator_best': 'a', 'perpacket_best': 'a'}
    """
    from scipy.stats import kendalltau

    est = both[both.engine == "estimator"].set_index("mitigation")["rank"]
    pp = both[both.engine == "perpacket"].set_index("mitigation")["rank"].reindex(est.index)
    tau = float(kendalltau(est.to_numpy(), pp.to_numpy()).statistic)
    return {
        "kendall_tau": round(tau, 3),
        "top1_agree": bool(est.idxmin() == pp.idxmin()),
        "estimator_best": str(est.idxmin()),
        "perpacket_best": str(pp.idxmin()),
    }
