"""Faults injected into a synthetic training job, each with an onset and a ground-truth location.

The kinds follow what the diagnosis papers describe: a GPU slowed by thermal throttling, a NIC or link whose
bandwidth drops by a factor, a link that flaps, host CPU contention, a straggler that comes and goes, a fail-stop
(the job hangs in the next collective; C4's "communication hang"), and Holmes' irregular iterations (a component
slow enough that the whole iteration takes more than twice its normal time, in episodes). A :class:`Fault` turns into
per-iteration multipliers on compute and transmit time with :func:`fault_effects`.

References: C4 (Dong et al., arXiv:2406.04594, HPCA 2025) section on C4D's hang/slow classes; Minder (Deng et al.,
NSDI 2025, arXiv:2411.01791); Holmes (Yao et al., NSDI 2025).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._contracts import accepts, output
from ..._rng import Seed, generator
from ..._validate import in_range, integer, one_of

__all__ = ["ALL_FAULT_KINDS", "FAULT_KINDS", "FUNCTION_FAULTS", "SCOPES", "Fault", "FaultEffects", "fault_effects"]

#: Fault kinds and what each slows: "compute" (one rank), "machine" (every rank of the machine), "link" (the rank's
#: outgoing link) or "halt".
FAULT_KINDS: dict[str, str] = {
    "slow_gpu": "compute",
    "nic_degraded": "link",
    "flapping_link": "link",
    "cpu_contention": "machine",
    "straggler": "compute",
    "fail_stop": "halt",
    "irregular": "link",
}
#: Function-level faults (PerfTracker, arXiv:2506.08528): a slowdown inside one named function of the iteration that
#: only a function-level profile shows by name. Each maps to the function it slows (:data:`.signals.FUNCTIONS`). They
#: are kept apart from :data:`FAULT_KINDS` so that the classic scenario mix (and every result built on it) is
#: unchanged. ``slow_dataloader`` and ``slow_optimizer`` make their function ``severity`` x slower; ``gc_pause`` adds a
#: pause of ``(severity - 1) x 0.5 x compute_s`` to a ``duty`` share of iterations (a full garbage collection).
FUNCTION_FAULTS: dict[str, str] = {
    "slow_dataloader": "data_loader",
    "slow_optimizer": "optimizer_step",
    "gc_pause": "gc",
}
ALL_FAULT_KINDS: tuple[str, ...] = (*FAULT_KINDS, *FUNCTION_FAULTS)
#: Where a function-level fault acts: one rank, every rank of its machine, or every rank of the job (a software
#: regression shipped to all workers).
SCOPES = ("rank", "machine", "all")


@accepts()
@dataclass(frozen=True)
class Fault:
    """One fault: what, where, when and how bad.

    Parameters
    ----------
    kind : str
        One of :data:`FAULT_KINDS`.
    rank : int
        The faulty rank (for ``cpu_contention`` any rank of the faulty machine).
    onset_iteration : int
        First iteration the fault affects (>= 1, so that every job has a clean first iteration).
    severity : float
        Slow-down factor >= 1: compute time x severity (GPU, CPU, straggler), link bandwidth / severity (NIC,
        flapping link); for ``irregular`` the iteration takes about ``severity`` x its normal time. Ignored by
        ``fail_stop``.
    duty : float
        Fraction of iterations after onset that are affected, for the intermittent kinds (``flapping_link``,
        ``straggler``, ``irregular``); the others are always on after onset.
    period_iterations : int
        Length of one on/off cycle of a flapping link, in iterations.
    scope : str, optional
        For the function-level kinds (:data:`FUNCTION_FAULTS`) only: ``"rank"``, ``"machine"`` (default) or
        ``"all"`` ranks. The classic kinds keep their fixed scope (None).

    Examples
    --------
    >>> Fault("nic_degraded", rank=5, onset_iteration=100, severity=4.0).kind
    'nic_degraded'
    """

    kind: str
    rank: int
    onset_iteration: int
    severity: float = 2.0
    duty: float = 0.3
    period_iterations: int = 20
    scope: str | None = None

    def __post_init__(self) -> None:
        one_of("kind", self.kind, ALL_FAULT_KINDS)
        if self.kind in FUNCTION_FAULTS:
            object.__setattr__(self, "scope", one_of("scope", self.scope or "machine", SCOPES))
        elif self.scope is not None:
            raise ValueError(f"scope applies to the function-level kinds {tuple(FUNCTION_FAULTS)}, not {self.kind!r}")
        integer("rank", self.rank, minimum=0)
        integer("onset_iteration", self.onset_iteration, minimum=1)
        in_range("severity", self.severity, 1.0, 1e6)
        in_range("duty", self.duty, 0.0, 1.0, low_inclusive=False)
        integer("period_iterations", self.period_iterations, minimum=2)

    @accepts()
    def machine(self, ranks_per_machine: int) -> int:
        """The machine holding the faulty rank."""
        return self.rank // ranks_per_machine


@output
@dataclass(frozen=True)
class FaultEffects:
    """Per-iteration effects of one fault on the job (arrays of length ``iterations``)."""

    active: np.ndarray  #: bool, the fault slows this iteration
    compute_factor: np.ndarray  #: multiplier on the faulty rank's (or machine's) compute time
    link_factor: np.ndarray  #: multiplier on the faulty rank's transmit time
    irregular_extra: np.ndarray  #: bool, iteration-level Holmes irregularity (extra transmit time set by the job)


@accepts()
def fault_effects(fault: Fault, iterations: int, seed: Seed = None) -> FaultEffects:
    """Where in time ``fault`` acts and by how much.

    Examples
    --------
    >>> fx = fault_effects(Fault("slow_gpu", 0, onset_iteration=3, severity=1.5), iterations=5, seed=0)
    >>> fx.compute_factor.tolist()
    [1.0, 1.0, 1.0, 1.5, 1.5]
    """
    iterations = integer("iterations", iterations, minimum=1)
    if fault.onset_iteration >= iterations:
        raise ValueError(f"fault onset_iteration must be < iterations ({iterations}), got {fault.onset_iteration}")
    rng = generator(seed)
    after = np.arange(iterations) >= fault.onset_iteration
    if fault.kind == "flapping_link":
        on = max(1, round(fault.duty * fault.period_iterations))
        phase = (np.arange(iterations) - fault.onset_iteration) % fault.period_iterations
        active = after & (phase < on)
    elif fault.kind in ("straggler", "irregular", "gc_pause"):
        active = after & (rng.random(iterations) < fault.duty)
        active[fault.onset_iteration] = True  # the onset iteration is the first affected one
    else:
        active = after
    ones = np.ones(iterations)
    kind = FAULT_KINDS.get(fault.kind, "function")
    compute = np.where(active, fault.severity, 1.0) if kind in ("compute", "machine") else ones
    link = np.where(active, fault.severity, 1.0) if fault.kind in ("nic_degraded", "flapping_link") else ones
    irregular = active if fault.kind == "irregular" else np.zeros(iterations, bool)
    return FaultEffects(active, compute, link, irregular)
