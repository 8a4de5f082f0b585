"""``workbench workload``: generate, describe, convert and compare LLM-serving workloads from the shell.

``workbench workload generate {servegen|burstgpt|renewal} [options] --out FILE``
    Generate a workload block by block (:mod:`workbench.workloads.streaming`) and stream it to ``FILE`` in the format
    its name or ``--format`` selects: ``mooncake`` JSONL (``x.mooncake.jsonl``), ``burstgpt`` CSV
    (``x.burstgpt.csv``), timestamped ``csv`` / ``jsonl`` (every column, seconds), ``parquet``. Same ``--seed``, same
    bytes, whatever ``--chunk``; and the same requests as the Python generator of the source
    (``servegen.compose(..., seed=S)``, ``burstgpt.generate(..., seed=S)``): one block stream per source.
``workbench workload describe FILE [--window 20m] [--json] [--figures DIR]``
    Rate and hour-of-day profile, gap CV and IDC, per-window Gamma/Weibull fits, lengths and their fits, input/output
    correlation, conversations, clients and failures.
``workbench workload convert IN OUT [--format F] [--force]``
    Between every format the loaders read and the exporters write; prints what the conversion loses.
``workbench workload compare A B [--json]``
    Two descriptions side by side with ratios (B / A).

Durations take units (``90s``, ``20m``, ``1h``, ``1d``; a bare number is seconds); ``--start`` also takes a clock
time (``14:00``, ``14:30:15``). Errors are one line on stderr; exit status 0 on success, 2 for bad arguments or bad
input (a malformed file, an existing output without ``--force``), 1 for anything else.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

__all__ = ["add_parser", "parse_duration", "parse_clock"]

_UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


#: The most requests ``workload generate`` writes to one file (about 50 GB of CSV): a bound on a mistyped duration.
MAX_GENERATED_REQUESTS = 1_000_000_000
#: The longest duration the workload commands accept (ten years): a bound on a mistyped value.
MAX_DURATION_S = 10 * 365 * 86400.0


def parse_duration(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``20m``, ``1.5h``, ``1d``.

    Examples
    --------
    >>> parse_duration("90s"), parse_duration("20m"), parse_duration("1.5h")
    (90.0, 1200.0, 5400.0)
    """
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|m|min|h|d)?\s*", str(text))
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration (e.g. 90s, 20m, 1h, 1d)")
    seconds = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    if not seconds <= MAX_DURATION_S:
        raise argparse.ArgumentTypeError(f"{text!r} is longer than ten years ({MAX_DURATION_S:.4g} s)")
    return seconds


def parse_clock(text: str) -> float:
    """Seconds from 00:00 of day 1 for ``14:00``, ``14:30:15``, or a duration (``50400``, ``14h``, ``1d2h``).

    Examples
    --------
    >>> parse_clock("14:00"), parse_clock("14h"), parse_clock("01:00:30")
    (50400.0, 50400.0, 3630.0)
    """
    m = re.fullmatch(r"\s*(\d{1,3}):(\d{2})(?::(\d{2}(?:\.\d+)?))?\s*", str(text))
    if m:
        h, mi, sec = int(m.group(1)), int(m.group(2)), float(m.group(3) or 0)
        if mi > 59 or sec >= 60:
            raise argparse.ArgumentTypeError(f"{text!r} is not a clock time HH:MM[:SS]")
        return h * 3600.0 + mi * 60.0 + sec
    return parse_duration(text)


def _guard(fn):
    """Bad input (ValueError, OSError) goes on to ``workbench``'s handler (exit 2); anything else is one line and
    exit 1, so a shell script sees 0, 1 or 2 and never a traceback."""

    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except (ValueError, OSError, KeyboardInterrupt):
            raise
        except Exception as exc:  # the last resort: one line, status 1
            print(f"workbench: error: {type(exc).__name__}: {' '.join(str(exc).split())}", file=sys.stderr)
            return 1

    return run


def _bar(total: float, unit: str, disable: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit=unit, unit_scale=True, delay=1.0, disable=disable, file=sys.stderr, leave=False)


def _output_options(args: argparse.Namespace) -> dict:
    opts = {"time_resolution_s": args.time_resolution, "hash_block_tokens": args.hash_block_tokens}
    if args.model_label is not None:
        opts["model"] = args.model_label
    if args.crlf:
        opts["line_terminator"] = "\r\n"
    return opts


