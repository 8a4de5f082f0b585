"""Figure export: HTML always; PNG/SVG in one Chromium session when a browser exists; a clear skip otherwise."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from workbench.viz import export


def _figs():
    return {f"group/fig{i}": go.Figure(go.Scatter(y=[1, 3, 2]), layout_title_text=f"figure {i}") for i in range(2)}


def test_html_without_browser(tmp_path, monkeypatch):
    monkeypatch.setattr(export, "chromium_path", lambda: None)
    report = export.write_figures(_figs(), tmp_path, formats=["html", "png"])
    assert sorted(p.name for p in report.written) == ["fig0.html", "fig1.html"]
    assert "apt-get install -y chromium" in report.skipped_reason
    assert not list(tmp_path.rglob("*.png"))
    assert "plotly" in (tmp_path / "group" / "fig0.html").read_text()


@pytest.mark.skipif(export.chromium_path() is None, reason="no Chromium on this machine (apt-get install chromium)")
def test_png_and_svg_with_browser(tmp_path):
    report = export.write_figures(_figs(), tmp_path, formats=["html", "png", "svg"])
    assert not report.skipped_reason
    png = tmp_path / "group" / "fig0.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "group" / "fig1.svg").read_text().lstrip().startswith("<svg")
    assert len(report.written) == 6


def test_bad_format_and_non_figure(tmp_path):
    with pytest.raises(ValueError, match="formats must be one of"):
        export.write_figures(_figs(), tmp_path, formats=["gif"])
    with pytest.raises(TypeError, match="must be a plotly Figure"):
        export.write_figures({"x": "not a figure"}, tmp_path, formats=["html"])


def test_browser_path_env(monkeypatch, tmp_path):
    fake = tmp_path / "chrome"
    fake.write_text("")
    monkeypatch.setenv("BROWSER_PATH", str(fake))
    assert export.chromium_path() == str(fake)
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "missing"))
    assert export.chromium_path() is None
