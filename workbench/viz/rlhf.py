"""Figures for RLHF training (notebook 12): a fused pipeline schedule as a Gantt chart per GPU, and the 12 published
instances' makespans by method. Functions of model outputs only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import label, mark_x, style

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
        fig.add_trace(go.Bar(x=table["instance"].astype(str), y=table[m] / table["bound"], name=label(m)))
    fig.update_layout(barmode="group")
    fig.update_yaxes(range=[0.95, None])
    return style(fig, title=title, x_title="instance", y_title="makespan / lower bound")


def tail_completion(
    samples: pd.DataFrame, title: str = "Generation's long tail: samples finished over time"
) -> go.Figure:
    """Share of samples finished vs time, baseline and fused (``samples``: the ``rlhf-generation-tail-samples``
    rows of one run: ``completion_s`` and ``fused_completion_s`` per sample, the run's ``baseline_s``, ``fused_s``,
    ``migrated`` and ``migrate_at_s`` on each), with the migration and both stage ends marked."""
    fig = go.Figure()
    n = len(samples)
    share = np.arange(1, n + 1) / n
    run = samples.iloc[0]
    for name, c, color in (("baseline", samples.completion_s, "#2171b5"),
                           ("fused (migrated tail)", samples.fused_completion_s, "#d94801")):  # fmt: skip
        fig.add_trace(go.Scatter(x=np.sort(c), y=share, mode="lines", name=name, line={"shape": "hv", "color": color}))
    marks = [
        (float(run.baseline_s), "baseline: generation + inference", "#2171b5"),
        (float(run.fused_s), "fused stage end", "#d94801"),
    ]
    if run.migrated:
        marks.append((float(run.migrate_at_s), f"migrate {run.migrated:.0f} samples", "#636363"))
    for x, text, color in marks:
        mark_x(fig, x, text, color=color)
    return style(
        fig, title=title, x_title="time from the start of generation (s)", y_title="share of samples generated"
    )


def gain_vs_threshold(table: pd.DataFrame, title: str = "Inter-stage fusion: gain vs migration threshold") -> go.Figure:
    """One line per length-tail spread (``sigma``): the stage-time gain (baseline / fused) vs the threshold."""
    fig = go.Figure()
    for sigma, g in table.groupby("sigma"):
        fig.add_trace(go.Scatter(x=g.threshold, y=g.gain, mode="lines+markers", name=f"sigma {sigma:g}"))
    fig.add_hline(y=1.0, line={"dash": "dot", "color": "grey"})
    return style(fig, title=title, x_title="migration threshold (share of samples remaining)",
                 y_title="gain (baseline / fused stage time)")  # fmt: skip
