"""Hotspot panel: source burstiness and cluster parameters -> latency curve and ToR utilization, random vs aware.

Every number is a point of a registered experiment (:func:`workbench.experiments.run_point`, seed 0): the latency
curve and its knee are ``placement-latency-curve``'s rows, the hot-ToR table ``placement-hot-tors``'s rows and the
utilization CDF the same placements' ``placement-tor-utilization`` rows. The :mod:`workbench.viz.placement` builders
make the figures and :func:`~workbench.widgets.redraw` swaps them in.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import experiments as ex
from ..viz import placement as vp
from . import FigurePane, html_table, panel, param_controls, param_values, redraw

__all__ = ["HotspotView", "hotspot_panel", "panel_model", "CONTROLS", "RACKS"]

HOT_TORS = "placement-hot-tors"
UTILIZATION = "placement-tor-utilization"
CURVE = "placement-latency-curve"
#: The cluster parameters the panel offers, after the latency curve's ``cv`` (the others stay at their defaults).
CONTROLS = ("mean_utilization", "demand_sigma", "noise_sigma", "choices", "hot_threshold", "migrate")
#: Racks of the panel's cluster (the quick scale of the ``hotspots`` reproduction's clusters).
RACKS = 400


@dataclass(frozen=True)
class HotspotView:
    """What the hotspot panel shows for one setting."""

    curve: pd.DataFrame  #: latency curve rows: utilization, mean_latency_s, tail_latency_s, mean_wait_s
    knee: float  #: knee utilization of the exact mean latency curve (as the claim measures it)
    policies: pd.DataFrame  #: the ``placement-hot-tors`` rows of the random and aware placements
    utilization: dict[str, np.ndarray]  #: ToR utilization per policy


def panel_model(cv: float = 2.0, seed: int = 0, **values) -> HotspotView:
    """The panel's points: the latency curve at ``cv`` and one cluster of ``values`` (over the experiment's defaults,
    :data:`RACKS` racks unless given) placed randomly and hotspot-aware, for seed index ``seed``.

    Examples
    --------
    >>> v = panel_model(2.0, racks=50)
    >>> v.policies.policy.tolist(), bool(0 < v.knee < 1)
    (['random', 'aware'], True)
    """
    curve = ex.run_point(CURVE, {"cv": cv}, seed=seed)
    point = {"racks": RACKS, **values}
    tors = ex.run_point(UTILIZATION, point, seed=seed)
    return HotspotView(
        curve,
        float(curve.knee_utilization.iloc[0]),
        ex.run_point(HOT_TORS, point, seed=seed),
        {policy: g.utilization.to_numpy() for policy, g in tors.groupby("policy", sort=False)},
    )


def hotspot_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    (cv,) = param_controls(CURVE, ["cv"])
    cluster = param_controls(HOT_TORS, CONTROLS)
    controls = [cv, *cluster]
    info = W.HTML()
    fig_lat = FigurePane()
    fig_cdf = FigurePane()

    def update(*_):
        values = param_values(cluster)
        view = panel_model(cv.value, **values)
        redraw(
            fig_lat,
            vp.latency_curve(
                {f"CV {cv.value:g}": view.curve},
                knee=view.knee,
                knee_label="knee of the simulated mean",
                title="Latency vs link utilization",
            ),
            height=340,
        )
        redraw(fig_cdf, vp.utilization_cdf(view.utilization, threshold=values["hot_threshold"]), height=340)
        info.value = html_table(
            ["policy", "hot ToRs", "network-intensive tasks on hot ToRs", "migrated"],
            [[r.policy, r.hot_tors, f"{r.intensive_on_hot:.1%}", r.migrated] for r in view.policies.itertuples()],
            caption=f"knee at {view.knee:.0%} utilization (exact mean latency; a simulated curve's knee moves "
            f"±5-10 points with the seed). Hot ToRs: one cluster of {RACKS} racks placed once (the experiment's seed "
            "0); the reproduction's placement claims average 4 such clusters (8 of 1,000 racks at full scale), and "
            "one cluster's counts vary from seed to seed",
        )

    for w in controls:
        w.continuous_update = False
        w.observe(update, "value")
    update()
    return panel(controls, [fig_lat, fig_cdf], info=info, fidelity="workbench.widgets.placement:hotspot_panel")
