"""The ``workbench`` command.

``workbench reproduce [--paper ID ...] [--out DIR] [--no-figures] [--quick]``
    Run every registered claim headless with a progress bar, print the scoreboard, write ``DIR/scoreboard.json``,
    ``DIR/scoreboard.md``, ``DIR/scoreboard.html`` (claims tables and figures, self-contained) and every reproduction
    figure (HTML; PNG and SVG where Chromium is present). Exits 1 if a
    claim errored or landed on a verdict other than the one the registry expects.
    Also writes ``DIR/fidelity.json`` and ``DIR/fidelity.md`` and a "Fidelity" section of the report: every engine
    behind the chosen papers' panels against its independent references (``--no-fidelity`` skips it).
``workbench validate [--engine NAME ...] [--quick]``
    Print the fidelity table (:mod:`workbench.fidelity`): per engine, metric and source, the points, the median and
    worst signed error and the envelope the reference points cover; engines without an independent reference say
    so. Cached like the claims (an edited model recomputes its engine's points).
``workbench list``
    List the registered papers and claims.
``workbench new paper NAME [--title T] [--citation C] [--dry-run] [--no-execute]``
    Scaffold a new paper (:mod:`workbench.scaffold`): its record, an experiment, a claim, a notebook pair (executed)
    and tests that already run and pass; refuses a bad or taken name; ``--dry-run`` lists the files.
``workbench dashboard [--port P] [--dir DIR] [--scoreboard FILE] [--build-only]``
    Build one Voilà app per paper (its panel, no code) and a landing page with verdict counts, and serve them on
    127.0.0.1.
``workbench workload {generate,describe,convert,compare} ...``
    Workload files for serving benchmarks from the shell (see ``workbench workload --help``).
``workbench data path``
    Show the data search path.
``workbench data list``
    List the dataset registry: each dataset's files, where they are found on the search path, license and upstream.
``workbench data fetch NAME [--file F ...] [--dest DIR] [--base-url URL] [--force] [--no-progress] [--timeout S]``
    Download a registered dataset from upstream with a progress bar, resuming a dropped or stalled download, and
    verify its size and sha256 (a mismatch deletes the partial file and says so); files with no published checksum
    get a trust-on-first-use sha256 record.
``workbench sweep list`` / ``workbench sweep show NAME``
    The registered experiments; one experiment's parameters with units, defaults and allowed values.
``workbench sweep run NAME [--grid PARAM=V1,V2 ...] [--seeds N] [--scheduler ADDR | --serial] [--out FILE]``
    Run an experiment over the grid x seeds (cached and resumable, :func:`workbench.experiments.sweep`) on the local
    Dask cluster, ``$WORKBENCH_SCHEDULER`` or ``--scheduler``; print the table, write ``FILE`` (``.parquet`` or
    ``.csv``). Exits 1 if any point failed (the failures and their tracebacks go to stderr).

Path arguments are checked before any work starts; errors (bad arguments, network failures, a full disk) are one
line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ._paths import out_dir

__all__ = ["main"]


def _cmd_reproduce(args: argparse.Namespace) -> int:
    import plotly.io as pio

    from . import fidelity as fidelity_mod
    from . import reproductions as rep
    from .viz.export import write_figures

    out = out_dir("--out", args.out)
    scale: rep.Scale = "quick" if args.quick else "full"
    registry = rep.load_all()
    claims = registry.select_claims(args.paper)  # validates the ids
    papers = list(
        dict.fromkeys([c.paper.id for c in claims] + [f.paper.id for f in registry.select_figures(args.paper)])
    )
    t0 = time.perf_counter()
    client = False if args.serial else None
    runs = rep.run_papers(papers, scale, figures=not args.no_figures, client=client, progress=True)
    results = [r for run in runs for r in rep.paper_results(run)]
    frame = rep.scoreboard_frame(results)
    with_pd_options(lambda: print("\n" + frame.to_string(index=False, max_colwidth=70) + "\n"))
    json_path, md_path = rep.write_scoreboard(results, out)
    print(f"scoreboard: {json_path}  {md_path}")
    figs = {
        f"{run.paper}/{name}": pio.from_json(js, skip_invalid=True) for run in runs for name, js in run.figures.items()
    }
    figure_errors = [(f"{run.paper}/{name}", err) for run in runs for name, err in run.figure_errors.items()]
    if not args.no_figures:
        report = write_figures(figs, out / "figures")
        print(f"figures: {len(report.written)} files written, {len(report.unchanged)} unchanged, in {out / 'figures'}")
        if report.skipped_reason:
            print(report.skipped_reason)
    fidelity, fidelity_failed = None, False
    if not args.no_fidelity:
        try:
            fidelity = _fidelity_for(registry, papers, args.paper is None, scale)
        except Exception as exc:  # reported, and makes the command exit non-zero; the claims are still written
            print(f"FIDELITY FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
            fidelity_failed = True
        else:
            fj, fm = fidelity_mod.write(fidelity, out)
            print(f"fidelity: {fj}  {fm} ({fidelity.engine.nunique()} engines)")
    html_path = rep.write_report(results, figs, out / "scoreboard.html", fidelity=fidelity)
    print(f"report: {html_path} (self-contained, opens offline)")
    print("time per paper (s, claims + figures; 'cached' when the tree is unchanged since the last run):")
    for run in sorted(runs, key=lambda r: -(r.claims_s + r.figures_s)):
        how = "cached" if run.cached else "computed"
        print(f"  {run.paper:<14} {run.claims_s:7.1f} + {run.figures_s:6.1f}  {how}")
    counts = frame["verdict"].value_counts().to_dict()
    print("verdicts: " + ", ".join(f"{k}: {v}" for k, v in counts.items()) + f"  ({time.perf_counter() - t0:.1f} s)")
    bad = [r for r in results if not r.as_expected]
    for r in bad:
        what = (
            f"error: {r.error}"
            if r.error
            else f"verdict {r.verdict.value!r}, registry expects {r.claim.expected.value!r}"
        )
        print(f"UNEXPECTED {r.claim.key}: {what}", file=sys.stderr)
    for key, err in figure_errors:
        print(f"FIGURE FAILED {key}: {err}", file=sys.stderr)
    return 1 if bad or figure_errors or fidelity_failed else 0


def _fidelity_for(registry, papers: list[str], every: bool, scale: str):
    """The fidelity table of every engine (``every``) or of the engines behind ``papers``' panels and experiments."""
    from . import fidelity

    if every:
        return fidelity.fidelity_table(scale=scale)
    names: dict[str, None] = {}
    for pid in papers:
        paper = registry.papers[pid]
        for key in [paper.panel] if paper.panel else []:
            names.update(dict.fromkeys(fidelity.PANELS.get(key, ())))
        for exp in paper.experiments:
            names.update(dict.fromkeys(fidelity.EXPERIMENTS.get(exp, ())))
    return fidelity.fidelity_table(list(names), scale=scale)