def _out_format(args: argparse.Namespace) -> str:
    from .workloads.formats import for_path

    return args.format or for_path(args.out).name


def _plan(args: argparse.Namespace):
    from .workloads import streaming as S

    if args.source == "servegen":
        from .workloads import servegen as sg

        if (args.rate is None) + (args.mean_rate is None) == 0:
            raise ValueError("give --rate (a constant rate) or --mean-rate (the data's curve scaled), not both")
        pool = sg.load_pool(args.model)
        if args.top_clients is not None or args.has_lengths:
            pool = pool.filter(top=args.top_clients, has_lengths=True if args.has_lengths else None)
        return S.servegen_plan(
            pool, start_s=args.start, duration_s=args.duration, rate_rps=args.rate, mean_rate_rps=args.mean_rate
        )
    if args.source == "burstgpt":
        from .workloads import burstgpt as B
        from .workloads.convert import read_table

        if args.fit is not None:
            if args.save_params:  # before the fit: an existing file needs --force, like --out
                from .cache import check_target

                check_target(Path(args.save_params).expanduser(), overwrite=args.force)
            model = B.fit_model(read_table(args.fit), window_s=args.window)
            if args.save_params:
                saved = B.save_params(model, args.save_params, overwrite=args.force)
                print(f"parameters: {saved}", file=sys.stderr)
        else:
            model = B.load_params(args.params)
        return S.burstgpt_plan(model, rate_scale=args.rate_scale, duration_s=args.duration)
    from .workloads.convert import read_table

    if args.lengths is None and (args.input_tokens is None or args.output_tokens is None):
        raise ValueError("renewal needs --lengths TRACE or both --input-tokens and --output-tokens")
    return S.renewal_plan(
        rate_rps=args.rate,
        cv=args.cv,
        duration_s=args.duration,
        family=args.family,
        input_tokens=args.input_tokens,
        output_tokens=args.output_tokens,
        lengths=read_table(args.lengths) if args.lengths else None,
    )


def _cmd_generate(args: argparse.Namespace) -> int:
    from .workloads import streaming as S
    from .workloads.export import write_stream

    fmt = _out_format(args)
    out = Path(args.out)
    from .cache import check_target

    check_target(out, overwrite=args.force)  # before any work: regular files only, --force to replace
    plan = _plan(args)
    if not plan.expected_requests <= MAX_GENERATED_REQUESTS:
        raise ValueError(
            f"this would generate about {plan.expected_requests:.3g} requests over {plan.duration_s:.3g} s, more "
            f"than the {MAX_GENERATED_REQUESTS:,} one file may hold; shorten --duration or lower the rate"
        )
    chunk_blocks = max(1, round(args.chunk / plan.block_s)) if args.chunk else plan.n_blocks
    with _bar(round(plan.expected_requests), "req", args.no_progress) as bar:
        chunks = S.iter_chunks(plan, args.seed, chunk_blocks=chunk_blocks, progress=bar.update)
        path, n = write_stream(chunks, out, fmt, overwrite=args.force, **_output_options(args))
    print(
        f"{path}: {n} requests over {plan.duration_s:g} s ({n / plan.duration_s:.4g} req/s), format {fmt}; "
        f"{plan.description}; seed {args.seed}"
    )
    return 0


def _describe_table(path: str, args: argparse.Namespace):
    from .workloads import describe as D
    from .workloads.convert import read_table

    df = read_table(path)
    return df, D.describe(df, window_s=args.window)


def _print_table(table, fmt_cols) -> None:
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_rows", 500, "display.float_format", "{:.4g}".format):
        print(table[fmt_cols].to_string(index=False))


def _cmd_describe(args: argparse.Namespace) -> int:
    from .workloads import describe as D

    df, table = _describe_table(args.file, args)
    if args.figures:
        from ._paths import out_dir

        _write_figures(df, out_dir("--figures", args.figures), args.window)
    if args.json:
        print(json.dumps({"file": args.file, **D.as_json(table)}, indent=1))
    else:
        print(f"{args.file}")
        _print_table(table, ["section", "metric", "value", "unit"])
    return 0


