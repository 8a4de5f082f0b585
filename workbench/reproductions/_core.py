"""Claims, comparisons and the registry that paper modules add to.

A :class:`Claim` is one finding of one paper: the sentence, what the paper reports, a *measure* function that calls
the workbench's models and returns a :class:`Measured`, and a *comparison* that turns the measurement into a
:class:`Verdict`. Each claim also records the verdict the project expects (``expected``), which the test suite
asserts, so a regression in a model shows up as a changed verdict. A claim the workbench cannot reproduce keeps an
honest ``expected`` of ``partial`` or ``not reproduced`` and says why in ``note``: claims are never tuned to pass.

Measure functions take a :data:`Scale`: ``"full"`` is the paper-sized configuration run by ``workbench reproduce``;
``"quick"`` is a smaller configuration for the test suite that must reach the same verdict.
"""

from __future__ import annotations

import enum
import importlib
import math
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

Scale = Literal["full", "quick"]
SCALES: tuple[str, ...] = ("full", "quick")

__all__ = [
    "Scale",
    "Verdict",
    "Paper",
    "Measured",
    "Comparison",
    "Within",
    "InRange",
    "AtLeast",
    "AtMost",
    "Trend",
    "Check",
    "Claim",
    "FigureSpec",
    "REGISTRY",
    "Registry",
    "ClaimResult",
    "load_all",
]


class Verdict(enum.StrEnum):
    """Outcome of comparing a measurement with what the paper reports."""

    REPRODUCED = "reproduced"
    PARTIAL = "partial"
    NOT_REPRODUCED = "not reproduced"

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


@dataclass(frozen=True)
class Paper:
    """A paper (or other source) whose findings are reproduced.

    Parameters
    ----------
    id : str
        Short identifier used on the command line (``workbench reproduce --paper ID``), e.g. ``"burstgpt"``.
    title, citation, url : str
        Full title, a citation line (authors, venue, year) and where to read it.
    notebook : str
        The notebook that presents the reproduction (e.g. ``"notebooks/03_burstgpt.ipynb"``), or ``""``.
    panel : str
        The paper's interactive panel as ``"module:function"`` (e.g. ``"workbench.widgets.aqm:pred_panel"``), or
        ``""``. A paper with a panel gets a Voilà dashboard (:mod:`workbench.dashboards`), discovered from here.
    dashboard : str
        The dashboard's title (default: ``title``).
    experiments : tuple of str
        The registered experiments (``workbench sweep list``) the paper's claims and figures measure through.
    requires_data : tuple of str
        Data files (relative to the data search path) without which the claims cannot be measured at all (no
        stand-in exists); where one is missing, the tests skip the paper's claims naming it, and the scoreboard
        records the claims' error.
    cost_s : float
        Roughly how many seconds its claims and figures take at full scale with an empty cache on 2 cores (0: a few
        seconds at most). It only orders the first run of :func:`~workbench.reproductions.run_papers` (longest
        first), before the cache holds measured times; after that the measured times order the runs.

    A paper is one record: its module declares this, its claims and its figures, and everything else (the
    scoreboard, ``workbench list``, the dashboards, the tests) discovers them.
    """

    id: str
    title: str
    citation: str
    url: str = ""
    notebook: str = ""
    panel: str = ""
    dashboard: str = ""
    experiments: tuple[str, ...] = ()
    requires_data: tuple[str, ...] = ()
    cost_s: float = 0.0

    def __post_init__(self) -> None:
        if not self.id or self.id != self.id.strip() or "/" in self.id:
            raise ValueError(f"paper id must be a non-empty slug without '/', got {self.id!r}")
        if self.panel and (self.panel.count(":") != 1 or not all(self.panel.split(":"))):
            raise ValueError(f"paper {self.id!r}: panel must be 'module:function', got {self.panel!r}")
        if self.dashboard and not self.panel:
            raise ValueError(f"paper {self.id!r}: a dashboard title needs a panel")
        object.__setattr__(self, "experiments", tuple(self.experiments))
        object.__setattr__(self, "requires_data", tuple(self.requires_data))
        if not self.cost_s >= 0:
            raise ValueError(f"paper {self.id!r}: cost_s must be >= 0 seconds, got {self.cost_s!r}")

    @property
    def dashboard_title(self) -> str:
        """The dashboard's title: ``dashboard``, or the paper's ``title``."""
        return self.dashboard or self.title


@dataclass(frozen=True)
class Measured:
    """What the workbench measured for a claim.

    ``value`` is what the comparison reads: a float, or a sequence of floats for a trend. ``summary`` is the short
    human-readable text for the scoreboard (e.g. ``"4.47x ideal"``); ``details`` holds any supporting numbers, which
    are written to ``scoreboard.json`` as they are (they must be JSON-serializable: numbers, strings, lists, dicts).
    """

    value: Any
    summary: str
    details: Mapping[str, Any] = field(default_factory=dict)


class Comparison:
    """Turns a measured value into a verdict; ``describe()`` says how, for the scoreboard."""

    def verdict(self, value: Any) -> Verdict:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError


