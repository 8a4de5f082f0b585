"""Interactive panels for the training notebooks: iteration time on the fabric (07), the execution graph's what-if
(07) and ETTR under failures (08).

Every control is a ``Param`` of the panel's experiment (``training-iteration-breakdown``, ``training-what-if``,
``training-ettr-vs-interval``) and every number a point of it (``run_point``, ``sweep``). Controls only offer
combinations the models accept (TP, PP, DP and GPU counts doubling within their ``Param``'s range, GPU counts that
fill whole leaves); a plan that does not fit in memory is reported in the status line instead of being drawn.
"""

from __future__ import annotations

import html
import math

import ipywidgets as w
import numpy as np
import pandas as pd

from .. import experiments as ex
from ..training import GPUS, MODELS
from ..training.failures import LOSS_PARTS
from ..viz import exec_graph as vg
from ..viz import training as vt
from . import FigurePane, clear, panel, param_control, param_controls, param_values, redraw

__all__ = ["IterationPanel", "iteration_panel", "WhatIfPanel", "what_if_panel", "FailuresPanel", "failures_panel"]

_ROUTINGS = ("ecmp", "mp-4", "spray", "planned")
#: One activation-recomputation setting for every figure of the iteration panel (bars and weak scaling alike): the
#: weak-scaling model's default, which the ``c4-training`` reproduction's claims use, so at its defaults the panel
#: shows the claims' setting.
RECOMPUTE = "selective"
#: Hashings the ``c4-training`` weak-scaling claim averages ECMP over; the panel draws one (seed 0) and says so.
CLAIM_HASHINGS = 4


#: The ``training-iteration-breakdown`` parameters the iteration panel controls, in the order shown.
ITERATION_CONTROLS = ("model", "gpu", "gpus", "tp", "pp", "batch_per_replica", "collective")
#: Routings of the weak-scaling figure.
SCALING_ROUTINGS = ("ecmp", "spray", "planned")


def doubling_stops(param, unit: int | None = None) -> list[int]:
    """``unit x 2^k`` (``unit``: the range's low end unless given) within ``param``'s range: the values of a power-of-two parameter (TP, PP) or of a job size
    that fills whole leaves of ``unit`` GPUs and splits into power-of-two DP replicas (a slider over every integer
    would offer layouts the models reject).

    Examples
    --------
    >>> exp = ex.get("training-iteration-breakdown")
    >>> doubling_stops(exp.param("tp")), doubling_stops(exp.param("gpus"), 32)[:2]
    ([1, 2, 4, 8], [256, 512])
    """
    low, high = float(param.low or 1), float(param.high or 1)
    unit = unit or int(low)
    top = int(math.floor(math.log2(high / unit)))
    return [unit * 2**k for k in range(top + 1) if unit * 2**k >= low]


