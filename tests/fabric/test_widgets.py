"""The fabric panels build, react to every control, and stay within valid model calls at the slider corners."""

from __future__ import annotations

import ipywidgets as W

from workbench.widgets.fabric import C4Panel, SprayingPanel, c4_panel, spraying_panel


def test_spraying_panel_corners():
    p = SprayingPanel()
    for coll in p.collective.options:
        p.collective.value = coll
        assert "hosts" in p.status.value
        assert len(p.fig_ratio.data) > 0 and len(p.fig_heat.data) > 0
    p.collective.value = "halving_doubling"
    p.leaves.value, p.hosts.value, p.spines.value = 3, 3, 1  # 9 hosts -> 8 ranks; one spine: no failure possible
    assert "8 ranks" in p.status.value and p.failed.max == 0
    p.spines.value = 6
    p.failed.value = 5
    p.oversub.value = 4.0
    assert "5 failed" in p.status.value and "oversubscription 4.00" in p.status.value
    p.routings.value = ()
    assert len(p.fig_qp.data) == 1
    p.leaves.value, p.hosts.value = 2, 1
    assert "2 hosts" in p.status.value
    assert isinstance(spraying_panel(), W.Box)


def test_c4_panel_corners():
    p = C4Panel()
    p.gpus.value = 16
    p.share.value = 0.3
    assert "16 GPUs" in p.status.value and "30%" in p.status.value
    p.collective.value = "all_to_all"
    p.gpus.value = 4096  # all-to-all sweep is capped at 512 GPUs to stay interactive
    assert "512 GPUs" in p.status.value
    p.conns.value, p.ports.value = 1, 4
    assert len(p.fig_gain.data) >= 1 and len(p.fig_slow.data) == 3
    assert isinstance(c4_panel(), W.Box)
