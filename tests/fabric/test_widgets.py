"""The fabric panels build, react to every control, and stay within valid model calls at the slider corners."""

from __future__ import annotations

import dataclasses

import ipywidgets as W
import pandas as pd
import pytest

from workbench import experiments as ex
from workbench.widgets.fabric import (
    SPRAYING_MAX_HOSTS,
    SPRAYING_START,
    C4Panel,
    SprayingPanel,
    c4_model,
    c4_panel,
    size_stops,
    spraying_model,
    spraying_panel,
)


def test_spraying_panel_corners():
    p = SprayingPanel()
    for coll in p.collective.options:
        p.collective.value = coll
        assert "hosts" in p.status.value
        assert len(p.fig_ratio.data) > 0 and len(p.fig_heat.data) > 0
    p.collective.value = "halving_doubling"
    p.leaves.value, p.hosts.value, p.spines.value = 3, 3, 1  # 9 hosts -> 8 ranks; one spine: no failure possible
    assert "8 ranks" in p.status.value and [v for _, v in p.failed.options] == [0]
    p.spines.value = 6
    assert [v for _, v in p.failed.options] == [0, 1, 2, 3, 4, 5]  # leaf 0 keeps one uplink
    p.failed.value = 5
    p.oversub.value = 4.0
    assert "5 failed" in p.status.value and "oversubscription 4.00" in p.status.value
    p.spines.value = 2  # fewer spines: the failures follow
    assert p.failed.value == 1 and "1 failed" in p.status.value
    p.oversub.value = 0.0  # uplinks as given (100 Gbit/s): 3 hosts x 100 over 2 spines x 100
    assert "oversubscription 1.50" in p.status.value
    p.routings.value = ()
    assert len(p.fig_qp.data) == 1
    p.leaves.value, p.hosts.value = 2, 1
    assert "2 hosts" in p.status.value
    p.leaves.value = 1
    assert "Not computed" in p.status.value and all(len(f.data) == 0 for f in (p.fig_ratio, p.fig_qp))
    assert isinstance(spraying_panel(), W.Box)


def test_spraying_panel_keeps_its_fabric_within_the_host_budget():
    """The leaves and hosts-per-leaf stops keep the fabric within SPRAYING_MAX_HOSTS hosts, as far as the parameters'
    ranges reach: one leaf of the most hosts, the most leaves of one host."""
    p = SprayingPanel()
    exp = ex.get("uplink-loads")
    p.hosts.value = 1
    assert max(v for _, v in p.leaves.options) == min(SPRAYING_MAX_HOSTS, exp.param("leaves").high)
    p.leaves.value = 1
    assert max(v for _, v in p.hosts.options) == min(SPRAYING_MAX_HOSTS, exp.param("hosts_per_leaf").high)
    p.hosts.value = 64
    assert max(v for _, v in p.leaves.options) * 64 <= SPRAYING_MAX_HOSTS
    assert [v for _, v in p.size.options] == size_stops() and p.size.value == SPRAYING_START["size_bytes"]


def test_c4_panel_corners():
    p = C4Panel()
    p.gpus.value = 16
    p.share.value = 0.3
    assert "16 GPUs" in p.status.value and "30%" in p.status.value
    (mark,) = [t for t in p.fig_gain.data if t.name.startswith("selected")]
    assert mark.x[0] == pytest.approx(30.0)  # the communication-share slider moves a drawn point (it changed none)
    p.share.value = 0.6
    (mark,) = [t for t in p.fig_gain.data if t.name.startswith("selected")]
    assert mark.x[0] == pytest.approx(60.0) and mark.y[0] > 0
    p.collective.value = "all_to_all"
    p.gpus.value = 4096  # all-to-all sweep is capped at 512 GPUs to stay interactive
    assert "512 GPUs" in p.status.value
    p.conns.value, p.ports.value = 1, 4
    assert len(p.fig_gain.data) >= 1 and len(p.fig_slow.data) == 3
    assert isinstance(c4_panel(), W.Box)


def test_panel_models_return_frozen_views_of_tidy_tables():
    v = spraying_model(["ecmp", "minimal"], leaves=4, spines=2, hosts_per_leaf=2, size_bytes=2.0**20)
    assert v.n_ranks == 8 and v.step_label == "reduce-scatter d=4"  # the step that crosses leaves
    assert v.n_hosts == 8 and v.oversubscription == 1.0  # 2 hosts x 100 Gbit/s over 2 uplinks as given
    assert v.connections.routing.tolist() == ["ecmp", "minimal"]  # a fabric-congestion sweep at the busiest step
    assert (v.connections.step_label == v.step_label).all() and "connections_per_host" in v.connections
    assert set(v.uplink.routing) == {"ecmp", "minimal"} and set(v.times.routing) == {"ecmp", "minimal"}
    assert v.uplink.load_bytes.sum() == pytest.approx(
        2 * 8 * 2**20 / 2
    )  # 8 ranks send half a MiB each, under each routing
    assert all(isinstance(t, pd.DataFrame) for t in (v.ratio, v.uplink, v.times, v.connections))
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.n_ranks = 4
    c = c4_model(4096, "all_to_all", 2, 2, 0.2)
    assert c.gpus == 512 and c.gain == pytest.approx(0.2 * (c.slowdown - 1))
