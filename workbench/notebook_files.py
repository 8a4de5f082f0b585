"""What a notebook file holds when it is saved: the same bytes whichever program wrote it, and no widget view that a
reopened notebook cannot show.

Two rules, applied by ``make notebooks`` to every executed notebook (``python -m workbench.notebook_files FILE...``)
and, as a pre-save hook (:func:`pre_save_hook`) of every Jupyter server run from the environment, to every save from
JupyterLab, autosave included (this module is a Jupyter server extension, enabled by ``jupyter-config/workbench.json``,
which ``make venv`` copies into the environment's ``etc/jupyter/jupyter_server_config.d``):

* **A widget whose state is not saved is saved as its text.** A cell's output that displays a widget
  (``application/vnd.jupyter.widget-view+json``) names a model that lives in the kernel. The notebooks do not save
  widget state (a panel without its kernel is controls that do nothing), so once a notebook is reopened with a fresh
  kernel, JupyterLab shows "Error displaying widget: model not found" for each such output of a trusted notebook (one
  its user ran and saved). The output is saved as its text form instead: a panel's is "Interactive panel: run the
  notebook (or this cell) to use it." (:class:`workbench.widgets.Panel`). The running session keeps its live widgets;
  only the file changes.
* **A figure is saved as its data.** JupyterLab's plotly renderer adds a PNG of each figure it draws to the output
  (a static copy for viewers without plotly); that image depends on the browser that drew it, so a notebook saved
  after scrolling through it would differ on every machine. The figure's own JSON, which draws it, is saved; the PNG
  beside it is not.
* **Numbers as JavaScript writes them.** JupyterLab holds a notebook as JavaScript numbers, which do not tell ``1.0``
  from ``1``, so a save from Lab writes ``1`` where Python (nbconvert) wrote ``1.0``. Integral floats are written as
  integers, so an unchanged notebook saved from Lab is byte-identical to the committed one (its paired ``.py`` is
  kept byte-identical by the jupytext settings in ``pyproject.toml``).

Examples
--------
>>> nb = {"metadata": {}, "cells": [{"cell_type": "code", "outputs": [{"output_type": "display_data", "data": {
...     "application/vnd.jupyter.widget-view+json": {"model_id": "ab12", "version_major": 2, "version_minor": 0},
...     "text/plain": "Interactive panel: run the notebook (or this cell) to use it."}, "metadata": {}}]}]}
>>> normalize(nb)["cells"][0]["outputs"][0]["data"]
{'text/plain': 'Interactive panel: run the notebook (or this cell) to use it.'}
>>> normalize({"metadata": {"x": [0.0, 1.5, 2.0]}, "cells": []})["metadata"]
{'x': [0, 1.5, 2]}
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["WIDGET_VIEW", "WIDGET_STATE", "normalize", "pre_save_hook", "main"]

#: The MIME type of an output that displays a widget, and of the notebook metadata that saves widget state.
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
#: A plotly figure's output, and the image JupyterLab's renderer adds beside it.
PLOTLY = "application/vnd.plotly.v1+json"
_DRAWN_COPY = "image/png"
#: The text saved for a widget output that has none of its own.
WIDGET_TEXT = "A widget: run this cell to show it."
#: JavaScript writes integers up to here without an exponent (``1e21`` stays a float either way).
_JS_PLAIN_BELOW = 1e21


def _saved_models(nb: dict) -> set[str]:
    state = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    return set(state) if isinstance(state, dict) else set()


def _saved_outputs(nb: dict) -> None:
    saved = _saved_models(nb)
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []) or []:
            data = out.get("data")
            if not isinstance(data, dict):
                continue
            if PLOTLY in data and _DRAWN_COPY in data:
                del data[_DRAWN_COPY]
                out.get("metadata", {}).pop(_DRAWN_COPY, None)
            if WIDGET_VIEW not in data:
                continue
            view = data[WIDGET_VIEW]
            if isinstance(view, dict) and view.get("model_id") in saved:
                continue
            del data[WIDGET_VIEW]
            if not data.get("text/plain"):
                data["text/plain"] = WIDGET_TEXT


def _javascript_numbers(value: Any) -> Any:
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < _JS_PLAIN_BELOW else value
    if isinstance(value, dict):
        return {k: _javascript_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_javascript_numbers(v) for v in value]
    return value


def normalize(nb: dict) -> dict:
    """``nb`` (a notebook as JSON data) as it is saved: widget views without saved state replaced by their text and
    the PNG copies JupyterLab draws of plotly figures dropped (in place), integral floats written as integers (a new
    structure, returned)."""
    _saved_outputs(nb)
    return _javascript_numbers(nb)


def pre_save_hook(model: dict, **kwargs: Any) -> None:
    """A Jupyter server pre-save hook (``ContentsManager.pre_save_hook``): a notebook about to be written is
    :func:`normalize` d in place. Other files are left alone."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    content = model["content"]
    normalized = normalize(content)
    content.clear()
    content.update(normalized)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """This module as a Jupyter server extension (enabled by ``jupyter-config/workbench.json``)."""
    return [{"module": "workbench.notebook_files"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Run :func:`pre_save_hook` on every save of this server. It is registered on the contents manager the server
    has now, and given as configuration to one made later (jupytext's server extension replaces the contents manager
    with its own, made from the server's configuration), whichever extension loads first."""
    serverapp.config.ContentsManager.pre_save_hook = "workbench.notebook_files.pre_save_hook"
    manager = serverapp.contents_manager
    if pre_save_hook not in getattr(manager, "_pre_save_hooks", []) and manager.pre_save_hook is not pre_save_hook:
        manager.register_pre_save_hook(pre_save_hook)
    serverapp.log.info("workbench: notebooks are saved through workbench.notebook_files.pre_save_hook")


def main(argv: list[str] | None = None) -> int:
    """Rewrite each notebook file named in ``argv`` as :func:`normalize` saves it (nbformat's JSON layout)."""
    import nbformat
    from nbformat.v4 import writes_json  # nbformat's own layout, without validating every output again

    paths = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print("usage: python -m workbench.notebook_files NOTEBOOK.ipynb ...", file=sys.stderr)
        return 2
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        text = writes_json(nbformat.from_dict(normalize(nb)))
        if not text.endswith("\n"):
            text += "\n"
        if text != path.read_text(encoding="utf-8"):
            from .cache import atomic_path

            with atomic_path(path, overwrite=True) as tmp:
                tmp.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