def _write_figures(df, out: Path, window_s: float) -> None:
    from .viz import workloads as W
    from .viz.export import write_figures
    from .workloads import characterize as C
    from .workloads.trace_analysis import length_curve

    name = Path(str(df.attrs.get("source", "trace"))).name or "trace"
    span = float(df["arrival_s"].iloc[-1] - df["arrival_s"].iloc[0])
    figs = {
        "arrivals_over_time": W.arrivals_over_time({name: C.rate_series(df, 3600.0 if span > 6 * 3600 else 60.0)}),
        "hour_of_day": W.hour_of_day({name: C.time_profile(df, "hour")}),
        "window_fits": W.window_fits({name: C.window_gamma_fits(df, window_s)}, window_s=window_s),
        "input_lengths": W.length_ccdf({name: length_curve(df, "input_tokens")}, title="Request lengths"),
        "output_lengths": W.length_ccdf({name: length_curve(df, "output_tokens")}, title="Response lengths"),
        "request_response": W.request_response({name: C.request_response(df)}),
    }
    report = write_figures(figs, out)
    print(f"figures: {len(report.written)} files in {out}", file=sys.stderr)


def _cmd_compare(args: argparse.Namespace) -> int:
    from .workloads import describe as D

    a = _describe_table(args.a, args)[1]
    b = _describe_table(args.b, args)[1]
    table = D.compare(a, b)
    if args.json:
        print(json.dumps({"a": args.a, "b": args.b, **D.as_json(table)}, indent=1))
    else:
        print(f"A: {args.a}\nB: {args.b}")
        _print_table(table, ["section", "metric", "a", "b", "ratio", "unit"])
    return 0


def _cmd_convert(args: argparse.Namespace) -> int:
    from .workloads.convert import convert

    fmt = _out_format(args)
    path, n, lost = convert(args.src, args.out, fmt=fmt, overwrite=args.force, **_output_options(args))
    print(f"{path}: {n} requests, format {fmt}")
    for line in lost:
        print(f"lost: {line}")
    if not lost:
        print("lost: nothing")
    return 0


class _WritableNames:
    """The names of the writable formats, looked up only when argparse checks or prints them: importing
    :mod:`workbench.workloads.formats` (scipy.stats among its imports) costs about 0.6 s of CPU, which every other
    ``workbench`` command (``workbench aqm replay`` among them) would otherwise pay at start-up."""

    def _names(self) -> tuple[str, ...]:
        from .workloads.formats import writable

        return tuple(f.name for f in writable())

    def __iter__(self):
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __len__(self) -> int:
        return len(self._names())


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format",
        choices=_WritableNames(),
        metavar="FORMAT",  # not the choices: argparse would list them (importing the formats) at start-up
        default=None,
        help="output format: %(choices)s (default: from the file name: .mooncake.jsonl, .burstgpt.csv, .csv, .jsonl, "
        ".parquet)",
    )
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    p.add_argument(
        "--time-resolution",
        type=parse_duration,
        default=None,
        metavar="DUR",
        help="burstgpt: floor timestamps to this resolution (1s as the release files; default: ms)",
    )
    p.add_argument(
        "--hash-block-tokens",
        type=int,
        default=None,
        metavar="N",
        help="mooncake: synthetic hash_ids of N-token prefix blocks (512 for vLLM's timed-trace loader)",
    )
    p.add_argument(
        "--model-label",
        default=None,
        help="burstgpt: Model column for rows without one (default GPT-4, what vLLM's loader keeps)",
    )
    p.add_argument("--crlf", action="store_true", help="burstgpt: CRLF line ends, as the release files")


def _plain_doc() -> str:
    """The module docstring without reStructuredText markup, for ``--help``."""
    return re.sub(r":\w+:`~?([^`]+)`", r"\1", __doc__).replace("``", "")


