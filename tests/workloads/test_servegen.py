"""ServeGen pools and composer: safe PMF parsing, loading (raw, cache, summary), missing files, selection, filters,
summaries, composition (rates, shares, lengths, determinism, correlation, multimodal, reasoning) and bad input."""

from __future__ import annotations

import ast
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from workbench.data import find
from workbench.testing import data_file, requires_data
from workbench.workloads import schema
from workbench.workloads import servegen as sg
from workbench.workloads.servegen import load as sg_load
from workbench.workloads.servegen import stats as st

RAW = "servegen/data/language/m-large/chunk-0-trace.csv"


# ------------------------------------------------------------------------------------------------ PMF parser
@given(hs.dictionaries(hs.integers(0, 10**6), hs.floats(0.001, 1.0), min_size=1, max_size=40))
@settings(max_examples=60, deadline=None)
def test_parser_agrees_with_literal_eval(d):
    total = sum(d.values())
    d = {k: v / total for k, v in d.items()}
    text = repr(d)
    v, p = sg.parse_pmf_literal(text)
    ref = ast.literal_eval(text)
    keys = sorted(ref)
    assert v.tolist() == [float(k) for k in keys]
    np.testing.assert_allclose(p, [ref[k] for k in keys], rtol=1e-12)


def test_parser_float_keys_and_zero_probabilities():
    v, p = sg.parse_pmf_literal("{0.0: 0.0, 0.5: 0.25, 1.0: 0.75}")
    assert v.tolist() == [0.5, 1.0] and p.tolist() == [0.25, 0.75]
    v, p = sg.parse_pmf_literal("{}")
    assert v.size == 0 and p.size == 0


@pytest.mark.parametrize(
    "text",
    [
        "{1: 0.5, 2: 0.5",  # unbalanced
        "{__import__('os'): 1.0}",  # code is never evaluated
        "{1: 0.5, 2: 0.4}",  # does not sum to 1
        "{1: 0.5 2: 0.5}",  # missing comma
        "{1: 1.5, 2: -0.5}",  # probabilities outside [0, 1]
        "{-3: 1.0}",  # negative value
        "{1: 0.5, 2: x}",
        "[1, 2]",
    ],
)
def test_parser_rejects_malformed(text):
    with pytest.raises(ValueError, match="PMF literal"):
        sg.parse_pmf_literal(text, where="f.json")


def test_pmf_table_sampling_matches_probabilities():
    table = sg.PmfTable.from_pmfs([(np.array([1.0, 5.0]), np.array([0.2, 0.8])), (np.array([7.0]), np.array([1.0]))])
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 2, 200_000)
    x = table.sample(idx, rng.random(idx.size))
    assert set(np.unique(x[idx == 1])) == {7.0}
    assert np.mean(x[idx == 0] == 1.0) == pytest.approx(0.2, abs=0.005)
    np.testing.assert_allclose(table.means(), [4.2, 7.0])
    # extreme quantiles stay inside their own PMF
    assert table.sample(np.array([0, 0, 1]), np.array([0.0, 1 - 1e-16, 0.0])).tolist() == [1.0, 5.0, 7.0]


# ------------------------------------------------------------------------------------------------ loading
def test_unknown_model_is_a_clear_error():
    with pytest.raises(ValueError, match="model must be one of"):
        sg.load_pool("gpt-5")
    with pytest.raises(ValueError, match="source"):
        sg.load_pool("m-large", source="web")


def test_summary_pool_loads_without_raw_data():
    for model, (category, days) in sg.MODELS.items():
        pool = sg.load_pool(model, source="summary")
        assert pool.source == "summary" and pool.n_windows == days * 144
        assert pool.length_index.shape == (pool.n_clients, days * 4)
        assert set(pool.tables) == set(sg.FIELDS[category])
        assert (pool.rate_rps >= 0).all() and ((pool.family > 0) == (pool.rate_rps > 0)).all()