def iteration_model(**values) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The iteration panel's numbers, rows of ``training-iteration-breakdown`` at ``values``: one per routing of
    :data:`_ROUTINGS` (the bars; raises :class:`~workbench.experiments.SweepError` if the plan does not fit), and the
    weak scaling: the same plan shape (``tp x pp``, sequences per replica) at every GPU stop up to ``values["gpus"]``
    with at least two replicas, per routing of :data:`SCALING_ROUTINGS` (points whose plan does not fit are left
    out).

    Examples
    --------
    >>> bars, scale = iteration_model(model="gpt-18b", gpus=512, pp=2)
    >>> bars.routing.tolist(), sorted(scale.gpus.unique().tolist())
    (['ecmp', 'mp-4', 'spray', 'planned'], [256, 512])
    """
    exp = ex.get("training-iteration-breakdown")
    values = {**values, "recompute": RECOMPUTE}
    bars = pd.concat([ex.run_point(exp, {**values, "routing": r}) for r in _ROUTINGS], ignore_index=True)
    n, per_replica = (
        values["gpus"],
        values.get("tp", exp.param("tp").default) * values.get("pp", exp.param("pp").default),
    )
    stops = doubling_stops(exp.param("gpus"), exp.param("hosts_per_leaf").default)
    counts = [c for c in stops if c <= n and c % per_replica == 0 and c // per_replica >= 2]
    scale = ex.run_sweep(exp, {**values, "gpus": counts, "routing": list(SCALING_ROUTINGS)}, client=False,
                         progress=False).table if counts else pd.DataFrame(columns=["gpus", "routing", "iteration_s"])  # fmt: skip
    return bars, scale


class IterationPanel:
    """Model, GPU, job size, TP/PP, batch per replica and DP collective -> breakdown per routing and scaling: points
    of the ``training-iteration-breakdown`` experiment."""

    def __init__(self) -> None:
        exp = ex.get("training-iteration-breakdown")
        stops = {"gpus": doubling_stops(exp.param("gpus"), exp.param("hosts_per_leaf").default),
                 "tp": doubling_stops(exp.param("tp")), "pp": doubling_stops(exp.param("pp"))}  # fmt: skip
        controls = param_controls(exp, ITERATION_CONTROLS, **{k: {"stops": v} for k, v in stops.items()})
        self.model, self.gpu, self.gpus, self.tp, self.pp, self.batch, self.collective = controls
        self.controls = controls
        self.status = w.HTML()
        self.fig_bars = FigurePane()
        self.fig_scale = FigurePane()
        for c in controls:
            c.observe(lambda _c: self.update(), names="value")
        self.widget = panel(
            controls,
            [self.fig_bars, self.fig_scale],
            info=self.status,
            fidelity="workbench.widgets.training:iteration_panel",
            fidelity_controls={"model": self.model, "gpu": self.gpu, "gpus": self.gpus, "tp": self.tp, "pp": self.pp},
        )
        self.update()

    def update(self) -> None:
        v = param_values(self.controls)
        try:
            t, scale = iteration_model(**v)
        except ex.SweepError as err:
            self.status.value = f"<b>Plan does not fit:</b> {html.escape(err.reason)}"
            self.table = self.scale = None
            for pane in (self.fig_bars, self.fig_scale):
                clear(pane, "the plan does not fit (see above)")
            return
        self.table, self.scale = t, scale
        e, p = t.set_index("routing").loc["ecmp"], t.set_index("routing").loc["planned"]
        title = f"{MODELS[v['model']].name}, TP{v['tp']} PP{v['pp']} DP{int(p.dp)} on {v['gpus']} {GPUS[v['gpu']].name}"
        redraw(self.fig_bars, vt.breakdown(t, title=title))
        redraw(self.fig_scale, vt.iteration_vs_gpus(scale, title="Weak scaling (same plan shape)"))
        self.status.value = (
            f"ECMP {e.iteration_s:.2f} s (MFU {e.mfu:.1%}) vs planned {p.iteration_s:.2f} s "
            f"(MFU {p.mfu:.1%}): {e.iteration_s / p.iteration_s - 1:+.1%}; DP collective "
            f"{p.dp_comm_s:.2f} s planned, {e.dp_comm_s:.2f} s ECMP; bubble "
            f"{p.bubble_fraction:.1%}; {p.memory_gib:.0f} GiB per GPU<br>ECMP (and MP-4) times are one random "
            f"hashing of the flows (seed 0); the reproduction's weak-scaling claim averages {CLAIM_HASHINGS} "
            "hashings, so its ECMP slowdown differs from this one by the hashing's spread; planned paths and "
            "spraying do not depend on it"
        )


def iteration_panel() -> w.Widget:
    """Build the iteration-time panel and return its top-level widget."""
    return IterationPanel().widget


#: The ``training-what-if`` parameters the what-if panel controls (the edit; the base plan is the experiment's), in
#: the order shown: DP first, the one edit that leaves each replica's graph as it is and the first slider a user
#: (or the browser test) moves; the base's TP sits at the top of its range.
WHAT_IF_CONTROLS = ("model", "dp", "tp", "pp", "global_batch", "recompute")


class WhatIfPanel:
    """Edit a plan's TP, PP, DP, global batch or recomputation (Lumos-style graph edits of a base plan) -> the new
    iteration time and its breakdown (exposed compute, overlap, exposed communication, other) next to the base
    plan's, and the breakdown of every pipeline stage: points of the ``training-what-if`` experiment."""

    def __init__(self) -> None:
        exp = ex.get("training-what-if")
        stops = {k: {"stops": doubling_stops(exp.param(k))} for k in ("tp", "pp", "dp", "global_batch")}
        self.controls = param_controls(exp, WHAT_IF_CONTROLS, **stops)
        self.model, self.dp, self.tp, self.pp, self.batch, self.recompute = self.controls
        self.status = w.HTML()
        self.fig_bars = FigurePane()
        self.fig_stages = FigurePane()
        for c in self.controls:
            c.observe(lambda _c: self.update(), names="value")
        self.widget = panel(
            self.controls,
            [self.fig_bars, self.fig_stages],
            info=self.status,
            fidelity="workbench.widgets.training:what_if_panel",
            fidelity_controls={"model": self.model, "tp": self.tp, "pp": self.pp, "dp": self.dp,
                               "recompute": self.recompute},
        )  # fmt: skip
        self.update()

    def update(self) -> None:
        v = param_values(self.controls)
        try:
            rows = ex.run_point("training-what-if", v)
        except ex.SweepError as err:
            self.status.value = f"<b>Plan does not fit:</b> {html.escape(err.reason)}"
            self.rows = None
            for pane in (self.fig_bars, self.fig_stages):
                clear(pane, "the plan does not fit (see above)")
            return
        self.rows = rows
        plans = rows[rows.kind == "plan"]
        label = plans.plan.iloc[-1]
        redraw(self.fig_bars, vg.overlap_breakdown(plans, title=f"{MODELS[v['model']].name}: base vs edited plan "
                                                               "(stage 0)"))  # fmt: skip
        stages = rows[rows.kind == "stage"].assign(stage=lambda d: d.stage.astype(int).astype(str))
        redraw(self.fig_stages, vg.overlap_breakdown(stages, label="stage", title=f"{label}: every pipeline stage"))
        r = rows.iloc[0]
        t = r.iteration_s
        self.status.value = (
            f"{r.gpus} GPUs: iteration {t:.2f} s (base {r.base_iteration_s:.2f} s, "
            f"{t / r.base_iteration_s - 1:+.1%}); formula {r.formula_iteration_s:.2f} s; "
            f"critical path: compute {r.critical_compute_s / t:.0%}, TP {r.critical_tp_comm_s / t:.0%}, waits "
            f"{r.critical_wait_s / t:.0%}; {r.nodes:,} nodes"
        )


