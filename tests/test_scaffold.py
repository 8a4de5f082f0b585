"""``workbench new paper NAME`` (issue 36, item 4): the files it writes already run and pass, in a copy of the checkout;
a bad or taken name is a clear error; ``--dry-run`` writes nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.scaffold import plan_paper

ROOT = Path(__file__).resolve().parents[1]


def test_dry_run_lists_the_files_and_writes_nothing(capsys):
    assert main(["new", "paper", "demo_queue", "--dry-run"]) == 0
    out = capsys.readouterr().out
    for rel in ("workbench/experiments/demo_queue.py", "workbench/reproductions/demo_queue.py",
                "tests/reproductions/test_demo_queue.py", "_demo_queue.py", "_demo_queue.ipynb",
                "workbench/fidelity/engines.py"):  # fmt: skip
        assert rel in out, out
    assert not (ROOT / "workbench" / "reproductions" / "demo_queue.py").exists()
    assert not list((ROOT / "notebooks").glob("*_demo_queue.*"))
    assert "demo-queue-queue-wait" not in (ROOT / "workbench" / "fidelity" / "engines.py").read_text()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Bad-Name", "lowercase letters"),
        ("x", "2 to 40 characters"),
        ("class", "Python keyword"),
        ("pred", "paper 'pred' already exists"),
        ("carbon", "workbench/experiments/carbon.py already exists"),  # a module of that name, though no such paper
    ],
)
def test_a_bad_or_taken_name_is_a_clear_error(name, message, capsys):
    with pytest.raises(ValueError, match=message):
        plan_paper(name)
    assert main(["new", "paper", name]) == 2
    assert message.split()[0] in capsys.readouterr().err


def _copy_checkout(dst: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".ruff_cache", ".ipynb_checkpoints")
    for part in ("workbench", "tests", "notebooks"):
        shutil.copytree(ROOT / part, dst / part, ignore=ignore)
    for part in ("pyproject.toml", "conftest.py"):
        shutil.copy2(ROOT / part, dst / part)
    (dst / "datasets").symlink_to(ROOT / "datasets")
    return dst


@pytest.mark.slow
def test_a_scaffolded_paper_runs_and_passes_in_a_copy(tmp_path):
    """Scaffold a paper in a copy of the checkout, then run what the suite would run on it: its test file, its
    claim (the verdict it expects), the experiment's conformance test, the paper-record and fidelity declarations
    and nbval on its executed notebook; the real checkout is left untouched."""
    root = _copy_checkout(tmp_path / "checkout")
    env = {**os.environ, "PYTHONPATH": str(root)}

    def run(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done

    out = run("-m", "workbench.cli", "new", "paper", "demo_queue", "--title", "A demo queue").stdout
    assert "workbench/reproductions/demo_queue.py" in out
    (notebook,) = (root / "notebooks").glob("*_demo_queue.ipynb")
    assert notebook.with_suffix(".py").is_file()
    claim = run(
        "-c",
        "import workbench; from workbench.reproductions import run_claims\n"
        "(r,) = run_claims('demo_queue', 'quick')\n"
        f"assert workbench.__file__.startswith({str(root)!r}), workbench.__file__\n"
        "print(r.verdict.value, r.claim.expected.value, r.measured.summary)",
    ).stdout.split()
    assert claim[0] == claim[1] == "reproduced", claim
    tests = run(
        "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "tests/reproductions/test_demo_queue.py", "tests/experiments/test_registered.py", "tests/test_reproductions.py",
        "tests/test_fidelity.py::test_every_panel_and_experiment_names_declared_engines",
        "-k", "demo or declared_engines or record_resolves",
    ).stdout  # fmt: skip
    assert " passed" in tests and "failed" not in tests, tests
    assert int(tests.split(" passed")[0].split()[-1]) >= 5, tests
    nbval = run("-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env", str(notebook)).stdout
    assert " passed" in nbval and "failed" not in nbval, nbval
    assert not (ROOT / "workbench" / "reproductions" / "demo_queue.py").exists()
