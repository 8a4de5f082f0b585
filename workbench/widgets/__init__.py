"""ipywidgets panels: controls wired to a model call and plotly FigureWidgets, nothing else.

Every panel follows one pattern: its controls are constrained to valid ranges so that a user cannot reach an invalid
model call; a change calls one model function that returns a tidy result (a DataFrame or a record); the figures are
built from that result by :mod:`workbench.viz` builders and put in place with :func:`redraw`. A panel computes
nothing itself and never imports a reproduction: analysis that a panel needs lives in a model package.
"""

from __future__ import annotations

import plotly.graph_objects as go

__all__ = ["redraw"]


def redraw(target: go.FigureWidget, fresh: go.Figure, *, width: int = 560, height: int = 380) -> None:
    """Replace ``target``'s traces and layout with those of ``fresh`` in one update, at a fixed panel size."""
    with target.batch_update():
        target.data = []
        target.add_traces(fresh.data)
        target.layout = fresh.layout
        target.layout.width = width
        target.layout.height = height
