"""Fidelity: every engine's validation as data, one table for all of them, and a note for a panel's controls.

A reproduction's scoreboard says whether a *claim* reproduced; this module says whether the *engine* behind a panel
can be trusted at the parameters chosen. Each engine whose numbers a panel shows is declared once in :data:`ENGINES`
(an :class:`Engine`): what it is, its independent references (:class:`Reference`: published measurements, another
simulator run on the same input, or queueing theory, each labelled by its ``kind``) and the controls that place a
point in parameter space (:class:`Control`: the GPUs, models, TP/PP, loads ... the reference points lie at). An
engine with no independent reference says so (``no_reference``: why, and what checks it has instead), so a panel can
say so too.

:func:`points` computes model vs reference for one engine (a tidy table: ``source, metric, reference, model, error``
with ``error = (model - reference) / reference``, the reference's ``kind`` and the engine's control columns), through
the engine's own ``validation_points`` (serving, training, packets, arrivals); it is cached under
``$WORKBENCH_CACHE/fidelity/<scale>/`` like a paper's run (:func:`workbench.reproductions.run_paper`): keyed by the
:func:`~workbench._deps.code_fingerprint` of the engine's validation module (its closure: the model it replays) and
of this module's source, and checked on read against the data files it recorded (:func:`workbench.data.stale`), so
an edited model or a changed reference file never shows old numbers. :func:`fidelity_table` is the scoreboard: per
engine, metric and source the points, the median and worst signed error and the envelope covered; :func:`write` puts
it in ``fidelity.json`` and ``fidelity.md`` (``workbench reproduce``), ``workbench validate`` prints it.

:func:`region_note` is what a panel shows next to its numbers: the engine's validated error overall and in the
region its controls select, and a note naming every control outside the validated envelope
(``region_note("serving", gpu="MI300X", pp=32)``). :data:`PANELS` and :data:`EXPERIMENTS` map every panel and every
registered experiment to the engines whose numbers it shows (tested against the registries).

This module is longer than ~500 lines: the cached points, the fidelity table and the panels' region notes all read the
same points and the same engine declarations, and the note's helpers (which engines a panel shows, whether their
points are cached) sit beside the cache they ask about.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .._deps import code_fingerprint, module_closure, module_digest
from .._validate import one_of
from . import engines as _engines
from .engines import (
    ENGINES,
    EXPERIMENTS,
    PACKET_ENGINES,
    PANELS,
    POINT_COLUMNS,
    REFERENCE_KINDS,
    Control,
    Engine,
    Reference,
    engine,
)

__all__ = [
    "Control",
    "Engine",
    "ENGINES",
    "EXPERIMENTS",
    "FORMAT",
    "PACKET_ENGINES",
    "PANELS",
    "POINT_COLUMNS",
    "REFERENCE_KINDS",
    "Reference",
    "RegionNote",
    "SCALES",
    "TABLE_COLUMNS",
    "engine",
    "fidelity_table",
    "points",
    "panel_notes",
    "panel_engines",
    "points_cached",
    "points_key",
    "region_note",
    "to_markdown",
    "to_text",
    "write",
]

#: Version of the cached points' layout; part of every key.
FORMAT = 1

#: ``full`` (``workbench reproduce``, ``workbench validate``) or ``quick`` (smaller simulations where an engine has them).
SCALES = ("full", "quick")

#: The columns of :func:`fidelity_table`.
TABLE_COLUMNS = (
    "engine",
    "metric",
    "source",
    "reference_kind",
    "points",
    "median_error",
    "median_abs_error",
    "worst_error",
    "envelope",
)

# ----------------------------------------------------------------------------------------------------------------------
# Points, cached by the code and data they depend on
# ----------------------------------------------------------------------------------------------------------------------


def points_key(name: str | Engine, scale: str = "full") -> str:
    """The cache key of an engine's points at ``scale``: the layout version, this module's source and the code
    fingerprint of the engine's validation module (its closure: the model it replays). An edit to any of them
    changes the key.

    Examples
    --------
    >>> points_key("arrivals") != points_key("arrivals", "quick")  # a smaller simulation at the quick scale
    True
    >>> points_key("serving") == points_key("serving", "quick")  # the same published points at both
    True
    """
    e = engine(name)
    one_of("scale", scale, SCALES)
    scale = scale if e.scaled else "full"
    h = hashlib.sha256(f"format {FORMAT}\0{e.name}\0{scale}\0".encode())
    for own in (__name__, _engines.__name__):  # these two files' source (not their closures: every engine's)
        h.update(module_digest(own, module_closure(own)[own]).encode() + b"\0")
    h.update(code_fingerprint(e.code).encode())
    return h.hexdigest()[:16]


def _normalize(e: Engine, frame: pd.DataFrame) -> pd.DataFrame:
    missing = {"source", "metric", "reference", "model", "error"} - set(frame.columns)
    if missing:
        raise ValueError(f"engine {e.name!r}: its points lack column(s) {sorted(missing)}")
    out = frame.copy()
    out["reference_kind"] = [e.kind_of(str(s)) for s in out["source"]]
    if "citation" not in out:
        out["citation"] = ""
    controls = [c.column for c in e.controls if c.column not in POINT_COLUMNS]
    absent = [c for c in controls if c not in out]
    if absent:
        raise ValueError(f"engine {e.name!r}: its points lack the control column(s) {absent}")
    for c in e.controls:
        out[c.column] = out[c.column].astype(float) if c.numeric else out[c.column].astype(str)
    out = out[[*POINT_COLUMNS, *dict.fromkeys(controls)]].copy()
    for col in ("source", "metric", "reference_kind", "citation"):
        out[col] = out[col].astype(str)
    return out.reset_index(drop=True)


def _entry(e: Engine, scale: str) -> Path:
    from ..data import cache_dir

    scale = scale if e.scaled else "full"
    return cache_dir() / "fidelity" / scale / f"{e.name}-{points_key(e, scale)}.parquet"


def points_cached(name: str | Engine, scale: str = "full") -> bool:
    """Whether :func:`points` of engine ``name`` at ``scale`` would be read from the cache (a file is there for the
    current code), not computed: a panel computes the missing ones without blocking (a fresh cache replays the
    packet references for minutes). True for an engine without points (nothing to compute).

    Examples
    --------
    >>> _ = points("arrivals", "quick")
    >>> points_cached("arrivals", "quick"), points_cached("carbon")
    (True, True)
    """
    e = engine(name)
    one_of("scale", scale, SCALES)
    return e.compute is None or _entry(e, scale).is_file()


def panel_engines(shown: str) -> tuple[str, ...]:
    """The engines a panel (a key of :data:`PANELS`) or an experiment (of :data:`EXPERIMENTS`) shows.

    Examples
    --------
    >>> panel_engines("workbench.widgets.aqm:pred_panel")
    ('aqm-fluid', 'packets-sack')
    """
    if shown in PANELS:
        return PANELS[shown]
    one_of("shown", shown, (*PANELS, *EXPERIMENTS))
    return EXPERIMENTS[shown]


def points(name: str | Engine, scale: str = "full", *, cache: bool = True) -> pd.DataFrame:
    """Model vs reference on every reference point of an engine: columns :data:`POINT_COLUMNS` then the engine's
    control columns, one row per (reference point, metric, source); ``error`` is signed, ``(model - reference) /
    reference``.

    Cached under ``$WORKBENCH_CACHE/fidelity/<scale>/`` by :func:`points_key` and checked on read against the data
    files the computation read (a changed or shadowed file recomputes); ``cache=False`` neither reads nor writes.
    ``ValueError`` for an engine without an independent reference (its ``no_reference`` says why).

    Examples
    --------
    >>> p = points("arrivals", "quick")
    >>> list(p.columns[:5]), set(p.reference_kind)
    (['source', 'metric', 'reference', 'model', 'error'], {'theory'})
    """
    from ..data import recorded_frame

    e = engine(name)
    one_of("scale", scale, SCALES)
    compute = e.compute
    if compute is None:
        raise ValueError(f"engine {e.name!r} has no points: {e.no_reference}")
    if not cache:
        return _normalize(e, compute(scale))
    scale = scale if e.scaled else "full"
    return recorded_frame(_entry(e, scale), lambda: _normalize(e, compute(scale)))


# ----------------------------------------------------------------------------------------------------------------------
# The table
# ----------------------------------------------------------------------------------------------------------------------


def _fmt(v: float) -> str:
    v = float(v)
    if not math.isfinite(v):
        return str(v)
    return str(int(v)) if v == int(v) else f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _envelope(e: Engine, p: pd.DataFrame) -> str:
    """The region ``p`` covers, control by control: the values of a categorical control (the first three and a
    count beyond), the range of a numeric one."""
    parts = []
    for c in e.controls:
        col = p[c.column]
        if c.numeric:
            lo, hi = float(col.min()), float(col.max())
            parts.append(f"{c.label} {_fmt(lo)}" + ("" if lo == hi else f"-{_fmt(hi)}"))
        else:
            vals = sorted(col.unique())
            more = f" +{len(vals) - 3} more" if len(vals) > 3 else ""
            parts.append(f"{c.label} {', '.join(vals[:3])}{more}")
    return "; ".join(parts)


def _stats(err: pd.Series) -> tuple[float, float, float]:
    a = err.abs()
    return float(err.median()), float(a.median()), float(err.loc[a.idxmax()])


def fidelity_table(engines: Sequence[str] | None = None, scale: str = "full") -> pd.DataFrame:
    """The fidelity scoreboard: per engine, metric and source, ``points``, the median signed error
    (``median_error``), the median ``|error|``, the worst signed error (largest magnitude) and the ``envelope``
    the points cover; an engine without an independent reference is one row with ``source`` ``"none"``, no points,
    and its reason as the envelope. Columns :data:`TABLE_COLUMNS`.

    Examples
    --------
    >>> t = fidelity_table(["arrivals", "carbon"], "quick")
    >>> list(t.columns) == list(TABLE_COLUMNS), sorted(t.engine.unique())
    (True, ['arrivals', 'carbon'])
    """
    names = list(ENGINES) if engines is None else [engine(n).name for n in engines]
    one_of("scale", scale, SCALES)
    rows = []
    for name in names:
        e = ENGINES[name]
        if e.compute is None:
            rows.append((name, "", "none", "none", 0, math.nan, math.nan, math.nan, e.no_reference))
            continue
        p = points(e, scale)
        for (metric, source), g in p.groupby(["metric", "source"], sort=True):
            med, med_abs, worst = _stats(g["error"])
            rows.append(
                (name, metric, source, g["reference_kind"].iloc[0], len(g), med, med_abs, worst, _envelope(e, g))
            )
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


def _pct(v: float) -> str:
    return "" if math.isnan(v) else f"{100 * v:+.1f}%"


def to_markdown(table: pd.DataFrame) -> str:
    """The table of :func:`fidelity_table` as Markdown (errors in signed percent)."""
    lines = [
        "| engine | metric | source | kind | points | median error | median abs error | worst error | envelope |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples(index=False):
        cells = [
            r.engine,
            r.metric,
            r.source,
            r.reference_kind,
            str(r.points),
            _pct(r.median_error),
            _pct(r.median_abs_error).lstrip("+"),
            _pct(r.worst_error),
            r.envelope,
        ]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines)


def to_text(table: pd.DataFrame) -> str:
    """The table of :func:`fidelity_table` for a terminal: per engine what it is and its rows (errors in signed
    percent), each row's envelope by a number listed under the engine (rows sharing one envelope share its number);
    an engine without an independent reference says why."""
    blocks = []
    for name, g in table.groupby("engine", sort=False):
        e = ENGINES[str(name)]
        lines = [f"== {name}: {e.what}"]
        if int(g["points"].max()) == 0:
            blocks.append("\n".join([*lines, f"   not validated: {e.no_reference}"]))
            continue
        envs = list(dict.fromkeys(g["envelope"]))
        rows = pd.DataFrame(
            {
                "metric": g["metric"],
                "source": g["source"],
                "kind": g["reference_kind"],
                "points": g["points"],
                "median": g["median_error"].map(_pct),
                "median |e|": g["median_abs_error"].map(_pct).str.lstrip("+"),
                "worst": g["worst_error"].map(_pct),
                "envelope": [f"[{envs.index(v) + 1}]" for v in g["envelope"]],
            }
        )
        lines.append(rows.to_string(index=False))
        lines += [f"   [{i + 1}] {v}" for i, v in enumerate(envs)]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def write(table: pd.DataFrame, out_dir: str | os.PathLike) -> tuple[Path, Path]:
    """Write ``fidelity.json`` (one record per row, plus each engine's declaration) and ``fidelity.md`` into
    ``out_dir``, atomically; return their paths."""
    from ..cache import atomic_path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    declared = {
        n: {
            "what": e.what,
            "code": e.code,
            "metrics": list(e.metrics),
            "no_reference": e.no_reference,
            "references": [{"source": r.source, "kind": r.kind, "citation": r.citation} for r in e.references],
            "controls": [c.name for c in e.controls],
        }
        for n, e in ENGINES.items()
        if n in set(table.engine)
    }
    rows = [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        for r in table.to_dict("records")
    ]
    json_path, md_path = out / "fidelity.json", out / "fidelity.md"
    with atomic_path(json_path) as tmp:
        tmp.write_text(json.dumps({"engines": declared, "table": rows}, indent=1, default=str) + "\n")
    text = [
        "# Fidelity: every engine against its independent references",
        "",
        "Signed error = (model - reference) / reference; per engine, metric and source.",
        "",
        to_markdown(table),
        "",
    ]
    with atomic_path(md_path) as tmp:
        tmp.write_text("\n".join(text))
    return json_path, md_path


# ----------------------------------------------------------------------------------------------------------------------
# A panel's note
# ----------------------------------------------------------------------------------------------------------------------

#: The source an engine's headline numbers summarize, where its points hold several views of one point (the packet
#: engine against each reference and against the span of the two): the span.
_HEADLINE_SOURCE = {"packets": "ns-3 / htsim span", "packets-sack": "ns-3 / htsim span"}
#: Headline sources that are a span of references (0 error inside): the words a note gives them, and the module whose
#: ``TOLERANCE`` is the engine's bar beyond the span.
_ENVELOPES = {"ns-3 / htsim span": ("ns-3/htsim envelope", "workbench.aqm.validation")}


@dataclass(frozen=True)
class RegionNote:
    """What a panel shows beside an engine's numbers: ``text`` (the validated error overall and in the region the
    controls select, then one sentence per control outside the validated envelope), ``in_envelope`` (every control
    given lies inside it; False for an engine with no independent reference), ``outside`` (those sentences),
    ``points`` (the engine's validated points) and ``region_points`` (those in the controls' region). For a one-line
    display: ``summary`` (``text`` without the reference kinds and the outside sentences: "serving: validated on 132
    points, median |error| 8%, worst +147%; this model/GPU: 3 points"; "carbon: not validated") and ``named`` (each
    control and value that leaves the envelope, in the order of ``outside``: "GPU MI300X", "PP 128")."""

    engine: str
    text: str
    in_envelope: bool
    outside: tuple[str, ...] = ()
    points: int = 0
    region_points: int = 0
    summary: str = ""
    named: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.text


def _summary(err: pd.Series, envelope: tuple[str, float] | None = None) -> str:
    """The median and worst error of ``err``; against an ``envelope`` (a span of references, 0 error inside it: its
    words and tolerance), how many points lie inside it and within the tolerance of it, and the worst (a median of
    0% would read as a perfect model)."""
    _, med_abs, worst = _stats(err)
    if envelope is not None:
        words, tol = envelope
        return (
            f"{int((err == 0).sum())} inside the {words}, {int((err.abs() <= tol).sum())} within {100 * tol:.0f}% "
            f"of it, worst {100 * worst:+,.0f}%"
        )
    return f"median |error| {100 * med_abs:,.0f}%, worst {100 * worst:+,.0f}%"


def _several(value: Any) -> list:
    """A control's values: one, or each of a sweep's (an explore panel's list or multi-selection)."""
    return list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]


