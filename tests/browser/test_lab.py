"""Every notebook as a person uses it: opened in JupyterLab at 1366x768 with the file browser open (showing its saved
outputs: claims table and figures), its panels run, no error output, no widget that fails to display, no request
leaving the machine, one control per panel moved and its figure redrawn, no panel element running past its output
area, and each panel's fidelity note (its validated error, and any out-of-envelope warning) shown unclipped. Each figure page of a panel (each tab, or its one row of figures) fits the notebook's view at 1366x768 below
its controls, and what its figures draw (plotly's data and layout, read from the page) passes the figure invariants
(:func:`workbench.testing.figure_problems`), before and after the move. Every control of every panel is moved to both
ends of its range in Python by ``tests/widgets/test_every_control.py`` and
``tests/widgets/test_every_explore_control.py`` (the explore panels), and the papers' panels' first slider and first
dropdown through the page by ``tests/browser/test_dashboards.py`` (in Voilà), so the moves are not repeated here. A
screenshot of each figure page is kept.

What runs is the setup cell (imports, renderer), every panel cell and the cells those need, not Run All: the claims
cells run the reproductions at paper scale (minutes per notebook, over an hour for all of them), and nbval already
executes every cell of every notebook. Panel cells are the ones that end with a ``<name>_panel(...)`` call or whose
saved output is a panel (the text form of :class:`workbench.widgets.Panel`); the cells a panel cell needs are found from the names it reads and the cells that
bind them. Each wait follows the kernel (a cell is done when Lab's run command resolves, i.e. on its execute reply)
with a budget derived from the cell's recorded execution time in the committed notebook, not a fixed timeout.

One Lab page serves every notebook (the Lab app boots once); each notebook's kernel is shut down when its test ends.
"""

from __future__ import annotations

import ast
import builtins
import json
import shutil
import time
from datetime import datetime
from pathlib import Path

import pytest

from workbench.testing import notebook_missing_data, notebook_needs_data
from workbench.widgets import FIGURE_CLASS, PANEL_CLASS

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
#: A panel cell's saved text form (``repr`` of :class:`workbench.widgets.Panel`).
PANEL_TEXT = "Interactive panel"
#: Budget per cell: this many times its recorded execution time, plus a fixed allowance (kernel busy, loaded machine).
SLOWDOWN, ALLOWANCE_S = 6.0, 60.0
#: Budget for a control to redraw its panel's figures.
REDRAW_S = 120.0


# -- which cells to run ------------------------------------------------------------------------------------------


