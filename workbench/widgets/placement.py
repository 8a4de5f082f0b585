"""Hotspot panel: source burstiness and cluster parameters -> latency curve and ToR utilization, random vs aware."""

from __future__ import annotations

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from .. import placement as P
from ..viz import COLORS, style

__all__ = ["hotspot_panel", "panel_model"]


def panel_model(cv: float, mean_utilization: float, demand_sigma: float, noise_sigma: float, choices: int,
                hot_threshold: float, migrate: bool, racks: int = 400, seed: int = 0) -> dict:
    """The panel's model call (well under a second)."""
    u = np.round(np.arange(0.05, 0.951, 0.05), 2)
    curve = P.latency_vs_utilization(u, cv=cv, n=50_000, seed=seed)
    cluster = P.make_cluster(racks, mean_utilization=mean_utilization, demand_sigma=demand_sigma,
                             noise_sigma=noise_sigma, seed=seed)
    placed = {policy: P.place(cluster, policy, choices=choices, hot_threshold=hot_threshold, migrate=migrate,
                              seed=seed + 1) for policy in ("random", "aware")}
    return {"curve": curve, "knee": P.knee_utilization(curve.utilization, curve.mean_latency_s),
            "cluster": cluster, "placed": placed}


def hotspot_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    cv = W.FloatSlider(value=2.0, min=1.0, max=4.0, step=0.25, description="arrival CV")
    mean_u = W.FloatSlider(value=0.4, min=0.1, max=0.7, step=0.05, description="mean ToR util")
    sigma = W.FloatSlider(value=1.5, min=0.25, max=2.5, step=0.25, description="demand sigma")
    noise = W.FloatSlider(value=0.5, min=0.0, max=1.5, step=0.1, description="predict. noise")
    choices = W.IntSlider(value=4, min=1, max=8, description="choices")
    hot = W.FloatSlider(value=0.75, min=0.5, max=0.95, step=0.05, description="hot threshold")
    migrate = W.Checkbox(value=True, description="migrate heavy tasks")
    info = W.HTML()
    fig_lat = go.FigureWidget()
    fig_lat.add_scatter(name="mean", mode="lines+markers", line={"color": COLORS["gamma"]})
    fig_lat.add_scatter(name="p99", mode="lines", line={"color": COLORS["gamma"], "dash": "dot"})
    fig_lat.add_scatter(name="knee", mode="markers", marker={"size": 14, "symbol": "x", "color": COLORS["theory"]})
    fig_lat.update_yaxes(type="log")
    style(fig_lat, title="Latency vs link utilization", x_title="link utilization", y_title="latency (us, log)",
          height=360)
    fig_cdf = go.FigureWidget()
    for policy, color in (("random", COLORS["static"]), ("aware", COLORS["pred"])):
        fig_cdf.add_scatter(name=policy, mode="lines", line={"color": color})
    style(fig_cdf, title="ToR uplink utilization across racks", x_title="ToR utilization",
          y_title="fraction of ToRs", height=360)

    def update(*_):
        out = panel_model(cv.value, mean_u.value, sigma.value, noise.value, choices.value, hot.value, migrate.value)
        c = out["curve"]
        knee_row = c.iloc[(c.utilization - out["knee"]).abs().argmin()]
        rows = []
        with fig_lat.batch_update(), fig_cdf.batch_update():
            fig_lat.data[0].x, fig_lat.data[0].y = c.utilization, c.mean_latency_s * 1e6
            fig_lat.data[1].x, fig_lat.data[1].y = c.utilization, c.tail_latency_s * 1e6
            fig_lat.data[2].x, fig_lat.data[2].y = [out["knee"]], [knee_row.mean_latency_s * 1e6]
            for i, policy in enumerate(("random", "aware")):
                p = out["placed"][policy]
                x = np.sort(p.utilization)
                fig_cdf.data[i].x, fig_cdf.data[i].y = x, np.arange(1, x.size + 1) / x.size
                on_hot = p.hot[p.rack][out["cluster"].intensive].mean()
                rows.append(f"<tr><td>{policy}</td><td>{p.hot_tors}</td><td>{on_hot:.1%}</td>"
                            f"<td>{p.migrated}</td></tr>")
        info.value = (f"knee at {out['knee']:.0%} utilization<table><tr><th>policy</th><th>hot ToRs</th>"
                      "<th>network-intensive tasks on hot ToRs</th><th>migrated</th></tr>" + "".join(rows)
                      + "</table>")

    for w in (cv, mean_u, sigma, noise, choices, hot, migrate):
        w.continuous_update = False
        w.observe(update, "value")
    update()
    controls = W.VBox([W.HBox([cv, mean_u, sigma]), W.HBox([noise, choices, hot, migrate]), info])
    return W.VBox([controls, W.HBox([fig_lat, fig_cdf])])
