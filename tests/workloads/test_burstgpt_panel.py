"""The BurstGPT trace analysis and panel: source selection, analysis for the panel, controls wired to updates."""

from __future__ import annotations

import pytest

from workbench.reproductions import burstgpt as rep
from workbench.workloads import burstgpt as gen
from workbench.workloads import trace_analysis as ta


def test_select_and_analyze_the_stand_in():
    df = gen.stand_in(days=1.0, seed=2)
    api = ta.select(df, log_type="api")
    assert set(api["log_type"].astype(str)) == {"api"} and api.attrs["stand_in"]
    gpt4 = ta.select(df, model="GPT-4", log_type="conversation")
    assert len(gpt4) < len(df) and set(gpt4["model"].astype(str)) == {"GPT-4"}
    out = ta.analyze(api, window_s=1200.0, rate_scale=2.0, seed=1)
    assert list(out.series) == ["trace", "generated x2"] and out.summary.requests == len(api)
    assert out.generated["arrival_s"].iloc[-1] <= api["arrival_s"].iloc[-1] / 2 + 1200
    with pytest.raises(ValueError, match="at least 50"):
        ta.analyze(api.iloc[:10])


def test_panel_builds_and_updates():
    from workbench.widgets.burstgpt import BurstGPTPanel

    panel = BurstGPTPanel(scale="quick")
    assert "stand-in" in panel.status.value
    before = len(panel.rate.data)
    panel.log_type.value = "api"
    panel.rate_scale.value = 5.0
    assert "x5" in panel.status.value and len(panel.rate.data) == before
    for name in [v for _, v in panel.source.options][1:]:
        panel.source.value = name
        assert panel.model.options == ("(all)",)
        assert "requests" in panel.status.value


def test_claims_keep_their_expected_verdicts_without_any_data(monkeypatch, tmp_path):
    """On a fresh clone with no data on the search path every claim falls back to the stand-in, labelled partial."""
    from workbench import data
    from workbench.reproductions import run_claims

    monkeypatch.setattr(data, "search_path", lambda: [tmp_path])
    caches = [ta.burstgpt_trace, ta.real_trace, rep.services_table, rep.window_fits, rep.round_trips, rep.length_curves]
    for c in caches:
        c.cache_clear()
    try:
        results = run_claims("burstgpt", "quick")
        assert ta.real_trace("Azure code") is None
        for r in results:
            assert not r.error and r.verdict == r.claim.expected, r.claim.id
    finally:
        for c in caches:
            c.cache_clear()
