"""Test-session hooks shared by ``tests/`` and the nbval run over ``notebooks/``."""

from __future__ import annotations

from pathlib import Path

from workbench.testing import notebook_missing_data


def _missing_by_notebook(paths) -> dict[Path, list[str]]:
    out = {}
    for path in sorted(set(paths)):
        missing = notebook_missing_data(path)
        if missing:
            out[path] = missing
    return out


def pytest_collection_modifyitems(config, items):
    """Execute, but do not compare, the cells of notebooks whose real data is absent (see
    :func:`workbench.testing.notebook_missing_data`): a crash still fails the run, differing numbers do not."""
    cells = [item for item in items if type(item).__name__ == "IPyNbCell"]
    missing = _missing_by_notebook(Path(item.path) for item in cells)
    for item in cells:
        if Path(item.path) in missing:
            item.options["check"] = False


def pytest_report_header(config):
    if not config.getoption("nbval", default=False) and not config.getoption("nbval_lax", default=False):
        return None
    notebooks = Path(config.rootpath, "notebooks").glob("*.ipynb")
    return [
        f"nbval: {path.name} runs without output comparison; real data absent: {', '.join(missing)}"
        for path, missing in _missing_by_notebook(notebooks).items()
    ]
