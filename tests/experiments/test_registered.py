"""Every registered experiment runs at a small point, its parameter space is well formed, and a treatment shares its
random draws across values."""

from __future__ import annotations

import json

import pytest

from workbench import _deps
from workbench import experiments as ex
from workbench.cli import main
from workbench.reproductions import load_all
from workbench.testing import data_reads, paper_missing_data, unrecorded_reads

BUILTIN = {n: ex.get(n) for n in ex.names() if ex.get(n).module in ex.builtin_modules()}
_PAPERS = load_all().papers


def test_every_builtin_experiment_declares_a_small_grid():
    """The conformance tests below are generated from each experiment's own ``small`` grid: declaring one is how a
    new experiment gets tested (no list here to edit)."""
    assert len(BUILTIN) >= 15
    assert [n for n, e in BUILTIN.items() if e.small is None] == []


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_builtin_experiment_runs_serially(name, tmp_path, monkeypatch):
    missing = [f for paper in _PAPERS.values() if name in paper.experiments for f in paper_missing_data(paper)]
    if missing:
        pytest.skip(f"{name} needs data not on the search path: {', '.join(missing)}")
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    exp = ex.get(name)
    n_points = len(exp.points(exp.small))
    with data_reads() as reads:
        run = ex.run_sweep(name, exp.small, seeds=1, client=False, progress=False)
    df = run.table
    assert run.ok and len(df) >= 2, run.failures
    assert list(df.columns[: len(exp.params) + 1]) == [p.name for p in exp.params] + ["seed"]
    assert run.computed == n_points
    records = sorted((tmp_path / "experiments" / name).glob("*.rec"))
    assert len(records) == n_points
    # every data file a point read is in its record (so a shadowed or edited file recomputes it), and a second run
    # in this process, where loaders remember what they read, records the same files
    deps = [_deps.Deps.from_json(json.loads(r.read_bytes().split(b"\n")[1])["deps"]) for r in records]
    union = _deps.Deps({k: v for d in deps for k, v in d.data.items()})
    assert unrecorded_reads(reads, union) == []
    first = exp.points(exp.small)[0]
    with _deps.recording() as again:
        ex.run_point(name, first, cache=False)
    key = ex.cache_key(exp, first, 0, 0)
    (record,) = [d for r, d in zip(records, deps) if r.stem == key]
    assert again.deps().data == record.data
    for p in exp.params:
        assert p.unit in ("", "s", "h", "d", "rps", "fraction", "Gbit/s", "B", "tokens"), p
        assert p.doc


def test_pred_treatments_share_flows():
    """Static and PRED at one load and seed carry the same flows (same count of short flows per size class)."""
    df = ex.sweep("pred-fct-vs-load", ex.get("pred-fct-vs-load").small, client=False, cache=False, progress=False)
    counts = df.assign(total=df["count"] + df["unfinished"]).pivot(
        index="size_class", columns="marking", values="total"
    )
    assert (counts["static"] == counts["pred"]).all()


def test_pred_queue_fluid_and_packet_agree_and_marking_settings_apply():
    """At 8 long flows the per-packet dumbbell's standing queue is 1.3-1.8x the fluid steady state (its senders keep
    growing in the round they cut, the fluid model's do not: tests/aqm/test_scenarios.py) with every long flow
    still sending at the window's end; a lower static ramp lowers it; the fluid PRED queue stays flat from 2 to 32
    flows."""
    grid = {
        "n_flows": [8],
        "model": ["fluid", "packet"],
        "marking": "static",
        "max_k_pkts": [200.0, 100.0],
        "duration_s": 0.03,
    }
    df = ex.sweep("pred-queue-vs-concurrency", grid, client=False, cache=False, progress=False)
    q = df.set_index(["max_k_pkts", "model"]).queue_pkts
    assert 1.3 * q[200.0, "fluid"] < q[200.0, "packet"] < 1.8 * q[200.0, "fluid"]
    assert (df.long_active == 1.0).all()
    assert q[100.0, "packet"] < 0.8 * q[200.0, "packet"]
    fluid = ex.sweep(
        "pred-queue-vs-concurrency", {"n_flows": [2, 32], "model": "fluid"}, client=False, cache=False, progress=False
    ).queue_pkts
    assert abs(fluid.iloc[1] - fluid.iloc[0]) < 2.0


def test_burstgpt_round_trip_scales_the_rate():
    df = ex.sweep("burstgpt-round-trip", ex.get("burstgpt-round-trip").small, client=False, cache=False, progress=False)
    assert df.rate_ratio.to_numpy() == pytest.approx(df.rate_scale.to_numpy(), rel=0.05)


def test_cli_lists_and_shows(capsys):
    assert main(["sweep", "list"]) == 0
    assert "pred-fct-vs-load" in capsys.readouterr().out
    assert main(["sweep", "show", "pred-fct-vs-load"]) == 0
    out = capsys.readouterr().out
    assert "marking" in out and "static, pred" in out and "fraction" in out
    assert main(["sweep", "show", "no-such-experiment"]) == 2


