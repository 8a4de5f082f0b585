"""Dashboards: one Voilà app per paper (its panel, no code) and a landing page listing the papers and verdicts.

A dashboard is a tiny generated notebook that imports the paper's panel from :mod:`workbench.widgets` and displays
it, so there is no second copy of panel code: a fix to a panel is a fix to its dashboard. :func:`build` writes the
notebooks; ``workbench dashboard`` builds them and serves them with Voilà on 127.0.0.1 (``make dashboard``).

:func:`voila_command` is how they are served: offline (the ``workbench`` template drops the lab template's Font
Awesome CDN links; Voilà's bundle carries the icons) and quiet (no extension that logs errors outside JupyterLab is loaded).

The landing page shows each paper's verdict counts: measured ones from ``scoreboard.json`` when ``workbench
reproduce`` has written it, otherwise the verdicts the registry expects (which the test suite asserts), labelled as
such.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

__all__ = ["Dashboard", "dashboards", "build", "landing_html", "voila_command"]

#: Where the workbench's Voilà template lives (``<here>/voila/templates/workbench``), added to ``JUPYTER_PATH``.
TEMPLATES = Path(__file__).parent / "templates"
#: JupyterLab extensions a dashboard does not load: jupytext's expects JupyterLab's document manager, which Voilà does
#: not provide, and logs an error in every dashboard. (An allow-list of plotly's renderer alone also drops the widget
#: manager Voilà needs, so no panel shows.)
DENIED_EXTENSIONS = ("jupyterlab-jupytext",)


@dataclass(frozen=True)
class Dashboard:
    """One paper's app: the paper id (as in ``workbench list``), a title and the panel factory ``module:function``."""

    paper: str
    title: str
    panel: str

    @property
    def filename(self) -> str:
        return f"{self.paper}.ipynb"


def dashboards() -> tuple[Dashboard, ...]:
    """Every paper with an interactive panel, in notebook order: discovered from the papers' records
    (``Paper(panel=..., dashboard=...)``), so adding a paper with a panel adds its dashboard.

    Examples
    --------
    >>> [d.paper for d in dashboards()][:2]
    ['arrivals', 'spraying']
    """
    from .reproductions import load_all

    papers = sorted((p for p in load_all().papers.values() if p.panel), key=lambda p: (p.notebook or "~", p.id))
    return tuple(Dashboard(p.id, p.dashboard_title, p.panel) for p in papers)


