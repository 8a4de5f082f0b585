"""Interactive panels for the fabric notebooks: packet spraying (01) and C4 traffic planning (02).

Both panels are generated from their experiments: their controls are the experiments' ``Param``s
(:func:`~workbench.widgets.param_controls`) and every number a row of ``experiments.sweep``. The spraying panel's
controls are ``uplink-loads``' fabric, collective and message size (the leaves and hosts per leaf offered within
:data:`SPRAYING_MAX_HOSTS` hosts, the failed uplinks below the spines, the message sizes the time-vs-size figure
spans); its heat map and connections are the busiest step's (``step`` = :data:`~workbench.experiments.fabric.BUSIEST_STEP`),
picked by the experiments. The C4 panel reads ``c4-gain``. The :mod:`workbench.viz.fabric` builders turn the tables
into figures and :func:`~workbench.widgets.redraw` swaps them into the panels' :class:`~workbench.widgets.FigurePane`
widgets; an update takes about a second at the defaults (cached points: less).
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

import ipywidgets as w
import numpy as np
import pandas as pd

from .. import experiments as ex
from .._units import name_label
from ..experiments.fabric import BUSIEST_STEP
from ..viz import fabric as vf
from . import FigurePane, clear, panel, param_control, param_controls, param_values, redraw

__all__ = [
    "SPRAYING_CONTROLS",
    "SPRAYING_START",
    "SPRAYING_ROUTINGS",
    "SPRAYING_SAMPLES",
    "SPRAYING_MAX_HOSTS",
    "size_stops",
    "leaves_swept",
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


#: The ``uplink-loads`` parameters the spraying panel controls, in the order shown (the fabric and the collective:
#: ``fabric-congestion`` and ``collective-time-vs-size`` take the same ones but the message size).
SPRAYING_CONTROLS = (
    "leaves",
    "spines",
    "hosts_per_leaf",
    "oversubscription",
    "collective",
    "size_bytes",
    "failed_uplinks",
)
#: Where the spraying panel starts: a non-blocking 8 x 8 x 8 leaf-spine (64 GPUs) and a 64 MiB message. The
#: experiments' defaults are the reproduction's 16 hosts per leaf with uplinks as given and a 1 GiB message.
SPRAYING_START = {"hosts_per_leaf": 8, "oversubscription": 1.0, "size_bytes": 2.0**26}
#: The routings the panel compares at first (the heat map draws the first three chosen).
SPRAYING_ROUTINGS = ("ecmp", "mp-8", "minimal", "planned")
#: The most hosts the panel's fabric holds (the leaves and hosts-per-leaf stops keep within it), for an interactive
#: update. Measured from a cold cache with the four default routings (2 cores): about 5 s at 512 hosts (halving-
#: doubling or all-to-all); at 1,024 hosts 6 s for halving-doubling but 27 s for an all-to-all; at 4,096 (512 leaves x
#: 8) 7 s and 456 s. Cached points redraw in well under a second. The experiments take the parameters' full ranges.
SPRAYING_MAX_HOSTS = 512
#: Monte-Carlo hashings per point of the time-vs-spraying curve (``fabric-congestion``'s default is 200).
SPRAYING_SAMPLES = 20
#: The message size is offered in this unit (its stops are the powers of two over the time-vs-size figure's span).
SIZE_SHOWN_IN = (2.0**-20, "MiB")


def size_stops() -> list[float]:
    """The message sizes the spraying panel offers: the powers of two from ``collective-time-vs-size``'s
    ``min_size_bytes`` to its ``max_size_bytes`` (the span its figure draws: 64 KiB to 16 GiB).

    Examples
    --------
    >>> s = size_stops()
    >>> len(s), s[0], s[-1] / 2**30
    (19, 65536.0, 16.0)
    """
    exp = ex.get("collective-time-vs-size")
    lo, hi = (math.log2(exp.param(n).default) for n in ("min_size_bytes", "max_size_bytes"))
    return [2.0**k for k in range(math.ceil(lo), math.floor(hi) + 1)]


def leaves_swept(leaves: int) -> list[int]:
    """The fabric sizes of the time-vs-spraying curve: 2, 4, 8, ... leaves up to ``leaves``, and ``leaves`` itself.

    >>> leaves_swept(12), leaves_swept(1)
    ([2, 4, 8, 12], [1])
    """
    return sorted({2**k for k in range(1, leaves.bit_length())} | {leaves})


@dataclass(frozen=True)
class SprayingView:
    """What the spraying panel shows for one setting (rows of the fabric experiments)."""

    n_hosts: int
    n_ranks: int
    step_label: str  #: the busiest step (most bytes between leaves): the heat map's and the connections'
    oversubscription: float  #: of the fabric the experiments built
    ratio: pd.DataFrame  #: fabric-congestion over leaves x routing: collective time vs spraying
    uplink: pd.DataFrame  #: uplink-loads at the busiest step (first three routings): routing, leaf, spine, load_bytes
    times: pd.DataFrame  #: collective-time-vs-size: routing, size_bytes, time_s
    connections: pd.DataFrame  #: fabric-congestion at the busiest step: routing, connections_per_host


def spraying_model(routings: Sequence[str], seed: int = 0, **params) -> SprayingView:
    """The spraying panel's rows: ``params`` (the :data:`SPRAYING_CONTROLS`, over the experiments' defaults) under
    each of ``routings``: the ``fabric-congestion`` collective time over spraying at :func:`leaves_swept` fabric
    sizes (:data:`SPRAYING_SAMPLES` hashings), ``uplink-loads`` at the busiest step (the first three routings),
    ``collective-time-vs-size`` and ``fabric-congestion``'s connections at the busiest step, all at seed ``seed``.

    Examples
    --------
    >>> v = spraying_model(["ecmp", "minimal"], leaves=2, spines=2, hosts_per_leaf=2, collective="ring")
    >>> v.n_ranks, v.connections.connections_per_host.tolist()
    (4, [1, 2])
    """
    routing = list(routings)

    def run(name: str, **extra) -> pd.DataFrame:
        names = {p.name for p in ex.get(name).params}
        grid = {"routing": routing, **{k: v for k, v in params.items() if k in names}, **extra}  # routing slowest
        return ex.sweep(name, grid, seeds=[seed], client=False, progress=False)

    leaves = params.get("leaves", ex.get("fabric-congestion").param("leaves").default)
    ratio = run("fabric-congestion", leaves=leaves_swept(leaves), measure="collective_time", samples=SPRAYING_SAMPLES)
    uplink = run("uplink-loads", step=BUSIEST_STEP, routing=routing[:3])
    times = run("collective-time-vs-size")
    connections = run("fabric-congestion", step=BUSIEST_STEP, samples=1)
    at = uplink.iloc[0]
    return SprayingView(
        int(at.hosts),
        int(at.gpus),
        str(at.step_label),
        float(at.fabric_oversubscription),
        ratio,
        uplink,
        times,
        connections,
    )


class SprayingPanel:
    """Leaf-spine size, oversubscription, collective, message size, failed uplinks (the ``uplink-loads``
    experiment's parameters) and the routings compared -> four figures."""

    def __init__(self) -> None:
        exp = ex.get("uplink-loads")
        self.exp = exp
        start = {p.name: p.default for p in exp.params} | SPRAYING_START
        self.controls = param_controls(
            exp,
            SPRAYING_CONTROLS,
            SPRAYING_START,
            size_bytes={"stops": size_stops(), "shown_in": SIZE_SHOWN_IN},
            **{name: {"stops": self._stops(name, start)} for name in self._DEPENDENT},
        )
        self.leaves, self.spines, self.hosts, self.oversub, self.collective, self.size, self.failed = self.controls
        compared = tuple(exp.param("routing").choices or ())
        self.routings = w.SelectMultiple(
            options=list(compared), value=SPRAYING_ROUTINGS, description="routings", rows=4
        )
        self.status = w.HTML()
        self.fig_ratio = FigurePane()
        self.fig_heat = FigurePane()
        self.fig_time = FigurePane()
        self.fig_qp = FigurePane()
        self._syncing = False
        for c in (*self.controls, self.routings):
            c.observe(self._on_change, names="value")
        self.widget = panel(
            [*self.controls, self.routings],
            {
                "Congestion": [self.fig_ratio, self.fig_heat],
                "Time, connections": [self.fig_time, self.fig_qp],
            },
            info=self.status,
            fidelity="workbench.widgets.fabric:spraying_panel",
        )
        self.update()

    #: The controls whose allowed values depend on the others' (:meth:`_stops`).
    _DEPENDENT = ("leaves", "hosts_per_leaf", "failed_uplinks")

    def _stops(self, name: str, values: dict) -> list[int]:
        """The values control ``name`` offers at the other controls' ``values``: the leaves and hosts per leaf of the
        parameters' ranges that keep the fabric within :data:`SPRAYING_MAX_HOSTS` hosts, and the failed uplinks that
        leave leaf 0 one (below ``spines``)."""
        p = self.exp.param(name)
        if name == "failed_uplinks":
            return list(range(int(p.low or 0), values["spines"]))
        other = values["hosts_per_leaf" if name == "leaves" else "leaves"]
        return [v for v in range(int(p.low or 0), int(p.high or 0) + 1) if v * other <= SPRAYING_MAX_HOSTS]

    def _on_change(self, _change=None) -> None:
        if self._syncing:
            return
        values = param_values(self.controls)
        by_name = dict(zip(SPRAYING_CONTROLS, self.controls))
        self._syncing = True  # re-offering a control's stops is not a move of it
        try:
            for name in self._DEPENDENT:
                control = by_name[name]
                allowed = self._stops(name, values)
                keep = min(control.value, allowed[-1])
                if [v for _, v in control.options] != allowed:
                    control.options = param_control(self.exp.param(name), keep, stops=allowed).options
                control.value = keep
        finally:
            self._syncing = False
        self.update()

    def update(self) -> None:
        values = param_values(self.controls)
        coll = values["collective"]
        try:
            view = spraying_model(list(self.routings.value) or ["ecmp"], **values)
        except ex.SweepError as exc:  # a fabric the collective does not fit (one host): the experiment says why
            self.status.value = f"<b>Not computed</b>: {html.escape(exc.reason)}"
            for pane in (self.fig_ratio, self.fig_heat, self.fig_time, self.fig_qp):
                clear(pane, "see the message above")
            return
        heat = view.uplink[["routing", "leaf", "spine", "load_bytes"]]
        new = [
            (self.fig_ratio, vf.ratio_vs_size(view.ratio, title=f"{name_label(coll)}: time vs ideal spraying")),
            (self.fig_heat, vf.uplink_heatmaps(heat, title=f"Leaf->spine load, step '{view.step_label}'")),
            (self.fig_time, vf.time_vs_size(view.times, title=f"{name_label(coll)} on {view.n_ranks} GPUs")),
            (self.fig_qp, vf.connections_bar(view.connections, title="Connections per host (busiest step)")),
        ]
        for fw, fig in new:
            redraw(fw, fig)
        self.status.value = (
            f"{view.n_hosts} hosts, {view.n_ranks} ranks, oversubscription {view.oversubscription:.2f}, "
            f"{values['failed_uplinks']} failed uplink(s); heatmap/connections for step '{view.step_label}'"
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
