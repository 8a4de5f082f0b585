"""The per-packet replay of a mitigation scenario: identical paths, the engine's loss and capacities applied."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.aqm.mitigation_check import agreement, perpacket_flows, rank_both
from workbench.fabric.mitigation import Fabric, LinkFailure

FAB = Fabric(leaves=2, spines=2, hosts_per_leaf=2, host_gbps=10.0, uplink_gbps=10.0)


def _flows(n=40, size=20_000):
    return pd.DataFrame(
        {
            "src": np.zeros(n, int),
            "dst": np.full(n, 2),
            "start_s": np.arange(n) * 1e-4,
            "size_bytes": np.full(n, size),
            "u": np.linspace(0.01, 0.99, n),
        }
    )


def test_disabled_cable_carries_nothing_and_flows_finish():
    out = perpacket_flows(FAB, (LinkFailure(0, 0, capacity_fraction=0.5),), "disable", _flows())
    assert set(out.spine) == {1}
    assert np.isfinite(out.fct_s).all()


def test_loss_on_the_path_costs_retransmission_time():
    scen = (LinkFailure(0, 0, drop_rate=0.2), LinkFailure(0, 1, drop_rate=0.2))
    lossy = perpacket_flows(FAB, scen, "none", _flows())
    clean = perpacket_flows(FAB, (), "none", _flows())
    assert lossy.fct_s.mean() > 3 * clean.fct_s.mean()
    assert lossy.timeouts.sum() > 0 and clean.timeouts.sum() == 0


@pytest.mark.slow
def test_rank_both_gives_one_rank_per_engine_and_mitigation():
    both = rank_both(FAB, (LinkFailure(0, 0, capacity_fraction=0.5),), 0.3, duration_s=0.003)
    assert sorted(both.groupby("engine")["rank"].apply(sorted).iloc[0]) == [1, 2, 3, 4]
    a = agreement(both)
    assert -1.0 <= a["kendall_tau"] <= 1.0
