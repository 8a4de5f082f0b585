"""Explore panel: any registered experiment's parameters as controls, a sweep on a button press, the mean over seeds
with error bars.

Each :class:`~workbench.experiments.Param` becomes a control: a parameter with choices (or a bool) a multi-select, a
number a text field of values (``0.3, 0.5, 0.9``) or of an evenly spaced range (``0.3:0.9:4``, start:stop:count).
"Run" sends the grid x seeds to :func:`workbench.experiments.sweep` (with its progress bar; cached, so a grid seen
before returns at once) and draws :func:`workbench.experiments.summarize` with
:func:`workbench.viz.experiments.errorbar_lines`. The initial grid runs when the panel is built (``autorun``), so a
notebook's explore section shows its figure without a click; with a Dask cluster the status line links its dashboard.

A notebook's explore section is one call::

    explore_panel("arrivals-queue-wait", x="utilization", series=["process"], values=["mean_wait_s"],
                  grid={"utilization": [0.5, 0.7, 0.9], "process": ["poisson", "gamma"]}, client=False)
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as W
import numpy as np

from .. import experiments as ex
from .._units import name_label
from ..viz.experiments import errorbar_lines
from . import FigurePane, Panel, clear, panel, redraw

__all__ = ["explore_panel", "parse_values", "value_text"]


#: The most values one ``start:stop:count`` range may give (every one is a point the panel's sweep runs).
MAX_RANGE_COUNT = 1_000


def parse_values(param: ex.Param, text: str) -> list:
    """The values typed for a number parameter: ``"0.3, 0.5"`` or ``"0.3:0.9:4"`` (start:stop:count, inclusive).

    Examples
    --------
    >>> from workbench import experiments
    >>> p = experiments.get("pred-fct-vs-load").param("load")
    >>> parse_values(p, "0.3:0.9:4"), parse_values(p, "0.5, 0.7")
    ([0.3, 0.5, 0.7, 0.9], [0.5, 0.7])
    """
    text = text.strip()
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise ValueError(f"parameter {param.name!r}: a range is start:stop:count, got {text!r}")
        start, stop = (float(param.parse(t)) for t in parts[:2])
        try:
            count = int(parts[2])
        except ValueError:
            raise ValueError(f"parameter {param.name!r}: a range's count is a whole number, got {parts[2]!r}") from None
        if not 1 <= count <= MAX_RANGE_COUNT:
            raise ValueError(
                f"parameter {param.name!r}: a range's count must be in [1, {MAX_RANGE_COUNT:,}], got {count:,} "
                "(a panel runs every point of its grid)"
            )
        return [param.validate(round(float(v), 12)) for v in np.linspace(start, stop, count)]
    values = [param.parse(t) for t in text.split(",") if t.strip()]
    if not values:
        raise ValueError(f"parameter {param.name!r} needs at least one value")
    return values


def _label(param: ex.Param) -> str:
    """What a reader calls ``param``, with its unit (``"mean rate (req/s)"``): the parameter's own title."""
    return param.title


def value_text(v: object) -> str:
    """A value as the explore panel's text field shows it, and as :func:`parse_values` reads it back exactly: a
    whole float as its integer (``1073741824``, where ``:g`` wrote ``1.07374e+09``, which reads back as another
    point), any other float at the fewest digits that give it back (``0.3``, ``1.2e-05``).

    Examples
    --------
    >>> [value_text(v) for v in (1073741824.0, 0.3, 1.2e-05, 256, 2.5e20)]
    ['1073741824', '0.3', '1.2e-05', '256', '2.5e+20']
    """
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 1e16 else repr(v)
    return str(v)


def _control(param: ex.Param, initial: list) -> W.Widget:
    label = _label(param)
    if param.choices is not None or param.kind is bool:
        options = list(param.choices) if param.choices is not None else [True, False]
        return W.SelectMultiple(
            options=options, value=tuple(initial), rows=min(len(options), 3), description=label, tooltip=param.doc
        )
    return W.Text(
        value=", ".join(value_text(v) for v in initial),
        description=label,
        tooltip=param.doc,
    )


def _values(param: ex.Param, control: W.Widget) -> list:
    if isinstance(control, W.SelectMultiple):
        if not control.value:
            raise ValueError(f"parameter {param.name!r}: select at least one value")
        return list(control.value)
    return parse_values(param, control.value)


def _parsed(exp: ex.Experiment, controls: Mapping[str, W.Widget]) -> dict[str, list]:
    """Each control's values as the sweep would run them; ``ValueError`` while a text does not parse (the note keeps
    the last values that did, the run says why)."""
    return {name: _values(exp.param(name), c) for name, c in controls.items()}


