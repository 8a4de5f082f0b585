"""Overload-control panel (notebook 15): a load spike on a microservice call graph -> goodput, drops and p95 latency
over time per controller (none, DAGOR-style, Breakwater-style, Rajomon), and a table of the spike's numbers.

Every number is a point of a registered experiment (:func:`workbench.experiments.run_point`, replicate 0): the table
is the ``microservice-overload`` row of each controller and the figure the ``microservice-overload-series`` rows of
the same run (same parameters, same seed); the :mod:`workbench.viz.microservices` builders draw them and
:func:`~workbench.widgets.redraw` swaps the figure in.
"""

from __future__ import annotations

from dataclasses import dataclass

import ipywidgets as W
import pandas as pd

from .. import experiments as ex
from ..viz import microservices as vm
from . import FigurePane, html_table, panel, param_controls, param_values, redraw

__all__ = ["MicroservicesView", "microservices_panel", "panel_model", "CONTROLS"]

#: The experiment's parameters the panel offers (the others stay at their defaults).
CONTROLS = ("graph", "base_load", "spike_load", "pattern", "threshold_s")
EXPERIMENT = "microservice-overload"
#: The same runs as a time series (per 0.1 s, the series experiment's default bin).
SERIES = "microservice-overload-series"


@dataclass(frozen=True)
class MicroservicesView:
    """What the panel shows for one setting."""

    summary: pd.DataFrame  #: one row per controller: the experiment's metrics
    series: dict[str, pd.DataFrame]  #: per controller: goodput, drops and p95 per 0.1 s
    slo_ms: float
    spike: tuple[float, float]
    capacity_rps: float


def panel_model(replicate: int = 0, **values) -> MicroservicesView:
    """Every controller at one point of ``microservice-overload`` (``values`` over its defaults), its replicate
    ``replicate``: the experiment's row and the same run's series (``microservice-overload-series``).

    Examples
    --------
    >>> v = panel_model(graph="chain-2", duration_s=1.0, spike_start_s=0.2, spike_len_s=0.5)
    >>> v.summary.controller.tolist()
    ['none', 'dagor', 'breakwater', 'rajomon']
    """
    exp = ex.get(EXPERIMENT)
    p = {**exp.defaults(), **values}
    points = {c: {**p, "controller": c} for c in exp.param("controller").choices or ()}
    summary = pd.concat([ex.run_point(EXPERIMENT, q, seed=replicate) for q in points.values()], ignore_index=True)
    series = {c: ex.run_point(SERIES, q, seed=replicate) for c, q in points.items()}
    first = summary.iloc[0]
    return MicroservicesView(
        summary=summary,
        series=series,
        slo_ms=p["slo_s"] * 1e3,
        spike=(p["spike_start_s"], float(first.spike_end_s)),
        capacity_rps=float(first.capacity_rps),
    )


def microservices_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    controls = param_controls(EXPERIMENT, CONTROLS)
    info = W.HTML()
    fig = FigurePane()

    def update(*_):
        v = panel_model(**param_values(controls))
        redraw(
            fig,
            vm.spike_timeseries(
                v.series,
                slo_ms=v.slo_ms,
                spike=v.spike,
                title="Through the load spike: goodput, drops and p95 per controller",
            ),
            height=420,
        )
        info.value = html_table(
            ["controller", "goodput (req/s)", "p95 (ms)", "p99 (ms)", "dropped", "held at client", "wasted work"],
            [
                [
                    vm.CONTROLLER_NAMES[r.controller],
                    f"{r.goodput_rps:,.0f}",
                    f"{r.p95_ms:,.1f}",
                    f"{r.p99_ms:,.1f}",
                    f"{r.drop_frac:.1%}",
                    f"{r.client_limited_frac:.1%}",
                    f"{r.wasted_work_frac:.1%}",
                ]
                for r in v.summary.itertuples()
            ],
            caption=f"requests arriving during the spike ({v.spike[0]:g}-{v.spike[1]:g} s); capacity "
            f"{v.capacity_rps:,.0f} req/s (busiest service); SLO {v.slo_ms:g} ms; one run (the experiment's "
            "replicate 0): the tail percentiles move from run to run, and the reproduction's claims average "
            "3 runs at full scale",
        )

    for w in controls:
        w.continuous_update = False
        w.observe(update, "value")
    update()
    # the info's controller table fills the panel's width; the last row of controls has a free cell for the note
    return panel(
        controls,
        [fig],
        info=info,
        fidelity="workbench.widgets.microservices:microservices_panel",
        note_beside="controls",
    )
