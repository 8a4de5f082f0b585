"""Paper reproductions: claims, the registry, and the headless runner behind ``workbench reproduce``.

Each paper is one module in this package. It declares a :class:`Paper`, registers its findings with the
:func:`claim` decorator and its figures with :func:`figure`::

    from workbench.reproductions import Paper, Measured, Within, claim, figure

    PAPER = Paper("mypaper", title="...", citation="Authors, Venue Year", url="https://arxiv.org/abs/...",
                  notebook="notebooks/07_mypaper.ipynb")

    @claim(PAPER, "speedup", text="X is 2x faster than Y.", paper_value="2x",
           compare=Within(2.0, rel=0.1, partial_rel=0.3))
    def _speedup(scale):
        ratio = my_model.speedup(n=10_000 if scale == "full" else 1_000, seed=0)
        return Measured(ratio, f"{ratio:.2f}x")

    @figure(PAPER, "speedup_vs_size")
    def _fig(scale):
        return viz.my_figure(...)

Modules are discovered automatically (every non-underscore module in this package), so adding a paper needs no
edit anywhere else. :func:`run_claims` runs the claims, :func:`write_scoreboard` writes ``scoreboard.json`` and
``scoreboard.md``, and :func:`claims_table` gives the table a notebook prints.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import pkgutil
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validate import one_of
from ._core import (
    REGISTRY,
    SCALES,
    AtLeast,
    AtMost,
    Check,
    Claim,
    Comparison,
    FigureSpec,
    InRange,
    Measured,
    Paper,
    Registry,
    Scale,
    Trend,
    Verdict,
    Within,
)
from ._report import VERDICT_COLORS, ClaimsTable, claims_html, write_report

__all__ = [
    "AtLeast",
    "AtMost",
    "Check",
    "Claim",
    "ClaimResult",
    "ClaimsTable",
    "Comparison",
    "FigureSpec",
    "InRange",
    "Measured",
    "Paper",
    "REGISTRY",
    "Registry",
    "Scale",
    "Trend",
    "VERDICT_COLORS",
    "Verdict",
    "Within",
    "build_figures",
    "claim",
    "claims_html",
    "claims_table",
    "show_claims",
    "figure",
    "load_all",
    "run_claim",
    "run_claims",
    "scoreboard_frame",
    "write_report",
    "write_scoreboard",
]


def claim(
    paper: Paper,
    id: str,
    *,
    text: str,
    paper_value: str,
    compare: Comparison,
    expected: Verdict | str = Verdict.REPRODUCED,
    note: str = "",
) -> Callable[[Callable[[Scale], Measured]], Callable[[Scale], Measured]]:
    """Decorator registering ``fn(scale) -> Measured`` as the measure of a :class:`Claim`."""

    def register(fn: Callable[[Scale], Measured]) -> Callable[[Scale], Measured]:
        REGISTRY.add_claim(Claim(paper, id, text, paper_value, fn, compare, Verdict(expected), note))
        return fn

    return register


def figure(paper: Paper, name: str) -> Callable[[Callable[[Scale], Any]], Callable[[Scale], Any]]:
    """Decorator registering ``fn(scale) -> plotly Figure`` as a reproduction figure of ``paper``."""

    def register(fn: Callable[[Scale], Any]) -> Callable[[Scale], Any]:
        REGISTRY.add_figure(FigureSpec(paper, name, fn))
        return fn

    return register


_LOADED = False


def load_all() -> Registry:
    """Import every paper module in this package (once) and return the registry."""
    global _LOADED
    if not _LOADED:
        for info in pkgutil.iter_modules(__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"{__name__}.{info.name}")
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


def run_claims(
    paper: str | Sequence[str] | None = None,
    scale: Scale = "full",
    *,
    progress: bool = False,
) -> list[ClaimResult]:
    """Run the registered claims (of ``paper``, or all) at ``scale`` and return their results.

    A measure that raises is recorded as ``not reproduced`` with the error, so one broken claim never hides the rest.
    """
    one_of("scale", scale, SCALES)
    claims = load_all().select_claims(paper)
    iterator: Any = claims
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(claims, desc="claims", unit="claim")
    results = []
    for c in iterator:
        if progress:
            iterator.set_postfix_str(c.key, refresh=True)
        results.append(run_claim(c, scale))
    return results


def run_claim(c: Claim, scale: Scale = "full") -> ClaimResult:
    """Measure one claim and compare; a measure that raises gives ``not reproduced`` with the error recorded."""
    one_of("scale", scale, SCALES)
    t0 = time.perf_counter()
    try:
        measured = c.measure(scale)
        if not isinstance(measured, Measured):
            raise TypeError(f"measure of {c.key} returned {type(measured).__name__}, expected Measured")
        verdict = c.compare.verdict(measured.value)
        return ClaimResult(c, measured, verdict, time.perf_counter() - t0)
    except Exception as exc:  # recorded, reported, and makes the CLI exit non-zero
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return ClaimResult(c, None, Verdict.NOT_REPRODUCED, time.perf_counter() - t0, detail)


def scoreboard_frame(results: Sequence[ClaimResult]) -> pd.DataFrame:
    """The scoreboard as a DataFrame: paper, claim, paper says, measured, verdict."""
    return pd.DataFrame(
        [
            {
                "paper": r.claim.paper.id,
                "claim": r.claim.text,
                "paper says": r.claim.paper_value,
                "measured": r.measured.summary if r.measured else f"error: {r.error}",
                "verdict": r.verdict.value,
            }
            for r in results
        ],
        columns=["paper", "claim", "paper says", "measured", "verdict"],
    )


def claims_table(paper: str, scale: Scale = "full") -> pd.DataFrame:
    """Run one paper's claims and return the table a notebook shows (claim, paper says, measured, verdict)."""
    frame = scoreboard_frame(run_claims(paper, scale))
    return frame.drop(columns=["paper"])


