"""Figures for RLHF training (notebook 12): a fused pipeline schedule as a Gantt chart per GPU, and the 12 published
instances' makespans by method. Functions of model outputs only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import style

__all__ = ["gantt", "makespans"]

#: (model, direction) -> colour: the Actor in blues, the Critic in oranges; backward passes darker.
_COLORS = {
    ("Actor", "forward"): "#9ecae1",
    ("Actor", "backward"): "#2171b5",
    ("Critic", "forward"): "#fdae6b",
    ("Critic", "backward"): "#d94801",
}


def gantt(schedule, stages: tuple[int, int], title: str = "Fused pipeline schedule") -> go.Figure:
    """One row per GPU, one bar per task (``schedule``: a :class:`~workbench.training.fused_pipeline.Schedule`),
    coloured by model (Actor, Critic replicas) and direction; ``stages`` is ``(pp0, pp1)`` to tell forward passes
    (task number below the model's stage count) from backward ones."""
    model = np.asarray(schedule.model)
    is_actor = model == 0
    s = np.where(is_actor, stages[0], stages[1])
    forward = np.asarray(schedule.task) < s
    fig = go.Figure()
    for (who, direction), color in _COLORS.items():
        sel = (is_actor == (who == "Actor")) & (forward == (direction == "forward"))
        if not sel.any():
            continue
        start = np.asarray(schedule.start, float)[sel]
        fig.add_trace(
            go.Bar(
                y=np.asarray(schedule.gpu)[sel],
                x=np.asarray(schedule.end, float)[sel] - start,
                base=start,
                orientation="h",
                name=f"{who} {direction}",
                marker={"color": color, "line": {"width": 0.3, "color": "white"}},
                customdata=np.stack([model[sel], np.asarray(schedule.microbatch)[sel]], axis=1),
                hovertemplate="model %{customdata[0]} micro-batch %{customdata[1]}<br>%{base}-%{x}<extra></extra>",
            )
        )
    fig.update_layout(barmode="overlay", bargap=0.15)
    fig.update_yaxes(autorange="reversed", dtick=1)
    return style(fig, title=title, x_title="time (units of the instance)", y_title="GPU", height=360)


def makespans(table: pd.DataFrame, title: str = "Makespan over the lower bound, by method") -> go.Figure:
    """Grouped bars per instance: each method's makespan divided by the lower bound (``table``: one row per
    instance with a ``bound`` column and one column per method)."""
    methods = [c for c in ("sequential-1f1b", "greedy", "ours-published", "ours-unlimited", "published") if c in table]
    fig = go.Figure()
    for m in methods:
        fig.add_trace(go.Bar(x=table["instance"].astype(str), y=table[m] / table["bound"], name=m))
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[0.95, None])
    return style(fig, title=title, x_title="instance", y_title="makespan / lower bound")
