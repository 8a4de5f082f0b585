"""Failure-mitigation estimator speed (issue 23 part 5): ranking the four mitigations of a lossy-cable failure on a
128-host leaf-spine (8 leaves x 16 hosts, 4 spines, 2:1) with ~4,000 web-search flows <= 1 s (SWARM's point is that
the estimator is fast enough to rank many candidate mitigations while an incident is open), and one estimate of
one mitigation on the same flows <= 0.25 s.
"""

from __future__ import annotations

from benchmarks import Benchmark, best_time

LOAD = 0.5
DURATION_S = 0.1  # ~3,700 flows at load 0.5 on 128 x 10 Gbit/s


def _setup():
    from workbench.fabric.mitigation import Fabric, LinkFailure, flows_for_load

    fab = Fabric(leaves=8, spines=4, hosts_per_leaf=16, host_gbps=10.0, uplink_gbps=20.0)
    scen = (LinkFailure(0, 0, drop_rate=0.01), LinkFailure(0, 1, drop_rate=0.05))
    return fab, scen, flows_for_load(fab, LOAD, DURATION_S, seed=0)


def _rank() -> float:
    from workbench.fabric.mitigation import rank_mitigations

    fab, scen, flows = _setup()
    print(f"    ({len(flows):,} flows per mitigation)")
    rank_mitigations(fab, scen, LOAD, duration_s=DURATION_S, seeds=(0,))  # compile
    return best_time(lambda: rank_mitigations(fab, scen, LOAD, duration_s=DURATION_S, seeds=(0,)), repeat=3)


def _one() -> float:
    from workbench.fabric.mitigation import estimate_flows

    fab, scen, flows = _setup()
    estimate_flows(fab, scen, "reweight", flows)
    return best_time(lambda: estimate_flows(fab, scen, "reweight", flows), repeat=3)


BENCHMARKS = [
    Benchmark("rank 4 mitigations, 128 hosts, ~3,700 flows", 1.0, "s", _rank),
    Benchmark("estimate one mitigation, 128 hosts, ~3,700 flows", 0.25, "s", _one),
]