@requires_data(RAW)
def test_raw_pool_matches_files_and_handles_missing_length_files():
    path = data_file(RAW)
    pool = sg.load_pool("m-large", source="raw")
    assert pool.n_clients == 162 and pool.n_windows == 2016
    missing = (path.parent.parent.parent.parent / "MISSING_FILES.txt").read_text().split()
    n_missing = sum("m-large/" in m for m in missing)
    assert int((~pool.has_lengths).sum()) == n_missing == 15
    # a client without lengths still has its arrival statistics and samples from the pooled fallback
    cid = int(pool.client_ids[~pool.has_lengths][0])
    i = int(np.flatnonzero(pool.client_ids == cid)[0])
    assert not pool.own_lengths[i].any() and pool.rate_rps[i].sum() > 0
    # spot-check one window against the CSV and one PMF against the JSON via ast.literal_eval
    rows = pd.read_csv(path, header=None)
    np.testing.assert_allclose(pool.rate_rps[0], rows[1].to_numpy())
    doc = json.loads((path.parent / "chunk-0-dataset.json").read_text())
    ref = ast.literal_eval(doc["21600"]["input_tokens"])
    v, p = pool.tables["input_tokens"].pmf(int(pool.length_index[0, 1]))
    keys = sorted(k for k, q in ref.items() if q > 0)
    assert v.tolist() == keys
    np.testing.assert_allclose(p, [ref[k] for k in keys], rtol=1e-9)


