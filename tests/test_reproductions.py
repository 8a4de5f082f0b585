"""Every registered claim reaches the verdict the registry expects (at the quick scale), and the machinery works."""

from __future__ import annotations

import json

import pytest

from workbench import reproductions as rep
from workbench.cli import main
from workbench.data import find
from workbench.reproductions import AtLeast, AtMost, Check, InRange, Trend, Verdict, Within

REGISTRY = rep.load_all()


@pytest.mark.parametrize("key", sorted(REGISTRY.claims))
def test_claim_reaches_expected_verdict(key):
    """Each paper runs once, claims and figures (its claims share their studies; the result is cached for the session,
    so the figure invariants and the notebooks' claims tables read it instead of recomputing)."""
    claim = REGISTRY.claims[key]
    missing = [f for f in claim.paper.requires_data if find(f) is None]
    if missing:
        pytest.skip(f"{claim.paper.id} needs data not on the search path: {', '.join(missing)}")
    rep.run_paper(claim.paper.id, "quick", figures=True)  # with its figures: the figure-invariant tests read this run
    (result,) = [r for r in rep.run_claims(claim.paper.id, "quick") if r.claim.key == key]
    assert not result.error, result.error
    assert result.verdict == claim.expected, (
        f"{key}: measured {result.measured.summary} -> {result.verdict.value}, registry expects {claim.expected.value}"
    )
    json.dumps(result.record())  # every record is serializable as it is
    # its row in a claims table prints numbers a reader reads right (no 7.5e-16, 5.65685, -0.00, 270.00 or nan)
    from workbench.reproductions._report import ClaimsTable, unreadable_numbers

    assert not unreadable_numbers(repr(ClaimsTable([result]))), repr(ClaimsTable([result]))


def test_every_claim_has_text_and_paper_value():
    for claim in REGISTRY.claims.values():
        assert claim.text.strip().endswith("."), claim.key
        assert claim.paper_value.strip(), claim.key
        if claim.expected != Verdict.REPRODUCED:
            assert claim.note, f"{claim.key} is expected {claim.expected.value} but has no note saying why"


def test_within():
    c = Within(4.5, rel=0.1, partial_rel=0.3)
    assert c.verdict(4.6) == Verdict.REPRODUCED
    assert c.verdict(3.5) == Verdict.PARTIAL
    assert c.verdict(2.0) == Verdict.NOT_REPRODUCED
    assert Within(0.0, abs=0.01).verdict(0.005) == Verdict.REPRODUCED
    with pytest.raises(ValueError):
        Within(1.0)
    with pytest.raises(ValueError, match="NaN"):
        c.verdict(float("nan"))


def test_ranges_and_bounds():
    assert InRange(4, 5, partial_low=2).verdict(4.2) == Verdict.REPRODUCED
    assert InRange(4, 5, partial_low=2).verdict(3.0) == Verdict.PARTIAL
    assert InRange(4, 5, partial_low=2).verdict(6.0) == Verdict.NOT_REPRODUCED
    assert AtLeast(2, partial=1).verdict(1.5) == Verdict.PARTIAL
    assert AtMost(1).verdict(1.5) == Verdict.NOT_REPRODUCED
    assert Check(lambda v: "partial" if v else "reproduced", "custom").verdict(1) == Verdict.PARTIAL


def test_trend():
    assert Trend("increasing").verdict([1, 2, 3]) == Verdict.REPRODUCED
    assert Trend("increasing").verdict([1, 3, 2.5, 4]) == Verdict.PARTIAL
    assert Trend("increasing", slack=0.2).verdict([1, 3, 2.5, 4]) == Verdict.REPRODUCED
    assert Trend("decreasing").verdict([1, 2, 3]) == Verdict.NOT_REPRODUCED
    assert Trend("flat", tolerance=0.1).verdict([1.0, 1.05, 0.98]) == Verdict.REPRODUCED
    assert Trend("flat", tolerance=0.1, partial=0.5).verdict([1.0, 1.3]) == Verdict.PARTIAL
    with pytest.raises(ValueError):
        Trend("increasing").verdict([1.0])


def test_every_paper_record_resolves():
    """A paper is one record: its notebook exists, its panel imports, its experiments are registered."""
    import importlib
    from pathlib import Path

    from workbench import experiments as ex

    root = Path(__file__).resolve().parents[1]
    for paper in REGISTRY.papers.values():
        assert not paper.notebook or (root / paper.notebook).is_file(), paper
        if paper.panel:
            module, function = paper.panel.split(":")
            assert callable(getattr(importlib.import_module(module), function)), paper.panel
        for name in paper.experiments:
            ex.get(name)


def test_show_claims_selects_by_id():
    table = rep.claims_table("arrivals", "quick", ids=["cv3-p99-wait"])
    assert len(table) == 1 and "CV 3" in table.claim.iloc[0]
    with pytest.raises(ValueError, match="no claim"):
        rep.show_claims("arrivals", ids=["nope"])


def test_run_claims_selects_by_id_in_the_order_given():
    keys = ["arrivals/cv3-p99-wait", "arrivals/cv-burstiness"]
    assert [r.claim.key for r in rep.run_claims(claims=keys, scale="quick")] == keys
    with pytest.raises(ValueError, match="did you mean 'arrivals/cv-burstiness'"):
        rep.run_claims(claims=["arrivals/cv-burstines"], scale="quick")
    with pytest.raises(ValueError, match="not both"):
        rep.run_claims("arrivals", "quick", claims=keys)
    with pytest.raises(TypeError, match="list of claim ids"):
        rep.run_claims(claims="arrivals/cv-burstiness", scale="quick")


