"""Hostile files, generated: every table loader, each corruption of its file (a cut last line, a duplicated, missing
or reordered column, an extra field, a byte-order mark, bytes that are not UTF-8, a huge value, a directory, a FIFO).
Each must load correctly (the harmless ones: a BOM, reordered columns) or raise a ``ValueError``/``OSError`` that
names the file, never a raw exception, a silent shift of values or a hang (the FIFO case would block on ``open``)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from workbench import data

#: Per loader: the file on the data search path it reads, and how to load a given copy of it (``None``: through
#: ``WORKBENCH_DATA`` with the copy shadowing the original).
LOADERS: dict[str, tuple[str, Callable[[Path], object] | None]] = {
    "carbon trace": (
        "carbon-dag/carbon-intensity/CA-ON/CA-ON_2022_hourly.csv",
        lambda p: __import__("workbench.carbon.traces", fromlist=["x"]).read_hourly_csv(p),
    ),
    "RLHF instances": (
        "rlhfuse-schedules/instances.csv",
        lambda p: __import__("workbench.training.fused_pipeline", fromlist=["x"]).load_instances(p),
    ),
    "engine profiles": ("serving_specs/engines.csv", None),
    "training corpus": ("training_validation/corpus.csv", None),
    "GPU specs": ("serving_specs/gpus.csv", None),
}


def _shadowed_call(relpath: str) -> Callable[[], object]:
    if relpath.endswith("engines.csv"):
        from workbench.serving.engines import engines

        return engines
    if relpath.endswith("corpus.csv"):
        from workbench.training.validation import corpus

        return corpus
    from workbench.serving.specs import gpus

    return gpus


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _swap_columns(line: str) -> str:
    cells = line.split(",")
    cells[0], cells[1] = cells[1], cells[0]
    return ",".join(cells)


CORRUPTIONS: dict[str, tuple[Callable[[list[str]], bytes] | str, str]] = {
    # name: (what the file becomes, expected: "load" or "error")
    "cut last line": (lambda ls: ("\n".join([*ls[:-1], ls[-1][: len(ls[-1]) // 3]]) + "\n").encode(), "error"),
    "duplicated column": (lambda ls: ("\n".join(ln + "," + ln.split(",")[0] for ln in ls) + "\n").encode(), "error"),
    "missing column": (lambda ls: ("\n".join(",".join(ln.split(",")[1:]) for ln in ls) + "\n").encode(), "error"),
    "extra field": (lambda ls: ("\n".join([*ls[:2], ls[2] + ",7", *ls[3:]]) + "\n").encode(), "error"),
    "reordered columns": (lambda ls: ("\n".join(_swap_columns(ln) for ln in ls) + "\n").encode(), "load-or-error"),
    "bom": (lambda ls: b"\xef\xbb\xbf" + ("\n".join(ls) + "\n").encode(), "load"),
    "not utf-8": (lambda ls: ("\n".join(ls) + "\n").encode() + b"\xff\xfe,\x80\n", "error"),
    "huge value": (
        lambda ls: ("\n".join([*ls[:2], ",".join(["9" * 400] * len(ls[2].split(","))), *ls[3:]]) + "\n").encode(),
        "load-or-error",
    ),
    "directory": ("directory", "error"),
    "fifo": ("fifo", "error"),
}


def _timeout(signum, frame):
    raise TimeoutError("the loader hangs")


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
@pytest.mark.parametrize("loader", list(LOADERS))
def test_a_corrupted_table_is_a_named_error_or_loads(tmp_path, monkeypatch, loader, corruption):
    relpath, load = LOADERS[loader]
    original = data.find(relpath)
    if original is None:
        pytest.skip(f"{relpath} is not on the data search path")
    make, expected = CORRUPTIONS[corruption]
    if corruption == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("needs FIFOs")
    target = tmp_path / relpath
    target.parent.mkdir(parents=True)
    lines = _lines(original)[:40]  # a prefix of the file keeps the cases fast; it is itself a well-formed table
    if make == "directory":
        target.mkdir()
    elif make == "fifo":
        os.mkfifo(target)
    else:
        target.write_bytes(make(lines))  # type: ignore[operator]
    if load is None:
        monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
        call = _shadowed_call(relpath)
    else:
        call = lambda: load(target)  # noqa: E731
    old = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(20)
    try:
        call()
    except (ValueError, OSError) as exc:
        assert expected != "load", f"{loader}, {corruption}: refused a harmless file: {exc}"
        assert target.name in str(exc), f"{loader}, {corruption}: the error does not name the file: {exc}"
    else:
        assert expected != "error", f"{loader}, {corruption}: loaded a corrupted file silently"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
