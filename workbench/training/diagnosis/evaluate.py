"""Scoring detectors on synthetic jobs: precision, recall, F1, top-1/top-3 localization and detection delay.

A :class:`Scenario` is one job (size, collective, noise level) with at most one fault (kind, severity, a random
rank, onset at ``onset_iteration``); ``kind="none"`` is a healthy job, where any alarm is a false positive.
Following Minder's scenario-level scoring, per scenario and detector:

* an **alarm** is any suspect; it is **correct** when the top suspect's machine is the faulty machine and the alarm
  is not earlier than the onset;
* precision = correct alarms / alarms; recall = correct alarms / fault scenarios; F1 their harmonic mean (a wrong
  machine counts against both);
* top-1 / top-3: the faulty machine is among the first one / three distinct suspect machines;
* delay: alarm time minus the fault's onset time, for correct alarms;
* cost: ``delay x ranks / 3600`` GPU-hours spent running the job in its faulty state before the alarm.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from itertools import product

import numpy as np
import pandas as pd

from ..._contracts import Int, Opaque, accepts
from ..._rng import Seed, generator, spawn
from ..._validate import in_range, integer, one_of
from . import c4d, holmes, minder, naive, perftracker
from .cost import gpu_hours_lost
from .faults import ALL_FAULT_KINDS, FAULT_KINDS, FUNCTION_FAULTS, SCOPES, Fault
from .signals import COLLECTIVES, JobSpec, Noise, Signals, simulate

__all__ = [
    "DETECTORS",
    "THRESHOLDS",
    "Scenario",
    "score_suspects",
    "run_scenario",
    "evaluate",
    "quality_table",
    "scenario_grid",
    "threshold_sweep",
    "timing_view",
]

#: The one table of detectors: by name, ``(detect, threshold parameter, values a precision/recall curve sweeps)``,
#: ``detect(signals, **{threshold: value}) -> suspects`` (the default threshold in the middle of the values).
_TABLE: dict[str, tuple[Callable[..., pd.DataFrame], str, tuple[float, ...]]] = {
    "naive": (naive.detect, "threshold", (1.05, 1.1, 1.2, 1.35, 1.5, 2.0, 3.0)),
    "c4d": (c4d.detect, "z_threshold", (2.0, 3.0, 4.0, 6.0, 10.0, 20.0, 50.0)),
    "minder": (minder.detect, "threshold", (1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 64.0)),
    "holmes": (holmes.detect, "irregular_factor", (1.1, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)),
    "perftracker": (perftracker.detect, "threshold", (0.02, 0.04, 0.07, 0.1, 0.15, 0.25, 0.5)),
}
#: The detectors, by name, each ``detect(signals) -> suspects`` (read from the one table).
DETECTORS: dict[str, Callable[[Signals], pd.DataFrame]] = {name: row[0] for name, row in _TABLE.items()}
#: Each detector's alarm threshold and the values a precision/recall curve sweeps (read from the one table).
THRESHOLDS: dict[str, tuple[str, tuple[float, ...]]] = {name: (row[1], row[2]) for name, row in _TABLE.items()}
#: Intermittent kinds get this duty cycle (fraction of iterations after onset that are affected).
DUTY = {"flapping_link": 0.3, "straggler": 0.3, "irregular": 0.05, "gc_pause": 0.3}


@accepts()
@dataclass(frozen=True)
class Scenario:
    """One synthetic job and its fault.

    Examples
    --------
    >>> Scenario("nic_degraded", ranks=128).fault(seed=0).kind
    'nic_degraded'
    """

    kind: str = "slow_gpu"
    ranks: int = 512
    severity: float = 2.0
    noise_level: float = 1.0
    collective: str = "ring"
    iterations: int = 400
    onset_iteration: int = 150
    seed: int = 0
    scope: str | None = None  #: for the function-level kinds: "rank", "machine" (default) or "all"

    def __post_init__(self) -> None:
        one_of("kind", self.kind, ("none", *ALL_FAULT_KINDS))
        if self.scope is not None:
            one_of("scope", self.scope, SCOPES)
            if self.kind not in FUNCTION_FAULTS:
                raise ValueError(
                    f"scope applies to the function-level kinds {tuple(FUNCTION_FAULTS)}, not {self.kind!r}"
                )
        integer("ranks", self.ranks, minimum=8)
        in_range("severity", self.severity, 1.0, 1e6)
        in_range("noise_level", self.noise_level, 0.0, 100.0)
        one_of("collective", self.collective, COLLECTIVES)
        integer("onset_iteration", self.onset_iteration, minimum=1)
        # a fault needs iterations before and after its onset; a healthy job (no fault, no onset) only two
        integer("iterations", self.iterations, minimum=2 if self.kind == "none" else self.onset_iteration + 2)
        integer("seed", self.seed, minimum=0)

    @accepts()
    def job(self) -> JobSpec:
        return JobSpec(ranks=self.ranks, collective=self.collective)

    @accepts()
    def fault(self, seed: Seed = None) -> Fault | None:
        """The injected fault (at a random rank), or None for a healthy job."""
        if self.kind == "none":
            return None
        rank = int(generator(seed).integers(self.ranks))
        return Fault(
            self.kind, rank, self.onset_iteration, self.severity, duty=DUTY.get(self.kind, 0.3), scope=self.scope
        )

    @accepts()
    def signals(self) -> Signals:
        rng_fault, rng_sim = spawn(self.seed, 2)
        fault = self.fault(rng_fault)
        return simulate(
            self.job(),
            self.iterations,
            () if fault is None else (fault,),
            noise=Noise().scaled(self.noise_level),
            seed=rng_sim,
        )


@accepts()
def score_suspects(signals: Signals, suspects: pd.DataFrame) -> dict[str, float | bool]:
    """Alarm, correct, top-1, top-3 and delay of one detector's suspects against the ground truth of ``signals``.

    Examples
    --------
    >>> s = Scenario("nic_degraded", ranks=64, iterations=200, onset_iteration=50).signals()
    >>> score_suspects(s, c4d.detect(s))["top1"]
    True
    """
    alarm = len(suspects) > 0
    machines = pd.unique(suspects.machine) if alarm else np.zeros(0, int)
    truth = signals.truth_machines()
    onset = signals.onset_s() if signals.faults else np.inf
    alarm_s = float(suspects.alarm_s.iloc[0]) if alarm else np.nan
    in_time = alarm and alarm_s >= onset
    top1 = bool(in_time and machines[0] in truth)
    top3 = bool(in_time and np.isin(machines[:3], truth).any())
    return {
        "alarm": alarm,
        "correct": top1,
        "top1": top1,
        "top3": top3,
        "delay_s": alarm_s - onset if top1 else np.nan,
        "gpu_hours": float(gpu_hours_lost(alarm_s - onset, signals.ranks)) if top1 else np.nan,
    }


@accepts()
def run_scenario(scenario: Scenario, detectors: Sequence[str] = tuple(DETECTORS)) -> list[dict]:
    """Simulate ``scenario``, run each detector, and return one record per detector."""
    s = scenario.signals()
    rows = []
    for name in detectors:
        one_of("detector", name, DETECTORS)
        t0 = time.perf_counter()
        suspects = DETECTORS[name](s)
        elapsed = time.perf_counter() - t0
        said = "function" in suspects.columns and len(suspects) > 0  # a detector that names a function (PerfTracker)
        blamed = {
            "blamed_function": suspects["function"].iloc[0] if said else "",
            "blamed_scope": suspects["scope"].iloc[0] if said else "",
        }
        rows.append(
            {**asdict(scenario), "detector": name, **score_suspects(s, suspects), "detect_s": elapsed, **blamed}
        )
    return rows


@accepts()
def evaluate(scenarios: Iterable[Scenario], detectors: Sequence[str] = tuple(DETECTORS)) -> pd.DataFrame:
    """One row per (scenario, detector): the scenario's fields, ``alarm``, ``correct``, ``top1``, ``top3``,
    ``delay_s``, ``gpu_hours``, the detector's run time ``detect_s``, and the function and scope it blamed
    (``blamed_function``, ``blamed_scope``: PerfTracker's diagnosis, empty for the others)."""
    return pd.DataFrame([row for sc in scenarios for row in run_scenario(sc, detectors)])


@accepts()
def quality_table(results: pd.DataFrame, by: Sequence[str] = ("detector", "kind")) -> pd.DataFrame:
    """Precision, recall, F1, top-1, top-3 and median delay per group of :func:`evaluate`'s rows.

    Healthy scenarios (``kind == "none"``) add their false alarms to every group they match on the grouping
    columns other than ``kind`` and ``severity``, so precision counts them; recall, top-k and delay are over fault
    scenarios only.

    Examples
    --------
    >>> r = evaluate([Scenario("nic_degraded", ranks=64, iterations=200, onset_iteration=50)], ["c4d"])
    >>> quality_table(r).loc[0, ["precision", "recall"]].tolist()
    [1.0, 1.0]
    """
    by = list(by)
    faulty = results[results.kind != "none"]
    healthy = results[results.kind == "none"]
    rows = []
    for key, g in faulty.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        h = healthy
        for col, value in zip(by, key):
            if col not in ("kind", "severity"):
                h = h[h[col] == value]
        false_alarms = int(h.alarm.sum())
        alarms = int(g.alarm.sum()) + false_alarms
        correct = int(g.correct.sum())
        precision = correct / alarms if alarms else np.nan
        recall = correct / len(g)
        f1 = 2 * precision * recall / (precision + recall) if alarms and precision + recall > 0 else 0.0
        rows.append(
            {
                **dict(zip(by, key)),
                "scenarios": len(g),
                "precision": precision,
                "recall": recall,
                "f1": f1,
                "top1": g.top1.mean(),
                "top3": g.top3.mean(),
                "median_delay_s": g.delay_s.median(),
            }
        )
    return pd.DataFrame(rows)


@accepts()
def scenario_grid(
    kinds: Sequence[str] = tuple(FAULT_KINDS),
    ranks: Sequence[int] = (512,),
    severities: Sequence[float] = (2.0,),
    noise_levels: Sequence[float] = (1.0,),
    seeds: int = 1,
    healthy: int = 0,
    **fields,
) -> list[Scenario]:
    """Every combination of the given kinds, sizes, severities and noise levels, ``seeds`` jobs each, plus ``healthy``
    fault-free jobs per size and noise level; job ``i`` of the list has seed ``i``.

    Examples
    --------
    >>> len(scenario_grid(["slow_gpu", "fail_stop"], ranks=[64, 128], seeds=2, healthy=1))
    10
    """
    seeds = integer("seeds", seeds, minimum=1)
    healthy = integer("healthy", healthy, minimum=0)
    points = [p for p in product(kinds, ranks, severities, noise_levels) for _ in range(seeds)]
    points += [("none", n, 1.0, nl) for n, nl in product(ranks, noise_levels) for _ in range(healthy)]
    return [Scenario(k, n, sev, nl, seed=i, **fields) for i, (k, n, sev, nl) in enumerate(points)]


@accepts()
def threshold_sweep(scenarios: Iterable[Scenario], detectors: Sequence[str] = tuple(DETECTORS)) -> pd.DataFrame:
    """Precision and recall of each detector at each value of its threshold (:data:`THRESHOLDS`).

    Each scenario is simulated once and every detector is run at every threshold on it. Returns one row per
    (detector, threshold) with ``precision``, ``recall`` and ``f1`` (healthy scenarios count as false alarms).

    Examples
    --------
    >>> sc = [Scenario("nic_degraded", ranks=64, iterations=200, onset_iteration=50), Scenario("none", ranks=64)]
    >>> t = threshold_sweep(sc, ["c4d"])
    >>> t.columns.tolist()[:3], len(t)
    (['detector', 'threshold', 'precision'], 7)
    """
    rows = []
    for sc in scenarios:
        s = sc.signals()
        for name in detectors:
            param, values = THRESHOLDS[one_of("detector", name, DETECTORS)]
            for v in values:
                rows.append(
                    {
                        "detector": name,
                        "threshold": v,
                        "kind": sc.kind,
                        **score_suspects(s, DETECTORS[name](s, **{param: v})),
                    }
                )
    frame = pd.DataFrame(rows)
    q = quality_table(
        frame.rename(columns={"threshold": "value"}).assign(kind=np.where(frame.kind == "none", "none", "fault")),
        by=("detector", "value"),
    )
    return q.rename(columns={"value": "threshold"})[["detector", "threshold", "precision", "recall", "f1"]]


def _drawn_rank(frame: pd.DataFrame, ranks_per_machine: int) -> np.ndarray:
    """The row a suspect is drawn on: its rank, or its machine's first rank for a machine-level suspect."""
    return np.where(frame["rank"] >= 0, frame["rank"], frame["machine"] * ranks_per_machine).astype(int)


@accepts(
    suspects=Opaque("a mapping of detector name -> its suspects table"), max_ranks=Int(ge=1), max_iterations=Int(ge=1)
)
def timing_view(signals: Signals, suspects=None, *, max_ranks: int = 96, max_iterations: int = 400) -> pd.DataFrame:
    """What a timing heat map of one job shows, as a tidy table (``part`` says what a row is):

    * ``cell``: each shown rank's excess time at each shown iteration (``excess_s``: compute + transmit minus the
      iteration's median over all ranks); at most ``max_ranks`` ranks evenly spread (the faulty ones and every
      detector's top three suspects always included) and at most ``max_iterations`` iterations (evenly strided);
    * ``fault``: the ground truth (``fault_kind``, ``rank``, ``machine``, onset ``iteration``);
    * ``suspect``: each detector's top three suspects (``detector``, the ``rank`` they are drawn on -- a
      machine-level suspect on its machine's first rank -- and their alarm ``iteration``).

    Examples
    --------
    >>> s = Scenario("slow_gpu", ranks=64, iterations=100, onset_iteration=40).signals()
    >>> v = timing_view(s, {"c4d": c4d.detect(s)})
    >>> sorted(v.part.unique()), int((v.part == "cell").sum())
    (['cell', 'fault', 'suspect'], 6400)
    """
    suspects = dict(suspects or {})
    rpm = signals.job.ranks_per_machine
    n = signals.ranks
    keep = [np.linspace(0, n - 1, min(n, max_ranks)).astype(int), np.array([f.rank for f in signals.faults], int)]
    keep += [_drawn_rank(frame.head(3), rpm) for frame in suspects.values()]
    ranks = np.unique(np.concatenate(keep))
    step = max(1, -(-signals.iterations // max_iterations))
    its = np.arange(0, signals.iterations, step)
    own = signals.compute_s[::step] + signals.busy_s[::step]
    excess = own[:, ranks] - np.nanmedian(own, axis=1, keepdims=True)
    parts = [
        pd.DataFrame(
            {"part": "cell", "iteration": np.repeat(its, len(ranks)), "rank": np.tile(ranks, len(its)),
             "excess_s": excess.astype(float).ravel()}
        ),
        pd.DataFrame(
            [{"part": "fault", "fault_kind": f.kind, "rank": f.rank, "machine": f.machine(rpm),
              "iteration": f.onset_iteration} for f in signals.faults],
            columns=["part", "fault_kind", "rank", "machine", "iteration"],
        ),
    ]  # fmt: skip
    for name, frame in suspects.items():
        top = frame.head(3)
        parts.append(pd.DataFrame({"part": "suspect", "detector": name, "rank": _drawn_rank(top, rpm),
                                   "iteration": top.alarm_iteration.to_numpy()}))  # fmt: skip
    view = pd.concat([p for p in parts if len(p)], ignore_index=True)
    return view.reindex(columns=["part", "iteration", "rank", "excess_s", "fault_kind", "machine", "detector"])
