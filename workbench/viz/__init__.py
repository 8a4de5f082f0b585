"""Plotly figure builders: functions of model outputs.

A builder turns a model's result (a tidy DataFrame, arrays, a record) into a figure. It may reshape what it is given
for display (pick columns, normalise to a percentage, place labels), but model logic (a statistic, a fit, a
simulation) belongs in a model package, where it is tested and shared with the CLI and the reproductions.

Every figure has a title, axis titles with units, and the shared template below. :func:`style` applies them;
:func:`setup_notebook` picks plotly's JupyterLab mimetype renderer: committed notebooks stay small (no inlined
plotly.js) and nothing is fetched from a CDN, so notebooks and dashboards work offline.
"""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio

__all__ = ["TEMPLATE", "COLORS", "style", "tidy_axes", "mark_x", "setup_notebook"]

TEMPLATE = "plotly_white"
#: Colour per recurring series, so the same thing has the same colour in every figure.
COLORS = {
    "poisson": "#1f77b4",
    "gamma": "#d62728",
    "weibull": "#2ca02c",
    "theory": "#444444",
    "ideal": "#2ca02c",
    "ecmp": "#d62728",
    "static": "#7f7f7f",
    "pred": "#9467bd",
}


def style(
    fig: go.Figure,
    *,
    title: str,
    x_title: str | None = None,
    y_title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """Apply the workbench template, a title and axis titles (include units, e.g. ``"inter-arrival (s)"``).

    The legend goes horizontally below the plot area (anchored to the bottom of the figure, with the margin it needs),
    so a narrow figure keeps its full plot width and no legend entry is cut.
    """
    fig.update_layout(
        template=TEMPLATE,
        title={"text": title, "x": 0.02},
        margin={"t": 60, "r": 20},
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0, "xanchor": "left"},
    )
    tidy_axes(fig)
    if x_title is not None:
        fig.update_xaxes(title_text=x_title)
    if y_title is not None:
        fig.update_yaxes(title_text=y_title)
    if height is not None:
        fig.update_layout(height=height)
    return fig


def tidy_axes(fig: go.Figure) -> go.Figure:
    """Number formats people read without a legend: powers of ten on log axes (``10^-6``, not ``1μ``) and no SI
    suffixes on linear axes (``0.0001`` and ``800,000``, never ``100μ`` or ``0.8e+6``). Idempotent; :func:`style` and the panels'
    redraw call it, so axes set to log after :func:`style` are covered too.

    Examples
    --------
    >>> f = tidy_axes(go.Figure(layout={"yaxis": {"type": "log"}}))
    >>> f.layout.yaxis.exponentformat, f.layout.xaxis.exponentformat
    ('power', 'none')
    """
    fig.for_each_xaxis(_tidy)
    fig.for_each_yaxis(_tidy)
    return fig


def _tidy(ax) -> None:
    if ax.type == "log":
        ax.update(exponentformat="power")
    else:  # plain numbers: 800,000 rather than 0.8e+6 or 800k, 0.0001 rather than 100μ
        ax.update(exponentformat="none", separatethousands=True)


def mark_x(
    fig: go.Figure, x: float, text: str, *, log_x: bool = False, color: str = "#444444", position: str = "top"
) -> go.Figure:
    """A dashed vertical line at ``x`` labelled ``text`` at the ``position`` ("top" or "bottom") of the plot.

    Unlike ``add_vline(annotation_text=...)``, the label stays at ``x`` on a log axis (plotly places a vline's
    annotation at ``10**x`` there, which also stretches the axis range).

    Examples
    --------
    >>> f = mark_x(go.Figure(layout={"xaxis": {"type": "log"}}), 100.0, "SLO", log_x=True)
    >>> f.layout.annotations[0].x, f.layout.shapes[0].x0
    (2.0, 100.0)
    """
    import math

    fig.add_vline(x=x, line_dash="dash", line_color=color)
    fig.add_annotation(
        x=math.log10(x) if log_x else x,
        y=1 if position == "top" else 0,
        yref="y domain",
        text=text,
        showarrow=False,
        xanchor="left",
        yanchor="top" if position == "top" else "bottom",
        font={"size": 11},
    )
    return fig


def setup_notebook(renderer: str = "plotly_mimetype") -> None:
    """Set plotly's default renderer for notebooks: the JupyterLab/Voilà mimetype renderer (the ``jupyterlab-plotly``
    extension installed with plotly draws it offline; no CDN request)."""
    pio.renderers.default = renderer
    pio.templates.default = TEMPLATE
