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
"""

from __future__ import annotations

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
)
from ._space import Param, experiment

__all__ = ["mitigation", "FABRIC", "ENGINES"]

#: The studies' fabric (small enough for the per-packet engine to replay in seconds).
FABRIC = Fabric(leaves=8, spines=4, hosts_per_leaf=8, host_gbps=10.0, uplink_gbps=10.0)
ENGINES = ("estimator", "perpacket")


@experiment(
    "mitigation",
    version="1",
    small={"failure": ["lossy", "concurrent"], "mitigation": ["none", "disable", "reweight", "operator"]},
    params=[
        Param("failure", "lossy", choices=FAILURES, doc="failure scenario (lossy cable, degraded cable, both kinds)"),
        Param("drop_rate", 0.01, "fraction", low=1e-5, high=0.5, log=True, doc="packet drop rate of a lossy cable"),
        Param("capacity_fraction", 0.5, "fraction", low=0.05, high=1.0, doc="capacity left on a degraded cable"),
        Param.fraction("load", 0.4, "offered load / hosts' NIC capacity"),
        Param("mitigation", "none", choices=(*MITIGATIONS, "operator"), seeded=False, doc="mitigation installed"),
        Param("engine", "estimator", choices=ENGINES, seeded=False, doc="flow-level estimator or per-packet engine"),
        Param("duration_s", 0.02, "s", low=0.001, high=1.0, log=True, doc="time flows arrive over"),
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