def add_parser(sub) -> None:
    """Register ``workload`` and its subcommands on the ``workbench`` subparsers ``sub``."""
    p = sub.add_parser(
        "workload",
        help="generate, describe, convert and compare LLM-serving workload files",
        description=_plain_doc().split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(_plain_doc().split("\n\n")[1:]),
    )
    wsub = p.add_subparsers(dest="workload_command", required=True)

    g = wsub.add_parser("generate", help="generate a workload file (servegen, burstgpt or renewal)")
    gsub = g.add_subparsers(dest="source", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", required=True, help="output file")
    common.add_argument("--seed", type=int, default=0, help="random seed (default 0): same seed, same bytes")
    common.add_argument(
        "--chunk",
        type=parse_duration,
        default=3600.0,
        metavar="DUR",
        help="generate and write this much time at once (memory; the file is the same; 0: all)",
    )
    common.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_output_options(common)

    s = gsub.add_parser("servegen", parents=[common], help="ServeGen per-client composition (Alibaba Model Studio)")
    s.add_argument("--model", default="m-large", help="m-large, m-mid, m-small, mm-image, deepseek-r1")
    s.add_argument("--start", type=parse_clock, default=0.0, metavar="TIME", help="span start: 14:00, 14h (day 1)")
    s.add_argument("--duration", type=parse_duration, required=True, metavar="DUR", help="span length: 1h, 90m")
    s.add_argument("--rate", type=float, default=None, metavar="RPS", help="constant aggregate rate (req/s)")
    s.add_argument(
        "--mean-rate",
        type=float,
        default=None,
        metavar="RPS",
        help="the data's own rate curve scaled to this mean (req/s); neither: the data's own rates",
    )
    s.add_argument("--top-clients", type=int, default=None, metavar="K", help="only the K busiest clients")
    s.add_argument("--has-lengths", action="store_true", help="only clients with released length statistics")

    b = gsub.add_parser("burstgpt", parents=[common], help="BurstGPT-style: piecewise Gamma windows, Zipf lengths")
    src = b.add_mutually_exclusive_group(required=True)
    src.add_argument("--fit", metavar="TRACE", help="fit the model to this trace (any format describe reads)")
    src.add_argument("--params", metavar="FILE", help="model JSON (from --save-params, or from_params keywords)")
    b.add_argument("--save-params", metavar="FILE", help="with --fit: write the fitted model as JSON")
    b.add_argument("--window", type=parse_duration, default=1200.0, metavar="DUR", help="fit window (default 20m)")
    b.add_argument("--rate-scale", type=float, default=1.0, help="multiply every window's rate (time compressed)")
    b.add_argument(
        "--duration",
        type=parse_duration,
        default=None,
        metavar="DUR",
        help="generated span (default: the model's; windows repeat when longer)",
    )

    r = gsub.add_parser("renewal", parents=[common], help="stationary Gamma/Weibull renewal arrivals")
    r.add_argument("--rate", type=float, required=True, metavar="RPS", help="mean rate (req/s)")
    r.add_argument("--cv", type=float, default=1.0, help="inter-arrival CV (1: Poisson)")
    r.add_argument("--family", choices=("gamma", "weibull"), default="gamma")
    r.add_argument("--duration", type=parse_duration, required=True, metavar="DUR")
    r.add_argument("--lengths", metavar="TRACE", help="resample (input, output) pairs of this trace")
    r.add_argument(
        "--input-tokens",
        metavar="DIST",
        help="const:N, uniform:LO,HI, lognormal:MEDIAN,SIGMA, exponential:MEAN, zipf:ALPHA,MAX",
    )
    r.add_argument("--output-tokens", metavar="DIST", help="as --input-tokens")
    for q in (s, b, r):
        q.set_defaults(func=_guard(_cmd_generate))

    d = wsub.add_parser("describe", help="characterize a workload file")
    d.add_argument("file")
    d.add_argument("--window", type=parse_duration, default=1200.0, metavar="DUR", help="fit window (default 20m)")
    d.add_argument("--json", action="store_true", help="JSON instead of a table")
    d.add_argument("--figures", metavar="DIR", help="also write the notebook's figures (HTML) to DIR")
    d.set_defaults(func=_guard(_cmd_describe))

    c = wsub.add_parser("convert", help="convert between formats, saying what is lost")
    c.add_argument("src", metavar="IN")
    c.add_argument("out", metavar="OUT")
    _add_output_options(c)
    c.set_defaults(func=_guard(_cmd_convert))

    m = wsub.add_parser("compare", help="two workload files side by side (describe numbers, ratio B / A)")
    m.add_argument("a", metavar="A")
    m.add_argument("b", metavar="B")
    m.add_argument("--window", type=parse_duration, default=1200.0, metavar="DUR", help="fit window (default 20m)")
    m.add_argument("--json", action="store_true", help="JSON instead of a table")
    m.set_defaults(func=_guard(_cmd_compare))
