"""Carbon traces: CSV validation errors name file and line, zone lookup, forecast bounds, summary, time mapping."""

import numpy as np
import pytest

from workbench.carbon.traces import (
    TimeMapping,
    TraceError,
    forecast_bounds,
    load_trace,
    read_hourly_csv,
    trace_summary,
)
from workbench.testing import requires_data

HEADER = (
    "Datetime (UTC),Country,Zone Name,Zone Id,Carbon Intensity gCO₂eq/kWh (direct),"
    "Carbon Intensity gCO₂eq/kWh (LCA),Low Carbon Percentage,Renewable Percentage,Data Source,Data Estimated,"
    "Data Estimation Method\n"
)


def _csv(tmp_path, rows, name="X_2021_hourly.csv"):
    p = tmp_path / name
    body = "".join(f"{t},C,Z,ZZ,{d},{lca},0,0,src,{est},\n" for t, d, lca, est in rows)
    p.write_text(HEADER + body, encoding="utf-8")
    return p


def test_reads_hours_values_and_estimated_flag(tmp_path):
    p = _csv(
        tmp_path,
        [("2021-01-01 00:00:00", 100, 120, "false"), ("2021-01-01 01:00:00", 50.5, 60, "true")],
    )
    tr = read_hourly_csv(p)
    assert tr.zone == "ZZ"
    assert tr.hours.astype(str).tolist() == ["2021-01-01T00", "2021-01-01T01"]
    assert tr.direct.tolist() == pytest.approx([100.0, 50.5])
    assert tr.lca.tolist() == pytest.approx([120.0, 60.0])
    assert tr.estimated.tolist() == [False, True]


def test_gap_names_file_and_line(tmp_path):
    p = _csv(
        tmp_path,
        [("2021-01-01 00:00:00", 1, 1, "false"), ("2021-01-01 03:00:00", 1, 1, "false")],
    )
    with pytest.raises(TraceError, match=r"X_2021_hourly.csv:3: gap of 2 hour"):
        read_hourly_csv(p)


def test_non_monotone_hours_name_file_and_line(tmp_path):
    rows = [("2021-01-01 00:00:00", 1, 1, "false"), ("2021-01-01 01:00:00", 1, 1, "false")]
    rows.append(("2021-01-01 01:00:00", 1, 1, "false"))
    with pytest.raises(TraceError, match=r":4: .*non-monotone"):
        read_hourly_csv(_csv(tmp_path, rows))


def test_bad_value_and_missing_column(tmp_path):
    with pytest.raises(TraceError, match=r":2: column .*direct.* is not a number"):
        read_hourly_csv(_csv(tmp_path, [("2021-01-01 00:00:00", "x", 1, "false")]))
    p = tmp_path / "bad.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(TraceError, match=r"bad.csv:1: missing column"):
        read_hourly_csv(p)


def test_unknown_zone_and_missing_region(monkeypatch, tmp_path):
    with pytest.raises(TraceError, match="zone must be one of"):
        load_trace("Atlantis")
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    from workbench import data

    if data.find("carbon-dag/carbon-intensity/GB") is None:
        with pytest.raises(TraceError, match="no carbon-trace folder carbon-dag/carbon-intensity/GB"):
            load_trace("GB")


def test_forecast_bounds_hand_case():
    lo, hi = forecast_bounds(np.array([3.0, 1.0, 4.0, 1.0, 5.0]), horizon=3)
    assert lo.tolist() == [1.0, 1.0, 1.0, 1.0, 5.0]
    assert hi.tolist() == [4.0, 4.0, 5.0, 5.0, 5.0]


def test_time_mapping():
    m = TimeMapping(seconds_per_hour=60.0, start_hour=5)
    assert m.hour_index(0.0) == 5
    assert m.hour_index(59.9) == 5
    assert m.hour_index(60.0) == 6
    assert m.hour_start(7) == pytest.approx(120.0)
    with pytest.raises(ValueError, match="seconds_per_hour"):
        TimeMapping(seconds_per_hour=0.0)


def test_summary_hand_case(tmp_path):
    # two days: day 1 spread 100 (100..200), day 2 spread 0 (all 150)
    vals = [100.0] * 12 + [200.0] * 12 + [150.0] * 24
    rows = [
        (str(np.datetime64("2021-01-01T00") + np.timedelta64(h, "h")).replace("T", " ") + ":00:00", v, v, "false")
        for h, v in enumerate(vals)
    ]
    s = trace_summary(read_hourly_csv(_csv(tmp_path, rows)))
    assert s["daily_spread"] == pytest.approx(50.0)
    assert s["mean"] == pytest.approx(150.0)
    # hours 0-11 (100) are below their forward 48-h mean (150); others are not strictly below theirs
    assert s["share_below_48h_mean"] == pytest.approx(12 / 48)
    assert s["share_estimated"] == 0.0


@requires_data("carbon-dag/carbon-intensity/DE-LU/DE-LU_2022_hourly.csv")
def test_real_trace_years_join():
    tr = load_trace("DE", (2021, 2022))
    assert len(tr) == 8760 * 2
    assert (np.diff(tr.hours).astype(int) == 1).all()
    w = tr.window("2022-07-01T00", 24)
    assert len(w) == 24 and str(w.hours[0]) == "2022-07-01T00"
    with pytest.raises(TraceError, match="outside"):
        tr.window("2030-01-01T00", 24)
