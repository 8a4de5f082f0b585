"""The sunk-carbon fallacy: placing work on two server generations by operational carbon vs by SCI.

Bashir et al., "The Sunk Carbon Fallacy: Rethinking Carbon Footprint Metrics for Effective Carbon-Aware
Scheduling" (SoCC 2024, arXiv 2410.15087): embodied carbon is already emitted when a scheduler decides where a job
runs, so metrics that amortize it into the job's footprint, such as the Software Carbon Intensity
(Green Software Foundation SCI specification, ISO/IEC 21031:2024: ``SCI = (E x I + M) / R`` with embodied share
``M = TE x TiR / EL x RR / ToR``), can steer work to less efficient servers and raise the total (operational)
carbon of the same work.

Model. A fleet of ``n_old`` older and ``n_new`` newer two-socket servers runs ``demand`` busy cores each hour. A
busy core draws the CPU's TDP per core (the CPU at full load; platform power is the same under either rule because
the same servers are on, so it cancels in the comparison and is left out). Per busy core-hour:

- operational carbon: ``I x W_core / 1000`` (g, ``I`` in gCO2eq/kWh);
- SCI-style carbon: that plus the embodied share ``TE / (EL x 8760 x cores)`` while the server is younger than its
  lifetime ``EL`` (linear amortization, SCI's ``TiR / EL``), zero once it is fully amortized.

Each rule fills the generation that is cheaper *by its own metric* first and overflows onto the other. The total
carbon of a placement is operational only (embodied is sunk under both rules).

Constants (each with its published source; per-core work is assumed equal across generations, which understates
the newer CPU's advantage and so understates the fallacy's cost):

- older: 2 x Intel Xeon E5-2680 v4 (14 cores, 120 W TDP each; Intel ARK), embodied 845 kgCO2e: the Dell PowerEdge
  R740 product carbon footprint's component breakdown (Dell 2019, as tabulated in B. Davy's AWS EC2 carbon dataset,
  Teads 2021) without its storage (DRAM 533, mainboard 109, network 59, CPUs 47, chassis 34, PSU 30, I/O 20,
  fans 13 kg);
- newer: 2 x Intel Xeon Platinum 8380 (40 cores, 270 W TDP each; Intel ARK), embodied 1,726 kgCO2e: HPE ProLiant
  DL380 Gen10 product carbon footprint, mainstream configuration (HPE document a50004545enw);
- lifetime 4 years (the HPE PCF's assumption).

Neither PCF is for exactly these CPUs; they are the published two-socket-server figures closest to each class.

Examples
--------
>>> round(break_even_intensity(lifetime_years=4.0), 1)
338.0
>>> old, new = place(np.array([50.0]), np.array([100.0]), "sci", n_old=2, n_new=1)
>>> old.tolist(), new.tolist()
([50.0], [0.0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import _validate as V
from .._contracts import accepts

__all__ = [
    "Server",
    "OLD",
    "NEW",
    "LIFETIME_YEARS",
    "embodied_g_per_core_h",
    "place",
    "compare",
    "break_even_intensity",
    "fallacy_table",
]

LIFETIME_YEARS = 4.0


@accepts()
@dataclass(frozen=True)
class Server:
    """A two-socket server class: cores, full-load CPU watts, embodied carbon (kgCO2e), and where they come from.

    Examples
    --------
    >>> s = Server("my server", cores=64, cpu_watts=400.0, embodied_kg=1200.0, source="vendor sheet")
    >>> round(s.watts_per_core, 2)
    6.25
    """

    name: str
    cores: int
    cpu_watts: float
    embodied_kg: float
    source: str

    @property
    def watts_per_core(self) -> float:
        """CPU TDP per core (W)."""
        return self.cpu_watts / self.cores


OLD = Server(
    "2x Xeon E5-2680 v4",
    28,
    240.0,
    845.0,
    "Intel ARK (14 cores, 120 W); Dell PowerEdge R740 PCF component breakdown without storage (Dell 2019)",
)
NEW = Server(
    "2x Xeon Platinum 8380",
    80,
    540.0,
    1726.0,
    "Intel ARK (40 cores, 270 W); HPE ProLiant DL380 Gen10 PCF, mainstream (HPE a50004545enw)",
)


@accepts()
def embodied_g_per_core_h(server: Server, lifetime_years: float, age_years: float) -> float:
    """SCI's embodied share per busy core-hour (g): ``TE / (EL x 8760 h x cores)`` while ``age < EL``, else 0."""
    el = V.positive("lifetime_years", lifetime_years)
    age = V.nonnegative("age_years", age_years)
    if age >= el:
        return 0.0
    return server.embodied_kg * 1e3 / (el * 8760.0 * server.cores)


