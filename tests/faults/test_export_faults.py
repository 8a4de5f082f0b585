"""Exporters on a full disk (RLIMIT_FSIZE in a subprocess): the user's existing export is intact and no partial or
temporary file is left, for every format."""

from __future__ import annotations

import textwrap

FORMATS = ["to_burstgpt_csv", "to_mooncake_jsonl", "to_timestamped_csv", "to_timestamped_jsonl"]


def test_full_disk_leaves_the_existing_export_intact(tmp_path, full_disk):
    original = b"the user's earlier export\n" * 100
    for writer in FORMATS:
        (tmp_path / f"{writer}.out").write_bytes(original)
    code = textwrap.dedent(f"""
        import numpy as np, pandas as pd
        from workbench.workloads import export
        rng = np.random.default_rng(0)
        n = 50_000
        df = pd.DataFrame({{"arrival_s": np.cumsum(rng.exponential(0.01, n)), "input_tokens": rng.integers(1, 4000, n),
                           "output_tokens": rng.integers(1, 500, n)}})
        for writer in {FORMATS!r}:
            try:
                getattr(export, writer)(df, "{tmp_path}/" + writer + ".out", overwrite=True)
            except OSError as exc:
                print(writer, exc.strerror)
    """)
    proc = full_disk(code, 100_000)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"{w} File too large" for w in FORMATS]
    for writer in FORMATS:
        assert (tmp_path / f"{writer}.out").read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{w}.out" for w in FORMATS)  # no temporary files