def _cmd_validate(args: argparse.Namespace) -> int:
    from . import fidelity

    names = args.engine or list(fidelity.ENGINES)
    for n in names:
        fidelity.engine(n)  # validates every name before any work
    t0 = time.perf_counter()
    table = fidelity.fidelity_table(names, scale="quick" if args.quick else "full")
    print(fidelity.to_text(table))
    print(f"({time.perf_counter() - t0:.1f} s; signed error = (model - reference) / reference)")
    return 0


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


def _cmd_new_paper(args: argparse.Namespace) -> int:
    from .scaffold import plan_paper, write_paper

    plan = plan_paper(args.name, title=args.title, citation=args.citation)
    root = plan.fidelity_file.parents[2]
    rel = [p.relative_to(root).as_posix() for p, _ in plan.files]
    if args.dry_run:
        print(f"workbench new paper {plan.paper} would write:")
        for r in [*rel, plan.notebook.relative_to(root).as_posix()]:
            print(f"  {r}")
        print(f"and add {plan.experiment!r} to {plan.fidelity_file.relative_to(root).as_posix()} (EXPERIMENTS)")
        return 0
    print(f"writing paper {plan.paper!r} (experiment {plan.experiment!r}); executing its notebook ...", flush=True)
    for path in write_paper(plan, execute=not args.no_execute):
        print(f"  {path.relative_to(root).as_posix()}")
    print(
        f"next: pytest tests/reproductions/test_{plan.paper}.py; workbench reproduce --paper {plan.paper} --quick; "
        "then replace the example study with the paper's (CONTRIBUTING.md, 'Add a paper')"
    )
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
            print(f"  - {f.name} ({data.checksum_status(f, where)}): {where if where else 'not on the search path'}")
    return 0


