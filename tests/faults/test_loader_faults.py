"""Malformed trace files: each is a ``TraceFormatError`` naming the file and the line, never a pandas or codec
traceback and never silently wrong values; implausible values load only when ``allow_extreme=True``."""

from __future__ import annotations

import gzip

import pytest

from workbench.workloads import traces

BURSTGPT = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
AZURE = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"


def _rows(n: int) -> str:
    return "".join(f"{i},ChatGPT,{i % 900},{i % 50},{i % 900 + i % 50},Conversation log\n" for i in range(n))


def _mooncake(*records: str) -> str:
    return "".join(r + "\n" for r in records)


def _raises(path, line, match, **kw):
    with pytest.raises(traces.TraceFormatError, match=match) as info:
        traces.load_trace(path, cache=False, **kw)
    assert str(info.value).startswith(f"{path}, line {line}: "), str(info.value)


def test_empty_numeric_field_in_azure(tmp_path):
    p = tmp_path / "azure_code.csv"
    p.write_text(AZURE + "2023-11-16 18:15:50.9951690,,8\n")
    _raises(p, 3, "column 'ContextTokens' is empty")


def test_truncated_gzip(tmp_path):
    p = tmp_path / "BurstGPT_1.csv.gz"
    whole = gzip.compress((BURSTGPT + _rows(100_000)).encode())
    p.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(traces.TraceFormatError, match="compressed stream ends early") as info:
        traces.load_trace(p, cache=False)
    assert f"{p}, line " in str(info.value)


def test_json_nan_timestamp(tmp_path):
    p = tmp_path / "trace.jsonl"
    p.write_text(
        _mooncake(
            '{"timestamp": 1, "input_length": 5, "output_length": 3}',
            '{"timestamp": NaN, "input_length": 5, "output_length": 3}',
        )
    )
    _raises(p, 2, "timestamp must be finite, got nan")


def test_non_utf8_byte_is_reported_on_its_own_line(tmp_path):
    p = tmp_path / "BurstGPT_1.csv"
    p.write_bytes(
        (BURSTGPT + _rows(5000)).encode() + b"5000,Chat\xffGPT,1,1,2,Conversation log\n5001,ChatGPT,1,1,2,"
        b"Conversation log\n"
    )
    _raises(p, 5002, r"not UTF-8: byte 0xff at column 10")


@pytest.mark.parametrize("year", ["1600", "9999"])
def test_azure_dates_outside_nanosecond_range(tmp_path, year):
    p = tmp_path / "azure_conv.csv"
    p.write_text(AZURE + f"{year}-11-16 18:15:50.9951690+00:00,3,8\n")
    _raises(p, 3, f"'{year}-11-16 .*' is outside the supported dates 1677-09-22 to 2262-04-11")


@pytest.mark.parametrize(
    ("name", "text", "line", "match"),
    [
        ("BurstGPT_1.csv", BURSTGPT + "-5,ChatGPT,1,1,2,API log\n", 2, "Timestamp is negative"),
        (
            "BurstGPT_1.csv",
            BURSTGPT + "5,ChatGPT,20000000,1,20000001,API log\n",
            2,
            "Request tokens is 20000000, above the plausible maximum of 10,000,000",
        ),
        ("azure_code.csv", AZURE + "2023-11-16 18:15:50.9951690,3,10000001\n", 3, "GeneratedTokens is 10000001"),
        (
            "trace.jsonl",
            _mooncake('{"timestamp": -1, "input_length": 5, "output_length": 3}'),
            1,
            "timestamp is negative",
        ),
        (
            "trace.jsonl",
            _mooncake(
                '{"timestamp": 0, "input_length": 5, "output_length": 3}',
                '{"timestamp": 1, "input_length": 12345678901, "output_length": 3}',
            ),
            2,
            "input_length is 12345678901",
        ),
    ],
)
def test_extreme_values_need_allow_extreme(tmp_path, name, text, line, match):
    p = tmp_path / name
    p.write_text(text)
    _raises(p, line, match)
    assert len(traces.load_trace(p, cache=False, allow_extreme=True)) == text.count("\n") - (name != "trace.jsonl")
