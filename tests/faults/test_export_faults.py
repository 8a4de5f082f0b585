"""Exporters on a full disk (RLIMIT_FSIZE in a subprocess): the user's existing export is intact and no partial or
temporary file is left, for every format."""

from __future__ import annotations

import textwrap

import pytest

FORMATS = ["to_burstgpt_csv", "to_mooncake_jsonl", "to_timestamped_csv", "to_timestamped_jsonl"]


@pytest.mark.parametrize("writer", FORMATS)
def test_full_disk_leaves_the_existing_export_intact(tmp_path, full_disk, writer):
    target = tmp_path / "export.out"
    original = b"the user's earlier export\n" * 100
    target.write_bytes(original)
    code = textwrap.dedent(f"""
        import numpy as np, pandas as pd
        from workbench.workloads import export
        rng = np.random.default_rng(0)
        n = 50_000
        df = pd.DataFrame({{"arrival_s": np.cumsum(rng.exponential(0.01, n)), "input_tokens": rng.integers(1, 4000, n),
                           "output_tokens": rng.integers(1, 500, n)}})
        export.{writer}(df, "{target}", overwrite=True)
    """)
    proc = full_disk(code, 100_000)
    assert proc.returncode != 0 and "File too large" in proc.stderr
    assert target.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir()] == ["export.out"]
