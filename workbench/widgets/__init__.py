"""ipywidgets panels: controls wired to a model call and a plotly FigureWidget, nothing else.

Each panel constrains its controls to valid ranges so a user cannot reach an invalid model call, and updates its
figures in place with :func:`redraw` when a control changes.
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