def explore_panel(
    experiment_name: str,
    *,
    x: str,
    series: Sequence[str] = (),
    values: Sequence[str],
    grid: Mapping[str, Any] | None = None,
    seeds: int = 3,
    facet_col: str | None = None,
    client=None,
    scale: float = 1.0,
    log_y: bool = False,
    y_title: str = "mean over seeds",
    autorun: bool = True,
    hide: Sequence[str] = (),
) -> Panel:
    """A panel that sweeps ``experiment_name`` over the chosen values and plots ``values`` vs ``x``.

    Parameters
    ----------
    experiment_name : str
        A registered experiment (``workbench sweep list``).
    x : str
        The parameter on the horizontal axis.
    series : sequence of str
        Parameters or result labels drawn as separate lines (colour, then dash); any other parameter given more
        than one value joins them.
    values : sequence of str
        Numeric result columns to plot, side by side (when ``facet_col`` splits the columns, a "quantity" menu picks one).
    grid : mapping, optional
        Initial values of the controls (default: each parameter's default).
    seeds : int
        Initial number of seeds.
    facet_col : str, optional
        A result label (e.g. ``size_class``) split into columns of panels.
    client : None, False, str or distributed.Client
        Where the sweep runs (see :func:`workbench.experiments.sweep`; ``False`` serially).
    scale, log_y, y_title
        Passed to :func:`workbench.viz.experiments.errorbar_lines` (``y_title`` with units).
    autorun : bool
        Run the initial grid when the panel is built (keep that grid small: a notebook runs it on every execution,
        then reads it from the cache).
    hide : sequence of str
        Parameters shown as no control: the sweep holds each at its default (to keep a panel of an experiment with
        many parameters within one screen).

    Examples
    --------
    >>> p = explore_panel("placement-hot-tors", x="mean_utilization", series=["policy"], values=["hot_fraction"],
    ...                   grid={"mean_utilization": [0.3, 0.6], "racks": 50}, seeds=2, client=False, autorun=False)
    >>> type(p.controls["policy"]).__name__ if "policy" in p.controls else type(p.controls["racks"]).__name__
    'Text'
    """
    exp = ex.get(experiment_name)
    grid = dict(grid or {})
    for name in [x, *grid, *hide]:
        exp.param(name)  # unknown names fail here, naming the parameter
    hidden = [name for name in [x, *series, *grid] if name in hide]
    if hidden:
        raise ValueError(f"hide names parameters the panel plots or sets: {hidden}")
    controls = {}
    for p in exp.params:
        if p.name in hide:
            continue
        initial = grid.get(p.name, p.default)
        controls[p.name] = _control(p, list(initial) if isinstance(initial, (list, tuple)) else [initial])
    n_seeds = W.BoundedIntText(value=seeds, min=1, max=1000, description="seeds")
    run = W.Button(description="Run sweep", button_style="primary", icon="play")
    info = W.HTML()
    bar = W.Output()
    figure = FigurePane()

    def on_run(*_, progress: bool = True):
        try:
            chosen = {name: _values(exp.param(name), c) for name, c in controls.items()}
        except (TypeError, ValueError) as err:
            info.value = f"<b>Grid error:</b> {err}"
            shown["summary"] = None
            clear(figure, "grid error (see above)", height=320)
            return
        lines = [s for s in series if s != x] + [
            n for n, v in chosen.items() if len(v) > 1 and n != x and n not in series
        ]
        # the progress bar is drawn into ``bar`` on a click; while the cell that builds the panel runs (autorun) the
        # sweep is quiet, so nothing is captured into a widget by a notebook executor
        capture = bar if progress else contextlib.nullcontext()
        with capture:
            if progress:
                bar.clear_output(wait=True)
            try:
                run = ex.run_sweep(exp, chosen, n_seeds.value, client=client, progress=progress)
            except (TypeError, ValueError) as err:
                info.value = f"<b>Grid error:</b> {err}"
                shown["summary"] = None
                clear(figure, "grid error (see above)", height=320)
                return
        failed, df = run.failures, run.table
        link = ex.dashboard_link(client) if run.computed and client is not False else ""
        info.value = (
            f"{run.total} point x seed runs: {run.computed} computed, {run.cache_hits} from the cache"
            + (f", <b>{len(failed)} failed</b> (first: {failed.error.iloc[0]})" if len(failed) else "")
            + (f'; <a href="{link}" target="_blank">Dask dashboard</a>' if link else "")
        )
        if df.empty:
            shown["summary"] = None
            clear(figure, "no point of the grid ran (see above)", height=320)
            return
        shown["summary"], shown["lines"] = ex.summarize(df, list(values)), lines
        draw()

    def draw(*_):
        summary = shown["summary"]
        if summary is None:
            return
        if quantity is not None:  # columns split a label: one quantity at a time, chosen from a menu
            summary = summary[summary["quantity"] == quantity.value]
        redraw(
            figure,
            errorbar_lines(
                summary,
                x,
                series=shown["lines"],
                # quantities side by side (stacked, the second row would be below the fold at 1366x768)
                facet_col=facet_col or ("quantity" if len(values) > 1 else None),
                scale=scale,
                log_y=log_y,
                title=f"{exp.name}: mean over {n_seeds.value} seed(s), error bars 1 s.e.",
                x_title=_label(exp.param(x)),
                y_title=y_title,
            ),
            height=320,
        )

    shown: dict[str, Any] = {"summary": None, "lines": []}
    quantity = None
    if facet_col and len(values) > 1:
        quantity = W.Dropdown(options=[(name_label(v), v) for v in values], description="quantity")
        quantity.observe(draw, "value")
    run.on_click(on_run)
    # an experiment has up to ~16 parameters: short boxes four to a row keep the figure in the same screen
    extra = [quantity] if quantity is not None else []
    out = panel(
        [*controls.values(), n_seeds, *extra, run],
        [figure],
        info=W.VBox([info, bar]),
        control_min_px=200,
        fidelity=exp.name,
        fidelity_controls=controls,
        fidelity_read=lambda: _parsed(exp, controls),
    )
    out.run, out.figure, out.controls, out.info = run, figure, controls, info
    if autorun:
        on_run(progress=False)
    return out
