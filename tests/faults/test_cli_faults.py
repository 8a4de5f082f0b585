"""The ``workbench`` command checks its path arguments before doing any work and reports failures in one line."""

from __future__ import annotations

import pytest

from workbench import reproductions
from workbench.cli import main as cli_main


@pytest.fixture()
def no_work(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("claims ran before the arguments were checked")

    monkeypatch.setattr(reproductions, "run_claims", refuse)


def test_reproduce_out_that_is_a_file_fails_before_any_work(tmp_path, no_work, capsys):
    out = tmp_path / "scoreboard"
    out.write_text("not a directory")
    assert cli_main(["reproduce", "--out", str(out), "--quick", "--no-figures"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--out" in err and "not a directory" in err
    assert out.read_text() == "not a directory"


def test_reproduce_out_under_a_file_fails_before_any_work(tmp_path, no_work, capsys):
    (tmp_path / "f").write_text("x")
    assert cli_main(["reproduce", "--out", str(tmp_path / "f" / "sub"), "--quick"]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_fetch_dest_that_is_a_file_fails_before_any_download(tmp_path, capsys):
    dest = tmp_path / "dest"
    dest.write_text("x")
    rc = cli_main(
        ["data", "fetch", "azure-llm-2023", "--dest", str(dest), "--base-url", "http://127.0.0.1:9/", "--no-progress"]
    )
    assert rc == 2 and "--dest" in capsys.readouterr().err and dest.read_text() == "x"