@accepts()
def break_even_intensity(lifetime_years: float = LIFETIME_YEARS, old: Server = OLD, new: Server = NEW) -> float:
    """Grid intensity (gCO2eq/kWh) below which SCI prefers a fully amortized old server to a new one:
    ``I* = M_new x 1000 / (W_old - W_new)`` per core."""
    dw = old.watts_per_core - new.watts_per_core
    if dw <= 0:
        return 0.0
    return embodied_g_per_core_h(new, lifetime_years, 0.0) * 1e3 / dw


@accepts()
def place(
    demand: np.ndarray,
    intensity: np.ndarray,
    rule: str,
    *,
    n_old: int,
    n_new: int,
    lifetime_years: float = LIFETIME_YEARS,
    old_age_years: float | None = None,
    new_age_years: float = 0.0,
    old: Server = OLD,
    new: Server = NEW,
) -> tuple[np.ndarray, np.ndarray]:
    """Busy cores on the old and the new servers per hour under ``rule`` (``"operational"`` or ``"sci"``).

    ``demand`` (busy cores) and ``intensity`` (gCO2eq/kWh) are per hour; demand above the fleet's cores is an error.
    ``old_age_years`` defaults to the lifetime (the old servers are fully amortized).
    """
    V.one_of("rule", rule, ("operational", "sci"))
    d = V.array_1d("demand", demand, low=0.0)
    i = V.array_1d("intensity", intensity, low=0.0)
    if d.size != i.size:
        raise ValueError(f"demand ({d.size}) and intensity ({i.size}) must have one value per hour each")
    n_old = V.integer("n_old", n_old, minimum=0)
    n_new = V.integer("n_new", n_new, minimum=0)
    cap_old, cap_new = n_old * old.cores, n_new * new.cores
    if (d > cap_old + cap_new).any():
        raise ValueError(f"demand must be <= the fleet's {cap_old + cap_new} cores, got max {d.max()}")
    lt = V.positive("lifetime_years", lifetime_years)
    cost_old = i * old.watts_per_core / 1e3
    cost_new = i * new.watts_per_core / 1e3
    if rule == "sci":
        cost_old = cost_old + embodied_g_per_core_h(old, lt, lt if old_age_years is None else old_age_years)
        cost_new = cost_new + embodied_g_per_core_h(new, lt, new_age_years)
    old_first = cost_old < cost_new
    on_old = np.where(old_first, np.minimum(d, cap_old), np.maximum(d - cap_new, 0.0))
    return on_old, d - on_old


@accepts()
def compare(
    intensity: np.ndarray,
    utilization: float,
    *,
    n_old: int = 100,
    n_new: int = 100,
    lifetime_years: float = LIFETIME_YEARS,
    old_age_years: float | None = None,
) -> dict[str, float]:
    """Total operational carbon (kg) of placing ``utilization`` x fleet cores each hour by operational carbon vs by
    SCI, over the hours of ``intensity``; ``extra`` is SCI's excess as a fraction of the operational rule's total.

    Examples
    --------
    >>> c = compare(np.array([100.0, 400.0, 700.0]), 0.5)
    >>> round(c["operational_kg"], 2), round(c["extra"], 3)
    (43.74, 0.012)
    """
    u = V.in_range("utilization", utilization, 0.0, 1.0)
    i = V.array_1d("intensity", intensity, min_size=1, low=0.0)
    d = np.full(i.size, u * (n_old * OLD.cores + n_new * NEW.cores))
    out = {}
    for rule in ("operational", "sci"):
        o, n = place(d, i, rule, n_old=n_old, n_new=n_new, lifetime_years=lifetime_years, old_age_years=old_age_years)
        out[rule] = float((i * (o * OLD.watts_per_core + n * NEW.watts_per_core)).sum() / 1e6)  # kg
    base = out["operational"]
    return {
        "operational_kg": base,
        "sci_kg": out["sci"],
        "extra": (out["sci"] - base) / base if base > 0 else 0.0,
        "hours_sci_differs": float(np.mean(i < break_even_intensity(lifetime_years))),
    }


@accepts()
def fallacy_table(
    intensities: dict[str, np.ndarray], utilizations: tuple[float, ...], lifetimes: tuple[float, ...]
) -> pd.DataFrame:
    """:func:`compare` over named intensity series x utilizations x lifetimes (one row each).

    Examples
    --------
    >>> fallacy_table({"flat": np.full(24, 300.0)}, (0.3, 0.6), (4.0,)).shape
    (2, 7)
    """
    rows = []
    for name, i in intensities.items():
        for u in utilizations:
            for lt in lifetimes:
                rows.append({"grid": name, "utilization": u, "lifetime_years": lt, **compare(i, u, lifetime_years=lt)})
    return pd.DataFrame(rows)
