"""PRED / RED panel: concurrency, load, RTT, thresholds or slope, controllers on/off -> fluid sweep and packet trace."""

from __future__ import annotations

import ipywidgets as W
import numpy as np
import plotly.graph_objects as go

from .. import aqm
from ..viz import COLORS, style

__all__ = ["pred_panel", "panel_model"]


def panel_model(n_flows: int, load: float, rtt_us: float, min_k: float, max_k: float, max_p: float,
                unit_slope: float, fcs: bool, qla: bool, duration_s: float = 0.015, seed: int = 0) -> dict:
    """The panel's model call: fluid queue vs concurrency and one short packet run per scheme (about a second)."""
    static = aqm.RedMarking(min_k, max_k, max_p)
    pred = aqm.PredConfig(unit_slope_per_pkt=unit_slope, fcs=fcs, qla=qla)
    n = np.unique(np.geomspace(1, 64, 24).astype(int))
    rtt_s = rtt_us * 1e-6
    fluid = {
        "static": aqm.steady_state(n, static, rtt_s=rtt_s),
        "pred": aqm.steady_state(n, aqm.RedMarking.from_slope(pred.min_k_pkts, unit_slope), rtt_s=rtt_s,
                                 scale_with_flows=fcs),
    }
    runs = {name: aqm.dumbbell(n_flows, scheme, load=load, rtt_s=rtt_s, duration_s=duration_s, seed=seed)
            for name, scheme in (("static", static), ("pred", pred))}
    return {"n": n, "fluid": fluid, "runs": runs}


def pred_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    n_flows = W.IntSlider(value=8, min=1, max=64, description="long flows")
    load = W.FloatSlider(value=0.3, min=0.0, max=0.8, step=0.05, description="short load")
    rtt = W.FloatSlider(value=100.0, min=20.0, max=400.0, step=10.0, description="RTT (us)")
    min_k = W.FloatSlider(value=20.0, min=0.0, max=150.0, step=5.0, description="static minK")
    max_k = W.FloatSlider(value=200.0, min=160.0, max=800.0, step=10.0, description="static maxK")
    max_p = W.FloatSlider(value=0.1, min=0.01, max=1.0, step=0.01, description="static maxP")
    slope = W.FloatLogSlider(value=0.01, base=10, min=-3, max=-0.5, step=0.1, description="PRED slope/flow")
    fcs = W.Checkbox(value=True, description="FCS (slope x flows)")
    qla = W.Checkbox(value=True, description="QLA (utility hill-climb)")
    info = W.HTML()
    fig_fluid = go.FigureWidget()
    for name in ("static", "pred"):
        fig_fluid.add_scatter(name=f"{name} (fluid)", mode="lines", line={"color": COLORS[name]})
        fig_fluid.add_scatter(name=f"{name} (packet)", mode="markers", marker={"color": COLORS[name], "size": 12})
    fig_fluid.update_xaxes(type="log")
    style(fig_fluid, title="Standing queue vs concurrent long flows", x_title="long flows (log scale)",
          y_title="queue (packets)", height=360)
    fig_trace = go.FigureWidget()
    for name in ("static", "pred"):
        fig_trace.add_scatter(name=name, mode="lines", line={"color": COLORS[name], "width": 1})
    style(fig_trace, title="Packet-level bottleneck queue", x_title="time (ms)", y_title="queue (packets)",
          height=360)

    def update(*_):
        out = panel_model(n_flows.value, load.value, rtt.value, min_k.value, max_k.value, max_p.value,
                          slope.value, fcs.value, qla.value)
        rows = []
        with fig_fluid.batch_update(), fig_trace.batch_update():
            for i, name in enumerate(("static", "pred")):
                r = out["runs"][name]
                link = r.links.iloc[0]
                fig_fluid.data[2 * i].x, fig_fluid.data[2 * i].y = out["n"], out["fluid"][name]
                fig_fluid.data[2 * i + 1].x, fig_fluid.data[2 * i + 1].y = [n_flows.value], [link.mean_queue_pkts]
                fig_trace.data[i].x, fig_trace.data[i].y = r.queue.time_s * 1e3, r.queue.queue_pkts
                s = aqm.fct_summary(r.flows)
                small = s.iloc[0]
                rows.append(f"<tr><td>{name}</td><td>{link.utilization:.3f}</td><td>{link.mean_queue_pkts:.1f}</td>"
                            f"<td>{small.p50_s * 1e6:.0f}</td><td>{int(small['count'])}</td></tr>")
        info.value = ("<table><tr><th>scheme</th><th>utilization</th><th>mean queue (pkts)</th>"
                      "<th>small-flow p50 FCT (us)</th><th>small flows</th></tr>" + "".join(rows) + "</table>")

    def clamp_thresholds(*_):
        if min_k.value >= max_k.value:
            min_k.value = max_k.value - 10.0

    max_k.observe(clamp_thresholds, "value")
    min_k.observe(clamp_thresholds, "value")
    for w in (n_flows, load, rtt, min_k, max_k, max_p, slope, fcs, qla):
        w.continuous_update = False
        w.observe(update, "value")
    update()
    controls = W.VBox([n_flows, load, rtt, W.HBox([min_k, max_k, max_p]), W.HBox([slope, fcs, qla]), info])
    return W.VBox([controls, W.HBox([fig_fluid, fig_trace])])
