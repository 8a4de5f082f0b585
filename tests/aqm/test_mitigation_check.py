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


def test_a_replay_past_the_packet_limit_is_refused_before_it_runs(monkeypatch):
    # 40 flows of 20 kB: 14 packets each, 560 in all
    monkeypatch.setenv("WORKBENCH_MAX_PACKETS", "500")
    with pytest.raises(ValueError, match=r"about 560 packets .* limit of 500 .*lower the flows' load or duration"):
        perpacket_flows(FAB, (), "none", _flows())
    monkeypatch.setenv("WORKBENCH_MAX_PACKETS", "560")
    assert np.isfinite(perpacket_flows(FAB, (), "none", _flows()).fct_s).all()


def test_the_ranking_counts_its_five_replays_against_the_limit():
    """At the top of its ranges the per-packet ranking is ~2.7 x 10^8 packets (five replays of ~5 x 10^7): refused at
    once, naming its knobs, where it had run for about nine minutes without a word."""
    from workbench.experiments.mitigation import mitigation_ranking

    top = dict(failure="concurrent", drop_rate=0.01, capacity_fraction=0.5, load=0.99, duration_s=1.0, seed=0)
    with pytest.raises(ValueError, match=r"past the packet engine's limit.*lower duration_s or load \(the flows are "
                       r"replayed 5 times"):  # fmt: skip
        mitigation_ranking.fn(**top, engine="perpacket")
