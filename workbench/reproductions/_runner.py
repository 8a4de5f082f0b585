"""Running papers: one paper's claims and figures as one unit, cached by what they depend on, in parallel.

A paper's claims and figures share their computations (a paper module computes each study once, a function of the
scale decorated with :func:`workbench._deps.remember`, and both claims and figures read it), so the unit of work is
the paper: :func:`run_paper` measures every claim of one paper and, if asked, builds its figures, in one process.

Results are cached under ``$WORKBENCH_CACHE/reproductions/<scale>/`` keyed by the paper, the scale and the
:func:`~workbench._deps.code_fingerprint` of the modules that define its claims and figures (their source and every
module they import, transitively: :func:`paper_key`), and checked on read against what the run recorded while it
ran (:mod:`workbench._deps`): the content of every data file it resolved on the search path and the code of every
experiment it swept. An edit to the code a paper can reach, or a data file it read shadowed or changed, recomputes
that paper and no other; an unchanged tree is read back in milliseconds (``make reproduce`` twice, or the test suite
and the notebooks asking for the same paper). Entries are written atomically and verified on read (a damaged entry
is recomputed). A lock file per entry makes concurrent callers (the test suite's workers, notebook kernels) compute a
paper once: the second waits for the first and reads its result.

:func:`run_papers` runs several papers as tasks on the local Dask cluster (longest first, by their last measured
time, or on a first run by the cost each paper declares, ``Paper.cost_s``), with a progress bar naming the papers
still running.
"""

from __future__ import annotations

import hashlib
import json
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._deps import Deps, code_fingerprint, recording, replay
from .._validate import one_of
from ..cache import locked
from ..data import stale
from ._core import REGISTRY, SCALES, Claim, Measured, Scale, Verdict, _jsonable, load_all

__all__ = [
    "PaperRun",
    "ClaimRecord",
    "paper_key",
    "run_paper",
    "run_papers",
    "shared_study",
    "RESULT_FORMAT",
]

#: Version of the cached result layout; part of every key.
RESULT_FORMAT = 2


def _module_of(fn: Callable[..., Any]) -> str:
    fn = getattr(fn, "func", fn)  # a functools.partial
    return str(getattr(fn, "__module__", "") or "")


def paper_key(paper: str, scale: str) -> str:
    """The cache key of ``paper`` at ``scale``: the result layout and the code fingerprint of every module that
    defines one of its claims or figures (what a run can reach beyond them, the experiments it sweeps and the data it
    reads, is recorded by the run and checked on read).

    Examples
    --------
    >>> len(paper_key("arrivals", "quick"))
    16
    """
    registry = load_all()
    fns = [c.measure for c in registry.select_claims(paper)] + [f.build for f in registry.select_figures(paper)]
    h = hashlib.sha256(f"format {RESULT_FORMAT}\0{paper}\0{scale}\0".encode())
    for module in sorted({_module_of(fn) for fn in fns} - {""}):
        h.update(f"{module}\0{code_fingerprint(module)}\0".encode())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class ClaimRecord:
    """One claim's outcome as stored: the claim's key, what was measured, the verdict, the time and any error."""

    key: str
    measured: Measured | None
    verdict: Verdict
    seconds: float
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        m = self.measured
        return {
            "key": self.key,
            "measured": None
            if m is None
            else {"value": _jsonable(m.value), "summary": m.summary, "details": _jsonable(dict(m.details))},
            "verdict": self.verdict.value,
            "seconds": self.seconds,
            "error": self.error,
        }

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> ClaimRecord:
        m = rec["measured"]
        measured = None if m is None else Measured(m["value"], m["summary"], m["details"])
        return cls(rec["key"], measured, Verdict(rec["verdict"]), float(rec["seconds"]), rec["error"])


@dataclass(frozen=True)
class PaperRun:
    """What running one paper gave: its claims' records, its figures (plotly JSON by name, when built), the figure
    errors, and the seconds spent on claims and on figures."""

    paper: str
    scale: str
    claims: tuple[ClaimRecord, ...]
    figures: dict[str, str] = field(default_factory=dict)
    figure_errors: dict[str, str] = field(default_factory=dict)
    claims_s: float = 0.0
    figures_s: float = 0.0
    cached: bool = False
    with_figures: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "paper": self.paper,
            "scale": self.scale,
            "claims": [c.to_json() for c in self.claims],
            "figures": self.figures,
            "figure_errors": self.figure_errors,
            "claims_s": self.claims_s,
            "figures_s": self.figures_s,
            "with_figures": self.with_figures,
        }

    @classmethod
    def from_json(cls, rec: dict[str, Any], *, cached: bool = True) -> PaperRun:
        return cls(
            rec["paper"],
            rec["scale"],
            tuple(ClaimRecord.from_json(c) for c in rec["claims"]),
            dict(rec["figures"]),
            dict(rec["figure_errors"]),
            float(rec["claims_s"]),
            float(rec["figures_s"]),
            cached,
            bool(rec["with_figures"]),
        )


