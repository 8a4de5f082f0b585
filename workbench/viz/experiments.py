"""Figures of swept results: the mean over seeds with error bars, from a :func:`workbench.experiments.summarize`
table (``<parameters>, <labels>, quantity, mean, std, sem, n``). No computation beyond picking rows and scaling."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .._units import name_label
from . import COLORS, label, style

__all__ = ["errorbar_lines"]

_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
#: More lines than this are labelled at their right end instead of in a legend (a legend that long crowds the plot
#: away; :data:`workbench.testing.MAX_LEGEND_ENTRIES`).
_MAX_LEGEND = 8
#: Pixels per character of an end label (font size 10), for the right margin the labels need.
_LABEL_PX_PER_CHAR = 6


def _label(keys: Sequence[str], values: tuple) -> str:
    """A line's name in words: its series values as :func:`workbench.viz.label` names them (``fat_tree`` reads
    ``fat tree``, ``halving_doubling`` ``halving-doubling``), or "mean" without series."""
    return ", ".join(label(v) for v in values) if keys else "mean"


def errorbar_lines(
    summary: pd.DataFrame,
    x: str,
    *,
    series: Sequence[str] = (),
    facet_col: str | None = None,
    facet_row: str | None = None,
    scale: float = 1.0,
    log_y: bool = False,
    title: str,
    x_title: str,
    y_title: str,
) -> go.Figure:
    """Mean vs ``x`` with error bars of one standard error over seeds, one line per combination of ``series``.

    Parameters
    ----------
    summary : DataFrame
        A :func:`workbench.experiments.summarize` table (columns ``mean`` and ``sem``; ``sem`` is NaN for one seed,
        drawn without a bar).
    x : str
        The column on the horizontal axis (a parameter).
    series : sequence of str
        Columns whose combinations are the lines; the first picks the colour (the workbench colour of a value such
        as ``"static"``/``"pred"`` where there is one), the second the dash. More than eight lines are named at
        their right end instead of in a legend.
    facet_col, facet_row : str, optional
        Columns split into a grid of panels (e.g. ``size_class`` and ``quantity``), sharing the x axis.
    scale : float
        Multiplies ``mean`` and ``sem`` (e.g. ``1e3`` for seconds to milliseconds, named in ``y_title``).
    log_y : bool
        Logarithmic vertical axis.
    title, x_title, y_title : str
        Figure and axis titles (with units).

    Examples
    --------
    >>> df = pd.DataFrame({"load": [0.3, 0.6, 0.3, 0.6], "marking": ["static", "static", "pred", "pred"],
    ...                    "quantity": "p99_s", "mean": [1.0, 2.0, 0.5, 0.7], "sem": [0.1, 0.2, 0.05, 0.1]})
    >>> fig = errorbar_lines(df, "load", series=["marking"], title="t", x_title="load", y_title="FCT (s)")
    >>> [t.name for t in fig.data], list(fig.data[0].error_y.array)
    (['static', 'pred'], [0.1, 0.2])
    """
    series = list(series)
    for col in [x, *series, facet_col, facet_row, "mean", "sem"]:
        if col is not None and col not in summary.columns:
            raise ValueError(f"column {col!r} is not in the summary (columns: {', '.join(summary.columns)})")
    cols = list(pd.unique(summary[facet_col])) if facet_col else [None]
    rows = list(pd.unique(summary[facet_row])) if facet_row else [None]
    titles = [" / ".join(_facet_label(v) for v in (r, c) if v is not None) for r in rows for c in cols]
    fig = make_subplots(
        rows=len(rows),
        cols=len(cols),
        shared_xaxes=True,
        subplot_titles=titles if len(titles) > 1 else None,
        horizontal_spacing=0.06,
        vertical_spacing=0.12,
    )
    first = list(pd.unique(summary[series[0]])) if series else []
    second = list(pd.unique(summary[series[1]])) if len(series) > 1 else []
    seen = set()
    for i, r in enumerate(rows, start=1):
        for j, c in enumerate(cols, start=1):
            sub = summary
            if facet_row:
                sub = sub[sub[facet_row] == r]
            if facet_col:
                sub = sub[sub[facet_col] == c]
            groups = sub.groupby(series, sort=False) if series else [((), sub)]
            for key, g in groups:
                key = key if isinstance(key, tuple) else (key,)
                g = g.sort_values(x)
                name = _label(series, key)
                color = COLORS.get(str(key[0]), _PALETTE[first.index(key[0]) % len(_PALETTE)]) if series else None
                dash = _DASHES[second.index(key[1]) % len(_DASHES)] if len(series) > 1 else "solid"
                fig.add_trace(
                    go.Scatter(
                        x=g[x],
                        y=g["mean"] * scale,
                        name=name,
                        legendgroup=name,
                        showlegend=name not in seen,
                        mode="lines+markers",
                        line={"color": color, "dash": dash},
                        error_y={"type": "data", "array": (g["sem"] * scale).tolist(), "visible": True},
                    ),
                    row=i,
                    col=j,
                )
                seen.add(name)
    if len(seen) > _MAX_LEGEND:
        _label_line_ends(fig, x_col=len(cols))
    if log_y:
        fig.update_yaxes(type="log")
    fig.update_xaxes(title_text=x_title, row=len(rows))
    fig.update_yaxes(title_text=y_title, col=1)
    style(fig, title=title, height=max(380, 300 * len(rows)))  # after the axis titles: the axis policy edits them
    if len(seen) > _MAX_LEGEND:
        longest = max(len(n) for n in seen)
        fig.update_layout(margin_r=min(20 + _LABEL_PX_PER_CHAR * longest, 240))
    return fig


def _label_line_ends(fig: go.Figure, x_col: int) -> None:
    """More lines than a legend holds: no legend; each line of the rightmost column of panels is labelled with its
    name at its last point, in its colour, in the right margin."""
    last_axis = "x" if x_col == 1 else f"x{x_col}"
    for t in fig.data:
        t.showlegend = False
        if (t.xaxis or "x") != last_axis or t.x is None or not len(t.x):
            continue
        t.mode = "lines+markers+text"
        t.text = [""] * (len(t.x) - 1) + [t.name]
        t.textposition = "middle right"
        t.textfont = {"size": 10, "color": t.line.color}
        t.cliponaxis = False


def _facet_label(value) -> str:
    """A facet value as a panel title in words: a result column such as ``p50_s`` reads ``p50`` (its unit is in
    ``y_title``), ``rate_ratio`` reads ``rate ratio``."""
    return name_label(str(value))
