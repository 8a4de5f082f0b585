"""BurstGPT-style generator: parameters, RPS scaling, determinism, conditional responses, failures, fit -> generate ->
fit round trip (on generated and on the real Azure traces), and the labelled stand-in."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.testing import data_file, requires_data
from workbench.workloads import burstgpt as B
from workbench.workloads import characterize as C
from workbench.workloads import schema, traces


def test_generate_matches_parameters():
    m = B.from_params(10 * 1200.0, 1.5, shape=0.5, zipf_alpha=1.1, failure_prob=0.05)
    df = B.generate(m, seed=0)
    schema.validate_requests(df)
    assert len(df) == pytest.approx(m.expected_requests, rel=0.1)
    fits = C.window_gamma_fits(df, 1200.0, resolution_s=0.0, start_s=0.0)
    assert np.median(fits["shape"]) == pytest.approx(0.5, rel=0.1)
    assert C.fit_zipf(df["input_tokens"], x_max=m.request_max).params["alpha"] == pytest.approx(1.1, abs=0.02)
    failed = df["failed"].to_numpy(dtype=bool)
    assert failed.mean() == pytest.approx(0.05, abs=0.01)
    assert (df.loc[failed, "output_tokens"] == 0).all() and (df.loc[~failed, "output_tokens"] >= 1).all()
    assert df["input_tokens"].between(1, m.request_max).all()


def test_same_seed_same_bytes_and_different_seed_differs():
    m = B.from_params(3600.0, 2.0)
    a, b, c = B.generate(m, seed=11), B.generate(m, seed=11), B.generate(m, seed=12)
    pd.testing.assert_frame_equal(a, b)
    assert not a["arrival_s"].equals(c["arrival_s"])


def test_rps_scaling_divides_time_and_keeps_cv():
    m = B.from_params(6 * 1200.0, 1.0, shape=0.4)
    base, fast = B.generate(m, seed=5), B.generate(m, rate_scale=4.0, seed=5)
    np.testing.assert_allclose(fast["arrival_s"], base["arrival_s"] / 4.0)
    gb = np.diff(base["arrival_s"].to_numpy())
    gf = np.diff(fast["arrival_s"].to_numpy())
    assert gf.std() / gf.mean() == pytest.approx(gb.std() / gb.mean(), rel=1e-9)
    assert len(fast) / fast["arrival_s"].iloc[-1] == pytest.approx(4 * len(base) / base["arrival_s"].iloc[-1], rel=1e-6)


def test_a_window_without_requests_generates_none():
    """A fit over short windows of a quiet trace has windows of rate 0 (BurstGPT's round trip at 60-s windows and
    100x the rate refused one: "rate_rps must be > 0"); such a window generates no request, the others as before."""
    m = B.from_params(3 * 1200.0, np.array([1.0, 0.0, 2.0]))
    df = B.generate(m, seed=4)
    windows = np.bincount((df["arrival_s"].to_numpy() // 1200.0).astype(int), minlength=3)
    assert windows[1] == 0 and windows[0] > 0 and windows[2] > windows[0]
    assert len(B.generate(m, rate_scale=100.0, seed=4)) == len(df)


def test_response_grows_with_request_when_slope_positive():
    m = B.from_params(7200.0, 5.0, response_slope=0.4, response_sigma=0.5)
    df = B.generate(m, seed=2)
    rr = C.request_response(df)
    assert rr.spearman > 0.5
    assert rr.table["mean_output"].iloc[-3:].mean() > 3 * rr.table["mean_output"].iloc[:3].mean()
    flat = B.generate(B.from_params(7200.0, 5.0, response_slope=0.0), seed=2)
    assert abs(C.request_response(flat).spearman) < 0.05


def test_fit_model_recovers_generator_parameters():
    truth = B.from_params(
        8 * 1200.0, np.linspace(0.5, 3.0, 8), shape=np.linspace(0.4, 2.0, 8), response_slope=0.25, failure_prob=0.02
    )
    fit = B.fit_model(B.generate(truth, seed=9))
    np.testing.assert_allclose(fit.shape, truth.shape, rtol=0.2)
    np.testing.assert_allclose(fit.rate_rps, truth.rate_rps, rtol=0.25)
    assert fit.response_slope == pytest.approx(0.25, abs=0.03)
    assert fit.response_sigma == pytest.approx(0.8, abs=0.05)
    assert fit.failure_prob.mean() == pytest.approx(0.02, abs=0.01)


def test_round_trip_within_sampling_error():
    df = B.generate(B.from_params(6 * 1200.0, 2.0, shape=0.6), seed=4)
    result = B.round_trip(df, seed=0)
    rt = result.table
    assert result.fit.n_windows == result.refit.n_windows == 6
    assert set(rt["parameter"]) == {"shape", "rate_rps", "zipf_alpha", "response_slope"}
    assert (rt["z"].abs() < 4).all()
    summary = B.round_trip_summary({"a": result, "b": rt.iloc[:3]})
    assert summary["trace"].tolist() == ["a", "b"] and summary["parameters"].tolist() == [len(rt), 3]
    assert summary["share_within_2se"].iloc[0] == (rt["z"].abs() < 2).mean() >= 0.8
    assert summary["max_abs_z"].iloc[0] == rt["z"].abs().max()


@requires_data("azure-llm-2023/AzureLLMInferenceTrace_code.csv")
def test_round_trip_on_real_azure_code():
    df = traces.load_trace(data_file("azure-llm-2023/AzureLLMInferenceTrace_code.csv"))
    rt = B.round_trip(df, window_s=300.0, seed=0).table
    assert (rt["z"].abs() < 4).all()
    shapes = rt[rt["parameter"] == "shape"]
    assert (shapes["fit"] < 0.5).sum() >= 0.8 * len(shapes)  # the code service is bursty in nearly every window


def test_stand_in_is_labelled_and_has_the_paper_parameters():
    df = B.stand_in(days=2.0, seed=0)
    assert df.attrs["stand_in"] is True and "not BurstGPT data" in df.attrs["source"]
    assert (df["arrival_s"] % 1 == 0).all()
    schema.validate_requests(df)
    assert set(df["model"].cat.categories) == {"ChatGPT", "GPT-4"}
    assert C.fit_zipf(df["input_tokens"], x_max=16_384).params["alpha"] == pytest.approx(1.1, abs=0.02)
    pd.testing.assert_frame_equal(df, B.stand_in(days=2.0, seed=0))


def test_validation_errors_name_the_parameter():
    with pytest.raises(ValueError, match="rate_rps"):
        B.from_params(3600.0, -1.0)
    with pytest.raises(ValueError, match="shape"):
        B.from_params(3600.0, 1.0, shape=0.0)
    with pytest.raises(ValueError, match="one value per window"):
        B.from_params(3600.0, [1.0, 2.0], window_s=600.0)
    with pytest.raises(ValueError, match="rate_scale"):
        B.generate(B.from_params(60.0, 1.0), rate_scale=0)
    with pytest.raises(TypeError, match="BurstGPTModel"):
        B.generate({"rate": 1})
