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

__all__ = ["TEMPLATE", "COLORS", "style", "tidy_axes", "setup_notebook"]

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
    suffixes on linear axes (``0.0001`` or ``1e-4``, never ``100μ``). Idempotent; :func:`style` and the panels'
    redraw call it, so axes set to log after :func:`style` are covered too.

    Examples
    --------
    >>> f = tidy_axes(go.Figure(layout={"yaxis": {"type": "log"}}))
    >>> f.layout.yaxis.exponentformat, f.layout.xaxis.exponentformat
    ('power', 'e')
    """
    fig.for_each_xaxis(lambda ax: ax.update(exponentformat="power" if ax.type == "log" else "e"))
    fig.for_each_yaxis(lambda ax: ax.update(exponentformat="power" if ax.type == "log" else "e"))
    return fig


def setup_notebook(renderer: str = "plotly_mimetype") -> None:
    """Set plotly's default renderer for notebooks: the JupyterLab/Voilà mimetype renderer (the ``jupyterlab-plotly``
    extension installed with plotly draws it offline; no CDN request)."""
    pio.renderers.default = renderer
    pio.templates.default = TEMPLATE
