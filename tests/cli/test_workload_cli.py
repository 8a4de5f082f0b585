"""`workbench workload`: the real entry point in a subprocess, and the README's three pipelines end to end."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.data import find
from workbench.testing import requires_data
from workbench.workloads import burstgpt as B
from workbench.workloads import streaming as S
from workbench.workloads.convert import read_table
from workbench.workloads.export import FORMATS, to_burstgpt_csv, write_stream
from workbench.workloads.traces import load_burstgpt, load_mooncake


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def ok(*args: str, cwd=None) -> str:
    r = run(*args, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return r.stdout


RENEWAL = "workload generate renewal --rate 5 --input-tokens const:10 --output-tokens const:5"


def within(measured: float, expected: float, n: float, k: float = 4.0) -> bool:
    """|measured - expected| within k Poisson standard errors of a count n (relative error 1/sqrt(n))."""
    return abs(measured / expected - 1.0) <= k / math.sqrt(n)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_chunked_writes_are_the_one_shot_bytes(tmp_path, fmt):
    plan = S.renewal_plan(
        rate_rps=40.0,
        cv=2.0,
        duration_s=2000.0,
        input_tokens="zipf:1.1,4096",
        output_tokens="lognormal:200,1",
        block_s=300.0,
    )
    one = write_stream([S.materialize(plan, 7)], tmp_path / "one", fmt, hash_block_tokens=512)[0]
    many = write_stream(S.iter_chunks(plan, 7, chunk_blocks=2), tmp_path / "many", fmt, hash_block_tokens=512)[0]
    assert one.read_bytes() == many.read_bytes()
    other = write_stream([S.materialize(plan, 8)], tmp_path / "other", fmt, hash_block_tokens=512)[0]
    assert other.read_bytes() != one.read_bytes()


def test_generate_renewal_parquet_same_bytes_any_chunk_and_stats(tmp_path):
    args = [
        "workload",
        "generate",
        "renewal",
        "--rate",
        "30",
        "--cv",
        "2",
        "--duration",
        "40m",
        "--seed",
        "3",
        "--input-tokens",
        "lognormal:800,0.7",
        "--output-tokens",
        "uniform:10,200",
        "--no-progress",
    ]
    ok(*args, "--out", str(tmp_path / "a.parquet"), "--chunk", "10m")
    ok(*args, "--out", str(tmp_path / "b.parquet"), "--chunk", "0")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    df = read_table(tmp_path / "a.parquet")
    assert within(len(df), 30 * 2400, len(df) / 4)  # renewal counts with CV 2: variance about cv^2 times Poisson
    gaps = np.diff(df["arrival_s"].to_numpy())
    assert abs(gaps.std() / gaps.mean() - 2.0) < 0.15
    assert abs(np.median(df["input_tokens"]) / 800 - 1) < 0.03
    assert df["output_tokens"].between(10, 200).all()


def _same_requests(got: pd.DataFrame, want: pd.DataFrame) -> None:
    """Every column of ``want`` in ``got``, value for value (dtypes may differ after a file round trip)."""
    assert len(got) == len(want) > 0
    for c in want.columns:
        assert np.array_equal(got[c].to_numpy(), want[c].to_numpy()), c


def test_compose_is_the_generated_file(tmp_path):
    """``sg.compose(..., seed=7)`` gives the requests ``workload generate servegen ... --seed 7`` writes (issue 21):
    a multimodal model (every media column), 25 minutes (a partial last block), written in 10-minute chunks."""
    from workbench.workloads import servegen as sg

    ok(
        *("workload", "generate", "servegen", "--model", "mm-image", "--start", "12:00", "--duration", "25m"),
        *("--rate", "10", "--seed", "7", "--chunk", "10m", "--no-progress", "--out", str(tmp_path / "sg.parquet")),
    )
    want = sg.compose(sg.load_pool("mm-image"), start_s=12 * 3600, duration_s=1500, rate_rps=10.0, seed=7)
    assert {"audio_tokens", "video_tokens"} <= set(want.columns)  # the same columns in every block
    _same_requests(read_table(tmp_path / "sg.parquet"), want)


def test_generate_burstgpt_is_the_generated_file(tmp_path):
    """``burstgpt.generate(model, rate_scale=2, seed=7)`` gives the requests ``workload generate burstgpt --params
    ... --rate-scale 2 --seed 7`` writes."""
    model = B.from_params(4 * 1200.0, [1.0, 3.0, 0.5, 2.0], shape=0.5, failure_prob=0.05)
    B.save_params(model, tmp_path / "m.json")
    ok(
        *("workload", "generate", "burstgpt", "--params", str(tmp_path / "m.json"), "--rate-scale", "2"),
        *("--seed", "7", "--chunk", "20m", "--no-progress", "--out", str(tmp_path / "bg.parquet")),
    )
    want = B.generate(model, rate_scale=2.0, seed=7)
    _same_requests(read_table(tmp_path / "bg.parquet"), want[["arrival_s", "input_tokens", "output_tokens", "failed"]])


def test_the_stream_does_not_depend_on_the_chunk_size():
    """Block k is drawn from keyed(seed, k): grouping the blocks 1, 2 or 4 at a time gives the one-shot table, for
    every source; a Generator seed roots the same kind of stream (deterministic for a seeded Generator)."""
    from workbench.workloads import servegen as sg

    plans = [
        S.servegen_plan(sg.load_pool("m-large"), start_s=12 * 3600, duration_s=2100, mean_rate_rps=5.0),
        S.burstgpt_plan(B.from_params(5 * 600.0, 2.0, shape=0.5, window_s=600.0)),
        S.renewal_plan(rate_rps=5.0, cv=2.0, duration_s=2100, input_tokens="const:10", output_tokens="zipf:1.1,100"),
    ]
    for plan in plans:
        one = S.materialize(plan, 7)
        assert plan.n_blocks >= 4 and len(one) > 0
        for chunk in (1, 2, 4):
            assert pd.concat(list(S.iter_chunks(plan, 7, chunk_blocks=chunk)), ignore_index=True).equals(one)
        assert not S.materialize(plan, 8).equals(one)
        assert S.materialize(plan, np.random.default_rng(3)).equals(S.materialize(plan, np.random.default_rng(3)))


def test_errors_exit_codes_and_overwrite(tmp_path):
    out = tmp_path / "w.csv"
    out.write_text("keep me\n")
    base = [*RENEWAL.split(), "--duration", "90s", "--no-progress", "--out", str(out)]
    r = run(*base)
    assert r.returncode == 2 and "--force" in r.stderr and out.read_text() == "keep me\n"
    assert len(r.stderr.strip().splitlines()) == 1
    ok(*base, "--force")
    assert read_table(out)["input_tokens"].eq(10).all()
    bad = tmp_path / "bad.csv"
    bad.write_text("arrival_s,input_tokens,output_tokens\n0.0,5,1\n1.0,-3,1\n")
    r = run("workload", "describe", str(bad))
    assert r.returncode == 2 and f"{bad}:3:" in r.stderr, r.stderr
    assert run("workload", "generate", "renewal", "--rate", "5", "--duration", "soon", "--out", "x.csv").returncode == 2
    r = run(*RENEWAL.split(), "--duration", "1m", "--out", str(tmp_path / "x.txt"))
    assert r.returncode == 2 and "--format" in r.stderr


def test_help_documents_every_subcommand():
    out = ok("workload", "--help")
    for name in ("generate", "describe", "convert", "compare"):
        assert name in out
    gen = ok("workload", "generate", "renewal", "--help")
    for opt in (
        "--rate",
        "--cv",
        "--family",
        "--lengths",
        "--input-tokens",
        "--seed",
        "--force",
        "--format",
        "--hash-block-tokens",
        "--time-resolution",
        "--chunk",
    ):
        assert opt in gen


def test_pipeline_servegen_to_aiperf(tmp_path):
    """README pipeline 1: ServeGen m-large 14:00-15:00 scaled to 20 req/s, Mooncake JSONL with 512-token blocks."""
    ok(
        "workload",
        "generate",
        "servegen",
        "--model",
        "m-large",
        "--start",
        "14:00",
        "--duration",
        "1h",
        "--mean-rate",
        "20",
        "--hash-block-tokens",
        "512",
        "--out",
        "servegen.mooncake.jsonl",
        cwd=tmp_path,
    )
    df = load_mooncake(tmp_path / "servegen.mooncake.jsonl", cache=False)
    assert within(len(df), 20 * 3600, len(df) / 10)  # client bursts: overdispersed counts
    n_ids = df["hash_ids"].map(len).to_numpy()
    assert np.array_equal(n_ids, -(-df["input_tokens"].to_numpy() // 512))
    assert df["arrival_s"].max() < 3600
    conv = ok("workload", "convert", "servegen.mooncake.jsonl", "servegen.burstgpt.csv", cwd=tmp_path)
    assert "lost: hash_ids are dropped" in conv


def _burstgpt_trace(tmp_path):
    real = find("burstgpt/BurstGPT_1.csv")
    if real is not None:
        return real
    # The release is not on the data path: the clearly labelled stand-in (paper's shape 0.5, Zipf 1.1), as a file.
    return to_burstgpt_csv(B.stand_in(days=1.0, seed=2), tmp_path / "BurstGPT_1.csv", time_resolution_s=1.0)


def test_pipeline_burstgpt_fit_to_vllm(tmp_path):
    """README pipeline 2: fit a BurstGPT trace, generate at twice its rate for 1 h, BurstGPT CSV for vLLM."""
    trace = _burstgpt_trace(tmp_path)
    ok(
        "workload",
        "generate",
        "burstgpt",
        "--fit",
        str(trace),
        "--save-params",
        "fit.json",
        "--rate-scale",
        "2",
        "--duration",
        "1h",
        "--out",
        "burst.burstgpt.csv",
        cwd=tmp_path,
    )
    model = B.load_params(tmp_path / "fit.json")
    gen = load_burstgpt(tmp_path / "burst.burstgpt.csv", cache=False)
    expected = 2 * model.rate_rps[: math.ceil(3600 * 2 / model.window_s)].mean() * 3600
    assert within(len(gen), expected, len(gen) / 20)
    refit = B.fit_model(gen, window_s=model.window_s / 2)
    assert abs(refit.zipf_alpha - model.zipf_alpha) < 0.05
    assert (gen["model"] == "GPT-4").all() or model.model is not None


def _assert_same_json(got, want, where="$"):
    """Same keys, same order, same strings and integers; floats equal to 1e-7 relative (fits such as the KS
    statistics go through scipy optimizers whose last digits differ across CPUs and BLAS builds)."""
    assert type(got) is type(want) or {type(got), type(want)} <= {int, float}, f"{where}: {got!r} vs {want!r}"
    if isinstance(want, dict):
        assert list(got) == list(want), f"{where}: keys {list(got)} vs {list(want)}"
        for k in want:
            _assert_same_json(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert len(got) == len(want), f"{where}: length {len(got)} vs {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_same_json(g, w, f"{where}[{i}]")
    elif isinstance(want, float) or isinstance(got, float):
        assert math.isclose(got, want, rel_tol=1e-7, abs_tol=1e-12), f"{where}: {got!r} vs {want!r}"
    else:
        assert got == want, f"{where}: {got!r} vs {want!r}"


def test_describe_json_is_the_recorded_output(tmp_path):
    """``describe --json`` prints what it printed when the characterization returned dicts
    (``describe_sessions.json``, recorded then; floats to a tolerance): every section, including conversations and clients, on a small
    deterministic table with sessions and clients."""
    i = np.arange(240)
    pd.DataFrame(
        {
            "arrival_s": np.round(i * 15.0 + (i * 7919 % 13), 3),
            "input_tokens": 1 + (i * 37) % 900,
            "output_tokens": (i * 53) % 300,
            "session_id": pd.array([f"s{k % 31}" if k % 5 else None for k in i], dtype="string"),
            "client_id": i % 7,
        }
    ).to_csv(tmp_path / "sessions.csv", index=False)
    recorded = (Path(__file__).parent / "describe_sessions.json").read_text()
    printed = ok("workload", "describe", "sessions.csv", "--json", cwd=tmp_path)
    _assert_same_json(json.loads(printed), json.loads(recorded))
    assert json.loads(recorded)["conversations"] == {"sessions": 31.0, "mean_turns": 192 / 31}


@requires_data("azure-llm-2023/AzureLLMInferenceTrace_conv.csv")
def test_pipeline_azure_describe_compare(tmp_path):
    """README pipeline 3: describe the Azure conversation trace, generate a look-alike, compare the two."""
    name = "azure-llm-2023/AzureLLMInferenceTrace_conv.csv"
    d = json.loads(ok("workload", "describe", name, "--json", cwd=tmp_path))
    azure = read_table(name)
    assert d["rate"]["requests"] == len(azure)
    rate, cv = d["rate"]["rate_rps"], d["arrivals"]["gap_cv"]
    ok(
        "workload",
        "generate",
        "renewal",
        "--rate",
        f"{rate:.4f}",
        "--cv",
        f"{cv:.3f}",
        "--duration",
        "1h",
        "--lengths",
        name,
        "--out",
        "azure-like.jsonl",
        cwd=tmp_path,
    )
    cmp = json.loads(ok("workload", "compare", name, "azure-like.jsonl", "--json", cwd=tmp_path))
    assert abs(cmp["rate"]["rate_rps"]["ratio"] - 1) < 0.1
    assert abs(cmp["lengths"]["p50_input_tokens"]["ratio"] - 1) < 0.05
    assert abs(cmp["arrivals"]["gap_cv"]["ratio"] - 1) < 0.15
    assert pd.notna(cmp["lengths"]["spearman_in_out"]["b"])
