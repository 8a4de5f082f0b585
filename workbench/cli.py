"""The ``workbench`` command.

``workbench reproduce [--paper ID ...] [--out DIR] [--no-figures] [--quick]``
    Run every registered claim headless with a progress bar, print the scoreboard, write ``DIR/scoreboard.json``,
    ``DIR/scoreboard.md`` and every reproduction figure (HTML; PNG and SVG where Chromium is present). Exits 1 if a
    claim errored or landed on a verdict other than the one the registry expects.
``workbench list``
    List the registered papers and claims.
``workbench data path``
    Show the data search path.
``workbench data list``
    List the dataset registry: each dataset's files, where they are found on the search path, license and upstream.
``workbench data fetch NAME [--file F ...] [--dest DIR] [--base-url URL] [--force] [--no-progress]``
    Download a registered dataset from upstream with a progress bar, resuming a partial download, and verify its
    sha256 (a mismatch deletes the partial file and says so).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

__all__ = ["main"]


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from . import reproductions as rep
    from .viz.export import write_figures

    scale = "quick" if args.quick else "full"
    registry = rep.load_all()
    if args.paper:
        registry.select_claims(args.paper)  # validates the ids
    t0 = time.perf_counter()
    results = rep.run_claims(args.paper, scale, progress=True)
    frame = rep.scoreboard_frame(results)
    with_pd_options(lambda: print("\n" + frame.to_string(index=False, max_colwidth=70) + "\n"))
    out = Path(args.out)
    json_path, md_path = rep.write_scoreboard(results, out)
    print(f"scoreboard: {json_path}  {md_path}")
    if not args.no_figures:
        figs = rep.build_figures(args.paper, scale, progress=True)
        report = write_figures(figs, out / "figures")
        print(f"figures: {len(report.written)} files in {out / 'figures'}")
        if report.skipped_reason:
            print(report.skipped_reason)
    counts = frame["verdict"].value_counts().to_dict()
    print("verdicts: " + ", ".join(f"{k}: {v}" for k, v in counts.items()) + f"  ({time.perf_counter() - t0:.1f} s)")
    bad = [r for r in results if not r.as_expected]
    for r in bad:
        what = f"error: {r.error}" if r.error else f"verdict {r.verdict.value!r}, registry expects {r.claim.expected.value!r}"
        print(f"UNEXPECTED {r.claim.key}: {what}", file=sys.stderr)
    return 1 if bad else 0


def with_pd_options(fn):
    import pandas as pd

    with pd.option_context("display.width", 250, "display.max_rows", 500):
        return fn()


def _cmd_list(args: argparse.Namespace) -> int:
    from . import reproductions as rep

    registry = rep.load_all()
    for paper in registry.papers.values():
        print(f"{paper.id}: {paper.title} ({paper.citation})")
        for c in registry.select_claims(paper.id):
            print(f"  - {c.id}: {c.text} [expects {c.expected.value}]")
    return 0


def _cmd_data_path(args: argparse.Namespace) -> int:
    from . import data

    for d in data.search_path():
        print(d)
    return 0


def _cmd_data_list(args: argparse.Namespace) -> int:
    from . import data

    for ds in data.datasets():
        print(f"{ds.name}: {ds.title}")
        print(f"  license {ds.license}; upstream {ds.upstream}")
        if ds.kind == "directory":
            where = ds.locate()
            print(f"  directory {ds.directory}/: {where if where else 'not on the search path'}")
            continue
        for f in ds.files:
            where = data.find(ds.relpath(f.name))
            check = f"sha256 {f.sha256[:12]}..." if f.sha256 else "no published checksum"
            print(f"  - {f.name} ({check}): {where if where else 'not on the search path'}")
    return 0


def _cmd_data_fetch(args: argparse.Namespace) -> int:
    from . import data

    paths = data.fetch(
        args.name,
        args.file or None,
        dest=args.dest,
        base_url=args.base_url,
        progress=not args.no_progress,
        force=args.force,
    )
    for p in paths:
        print(p)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="workbench", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("reproduce", help="run all reproductions headless: scoreboard and figures")
    p.add_argument("--paper", action="append", help="only this paper id (repeatable); see `workbench list`")
    p.add_argument("--out", default="out", help="output directory (default: out/)")
    p.add_argument("--no-figures", action="store_true", help="skip writing figures")
    p.add_argument("--quick", action="store_true", help="run the small configurations the test suite uses")
    p.set_defaults(func=_cmd_reproduce)

    p = sub.add_parser("list", help="list registered papers and claims")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("data", help="data search path and datasets")
    dsub = p.add_subparsers(dest="data_command", required=True)
    dp = dsub.add_parser("path", help="print the data search path")
    dp.set_defaults(func=_cmd_data_path)
    dp = dsub.add_parser("list", help="list the dataset registry and where each file is found")
    dp.set_defaults(func=_cmd_data_list)
    dp = dsub.add_parser("fetch", help="download a registered dataset and verify its checksums")
    dp.add_argument("name", help="dataset name (see `workbench data list`)")
    dp.add_argument("--file", action="append", help="only this file of the dataset (repeatable)")
    dp.add_argument("--dest", default=None, help="root directory (default: first $WORKBENCH_DATA dir or the cache)")
    dp.add_argument("--base-url", default=None, help="mirror URL directory replacing the upstream one")
    dp.add_argument("--force", action="store_true", help="download even if a verified copy exists")
    dp.add_argument("--no-progress", action="store_true", help="no progress bar")
    dp.set_defaults(func=_cmd_data_fetch)

    from .aqm import replay as aqm_replay

    p = sub.add_parser("aqm", help="AQM packet-level tools")
    ap = p.add_subparsers(dest="aqm_command", required=True).add_parser(
        "replay", help="replay a flow file (.cm) on a leaf-spine: per-flow FCTs to CSV")
    aqm_replay.add_arguments(ap)
    ap.set_defaults(func=aqm_replay.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError, ConnectionError) as exc:
        print(f"workbench: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
