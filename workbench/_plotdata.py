"""The numeric data of plotly traces, for the figure builders (:mod:`workbench.viz`) and the figure invariants
(:func:`workbench.testing.figure_problems`) alike: one definition of what "two lines coincide" means."""

from __future__ import annotations

import numpy as np

__all__ = ["coinciding_lines"]


def _xy(trace) -> tuple[np.ndarray, np.ndarray] | None:
    """A line trace's numeric (x, y), or None when it has none (categories, dates, no line)."""
    if getattr(trace, "type", None) not in ("scatter", "scattergl") or "lines" not in (trace.mode or "lines"):
        return None
    if trace.y is None:
        return None
    try:
        y = np.asarray(trace.y, dtype=float).ravel()
        x = np.arange(y.size, dtype=float) if trace.x is None else np.asarray(trace.x, dtype=float).ravel()
    except (TypeError, ValueError):
        return None
    return (x, y) if x.shape == y.shape and y.size else None


def coinciding_lines(fig) -> list[tuple[int, int]]:
    """Pairs ``(i, j)``, ``i < j``, of line traces on the same axes whose points coincide (to 1e-9 relative):
    drawn alike, trace ``j`` hides trace ``i`` although both keep a legend entry."""
    lines = []
    for i, t in enumerate(fig.data):
        xy = _xy(t)
        if xy is not None and t.visible is not False:
            lines.append((i, (t.xaxis or "x", t.yaxis or "y"), xy))
    pairs = []
    for a, (i, axes_i, (xi, yi)) in enumerate(lines):
        for j, axes_j, (xj, yj) in lines[a + 1 :]:
            if (
                axes_i == axes_j
                and xi.shape == xj.shape
                and np.allclose(xi, xj, rtol=1e-9, atol=0.0, equal_nan=True)
                and np.allclose(yi, yj, rtol=1e-9, atol=0.0, equal_nan=True)
            ):
                pairs.append((i, j))
    return pairs
