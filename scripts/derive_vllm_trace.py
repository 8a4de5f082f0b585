"""Derive a measured vLLM serving run's request table (``datasets/serving_specs/traces/<source>.csv``) and its
published means (the ``trace_*`` rows of ``datasets/serving_specs/published.csv``) from the per-request record the
run wrote.

The record is LLMServingSim's ``bench`` output (casys-kaist/LLMServingSim, MIT license,
``bench/examples/<hardware>/<model>/vllm/requests.jsonl``): one JSON object per request with its prompt and output
token counts and the engine's own timestamps (vLLM's request stats: ``queued_ts`` when the engine core received it,
``first_token_ts``, ``last_token_ts``, on one monotonic clock). The table keeps, per request in order of arrival:
``arrival_s`` (``queued_ts`` from the first request's), ``input_tokens``, ``output_tokens``, and the measured
``first_token_s`` and ``finish_s`` on the same clock. The means are the run's own definitions (its
``bench/core/validate.py`` summary): TTFT ``first_token - queued``, TPOT ``(last_token - first_token) /
(output_tokens - 1)`` over requests with two or more output tokens, and the output throughput, all output tokens over
the span from the first arrival to the last token.

Run ``python scripts/derive_vllm_trace.py REQUESTS.jsonl SOURCE_ID`` to write the table and print the three means;
``--check`` compares the committed table with the record instead (exit 1 when they differ).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.serving.validation import trace_statistics

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ("arrival_s", "input_tokens", "output_tokens", "first_token_s", "finish_s")


def table(path: Path) -> pd.DataFrame:
    """The request table of one run's ``requests.jsonl``."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                rows.append(tuple(float(r[k]) for k in ("queued_ts", "input_toks", "output_toks", "first_token_ts",
                                                       "last_token_ts")))  # fmt: skip
            except (ValueError, KeyError) as e:
                raise ValueError(f"{path}:{line_no}: not a request record ({e})") from e
    t = pd.DataFrame(rows, columns=["queued", "input_tokens", "output_tokens", "first", "last"]).sort_values(
        "queued", kind="stable"
    )
    t0 = t["queued"].iloc[0]
    return pd.DataFrame(
        {
            "arrival_s": (t["queued"] - t0).round(6),
            "input_tokens": t["input_tokens"].astype(int),
            "output_tokens": t["output_tokens"].astype(int),
            "first_token_s": (t["first"] - t0).round(6),
            "finish_s": (t["last"] - t0).round(6),
        }
    ).reset_index(drop=True)


def means(t: pd.DataFrame) -> dict[str, float]:
    """The run's mean TTFT, mean TPOT (seconds) and output tokens per second: the serving validation's one definition
    (:func:`workbench.serving.validation.trace_statistics`), on the measured times."""
    return trace_statistics(t)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("requests", type=Path, help="the run's requests.jsonl")
    p.add_argument("source", help="the source id (names the table: datasets/serving_specs/traces/SOURCE.csv)")
    p.add_argument("--check", action="store_true", help="compare with the committed table instead of writing it")
    a = p.parse_args(argv)
    t = table(a.requests)
    for name, value in means(t).items():
        print(f"{name} = {value:.6g}")
    out = ROOT / "datasets" / "serving_specs" / "traces" / f"{a.source}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    if a.check:
        committed = pd.read_csv(out)
        same = (
            list(committed.columns) == list(COLUMNS)
            and len(committed) == len(t)
            and np.allclose(committed.to_numpy(float), t.to_numpy(float), rtol=1e-6, atol=1e-6)
        )
        print(
            f"{out.relative_to(ROOT)}: {'matches the record' if same else 'differs from the record: rerun without --check'}"
        )
        return 0 if same else 1
    t.to_csv(out, index=False, float_format="%.6f")
    print(f"wrote {out.relative_to(ROOT)} ({len(t)} requests)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