def test_paper_runs_are_cached_by_the_source(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    first = rep.run_paper("arrivals", "quick")
    again = rep.run_paper("arrivals", "quick")
    assert not first.cached and again.cached
    assert [c.summary for c in (r.measured for r in again.claims)] == [r.measured.summary for r in first.claims]
    (entry,) = (tmp_path / "reproductions" / "quick").glob("arrivals-*.json")
    entry.write_bytes(entry.read_bytes().replace(b"reproduced", b"reproducee", 1))  # damaged: recomputed, not served
    assert not rep.run_paper("arrivals", "quick").cached


def test_progress_bar_counts_the_claims_and_changes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    shown = rep.run_claims("arrivals", "quick", progress=True)
    assert "arrivals claims (quick)" in capsys.readouterr().err
    again = rep.run_claims("arrivals", "quick")  # cached: no bar, the same results
    assert [r.measured.summary for r in again] == [r.measured.summary for r in shown]
    assert "claims" not in capsys.readouterr().err


@pytest.mark.slow
def test_pred_figures_draw_what_the_claims_computed(monkeypatch):
    """Building PRED's figures after its claims runs no experiment: every figure draws a study a claim measured."""
    from workbench import experiments as ex

    for c in REGISTRY.select_claims("pred"):
        c.measure("quick")
    calls = []
    real = ex.sweep
    monkeypatch.setattr(ex, "sweep", lambda name, *a, **k: calls.append(name) or real(name, *a, **k))
    for spec in REGISTRY.select_figures("pred"):
        spec.build("quick")
    assert calls == []


def test_registry_rejects_duplicates_and_unknown_papers():
    reg = rep.Registry()
    paper = rep.Paper("p", "T", "C")
    claim = rep.Claim(paper, "x", "A claim.", "1", lambda s: rep.Measured(1.0, "1"), Within(1, abs=0))
    reg.add_claim(claim)
    with pytest.raises(ValueError, match="twice"):
        reg.add_claim(claim)
    with pytest.raises(ValueError, match="unknown paper"):
        reg.select_claims("nope")


def test_failing_measure_is_recorded_not_raised():
    paper = rep.Paper("p", "T", "C")

    def broken(scale):
        raise RuntimeError("boom")

    result = rep.run_claim(rep.Claim(paper, "x", "A claim.", "1", broken, Within(1, abs=0)), "quick")
    assert result.verdict == Verdict.NOT_REPRODUCED and "boom" in result.error and not result.as_expected


def test_scoreboard_files(tmp_path):
    results = rep.run_claims("arrivals", "quick")
    json_path, md_path = rep.write_scoreboard(results, tmp_path)
    records = json.loads(json_path.read_text())
    assert len(records) == len(results) > 0
    for rec in records:
        assert {"paper", "claim", "paper_value", "measured", "verdict"} <= rec.keys()
        assert rec["verdict"] in {"reproduced", "partial", "not reproduced"}
    assert "| paper | claim | paper says | measured | verdict |" in md_path.read_text()


@pytest.mark.slow
def test_cli_reproduce_quick(tmp_path, capsys):
    code = main(["reproduce", "--paper", "arrivals", "--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert (tmp_path / "scoreboard.json").exists() and (tmp_path / "scoreboard.md").exists()
    # the engines behind the paper's panel, against their references, beside the claims
    assert "GI/M/1 exact" in (tmp_path / "fidelity.md").read_text()
    assert "id='fidelity'" in (tmp_path / "scoreboard.html").read_text()
    html = sorted(p.name for p in (tmp_path / "figures" / "arrivals").glob("*.html"))
    assert html, "no figures written"
    assert "verdicts:" in out


def test_cli_unknown_paper_is_a_clear_error(capsys):
    assert main(["reproduce", "--paper", "nosuchpaper", "--no-figures"]) == 2
    assert "unknown paper" in capsys.readouterr().err


@pytest.mark.slow
def test_pred_routing_comparison_quick():
    from workbench.reproductions import pred

    table = pred.routing_comparison("quick")
    assert table["routing"].tolist() == ["ecmp", "spray"]
    # PRED marks from 5 packets with a per-flow slope: its standing queue stays below static's under both routings
    assert (table["pred_queue_pkts"] < table["static_queue_pkts"]).all()
    change = 100 * (table["pred_small_p99_ms"] / table["static_small_p99_ms"] - 1)
    assert change.to_numpy() == pytest.approx(table["pred_vs_static_pct"].to_numpy())
    ecmp = pred.small_flow_fct(pred.ecmp("quick"))
    assert table.loc[0, "static_small_p99_ms"] == pytest.approx(ecmp.loc["static", "p99_s"] * 1e3)


def test_a_first_run_orders_papers_by_their_declared_cost(monkeypatch, tmp_path):
    """With no measured times in the cache, ``run_papers`` starts the papers that declare the largest ``cost_s``
    first (alphabetical order put the heaviest papers last and the first cold run waited on them)."""
    from workbench.reproductions import _runner

    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    ran: list[str] = []
    monkeypatch.setattr(_runner, "run_paper", lambda p, scale, figures: ran.append(p))
    costs = {p.id: p.cost_s for p in _runner.load_all().papers.values()}
    light = sorted(p for p, c in costs.items() if c == 0)[:2]
    _runner.run_papers(["arrivals", *light, "pred", "servegen"], "quick", client=False, progress=False)
    assert ran[:3] == ["pred", "servegen", "arrivals"] and sorted(ran[3:]) == light
