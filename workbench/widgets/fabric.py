"""Interactive panels for the fabric notebooks: packet spraying (01) and C4 traffic planning (02).

The C4 panel is generated from the ``c4-gain`` experiment: its controls are the experiment's ``Param``s
(:func:`~workbench.widgets.param_controls`) and every number a row of ``experiments.sweep``. The spraying panel is not
yet converted (issue 36, item 2: ``tests/widgets/test_panels_from_experiments.py`` lists why): its model call
(:func:`spraying_model`) reads the fabric experiments' sweeps but picks the busiest step and routes its heat map
itself. The :mod:`workbench.viz.fabric` builders turn the tables into figures and :func:`~workbench.widgets.redraw`
swaps them into the panels' :class:`~workbench.widgets.FigurePane` widgets; an update takes about a second at most.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets as w
import numpy as np
import pandas as pd

from .. import experiments as ex
from .. import fabric as fb
from .._units import name_label
from ..viz import fabric as vf
from . import FigurePane, clear, panel, param_controls, redraw

__all__ = [
    "SprayingView",
    "spraying_model",
    "SprayingPanel",
    "spraying_panel",
    "C4_SAMPLES",
    "C4_ALL_TO_ALL_MAX_GPUS",
    "C4_CONTROLS",
    "C4View",
    "c4_gpu_counts",
    "c4_model",
    "C4Panel",
    "c4_panel",
]


@dataclass(frozen=True)
class SprayingView:
    """What the spraying panel shows for one setting (tables from the fabric experiments)."""

    n_ranks: int
    step_label: str
    ratio: pd.DataFrame  #: fabric-congestion sweep over leaves x routing: collective time vs spraying
    uplink: pd.DataFrame  #: uplink_load_table of the busiest step (first three routings)
    times: pd.DataFrame  #: collective-time-vs-size sweep: routing, size_bytes, time_s
    connections: pd.DataFrame  #: fabric-congestion sweep at the busiest step: routing, connections_per_host


def spraying_model(topology: fb.LeafSpine, collective: str, size_bytes: int, routings: Sequence[str]) -> SprayingView:
    """The spraying panel's model call: collective ``collective`` on one rank per host of ``topology``.

    Examples
    --------
    >>> v = spraying_model(fb.leaf_spine(2, 2, 2), "ring", 2**20, ["ecmp", "minimal"])
    >>> v.n_ranks, v.connections.connections_per_host.tolist()
    (4, [1, 2])
    """
    failed = len(topology.failed)
    if set(topology.failed) != {(0, s) for s in range(failed)}:
        raise ValueError(f"the panel fails leaf 0's first uplinks only, got failed links {topology.failed}")
    n = fb.ranks_that_fit(collective, topology.n_hosts)
    steps = fb.collective_steps(collective, n, size_bytes, seed=0)
    step = fb.busiest_step(topology, steps)
    fabric = {
        "spines": topology.spines,
        "hosts_per_leaf": topology.hosts_per_leaf,
        "host_gbps": topology.host_gbps,
        "uplink_gbps": topology.uplink_gbps,
        "failed_uplinks": failed,
        "collective": collective,
        "routing": list(routings),
    }
    run = functools.partial(ex.sweep, client=False, progress=False)
    sizes_leaves = sorted({2, 4, 8, 16} & set(range(2, topology.leaves + 1)) | {topology.leaves})
    ratio = run("fabric-congestion", {**fabric, "leaves": sizes_leaves, "measure": "collective_time", "samples": 20})
    fabric["leaves"] = topology.leaves
    loads = {r: fb.link_loads(topology, step, r, seed=1) for r in routings[:3]}
    times = run("collective-time-vs-size", {**fabric, "min_size_bytes": 2.0**16, "max_size_bytes": 2.0**34})
    connections = run("fabric-congestion", {**fabric, "step": steps.index(step), "samples": 1})
    return SprayingView(n, step.label, ratio, fb.uplink_load_table(topology, loads), times, connections)


class SprayingPanel:
    """Leaf-spine size, oversubscription, collective, message size, routings and failed uplinks -> four figures."""

    def __init__(self) -> None:
        self.leaves = w.IntSlider(8, min=2, max=16, description="leaves")
        self.spines = w.IntSlider(8, min=1, max=16, description="spines")
        self.hosts = w.IntSlider(8, min=1, max=16, description="hosts per leaf")
        self.oversub = w.Dropdown(options=[1.0, 1.5, 2.0, 3.0, 4.0], value=1.0, description="oversubscription")
        self.collective = w.Dropdown(options=list(fb.COLLECTIVES), value="halving_doubling", description="collective")
        self.size_exp = w.IntSlider(26, min=16, max=34, description="message 2^x bytes")
        self.routings = w.SelectMultiple(
            options=list(fb.ROUTINGS), value=("ecmp", "mp-8", "minimal", "planned"), description="routings", rows=4
        )
        self.failed = w.IntSlider(0, min=0, max=15, description="failed uplinks (leaf 0)")
        self.status = w.HTML()
        self.fig_ratio = FigurePane()
        self.fig_heat = FigurePane()
        self.fig_time = FigurePane()
        self.fig_qp = FigurePane()
        for c in (
            self.leaves,
            self.spines,
            self.hosts,
            self.oversub,
            self.collective,
            self.size_exp,
            self.routings,
            self.failed,
        ):
            c.observe(self._on_change, names="value")
        self.widget = panel(
            [
                self.leaves,
                self.spines,
                self.hosts,
                self.oversub,
                self.collective,
                self.size_exp,
                self.failed,
                self.routings,
            ],
            {
                "Congestion": [self.fig_ratio, self.fig_heat],
                "Time, connections": [self.fig_time, self.fig_qp],
            },
            info=self.status,
            fidelity="workbench.widgets.fabric:spraying_panel",
        )
        self.update()

    def _on_change(self, _change=None) -> None:
        self.update()

    def topology(self) -> fb.LeafSpine:
        s, h = self.spines.value, self.hosts.value
        self.failed.max = max(0, s - 1)
        uplink = h * 100.0 / (s * self.oversub.value)
        return fb.leaf_spine(
            self.leaves.value,
            s,
            h,
            host_gbps=100.0,
            uplink_gbps=uplink,
            failed_links=[(0, p) for p in range(min(self.failed.value, s - 1))],
        )

    def update(self) -> None:
        topo = self.topology()
        coll = self.collective.value
        if fb.ranks_that_fit(coll, topo.n_hosts) < 2:
            self.status.value = "<b>Need at least 2 hosts.</b>"
            for pane in (self.fig_ratio, self.fig_heat, self.fig_time, self.fig_qp):
                clear(pane, "fewer than 2 hosts")
            return
        view = spraying_model(topo, coll, 2**self.size_exp.value, list(self.routings.value) or ["ecmp"])
        new = [
            (self.fig_ratio, vf.ratio_vs_size(view.ratio, title=f"{name_label(coll)}: time vs ideal spraying")),
            (self.fig_heat, vf.uplink_heatmaps(view.uplink, title=f"Leaf->spine load, step '{view.step_label}'")),
            (self.fig_time, vf.time_vs_size(view.times, title=f"{name_label(coll)} on {view.n_ranks} GPUs")),
            (self.fig_qp, vf.connections_bar(view.connections, title="Connections per host (busiest step)")),
        ]
        for fw, fig in new:
            redraw(fw, fig)
        self.status.value = (
            f"{topo.n_hosts} hosts, {view.n_ranks} ranks, oversubscription "
            f"{topo.oversubscription:.2f}, {len(topo.failed)} failed uplink(s); heatmap/connections "
            f"for step '{view.step_label}'"
        )


def spraying_panel() -> w.Widget:
    """Build the packet-spraying panel and return its top-level widget."""
    return SprayingPanel().widget


#: The C4 panel's Monte-Carlo hashings per GPU count (the ``c4-gain`` default is the reproduction's 50): an update
#: of all nine GPU counts stays well under a second.
C4_SAMPLES = 10
#: All-to-all is swept up to this many GPUs (beyond it one point takes seconds: 4096 GPUs about 20 s).
C4_ALL_TO_ALL_MAX_GPUS = 512
#: The ``c4-gain`` parameters the C4 panel controls, in the order shown.
C4_CONTROLS = ("gpus", "collective", "connections_per_nic", "ports", "comm_share")


@dataclass(frozen=True)
class C4View:
    """What the C4 panel shows for one setting (rows of the ``c4-gain`` experiment)."""

    table: pd.DataFrame  #: gpus, comm_share, nic_slowdown, fabric_slowdown, slowdown, gain
    gpus: int  #: the largest GPU count swept (all-to-all is capped at :data:`C4_ALL_TO_ALL_MAX_GPUS`)
    slowdown: float  #: ECMP / planned communication time at ``gpus``
    gain: float  #: iteration gain of planning at the chosen communication share


def c4_gpu_counts() -> list[int]:
    """The GPU counts the C4 panel offers: ``hosts_per_leaf`` (one leaf) doubling up to the ``gpus`` parameter's
    bound, read from the ``c4-gain`` experiment (16, 32, ..., 4096)."""
    exp = ex.get("c4-gain")
    hpl, top = exp.param("hosts_per_leaf").default, exp.param("gpus").high
    return [hpl * 2**k for k in range(int(np.log2(top / hpl)) + 1)]


def c4_model(
    gpus: int,
    collective: str,
    connections_per_nic: int,
    ports: int,
    comm_share: float,
    gpu_options: Sequence[int] | None = None,
) -> C4View:
    """The C4 panel's rows: ``c4-gain`` points (seed 0, :data:`C4_SAMPLES` hashings) at the GPU counts of
    ``gpu_options`` (default :func:`c4_gpu_counts`) up to ``gpus`` at ``comm_share``, and at every communication share
    of the parameter's range (steps of 0.05) for the smallest and largest of those counts.

    Examples
    --------
    >>> v = c4_model(64, "ring", 2, 2, 0.3)
    >>> v.gpus, round(v.slowdown, 3), round(v.gain, 3)
    (64, 2.0, 0.3)
    """
    exp = ex.get("c4-gain")
    options = c4_gpu_counts() if gpu_options is None else gpu_options
    counts = [g for g in options if g <= gpus and (collective != "all_to_all" or g <= C4_ALL_TO_ALL_MAX_GPUS)]
    lo, hi = (float(b) for b in (exp.param("comm_share").low, exp.param("comm_share").high) if b is not None)
    shares = sorted({round(lo + (hi - lo) * k / 20, 3) for k in range(21)} | {comm_share})  # every 5% of the range
    point = {
        "collective": collective,
        "connections_per_nic": connections_per_nic,
        "ports": ports,
        "samples": C4_SAMPLES,
    }
    run = functools.partial(ex.sweep, "c4-gain", client=False, progress=False)
    curves = run({**point, "gpus": sorted({counts[0], counts[-1]}), "comm_share": shares})
    table = pd.concat([curves, run({**point, "gpus": counts, "comm_share": [comm_share]})], ignore_index=True)
    table = table.drop_duplicates(["gpus", "comm_share"]).sort_values(["gpus", "comm_share"])
    table = table[["gpus", "comm_share", "nic_slowdown", "fabric_slowdown", "slowdown", "gain"]]
    at = table[(table.gpus == counts[-1]) & (table.comm_share == comm_share)].iloc[0]
    return C4View(table.reset_index(drop=True), counts[-1], float(at.slowdown), float(at.gain))


class C4Panel:
    """GPU count, collective, connections per NIC, bonded ports and communication share (the ``c4-gain``
    experiment's parameters) -> the C4 model's gain and slowdown figures."""

    def __init__(self) -> None:
        self.gpu_options = c4_gpu_counts()
        self.controls = param_controls(ex.get("c4-gain"), C4_CONTROLS, gpus={"stops": self.gpu_options})
        self.gpus, self.collective, self.conns, self.ports, self.share = self.controls
        self.status = w.HTML()
        self.fig_gain = FigurePane()
        self.fig_slow = FigurePane()
        for c in self.controls:
            c.observe(lambda _c: self.update(), names="value")
        self.widget = panel(
            self.controls,
            [self.fig_gain, self.fig_slow],
            info=self.status,
            fidelity="workbench.widgets.fabric:c4_panel",
        )
        self.update()

    def update(self) -> None:
        coll, share = self.collective.value, self.share.value
        view = c4_model(self.gpus.value, coll, self.conns.value, self.ports.value, share, self.gpu_options)
        t = view.table
        curves = t[t.gpus.isin([t.gpus.min(), view.gpus])]
        at_share = t[t.comm_share == share]
        figs = [
            (self.fig_gain, vf.gain_vs_share(curves, selected=(share, view.gain))),  # the slider moves the point
            (
                self.fig_slow,
                vf.slowdown_vs_gpus(at_share, title=f"{name_label(coll)}: ECMP / planned communication time"),
            ),
        ]
        for fw, fig in figs:
            redraw(fw, fig)
        self.status.value = (
            f"{view.gpus} GPUs: ECMP stretches communication {view.slowdown:.2f}x; at a "
            f"{share:.0%} communication share planning gains {view.gain:.1%}"
        )


def c4_panel() -> w.Widget:
    """Build the C4 traffic-planning panel and return its top-level widget."""
    return C4Panel().widget
