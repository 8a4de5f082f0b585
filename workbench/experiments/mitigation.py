"""Failure mitigation studies (issue 23 part 5, SWARM NSDI'25): connection-level performance of a leaf-spine under a
failure and a mitigation.

* ``mitigation`` -- a 64-host leaf-spine (8 leaves x 8 hosts at 10 Gbit/s, 4 spines, 10 Gbit/s uplinks: 2:1
  oversubscribed) carrying web-search flows at ``load`` for ``duration_s``, under the ``failure`` scenario
  (:func:`workbench.fabric.mitigation.failure_scenario`: a cable dropping ``drop_rate`` of packets, one at
  ``capacity_fraction`` of its capacity, or both kinds at once) and one ``mitigation`` (``none``, ``disable``,
  ``drain``, ``reweight`` or ``operator``: the CorrOpt-style rule's own action), measured by the flow-level
  estimator or by the per-packet engine (``engine``). Returns SWARM's CLP metrics: small-flow (< 100 KB) p99 and
  mean FCT, long-flow (>= 1 MB) mean and p10 throughput. ``mitigation`` and ``engine`` are treatments: at a point
  every mitigation and both engines see the same flows and the same routing draws.
* ``mitigation-ranking`` -- the same point under every mitigation and the operators' rule at once (each row exactly
  the ``mitigation`` experiment's row at that point and seed: the same seeded parameters give the same seed), ranked
  by :func:`workbench.fabric.mitigation.rank_table` (SWARM's comparator: small-flow p99 FCT, ties within 10% broken
  by long-flow throughput): one row per mitigation with ``rank``, ``rank_fct`` and ``rank_tput`` among the four
  candidates, best first; the operators' rule's row comes last with rank 0 (it repeats one candidate's action).
"""

from __future__ import annotations

import pandas as pd

from .._rng import int31_seed
from ..fabric.mitigation import (
    FAILURES,
    MITIGATIONS,
    Fabric,
    clp_metrics,
    estimate_flows,
    failure_scenario,
    flows_for_load,
    operator_rule,
    rank_table,
)
from ._space import Param, experiment

__all__ = ["mitigation", "mitigation_ranking", "FABRIC", "ENGINES"]

#: The studies' fabric (small enough for the per-packet engine to replay in seconds).
FABRIC = Fabric(leaves=8, spines=4, hosts_per_leaf=8, host_gbps=10.0, uplink_gbps=10.0)
ENGINES = ("estimator", "perpacket")
#: The parameters of a scenario (every one but the mitigation), shared by both experiments in this order, so a point
#: of ``mitigation-ranking`` draws the seed of the same point of ``mitigation``.
SCENARIO = (
    Param("failure", "lossy", choices=FAILURES, doc="failure scenario (lossy cable, degraded cable, both kinds)"),
    Param("drop_rate", 0.01, "fraction", low=1e-5, high=0.5, log=True, doc="packet drop rate of a lossy cable"),
    Param("capacity_fraction", 0.5, "fraction", low=0.05, high=1.0, doc="capacity left on a degraded cable"),
    Param.fraction("load", 0.4, "offered load / hosts' NIC capacity"),
    Param("engine", "estimator", choices=ENGINES, seeded=False, doc="flow-level estimator or per-packet engine"),
    Param("duration_s", 0.02, "s", low=0.001, high=1.0, log=True, doc="time flows arrive over"),
)


@experiment(
    "mitigation",
    version="1",
    small={"failure": ["lossy", "concurrent"], "mitigation": ["none", "disable", "reweight", "operator"]},
    params=[
        *SCENARIO[:4],
        Param("mitigation", "none", choices=(*MITIGATIONS, "operator"), seeded=False, doc="mitigation installed"),
        *SCENARIO[4:],
    ],
)
def mitigation(*, failure, drop_rate, capacity_fraction, load, mitigation, engine, duration_s, seed):
    """SWARM's CLP metrics of one failure under one mitigation, on the estimator or on packets."""
    failures = failure_scenario(failure, drop_rate, capacity_fraction)
    s = int31_seed(seed)
    flows = flows_for_load(FABRIC, load, duration_s, seed=s)
    if engine == "estimator":
        per = estimate_flows(FABRIC, failures, mitigation, flows, seed=s)
    else:
        from ..aqm.mitigation_check import perpacket_flows

        per = perpacket_flows(FABRIC, failures, mitigation, flows, seed=s)
    out = clp_metrics(per)
    op = operator_rule(FABRIC, failures)
    out["operator_action"] = op
    out["is_operator_action"] = bool(mitigation == "operator" or mitigation == op)
    return out


@experiment(
    "mitigation-ranking",
    version="1",
    small={"failure": ["lossy", "capacity"], "duration_s": 0.005},
    params=list(SCENARIO),
)
def mitigation_ranking(*, failure, drop_rate, capacity_fraction, load, engine, duration_s, seed):
    """Every mitigation of one failure ranked by SWARM's comparator, and the operators' rule's row (rank 0)."""
    runs = (*MITIGATIONS, "operator")
    if engine == "perpacket":  # the same flows replayed once per run: refused before the first, not after minutes
        from ..aqm.perpacket import check_packets, data_packets

        flows = flows_for_load(FABRIC, load, duration_s, seed=int31_seed(seed))
        check_packets(
            len(runs) * data_packets(flows["size_bytes"], FABRIC.packet_bytes),
            f"lower duration_s or load (the flows are replayed {len(runs)} times: each mitigation and the operators' "
            "rule)",
        )
    scenario = {
        "failure": failure,
        "drop_rate": drop_rate,
        "capacity_fraction": capacity_fraction,
        "load": load,
        "engine": engine,
        "duration_s": duration_s,
    }
    rows = [{"mitigation": m, **mitigation.fn(**scenario, mitigation=m, seed=seed)} for m in runs]
    t = pd.DataFrame(rows)
    ranked = rank_table(t[t.mitigation != "operator"])
    op = t[t.mitigation == "operator"].assign(rank=0, rank_fct=0, rank_tput=0)
    return pd.concat([ranked, op], ignore_index=True)
