"""Claims as people read them: an HTML table for notebooks and a self-contained ``scoreboard.html`` report.

:class:`ClaimsTable` is what a notebook shows for a paper's claims. In a browser it renders as a table with wrapped
text, aligned columns (left, inline on every cell: JupyterLab right-aligns table cells) and the verdict as a coloured
badge, with the note in a detail row beneath its claim, and every number as a reader reads it (:func:`readable_numbers`:
no ``7.5e-16``, ``5.65685``, ``-0.00``, ``270.00`` or ``nan``); its
plain-text form (what nbval compares where no HTML is shown, and what a terminal prints) is one block per claim,
wrapped at word boundaries, so it never breaks a word in two. Both forms depend only on the claims' results, so
they are byte-stable for the same measurements.

:func:`write_report` writes ``scoreboard.html``: every paper's claims table followed by its figures, with plotly.js
embedded once, so the file works offline and can be attached to a mail or a pull request; each figure's camera
button saves a PNG at :data:`workbench.viz.EXPORT_SCALE` times its on-screen size, as in the notebooks. Given the
fidelity table (:func:`workbench.fidelity.fidelity_table`), a "Fidelity" section after the claims says how far each
engine behind the panels lies from its independent references (:func:`fidelity_html`).
"""

from __future__ import annotations

import html
import os
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cache import atomic_path
from ._core import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from ._core import ClaimResult

__all__ = [
    "ClaimsTable",
    "VERDICT_COLORS",
    "claims_html",
    "fidelity_html",
    "write_report",
    "readable_numbers",
    "unreadable_numbers",
]

#: Badge colour per verdict (background, text).
VERDICT_COLORS = {
    Verdict.REPRODUCED: ("#1a7f37", "#ffffff"),
    Verdict.PARTIAL: ("#9a6700", "#ffffff"),
    Verdict.NOT_REPRODUCED: ("#cf222e", "#ffffff"),
}

_CSS = """
<style>
table.wb-claims {border-collapse: collapse; width: 100%; max-width: 1100px; table-layout: fixed;
  font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 13px; line-height: 1.35;}
table.wb-claims th, table.wb-claims td {text-align: left; vertical-align: top; padding: 6px 8px;
  border-bottom: 1px solid #d0d7de; white-space: normal; overflow-wrap: normal; word-break: normal;}
table.wb-claims th {background: #f6f8fa; font-weight: 600;}
table.wb-claims col.claim {width: 42%;} table.wb-claims col.says {width: 20%;}
table.wb-claims col.measured {width: 26%;} table.wb-claims col.verdict {width: 12%;}
table.wb-claims tr.note td {color: #57606a; font-size: 12px; border-bottom: 1px solid #d0d7de; padding-top: 0;}
table.wb-claims tr.has-note td {border-bottom: none;}
span.wb-badge {display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
  white-space: nowrap;}
</style>
"""


#: Every cell's alignment, inline: JupyterLab's table CSS right-aligns cells and its sanitizer drops the ``<style>``
#: block of an untrusted notebook's output (one opened, not run), but keeps an element's own ``style``.
_CELL = ' style="text-align:left;vertical-align:top"'


def _badge(verdict: Verdict, error: str = "") -> str:
    bg, fg = VERDICT_COLORS[verdict]
    label = "error" if error else verdict.value
    return f'<span class="wb-badge" style="background:{bg};color:{fg}">{html.escape(label)}</span>'


