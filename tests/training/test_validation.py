"""The validation corpus is data with its sources, its headline flags are what the model's sensitivity says, the
estimated parameters are the corpus's and every reported error is leave-one-source-out."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.data import require
from workbench.training import gaps as G
from workbench.training import validation as V
from workbench.training.iteration import CALIBRATION


def test_the_corpus_is_a_data_file_with_sources_and_coverage():
    c = V.corpus()
    assert len(c) >= 50 and c.source.nunique() >= 8
    assert (c.url.str.startswith("https://")).all() and (c.locator.str.len() > 0).all()
    assert set(c.gpu) == {"A100-80GB", "H100-SXM"}
    assert c.pp.min() == 1 and c.pp.max() == 64
    assert (c.virtual_stages > 1).any() and ((c.virtual_stages == 1) & (c.pp > 1)).any()
    assert set(c.recompute) == {"full", "selective"} and set(c.era) == {"2021", "2024"}
    assert (c.gpus == c.tp * c.pp * c.dp).all()
    readme = (require(V.CORPUS).parent / "README.md").read_text()
    for source in c.source.unique():
        assert f"`{source}`" in readme, f"{source} is not described in the corpus README"
    for column in c.columns:
        assert f"`{column}`" in readme, f"column {column} is not described in the corpus README"


def test_lumos_rows_are_the_actual_bars():
    """Each Lumos row is the sum of its actual bar (breakdowns.csv, Fig. 1 and Fig. 7), and the actual bar is the
    lower one of Fig. 7: with it the Fig. 7c prediction errors average 4.2%, the figure Sec. 4.3.1 states (with the
    bars swapped they would average 4.0%)."""
    c = V.corpus().set_index("id")
    b = V.breakdowns()
    actual = b[b.bar == "actual"].set_index("corpus_id")
    lumos = c[c.source == "lumos2025"]
    assert set(actual.index) == set(lumos.index)
    np.testing.assert_allclose(actual.total_ms.loc[lumos.index] / 1e3, lumos.value, rtol=1e-12)
    pred = b[b.bar == "lumos"].set_index("corpus_id").total_ms
    pairs = [(pred[k], actual.total_ms[k]) for k in ("lumos-15b-2x4x8", "lumos-15b-2x8x8", "lumos-15b-2x4x16")]
    assert np.mean([abs(p / a - 1) for p, a in pairs]) == pytest.approx(0.042, abs=0.0005)
    assert np.mean([abs(a / p - 1) for p, a in pairs]) == pytest.approx(0.040, abs=0.0005)
    assert actual.total_ms["lumos-175b-8x4x8"] == 4287 + 885 + 2261 + 178


def test_lumos_measured_compute_pins_its_batch():
    """Lumos's batch: TP x PP micro-batches of 1 per pipeline whatever the DP (Fig. 4, Sec. 4.3.1). Its measured
    compute per GPU (Fig. 7) is the same on every configuration, as that batch makes the model's; any fixed global
    batch would spread it 4x (half the replicas, twice the micro-batches), so the DP 4 vs DP 8 gap is not a batch."""
    stated = V.compute_check()
    assert stated.ratio.between(0.85, 1.0).all()  # the model's compute is 0-15% below the measured one, everywhere
    small = stated.model_name == "gpt3-15b"
    assert stated.measured_ms[small].max() / stated.measured_ms[small].min() < 1.1
    for g in (32, 64, 128, 256, 1536):
        fixed = V.compute_check(global_batch=g)[small]
        assert fixed.ratio.max() / fixed.ratio.min() > 3.5, g
    with pytest.raises(ValueError, match="global_batch"):
        V.compute_check(global_batch=0)


def test_the_published_runs_bound_what_any_model_reaches_on_lumos():
    """Lumos ran the same pipeline (TP 2 x PP 8, 16 micro-batches of 1, the same compute per GPU) at DP 4 in 1.446 s
    and at DP 8 in 1.010 s. More replicas cannot shorten an iteration beyond the optimizer step they shard (the DP
    collective only grows), and the model obeys that; so no such model gets within 17.7% of both headline rows, and
    Issue 38's 20% bar leaves it a window of 2.7 points there."""
    f = G.consistency_floor()
    lumos = f[f.source == "lumos2025"].set_index("small")
    assert list(lumos.index) == ["lumos-15b-2x8x4"] and lumos.large.iloc[0] == "lumos-15b-2x8x8"
    pair = lumos.iloc[0]
    assert pair.headline and pair.floor == pytest.approx(0.177, abs=0.001)
    assert pair.saving_s < 0.005  # the sharded optimizer step: milliseconds
    # the model is such a model: more replicas never shorten its iteration beyond the saving
    assert (f.model_large >= f.model_small - f.saving_s - 1e-9).all()
    p = V.validation_points().set_index("id")
    for row in (pair.name, pair.large):
        assert abs(p.error[row]) >= pair.floor - 1e-9
    # the best such model predicts the same for both and misses both by the floor
    best_large = pair.best_small_s - pair.saving_s
    assert pair.best_small_s / pair.published_small - 1 == pytest.approx(-pair.floor, abs=1e-9)
    assert best_large / pair.published_large - 1 == pytest.approx(pair.floor, abs=1e-9)
    assert (f.floor[f.source != "lumos2025"] < 0.05).all()  # elsewhere the runs agree (MegaScale: 1.4%)


