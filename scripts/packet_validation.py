"""Make and collect the packet-level validation data of ``datasets/validation/packets/`` (see its README).

    # 1. the generated workloads (.cm.gz/.spines.gz) and the workload table
    PYTHONPATH=. python scripts/packet_validation.py workloads
    # 2. run both references on every workload (ns-3: scripts/ns3_replay.py in its own venv; htsim: the driver of
    #    docs/htsim_reference.md), each writing <workload>.csv (size_bytes,start_s,fct_s,finished,...) into a folder
    # 3. the per-flow FCTs of both references, one compressed file per workload, and the runs' counters
    PYTHONPATH=. python scripts/packet_validation.py collect --ns3 runs/ns3 --htsim runs/htsim
    # the first-window-loss case: an incast that fills a port, and one-packet flows arriving while it is full
    PYTHONPATH=. python scripts/packet_validation.py incast
    PYTHONPATH=. python scripts/packet_validation.py collect-incast --ns3 ns3.csv --htsim htsim.csv \
        --htsim-stock-rto htsim_rto10ms.csv

The generated workloads are :func:`workbench.aqm.workload.websearch_matrix` at loads 30, 50, 70 and 90%, seeds 1 and
2, 20 ms of arrivals each, on the 16 x 8-host, 8-spine network of ``fabric-websearch-128``; the two shared files of
that dataset are listed beside them (read from the data search path, never copied).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from workbench import data
from workbench.aqm.cm_files import read_connection_matrix, write_connection_matrix, write_spines
from workbench.aqm.workload import websearch_matrix

OUT = Path(__file__).resolve().parent.parent / "datasets" / "validation" / "packets"
LOADS = (0.3, 0.5, 0.7, 0.9)
SEEDS = (1, 2)
WINDOW_S = 0.020
SHARED = (("ws_128_10g_90_25ms", 0.025), ("ws_128_10g_90_50ms", 0.050))
HOSTS = 128


def _text_sha256(path: Path) -> str:
    raw = path.read_bytes()
    return hashlib.sha256(gzip.decompress(raw) if path.suffix == ".gz" else raw).hexdigest()


def generated_name(load: float, seed: int) -> str:
    return f"ws_128_10g_{round(load * 100)}_{round(WINDOW_S * 1e3)}ms_s{seed}"


def write_workloads(out: Path = OUT) -> pd.DataFrame:
    """Write the generated workloads under ``out/workloads`` and ``out/workloads.csv`` (shared files first)."""
    (out / "workloads").mkdir(parents=True, exist_ok=True)
    rows = []
    for name, window in SHARED:
        rel = f"fabric-websearch-128/{name}"
        cm = data.require(rel + ".cm", hint="workbench data fetch fabric-websearch-128")
        rows.append((name, 0.9, 1, window * 1e3, len(read_connection_matrix(cm)), rel + ".cm", rel + ".spines",
                     _text_sha256(cm)))  # fmt: skip
    for load in LOADS:
        for seed in SEEDS:
            name = generated_name(load, seed)
            flows = websearch_matrix(load, WINDOW_S, seed=seed)
            cm = write_connection_matrix(flows, out / "workloads" / f"{name}.cm.gz", HOSTS)
            write_spines(flows, out / "workloads" / f"{name}.spines.gz")
            rel = f"validation/packets/workloads/{name}"
            rows.append((name, load, seed, WINDOW_S * 1e3, len(flows), rel + ".cm.gz", rel + ".spines.gz",
                         _text_sha256(cm)))  # fmt: skip
    table = pd.DataFrame(rows, columns=["workload", "load", "seed", "window_ms", "flows", "cm", "spines", "cm_sha256"])
    table.to_csv(out / "workloads.csv", index=False)
    return table


def _summary(log: Path) -> dict[str, float]:
    """Counters from a reference run's summary line (ns3_replay.py or the htsim driver), where present."""
    text = log.read_text() if log.is_file() else ""
    found = {}
    for key, pattern in (
        ("wall_s", r"([\d.]+) s wall"),
        ("switch_drops", r"([\d,]+) switch drops"),
        ("ce_marks", r"([\d,]+) CE marks"),
    ):
        m = re.search(pattern, text)
        found[key] = round(float(m.group(1).replace(",", "")), 1) if m else np.nan
    return found