def show_claims(paper: str, scale: Scale = "full") -> ClaimsTable:
    """Run one paper's claims and return them for display: an HTML table with verdict badges in a notebook,
    word-wrapped text in a terminal (see :class:`ClaimsTable`)."""
    return ClaimsTable(run_claims(paper, scale))


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_scoreboard(results: Sequence[ClaimResult], out_dir: str | os.PathLike) -> tuple[Path, Path]:
    """Write ``scoreboard.json`` and ``scoreboard.md`` into ``out_dir`` and return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "scoreboard.json"
    json_path.write_text(json.dumps([r.record() for r in results], indent=2) + "\n")
    lines = [
        "# Reproduction scoreboard",
        "",
        "| paper | claim | paper says | measured | verdict |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        rec = r.record()
        lines.append(
            "| " + " | ".join(_md_cell(rec[k]) for k in ("paper", "claim", "paper_value", "measured", "verdict")) + " |"
        )
    notes = [r for r in results if r.claim.note]
    if notes:
        lines += ["", "## Notes", ""]
        lines += [f"- **{r.claim.key}**: {r.claim.note}" for r in notes]
    counts = pd.Series([r.verdict.value for r in results]).value_counts()
    lines += ["", "Totals: " + ", ".join(f"{k}: {v}" for k, v in counts.items())]
    md_path = out / "scoreboard.md"
    md_path.write_text("\n".join(lines) + "\n")
    return json_path, md_path


def build_figures(
    paper: str | Sequence[str] | None = None, scale: Scale = "full", *, progress: bool = False
) -> dict[str, Any]:
    """Build the registered reproduction figures, keyed ``<paper>/<name>``."""
    one_of("scale", scale, SCALES)
    specs = load_all().select_figures(paper)
    iterator: Any = specs
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(specs, desc="figures", unit="fig")
    return {f"{s.paper.id}/{s.name}": s.build(scale) for s in iterator}
