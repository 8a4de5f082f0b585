"""Writing figures to disk: HTML always, PNG/SVG/PDF when a Chromium is available.

Static export uses kaleido (v1), which drives a headless Chromium. A cold browser start costs seconds, so
:func:`write_figures` renders every static image of a batch in one browser session. HTML needs no browser: plotly.js
is referenced from its CDN (``include_plotlyjs="cdn"``) so each file stays small.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import plotly.graph_objects as go

from .._validate import one_of

__all__ = ["chromium_path", "write_figures", "ExportReport", "STATIC_FORMATS", "CHROMIUM_HINT"]

STATIC_FORMATS = ("png", "svg", "pdf")
CHROMIUM_HINT = (
    "no Chromium found: static PNG/SVG export skipped (HTML written). "
    "Install it with `sudo apt-get install -y chromium` (Debian/Ubuntu) or set BROWSER_PATH to a Chrome/Chromium binary."
)
_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def chromium_path() -> str | None:
    """Return the Chrome/Chromium executable kaleido will use: ``$BROWSER_PATH`` or the first one on ``PATH``."""
    env = os.environ.get("BROWSER_PATH")
    if env:
        return env if Path(env).exists() else None
    for name in _CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class ExportReport:
    """Which files were written, which were already up to date, and why static export was skipped if it was."""

    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    skipped_reason: str = ""


def write_figures(
    figures: Mapping[str, go.Figure],
    out_dir: str | os.PathLike,
    formats: Iterable[str] = ("html", "png", "svg", "pdf"),
    *,
    width: int = 900,
    height: int = 540,
    scale: float = 2.0,
) -> ExportReport:
    """Write each figure as ``out_dir/<name>.<format>`` for every requested format.

    ``name`` may contain ``/`` to make sub-folders (e.g. ``"arrivals/cv_vs_burstiness"``). Static formats are
    rendered in one kaleido/Chromium session at ``width`` x ``height`` CSS pixels times ``scale`` (PNG: 1800 x 1080
    by default, paper-ready); when no Chromium is found they are skipped with :data:`CHROMIUM_HINT` as the reason
    and HTML is still written. Every file is written atomically (a temporary beside it, renamed into place), and a
    file whose figure and options are unchanged since it was written (``.manifest.json`` in ``out_dir`` records a
    digest per file) is left as it is, so re-exporting an unchanged set costs nothing.

    Examples
    --------
    >>> import plotly.graph_objects as go, tempfile
    >>> report = write_figures({"demo": go.Figure(go.Scatter(y=[1, 3, 2]))}, tempfile.mkdtemp(), formats=["html"])
    >>> [p.name for p in report.written]
    ['demo.html']
    """
    import hashlib
    import json
    import tempfile

    import plotly.io as pio

    from ..cache import atomic_path

    formats = [one_of("formats", f, ("html", *STATIC_FORMATS)) for f in formats]
    out = Path(out_dir)
    report = ExportReport()
    if not figures:
        return report
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / ".manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if not isinstance(manifest, dict):
            manifest = {}
    except (OSError, ValueError):
        manifest = {}
    plotly_js = out / "plotly.min.js"
    if "html" in formats and not plotly_js.exists():
        from plotly.offline import get_plotlyjs

        with atomic_path(plotly_js) as tmp:
            tmp.write_text(get_plotlyjs(), encoding="utf-8")
    static_jobs = []
    pending: dict[str, str] = {}
    for name, fig in figures.items():
        if not isinstance(fig, go.Figure):
            raise TypeError(f"figure {name!r} must be a plotly Figure, got {type(fig).__name__}")
        base = out / name
        base.parent.mkdir(parents=True, exist_ok=True)
        body = pio.to_json(fig, validate=False)
        for fmt in formats:
            path = base.with_suffix(f".{fmt}")
            rel = str(path.relative_to(out))
            digest = hashlib.sha256(f"{fmt} {width} {height} {scale}\n{body}".encode()).hexdigest()
            if manifest.get(rel) == digest and path.is_file():
                report.unchanged.append(path)
                continue
            if fmt == "html":
                src = os.path.relpath(plotly_js, path.parent).replace(os.sep, "/")
                with atomic_path(path) as tmp:
                    fig.write_html(tmp, include_plotlyjs=src, full_html=True)
                report.written.append(path)
                manifest[rel] = digest
            else:
                static_jobs.append((fig, path, fmt))
                pending[rel] = digest
    if static_jobs:
        browser = chromium_path()
        if browser is None:
            report.skipped_reason = CHROMIUM_HINT
        else:
            import kaleido  # imported late: only needed for static export

            os.environ.setdefault("BROWSER_PATH", browser)
            with tempfile.TemporaryDirectory(dir=out, prefix=".export-") as staging:
                jobs = [
                    {
                        "fig": fig,
                        "path": Path(staging) / f"{i}.{fmt}",
                        "opts": {"format": fmt, "width": width, "height": height, "scale": scale},
                    }
                    for i, (fig, _, fmt) in enumerate(static_jobs)
                ]
                kaleido.write_fig_from_object_sync(jobs, kopts={"mathjax": False, "n": 1})
                for job, (_, path, _) in zip(jobs, static_jobs):
                    os.replace(job["path"], path)
                    report.written.append(path)
            manifest.update(pending)
    with atomic_path(manifest_path) as tmp:
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return report
