"""Derive the serving model's measured attention kernel times from Vidur's attention profile.

Input: ``vidur-profiles/attention/a100/prerelease-70b-geometry-tp2.csv`` on the data search path (Vidur, Agrawal et
al., MLSys'24; see its PROVENANCE: one 70B GQA geometry, 64 query and 8 KV heads of dimension 128 at tensor
parallelism 2, so 32 query and 4 KV heads per GPU, fp16, block size 16, Sarathi's FlashAttention backend, GPU kernel
time from the PyTorch profiler, on an A100 80GB SXM). Output: ``datasets/serving_specs/attention_curves.csv``, read
by :mod:`workbench.serving.attention`, in milliseconds per layer and GPU:

``decode``
    ``batch`` requests each over a KV cache of ``kv_tokens`` (the profile's batches 1-128, every KV length it holds,
    32-4032), ``value`` the decode kernel's median time. Kernel times measured per grid point jitter by a few µs (at
    batch 7 and 1,024 tokens the median is below batch 6's); the table keeps the monotone envelope (the running
    maximum along the batch, then along the length: more work never takes less time).
``prefill``
    One prompt chunk of ``chunk`` tokens after a prefix of ``prefix`` tokens already in the cache (chunks 64-4096,
    prefixes up to ``4096 - chunk``), ``value`` the prefill kernel's median time, kept monotone along the prefix
    the same way.

Run ``python scripts/derive_attention_curves.py`` to rewrite the table; ``--check`` compares with the committed table
instead (exit 1 if it differs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from workbench.data import require
from workbench.tables import write_or_check

OUT = Path(__file__).resolve().parents[1] / "datasets" / "serving_specs" / "attention_curves.csv"
PROFILE = "vidur-profiles/attention/a100/prerelease-70b-geometry-tp2.csv"
#: Batches of the decode table (the profile measures every batch 1-128; these resolve its curve).
BATCHES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 112, 128)
#: Chunks of the prefill table.
CHUNKS = (64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)
COLUMNS = ["kind", "batch", "chunk", "tokens", "value"]


def derive() -> pd.DataFrame:
    d = pd.read_csv(require(PROFILE, hint="(Vidur's attention profile: see vidur-profiles/PROVENANCE.md)"))
    need = {"is_prefill", "batch_size", "prefill_chunk_size", "kv_cache_size", "time_stats.attn_decode.median",
            "time_stats.attn_prefill.median"}  # fmt: skip
    if need - set(d.columns):
        raise ValueError(f"{PROFILE}: missing columns {sorted(need - set(d.columns))}")
    dec = d[~d["is_prefill"].astype(bool)]
    grid = dec.pivot_table(index="batch_size", columns="kv_cache_size", values="time_stats.attn_decode.median")
    grid = grid.cummax(axis=0).cummax(axis=1)  # the monotone envelope: along the batch, then the length
    rows = [
        ("decode", b, 0, int(L), round(float(grid.loc[b, L]), 6))
        for b in BATCHES
        for L in grid.columns
        if b in grid.index
    ]
    pre = d[d["is_prefill"].astype(bool)]
    pg = pre.pivot_table(index="prefill_chunk_size", columns="kv_cache_size", values="time_stats.attn_prefill.median")
    for c in CHUNKS:
        s = pg.loc[c].dropna().sort_index().cummax()
        rows += [("prefill", 1, c, int(p), round(float(v), 6)) for p, v in s.items()]
    return pd.DataFrame(rows, columns=COLUMNS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed attention_curves.csv")
    args = ap.parse_args(argv)
    table = derive()
    return write_or_check(table, OUT, check=args.check, rtol=1e-6, keys=COLUMNS[:4], float_format="%.10g")


if __name__ == "__main__":
    sys.exit(main())