#: Numbers a reader misreads in a claims table: exponent notation (``7.5e-16``, ``1.00e+3``), more digits than a
#: measurement carries (``5.65685``, ``1.000000``), a negative zero (``-0.00``), zeros after the point of a number
#: of 100 or more (``270.00``), and a number that failed to be one (``nan``, ``inf``).
_BEFORE, _AFTER = r"(?<![a-wyzA-Z\d_.])", r"(?![a-wyzA-Z\d_.])"  # a number's edge; "x5.2" and "5.2x" are ratios
_EXPONENT = re.compile(_BEFORE + r"(\d+(?:\.\d+)?)[eE]([+-]?\d+)" + _AFTER)
_LONG = re.compile(_BEFORE + r"\d+\.\d{5,}" + _AFTER)
_NEGATIVE_ZERO = re.compile(r"(?<![\w.])-(0(?:\.0+)?)" + _AFTER)
_ZEROS_AFTER_HUNDREDS = re.compile(_BEFORE + r"(\d{3,}|\d{1,3}(?:,\d{3})+)\.0+" + _AFTER)
_NOT_A_NUMBER = re.compile(r"(?<![\w.])(nan|NaN|inf)(?![\w.])")
_UNREADABLE = (_EXPONENT, _LONG, _NEGATIVE_ZERO, _ZEROS_AFTER_HUNDREDS, _NOT_A_NUMBER)


def readable_numbers(text: str) -> str:
    """``text`` with its numbers as a reader reads them (:func:`workbench._units.number_text`): no exponent notation,
    at most four significant digits where more were printed, no negative zero, no zeros after the point of a number
    of 100 or more, ``n/a`` for NaN and ``∞`` for infinity. Words, identifiers and version numbers are left alone.

    Examples
    --------
    >>> readable_numbers("max deviation 7.5e-16; 1.000000x ideal; x5.65685; -0.00 ms; 270.00 s; 1.00e+3 GPUs; nan")
    'max deviation 7.5×10⁻¹⁶; 1x ideal; x5.657; 0.00 ms; 270 s; 1,000 GPUs; n/a'
    >>> readable_numbers("H100 at TP8, vLLM v0.5.3, 4-5x, IDC(window -> inf)")
    'H100 at TP8, vLLM v0.5.3, 4-5x, IDC(window -> ∞)'
    """
    from .._units import number_text

    def exponent(m: re.Match) -> str:
        digits = len(m.group(1).replace(".", "").lstrip("0")) or 1
        return number_text(float(m.group(0)), max(digits, 1))

    text = _EXPONENT.sub(exponent, text)
    text = _LONG.sub(lambda m: number_text(float(m.group(0)), 4), text)
    text = _NEGATIVE_ZERO.sub(lambda m: m.group(1), text)
    text = _ZEROS_AFTER_HUNDREDS.sub(lambda m: m.group(1), text)
    return _NOT_A_NUMBER.sub(lambda m: "∞" if m.group(1) == "inf" else "n/a", text)


def unreadable_numbers(text: str) -> list[str]:
    """The numbers of ``text`` that :func:`readable_numbers` would rewrite (empty when there are none)."""
    return [m.group(0) for pattern in _UNREADABLE for m in pattern.finditer(text)]


@dataclass(frozen=True)
class _Row:
    claim: str
    paper_says: str
    measured: str
    verdict: Verdict
    note: str
    error: str

    @classmethod
    def of(cls, r: ClaimResult) -> _Row:
        """A claim's row as shown: its texts' numbers as a reader reads them (:func:`readable_numbers`)."""
        measured = r.measured.summary if r.measured else f"error: {r.error}"
        text, says, measured, note = map(readable_numbers, (r.claim.text, r.claim.paper_value, measured, r.claim.note))
        return cls(text, says, measured, r.verdict, note, r.error)


def _anchor(r: ClaimResult) -> str:
    """The HTML id of a claim's row in the report (``claim-<paper>-<claim>``)."""
    return html.escape(f"claim-{r.claim.paper.id}-{r.claim.id}")