def collect(ns3_dir: Path, htsim_dir: Path, out: Path = OUT) -> pd.DataFrame:
    """Per-flow FCTs of both references into ``out/fct/<workload>.csv.gz`` (integer nanoseconds, in the order of
    the ``.cm``, whose sha256 ``workloads.csv`` records) and their counters into ``out/runs.csv``."""
    table = pd.read_csv(out / "workloads.csv")
    (out / "fct").mkdir(parents=True, exist_ok=True)
    runs = []
    for w in table.itertuples():
        flows = read_connection_matrix(data.require(w.cm))
        cols = {"size_bytes": flows["size_bytes"].to_numpy()}
        for ref, folder in (("ns3", ns3_dir), ("htsim", htsim_dir)):
            df = pd.read_csv(folder / f"{w.workload}.csv")
            if len(df) != len(flows) or not np.array_equal(df["size_bytes"].to_numpy(), cols["size_bytes"]):
                raise ValueError(f"{folder / (w.workload + '.csv')}: not the flows of {w.cm}")
            fct = df["fct_s"].to_numpy(dtype=float)
            cols[f"{ref}_fct_ns"] = pd.array(np.round(fct * 1e9), dtype="Int64")
            runs.append(
                {
                    "workload": w.workload,
                    "reference": {"ns3": "ns-3", "htsim": "htsim"}[ref],
                    "finished": int(np.isfinite(fct).sum()),
                    "flows_with_timeout": int((df["timeouts"] > 0).sum()),
                    "fast_recoveries": int(df["fast_recoveries"].sum()),
                    **_summary(folder / f"{w.workload}.log"),
                }
            )
        text = pd.DataFrame(cols).drop(columns="size_bytes").to_csv(index=False)  # sizes: the .cm (its sha256)
        (out / "fct" / f"{w.workload}.csv.gz").write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))
    result = pd.DataFrame(runs)
    result.to_csv(out / "runs.csv", index=False)
    return result


INCAST = "incast_first_window"


def write_incast(out: Path = OUT) -> Path:
    """The first-window-loss case: 16 hosts of other leaves (8 + 7 i) send 15,000 B (one initial window) each to host
    0 at time 0, through spine i mod 8, so the leaf's port down to host 0 receives 160 packets at up to 8 times its
    rate and stays full for tens of microseconds; 40 one-packet flows from hosts 1-7 (host 0's leaf) to host 0 start
    0.5 us apart from 20.3 us. A one-packet flow whose packet finds the port full gets no ACK at all: no duplicate
    ACK, no RTT sample, so only the initial retransmission timeout brings it back."""
    (out / "mechanisms").mkdir(parents=True, exist_ok=True)
    rows = [(8 + 7 * i, 0, 0.0, 15_000, i % 8) for i in range(16)]
    rows += [(1 + k % 7, 0, (20.3 + 0.5 * k) * 1e-6, 1500, -1) for k in range(40)]
    flows = pd.DataFrame(rows, columns=["src", "dst", "start_s", "size_bytes", "spine"])
    flows.insert(0, "flow_id", np.arange(1, len(flows) + 1))
    cm = write_connection_matrix(flows, out / "mechanisms" / f"{INCAST}.cm", HOSTS)
    write_spines(flows, out / "mechanisms" / f"{INCAST}.spines")
    return cm


def collect_incast(ns3: Path, htsim: Path, htsim_stock_rto: Path, out: Path = OUT) -> pd.DataFrame:
    """The first-window-loss case's per-flow FCTs (integer nanoseconds): ns-3, htsim with the README's sender (3 s
    initial RTO) and htsim with its ``DCTCPSrc``'s own 10 ms initial RTO."""
    flows = read_connection_matrix(out / "mechanisms" / f"{INCAST}.cm")
    cols = {"size_bytes": flows["size_bytes"].to_numpy()}
    for name, path in (("ns3", ns3), ("htsim", htsim), ("htsim_stock_rto", htsim_stock_rto)):
        df = pd.read_csv(path)
        if not np.array_equal(df["size_bytes"].to_numpy(), cols["size_bytes"]):
            raise ValueError(f"{path}: not the flows of {INCAST}.cm")
        cols[f"{name}_fct_ns"] = pd.array(np.round(df["fct_s"].to_numpy(dtype=float) * 1e9), dtype="Int64")
    table = pd.DataFrame(cols)
    table.to_csv(out / "mechanisms" / f"{INCAST}_fct.csv", index=False)
    return table


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="packet_validation.py", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("workloads", help="write the generated workloads and workloads.csv")
    c = sub.add_parser("collect", help="collect both references' per-flow FCTs")
    c.add_argument("--ns3", type=Path, required=True, help="folder of <workload>.csv from scripts/ns3_replay.py")
    c.add_argument("--htsim", type=Path, required=True, help="folder of <workload>.csv from the htsim driver")
    sub.add_parser("incast", help="write the first-window-loss case (.cm, .spines)")
    i = sub.add_parser("collect-incast", help="collect the first-window-loss case's reference FCTs")
    for opt in ("--ns3", "--htsim", "--htsim-stock-rto"):
        i.add_argument(opt, type=Path, required=True, help="per-flow CSV of that reference on the case")
    args = p.parse_args(argv)
    if args.cmd == "workloads":
        print(write_workloads().to_string(index=False))
    elif args.cmd == "collect":
        print(collect(args.ns3, args.htsim).to_string(index=False))
    elif args.cmd == "incast":
        print(write_incast())
    else:
        print(collect_incast(args.ns3, args.htsim, args.htsim_stock_rto).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
