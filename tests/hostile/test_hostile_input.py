"""Hostile input (issue 29): each case as a hostile but fair user met it, with what they must see now — a named
error (file and line where there is one) or a correct load, and nothing lost. The malformed files are generated here,
from a well-formed one, so the corpus is reproducible and every variant is listed in the test ids."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from workbench.cli import main
from workbench.workloads.convert import read_table
from workbench.workloads.traces import TraceFormatError, TruncationWarning

GOOD = {
    "timestamped": "arrival_s,input_tokens,output_tokens\n0.5,10,20\n1.0,100,198\n",
    "azure": "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"
    "2023-11-16 18:15:47.0000000,100,198\n",
    "burstgpt": "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
    "5,ChatGPT,10,20,30,Conversation log\n6,ChatGPT,10,198,208,API log\n",
}


def _write(tmp_path, name, text):
    p = tmp_path / f"{name}.csv"
    p.write_text(text)
    return p


@pytest.mark.parametrize("fmt", list(GOOD))
def test_well_formed_files_load_without_warnings(tmp_path, fmt):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = read_table(_write(tmp_path, fmt, GOOD[fmt]))
    assert df["output_tokens"].tolist()[-1] == 198


def _cuts(text):
    """Every cut of the last line inside it: (cut label, truncated text)."""
    last_start = text.rstrip("\n").rfind("\n") + 1
    return [(f"cut{k}", text[: last_start + k]) for k in range(1, len(text.rstrip("\n")) - last_start + 1)]


@pytest.mark.parametrize(
    ("fmt", "label", "text"), [(fmt, label, cut) for fmt, t in GOOD.items() for label, cut in _cuts(t)]
)
def test_truncated_last_line_is_an_error_or_a_named_warning(tmp_path, fmt, label, text):
    """A file cut inside its last line: an error naming line 3 when the row lost fields (or ends in an empty one);
    otherwise the load warns naming file and line 3 (198 cut to 19 parses fine, so it must not pass silently)."""
    p = _write(tmp_path, f"{fmt}-{label}", text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            read_table(p)
        except (TraceFormatError, ValueError) as exc:
            assert str(p) in str(exc) and ("line 3" in str(exc) or ":3:" in str(exc)), str(exc)
            return
    named = [w for w in caught if issubclass(w.category, TruncationWarning)]
    assert named and f"{p}, line 3" in str(named[0].message)


@pytest.mark.parametrize(
    ("fmt", "header", "row"),
    [
        ("timestamped", "arrival_s,input_tokens,output_tokens,arrival_s", "0.5,10,20,9"),
        ("azure", "TIMESTAMP,ContextTokens,GeneratedTokens,ContextTokens", "2023-11-16 18:15:46.6805900,374,44,1"),
        (
            "burstgpt",
            "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type,Timestamp",
            "5,ChatGPT,10,20,30,Conversation log,7",
        ),
    ],
)
def test_duplicated_columns_are_refused(tmp_path, fmt, header, row):
    p = _write(tmp_path, fmt, f"{header}\n{row}\n")
    with pytest.raises(ValueError, match=r"line 1: column '.+' appears twice"):
        read_table(p)


@pytest.mark.parametrize("year", ["3000", "1600"])
def test_azure_dates_outside_nanoseconds_are_named(tmp_path, year):
    text = GOOD["azure"].replace("2023-11-16 18:15:47", f"{year}-11-16 18:15:47")
    with pytest.raises(TraceFormatError, match=rf"line 3: TIMESTAMP '{year}.*' is outside the supported dates"):
        read_table(_write(tmp_path, "azure", text))


@pytest.mark.parametrize(
    ("out", "message"),
    [
        (np.nan, "output_tokens must hold integers; element 1 is nan"),
        (-3, "output_tokens must be >= 0; element 1 is -3"),
        (2.5, "output_tokens must hold integers; element 1 is 2.5"),
        (1e12, r"output_tokens must be <= 1e\+07; element 1"),
    ],
)
def test_serving_refuses_bad_token_counts(out, message):
    from workbench.serving import Deployment, Scheduler, simulate_replica

    dep = Deployment("Llama-2-7B", "A100-80GB")
    with pytest.raises(ValueError, match=message):
        simulate_replica(np.array([0.0, 0.1]), np.array([10, 10]), np.array([5, out]), dep, Scheduler(kind="vllm"))


def test_serving_zero_output_tokens_is_one_token():
    """Documented, not silent: the prefill produces the first token, so 0 output tokens are served as 1."""
    from workbench.serving import Deployment, Scheduler, simulate_replica

    dep = Deployment("Llama-2-7B", "A100-80GB")
    a = simulate_replica(np.array([0.0]), np.array([10]), np.array([0]), dep, Scheduler(kind="vllm"))
    b = simulate_replica(np.array([0.0]), np.array([10]), np.array([1]), dep, Scheduler(kind="vllm"))
    assert np.allclose(a.finish_s, b.finish_s)


@pytest.mark.parametrize("reserve", [-1000, float("nan"), float("inf"), 80])
def test_deployment_activation_reserve_is_bounded(reserve):
    from workbench.serving import Deployment

    with pytest.raises(ValueError, match="activation_reserve_gb"):
        Deployment("Llama-2-7B", "A100-80GB", activation_reserve_gb=reserve)


def test_streamed_csv_with_changing_columns_is_refused_and_nothing_written(tmp_path):
    from workbench.workloads.export import write_stream

    a = pd.DataFrame({"arrival_s": [0.0, 1.0], "input_tokens": [1, 2], "output_tokens": [3, 4]})
    b = a.assign(arrival_s=[2.0, 3.0], session_id=pd.array(["x", "y"], dtype="string"))
    with pytest.raises(ValueError, match="chunk starting at row 2 has columns"):
        write_stream(iter([a, b]), tmp_path / "s.csv", "csv")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_non_finite_grid_values_are_refused_up_front(value, capsys):
    assert main(["sweep", "run", "arrivals-queue-wait", "--grid", f"utilization={value}", "--serial"]) == 2
    err = capsys.readouterr().err
    assert "must be a finite number" in err and "Traceback" not in err


def test_absurd_seed_count_is_refused(capsys):
    assert main(["sweep", "run", "arrivals-queue-wait", "--seeds", "100000000", "--serial"]) == 2
    assert "seeds must be in [1, 1,000,000]" in capsys.readouterr().err


@pytest.mark.parametrize("address", ["not an address", "garbage://"])
def test_bad_scheduler_address_fails_at_once(address, capsys):
    assert main(["sweep", "run", "arrivals-queue-wait", "--scheduler", address]) == 2
    assert "is not a Dask scheduler address" in capsys.readouterr().err


def test_absurd_duration_is_refused(tmp_path, capsys):
    args = ["workload", "generate", "renewal", "--rate", "100", "--input-tokens", "10", "--output-tokens", "5"]
    with pytest.raises(SystemExit) as stop:
        main([*args, "--duration", "1e300s", "--out", str(tmp_path / "x.csv")])
    assert stop.value.code == 2 and "longer than ten years" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_symlink_loop_on_the_data_path_is_skipped_with_a_warning(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    env = {**os.environ, "WORKBENCH_DATA": str(tmp_path / "a")}
    for cmd in (["data", "path"], ["data", "list"]):
        r = subprocess.run([sys.executable, "-m", "workbench.cli", *cmd], env=env, capture_output=True, text=True)
        assert r.returncode == 0 and "Traceback" not in r.stderr
        assert "symbolic link loop" in r.stderr


CM_OK = "Nodes 128\nConnections 1\n0->1 id 1 start 0 size 1500\n"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("start", CM_OK.replace("start 0", "start 99999999999999999999999"), "f.cm:3: flow 1: start .* out of range"),
        ("size", CM_OK.replace("size 1500", "size 9999999999999999999999"), "f.cm:3: flow 1: .* out of range"),
        ("nodes", CM_OK.replace("Nodes 128", "Nodes 99999999999"), r"f.cm:1: Nodes must be in \[2, 65536\]"),
    ],
)
def test_replay_numbers_out_of_range(tmp_path, capsys, name, content, message):
    (tmp_path / "f.cm").write_text(content)
    assert main(["aqm", "replay", str(tmp_path / "f.cm"), "--out", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert pytest.importorskip("re").search(message, err), err
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_replay_refuses_non_regular_input(tmp_path, capsys, kind):
    src = tmp_path / "f.cm"
    if kind == "fifo":
        os.mkfifo(src)
    else:
        src = "/dev/zero"
    assert main(["aqm", "replay", str(src), "--out", str(tmp_path / "o.csv")]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_replay_refuses_a_network_too_big_before_allocating(tmp_path, capsys):
    (tmp_path / "f.cm").write_text(CM_OK)
    args = ["aqm", "replay", str(tmp_path / "f.cm"), "--out", str(tmp_path / "o.csv")]
    assert main([*args, "--leaves", "1000", "--hosts-per-leaf", "1000"]) == 2
    assert "1,000,000 hosts is more than the per-packet engine holds" in capsys.readouterr().err


def test_cli_failures_of_ours_are_one_line_with_status_1(monkeypatch, capsys):
    import workbench.cli as cli

    def broken(args):
        raise MemoryError("simulated")

    parser = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(parser(), broken))
    assert cli.main(["data", "path"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "MemoryError: simulated" in err and "--debug" in err
    with pytest.raises(MemoryError):
        cli.main(["--debug", "data", "path"])


def _with_func(parser, fn):
    orig = parser.parse_args

    def parse_args(argv=None):
        ns = orig(argv)
        ns.func = fn
        return ns

    parser.parse_args = parse_args
    return parser


def _numeric_params():
    from workbench import experiments as ex

    for name in ex.names():
        exp = ex.get(name)
        for p in exp.params:
            if p.kind in (int, float) and p.choices is None:
                yield pytest.param(exp, p, id=f"{exp.name}:{p.name}")


@pytest.mark.parametrize(("exp", "param"), list(_numeric_params()))
def test_every_numeric_parameter_holds_its_edges(exp, param):
    """Fuzz every registered experiment's numeric parameters at and just outside their declared range (validation
    only: the grid is refused before any work, naming the parameter)."""
    import math

    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises((ValueError, TypeError), match=param.name):
            exp.points({param.name: bad})
    for edge, inclusive, step in ((param.low, param.low_inclusive, -1), (param.high, param.high_inclusive, 1)):
        if edge is None:
            continue
        outside = edge + step * (1 if param.kind is int else max(abs(edge), 1.0) * 1e-9)
        if param.kind is int and not inclusive:
            outside = edge
        with pytest.raises((ValueError, TypeError), match=param.name):
            exp.points({param.name: outside})
        if inclusive:
            try:
                exp.points({param.name: edge})
            except ValueError as exc:  # an edge may clash with another parameter's default: say which
                assert param.name in str(exc) or "must" in str(exc)


def test_replay_of_a_million_flows_is_refused_up_front_with_an_estimate(tmp_path, capsys):
    """A .cm with a million flows in 0.1 s ran for minutes with no progress and no bound; now the packet count and a
    time estimate are stated up front and the run is refused above the limit unless --force."""
    n = 1_000_000
    lines = ["Nodes 128", f"Connections {n}"]
    lines += [f"{i % 127}->{i % 127 + 1} id {i} start {i * 100} size 400000" for i in range(n)]
    (tmp_path / "big.cm").write_text("\n".join(lines) + "\n")
    assert main(["aqm", "replay", str(tmp_path / "big.cm"), "--out", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert "1,000,000 flows" in err and "packet limit; pass --force" in err and "minutes" in err
    assert not (tmp_path / "o.csv").exists()
