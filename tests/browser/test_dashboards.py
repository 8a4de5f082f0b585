"""Every paper's dashboard as a colleague sees it: the landing page lists the papers with verdict counts, each app
loads its panel (no code, no error), one control redraws its figure, and nothing runs past the window at 1366x768."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from workbench.dashboards import DASHBOARDS

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1366, "height": 768}
_FIGURE_STATE = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(p =>
  Array.from(p.querySelectorAll('.cartesianlayer, .heatmaplayer, .barlayer')).map(l => l.innerHTML).join('')).join('|')"""
_OVERFLOW = """() => Array.from(document.querySelectorAll('.jupyter-widgets *, .js-plotly-plot'))
  .filter(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.right > window.innerWidth + 2; })
  .slice(0, 5).map(e => `${e.tagName}.${e.className.baseVal ?? e.className} right=${Math.round(e.getBoundingClientRect().right)}`)"""


def test_landing_page_lists_every_dashboard(browser, voila, screenshots_dir: Path):
    page = browser.new_page(viewport=VIEWPORT)
    try:
        page.goto(f"{voila}/voila/render/index.ipynb", wait_until="commit")
        page.wait_for_selector("table a", timeout=120_000)
        links = page.locator("table a")
        assert links.count() == len(DASHBOARDS)
        assert "reproduced" in page.inner_text("table")
        page.screenshot(path=str(screenshots_dir / "dashboard-index.png"))
    finally:
        page.close()


def _failed(page, screenshots_dir: Path, name: str) -> None:
    page.screenshot(path=str(screenshots_dir / f"FAILED-{name}.png"))


#: Dashboards whose panel is being finished by its owner; each entry names the pending change.
PENDING: dict[str, str] = {}  # paper id -> reason, for a dashboard with a known open bug


@pytest.mark.parametrize(
    "dash",
    [
        pytest.param(d, marks=pytest.mark.xfail(reason=PENDING[d.paper], strict=False)) if d.paper in PENDING else d
        for d in DASHBOARDS
    ],
    ids=[d.paper for d in DASHBOARDS],
)
def test_dashboard_loads_and_redraws(browser, voila, screenshots_dir: Path, dash):
    page = browser.new_page(viewport=VIEWPORT)
    try:
        page.goto(f"{voila}/voila/render/{dash.filename}", timeout=240_000, wait_until="commit")
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=240_000)
        page.wait_for_timeout(1500)
        body = page.inner_text("body")
        assert "Traceback" not in body and "Error displaying widget" not in body
        assert "import" not in body and page.locator(".cm-editor:visible").count() == 0, "a dashboard shows no code"
        assert page.evaluate(_OVERFLOW) == [], f"{dash.paper}: elements run past the window"
        before = page.evaluate(_FIGURE_STATE)
        handle = page.locator(".noUi-handle, .ui-slider-handle").first
        if handle.count():
            handle.focus()
            handle.press("ArrowRight")
            handle.press("ArrowRight")
        else:
            select = page.locator(".widget-dropdown select").first
            options = [o.get_attribute("value") for o in select.locator("option").all()]
            select.select_option(next(v for v in options if v != select.input_value()))
        deadline = time.monotonic() + 90
        while page.evaluate(_FIGURE_STATE) == before and time.monotonic() < deadline:
            page.wait_for_timeout(500)
        assert page.evaluate(_FIGURE_STATE) != before, f"{dash.paper}: moving a control did not redraw the figure"
        page.wait_for_timeout(1000)
        page.screenshot(path=str(screenshots_dir / f"dashboard-{dash.paper}.png"))
    except Exception:
        _failed(page, screenshots_dir, f"dashboard-{dash.paper}")
        raise
    finally:
        page.close()
