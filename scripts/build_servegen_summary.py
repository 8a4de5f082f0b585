"""Build the compact embedded summary of the ServeGen client pools: ``datasets/servegen/summary/<model>.npz``.

The raw release (github.com/alibaba/ServeGen, folder ``data/``, Apache-2.0) is ~240 MB of per-client CSV and JSON.
The summary keeps, for every released model, everything :func:`workbench.workloads.servegen.load_pool` needs so that
the notebook and the generator run without the raw data:

* per client and 600 s window: rate (float32), inter-arrival CV (float16) and family (Gamma/Weibull), at full
  resolution over the whole release (14 days for the language models, 1 day for mm-image and deepseek-r1);
* per client and 6 h window, for every length field: the PMF reduced to ``K`` equally likely quantile atoms
  (the inverse CDF at levels (k + 0.5) / K), float32, including the pooled fallback PMFs of each window.

It records each source file's name, size and sha256 in ``datasets/servegen/MANIFEST.json``.

Usage::

    .venv/bin/python scripts/build_servegen_summary.py [--atoms 32] [--out datasets/servegen]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workbench.workloads.servegen import load as sg_load  # noqa: E402

UPSTREAM = "https://github.com/alibaba/ServeGen"
COMMIT = "f891d1189eb32b3868dfc443800c4150548c282a"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def summarize(model: str, atoms: int) -> tuple[dict[str, np.ndarray], list[dict]]:
    directory = sg_load.raw_model_dir(model)
    if directory is None:
        raise SystemExit(f"raw ServeGen data for {model} is not on the data search path")
    pool = sg_load.load_pool(model, source="raw", cache=False)
    levels = (np.arange(atoms) + 0.5) / atoms
    arrays: dict[str, np.ndarray] = {
        "model": np.array(model),
        "client_ids": pool.client_ids.astype(np.int32),
        "rate_rps": pool.rate_rps.astype(np.float32),
        "cv": pool.cv.astype(np.float16),
        "family": pool.family,
        "length_index": pool.length_index.astype(np.int32),
        "own_lengths": pool.own_lengths,
        "has_lengths": pool.has_lengths,
    }
    for f, table in pool.tables.items():
        arrays[f"{f}__atoms"] = table.quantiles(levels).astype(np.float32)
    files = []
    for _, trace, lengths in sg_load._client_files(directory):
        for p in (trace, lengths):
            rel = f"data/{sg_load.MODELS[model][0]}/{model}/{p.name}"
            if p.exists():
                files.append({"file": rel, "bytes": p.stat().st_size, "sha256": sha256(p)})
            else:
                files.append({"file": rel, "missing": True})
    return arrays, files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--atoms", type=int, default=32, help="quantile atoms per length PMF (default 32)")
    parser.add_argument("--out", type=Path, default=ROOT / "datasets" / "servegen")
    args = parser.parse_args(argv)
    out = args.out
    (out / "summary").mkdir(parents=True, exist_ok=True)
    manifest: dict = {
        "source": UPSTREAM,
        "commit": COMMIT,
        "license": "Apache-2.0 (see LICENSE in this folder)",
        "citation": "Xiang et al., ServeGen: Workload Characterization of Large Language Model Serving in "
        "Production, arXiv 2505.09999, 2025",
        "made_by": "scripts/build_servegen_summary.py",
        "atoms_per_pmf": args.atoms,
        "models": {},
    }
    for model in sg_load.MODELS:
        arrays, files = summarize(model, args.atoms)
        target = out / "summary" / f"{model}.npz"
        np.savez_compressed(target, **arrays)
        manifest["models"][model] = {
            "summary": f"summary/{model}.npz",
            "summary_sha256": sha256(target),
            "clients": int(arrays["client_ids"].size),
            "clients_without_lengths": int((~arrays["has_lengths"]).sum()),
            "source_files": files,
        }
        print(f"{model}: {target.stat().st_size / 1e6:.2f} MB, {arrays['client_ids'].size} clients")
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
