"""ipywidgets panels: controls wired to a model call and a plotly FigureWidget, nothing else.

Each panel constrains its controls to valid ranges so a user cannot reach an invalid model call, and updates its
figures in place (``FigureWidget.batch_update``) when a control changes.
"""
