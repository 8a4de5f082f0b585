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

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .._validate import one_of
from ._core import (
    REGISTRY,
    SCALES,
    AtLeast,
    AtMost,
    Check,
    Claim,
    ClaimResult,
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
    load_all,
)
from ._report import VERDICT_COLORS, ClaimsTable, claims_html, write_report
from ._runner import PaperRun, measure_claim, paper_key, run_paper, run_papers

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
    "paper_results",
    "PaperRun",
    "run_paper",
    "run_papers",
    "paper_key",
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


def run_claims(
    paper: str | Sequence[str] | None = None,
    scale: Scale = "full",
    *,
    claims: Sequence[str] | None = None,
    progress: bool = False,
) -> list[ClaimResult]:
    """Run the registered claims (of ``paper``, or all) at ``scale`` and return their results; ``claims`` picks
    claims by id (``"paper/claim"``, as the scoreboard names them) and returns them in the order given.

    Each paper runs as one unit through :func:`run_paper` (cached by the source fingerprint, so asking twice, or
    from the test suite and a notebook, computes once). A measure that raises is recorded as ``not reproduced`` with
    the error, so one broken claim never hides the rest.

    Examples
    --------
    >>> [r.claim.key for r in run_claims(claims=["arrivals/idc-renewal"], scale="quick")]
    ['arrivals/idc-renewal']
    """
    one_of("scale", scale, SCALES)
    registry = load_all()
    if claims is not None:
        if paper is not None:
            raise ValueError("give paper or claims, not both: claims already name their papers ('paper/claim')")
        if isinstance(claims, str):
            raise TypeError(f"claims must be a list of claim ids, got the string {claims!r}: write [{claims!r}]")
        unknown = [k for k in claims if k not in registry.claims]
        if unknown:
            import difflib

            hints = {k: difflib.get_close_matches(k, list(registry.claims), n=1) for k in unknown}
            said = "; ".join(f"{k!r}" + (f" (did you mean {h[0]!r}?)" if h else "") for k, h in hints.items())
            raise ValueError(f"unknown claim id(s): {said}; ids are 'paper/claim' as on the scoreboard")
        papers = list(dict.fromkeys(k.split("/", 1)[0] for k in claims))
        by_key = {r.claim.key: r for r in run_claims(papers, scale, progress=progress)}
        return [by_key[k] for k in claims]
    ids = list(dict.fromkeys(c.paper.id for c in registry.select_claims(paper)))
    if progress and len(ids) == 1:  # one paper: the bar counts its claims
        return paper_results(run_paper(ids[0], scale, progress=True))
    iterator: Any = ids
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(ids, desc="papers", unit="paper")
    results = []
    for pid in iterator:
        if progress:
            iterator.set_postfix_str(pid, refresh=True)
        results += paper_results(run_paper(pid, scale))
    return results


def paper_results(run: PaperRun) -> list[ClaimResult]:
    """The :class:`ClaimResult` of each claim of a :class:`PaperRun`."""
    registry = load_all()
    return [
        ClaimResult(registry.claims[r.key], r.measured, r.verdict, r.seconds, r.error)
        for r in run.claims
        if r.key in registry.claims
    ]


def run_claim(c: Claim, scale: Scale = "full") -> ClaimResult:
    """Measure one claim and compare (uncached); a measure that raises gives ``not reproduced`` with the error."""
    one_of("scale", scale, SCALES)
    r = measure_claim(c, scale)
    return ClaimResult(c, r.measured, r.verdict, r.seconds, r.error)


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


def _select(paper: str, scale: Scale, ids: Sequence[str] | None, progress: bool = False) -> list[ClaimResult]:
    results = run_claims(paper, scale, progress=progress)
    if ids is None:
        return results
    if isinstance(ids, str):
        ids = [ids]
    by_id = {r.claim.id: r for r in results}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise ValueError(
            f"paper {paper!r} has no claim(s) {', '.join(map(repr, unknown))}; its claims: {', '.join(by_id)}"
        )
    return [by_id[i] for i in ids]


def claims_table(paper: str, scale: Scale = "quick", *, ids: Sequence[str] | None = None) -> pd.DataFrame:
    """One paper's claims as a table (claim, paper says, measured, verdict); ``ids`` selects claims by id."""
    return scoreboard_frame(_select(paper, scale, ids)).drop(columns=["paper"])


def show_claims(
    paper: str, scale: Scale = "quick", *, ids: Sequence[str] | None = None, progress: bool = False
) -> ClaimsTable:
    """One paper's claims for display: an HTML table with verdict badges in a notebook, word-wrapped text in a
    terminal (see :class:`ClaimsTable`). ``ids`` selects claims by id (never by position); ``progress`` shows a bar
    over the claims while they are measured (nothing when they are cached).

    Notebooks show the ``"quick"`` scale, which reaches the same verdicts as the paper-sized ``"full"`` scale that
    ``workbench reproduce`` writes to the scoreboard (and is computed once per tree: the test suite and the
    notebooks share the cached result)."""
    return ClaimsTable(_select(paper, scale, ids, progress))


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_scoreboard(results: Sequence[ClaimResult], out_dir: str | os.PathLike) -> tuple[Path, Path]:
    """Write ``scoreboard.json`` and ``scoreboard.md`` into ``out_dir`` (atomically: a failed write leaves the old
    files as they were) and return their paths."""
    from ..cache import atomic_path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "scoreboard.json"
    with atomic_path(json_path) as tmp:
        tmp.write_text(json.dumps([r.record() for r in results], indent=2) + "\n")
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
    with atomic_path(md_path) as tmp:
        tmp.write_text("\n".join(lines) + "\n")
    return json_path, md_path


def build_figures(
    paper: str | Sequence[str] | None = None, scale: Scale = "full", *, progress: bool = False
) -> dict[str, Any]:
    """The registered reproduction figures, keyed ``<paper>/<name>``: built with each paper's claims (one
    computation per study, cached by :func:`run_paper`); a figure that failed to build raises here."""
    import plotly.io as pio

    one_of("scale", scale, SCALES)
    ids = list(dict.fromkeys(f.paper.id for f in load_all().select_figures(paper)))
    out: dict[str, Any] = {}
    for run in run_papers(ids, scale, figures=True, client=False, progress=progress):
        if run.figure_errors:
            name, error = next(iter(run.figure_errors.items()))
            raise RuntimeError(f"figure {run.paper}/{name} failed: {error}")
        out.update({f"{run.paper}/{name}": pio.from_json(js, skip_invalid=True) for name, js in run.figures.items()})
    return out