def region_note(name: str | Engine, scale: str = "full", **controls: Any) -> RegionNote:
    """The validated error of engine ``name`` for the region a panel's ``controls`` are in, and a note for every
    control outside the validated envelope.

    ``controls`` are the engine's :class:`Control` names with the panel's values (``gpu="H100"``, ``pp=32``;
    ``None`` values are ignored, so a panel can pass every control it has; a list or tuple is a sweep's values, each
    checked, the region holding any of them). A categorical control is inside when some reference point has its
    value (spelled as the points do: ``"H100"`` is ``H100-SXM``), and the categorical controls together select the
    region ("this GPU/model: 3 points"); a numeric control is inside when it lies in the range of the reference
    points, of the whole engine and of that region. Reads :func:`points` (cached: the first call on a fresh cache
    replays the engine's references, up to a minute for serving or packets).

    Examples
    --------
    >>> n = region_note("arrivals", "quick", process="weibull", utilization=0.95)
    >>> n.in_envelope, len(n.outside), n.named
    (False, 2, ('arrival process weibull', 'utilization 0.95'))
    >>> print(n.outside[0])
    no validated point for arrival process weibull (validated: deterministic, gamma, poisson)
    >>> region_note("arrivals", "quick", utilization=[0.5, 0.95]).named
    ('utilization 0.95',)

    A sweep over several values of a categorical control names those its region's points hold:

    >>> n = region_note("arrivals", "quick", process=["poisson", "weibull"])
    >>> n.summary.split("; ")[1], n.named
    ('this arrival process poisson: 6 points (median |error| 3%, worst -12%)', ('arrival process weibull',))
    """
    e = engine(name)
    given = {k: _several(v) for k, v in controls.items() if v is not None and _several(v)}
    ctl = {k: e.control(k) for k in given}
    if not e.validated:
        return RegionNote(
            e.name, f"{e.name}: not validated; {e.no_reference}", False, summary=f"{e.name}: not validated"
        )
    p = points(e, scale)
    head = _HEADLINE_SOURCE.get(e.name)
    if head is not None:
        p = p[p.source == head]
    kinds = " and ".join(sorted(set(p.reference_kind)))
    word = "measured" if set(p.reference_kind) == {"measurement"} else "validated"
    envelope = None
    if head in _ENVELOPES:
        words, module = _ENVELOPES[head]
        envelope = (words, float(importlib.import_module(module).TOLERANCE))
    summary = f"{e.name}: validated on {len(p)} points, {_summary(p.error, envelope)}"
    text = f"{e.name}: validated on {len(p)} points ({kinds}), {_summary(p.error, envelope)}"
    outside: list[tuple[str, str]] = []  # (sentence, control and value)
    region = pd.Series(True, index=p.index)
    labels = []
    for k, c in ctl.items():
        if c.numeric:
            continue
        values = list(dict.fromkeys(c.spell(v) for v in given[k]))
        known = sorted(p[c.column].unique())
        for value in values:
            if value not in known:
                more = f" +{len(known) - 6} more" if len(known) > 6 else ""
                outside.append(
                    (
                        f"no {word} point for {c.label} {value} ({word}: {', '.join(known[:6])}{more})",
                        f"{c.label} {value}",
                    )
                )
        region &= p[c.column].isin(values)
        held = [v for v in values if v in known]
        # a sweep's values: the region is named by those holding points ("this marking static: 90 points")
        labels.append(f"{c.label} {'/'.join(map(str, held))}" if len(values) > 1 and held else c.label)
    cats = [c for c in e.controls if not c.numeric]
    for k, c in ctl.items():
        if not c.numeric:
            continue
        col = p[c.column]
        lo, hi = float(col.min()), float(col.max())
        for v in sorted({c.spell(x) for x in given[k]}):
            if lo <= v <= hi:
                sub = col[region]
                if labels and region.any() and not (sub.min() <= v <= sub.max()):
                    outside.append(
                        (
                            f"{c.label} {_fmt(v)} is outside the {c.label} validated for this "
                            f"{'/'.join(labels)} ({_fmt(sub.min())}-{_fmt(sub.max())})",
                            f"{c.label} {_fmt(v)}",
                        )
                    )
                continue
            edge = hi if v > hi else lo
            at = p[col == edge]
            where = ""
            if cats:  # where the edge point lies, by the engine's first categorical control (the GPU, the process)
                vals = sorted(at[cats[0].column].unique())
                where = f" on {', '.join(vals[:3])}" + (f" +{len(vals) - 3} more" if len(vals) > 3 else "")
            how = "beyond the largest" if v > hi else "below the smallest"
            outside.append(
                (f"{c.label} {_fmt(v)} is {how} validated, {c.label} {_fmt(edge)}{where}", f"{c.label} {_fmt(v)}")
            )
    n_region = int(region.sum())
    if labels:
        here = f"; this {'/'.join(labels)}: {n_region} point{'' if n_region == 1 else 's'}"
        if n_region:
            here += f" ({_summary(p.error[region], envelope)})"
        elif not any(o.startswith(f"no {word} point") for o, _ in outside):
            spelled = {k: "/".join(str(ctl[k].spell(v)) for v in given[k]) for k in ctl if not ctl[k].numeric}
            combined = [f"{ctl[k].label} {v}" for k, v in spelled.items()]
            # the sentence names each control; the panel's highlighted warning, under a summary that already names
            # them ("this model/GPU: 0 points"), only their values (short enough for a panel's side column)
            outside.append(
                (f"no {word} point combines " + " and ".join(combined), " + ".join(spelled.values()) + " together")
            )
        text += here
        summary += here
    if outside:
        text += ". Outside the validated envelope: " + "; ".join(o for o, _ in outside)
    return RegionNote(
        e.name,
        text,
        not outside,
        tuple(o for o, _ in outside),
        len(p),
        n_region if labels else len(p),
        summary,
        tuple(n for _, n in outside),
    )


def panel_notes(shown: str, scale: str = "full", **controls: Any) -> list[RegionNote]:
    """:func:`region_note` for every engine a panel or an experiment shows (``shown``: a ``Paper.panel`` key of
    :data:`PANELS`, ``"workbench.widgets.serving_hw:serving_hardware_panel"``, or an experiment name of
    :data:`EXPERIMENTS`), each given the panel's ``controls`` it declares (a panel's other controls, a scheduler or a
    colour, do not place a point and are left out).

    Examples
    --------
    >>> [(n.engine, n.in_envelope) for n in panel_notes("workbench.widgets.servegen:servegen_panel", hour=12)]
    [('serving-linear', False), ('workload-generators', False)]
    """
    out = []
    for name in panel_engines(shown):
        known = {c.name for c in ENGINES[name].controls}
        out.append(region_note(name, scale, **{k: v for k, v in controls.items() if k in known}))
    return out