def what_if_panel() -> w.Widget:
    """Build the execution-graph what-if panel and return its top-level widget."""
    return WhatIfPanel().widget


#: The ``training-ettr-vs-interval`` parameters the failures panel controls besides the job size.
FAILURE_CONTROLS = ("rate_scale", "detect_s", "isolate_s", "restart_s", "checkpoint_s")
#: Points of the failures panel's ETTR curve: this many intervals from 1/20 to 20 times the Young/Daly interval
#: (never below :data:`SHORTEST_INTERVAL_S`).
CURVE_POINTS = 25
SHORTEST_INTERVAL_S = 10.0


def failure_gpu_stops(experiment="training-ettr-vs-interval") -> list[int]:
    """The job sizes the failures panel offers: whole hosts doubling from one host (``gpus_per_host``) within the
    ``gpus`` parameter's range, and its top (a log ``Param`` would stop at 1-2-5 counts, not whole hosts).

    Examples
    --------
    >>> failure_gpu_stops()[:3], failure_gpu_stops()[-2:]
    ([8, 16, 32], [65536, 100000])
    """
    exp = ex.get(experiment)
    gpus, host = exp.param("gpus"), exp.param("gpus_per_host").default
    low = float(gpus.low or 1)
    high = float(gpus.high or low)
    top = int(math.floor(math.log2(high / host)))
    stops = [host * 2**k for k in range(top + 1) if host * 2**k >= low]
    return stops + ([int(high)] if stops[-1] < high else [])


