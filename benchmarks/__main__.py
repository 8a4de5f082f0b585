"""Run every benchmark (or those whose module or name contains an argument) and print measured vs target.

Usage: ``python -m benchmarks [FILTER ...]``. Exit status 0 even when a target is missed: the table is the report.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

from . import GiB, MiB


def _fmt(value: float, unit: str) -> str:
    if unit == "bytes":
        return f"{value / GiB:.2f} GiB" if value >= GiB else f"{value / MiB:.1f} MiB"
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "ms":
        return f"{value:.2f} ms"
    return f"{value:,.0f} {unit}"


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    rows = []
    for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda i: i.name):
        if not info.name.startswith("bench_"):
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        for bench in module.BENCHMARKS:
            label = f"{info.name[6:]}: {bench.name}"
            if argv and not any(a in label for a in argv):
                continue
            print(f"running {label} ...", file=sys.stderr, flush=True)
            measured = bench.run()
            op = ">=" if bench.higher else "<="
            rows.append(
                (
                    label,
                    _fmt(measured, bench.unit),
                    f"{op} {_fmt(bench.target, bench.unit)}",
                    "met" if bench.met(measured) else "MISSED",
                )
            )
    width = max((len(r[0]) for r in rows), default=10)
    print(f"{'benchmark':<{width}}  {'measured':>14}  {'target':>16}  result")
    for label, measured, target, verdict in rows:
        print(f"{label:<{width}}  {measured:>14}  {target:>16}  {verdict}")
    missed = sum(r[3] == "MISSED" for r in rows)
    print(f"\n{len(rows) - missed} of {len(rows)} targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
