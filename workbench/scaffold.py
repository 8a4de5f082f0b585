"""``workbench new paper NAME``: a new paper in a handful of files that already run and pass.

The scaffold writes, from the templates in ``workbench/templates/paper/``:

* ``workbench/experiments/NAME.py``: the registered experiment ``NAME-queue-wait`` (its ``Param``s, its point
  function, its ``small`` grid: the conformance tests run it);
* ``workbench/reproductions/NAME.py``: the paper's record (``PAPER``), the study its claims read (one sweep,
  remembered per scale) and one claim measured through it;
* ``notebooks/NN_NAME.py`` and ``.ipynb``: the jupytext pair (claims table, the model, an explore panel, what
  differs), the ``.ipynb`` executed as ``make notebooks`` does (``--no-execute`` leaves that to you);
* ``tests/reproductions/test_NAME.py``: model tests beside the generated ones (a hand-computed case, determinism);

and adds the experiment to ``fidelity.EXPERIMENTS`` (the engines whose numbers it shows: the example's queue is the
``arrivals`` engine; change it when the point function calls another model). The example study is a real one (M/D/1
waits half as long as M/M/1 at the same load, measured by simulation), so everything passes before you replace it
with the paper's. Discovery does the rest: the paper registry, ``workbench list``, the scoreboard, the claim tests,
the experiment's conformance test.

Examples
--------
>>> plan = plan_paper("my_queue", root=_checkout())
>>> [p.relative_to(_checkout()).as_posix() for p, _ in plan.files][:2]
['workbench/experiments/my_queue.py', 'workbench/reproductions/my_queue.py']
>>> plan.experiment
'my-queue-queue-wait'
"""

from __future__ import annotations

import keyword
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from string import Template

__all__ = ["PaperPlan", "plan_paper", "write_paper", "NAME_PATTERN"]

#: A paper's name: its id, its module names and its notebook's name.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{1,39}")
TEMPLATES = Path(__file__).resolve().parent / "templates" / "paper"
#: The engine the example study's numbers come from (``fidelity.ENGINES``).
EXAMPLE_ENGINES = ("arrivals",)
_FIDELITY_MAP = "EXPERIMENTS: dict[str, tuple[str, ...]] = {\n"


def _checkout() -> Path:
    """The checkout the package was imported from (``workbench/``'s parent)."""
    return Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class PaperPlan:
    """What ``workbench new paper`` writes: ``files`` as ``(path, text)``, and the line added to the fidelity map."""

    paper: str
    experiment: str
    notebook: Path
    files: tuple[tuple[Path, str], ...]
    fidelity_file: Path
    fidelity_line: str


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or keyword.iskeyword(name):
        raise ValueError(
            f"paper name must be 2 to 40 characters of lowercase letters, digits and '_', starting with a letter, "
            f"and not a Python keyword (it becomes a module name), got {name!r}"
        )
    return name


def _next_notebook(root: Path) -> int:
    numbers = [int(m.group(1)) for p in (root / "notebooks").glob("*.py") if (m := re.match(r"(\d+)_", p.name))]
    return max(numbers, default=-1) + 1


def plan_paper(name: str, *, root: Path | None = None, title: str = "", citation: str = "") -> PaperPlan:
    """The files a new paper ``name`` gets in the checkout ``root`` (default: this package's), checked: a bad
    name, a paper id or experiment already registered, or any target file that exists is a ``ValueError``."""
    name = _check_name(name)
    root = Path(root) if root is not None else _checkout()
    if not (root / "workbench" / "reproductions").is_dir() or not (root / "notebooks").is_dir():
        raise ValueError(f"root {root} is not a workbench checkout (no workbench/reproductions or notebooks/)")
    slug = name.replace("_", "-")
    experiment = f"{slug}-queue-wait"
    from . import experiments as ex
    from .reproductions import load_all

    if name in load_all().papers:
        raise ValueError(f"paper {name!r} already exists (workbench list shows the registered papers)")
    if experiment in ex.names():
        raise ValueError(f"experiment {experiment!r} is already registered; choose another paper name")
    taken = sorted(p.name for p in (root / "notebooks").glob(f"[0-9]*_{name}.py"))
    if taken:
        raise ValueError(f"paper {name!r} already has a notebook: notebooks/{taken[0]}")
    notebook = f"{_next_notebook(root):02d}_{name}"
    values = {
        "paper": name,
        "experiment": experiment,
        "function": f"{name}_queue_wait",
        "notebook": notebook,
        "title": title or name.replace("_", " ").capitalize(),
        "citation": citation or "Authors, Venue Year",
    }
    targets = {
        "experiment.py.tmpl": root / "workbench" / "experiments" / f"{name}.py",
        "reproduction.py.tmpl": root / "workbench" / "reproductions" / f"{name}.py",
        "notebook.py.tmpl": root / "notebooks" / f"{notebook}.py",
        "test.py.tmpl": root / "tests" / "reproductions" / f"test_{name}.py",
    }
    for path in [*targets.values(), root / "notebooks" / f"{notebook}.ipynb"]:
        if path.exists():
            rel = path.relative_to(root).as_posix()
            raise ValueError(f"paper {name!r}: {rel} already exists; choose another name or remove it")
    files = tuple(
        (path, Template((TEMPLATES / tmpl).read_text(encoding="utf-8")).substitute(values))
        for tmpl, path in targets.items()
    )
    fidelity = root / "workbench" / "fidelity" / "engines.py"
    engines = ", ".join(f'"{e}"' for e in EXAMPLE_ENGINES) + ("," if len(EXAMPLE_ENGINES) == 1 else "")
    line = f'    "{experiment}": ({engines}),\n'
    return PaperPlan(name, experiment, root / "notebooks" / f"{notebook}.ipynb", files, fidelity, line)


def _add_fidelity_line(plan: PaperPlan) -> None:
    text = plan.fidelity_file.read_text(encoding="utf-8")
    start = text.index(_FIDELITY_MAP) + len(_FIDELITY_MAP)
    end = text.index("\n}\n", start) + 1
    plan.fidelity_file.write_text(text[:end] + plan.fidelity_line + text[end:], encoding="utf-8")


def _run(cmd: list[str], notebook: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(notebook.parents[1]), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd[2:4])} failed on {notebook.name}: {done.stderr.strip()[-2000:]}")


def write_paper(plan: PaperPlan, *, execute: bool = True) -> list[Path]:
    """Write ``plan``'s files, add its fidelity line and pair its notebook (with ``execute``, run it in place as
    ``make notebooks`` does); returns every path written or edited."""
    for path, text in plan.files:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as out:  # "x": never over a file that appeared since the plan
            out.write(text)
    _add_fidelity_line(plan)
    nb = plan.notebook
    _run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", str(nb.with_suffix(".py"))], nb)
    if execute:
        _run([sys.executable, "-m", "nbconvert", "--log-level=WARN", "--to", "notebook", "--execute", "--inplace",
              "--ExecutePreprocessor.store_widget_state=False", str(nb)], nb)  # fmt: skip
    return [path for path, _ in plan.files] + [plan.notebook, plan.fidelity_file]
