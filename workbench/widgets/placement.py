"""Hotspot panel: source burstiness and cluster parameters -> latency curve and ToR utilization, random vs aware.

The package pattern: :func:`panel_model` turns the control values into a frozen :class:`HotspotView` (tidy tables
from :mod:`workbench.placement`), the :mod:`workbench.viz.placement` builders make the figures and
:func:`~workbench.widgets.redraw` swaps them in.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as W
import numpy as np
import pandas as pd

from .. import placement as P
from .._rng import keyed
from ..viz import placement as vp
from . import FigurePane, html_table, panel, redraw

__all__ = ["HotspotView", "hotspot_panel", "panel_model"]


@dataclass(frozen=True)
class HotspotView:
    """What the hotspot panel shows for one setting."""

    curve: pd.DataFrame  #: latency_vs_utilization: utilization, mean_latency_s, tail_latency_s, mean_wait_s
    knee: float  #: knee utilization of the exact mean latency curve (as the claim measures it)
    policies: pd.DataFrame  #: placement_summary of the random and aware placements
    utilization: dict[str, np.ndarray]  #: ToR utilization per policy


def panel_model(
    cv: float,
    mean_utilization: float,
    demand_sigma: float,
    noise_sigma: float,
    choices: int,
    hot_threshold: float,
    migrate: bool,
    racks: int = 400,
    seed: int = 0,
) -> HotspotView:
    """The panel's model call (well under a second).

    Examples
    --------
    >>> v = panel_model(2.0, 0.4, 1.5, 0.5, 4, 0.75, True, racks=50)
    >>> v.policies.policy.tolist(), bool(0 < v.knee < 1)
    (['random', 'aware'], True)
    """
    u = np.round(np.arange(0.05, 0.951, 0.05), 2)
    curve = P.latency_vs_utilization(u, cv=cv, n=50_000, seed=seed)
    cluster = P.make_cluster(
        racks, mean_utilization=mean_utilization, demand_sigma=demand_sigma, noise_sigma=noise_sigma, seed=seed
    )
    placed = {
        policy: P.place(
            cluster, policy, choices=choices, hot_threshold=hot_threshold, migrate=migrate, seed=keyed(seed, "place")
        )
        for policy in ("random", "aware")
    }
    return HotspotView(
        curve,
        P.knee_utilization(P.KNEE_GRID, P.exact_mean_latency(P.KNEE_GRID, cv=cv)),
        P.placement_summary(cluster, placed),
        {k: p.utilization for k, p in placed.items()},
    )


def hotspot_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    cv = W.FloatSlider(value=2.0, min=1.0, max=4.0, step=0.25, description="arrival CV")
    mean_u = W.FloatSlider(value=0.4, min=0.1, max=0.7, step=0.05, description="mean ToR utilization")
    sigma = W.FloatSlider(value=1.5, min=0.25, max=2.5, step=0.25, description="demand sigma")
    noise = W.FloatSlider(value=0.5, min=0.0, max=1.5, step=0.1, description="prediction noise")
    choices = W.IntSlider(value=4, min=1, max=8, description="choices")
    hot = W.FloatSlider(value=0.75, min=0.5, max=0.95, step=0.05, description="hot threshold")
    migrate = W.Checkbox(value=True, description="migrate heavy tasks")
    info = W.HTML()
    fig_lat = FigurePane()
    fig_cdf = FigurePane()

    def update(*_):
        view = panel_model(cv.value, mean_u.value, sigma.value, noise.value, choices.value, hot.value, migrate.value)
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
        redraw(fig_cdf, vp.utilization_cdf(view.utilization, threshold=hot.value), height=340)
        info.value = html_table(
            ["policy", "hot ToRs", "network-intensive tasks on hot ToRs", "migrated"],
            [[r.policy, r.hot_tors, f"{r.intensive_on_hot:.1%}", r.migrated] for r in view.policies.itertuples()],
            caption=f"knee at {view.knee:.0%} utilization (exact mean latency; a simulated curve's knee moves "
            "±5-10 points with the seed). Hot ToRs: one cluster of 400 racks placed once (seed 0); the "
            "reproduction's placement claims average 4 such clusters (8 of 1,000 racks at full scale), and one "
            "cluster's counts vary from seed to seed",
        )

    for w in (cv, mean_u, sigma, noise, choices, hot, migrate):
        w.continuous_update = False
        w.observe(update, "value")
    update()
    return panel(
        [cv, mean_u, sigma, noise, choices, hot, migrate],
        [fig_lat, fig_cdf],
        info=info,
        fidelity="workbench.widgets.placement:hotspot_panel",
    )