def failures_model(**values) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The failures panel's numbers, all rows of ``training-ettr-vs-interval`` at ``values``: one row per recovery
    mode at the Young/Daly interval, the checkpoint-restart curve over :data:`CURVE_POINTS` intervals around it
    (``interval_s, ettr, mc_ettr, mc_se``), and the GPU-hours lost per day (``label, category,
    gpu_hours_per_day``) of each mode.

    Examples
    --------
    >>> rows, curve, loss = failures_model(gpus=1024)
    >>> rows["mode"].tolist(), len(curve), bool(rows.ettr.is_monotonic_increasing)
    (['checkpoint', 'live'], 25, True)
    """
    rows = pd.concat(
        [ex.run_point("training-ettr-vs-interval", {**values, "mode": m}) for m in ("checkpoint", "live")],
        ignore_index=True,
    )
    yd = float(rows.young_daly_s.iloc[0])
    intervals = [float(t) for t in np.geomspace(max(SHORTEST_INTERVAL_S, yd / 20), yd * 20, CURVE_POINTS)]
    curve = ex.sweep("training-ettr-vs-interval", {**values, "mode": "checkpoint", "interval_s": intervals},
                     client=False, progress=False)  # fmt: skip
    curve = curve.sort_values("interval_s", ignore_index=True)[["interval_s", "ettr", "mc_ettr", "mc_se"]]
    labels = {"checkpoint": "checkpoint-restart", "live": "live migration"}
    loss = pd.DataFrame(
        [
            {"label": labels[r["mode"]], "category": k, "gpu_hours_per_day": r[f"lost_{k}"]}
            for _, r in rows.iterrows()
            for k in LOSS_PARTS
        ]
    )
    return rows, curve, loss


class FailuresPanel:
    """Job size, failure-rate multiplier, detection, isolation, restart and checkpoint cost -> ETTR vs checkpoint
    interval (closed form and Monte-Carlo) and GPU-hours lost per day, checkpoint-restart vs live migration: points
    of the ``training-ettr-vs-interval`` experiment."""

    def __init__(self) -> None:
        exp = ex.get("training-ettr-vs-interval")
        # logarithmic controls stop at 1-2-5 values and at their defaults (a FloatLogSlider snapped 600 s to 631 s
        # and printed "2.00e+3"); every control redraws on release, not on every drag step
        self.gpus = param_control(exp.param("gpus"), stops=failure_gpu_stops(exp))
        self.rate, self.detect, self.isolate, self.restart, self.ckpt = param_controls(exp, FAILURE_CONTROLS)
        self.controls = [self.gpus, self.rate, self.detect, self.isolate, self.restart, self.ckpt]
        self.status = w.HTML()
        self.fig_curve = FigurePane()
        self.fig_loss = FigurePane()
        for c in self.controls:
            c.observe(lambda _c: self.update(), names="value")
        self.widget = panel(
            self.controls,
            [self.fig_curve, self.fig_loss],
            info=self.status,
            fidelity="workbench.widgets.training:failures_panel",
        )
        self.update()

    def update(self) -> None:
        v = param_values(self.controls)
        rows, curve, loss = failures_model(**v)
        cr, lv = rows.set_index("mode").loc["checkpoint"], rows.set_index("mode").loc["live"]
        yd = float(cr.young_daly_s)
        settings = (
            f"{v['gpus']:,} GPUs; detect {v['detect_s']:g} s, isolate {v['isolate_s']:g} s, restart "
            f"{v['restart_s']:g} s, checkpoint {v['checkpoint_s']:g} s"
        )  # what the reproduction's figure of the same name states too: their ETTRs differ by these settings
        redraw(self.fig_curve, vt.ettr_vs_interval(curve, yd, title=f"{settings}: ETTR vs checkpoint interval"))
        redraw(self.fig_loss, vt.loss_breakdown(loss, title="GPU-hours lost per day (Young/Daly interval)"))
        self.status.value = (
            f"MTBF {cr.mtbf_h:.2f} h; Young/Daly interval {yd / 60:.1f} min; ETTR "
            f"checkpoint-restart {cr.ettr:.3f}, live migration {lv.ettr:.3f}"
        )


def failures_panel() -> w.Widget:
    """Build the failures panel and return its top-level widget."""
    return FailuresPanel().widget
