"""The format registry (:mod:`workbench.workloads.formats`): every writable and readable format round-trips a small
table through write then read (the columns it keeps, values equal), the registry recognises each file name and
first line as the three places that decided formats before it did, and an unknown ending or header is an error that
names the file and lists the known ones."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.workloads import export, formats, traces
from workbench.workloads.convert import read_table
from workbench.workloads.traces import TraceFormatError


def _table() -> pd.DataFrame:
    out = np.array([5, 0, 7, 300, 1])
    return pd.DataFrame(
        {
            "arrival_s": [0.0, 0.25, 1.5, 2.001, 60.0],
            "input_tokens": [600, 100, 3, 1024, 4096],
            "output_tokens": out,
            "client_id": [3, 4, 3, 1, 0],
            "model": ["GPT-4", "ChatGPT", "GPT-4", "GPT-4", "ChatGPT"],
            "log_type": ["api", "conversation", "api", "api", "conversation"],
            "session_id": pd.array(["a", None, "a", "b", None], dtype="string"),
            "failed": pd.array(out == 0, dtype="boolean"),
            "hash_ids": [[0, 1], [2], [0], [3, 4], [5, 6, 7, 8, 9, 10, 11, 12]],
        }
    )


def _plain(values: pd.Series) -> list:
    """Comparable Python values: lists of ints for list columns, None for NA, strings for labels."""
    out = []
    for v in values.astype(object):
        if isinstance(v, (list, np.ndarray)):
            out.append([int(x) for x in v])
        elif v is None or (not isinstance(v, str) and pd.isna(v)):
            out.append(None)
        elif isinstance(v, (bool, np.bool_)):
            out.append(bool(v))
        elif isinstance(v, (int, np.integer)):
            out.append(int(v))
        else:
            out.append(str(v))
    return out


WRITE_READ = [f for f in formats.REGISTRY if f.write is not None and f.read is not None]


def test_the_registry_holds_every_format_the_code_supports():
    assert [f.name for f in formats.REGISTRY] == ["mooncake", "azure", "burstgpt", "csv", "jsonl", "parquet"]
    assert [f.name for f in formats.writable()] == list(export.FORMATS) == [f.name for f in WRITE_READ]
    assert formats.by_name("azure").write is None and formats.by_name("azure").read is not None
    for f in formats.REGISTRY:  # endings: lower case, longest first within a format
        assert list(f.endings) == sorted(f.endings, key=len, reverse=True)
        assert all(e == e.lower() and e.startswith(".") for e in f.endings)


@pytest.mark.parametrize("fmt", WRITE_READ, ids=lambda f: f.name)
def test_every_format_round_trips_what_it_keeps(tmp_path, monkeypatch, fmt):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))  # read_table caches trace layouts
    df = _table()
    p = fmt.write(df, tmp_path / f"w{fmt.endings[0]}")
    assert formats.sniff(p) is fmt
    back = fmt.read(p, cache=False) if fmt.trace else fmt.read(p)
    kept = [c for c in df.columns if fmt.keeps is None or c in fmt.keeps]
    assert set(kept) <= set(back.columns), (kept, list(back.columns))
    np.testing.assert_allclose(back["arrival_s"], df["arrival_s"], rtol=0, atol=5e-4)
    for col in kept:
        if col == "arrival_s":
            continue
        assert _plain(back[col]) == _plain(df[col]), col
    # read_table reads it the same way (and reads back what the exporters' to_* wrote)
    pd.testing.assert_frame_equal(read_table(p)[kept], back[kept])


def test_write_refuses_an_existing_file_and_a_read_only_format_has_no_writer(tmp_path):
    p = formats.CSV.write(_table(), tmp_path / "t.csv")
    with pytest.raises(FileExistsError):
        formats.CSV.write(_table(), p)
    assert formats.CSV.write(_table().iloc[:2], p, overwrite=True) == p
    with pytest.raises(ValueError, match="format must be one of 'mooncake', 'burstgpt', 'csv', 'jsonl', 'parquet'"):
        formats.write_stream([_table()], tmp_path / "x.csv", "azure")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("w.mooncake.jsonl", "mooncake"),
        ("W.MOONCAKE.JSONL", "mooncake"),
        ("w.burstgpt.csv", "burstgpt"),
        ("w.csv", "csv"),
        ("W.CSV", "csv"),
        ("w.jsonl", "jsonl"),
        ("w.json", "jsonl"),
        ("w.parquet", "parquet"),
        ("w.pq", "parquet"),
        ("dir.csv/w.parquet", "parquet"),
    ],
)
def test_for_path_picks_the_format_of_each_ending(name, expected):
    assert formats.for_path(name).name == expected
    assert export.format_for(name) == expected  # the old name, now a wrapper


@pytest.mark.parametrize("name", ["w.txt", "w.csv.gz", "w", "w.mooncake"])
def test_an_unknown_ending_names_the_file_and_the_known_endings(name):
    message = (
        f"cannot tell the format of {name!r} from its name (known endings: .mooncake.jsonl, .burstgpt.csv, .csv, "
        ".jsonl, .json, .parquet, .pq); give --format"
    )
    with pytest.raises(ValueError) as info:
        formats.for_path(name)
    assert str(info.value) == message
    with pytest.raises(ValueError, match="known endings"):
        export.format_for(name)


FIRST_LINES = [
    # (file name, first line, what read_table reads it as, what detect_format says)
    ("t.csv", "arrival_s,input_tokens,output_tokens", "csv", None),
    ("t.jsonl", '{"arrival_s":0.5,"input_tokens":1,"output_tokens":2}', "jsonl", "mooncake"),
    ("m.jsonl", '{"timestamp":5,"input_length":1,"output_length":2}', "mooncake", "mooncake"),
    ("a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens", "azure", "azure"),
    ("b.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type", "burstgpt", "burstgpt"),
    ("both.csv", "TIMESTAMP,Timestamp,Request tokens", "azure", "azure"),  # an Azure header wins
    ("brace.csv", "{TIMESTAMP,ContextTokens", "mooncake", "mooncake"),  # a JSON-looking line is Mooncake
    ("bom.csv", "\ufeffTimestamp,Model,Request tokens,Response tokens,Total tokens,Log Type", "burstgpt", "burstgpt"),
]


@pytest.mark.parametrize(("name", "line", "read_as", "trace_as"), FIRST_LINES, ids=[c[0] for c in FIRST_LINES])
def test_sniff_recognises_each_first_line(tmp_path, name, line, read_as, trace_as):
    p = tmp_path / name
    p.write_text(line + "\n", encoding="utf-8")
    assert formats.sniff(p).name == read_as
    if trace_as is None:
        with pytest.raises(TraceFormatError, match="unrecognised header"):
            traces.detect_format(p)
    else:
        assert traces.detect_format(p) == trace_as == formats.sniff(p, traces_only=True).name


def test_parquet_is_recognised_by_its_ending_and_gzip_traces_by_content(tmp_path, monkeypatch):
    import gzip

    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    p = tmp_path / "x.parquet"
    p.write_text("arrival_s,input_tokens,output_tokens\n")
    assert formats.sniff(p) is formats.PARQUET  # by ending: a text file so named is a parquet read error
    with pytest.raises(ValueError, match="not a readable parquet file"):
        read_table(p)
    gz = tmp_path / "a.csv.gz"
    gz.write_bytes(gzip.compress(b"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n"))
    assert formats.sniff(gz) is formats.AZURE
    assert len(read_table(gz)) == 1


@pytest.mark.parametrize(("name", "text"), [("u.csv", "a,b,c\n1,2,3\n"), ("bom.csv", "\ufeffarrival_s,x\n1,2\n")])
def test_an_unknown_header_names_the_file_and_the_known_headers(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    header = [h.strip() for h in text.lstrip("\ufeff").splitlines()[0].split(",")]
    message = (
        f"{p}, line 1: unrecognised header {header!r}: expected BurstGPT (Timestamp, Model, Request tokens, "
        "Response tokens, Total tokens, Log Type), Azure (TIMESTAMP, ContextTokens, GeneratedTokens) or Mooncake JSONL"
    )
    for call in (formats.sniff, traces.detect_format, read_table):
        with pytest.raises(TraceFormatError) as info:
            call(p)
        assert str(info.value) == message


def test_an_empty_file_is_named(tmp_path):
    p = tmp_path / "e.csv"
    p.write_text("")
    with pytest.raises(TraceFormatError, match=r"e\.csv, line 1: empty file"):
        formats.sniff(p)


def test_by_name_lists_the_known_formats():
    assert formats.by_name("jsonl") is formats.JSONL
    with pytest.raises(ValueError, match="format must be one of 'mooncake', 'azure', 'burstgpt', 'csv', 'jsonl'"):
        formats.by_name("xml")
    with pytest.raises(ValueError, match="format must be one of 'auto', 'burstgpt', 'azure', 'mooncake'"):
        traces.load_trace("x.csv", format="csv")


def test_json_lines_are_pandas_bytes_on_every_kind_of_column():
    """The JSONL writer's fast path (numbers and booleans: pandas' records string split at record boundaries) writes
    exactly what ``to_json(orient="records", lines=True)`` writes, and frames with text or nothing fall back to it."""
    import io

    from workbench.workloads.formats import _json_lines

    rng = np.random.default_rng(0)
    frames = [
        pd.DataFrame(
            {
                "arrival_s": np.sort(rng.random(2000)) * 1e4,
                "input_tokens": rng.integers(1, 9000, 2000),
                "output_tokens": rng.integers(1, 900, 2000),
            }
        ),
        pd.DataFrame({"a": [1.5, np.nan, 3.0], "b": [True, False, True], "c": np.array([1, 2, 3], np.int32)}),
        pd.DataFrame({"a": [1e-12, 1e300, -0.0, 123456789.123456789, np.inf]}),
        pd.DataFrame({"a": pd.array([1, None, 3], dtype="Int64")}),
        pd.DataFrame({"a": [1.0, 2.0], "s": ["x},{y", None]}),  # text: pandas' own conversion
        pd.DataFrame({"a": np.array([], float)}),
    ]
    for frame in frames:
        want, got = io.StringIO(), io.StringIO()
        frame.to_json(want, orient="records", lines=True)
        _json_lines(got, frame)
        assert got.getvalue() == want.getvalue(), frame.dtypes.to_dict()