def _tree(source: str) -> ast.Module:
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]  # IPython magics
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def _binds(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _reads(tree: ast.Module) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - set(
        dir(builtins)
    )


def _duration_s(cell: dict) -> float | None:
    ex = cell.get("metadata", {}).get("execution", {})
    try:
        start = datetime.fromisoformat(ex["iopub.execute_input"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(ex["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return None
    return (end - start).total_seconds()


def _is_panel(cell: dict, tree: ast.Module) -> bool:
    """A cell that shows a panel: its last statement calls ``<something>_panel(...)``, or its saved output is one."""
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        func = last.value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name.endswith("_panel"):
            return True
    for out in cell.get("outputs", []):  # saved as its text (workbench.notebook_files), or as a widget view
        text = out.get("data", {}).get("text/plain", "")
        text = "".join(text) if isinstance(text, list) else text
        if text.startswith(PANEL_TEXT):
            return True
    return False


def cells_to_run(notebook: Path) -> tuple[list[int], list[float]]:
    """Indices (among all cells) of the setup cell, the panel cells and the cells they need, in notebook order, and a
    time budget for each (from its recorded execution time)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"]
    trees = {i: _tree("".join(cells[i]["source"])) for i in code}
    wanted = {code[0]} | {i for i in code if _is_panel(cells[i], trees[i])}
    todo = sorted(wanted)
    while todo:
        i = todo.pop()
        for name in _reads(trees[i]):
            binders = [j for j in code if j < i and name in _binds(trees[j])]
            if binders and binders[-1] not in wanted:
                wanted.add(binders[-1])
                todo.append(binders[-1])
    run = sorted(wanted)
    return run, [SLOWDOWN * (_duration_s(cells[i]) or 20.0) + ALLOWANCE_S for i in run]


def test_cells_to_run_follow_the_names_a_panel_reads(tmp_path: Path):
    """The dependency walk on a small notebook: the panel cell's inputs are run, the unrelated heavy cell is not."""

    def cell(source: str, panel: bool = False) -> dict:
        outputs = []
        if panel:
            data = {"text/plain": [PANEL_TEXT + ": run the notebook"]}
            outputs.append({"output_type": "execute_result", "data": data})
        return {"cell_type": "code", "source": source, "metadata": {}, "outputs": outputs}

    cells = [
        cell("import numpy as np\nfrom x import p_panel"),
        {"cell_type": "markdown", "source": "text", "metadata": {}},
        cell("claims = slow()"),
        cell("GRID = {'a': np.arange(3)}\nsweep = run(GRID)"),
        cell("%time other = 1"),
        cell("p_panel(grid=GRID)", panel=True),
        cell("q = 2"),
        cell("widgets.q_panel(q)"),
    ]
    nb = tmp_path / "n.ipynb"
    nb.write_text(json.dumps({"cells": cells}))
    assert cells_to_run(nb)[0] == [0, 3, 5, 6, 7]


# -- driving Lab -------------------------------------------------------------------------------------------------

_NOTEBOOK = "window.jupyterapp.shell.currentWidget"
_OPEN = """async (path) => {
  const app = window.jupyterapp;
  for (const w of Array.from(app.shell.widgets('main'))) { w.dispose(); }
  const nb = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await nb.context.ready;
  await nb.sessionContext.ready;
  app.shell.activateById(nb.id);
}"""
_IDLE = f"""() => {{
  const nb = {_NOTEBOOK};
  if (!nb || !nb.content || !nb.sessionContext || !nb.sessionContext.session) return false;
  const kernel = nb.sessionContext.session.kernel;
  return !!kernel && kernel.status === 'idle';
}}"""
#: Run one cell; its promise resolves on the cell's execute reply (Lab's run command awaits it).
_RUN = f"""(i) => {{
  const nb = {_NOTEBOOK};
  window.__wbRan = undefined;
  nb.content.activeCellIndex = i;
  nb.content.deselectAll();
  window.jupyterapp.commands.execute('notebook:run-cell').then(ok => {{ window.__wbRan = ok; }},
                                                                  err => {{ window.__wbRan = String(err); }});
}}"""
#: Error outputs (tracebacks, stderr that is not a progress bar) of the cell at index i.
_ERRORS = f"""(i) => {{
  const outs = {_NOTEBOOK}.content.widgets[i].model.outputs.toJSON();
  return outs.filter(o => o.output_type === 'error'
      || (o.output_type === 'stream' && o.name === 'stderr' && !/it\\/s|\\d+%\\|/.test(String(o.text))))
    .map(o => (o.output_type === 'error' ? `${{o.ename}}: ${{o.evalue}}` : String(o.text)).slice(0, 400));
}}"""
_CLOSE = f"""async () => {{
  const nb = {_NOTEBOOK};
  if (!nb || !nb.sessionContext) return;
  await nb.sessionContext.shutdown();
  nb.context.model.dirty = false;
  nb.dispose();
}}"""
#: Elements of a panel whose right edge runs past its output area, with a short description.
_OVERFLOW = """(panel) => {
  const area = panel.closest('.jp-OutputArea-output') || panel;
  const box = area.getBoundingClientRect();
  const bad = [];
  for (const el of panel.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    if (r.right > box.right + 2) bad.push(`${el.tagName}.${el.className && el.className.baseVal !== undefined
        ? el.className.baseVal : el.className} right=${Math.round(r.right)} > ${Math.round(box.right)}`);
  }
  return bad.slice(0, 5);
}"""
#: The panel's fidelity note (issue 40 item 3) is not clipped: its always-shown line (the ``<summary>``) has a box
#: inside the panel, no element between it and the panel cuts its content off, and the out-of-envelope warning, when
#: there is one, is on that line (seen without opening anything). A panel without a note passes.
_NOTE_SHOWN = """(panel) => {
  const note = panel.querySelector('.wb-fidelity');
  if (!note) return [];
  const bad = [];
  const line = note.querySelector('summary') || note;
  const r = line.getBoundingClientRect(), p = panel.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) bad.push('the note line is not shown');
  if (r.left < p.left - 1 || r.right > p.right + 1 || r.top < p.top - 1 || r.bottom > p.bottom + 1)
    bad.push('the note line runs out of the panel');
  for (let el = line; el && el !== panel; el = el.parentElement) {
    const s = getComputedStyle(el);
    if ((s.overflowY !== 'visible' && el.scrollHeight > el.clientHeight + 1)
        || (s.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1))
      bad.push(`the note is clipped by ${el.tagName}.${el.className}`);
  }
  const warn = note.querySelector('.wb-fidelity-outside');
  if (warn) {
    const w = warn.getBoundingClientRect();
    if (w.height === 0 || w.top < r.top - 1 || w.bottom > r.bottom + 1) bad.push('the envelope warning is not on the shown line');
  }
  return bad;
}"""
#: A hash of what the panel's figures draw (their plot layers' SVG).
_FIGURE_STATE = f"""(panel) => {{
  const s = Array.from(panel.querySelectorAll('.{FIGURE_CLASS} .js-plotly-plot')).map(p =>
    Array.from(p.querySelectorAll('.cartesianlayer, .heatmaplayer, .barlayer')).map(l => l.innerHTML).join('')).join('|');
  let h = 5381;
  for (let i = 0; i < s.length; i++) h = ((h * 33) ^ s.charCodeAt(i)) >>> 0;
  return `${{s.length}}:${{h}}`;
}}"""
#: Every figure pane of the panel that is in view (not on a hidden tab) and shows a figure has drawn it with a
#: non-empty box.
_DRAWN = f"""(panel) => {{
  const panes = Array.from(panel.querySelectorAll('.{FIGURE_CLASS}')).filter(p => p.offsetParent !== null);
  const shown = panes.filter(p => p.querySelector('.jp-RenderedPlotly'));
  return shown.length > 0 && shown.every(p => {{
    const svg = p.querySelector('.main-svg'); const r = p.getBoundingClientRect();
    return !!svg && r.height > 50 && r.width > 50;
  }});
}}"""


@pytest.fixture(scope="module")
def lab_page(browser, lab, token, viewport):
    """One JupyterLab page, file browser open, for every notebook of this module."""
    page = browser.new_page(viewport=viewport)
    page.goto(f"{lab}/lab/tree/notebooks?token={token}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=120_000)
    page.wait_for_selector(".jp-DirListing-item", timeout=120_000)
    page.evaluate("() => window.jupyterapp.shell.activateById('filebrowser')")
    yield page
    page.close()


def _move_control(page, panel) -> str:
    """Move one control of the panel: a slider two steps, else another dropdown option, else one option fewer in a
    multi-select, else one value fewer in a sweep's list of values."""
    handle = panel.locator(".noUi-handle, .ui-slider-handle").first
    if handle.count():
        handle.focus()
        handle.press("ArrowRight")
        handle.press("ArrowRight")
        return "slider"
    select = panel.locator(".widget-dropdown select").first
    if select.count():
        values = [o.get_attribute("value") for o in select.locator("option").all()]
        select.select_option(next(v for v in values if v != select.input_value()))
        return "dropdown"
    multi = panel.locator("select[multiple]").all()
    for m in multi:
        chosen = m.evaluate("s => Array.from(s.selectedOptions).map(o => o.value)")
        if len(chosen) > 1:
            m.select_option(chosen[:-1])
            return "multi-select"
    for text in panel.locator(".widget-text input[type=text]").all():
        values = [v.strip() for v in text.input_value().split(",") if v.strip()]
        if len(values) > 1:
            text.fill(", ".join(values[:-1]))
            text.press("Enter")
            return "list of values"
    raise AssertionError("the panel has no slider, dropdown, multi-select or list of values to move")


#: The panel's height and the notebook's visible height, with the panel's top scrolled to the top of the view.
_FIT = """(panel) => {
  const scroller = panel.closest('.jp-WindowedPanel-outer') || panel.closest('.jp-Notebook');
  panel.scrollIntoView({block: 'start'});
  return [Math.round(panel.getBoundingClientRect().height), Math.round(scroller.getBoundingClientRect().height)];
}"""
#: The tabs of a panel's figure pages (none when its figures are in one row).
_TABS = ".widget-tab .lm-TabBar-tab"


def _pages(page, panel, stem: Path, plotted_problems, where: str, heights: list[int]) -> list[str]:
    """Each figure page of the panel (each tab, or the one row of figures): what it draws passes the figure
    invariants, and a screenshot of the window is kept. Returns the pages that do not fit the window below their
    controls (the controls and the figures they drive in one screen at 1366x768); each page's height goes to
    ``heights`` (printed with the test's summary)."""
    misfits = []
    tabs = panel.locator(_TABS).all()
    for i, tab in enumerate(tabs or [None]):
        if tab is not None:
            tab.click()
            assert _wait(page, _DRAWN, panel.element_handle(), REDRAW_S), f"{where} tab {i}: figures not drawn"
            page.wait_for_timeout(500)
        height, view = panel.evaluate(_FIT)
        page.wait_for_timeout(300)
        page.screenshot(path=f"{stem}-page{i}.png")
        heights.append(height)
        if height > view:
            misfits.append(f"{where} page {i}: the panel is {height} px tall, the notebook shows {view} px")
        drawn = plotted_problems(page, panel.element_handle())
        assert not drawn, f"{where} page {i}: what the figures draw breaks the figure invariants: {drawn}"
    if tabs:
        tabs[0].click()
    return misfits


def _wait(page, check, arg, budget_s: float) -> bool:
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        if page.evaluate(check, arg):
            return True
        page.wait_for_timeout(150)
    return bool(page.evaluate(check, arg))


#: The saved figures of the open notebook (its outputs, not a panel's).
_SAVED_FIGURES = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedPlotly.js-plotly-plot"


def _saved_figures_read_right(page, nb: Path, name: str, screenshots_dir: Path, plotted_problems) -> None:
    """The figures the notebook shows as saved (reproduction figures and any a cell draws), drawn by Lab at the
    width of its output area at 1366x768: each passes the figure invariants at that width (a full-width title clear
    of the mode bar, axes that read right)."""
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    saved = sum("application/vnd.plotly.v1+json" in o.get("data", {}) for c in cells for o in c.get("outputs", []))
    if not saved:
        return
    drawn = f"() => document.querySelectorAll('{_SAVED_FIGURES} .main-svg').length >= {saved}"
    page.wait_for_function(drawn, timeout=120_000, polling=200)
    root = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").element_handle()
    page.locator(_SAVED_FIGURES).first.scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    page.screenshot(path=str(screenshots_dir / f"lab-{Path(name).stem}-figure0.png"))
    found = plotted_problems(page, root)
    assert not found, f"{name}: its saved figures break the figure invariants: {found}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_in_lab(lab_page, workdir: Path, screenshots_dir: Path, name: str, plotted_problems):
    nb = ROOT / "notebooks" / name
    missing = notebook_missing_data(nb)
    if missing and notebook_needs_data(nb):
        pytest.skip(f"{name} needs data: {', '.join(missing)}")
    page = lab_page
    console_errors: list[str] = []
    requests_out: list[str] = []

    def on_console(m):
        if m.type == "error":
            console_errors.append(m.text)

    def on_request(r):
        if not r.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")):
            requests_out.append(r.url)

    page.on("console", on_console)
    page.on("request", on_request)
    run, budgets = cells_to_run(nb)
    try:
        page.evaluate(_OPEN, f"notebooks/{name}")
        page.wait_for_function(_IDLE, timeout=120_000, polling=200)
        _saved_figures_read_right(page, nb, name, screenshots_dir, plotted_problems)
        t0 = time.monotonic()
        for i, budget_s in zip(run, budgets):
            page.evaluate(_RUN, i)
            assert _wait(page, "() => window.__wbRan !== undefined", None, budget_s), (
                f"{name}: cell {i} did not finish within its budget of {budget_s:.0f} s"
            )
            assert page.evaluate(_ERRORS, i) == [], f"{name}: cell {i} has error output"
            assert page.evaluate("() => window.__wbRan") is True, f"{name}: cell {i} failed"
        run_s = time.monotonic() - t0
        assert "Error displaying widget" not in page.inner_text(".jp-NotebookPanel:not(.lm-mod-hidden)")
        panels = page.locator(f".jp-NotebookPanel:not(.lm-mod-hidden) .{PANEL_CLASS}").all()
        assert panels, f"{name}: no panel rendered"
        moved: dict[int, str] = {}
        misfits: list[str] = []
        heights: dict[int, list[int]] = {}
        for k, panel in enumerate(panels):
            panel.scroll_into_view_if_needed()
            # A sweep panel redraws on its run button, whether or not it ran its first grid when built; any other
            # panel that shows no figure yet draws on its first button.
            sweep_button = panel.locator(".widget-button", has_text="Run sweep")
            on_button = bool(sweep_button.count()) or not panel.locator(".jp-RenderedPlotly").count()
            if on_button and not sweep_button.count():
                panel.locator(".widget-button").first.click()
            assert _wait(page, _DRAWN, panel.element_handle(), REDRAW_S), f"{name} panel {k}: figures not drawn"
            overflow = panel.evaluate(_OVERFLOW)
            assert overflow == [], f"{name} panel {k}: elements run past the output area at 1366x768: {overflow}"
            clipped = panel.evaluate(_NOTE_SHOWN)
            assert clipped == [], f"{name} panel {k}: its fidelity note at 1366x768: {clipped}"
            where = f"{name} panel {k}"
            shots = screenshots_dir / f"lab-{Path(name).stem}-panel{k}"
            misfits += _pages(page, panel, shots, plotted_problems, where, heights.setdefault(k, []))
            before = panel.evaluate(_FIGURE_STATE)
            how = _move_control(page, panel)
            if on_button:
                (sweep_button if sweep_button.count() else panel.locator(".widget-button")).first.click()
            changed = f"(p) => ({_FIGURE_STATE})(p) !== {json.dumps(before)}"
            assert _wait(page, changed, panel.element_handle(), REDRAW_S), (
                f"{name} panel {k}: moving a {how} did not redraw"
            )
            page.wait_for_function(_IDLE, timeout=REDRAW_S * 1000, polling=200)
            assert _wait(page, _DRAWN, panel.element_handle(), REDRAW_S), f"{name} panel {k}: figures not redrawn"
            page.wait_for_timeout(200)  # plotly lays out what it drew (the checks read the width it is drawn at)
            drawn = plotted_problems(page, panel.element_handle())
            assert not drawn, f"{name} panel {k}: what the figures draw breaks the figure invariants: {drawn}"
            moved[k] = how
        assert not misfits, f"{name}: figures below the fold at 1366x768: {misfits}"
        assert not requests_out, f"{name}: requests left the machine: {requests_out[:5]}"
        assert not console_errors, f"{name}: console errors: {console_errors[:5]}"
        print(f"{name}: cells {run} in {run_s:.1f} s, {len(panels)} panel(s), moved: {moved}, page heights: {heights}")
        if name == SAVED_AND_REOPENED:
            _save_close_and_reopen(page, workdir, name, screenshots_dir)
    except Exception:
        page.screenshot(path=str(screenshots_dir / f"FAILED-lab-{Path(name).stem}.png"))
        raise
    finally:
        page.remove_listener("console", on_console)
        page.remove_listener("request", on_request)
        page.evaluate(_CLOSE)


#: The notebook whose panels, once run, are saved and reopened with a fresh kernel (the state after a user's save).
SAVED_AND_REOPENED = "00_arrivals.ipynb"
#: Save the open notebook through Lab (what Ctrl+S and autosave run) and wait until the file is written.
_SAVE = f"""async () => {{
  await window.jupyterapp.commands.execute('docmanager:save');
  const nb = {_NOTEBOOK};
  if (nb.context.model.dirty) throw new Error('the notebook is still unsaved');
}}"""
#: Trust every cell of the open notebook, as running all of it (or Lab's "Trust Notebook") does: the server then signs
#: the saved notebook, and its outputs (widget views included) are rendered as they are when it is reopened.
_TRUST = f"() => {{ for (const cell of {_NOTEBOOK}.content.widgets) cell.model.trusted = true; }}"
#: Close the open notebook and shut its kernel down, keeping what was saved.
_CLOSE_SAVED = f"""async () => {{
  const nb = {_NOTEBOOK};
  await nb.sessionContext.shutdown();
  nb.dispose();
}}"""
#: Widget outputs of the saved notebook file (their model lives in a kernel that is gone).
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _save_close_and_reopen(page, workdir: Path, name: str, screenshots_dir: Path) -> None:
    """A user's save: the notebook with its panels run (and trusted, as after running all of it) is saved through Lab,
    closed (kernel shut down) and reopened with a fresh kernel. The saved file holds each panel as its "run this cell" text (no widget view naming a model
    that is gone), the reopened notebook shows no "Error displaying widget", and its paired .py is byte-identical to
    the repository's (a save does not dirty git)."""
    stem = Path(name).stem
    page.evaluate(_TRUST)
    page.evaluate(_SAVE)
    page.evaluate(_CLOSE_SAVED)
    page.evaluate(_OPEN, f"notebooks/{name}")
    page.wait_for_function(_IDLE, timeout=120_000, polling=200)
    page.wait_for_timeout(5000)  # the widget manager restores (and would fail to find the models) after the kernel
    try:
        shown = page.inner_text(".jp-NotebookPanel:not(.lm-mod-hidden)")
        page.screenshot(path=str(screenshots_dir / f"lab-{stem}-reopened.png"))
        assert "Error displaying widget" not in shown, f"{name}: a reopened panel shows an error"
        assert PANEL_TEXT in shown, f"{name}: the reopened notebook does not say how to get its panels back"
    finally:
        page.evaluate(_CLOSE)
    saved = json.loads((workdir / "notebooks" / name).read_text(encoding="utf-8"))
    views = [i for i, c in enumerate(saved["cells"]) for o in c.get("outputs", []) if _WIDGET_VIEW in o.get("data", {})]
    assert not views, f"{name}: saved with widget views whose models are gone (cells {views})"
    source = workdir / "notebooks" / f"{stem}.py"
    assert source.read_bytes() == (ROOT / "notebooks" / source.name).read_bytes(), f"a save rewrote {source.name}"


def test_saving_a_notebook_keeps_its_files(lab_page, workdir: Path):
    """Open a notebook and save it (what Ctrl+S and autosave do) without changing anything: both files of the pair stay
    byte-identical to the repository's (a save does not dirty git), its claims table reads left-aligned."""
    name = NOTEBOOKS[0]
    files = [workdir / "notebooks" / (Path(name).stem + ext) for ext in (".py", ".ipynb")]
    for f in files:  # as committed (an earlier test ran and saved this copy)
        shutil.copy(ROOT / "notebooks" / f.name, f)
    page = lab_page
    page.evaluate(_OPEN, f"notebooks/{name}")
    try:
        aligned = page.evaluate(
            "() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) table.wb-claims td'))"
            ".map(c => getComputedStyle(c).textAlign)"
        )
        assert aligned and set(aligned) == {"left"}, f"{name}: claims table cells aligned {sorted(set(aligned))}"
        page.evaluate(_SAVE)
        page.wait_for_timeout(1000)
    finally:
        page.evaluate(_CLOSE)
    for f in files:
        assert f.read_bytes() == (ROOT / "notebooks" / f.name).read_bytes(), f"a save from Lab rewrote {f.name}"