def _notebook(cells: list[tuple[str, str]]) -> dict:
    return {
        "cells": [
            {
                "id": f"cell-{i}",
                "cell_type": kind,
                "metadata": {},
                "source": source,
                **({"outputs": [], "execution_count": None} if kind == "code" else {}),
            }
            for i, (kind, source) in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _verdicts(scoreboard: str | os.PathLike | None) -> tuple[dict[str, dict[str, int]], str]:
    from .reproductions import load_all

    counts: dict[str, dict[str, int]] = {}
    scoreboard = None if scoreboard is None else Path(scoreboard)
    if scoreboard is not None and scoreboard.is_file():
        for rec in json.loads(scoreboard.read_text(encoding="utf-8")):
            paper = counts.setdefault(rec["paper"], {})
            paper[rec["verdict"]] = paper.get(rec["verdict"], 0) + 1
        from datetime import datetime

        when = datetime.fromtimestamp(scoreboard.stat().st_mtime, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
        return counts, f"measured ({scoreboard.name}, {when})"
    for claim in load_all().claims.values():
        paper = counts.setdefault(claim.paper.id, {})
        paper[claim.expected.value] = paper.get(claim.expected.value, 0) + 1
    return counts, "expected by the registry (run `make reproduce` for measured verdicts)"


#: Cell alignment that survives JupyterLab's and Voilà's table CSS (which right-aligns cells).
_LEFT = ' style="text-align:left;vertical-align:top"'


def landing_html(scoreboard: str | os.PathLike | None = None) -> str:
    """The landing page's table: one row per dashboard with its paper, citation and verdict counts (measured ones
    from ``scoreboard``, a ``scoreboard.json`` path, when that file exists)."""
    import html

    from .reproductions import VERDICT_COLORS, Verdict, load_all

    registry = load_all()
    counts, source = _verdicts(scoreboard)
    rows = []
    for d in dashboards():
        paper = registry.papers[d.paper]
        badges = (
            " ".join(
                f'<span style="background:{VERDICT_COLORS[v][0]};color:#fff;border-radius:10px;padding:1px 8px;'
                f'font-size:12px">{v.value} {counts[d.paper].get(v.value, 0)}</span>'
                for v in Verdict
            )
            if d.paper in counts
            else '<span style="color:#57606a">not in this scoreboard (<code>workbench reproduce --paper '
            f"{html.escape(d.paper)}</code>)</span>"
        )
        rows.append(
            f'<tr><td{_LEFT}><a href="{html.escape(d.filename)}">{html.escape(d.title)}</a></td>'
            f"<td{_LEFT}>{html.escape(paper.citation)}</td><td{_LEFT}>{badges}</td></tr>"
        )
    return (
        '<table style="border-collapse:collapse;font-family:system-ui,sans-serif;font-size:14px;width:100%">'
        f"<thead><tr><th{_LEFT}>dashboard</th><th{_LEFT}>paper</th><th{_LEFT}>verdicts</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table><p style='color:#57606a'>Verdicts: {html.escape(source)}.</p>"
    )


def build(out_dir: str | os.PathLike, *, scoreboard: str | os.PathLike | None = None) -> list[Path]:
    """Write ``index.ipynb`` (landing page) and one ``<paper>.ipynb`` per dashboard into ``out_dir``.

    Examples
    --------
    >>> import tempfile
    >>> sorted(p.name for p in build(tempfile.mkdtemp()))[:2]
    ['arrivals.ipynb', 'burstgpt.ipynb']
    """
    from .reproductions import load_all

    registry = load_all()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for d in dashboards():
        module, function = d.panel.split(":")
        paper = registry.papers[d.paper]
        nb = _notebook(
            [
                ("markdown", f"# {d.title}\n\n{paper.citation}. [Back to all dashboards](./index.ipynb)"),
                (
                    "code",
                    f"from workbench import viz\nfrom {module} import {function}\n\nviz.setup_notebook()\n{function}()",
                ),
            ]
        )
        path = out / d.filename
        path.write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    board = None if scoreboard is None else Path(scoreboard)
    index = _notebook(
        [
            ("markdown", "# workbench dashboards\n\nOne app per paper: its interactive panel, no code."),
            (
                "code",
                "from IPython.display import HTML\nfrom workbench.dashboards import landing_html\n\n"
                f"HTML(landing_html({None if board is None else repr(str(board.resolve()))}))",
            ),
        ]
    )
    path = out / "index.ipynb"
    path.write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    written.append(path)
    return written


def voila_command(directory: str | os.PathLike, port: int) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that serve ``directory`` with Voilà on ``127.0.0.1:port``.

    Examples
    --------
    >>> cmd, env = voila_command("out/dashboards", 8866)
    >>> cmd[1:3], "--template=workbench" in cmd, env["JUPYTER_PATH"].split(os.pathsep)[0] == str(TEMPLATES)
    (['-m', 'voila'], True, True)
    """
    import sys

    cmd = [
        sys.executable,
        "-m",
        "voila",
        "--no-browser",
        f"--port={int(port)}",
        "--Voila.ip=127.0.0.1",
        "--template=workbench",
        # Voilà 0.5 sends the kernel-shutdown beacon of a closing page without an _xsrf token (voila-dashboards/voila
        # #1458), so every visited page left its kernel running. The server listens on the loopback only, and the
        # only POST it serves shuts down a kernel named by its random id: the check is off so that closing a page
        # frees its kernel.
        "--Voila.tornado_settings=disable_check_xsrf=True",
        *(f"--VoilaConfiguration.extension_denylist={name}" for name in DENIED_EXTENSIONS),
        str(directory),
    ]
    path = os.pathsep.join(p for p in (str(TEMPLATES), os.environ.get("JUPYTER_PATH", "")) if p)
    return cmd, {**os.environ, "JUPYTER_PATH": path, "PYTHONUNBUFFERED": "1"}