def measure_claim(c: Claim, scale: Scale) -> ClaimRecord:
    """Measure one claim and compare; a measure that raises gives ``not reproduced`` with the error recorded."""
    t0 = time.perf_counter()
    try:
        measured = c.measure(scale)
        if not isinstance(measured, Measured):
            raise TypeError(f"measure of {c.key} returned {type(measured).__name__}, expected Measured")
        verdict = c.compare.verdict(measured.value)
        return ClaimRecord(c.key, measured, verdict, time.perf_counter() - t0)
    except Exception as exc:  # recorded, reported, and makes the CLI exit non-zero
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return ClaimRecord(c.key, None, Verdict.NOT_REPRODUCED, time.perf_counter() - t0, detail)


def _measure_all(claims: Sequence[Claim], scale: Scale, progress: bool) -> tuple[ClaimRecord, ...]:
    if not progress:
        return tuple(measure_claim(c, scale) for c in claims)
    from tqdm.auto import tqdm

    out = []
    with tqdm(claims, desc=f"{claims[0].paper.id} claims ({scale})" if claims else "claims", unit="claim") as bar:
        for c in bar:
            bar.set_postfix_str(c.id, refresh=True)
            out.append(measure_claim(c, scale))
    return tuple(out)


def _compute(paper: str, scale: Scale, figures: bool, progress: bool = False) -> PaperRun:
    import plotly.io as pio

    registry = load_all()
    t0 = time.perf_counter()
    claims = _measure_all(registry.select_claims(paper), scale, progress)
    t1 = time.perf_counter()
    figs: dict[str, str] = {}
    errors: dict[str, str] = {}
    if figures:
        for spec in registry.select_figures(paper):
            try:
                figs[spec.name] = pio.to_json(spec.build(scale), validate=False)
            except Exception as exc:  # one broken figure never hides the others; reported by the caller
                errors[spec.name] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return PaperRun(paper, scale, claims, figs, errors, t1 - t0, time.perf_counter() - t1, False, figures)


def _entry(paper: str, scale: str) -> Path:
    from ..data import cache_dir

    return cache_dir() / "reproductions" / scale / f"{paper}-{paper_key(paper, scale)}.json"


def _read(entry: Path) -> dict[str, Any] | None:
    """The stored record, or ``None`` when absent, damaged (its digest line does not match its body) or stale (a
    data file or an experiment's code it recorded has changed: :func:`workbench.data.stale`). A record read back
    replays its dependencies into any active recording."""
    try:
        raw = entry.read_bytes()
    except OSError:
        return None
    head, _, body = raw.partition(b"\n")
    if head.decode("ascii", "replace") != hashlib.sha256(body).hexdigest():
        return None
    try:
        rec = json.loads(body)
        deps = Deps.from_json(rec.get("deps"))
    except (ValueError, AttributeError):
        return None
    if stale(deps):
        return None
    replay(deps)
    return rec


