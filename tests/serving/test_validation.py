"""The serving validation table: every published point replays, malformed points fail naming the point, and the
summary's statistics. The error goals are not asserted here (the cost model is changing); notebook 10 reports them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from workbench.serving import Deployment
from workbench.serving.engines import engines
from workbench.serving.validation import (
    ENGINE_OF,
    KINDS,
    METRICS,
    published,
    replay,
    validation_summary,
    validation_table,
)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return validation_table()


def _row(**change) -> dict:
    row = published().set_index("point").loc["sarathi-yi34b-tp2-prefill-1024"].to_dict()
    row["point"] = "sarathi-yi34b-tp2-prefill-1024"
    row.update(change)
    return row


def test_every_published_row_is_well_formed():
    pub = published()
    assert pub["point"].is_unique
    assert set(pub["metric"]) <= set(METRICS)
    assert set(pub["engine"]) <= set(ENGINE_OF)
    assert set(ENGINE_OF.values()) <= set(engines())
    assert pub["value"].gt(0).all()
    assert pub["source"].str.contains("https://").all()  # every point names the document it comes from


def test_every_published_row_replays_to_a_finite_positive_value(table):
    pub = published()
    assert len(table) == len(pub)
    assert table["point"].tolist() == pub["point"].tolist()
    assert all(math.isfinite(v) and v > 0 for v in table["model_estimate"])
    assert set(table["kind"]) <= set(KINDS)
    assert table["engine_profile"].tolist() == [ENGINE_OF[e] for e in pub["engine"]]
    assert (table["error"] == table["model_estimate"] / table["published"] - 1).all()


def test_the_table_spans_kinds_engines_and_gpu_generations(table):
    counts = table["kind"].value_counts()
    assert counts["iteration"] >= 12 and counts["end_to_end"] >= 12
    assert table["engine_profile"].nunique() >= 3
    assert table["gpu"].nunique() >= 3


def test_a_chunk_covering_the_prompt_is_one_prefill_iteration():
    whole = replay(_row())
    chunked = replay(_row(metric="chunked_prefill_s", chunk_tokens=4096, output_tokens=1))
    assert chunked == pytest.approx(whole)
    assert replay(_row(metric="chunked_prefill_s", chunk_tokens=256)) > 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"metric": "tokens_per_joule"},
            r"'sarathi-yi34b-tp2-prefill-1024': unknown metric 'tokens_per_joule'; known: ",
        ),
        ({"model": "Llama-9-1T"}, r"'sarathi-yi34b-tp2-prefill-1024': unknown model 'Llama-9-1T'"),
        ({"gpu": "Z100"}, r"'sarathi-yi34b-tp2-prefill-1024': unknown GPU 'Z100'"),
        ({"engine": "deepspeed-mii"}, r"'sarathi-yi34b-tp2-prefill-1024': unknown engine 'deepspeed-mii'; known: "),
        ({"metric": "chunked_prefill_s", "chunk_tokens": float("nan")}, r"needs column 'chunk_tokens'"),
        ({"value": -1.0}, r"'sarathi-yi34b-tp2-prefill-1024': value must be finite and > 0"),
        ({"metric": "single_request_itl_s", "max_batched_tokens": 8192, "output_tokens": 1}, r"output_tokens >= 2"),
    ],
)
def test_a_malformed_row_names_the_point(change, message):
    with pytest.raises(ValueError, match=message):
        replay(_row(**change))
    with pytest.raises(ValueError, match=message):
        validation_table(pd.DataFrame([_row(**change)]))


def test_summary_medians_and_worst_points_on_a_hand_made_table():
    t = pd.DataFrame(
        {
            "kind": ["iteration", "iteration", "iteration", "end_to_end", "end_to_end", "end_to_end", "end_to_end"],
            "point": ["a", "b", "c", "d", "e", "f", "g"],
            "error": [0.1, -0.3, 0.2, 0.5, -0.1, 0.05, -0.2],
        }
    )
    s = validation_summary(t)
    assert list(s.index) == ["iteration", "end_to_end"]
    assert s.loc["iteration", "points"] == 3
    assert s.loc["iteration", "median_abs_error"] == pytest.approx(0.2)
    assert (s.loc["iteration", "worst_point"], s.loc["iteration", "worst_error"]) == ("b", pytest.approx(-0.3))
    assert s.loc["end_to_end", "median_abs_error"] == pytest.approx(0.15)  # |errors| 0.05, 0.1, 0.2, 0.5
    assert (s.loc["end_to_end", "worst_point"], s.loc["end_to_end", "worst_error"]) == ("d", pytest.approx(0.5))


def test_summary_of_the_real_table_matches_its_rows(table):
    s = validation_summary(table)
    for kind, row in s.iterrows():
        part = table[table["kind"] == kind]
        assert row["points"] == len(part)
        assert row["median_abs_error"] == pytest.approx(part["error"].abs().median())
        assert abs(row["worst_error"]) == pytest.approx(part["error"].abs().max())


def test_summary_rejects_a_table_without_its_columns():
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['kind'\]"):
        validation_summary(pd.DataFrame({"point": ["a"], "error": [0.1]}))
    with pytest.raises(ValueError, match=r"unknown kind\(s\) \['online'\]; known: iteration, end_to_end"):
        validation_summary(pd.DataFrame({"kind": ["online"], "point": ["a"], "error": [0.1]}))


def test_validation_points_is_tidy_with_the_envelope_a_scoreboard_reads(table):
    from workbench.serving.validation import POINT_COLUMNS, validation_by_source, validation_points

    p = validation_points(table)
    pub = published()
    assert list(p.columns) == list(POINT_COLUMNS)
    assert list(p.columns[:6]) == ["source", "metric", "reference", "model", "error", "kind"]
    need = {"gpu", "model_name", "tp", "pp", "batch", "input_tokens", "output_tokens", "engine", "rate_rps"}
    assert need <= set(p.columns)
    assert len(p) == len(pub) and not p.duplicated(["point", "metric"]).any()  # one row per (point, metric)
    assert p["source"].tolist() == pub["source_id"].tolist() and p["source"].str.len().between(3, 40).all()
    assert p["reference"].tolist() == pub["value"].astype(float).tolist()
    assert ((p["error"] - (p["model"] - p["reference"]) / p["reference"]).abs() < 1e-12).all()
    assert set(p["kind"]) == set(KINDS)
    assert p["model_name"].tolist() == pub["model"].tolist() and p["pp"].tolist() == pub["pp"].tolist()
    assert p["engine"].tolist() == [ENGINE_OF[e] for e in pub["engine"]]
    assert p["rate_rps"].isna().tolist() == pub["rate_rps"].isna().tolist()  # NaN where the benchmark had no rate
    by = validation_by_source(p)
    assert by["points"].sum() == len(p)
    assert set(by.index.get_level_values("source")) == set(p["source"])
    one = by.loc[("sarathi-serve-osdi24", "decode_iteration_s")]
    rows = p[(p["source"] == "sarathi-serve-osdi24") & (p["metric"] == "decode_iteration_s")]
    assert one["median_abs_error"] == pytest.approx(rows["error"].abs().median())
    assert abs(one["worst_error"]) == pytest.approx(rows["error"].abs().max())
    with pytest.raises(ValueError, match="validation_points"):
        validation_by_source(p.drop(columns="source"))


def test_the_tp_scaling_figure_shows_the_tables_rows_measured_and_modelled(table):
    from workbench.testing import figure_problems
    from workbench.viz import FULL_WIDTH_PX
    from workbench.viz.serving_hw import tp_scaling_figure

    sw = table[(table["source_id"] == "splitwise-isca24") & (table["batch"] == 1)]
    decode = sw[(sw["metric"] == "decode_iteration_s") & (sw["input_tokens"] == 512 + 64)]
    prefill = sw[(sw["metric"] == "prefill_iteration_s") & (sw["input_tokens"] == 8192)]
    assert len(decode) == len(prefill) == 6  # TP 2, 4, 8 on two machines
    fig = tp_scaling_figure({"decode": decode, "prefill": prefill})
    assert not figure_problems(fig, width_px=FULL_WIDTH_PX)
    names = [t.name for t in fig.data]
    assert names == ["A100-80GB measured", "A100-80GB model", "H100-SXM measured", "H100-SXM model"] * 2
    for trace, (rows, col) in zip(fig.data[:2], [(decode, "published"), (decode, "model_estimate")], strict=True):
        part = rows[rows["gpu"] == "A100-80GB"].sort_values("tp")
        assert list(trace.x) == [2, 4, 8]
        np.testing.assert_allclose(trace.y, 1e3 * part[col].to_numpy())
    # a GPU only the second panel has still gets its legend entries, once
    split = tp_scaling_figure({"A100 only": decode[decode["gpu"] == "A100-80GB"], "both": prefill})
    assert sorted(t.name for t in split.data if t.showlegend is not False) == sorted(set(names))
    with pytest.raises(ValueError, match="lack column"):
        tp_scaling_figure({"x": decode.drop(columns="tp")})
    with pytest.raises(ValueError, match="more than one row"):
        tp_scaling_figure({"x": pd.concat([decode, decode])})


def _trace_rows() -> pd.DataFrame:
    pub = published()
    return pub[pub["metric"].str.startswith("trace_")]


def test_a_recorded_runs_means_are_its_request_tables_own():
    from workbench.data import require
    from workbench.serving.validation import TRACES

    rows = _trace_rows()
    assert set(rows["metric"]) == {"trace_mean_ttft_s", "trace_mean_tpot_s", "trace_output_tokens_per_s"}
    for source, part in rows.groupby("source_id"):
        t = pd.read_csv(require(TRACES.format(source=source)))
        assert len(t) == int(part["requests"].iloc[0])
        assert t["arrival_s"].is_monotonic_increasing and (t["first_token_s"] >= t["arrival_s"]).all()
        multi = t[t["output_tokens"] >= 2]
        measured = {
            "trace_mean_ttft_s": (t["first_token_s"] - t["arrival_s"]).mean(),
            "trace_mean_tpot_s": ((multi["finish_s"] - multi["first_token_s"]) / (multi["output_tokens"] - 1)).mean(),
            "trace_output_tokens_per_s": t["output_tokens"].sum() / (t["finish_s"].max() - t["arrival_s"].min()),
        }
        for metric, value in part.set_index("metric")["value"].items():
            assert value == pytest.approx(measured[metric], rel=1e-5), (source, metric)


def test_a_recorded_run_replays_on_the_kv_cache_and_limits_it_reported():
    from workbench.serving.validation import _deployment

    row = _trace_rows().iloc[0].to_dict()
    dep = _deployment(row)
    assert dep.kv_capacity_tokens == int(row["kv_tokens"]) == 41408  # 2,588 blocks of 16 tokens, as vLLM reported
    assert dep.frontend_s == 0.0 and dep.engine == "vllm"
    # a smaller cache holds fewer requests at once: the replay's first tokens come later
    assert replay({**row, "metric": "trace_mean_ttft_s", "kv_tokens": 20000}) > replay(
        {**row, "metric": "trace_mean_ttft_s"}
    )
    with pytest.raises(ValueError, match=r"llmservingsim-rtx4090.*kv_tokens \(900000\) must be >= 1 and fit beside"):
        replay({**row, "kv_tokens": 900000})
    with pytest.raises(ValueError, match=r"holds 300 requests, the row states 299"):
        replay({**row, "requests": 299})
    with pytest.raises(ValueError, match=r"needs column 'requests'"):
        replay({**row, "requests": float("nan")})
    # a run that reported no KV cache (the RTX PRO 6000's) replays on the model's own, at vLLM's default utilisation
    own = _deployment({**row, "kv_tokens": float("nan")})
    assert own.kv_capacity_tokens == Deployment("Llama-3.1-8B", "RTX-4090", engine="vllm").kv_capacity_tokens
    assert own.kv_capacity_tokens != 41408
    pro = _trace_rows().set_index("point").loc["llmservingsim-rtxpro6000-llama31-8b-tpot"].to_dict()
    assert math.isnan(pro["kv_tokens"]) and _deployment(pro).kv_capacity_tokens > 300 * (857 + 653)
