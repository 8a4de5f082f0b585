"""The claims table as people read it, and the self-contained scoreboard report."""

from __future__ import annotations

import re

import plotly.graph_objects as go

from workbench.reproductions import ClaimsTable, Verdict, run_claims, write_report


def _results():
    return run_claims("arrivals", "quick")


def test_claims_table_html_has_badges_and_escapes_text():
    results = _results()
    page = ClaimsTable(results)._repr_html_()
    assert page.count('class="wb-badge"') == len(results)
    assert page.count("<tr") == len(results) + 1 + sum(bool(r.claim.note) for r in results)
    for r in results:
        assert r.verdict.value in page
    assert "<script" not in page  # nothing executable in a notebook output


def test_claims_table_text_never_breaks_a_word():
    results = _results()
    text = repr(ClaimsTable(results, width=40))
    words = set(re.findall(r"[A-Za-z]{4,}", " ".join(r.claim.text for r in results)))
    printed = set(re.findall(r"[A-Za-z]{4,}", text))
    assert words <= printed, words - printed
    assert all(len(line) <= 40 or " " not in line.strip() for line in text.splitlines())
    assert repr(ClaimsTable(results, width=40)) == text  # byte-stable for nbval


def test_report_is_self_contained(tmp_path):
    results = _results()
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    path = write_report(results, {"arrivals/demo": fig}, tmp_path / "scoreboard.html")
    page = path.read_text(encoding="utf-8")
    assert "<script src=" not in page and '<script type="text/javascript" src=' not in page  # plotly.js inline
    assert page.count("Plotly.newPlot") == 1
    assert all(v.value in page for v in Verdict)
    assert not list(tmp_path.glob(".*.tmp"))


def test_report_has_a_table_of_contents_linking_every_paper_and_claim(tmp_path):
    results = _results()
    page = write_report(results, {}, tmp_path / "scoreboard.html").read_text(encoding="utf-8")
    toc = page.split("<nav class='wb-toc'>", 1)[1].split("</nav>", 1)[0]
    targets = set(re.findall(r"href='#([^']+)'", toc))
    ids = set(re.findall(r"""id=["']([^"']+)["']""", page))
    paper_ids = {r.claim.paper.id for r in results}
    assert paper_ids <= targets
    assert len(targets - paper_ids) == len(results)  # one link per claim
    assert targets <= ids  # every link lands on an element of the page


def test_claims_table_cells_align_left_in_jupyterlab():
    """JupyterLab's table CSS right-aligned the claims tables (and its sanitizer drops the <style> block of an
    untrusted notebook's output): every cell carries its alignment inline."""
    page = ClaimsTable(_results())._repr_html_()
    cells = re.findall(r"<t[hd]\b([^>]*)>", page)
    assert cells and all("text-align:left" in attrs for attrs in cells)


def test_report_figures_save_at_the_export_scale(tmp_path):
    """The scoreboard's camera button saved a figure at its on-screen size; it saves at the export scale, named by
    the figure's title, as in the notebooks."""
    from workbench.viz import EXPORT_SCALE

    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout={"title": {"text": "Small-flow p99"}})
    page = write_report(_results(), {"arrivals/demo": fig}, tmp_path / "scoreboard.html").read_text(encoding="utf-8")
    assert f'"scale": {EXPORT_SCALE}' in page and '"filename": "small-flow-p99"' in page


def test_claims_table_prints_numbers_a_reader_reads_right():
    """1.00e+3, x5.65685, -0.00, 270.00 and NaN were printed in claims tables as the measure functions formatted
    them: the table prints every number through readable_numbers."""
    from dataclasses import replace

    from workbench.reproductions import Measured
    from workbench.reproductions._report import unreadable_numbers

    (first, *_) = _results()
    odd = replace(first, measured=Measured(1.0, "1.00e+3 GPUs at x5.65685, change -0.00%, 270.00 s, p99 nan"))
    for shown in (repr(ClaimsTable([odd])), ClaimsTable([odd])._repr_html_()):
        assert "1,000 GPUs at x5.657, change 0.00%, 270 s, p99 n/a" in shown
        assert not unreadable_numbers(shown)