def _write(entry: Path, rec: dict[str, Any]) -> None:
    from ..cache import atomic_path

    body = json.dumps(rec, separators=(",", ":")).encode()
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(entry) as tmp:
            tmp.write_bytes(hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
    except OSError:  # a read-only or full cache: the result is still returned, just not kept
        pass


def shared_study(name: str, scale: Scale, build: Callable[[], Any]) -> Any:
    """``build()`` (a DataFrame), computed once for every paper that reads it, until the code ``build`` can reach
    or the data it read changes (the same keys and checks as a paper's run).

    Papers run in separate processes, so a study several papers share (the fault-localization quality sweep: C4D,
    Minder, PerfTracker) would be recomputed by each; it is stored as parquet beside the paper results, under the same
    per-entry lock (a second caller waits and reads it). Written atomically; an unreadable entry is recomputed.
    """
    from ..data import cache_dir, recorded_frame

    one_of("scale", scale, SCALES)
    key = hashlib.sha256(f"{name}\0{scale}\0{code_fingerprint(build)}".encode()).hexdigest()[:16]
    return recorded_frame(cache_dir() / "reproductions" / scale / f"study-{name}-{key}.parquet", build)


def run_paper(
    paper: str, scale: Scale = "full", *, figures: bool = False, cache: bool = True, progress: bool = False
) -> PaperRun:
    """Every claim of ``paper`` at ``scale`` (and its figures when ``figures``), cached by the source fingerprint;
    ``progress`` shows a bar over the claims while they are measured (nothing when the result is cached).

    A cached run with figures also answers a call without; a cached run without figures is extended (the claims are
    read back, the figures built, which reuses the paper's remembered studies in this process).

    Examples
    --------
    >>> run = run_paper("arrivals", "quick", cache=False)
    >>> [c.key for c in run.claims][:2]
    ['arrivals/cv-burstiness', 'arrivals/idc-renewal']
    """
    one_of("scale", scale, SCALES)
    registry = load_all()
    registry.select_claims(paper)  # validates the id
    if not cache:
        return _compute(paper, scale, figures, progress)
    entry = _entry(paper, scale)
    with locked(entry):
        stored = _read(entry)
        if stored is not None and (stored["with_figures"] or not figures):
            return PaperRun.from_json(stored)
        with recording() as rec:
            if stored is not None:
                replay(Deps.from_json(stored["deps"]))
            run = _compute(paper, scale, figures, progress)
        if stored is not None:  # keep the stored claims (same key: same code and data), add the figures
            run = PaperRun(
                paper,
                scale,
                PaperRun.from_json(stored).claims,
                run.figures,
                run.figure_errors,
                float(stored["claims_s"]),
                run.figures_s,
                False,
                True,
            )
        _write(entry, run.to_json() | {"deps": rec.deps().to_json()})
        _record_time(scale, paper, run.claims_s + run.figures_s)
        return run


def _timings_path(scale: str) -> Path:
    from ..data import cache_dir

    return cache_dir() / "reproductions" / scale / "seconds.json"


def _record_time(scale: str, paper: str, seconds: float) -> None:
    path = _timings_path(scale)
    try:
        known = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        known = {}
    known[paper] = round(seconds, 2)
    _write_plain(path, known)


def _write_plain(path: Path, rec: dict[str, Any]) -> None:
    from ..cache import atomic_path

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(rec, indent=1, sort_keys=True))
    except OSError:
        pass


def _past_seconds(scale: str) -> dict[str, float]:
    try:
        return {str(k): float(v) for k, v in json.loads(_timings_path(scale).read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def _task(paper: str, scale: Scale, figures: bool) -> PaperRun:
    return run_paper(paper, scale, figures=figures)


def run_papers(
    papers: Sequence[str],
    scale: Scale = "full",
    *,
    figures: bool = True,
    client: Any = None,
    progress: bool = True,
) -> list[PaperRun]:
    """Run several papers (claims and figures), each one task, on ``client`` (``None``: the process's local Dask
    cluster; ``False``: serially here), longest first; results in the order of ``papers``.

    The progress bar counts papers and names those still running.
    """
    from tqdm.auto import tqdm

    from ..experiments._engine import resolve

    one_of("scale", scale, SCALES)
    papers = list(papers)
    done: dict[str, PaperRun] = {}
    for paper in papers:  # what the cache already holds is read here: no cluster is started for it
        stored = _read(_entry(paper, scale))
        if stored is not None and (stored["with_figures"] or not figures):
            done[paper] = PaperRun.from_json(stored)
    past = _past_seconds(scale)
    declared = {p.id: p.cost_s for p in load_all().papers.values()}  # before the cache has measured a paper
    order = sorted((p for p in papers if p not in done), key=lambda p: -past.get(p, declared.get(p, 0.0)))
    bar = tqdm(total=len(papers), initial=len(done), desc="papers", unit="paper", disable=not progress)
    try:
        dask_client = None if client is False or len(order) < 2 else resolve(client)
        if dask_client is None:
            for paper in order:
                bar.set_postfix_str(paper, refresh=True)
                done[paper] = run_paper(paper, scale, figures=figures)
                bar.update(1)
        else:
            from distributed import as_completed

            futures = {
                dask_client.submit(
                    _task,
                    p,
                    scale,
                    figures,
                    pure=False,
                    key=f"paper-{p}-{scale}-{time.time_ns()}",
                    priority=len(order) - i,
                ): p
                for i, p in enumerate(order)
            }
            slots = max(1, sum(dask_client.nthreads().values()))
            left = list(order)

            def status() -> str:  # the highest-priority papers not done are the ones running
                queued = len(left) - slots
                return "running: " + ", ".join(left[:slots]) + (f" (+{queued} queued)" if queued > 0 else "")

            bar.set_postfix_str(status(), refresh=True)
            for fut in as_completed(list(futures), loop=dask_client.loop):
                paper = futures[fut]
                done[paper] = fut.result()
                left.remove(paper)
                bar.update(1)
                bar.set_postfix_str(status() if left else "done", refresh=True)
    finally:
        bar.close()
    return [done[p] for p in papers]


def claim_of(key: str) -> Claim:
    """The registered claim ``paper/id``."""
    return REGISTRY.claims[key]