def test_the_gap_table_adds_up_and_says_what_is_lacking():
    """The model's terms on Lumos's runs add up to its iteration; the sourced terms beyond compute and bubble (the
    blocking exchanges at the measured NCCL rate, the TP collectives, the exposed DP collective) are tens of
    milliseconds where the bar needs 0.4-0.6 s more at PP 8-16."""
    g = G.gap_table().set_index("id")
    terms = ["compute_ms", "ends_ms", "bubble_ms", "exchange_ms", "tp_ms", "dp_ms", "optimizer_ms"]
    np.testing.assert_allclose(g[terms].sum(axis=1), g.model_ms, rtol=1e-9)
    np.testing.assert_allclose(g.measured_compute_ms + g.measured_rest_ms, g.measured_ms, rtol=1e-12)
    p = V.validation_points().set_index("id")
    np.testing.assert_allclose(g.model_ms / 1e3, p.model[g.index], rtol=1e-9)
    small = g.model_name == "gpt3-15b"
    assert (g.exchange_ms[small] < 20).all() and (g.dp_ms[small] < 20).all()
    assert g.ends_ms["lumos-15b-2x16x4"] > g.ends_ms["lumos-15b-2x8x4"] > g.ends_ms["lumos-15b-2x4x4"] > 0
    assert 400 < g.lacking_ms["lumos-15b-2x8x4"] < g.lacking_ms["lumos-15b-2x16x4"] < 700
    within = (p.error[g.index].abs() <= G.WORST_BAR).to_numpy()
    assert (g.lacking_ms[within] == 0).all() and (g.lacking_ms[~within] > 0).all()
    with pytest.raises(ValueError, match="source"):
        G.gap_table("narayanan2021")


def test_headline_flags_are_what_the_alternatives_do_to_the_model():
    """A row is in the headline statistic exactly when no alternative to its unstated settings moves the model by
    more than 5%; rows with nothing unstated are headline."""
    s = V.sensitivity()
    flags = s.groupby("id").headline.first()
    c = V.corpus().set_index("id")
    assert (flags == c.headline.loc[flags.index]).all()
    assert c.headline[c.alternatives == ""].all()
    # Lumos: the batch is stated; the data-parallel implementation (NeMo's overlapped distributed Adam, or the
    # Megatron-LM reference's all-reduce after the backward) moves the DP-heavy rows by more than 5%, not the deep ones
    lumos = s[s.id.str.startswith("lumos")]
    assert not lumos.variant.str.contains("global_batch").any()
    head = set(c.index[(c.source == "lumos2025") & c.headline])
    assert head == {"lumos-15b-2x4x4", "lumos-15b-2x8x4", "lumos-15b-2x16x4", "lumos-15b-2x8x8"}
    joint = lumos[lumos.variant == "overlap_dp=false&distributed_optimizer=false"].set_index("id").change
    assert joint["lumos-15b-2x2x8"] > 0.05 and joint["lumos-15b-2x16x4"] < 0.05


def test_the_sustained_fraction_is_estimated_on_compute_where_a_source_measures_it():
    """Lumos publishes its GPUs' compute time: its rows inform the sustained fraction through it (the model's mean
    stage against exposed plus overlapped compute), not through iteration times the fraction does not govern."""
    df, parts = V._stated()
    compute = V._published_compute(df)
    lumos = (df.source == "lumos2025").to_numpy()
    assert np.isfinite(compute[lumos]).all() and not np.isfinite(compute[~lumos]).any()
    # the estimate the hopper rows give without Megatron-Core (Llama 3's row and Lumos's compute) sits where
    # Lumos's measured compute puts it: 0.66-0.72 of the measured kernels' throughput
    implied = (parts["micro_batches"] * parts["kernel_s"])[lumos] / compute[lumos]
    assert implied.min() > 0.65 and implied.max() < 0.73
    assert 0.66 <= V.estimate(exclude_source="megatron-core2024").sustained_hopper <= 0.72


def test_the_calibration_is_the_corpus_estimate_and_errors_are_leave_one_source_out():
    assert V.estimate() == CALIBRATION
    p = V.validation_points()
    for source in ("megatron-core2024", "narayanan2021"):
        held = V.estimate(exclude_source=source)
        rows = p[p.source == source]
        gen = "hopper" if rows.gpu.iloc[0].startswith("H100") else "ampere"
        assert (rows.sustained == held.sustained(gen)).all()
    inside = V.validation_points(loso=False)
    assert (inside.sustained.isin([CALIBRATION.sustained_ampere, CALIBRATION.sustained_hopper])).all()