def _scalar(value: Any) -> float:
    value = float(value)
    if math.isnan(value):
        raise ValueError("measured value is NaN")
    return value


@dataclass(frozen=True)
class Within(Comparison):
    """``|value - target| <= tol`` reproduces; ``<= partial_tol`` is partial; tolerances absolute or relative."""

    target: float
    rel: float | None = None
    abs: float | None = None
    partial_rel: float | None = None
    partial_abs: float | None = None

    def __post_init__(self) -> None:
        if self.rel is None and self.abs is None:
            raise ValueError("Within needs rel or abs tolerance")

    def _tol(self, rel: float | None, abs_: float | None) -> float:
        tol = 0.0
        if rel is not None:
            tol = max(tol, rel * abs(self.target))
        if abs_ is not None:
            tol = max(tol, abs_)
        return tol

    def verdict(self, value: Any) -> Verdict:
        err = abs(_scalar(value) - self.target)
        if err <= self._tol(self.rel, self.abs):
            return Verdict.REPRODUCED
        if (self.partial_rel is not None or self.partial_abs is not None) and err <= self._tol(
            self.partial_rel, self.partial_abs
        ):
            return Verdict.PARTIAL
        return Verdict.NOT_REPRODUCED

    def describe(self) -> str:
        parts = []
        if self.rel is not None:
            parts.append(f"{self.rel:.0%}")
        if self.abs is not None:
            parts.append(f"{self.abs:g}")
        return f"within {' or '.join(parts)} of {self.target:g}"


@dataclass(frozen=True)
class InRange(Comparison):
    """``low <= value <= high`` reproduces; inside the wider partial range is partial."""

    low: float
    high: float
    partial_low: float | None = None
    partial_high: float | None = None

    def verdict(self, value: Any) -> Verdict:
        v = _scalar(value)
        if self.low <= v <= self.high:
            return Verdict.REPRODUCED
        plo = self.low if self.partial_low is None else self.partial_low
        phi = self.high if self.partial_high is None else self.partial_high
        if (self.partial_low is not None or self.partial_high is not None) and plo <= v <= phi:
            return Verdict.PARTIAL
        return Verdict.NOT_REPRODUCED

    def describe(self) -> str:
        return f"in [{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class AtLeast(Comparison):
    """``value >= threshold`` reproduces; ``value >= partial`` is partial."""

    threshold: float
    partial: float | None = None

    def verdict(self, value: Any) -> Verdict:
        v = _scalar(value)
        if v >= self.threshold:
            return Verdict.REPRODUCED
        if self.partial is not None and v >= self.partial:
            return Verdict.PARTIAL
        return Verdict.NOT_REPRODUCED

    def describe(self) -> str:
        return f">= {self.threshold:g}"


@dataclass(frozen=True)
class AtMost(Comparison):
    """``value <= threshold`` reproduces; ``value <= partial`` is partial."""

    threshold: float
    partial: float | None = None

    def verdict(self, value: Any) -> Verdict:
        v = _scalar(value)
        if v <= self.threshold:
            return Verdict.REPRODUCED
        if self.partial is not None and v <= self.partial:
            return Verdict.PARTIAL
        return Verdict.NOT_REPRODUCED

    def describe(self) -> str:
        return f"<= {self.threshold:g}"


@dataclass(frozen=True)
class Trend(Comparison):
    """A sequence that moves in one direction.

    ``direction`` is ``"increasing"``, ``"decreasing"`` or ``"flat"``. For increasing/decreasing, each step may go
    against the trend by at most ``slack`` (relative to the sequence's range) and the total change must be at least
    ``min_change`` (relative to the first element's magnitude). For flat, ``max(v)/min(v) - 1 <= tolerance``
    reproduces and ``<= partial`` is partial.
    """

    direction: Literal["increasing", "decreasing", "flat"]
    slack: float = 0.0
    min_change: float = 0.0
    tolerance: float = 0.1
    partial: float | None = None

    def verdict(self, value: Any) -> Verdict:
        v = np.asarray(value, dtype=float)
        if v.ndim != 1 or v.size < 2 or not np.isfinite(v).all():
            raise ValueError(f"Trend needs a finite 1-D sequence of >= 2 values, got {value!r}")
        if self.direction == "flat":
            lo, hi = float(v.min()), float(v.max())
            if lo <= 0:
                raise ValueError("flat Trend needs positive values")
            spread = hi / lo - 1
            if spread <= self.tolerance:
                return Verdict.REPRODUCED
            if self.partial is not None and spread <= self.partial:
                return Verdict.PARTIAL
            return Verdict.NOT_REPRODUCED
        sign = 1.0 if self.direction == "increasing" else -1.0
        steps = sign * np.diff(v)
        span = float(np.ptp(v)) or 1.0
        monotone = bool((steps >= -self.slack * span).all())
        total = sign * (v[-1] - v[0])
        enough = total > 0 and total >= self.min_change * max(abs(float(v[0])), 1e-300)
        if monotone and enough:
            return Verdict.REPRODUCED
        if enough:
            return Verdict.PARTIAL
        return Verdict.NOT_REPRODUCED

    def describe(self) -> str:
        if self.direction == "flat":
            return f"flat within {self.tolerance:.0%}"
        return self.direction