def claims_html(results: Sequence[ClaimResult], *, with_css: bool = True, anchors: bool = False) -> str:
    """The claims of ``results`` as an HTML table (claim, paper says, measured, verdict badge, note row); with
    ``anchors`` each claim's row carries the id the report's table of contents links to."""
    rows = [_Row.of(r) for r in results]
    out = [
        _CSS if with_css else "",
        '<table class="wb-claims">',
        '<colgroup><col class="claim"><col class="says"><col class="measured"><col class="verdict"></colgroup>',
        "<thead><tr>" + "".join(f"<th{_CELL}>{h}</th>" for h in ("claim", "paper says", "measured", "verdict")),
        "</tr></thead><tbody>",
    ]
    for r, row in zip(results, rows):
        cls = ' class="has-note"' if row.note else ""
        ident = f' id="{_anchor(r)}"' if anchors else ""
        out.append(
            f"<tr{ident}{cls}><td{_CELL}>{html.escape(row.claim)}</td><td{_CELL}>{html.escape(row.paper_says)}</td>"
            f"<td{_CELL}>{html.escape(row.measured)}</td><td{_CELL}>{_badge(row.verdict, row.error)}</td></tr>"
        )
        if row.note:
            out.append(f'<tr class="note"><td colspan="4"{_CELL}>Note: {html.escape(row.note)}</td></tr>')
    out.append("</tbody></table>")
    return "\n".join(s for s in out if s)


class ClaimsTable:
    """A paper's claims for display: HTML in a notebook, word-wrapped blocks as plain text.

    Parameters
    ----------
    results : sequence of ClaimResult
        From :func:`workbench.reproductions.run_claims`.
    width : int
        Line width of the plain-text form.

    Examples
    --------
    >>> from workbench.reproductions import run_claims
    >>> table = ClaimsTable(run_claims("arrivals", "quick")[:1])
    >>> print(repr(table).splitlines()[0][:10])
    [reproduce
    """

    def __init__(self, results: Sequence[ClaimResult], *, width: int = 100) -> None:
        self.results = list(results)
        self.width = int(width)

    def _repr_html_(self) -> str:
        return claims_html(self.results)

    def __repr__(self) -> str:
        blocks = []
        for row in map(_Row.of, self.results):
            label = "error" if row.error else row.verdict.value
            lines = textwrap.wrap(f"[{label}] {row.claim}", self.width, break_long_words=False, break_on_hyphens=False)
            for head, text in (("paper says", row.paper_says), ("measured", row.measured), ("note", row.note)):
                if text:
                    lines += textwrap.wrap(
                        f"{head}: {text}",
                        self.width,
                        initial_indent="    ",
                        subsequent_indent="      ",
                        break_long_words=False,
                        break_on_hyphens=False,
                    )
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    @property
    def verdicts(self) -> list[str]:
        """The verdict of every claim, in order."""
        return [r.verdict.value for r in self.results]


def _signed_pct(v: Any) -> str:
    return "" if v is None or v != v else f"{100 * float(v):+.1f}%"