def test_validation_points_is_the_scoreboard_table():
    p = V.validation_points()
    for col in ("source", "metric", "reference", "model", "error", "headline", "gpu", "model_name", "tp", "pp", "dp",
                "gpus", "virtual_stages", "micro_batch", "global_batch", "seq_len", "recompute", "era"):  # fmt: skip
        assert col in p.columns
    assert len(p) == len(V.corpus()) and set(p.metric) <= set(V.METRICS)
    np.testing.assert_allclose(p.error, (p.model - p.reference) / p.reference, rtol=1e-12)
    t = p.metric == "iteration_s"
    np.testing.assert_allclose(p.time_error[t], p.error[t], rtol=1e-12)
    np.testing.assert_allclose(p.time_error[~t], p.reference[~t] / p.model[~t] - 1, rtol=1e-12)
    s = V.source_summary(p)
    assert list(s.source) == [*p.source.unique(), "all rows"]
    assert s.set_index("source").rows["all rows"] == len(p)


def test_the_headline_statistic_and_what_misses_the_bar():
    """Issue 38's bar, leave-one-source-out: median |error| <= 8% and worst <= 20% over the headline rows. Lumos's
    four deep-pipeline rows are fully stated and in the headline, and miss it (the model is 25-55% too fast where
    Lumos measures exposed communication and idle time no public mechanism gives): every other headline row meets it.
    """
    p = V.validation_points()
    head = p[p.headline]
    assert head.error.abs().median() <= 0.08
    lumos = head.source == "lumos2025"
    assert head.error[~lumos].abs().max() <= 0.20
    assert (head.error[lumos] < -0.20).all()
    # MT-NLG (micro-batch), BLOOM (its cluster's collective bandwidth) and Llama 3 (micro-batch) leave settings
    # unstated that move their rows by more than 5%
    assert p.source[p.headline].nunique() == 5


def test_corpus_models_come_from_the_models_table_when_named():
    c = V.corpus()
    llama = c[c.model_name == "Llama-3.1-405B"].iloc[0]
    m = V.corpus_model(llama)
    assert m.params == pytest.approx(405.9e9, rel=0.01) and m.seq_len == 8192
    bad = llama.copy()
    bad["layers"] = 120
    with pytest.raises(ValueError, match=r"names 'Llama-3.1-405B' but its shape"):
        V.corpus_model(bad)
    gpt = V.corpus_model(c[c.id == "sc21-t1-1t"].iloc[0])  # 128 x (12 h^2 + 13 h) + (V + s) h: ~1,008B
    assert gpt.params == pytest.approx(1008e9, rel=0.01)


@pytest.fixture
def broken_corpus(tmp_path, monkeypatch):
    """A copy of the corpus on a data directory searched first, for the test to break."""
    folder = tmp_path / "training_validation"
    folder.mkdir()
    text = Path(require(V.CORPUS)).read_text()
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    V._corpus.cache_clear()
    yield folder / "corpus.csv", text
    V._corpus.cache_clear()


def test_a_bad_corpus_names_the_row_and_column(broken_corpus):
    path, text = broken_corpus
    df = pd.read_csv(pd.io.common.StringIO(text), dtype=str, keep_default_na=False)
    df.loc[3, "metric"] = "tokens_per_day"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=rf"row '{df.id[3]}' has metric 'tokens_per_day'"):
        V.corpus()
    df.loc[3, "metric"] = "iteration_s"
    df.loc[5, "gpus"] = "7"
    df.to_csv(path, index=False)
    V._corpus.cache_clear()
    with pytest.raises(ValueError, match=rf"row '{df.id[5]}': gpus is not tp x pp x dp"):
        V.corpus()


def test_a_bad_alternative_or_breakdown_names_the_row(broken_corpus):
    path, text = broken_corpus
    df = pd.read_csv(pd.io.common.StringIO(text), dtype=str, keep_default_na=False)
    i = int(np.flatnonzero(df.source == "lumos2025")[0])
    df.loc[i, "alternatives"] = "overlap_dp=maybe"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=rf"row '{df.id[i]}': alternative 'overlap_dp=maybe' must be true or false"):
        V._alternatives(V.corpus().iloc[i])
    breakdown = pd.read_csv(require(V.BREAKDOWNS), dtype=str, keep_default_na=False)
    breakdown.loc[0, "corpus_id"] = "no-such-run"
    breakdown.to_csv(path.parent / "breakdowns.csv", index=False)
    V._breakdowns.cache_clear()
    try:
        with pytest.raises(ValueError, match="corpus_id 'no-such-run' is not a row"):
            V.breakdowns()
    finally:
        V._breakdowns.cache_clear()


def test_joint_alternatives_change_settings_together():
    row = V.corpus().set_index("id").loc["lumos-15b-2x16x4"].copy()
    row["id"] = "lumos-15b-2x16x4"
    assert V._alternatives(row) == [[("overlap_dp", False), ("distributed_optimizer", False)], [("overlap_tp", True)]]
