"""The ns-3 cross-check scripts without ns-3: ``scripts/ns3_compare.py`` (nine statistics side by side) and the
argument checks of ``scripts/ns3_replay.py`` (which only imports ns-3 when it runs)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_compare_relative_differences_and_finished():
    cmp = _load("ns3_compare")
    sizes = np.array([1_000, 3_000, 2_000_000])
    a = pd.DataFrame({"size_bytes": sizes, "fct_s": [2e-5, 4e-5, 4e-3], "finished": [True, True, True]})
    b = pd.DataFrame({"size_bytes": sizes, "fct_s": [1e-5, 3e-5, 2e-3]})
    b["finished"] = b["fct_s"].notna()
    out = cmp.compare(a, b, ("x", "y"))
    small_mean = out[(out.size_class.str.startswith("small")) & (out.stat == "mean")].iloc[0]
    assert small_mean["x_us"] == 30.0 and small_mean["y_us"] == 20.0 and small_mean["rel_diff"] == 0.5
    large_p50 = out[(out.size_class.str.startswith("large")) & (out.stat == "p50")].iloc[0]
    assert large_p50["rel_diff"] == 1.0
    assert len(out) == 9


def test_compare_refuses_different_flows():
    cmp = _load("ns3_compare")
    a = pd.DataFrame({"size_bytes": [1, 2], "fct_s": [1.0, 1.0], "finished": [True, True]})
    b = pd.DataFrame({"size_bytes": [1, 3], "fct_s": [1.0, 1.0], "finished": [True, True]})
    with pytest.raises(ValueError, match="same flows"):
        cmp.compare(a, b, ("a", "b"))


def test_replay_rejects_bad_horizon_before_importing_ns3(tmp_path):
    rep = _load("ns3_replay")
    cm = tmp_path / "m.cm"
    cm.write_text("Nodes 128\nConnections 1\n0->8 id 1 start 0 size 1500\n")
    with pytest.raises(SystemExit):
        rep.main([str(cm), "--out", str(tmp_path / "o.csv"), "--horizon-s", "0"])


def test_replay_reads_its_files_without_the_workbench_package(tmp_path):
    """ns-3's own environment has neither numba nor the workbench: the script's .cm/.spines readers load without
    them (a stale import had broken it), and still name the file and line of a malformed row."""
    (tmp_path / "m.cm").write_text("Nodes 128\nConnections 2\n0->8 id 1 start 0 size 1500\n9->3 id 2 start 5 size 7\n")
    (tmp_path / "m.spines").write_text("1 5\n2 0\n")
    (tmp_path / "bad.cm").write_text("Nodes 128\nConnections 1\n0->8 id 1 start x size 1500\n")
    code = f"""
import sys
sys.modules["numba"] = None
sys.modules["workbench"] = None
sys.path.insert(0, {str(ROOT / "scripts")!r})
import ns3_replay
read_cm, read_spines = ns3_replay._cm_readers()
flows = read_cm({str(tmp_path / "m.cm")!r})
print(flows.src.tolist(), flows.dst.tolist(), flows.size_bytes.tolist(),
      read_spines({str(tmp_path / "m.spines")!r}, flows, 8, 8).tolist())
try:
    read_cm({str(tmp_path / "bad.cm")!r})
except ValueError as e:
    print(e)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "[0, 9] [8, 3] [1500, 7] [5, 0]"
    assert "bad.cm:3: expected" in out[1]