def test_summarize_gives_spread_over_seeds():
    df = ex.sweep(
        "placement-hot-tors",
        {"mean_utilization": [0.3, 0.6], "racks": 100},
        seeds=4,
        client=False,
        cache=False,
        progress=False,
    )
    s = ex.summarize(df, ["hot_fraction"])
    assert len(s) == 4 and (s.n == 4).all()
    one = df[(df.mean_utilization == 0.6) & (df.policy == "random")].hot_fraction
    row = s[(s.mean_utilization == 0.6) & (s.policy == "random")].iloc[0]
    assert row["mean"] == pytest.approx(one.mean()) and row["sem"] == pytest.approx(one.sem())
    with pytest.raises(ValueError, match="policy"):
        ex.summarize(df, ["policy"])


def test_cli_run_writes_the_table(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "hot.csv"
    assert (
        main(
            [
                "sweep",
                "run",
                "placement-hot-tors",
                "--grid",
                "mean_utilization=0.3,0.6",
                "--grid",
                "racks=100",
                "--seeds",
                "2",
                "--serial",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    import pandas as pd

    table = pd.read_csv(out)
    params = [p.name for p in ex.get("placement-hot-tors").params]
    assert len(table) == 2 * 2 * 2 and list(table.columns[: len(params) + 1]) == [*params, "seed"]
    assert params[:3] == ["mean_utilization", "racks", "hot_threshold"]


def test_settings_argument_takes_the_undeclared_names_only():
    params = [ex.Param("x", 1.0, ""), ex.Param("a", 2.0, ""), ex.Param("b", 3.0, "")]

    @ex.experiment("test-settings", version="1", params=params)
    def settings(*, x, seed, **rest):
        return {"y": x + rest["a"] * rest["b"]}

    assert ex.sweep(settings, {"a": [4.0]}, client=False, cache=False, progress=False).y.tolist() == [13.0]
    with pytest.raises(TypeError, match="'c'"):
        ex.experiment("test-settings-bad", version="1", params=params)(lambda *, x, c, seed, **rest: {})


def _at(name: str, **changes):
    """An experiment's point function at its defaults with ``changes`` (no sweep, no cache)."""
    exp = ex.get(name)
    point = exp.defaults()
    point.update({k: exp.param(k).validate(v) for k, v in changes.items()})
    return exp.fn(**point, seed=0)


def test_declared_high_ends_that_would_not_fit_in_memory_are_refused_by_name():
    # each was a numpy allocation of 4-40 GB (or an out-of-memory kill) at a value inside the declared range
    with pytest.raises(
        ValueError, match=r"runs x customers = 1,000 x 500,000 = 5e\+08 waits .* lower runs or customers"
    ):
        _at("arrivals-pooled-waits", runs=1000)
    with pytest.raises(ValueError, match="noise_level"):
        _at("minder-healthy-alarms", noise_level=100.0)  # 10 is the studies' highest: 30% per-iteration jitter
    with pytest.raises(ValueError, match=r"lower iterations \(at most 1,525 at 65,536 ranks\)"):
        _at("perftracker-healthy-alarms", ranks=65_536, iterations=100_000)
    with pytest.raises(ValueError, match="n_conversations"):
        _at("llm-preemption", n_conversations=1_000_000)


def test_a_base_plan_that_does_not_fit_names_the_base_knobs():
    # found by a random probe (seed 227): the plan's own message named global_batch, a knob of the edited plan
    from workbench.training import PlanError

    with pytest.raises(PlanError, match=r"the base plan \(base_tp=4, base_pp=4, base_dp=3, base_batch=2\) does not "
                                        r"fit: global_batch=2 .* global_batch are base_tp, base_pp, base_dp and "
                                        r"base_batch here"):  # fmt: skip
        _at("training-what-if", model="gpt-18b", base_tp=4, base_pp=4, base_dp=3, base_batch=2)


def test_looking_up_one_experiment_imports_its_module_and_not_every_study():
    """``ex.get(name)`` in a fresh process imports the module that registers ``name`` (found by the name spelled in
    its source), not every built-in study (scipy.stats, the packet and serving engines: ~1-1.8 s for each panel,
    dashboard kernel and CLI call); ``names()`` still lists every one."""
    import subprocess
    import sys

    code = (
        "import sys; from workbench import experiments as ex\n"
        "e = ex.get('diagnosis-function-faults')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('workbench.experiments.') and '._' not in m)\n"
        "print(e.module, ','.join(loaded), len(ex.names()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    module, loaded, count = out.stdout.split()
    assert module == "workbench.experiments.diagnosis"
    assert loaded.split(",") == ["workbench.experiments.diagnosis"]
    assert int(count) == len(BUILTIN) >= 15


def test_an_experiment_no_module_spells_out_is_still_found():
    """A name no module's source holds in quotes (built at run time) is found by importing every built-in module."""
    import subprocess
    import sys

    code = (
        "from workbench import experiments as ex; from workbench.experiments import _space\n"
        "_space._load_naming = lambda name: None  # as if no source spelled the name\n"
        "print(ex.get('diagnosis-function-faults').module)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["workbench.experiments.diagnosis"]