def _cmd_data_fetch(args: argparse.Namespace) -> int:
    from . import data

    dest = out_dir("--dest", args.dest) if args.dest is not None else None
    paths = data.fetch(
        args.name,
        args.file or None,
        dest=dest,
        base_url=args.base_url,
        progress=not args.no_progress,
        force=args.force,
        timeout_s=args.timeout,
    )
    for p in paths:
        print(p)
    return 0


def _cmd_dashboard(args: argparse.Namespace) -> int:
    import subprocess

    from . import dashboards

    out = Path(args.dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--dir {out}: exists and is not a directory")
    # the measured verdicts of the last `make reproduce` (out/scoreboard.json) unless another file is named
    default_board = Path("out") / "scoreboard.json"
    scoreboard = Path(args.scoreboard) if args.scoreboard else (default_board if default_board.is_file() else None)
    paths = dashboards.build(out, scoreboard=scoreboard)
    print(f"dashboards: {len(paths)} notebooks in {out}")
    if args.build_only:
        return 0
    cmd, env = dashboards.voila_command(out, args.port)
    print(f"serving on http://127.0.0.1:{args.port}/voila/render/index.ipynb (Ctrl+C stops)")
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 0


def _cmd_sweep_list(args: argparse.Namespace) -> int:
    from . import experiments

    for name in experiments.names():
        exp = experiments.get(name)
        print(f"{name} (version {exp.version}): {exp.description}")
    return 0


def _cmd_sweep_show(args: argparse.Namespace) -> int:
    from . import experiments

    exp = experiments.get(args.name)
    print(f"{exp.name} (version {exp.version}): {exp.description}")
    with_pd_options(lambda: print(exp.describe().to_string(index=False)))
    return 0


def _parse_grid(exp, items: list[str]) -> dict:
    grid: dict = {}
    for item in items:
        name, sep, values = item.partition("=")
        if not sep:
            raise ValueError(f"--grid takes PARAM=V1,V2,...; got {item!r}")
        param = exp.param(name.strip())
        if param.name in grid:
            raise ValueError(f"--grid gives parameter {param.name!r} twice")
        try:
            grid[param.name] = [param.parse(v) for v in values.split(",") if v.strip()]
        except TypeError as exc:  # e.g. 2.5 for an integer parameter: a bad value on the command line
            raise ValueError(str(exc)) from None
        if not grid[param.name]:
            raise ValueError(f"the grid gives no values for parameter {param.name!r}")
    return grid


def _cmd_sweep_run(args: argparse.Namespace) -> int:
    from . import experiments

    exp = experiments.get(args.name)
    grid = _parse_grid(exp, args.grid or [])
    out = Path(args.out).expanduser() if args.out else None
    if out is not None:
        if out.suffix not in (".parquet", ".csv"):
            raise ValueError(f"--out must end in .parquet or .csv, got {out.name!r}")
        out_dir("--out", str(out.parent))
        if out.exists() and not args.force:
            raise FileExistsError(f"--out {args.out!r} exists; pass --force to replace it")
    client = False if args.serial else args.scheduler
    cache = "refresh" if args.refresh else not args.no_cache
    t0 = time.perf_counter()
    run = experiments.run_sweep(
        exp, grid, args.seeds, base_seed=args.base_seed, client=client, cache=cache, progress=not args.no_progress
    )
    df = run.table
    with_pd_options(lambda: print(df.to_string(index=False, max_rows=60)))
    print(
        f"{run.total} point x seed runs: {run.computed} computed, {run.cache_hits} from the cache, "
        f"{len(run.failures)} failed ({time.perf_counter() - t0:.1f} s)"
    )
    if out is not None:
        from .cache import atomic_path

        out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(out, overwrite=args.force) as tmp:
            df.to_parquet(tmp, index=False) if out.suffix == ".parquet" else df.to_csv(tmp, index=False)
        print(f"wrote {out}")
    if len(run.failures):
        print(failures_table(run.failures, list(exp.defaults())), file=sys.stderr)
        if getattr(args, "debug", False):
            for _, failure in run.failures.iterrows():
                print(f"\n{failure['traceback']}", file=sys.stderr)
    return 0 if run.ok else 1


def failures_table(failures, params: list[str]) -> str:
    """The failed points of a sweep as one table: the point's parameters, its seed and the reason (the error's last
    line: for a point the model refuses, the parameter and its allowed range); ``--debug`` adds the tracebacks."""

    def reason(tb: str) -> str:
        lines = [ln.strip() for ln in str(tb).strip().splitlines() if ln.strip()]
        return lines[-1] if lines else "unknown error"

    import pandas as pd

    table = failures[[c for c in (*params, "seed") if c in failures.columns]].copy()
    table["reason"] = failures["traceback"].map(reason)
    with pd.option_context("display.max_colwidth", 160, "display.width", 240):
        body = table.to_string(index=False, max_rows=200)
    return (
        f"{len(table)} failed point x seed run(s) (the rest of the sweep completed; --debug shows tracebacks):\n{body}"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="workbench", description=__doc__.split("\n")[0])
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks instead of one-line errors")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("reproduce", help="run all reproductions headless: scoreboard and figures")
    p.add_argument("--paper", action="append", help="only this paper id (repeatable); see `workbench list`")
    p.add_argument("--out", default="out", help="output directory (default: out/)")
    p.add_argument("--no-figures", action="store_true", help="skip writing figures")
    p.add_argument("--quick", action="store_true", help="run the small configurations the test suite uses")
    p.add_argument("--serial", action="store_true", help="run the papers one after another in this process")
    p.add_argument("--no-fidelity", action="store_true", help="skip the fidelity table (out/fidelity.*)")
    p.set_defaults(func=_cmd_reproduce)

    p = sub.add_parser("validate", help="every engine against its independent references: the fidelity table")
    p.add_argument("--engine", action="append", help="only this engine (repeatable; default: all)")
    p.add_argument("--quick", action="store_true", help="the smaller simulations where an engine has them")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("dashboard", help="serve one Voilà app per paper and a landing page on 127.0.0.1")
    p.add_argument("--port", type=int, default=8866, help="port on 127.0.0.1 (default 8866)")
    p.add_argument("--dir", default="out/dashboards", help="where the dashboard notebooks are written")
    p.add_argument(
        "--scoreboard",
        default=None,
        help="scoreboard.json whose verdicts the landing page shows (default: out/scoreboard.json when it exists)",
    )
    p.add_argument("--build-only", action="store_true", help="write the notebooks, do not serve")
    p.set_defaults(func=_cmd_dashboard)

    from .workload_cli import add_parser as add_workload_parser

    add_workload_parser(sub)

    p = sub.add_parser("list", help="list registered papers and claims")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("new", help="scaffold a new paper: record, experiment, claim, notebook pair and tests")
    np_ = p.add_subparsers(dest="new_command", required=True).add_parser(
        "paper", help="write a paper's files that already run and pass (workbench/templates/paper/)"
    )
    np_.add_argument("name", help="the paper's id and module name: lowercase letters, digits and '_'")
    np_.add_argument("--title", default="", help="the paper's title (default: from the name)")
    np_.add_argument("--citation", default="", help="authors, venue, year")
    np_.add_argument("--dry-run", action="store_true", help="list the files it would write, write nothing")
    np_.add_argument("--no-execute", action="store_true", help="pair the notebook without executing it")
    np_.set_defaults(func=_cmd_new_paper)

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
    dp.add_argument("--force", action="store_true", help="download again even if a verified copy exists")
    dp.add_argument("--timeout", type=float, default=60.0, help="seconds without data before a retry (default 60)")
    dp.add_argument("--no-progress", action="store_true", help="no progress bar")
    dp.set_defaults(func=_cmd_data_fetch)

    p = sub.add_parser("sweep", help="experiments: list, show, run a parameter sweep (Dask, cached, resumable)")
    ssub = p.add_subparsers(dest="sweep_command", required=True)
    sp = ssub.add_parser("list", help="list the registered experiments")
    sp.set_defaults(func=_cmd_sweep_list)
    sp = ssub.add_parser("show", help="an experiment's parameters: units, defaults, allowed values")
    sp.add_argument("name", help="experiment name (see `workbench sweep list`)")
    sp.set_defaults(func=_cmd_sweep_show)
    sp = ssub.add_parser("run", help="run an experiment over a grid x seeds")
    sp.add_argument("name", help="experiment name (see `workbench sweep list`)")
    sp.add_argument(
        "--grid",
        action="append",
        metavar="PARAM=V1,V2",
        help="values of one parameter (repeatable; "
        "the sweep is their Cartesian product, other parameters at their defaults)",
    )
    sp.add_argument("--seeds", type=int, default=1, help="seeds per point (default 1)")
    sp.add_argument("--base-seed", type=int, default=0, help="root seed of every point's stream (default 0)")
    sp.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDR",
        help="Dask scheduler address, e.g. tcp://host:8786 (default: $WORKBENCH_SCHEDULER, else a local cluster)",
    )
    sp.add_argument("--serial", action="store_true", help="run in this process, no cluster")
    sp.add_argument("--out", default=None, metavar="FILE", help="write the table to FILE (.parquet or .csv)")
    sp.add_argument("--force", action="store_true", help="replace FILE if it exists")
    sp.add_argument("--refresh", action="store_true", help="recompute every point and rewrite the cache")
    sp.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    sp.add_argument("--no-progress", action="store_true", help="no progress bar")
    sp.set_defaults(func=_cmd_sweep_run)

    from .aqm import replay as aqm_replay

    p = sub.add_parser("aqm", help="AQM packet-level tools")
    ap = p.add_subparsers(dest="aqm_command", required=True).add_parser(
        "replay", help="replay a flow file (.cm) on a leaf-spine: per-flow FCTs to CSV"
    )
    aqm_replay.add_arguments(ap)
    ap.set_defaults(func=aqm_replay.run)
    return parser


def _exit_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C (``finally`` blocks and the atomic writer's cleanup run, so no temporary file is
    left behind) instead of killing the process where it stands. Only in the main thread of the main interpreter."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _exit_on_sigterm()
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("workbench: interrupted (a partial download is kept and resumed by the next fetch)", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        if isinstance(exc, (ValueError, OSError)):  # bad input: values, paths, the network, a full disk
            print(f"workbench: error: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        # a failure of ours: one line, status 1 (``workbench --debug ...`` shows the traceback)
        print(
            f"workbench: error: {type(exc).__name__}: {' '.join(str(exc).split())} (run with --debug for the "
            "traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
