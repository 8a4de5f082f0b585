"""Compare two per-flow FCT CSVs of the same connection matrix (e.g. ``scripts/ns3_replay.py`` and
``workbench aqm replay``) on the nine statistics of :func:`workbench.aqm.replay.fct_statistics` (FCT mean, p50, p99
per size class), with the relative difference of the first to the second.

    PYTHONPATH=. WORKBENCH_DATA=/work/shared/data /work/main/.venv/bin/python scripts/ns3_compare.py \\
        ns3_25ms.csv wb_25ms.csv --names ns-3 workbench

A CSV needs ``size_bytes`` and ``fct_s``; ``finished`` is taken as ``fct_s`` present when the column is absent (the
workbench's replay CSV). The two files must list the same flows in the same order (same sizes).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.aqm.replay import fct_statistics


def load(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path)
    missing = {"size_bytes", "fct_s"} - set(df.columns)
    if missing:
        raise ValueError(f"{path}: needs columns size_bytes and fct_s; missing {sorted(missing)}")
    if "finished" not in df:
        df["finished"] = df["fct_s"].notna()
    return df


def compare(a: pd.DataFrame, b: pd.DataFrame, names: tuple[str, str]) -> pd.DataFrame:
    """One row per size class and statistic: both values (us) and the relative difference of ``a`` to ``b``."""
    if len(a) != len(b) or not np.array_equal(a["size_bytes"].to_numpy(), b["size_bytes"].to_numpy()):
        raise ValueError("the two CSVs must list the same flows (same sizes, same order)")
    sa, sb = fct_statistics(a), fct_statistics(b)
    rows = []
    for (_, ra), (_, rb) in zip(sa.iterrows(), sb.iterrows()):
        for stat in ("mean_s", "p50_s", "p99_s"):
            va, vb = ra[stat] * 1e6, rb[stat] * 1e6
            rows.append(
                {
                    "size_class": ra["size_class"],
                    "stat": stat[:-2],
                    f"{names[0]}_us": round(va, 1),
                    f"{names[1]}_us": round(vb, 1),
                    "rel_diff": round(va / vb - 1.0, 3),
                    f"{names[0]}_unfinished": int(ra["unfinished"]),
                    f"{names[1]}_unfinished": int(rb["unfinished"]),
                }
            )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ns3_compare.py", description=__doc__.splitlines()[0])
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    p.add_argument("--names", nargs=2, default=("ns-3", "workbench"), metavar=("A", "B"))
    args = p.parse_args(argv)
    print(compare(load(args.a), load(args.b), tuple(args.names)).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
