"""Interactive panels for the fabric notebooks: packet spraying (01) and C4 traffic planning (02).

Each control is constrained to a range the model accepts, so no setting reaches an invalid call; every update calls
the vectorized model in :mod:`workbench.fabric` (well under a second at the panel's sizes) and refreshes the
FigureWidgets in place.
"""

from __future__ import annotations

import ipywidgets as w
import numpy as np
import plotly.graph_objects as go

from .. import fabric as fb
from ..viz import fabric as vf
from . import redraw

__all__ = ["SprayingPanel", "spraying_panel", "C4Panel", "c4_panel"]


def _ranks(collective: str, n_hosts: int) -> int:
    """Ranks for a collective on ``n_hosts`` hosts: all of them, or the largest power of two for halving-doubling."""
    if collective == "halving_doubling":
        return 1 << (n_hosts.bit_length() - 1)
    return n_hosts


class SprayingPanel:
    """Leaf-spine size, oversubscription, collective, message size, schemes and failed uplinks -> four figures."""

    def __init__(self) -> None:
        style = {"description_width": "150px"}
        self.leaves = w.IntSlider(8, min=2, max=16, description="leaves", style=style)
        self.spines = w.IntSlider(8, min=1, max=16, description="spines", style=style)
        self.hosts = w.IntSlider(8, min=1, max=16, description="hosts per leaf", style=style)
        self.oversub = w.Dropdown(options=[1.0, 1.5, 2.0, 3.0, 4.0], value=1.0, description="oversubscription",
                                  style=style)
        self.collective = w.Dropdown(options=list(fb.COLLECTIVES), value="halving_doubling",
                                     description="collective", style=style)
        self.size_exp = w.IntSlider(26, min=16, max=34, description="message 2^x bytes", style=style)
        self.schemes = w.SelectMultiple(options=list(fb.SCHEMES), value=("ecmp", "mp-8", "minimal", "planned"),
                                        description="schemes", rows=7, style=style)
        self.failed = w.IntSlider(0, min=0, max=15, description="failed uplinks (leaf 0)", style=style)
        self.status = w.HTML()
        self.fig_ratio = go.FigureWidget(vf.ratio_vs_size(fb.ratio_vs_size([2], 2, 2, samples=1)))
        self.fig_heat = go.FigureWidget()
        self.fig_time = go.FigureWidget()
        self.fig_qp = go.FigureWidget()
        for c in (self.leaves, self.spines, self.hosts, self.oversub, self.collective, self.size_exp, self.schemes,
                  self.failed):
            c.observe(self._on_change, names="value")
        self.widget = w.VBox([
            w.HBox([w.VBox([self.leaves, self.spines, self.hosts, self.oversub]),
                    w.VBox([self.collective, self.size_exp, self.failed]), self.schemes]),
            self.status,
            w.HBox([self.fig_ratio, self.fig_heat]),
            w.HBox([self.fig_time, self.fig_qp]),
        ])
        self.update()

    def _on_change(self, _change=None) -> None:
        self.update()

    def topology(self) -> fb.LeafSpine:
        s, h = self.spines.value, self.hosts.value
        self.failed.max = max(0, s - 1)
        uplink = h * 100.0 / (s * self.oversub.value)
        return fb.leaf_spine(self.leaves.value, s, h, host_gbps=100.0, uplink_gbps=uplink,
                             failed_links=[(0, p) for p in range(min(self.failed.value, s - 1))])

    def update(self) -> None:
        topo = self.topology()
        schemes = list(self.schemes.value) or ["ecmp"]
        coll = self.collective.value
        n = _ranks(coll, topo.n_hosts)
        if n < 2:
            self.status.value = "<b>Need at least 2 hosts.</b>"
            return
        size = 2 ** self.size_exp.value
        steps = fb.collective_steps(coll, n, size, seed=0)
        # the step with the most cross-leaf bytes is the one whose balance matters most
        cross = [float(st.size_bytes[topo.host_leaf(st.src) != topo.host_leaf(st.dst)].sum()) for st in steps]
        step = steps[int(np.argmax(cross))]
        sizes_leaves = sorted({2, 4, 8, 16} & set(range(2, self.leaves.value + 1)) | {self.leaves.value})
        table = fb.ratio_vs_size(sizes_leaves, topo.spines, topo.hosts_per_leaf, coll, schemes, step=None,
                                 samples=20, seed=0, host_gbps=100.0, uplink_gbps=topo.uplink_gbps,
                                 failed_links=topo.failed)
        loads = {sc: fb.link_loads(topo, step, sc, seed=1) for sc in schemes[:3]}
        msizes = np.logspace(16, 34, 10, base=2)
        curves = {sc: fb.collective_time_vs_size(topo, coll, n, msizes, sc, seed=2) for sc in schemes}
        qp = {sc: int(fb.connections_per_host(topo, step, sc).max()) for sc in schemes}
        new = [
            (self.fig_ratio, vf.ratio_vs_size(table, title=f"{coll}: time vs ideal spraying")),
            (self.fig_heat, vf.uplink_heatmaps(topo, loads, title=f"Leaf->spine load, step '{step.label}'")),
            (self.fig_time, vf.time_vs_size(msizes, curves, title=f"{coll} on {n} GPUs")),
            (self.fig_qp, vf.connections_bar(qp, title="Connections per host (busiest step)")),
        ]
        for fw, fig in new:
            redraw(fw, fig)
        self.status.value = (f"{topo.n_hosts} hosts, {n} ranks, oversubscription {topo.oversubscription:.2f}, "
                             f"{len(topo.failed)} failed uplink(s); heatmap/connections for step '{step.label}'")