@requires_data("servegen/data/reason/deepseek-r1/chunk-0-trace.csv")
def test_cache_round_trip_is_identical(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    a = sg.load_pool("deepseek-r1", cache=False)
    b = sg_load._load_raw("deepseek-r1", sg_load.raw_model_dir("deepseek-r1"), cache=True)  # builds the cache
    c = sg_load._load_raw("deepseek-r1", sg_load.raw_model_dir("deepseek-r1"), cache=True)  # reads it
    assert list((tmp_path / "servegen").glob("deepseek-r1-*.npz"))
    for x in (b, c):
        np.testing.assert_array_equal(a.rate_rps, x.rate_rps)
        np.testing.assert_array_equal(a.tables["output_tokens"].values, x.tables["output_tokens"].values)


def _tiny_model_dir(tmp_path, trace_rows, dataset):
    d = tmp_path / "servegen" / "data" / "reason" / "deepseek-r1"
    d.mkdir(parents=True)
    (d / "chunk-0-trace.csv").write_text("\n".join(trace_rows) + "\n")
    if dataset is not None:
        (d / "chunk-0-dataset.json").write_text(dataset)
    return d


def test_malformed_files_name_file_and_line(tmp_path):
    rows = ["0,1.0,1.0,Gamma,1.0,1.0", "600,oops,1.0,Gamma,1.0,1.0"]
    d = _tiny_model_dir(tmp_path, rows, None)
    with pytest.raises(ValueError, match=r"chunk-0-trace.csv:2: column 'rate'"):
        sg_load._build_from_raw("deepseek-r1", sg_load._client_files(d))
    (d / "chunk-0-trace.csv").write_text("0,1.0,1.0,Poisson,1.0,1.0\n")
    with pytest.raises(ValueError, match=r"chunk-0-trace.csv:1: pattern"):
        sg_load._build_from_raw("deepseek-r1", sg_load._client_files(d))
    (d / "chunk-0-trace.csv").write_text("0,1.0,1.0,Gamma,1.0,1.0\n")
    bad = json.dumps({"0": {"input_tokens": "{1: 1.0}", "output_tokens": "{2: oops}", "reason_ratio": "{0.5: 1.0}"}})
    (d / "chunk-0-dataset.json").write_text(bad)
    with pytest.raises(ValueError, match=r"chunk-0-dataset.json:1: window 0, field output_tokens"):
        sg_load._build_from_raw("deepseek-r1", sg_load._client_files(d))


def test_tiny_pool_without_length_file_uses_pooled_fallback(tmp_path):
    d = _tiny_model_dir(tmp_path, ["0,2.0,1.0,Gamma,1.0,0.5"], None)
    d2 = d / "chunk-1-trace.csv"
    d2.write_text("0,1.0,2.0,Weibull,0.5,1.0\n")
    (d / "chunk-1-dataset.json").write_text(
        json.dumps(
            {
                "0": {"input_tokens": "{10: 1.0}", "output_tokens": "{20: 1.0}", "reason_ratio": "{0.5: 1.0}"},
                "21600": "{}",
            }
        )
    )
    arrays = sg_load._build_from_raw("deepseek-r1", sg_load._client_files(d))
    pool = sg_load._pool_from_arrays(arrays, "raw")
    assert pool.has_lengths.tolist() == [False, True]
    w = sg.compose(pool, start_s=0, duration_s=600, seed=1)
    assert set(w["client_id"]) == {0, 1}
    assert (w["input_tokens"] == 10).all()  # client 0 borrows the window's pooled PMF
    assert (w["reasoning_tokens"] == 10).all() and (w["answer_tokens"] == 10).all()


# ------------------------------------------------------------------------------------------------ pool API
@pytest.fixture(scope="module")
def r1():
    return sg.load_pool("deepseek-r1")


def test_select_and_bad_spans(r1):
    sub = r1.select(3600, 1800)
    assert sub.n_windows == 3 and sub.start_s == 3600 and sub.length_index.shape[1] == 1
    np.testing.assert_array_equal(sub.rate_rps, r1.rate_rps[:, 6:9])
    with pytest.raises(ValueError, match="outside"):
        r1.select(80000, 7200)
    with pytest.raises(ValueError, match="duration_s"):
        r1.select(0, -5)


def test_filters_and_summaries(r1):
    s = r1.client_summary()
    assert s["share"].sum() == pytest.approx(1.0)
    top = r1.filter(top=5)
    assert set(top.client_ids) == set(s.nlargest(5, "mean_rate_rps")["client_id"])
    bursty = r1.filter(min_cv=2.0)
    assert (bursty.client_summary()["cv"] >= 2.0).all()
    assert r1.filter(client_ids=[3, 5]).client_ids.tolist() == [3, 5]
    with pytest.raises(ValueError, match="empty"):
        r1.filter(min_rate_rps=1e6)
    with pytest.raises(ValueError, match="not clients"):
        r1.filter(client_ids=[9999])
    with pytest.raises(ValueError, match="min_cv"):
        r1.filter(min_cv=-1)
    agg = r1.aggregate_rate()
    assert len(agg) == 144 and agg.sum() == pytest.approx(r1.rate_rps.sum())
    pct = r1.length_percentiles([0.5, 0.99])
    assert (pct[0.99] >= pct[0.5]).all()
    q = r1.weighted_cv_quantiles([0.1, 0.5, 0.9])
    assert q[0] <= q[1] <= q[2]


def test_stats_helpers(r1):
    _x, y = st.lorenz_curve(r1)
    assert y[0] == 0 and y[-1] == pytest.approx(1) and (np.diff(y) >= -1e-12).all()
    assert st.top_share(r1, r1.n_clients) == pytest.approx(1.0)
    assert st.variance_share(r1).sum() == pytest.approx(1.0)
    prof = st.diurnal_profile(r1)
    assert len(prof) == 24 and prof.notna().all()
    assert 0 <= st.exponential_ks(r1, "output_tokens") <= 1
    b = st.burstiness(r1)
    assert 0 < b.cv_p25 <= b.cv_median <= b.cv_p75
    active = r1.family > 0
    assert b.weibull_fraction == pytest.approx((r1.family[active] == 2).mean()) == 1 - b.gamma_fraction
    rng = np.random.default_rng(0)
    assert st.bimodality_coefficient(rng.uniform(size=200_000)) == pytest.approx(5 / 9, abs=0.01)


# ------------------------------------------------------------------------------------------------ composer
def test_compose_rates_shares_and_schema():
    pool = sg.load_pool("m-large").select(12 * 3600, 3600)
    w = sg.compose(pool, rate_rps=50.0, seed=3)
    schema.validate_requests(w)
    assert list(w.columns) == ["client_id", "arrival_s", "input_tokens", "output_tokens"]
    assert len(w) == pytest.approx(50 * 3600, rel=0.03)
    assert w["arrival_s"].between(0, 3600).all() and (w["input_tokens"] >= 0).all()
    # each client's share of requests follows its share of the data's rate (busiest clients, where counts are big)
    share = pool.rate_rps.sum(axis=1) / pool.rate_rps.sum()
    top = np.argsort(-share)[:3]
    counts = w["client_id"].value_counts()
    for i in top:
        assert counts[pool.client_ids[i]] / len(w) == pytest.approx(share[i], rel=0.15)
    # the data's own curve by default, scaled
    own = sg.compose(pool, rate_scale=0.1, seed=3)
    assert len(own) == pytest.approx(0.1 * pool.rate_rps.sum() * 600, rel=0.05)


def test_compose_follows_a_rate_curve():
    pool = sg.load_pool("m-mid").select(0, 3600)
    curve = np.array([10.0, 10.0, 0.0, 0.0, 40.0, 40.0])
    w = sg.compose(pool, start_s=0, duration_s=3600, rate_rps=curve, seed=0)
    per_window = np.bincount((w["arrival_s"] // 600).astype(int), minlength=6)
    assert per_window[2] == per_window[3] == 0
    assert per_window[4] + per_window[5] == pytest.approx(4 * (per_window[0] + per_window[1]), rel=0.2)


def test_compose_lengths_follow_the_clients_pmfs():
    pool = sg.load_pool("m-small").select(6 * 3600, 6 * 3600)
    w = sg.compose(pool, rate_rps=30.0, seed=1)
    # mean input per client vs its PMF mean (busiest client)
    busiest = w["client_id"].value_counts().index[0]
    i = int(np.flatnonzero(pool.client_ids == busiest)[0])
    pmf_mean = pool.tables["input_tokens"].means()[pool.length_index[i, 0]]
    assert w.loc[w["client_id"] == busiest, "input_tokens"].mean() == pytest.approx(pmf_mean, rel=0.05)


def test_compose_is_deterministic_and_correlation_option_works():
    pool = sg.load_pool("m-large").select(12 * 3600, 1200)
    a = sg.compose(pool, rate_rps=20.0, seed=7)
    b = sg.compose(pool, rate_rps=20.0, seed=7)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(sg.compose(pool, rate_rps=20.0, seed=8))

    def spearman(df):
        return df[["input_tokens", "output_tokens"]].rank().corr().iloc[0, 1]

    assert abs(spearman(a)) < spearman(sg.compose(pool, rate_rps=20.0, seed=7, correlation=0.9))


def test_multimodal_and_reasoning_columns():
    mm = sg.compose(sg.load_pool("mm-image"), start_s=12 * 3600, duration_s=600, rate_rps=20.0, seed=0)
    assert {"text_tokens", "image_count", "image_tokens"} <= set(mm.columns)
    assert (mm["input_tokens"] >= mm["text_tokens"] + mm["image_tokens"]).all()
    assert (mm.loc[mm["image_count"] == 0, "image_tokens"] == 0).all()
    r = sg.compose(sg.load_pool("deepseek-r1"), start_s=12 * 3600, duration_s=600, rate_rps=20.0, seed=0)
    assert (r["reasoning_tokens"] + r["answer_tokens"] == r["output_tokens"]).all()
    assert (r["reasoning_tokens"] >= 0).all() and (r["answer_tokens"] >= 0).all()


def test_multimodal_tokens_are_drawn_per_image():
    """The released PMFs give tokens per image: a request's image tokens are one draw per image. ServeGen's reference
    generator gives 817 image tokens per request (1.51 images) on mm-image at 14:00, 1 h at 100 req/s."""
    mm = sg.compose(sg.load_pool("mm-image"), start_s=14 * 3600, duration_s=3600, rate_rps=100.0, seed=0)
    assert mm["image_count"].mean() == pytest.approx(1.51, rel=0.02)
    assert mm["image_tokens"].mean() == pytest.approx(817, rel=0.05)
    per_count = mm[mm["image_count"].between(1, 4)].groupby("image_count")["image_tokens"].min()
    assert (np.diff(per_count.to_numpy()) > 0).all()  # k images carry at least k one-image draws


def test_fixed_window_counts_matches_the_reference_rule():
    pool = sg.load_pool("deepseek-r1")

    def counts(seed, fixed):
        w = sg.compose(pool, start_s=12 * 3600, duration_s=1200, rate_rps=20.0, seed=seed, fixed_window_counts=fixed)
        assert w["arrival_s"].between(0, 1200, inclusive="left").all() and w["arrival_s"].is_monotonic_increasing
        return w.groupby(["client_id", (w["arrival_s"] // 600).astype(int)]).size()

    a, b = counts(1, True), counts(2, True)
    pd.testing.assert_series_equal(a, b)  # a fixed count per client-window, whatever the seed
    assert abs(a.sum() - 24_000) <= len(a)  # round(rate x 600 s) per client-window
    assert not counts(1, False).equals(counts(2, False))  # the default renewal process: counts vary


def test_naive_workload_is_poisson_with_pooled_lengths():
    comp = sg.compose(sg.load_pool("m-large"), start_s=12 * 3600, duration_s=1800, rate_rps=20.0, seed=0)
    naive = sg.naive_workload(comp, seed=0)
    schema.validate_requests(naive)
    gaps = np.diff(naive["arrival_s"].to_numpy())
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.05)
    assert len(naive) == pytest.approx(len(comp), rel=0.05)
    assert naive["input_tokens"].mean() == pytest.approx(comp["input_tokens"].mean(), rel=0.1)


def test_compose_bad_input():
    pool = sg.load_pool("deepseek-r1")
    with pytest.raises(ValueError, match="rate_rps"):
        sg.compose(pool, start_s=0, duration_s=1200, rate_rps=[1.0, -2.0])
    with pytest.raises(ValueError, match="rate_rps"):
        sg.compose(pool, start_s=0, duration_s=1200, rate_rps=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="rate_rps"):
        sg.compose(pool, start_s=0, duration_s=1200, rate_rps=-1.0)
    with pytest.raises(ValueError, match="outside"):
        sg.compose(pool, start_s=86000, duration_s=3600)
    with pytest.raises(ValueError, match="correlation"):
        sg.compose(pool, start_s=0, duration_s=600, correlation=1.5)
    with pytest.raises(TypeError, match="ClientPool"):
        sg.compose("deepseek-r1")
    silent = pool.filter(client_ids=[int(pool.client_ids[np.argmin(pool.rate_rps[:, 0] > 0)])])
    if silent.rate_rps[0, 0] == 0:
        with pytest.raises(ValueError, match="no selected client is active"):
            sg.compose(silent, start_s=0, duration_s=600, rate_rps=5.0)


@pytest.mark.parametrize("guide_size", [None, 1, 64, 4096])
def test_guided_sampling_equals_binary_search(guide_size):
    pool = sg.load_pool("deepseek-r1")
    table = pool.tables["output_tokens"]
    rng = np.random.default_rng(5)
    idx = rng.integers(0, table.n, 50_000)
    u = np.r_[rng.random(idx.size - 3), 0.0, 0.5, np.nextafter(1.0, 0.0)]
    np.testing.assert_array_equal(table.sample_guided(idx, u, guide_size=guide_size), table.sample(idx, u))


def test_half_naive_workloads_for_ablation():
    comp = sg.compose(sg.load_pool("m-small"), start_s=12 * 3600, duration_s=600, rate_rps=10.0, seed=2)
    arr = sg.naive_workload(comp, seed=1, keep="arrivals")
    np.testing.assert_array_equal(arr["arrival_s"], comp["arrival_s"])
    np.testing.assert_array_equal(arr["client_id"], comp["client_id"])
    assert not np.array_equal(arr["input_tokens"], comp["input_tokens"])
    lens = sg.naive_workload(comp, seed=1, keep="lengths")
    assert not np.array_equal(lens["arrival_s"], comp["arrival_s"])
    # lengths keep their composed order: the first and last requests keep theirs
    assert lens["input_tokens"].iloc[0] == comp["input_tokens"].iloc[0]
    assert lens["input_tokens"].iloc[-1] == comp["input_tokens"].iloc[-1]
    with pytest.raises(ValueError, match="keep"):
        sg.naive_workload(comp, keep="clients")
    with pytest.raises(ValueError, match="empty"):
        sg.naive_workload(comp.iloc[:0])


def test_summary_manifest_checksums():
    import hashlib

    from workbench.data import PROJECT_ROOT

    folder = PROJECT_ROOT / "datasets" / "servegen"
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    assert manifest["license"].startswith("Apache-2.0") and (folder / "LICENSE").exists()
    total = 0
    for model, entry in manifest["models"].items():
        path = folder / entry["summary"]
        total += path.stat().st_size
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["summary_sha256"], model
        assert sum(f.get("missing", False) for f in entry["source_files"]) == entry["clients_without_lengths"]
    assert total < 5e6  # a few MB at most
    # spot-check two source checksums against the raw files when they are present
    raw = find("servegen/data/multimodal/mm-image/chunk-0-trace.csv")
    if raw is None:  # the summaries above need no data; the raw files are checked where they exist
        return
    for f in manifest["models"]["mm-image"]["source_files"][:2]:
        data = (raw.parent / f["file"].rsplit("/", 1)[1]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f["sha256"]
