"""Committed notebook outputs must not depend on the machine that executed them.

nbval compares every printed output that is not tagged ``nbval-ignore-output`` with the committed one, so an absolute
path (the checkout, the data search path, a temporary directory) in such an output passes on the machine that ran
``make notebooks`` and fails on any other, e.g. on CI where the checkout lives somewhere else.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
# An absolute POSIX path with at least two components, at the start of a line or after a separator.
ABSOLUTE_PATH = re.compile(r"(?:^|[\s'\"(=:,\[])(/[\w.-]+/[\w.-]+)", re.MULTILINE)


def compared_text_outputs(nb_path: Path) -> list[tuple[int, str]]:
    """(cell index, text) of every text output nbval compares in ``nb_path``."""
    nb = json.loads(nb_path.read_text())
    found = []
    for index, cell in enumerate(nb["cells"]):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] != "code" or "nbval-ignore-output" in tags or "nbval-skip" in tags:
            continue
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain", "")
            found.append((index, "".join(text)))
    return found


def test_notebooks_are_committed():
    assert len(NOTEBOOKS) >= 7


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_compared_outputs_are_machine_independent(nb_path):
    offending = [
        f"cell {index}: {match.group(1)}"
        for index, text in compared_text_outputs(nb_path)
        for match in ABSOLUTE_PATH.finditer(text)
    ]
    assert not offending, f"{nb_path.name} prints absolute paths in compared outputs: {offending}"


def test_absolute_path_pattern_flags_paths_but_not_units():
    assert ABSOLUTE_PATH.search("Azure code: /check/work/shared/data/x.csv")
    assert ABSOLUTE_PATH.search("'/tmp/abc/trace.csv'")
    assert not ABSOLUTE_PATH.search("rate 12.5 req/s, 3.1 tokens/s/GPU, azure-llm-2023/code.csv")


def test_notebook_missing_data_reads_requires_data(tmp_path, monkeypatch):
    from workbench.testing import notebook_missing_data

    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "data"))
    (tmp_path / "data" / "present").mkdir(parents=True)
    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps({"metadata": {"workbench": {"requires_data": ["present", "absent/x.csv"]}}, "cells": []}))
    assert notebook_missing_data(nb) == ["absent/x.csv"]
    nb.write_text(json.dumps({"metadata": {}, "cells": []}))
    assert notebook_missing_data(nb) == []
    nb.write_text(json.dumps({"metadata": {"workbench": {"requires_data": "present"}}, "cells": []}))
    with pytest.raises(ValueError, match="requires_data must be a list"):
        notebook_missing_data(nb)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_requires_data_metadata_is_valid(nb_path):
    from workbench.testing import notebook_missing_data

    notebook_missing_data(nb_path)  # raises on malformed metadata


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_saving_from_lab_leaves_the_paired_py_unchanged(nb_path, tmp_path):
    """JupyterLab's jupytext pairing rewrites the .py from the notebook on every save (autosave included): with the
    project's jupytext settings that must give the committed .py byte for byte (else a save dirties git), which
    also catches an .ipynb left stale after an edit of its .py."""
    from jupytext.cli import jupytext

    out = tmp_path / f"{nb_path.stem}.py"
    # the jupytext command itself, in this process (a subprocess per notebook cost ~2 s of CPU in interpreter start-up
    # and imports, 18 times): it reads the project's jupytext settings from the notebook's folder upwards
    jupytext(["--quiet", "--to", "py:percent", str(nb_path), "-o", str(out)])
    assert out.read_bytes() == nb_path.with_suffix(".py").read_bytes()


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebook_is_as_lab_saves_it(nb_path, tmp_path):
    """A save from JupyterLab of an unchanged notebook writes the committed bytes (no git diff from opening one): its
    panels are saved as their text, no figure carries a PNG drawn by a browser, integral numbers are integers."""
    from workbench import notebook_files

    copy = tmp_path / nb_path.name
    copy.write_bytes(nb_path.read_bytes())
    assert notebook_files.main([str(copy)]) == 0
    assert copy.read_bytes() == nb_path.read_bytes(), f"{nb_path.name}: not written as a save from Lab writes it"


def test_pre_save_hook_saves_a_dead_widget_as_its_text_and_keeps_a_saved_one():
    from workbench.notebook_files import PLOTLY, WIDGET_STATE, WIDGET_VIEW, pre_save_hook

    def out(model_id):
        return {"output_type": "display_data", "metadata": {},
                "data": {WIDGET_VIEW: {"model_id": model_id}, "text/plain": "Interactive panel: run the notebook"}}  # fmt: skip

    figure = {"output_type": "display_data", "metadata": {}, "data": {PLOTLY: {"data": [{"y": [1.0, 2.5]}]},
                                                                      "image/png": "iVBOR..."}}  # fmt: skip
    content = {
        "metadata": {"widgets": {WIDGET_STATE: {"state": {"kept": {}}}}},
        "cells": [{"cell_type": "code", "outputs": [out("gone"), out("kept"), figure]}],
    }
    model = {"type": "notebook", "content": content}
    pre_save_hook(model, path="x.ipynb", contents_manager=None)
    gone, kept, fig = model["content"]["cells"][0]["outputs"]
    assert gone["data"] == {"text/plain": "Interactive panel: run the notebook"}
    assert WIDGET_VIEW in kept["data"]
    assert fig["data"] == {PLOTLY: {"data": [{"y": [1, 2.5]}]}}
    text = {"type": "file", "content": "1.0"}
    pre_save_hook(text)
    assert text == {"type": "file", "content": "1.0"}


def test_jupyter_servers_run_the_pre_save_hook(tmp_path):
    """The server extension `make venv` enables registers the hook on a Jupyter server's contents manager, and on one
    made later from the server's configuration (as jupytext's extension does)."""
    import importlib

    from jupyter_server.serverapp import ServerApp
    from jupyter_server.services.contents.filemanager import FileContentsManager

    from workbench.notebook_files import pre_save_hook

    root = Path(__file__).resolve().parents[1]
    config = json.loads((root / "jupyter-config" / "workbench.json").read_text())
    (name,) = [m for m, on in config["ServerApp"]["jpserver_extensions"].items() if on]
    module = importlib.import_module(name)
    assert module._jupyter_server_extension_points() == [{"module": name}]
    app = ServerApp(root_dir=str(tmp_path))
    app.contents_manager = FileContentsManager(root_dir=str(tmp_path))
    module._load_jupyter_server_extension(app)
    nb = {"cells": [], "metadata": {"x": 1.0}, "nbformat": 4, "nbformat_minor": 5}
    app.contents_manager.save({"type": "notebook", "content": nb}, "a.ipynb")
    assert json.loads((tmp_path / "a.ipynb").read_text())["metadata"] == {"x": 1}  # the hook ran
    later = FileContentsManager(config=app.config, root_dir=str(tmp_path))  # jupytext's, from the server's config
    assert later.pre_save_hook is pre_save_hook
    assert "jupyter-config/workbench.json" in (root / "Makefile").read_text()