def spraying_panel() -> w.Widget:
    """Build the packet-spraying panel and return its top-level widget."""
    return SprayingPanel().widget


class C4Panel:
    """GPU count, collective, connections per NIC, bonded ports and communication share -> C4 model figures."""

    def __init__(self) -> None:
        style = {"description_width": "160px"}
        self.gpus = w.SelectionSlider(options=[16, 32, 64, 128, 256, 512, 1024, 2048, 4096], value=256,
                                      description="GPUs", style=style)
        self.collective = w.Dropdown(options=["ring", "halving_doubling", "double_binary_tree", "all_to_all"],
                                     value="ring", description="collective", style=style)
        self.conns = w.IntSlider(2, min=1, max=8, description="connections per NIC", style=style)
        self.ports = w.IntSlider(2, min=1, max=4, description="bonded ports per NIC", style=style)
        self.share = w.FloatSlider(0.2, min=0.0, max=0.8, step=0.05, description="communication share",
                                   style=style)
        self.status = w.HTML()
        self.fig_gain = go.FigureWidget()
        self.fig_slow = go.FigureWidget()
        for c in (self.gpus, self.collective, self.conns, self.ports, self.share):
            c.observe(lambda _c: self.update(), names="value")
        self.widget = w.VBox([
            w.HBox([w.VBox([self.gpus, self.collective]), w.VBox([self.conns, self.ports, self.share])]),
            self.status,
            w.HBox([self.fig_gain, self.fig_slow]),
        ])
        self.update()

    def update(self) -> None:
        n = self.gpus.value
        coll = self.collective.value
        counts = [g for g in self.gpus.options if g <= n and (coll != "all_to_all" or g <= 512)]
        shares = np.round(np.linspace(0.0, 0.8, 17), 3)
        table = fb.c4_gain_table(counts, shares, collective=coll, connections_per_nic=self.conns.value,
                                 ports=self.ports.value, samples=10, seed=0)
        at = table[table.gpus == counts[-1]]
        r = float(at.slowdown.iloc[0])
        gain = float(fb.iteration_gain(self.share.value, r))
        figs = [
            (self.fig_gain, vf.gain_vs_share(table[table.gpus.isin([counts[0], counts[-1]])])),
            (self.fig_slow, vf.slowdown_vs_gpus(table, title=f"{coll}: ECMP / planned communication time")),
        ]
        for fw, fig in figs:
            redraw(fw, fig)
        self.status.value = (f"{counts[-1]} GPUs: ECMP stretches communication {r:.2f}x; at a "
                             f"{self.share.value:.0%} communication share planning gains {gain:.1%}")


def c4_panel() -> w.Widget:
    """Build the C4 traffic-planning panel and return its top-level widget."""
    return C4Panel().widget