@dataclass(frozen=True)
class Check(Comparison):
    """A comparison given as a function ``value -> Verdict`` with a one-line description."""

    fn: Callable[[Any], Verdict | str]
    description: str

    def verdict(self, value: Any) -> Verdict:
        return Verdict(self.fn(value))

    def describe(self) -> str:
        return self.description


@dataclass(frozen=True)
class Claim:
    """One finding of one paper, how the workbench measures it, and how the two are compared.

    Parameters
    ----------
    paper : Paper
    id : str
        Short slug, unique within the paper.
    text : str
        The claim in one sentence.
    paper_value : str
        What the paper reports, as the paper says it (``"4.5x ideal"``, ``"66% lower"``, ``"increasing"``).
    measure : callable
        ``measure(scale) -> Measured``; ``scale`` is ``"full"`` or ``"quick"``.
    compare : Comparison
    expected : Verdict or str
        The verdict the project currently expects (asserted by the tests).
    note : str
        Why a claim is partial or not reproduced, or what differs from the paper's set-up.
    """

    paper: Paper
    id: str
    text: str
    paper_value: str
    measure: Callable[[Scale], Measured]
    compare: Comparison
    expected: Verdict = Verdict.REPRODUCED
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "expected", Verdict(self.expected))

    @property
    def key(self) -> str:
        return f"{self.paper.id}/{self.id}"


@dataclass(frozen=True)
class FigureSpec:
    """A reproduction figure: ``build(scale) -> plotly.graph_objects.Figure``, written as ``<paper>/<name>.*``."""

    paper: Paper
    name: str
    build: Callable[[Scale], Any]


class Registry:
    """Papers, claims and figures, in registration order."""

    def __init__(self) -> None:
        self.papers: dict[str, Paper] = {}
        self.claims: dict[str, Claim] = {}
        self.figures: dict[str, FigureSpec] = {}

    def add_paper(self, paper: Paper) -> Paper:
        known = self.papers.get(paper.id)
        if known is not None and known != paper:
            raise ValueError(f"paper id {paper.id!r} registered twice with different metadata")
        self.papers[paper.id] = paper
        return paper

    def add_claim(self, claim: Claim) -> Claim:
        self.add_paper(claim.paper)
        if claim.key in self.claims:
            raise ValueError(f"claim {claim.key!r} registered twice")
        self.claims[claim.key] = claim
        return claim

    def add_figure(self, spec: FigureSpec) -> FigureSpec:
        self.add_paper(spec.paper)
        key = f"{spec.paper.id}/{spec.name}"
        if key in self.figures:
            raise ValueError(f"figure {key!r} registered twice")
        self.figures[key] = spec
        return spec

    def select_claims(self, paper: str | Sequence[str] | None = None) -> list[Claim]:
        ids = _paper_ids(self, paper)
        return [c for c in self.claims.values() if ids is None or c.paper.id in ids]

    def select_figures(self, paper: str | Sequence[str] | None = None) -> list[FigureSpec]:
        ids = _paper_ids(self, paper)
        return [f for f in self.figures.values() if ids is None or f.paper.id in ids]


def _paper_ids(registry: Registry, paper: str | Sequence[str] | None) -> set[str] | None:
    if paper is None:
        return None
    ids = {paper} if isinstance(paper, str) else set(paper)
    unknown = ids - set(registry.papers)
    if unknown:
        raise ValueError(
            f"unknown paper id(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(registry.papers))}"
        )
    return ids


REGISTRY = Registry()


_LOADED = False


def load_all() -> Registry:
    """Import every paper module in this package (once) and return the registry."""
    global _LOADED
    if not _LOADED:
        package = importlib.import_module(__package__)
        for info in pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{__package__}.{info.name}")
        _LOADED = True
    return REGISTRY


@dataclass(frozen=True)
class ClaimResult:
    """The outcome of running one claim."""

    claim: Claim
    measured: Measured | None
    verdict: Verdict
    seconds: float
    error: str = ""

    @property
    def as_expected(self) -> bool:
        return not self.error and self.verdict == self.claim.expected

    def record(self) -> dict[str, Any]:
        """The scoreboard.json object for this claim."""
        c = self.claim
        return {
            "paper": c.paper.id,
            "claim": c.text,
            "paper_value": c.paper_value,
            "measured": self.measured.summary if self.measured else f"error: {self.error}",
            "verdict": self.verdict.value,
            "claim_id": c.id,
            "expected": c.expected.value,
            "comparison": c.compare.describe(),
            "value": _jsonable(self.measured.value) if self.measured else None,
            "details": _jsonable(dict(self.measured.details)) if self.measured else {},
            "note": c.note,
            "citation": c.paper.citation,
            "seconds": round(self.seconds, 3),
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else str(v)
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    return str(value)