def fidelity_html(table: Any) -> str:
    """The fidelity table (:func:`workbench.fidelity.fidelity_table`) as an HTML table: per engine, metric and source
    the reference kind, points, median and worst signed error, median |error| and the envelope covered; an engine
    without an independent reference shows its reason in place of numbers."""
    head = (
        "engine",
        "metric",
        "source",
        "kind",
        "points",
        "median error",
        "median |error|",
        "worst error",
        "envelope covered",
    )
    out = ["<table class='wb-fidelity'><thead><tr>"]
    out += [f"<th>{html.escape(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for r in table.itertuples(index=False):
        if r.points == 0:
            out.append(
                f"<tr><td>{html.escape(r.engine)}</td><td colspan='8'><em>not validated</em>: "
                f"{html.escape(r.envelope)}</td></tr>"
            )
            continue
        cells = (
            r.engine,
            r.metric,
            r.source,
            r.reference_kind,
            str(r.points),
            _signed_pct(r.median_error),
            _signed_pct(r.median_abs_error).lstrip("+"),
            _signed_pct(r.worst_error),
            r.envelope,
        )
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def write_report(
    results: Sequence[ClaimResult],
    figures: Mapping[str, Any],
    path: str | os.PathLike,
    *,
    title: str = "Reproduction scoreboard",
    fidelity: Any = None,
) -> Path:
    """Write a self-contained HTML report: a table of contents (a link per paper and per claim, with its verdict),
    then per paper its claims table and its figures (``<paper>/<name>`` keys), then, when ``fidelity`` (a
    :func:`workbench.fidelity.fidelity_table`) is given, a "Fidelity" section: every engine against its independent
    references.

    plotly.js is embedded once in the page, so the report opens offline. The file is written atomically.
    """
    import plotly.graph_objects as go
    from plotly.offline import get_plotlyjs

    from ..viz import export_config

    by_paper: dict[str, list[ClaimResult]] = {}
    for r in results:
        by_paper.setdefault(r.claim.paper.id, []).append(r)
    for key in figures:
        by_paper.setdefault(key.split("/", 1)[0], [])
    counts = {v: sum(r.verdict == v for r in results) for v in Verdict}
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        f"<script type='text/javascript'>{get_plotlyjs()}</script>",
        _CSS,
        "<style>body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1140px;padding:0 12px;}"
        "h2{margin-top:40px;border-bottom:1px solid #d0d7de;} .wb-fig{margin:16px 0;}"
        "table.wb-fidelity{border-collapse:collapse;font-size:12px;line-height:1.35;}"
        "table.wb-fidelity th,table.wb-fidelity td{text-align:left;vertical-align:top;padding:4px 6px;"
        "border-bottom:1px solid #d0d7de;} table.wb-fidelity th{background:#f6f8fa;}"
        "nav.wb-toc ol{margin:4px 0;} nav.wb-toc>ol>li{margin:6px 0;} nav.wb-toc li li{font-size:90%;}"
        "</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        "<p>" + " ".join(f"{_badge(v)} {counts[v]}" for v in Verdict) + "</p>",
        "<nav class='wb-toc'><h2 style='margin-top:16px'>Contents</h2><ol>",
    ]
    for paper_id, rows in by_paper.items():
        name = rows[0].claim.paper.title if rows else paper_id
        parts.append(f"<li><a href='#{html.escape(paper_id)}'>{html.escape(name)}</a>")
        if rows:
            parts.append("<ol>")
            for r in rows:
                label = "error" if r.error else r.verdict.value
                parts.append(f"<li><a href='#{_anchor(r)}'>{html.escape(r.claim.text)}</a> ({html.escape(label)})</li>")
            parts.append("</ol>")
        parts.append("</li>")
    if fidelity is not None:
        parts.append("<li><a href='#fidelity'>Fidelity: every engine against its independent references</a></li>")
    parts.append("</ol></nav>")
    for paper_id, rows in by_paper.items():
        paper = rows[0].claim.paper if rows else None
        heading = f"{paper.title} ({paper.citation})" if paper else paper_id
        parts.append(f"<h2 id='{html.escape(paper_id)}'>{html.escape(heading)}</h2>")
        if rows:
            parts.append(claims_html(rows, with_css=False, anchors=True))
        for key, fig in figures.items():
            if key.split("/", 1)[0] != paper_id:
                continue
            if not isinstance(fig, go.Figure):
                raise TypeError(f"figure {key!r} must be a plotly Figure, got {type(fig).__name__}")
            div = fig.to_html(
                full_html=False, include_plotlyjs=False, div_id=key.replace("/", "-"), config=export_config(fig)
            )
            parts.append(f"<div class='wb-fig'>{div}</div>")
    if fidelity is not None:
        parts.append("<h2 id='fidelity'>Fidelity: every engine against its independent references</h2>")
        parts.append(
            "<p>Signed error = (model - reference) / reference, per engine, metric and source; the envelope "
            "is where in parameter space the reference points lie (<code>workbench validate</code>).</p>"
        )
        parts.append(fidelity_html(fidelity))
    parts.append("</body></html>")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as tmp:
        tmp.write_text("\n".join(parts), encoding="utf-8")
    return out
