"""Hourly grid carbon-intensity traces: loading, validation, summaries, forecast bounds and the time mapping.

The shared files (``carbon-dag/carbon-intensity/<zone>/<zone>_<year>_hourly.csv``) are Electricity Maps exports
(via HewlettPackard/green-dcc): one row per UTC hour with the direct and the life-cycle (LCA) intensity in
gCO2eq/kWh and a ``Data Estimated`` flag for filled hours. Attribute Electricity Maps when publishing results.

The PCAPS paper (Lechowicz et al., arXiv 2502.09717) and its simulator read a forecast window of the next 48 hours:
``L`` and ``U`` are the lowest and highest intensity in that window (:func:`forecast_bounds`). The simulator maps
simulated time onto trace hours by a fixed scale (one trace hour per 60,000 simulated ms in the authors'
simulator); :class:`TimeMapping` makes that scale an explicit parameter.

Examples
--------
>>> import numpy as np
>>> lo, hi = forecast_bounds(np.array([5.0, 1.0, 3.0, 4.0]), horizon=2)
>>> lo.tolist(), hi.tolist()
([1.0, 1.0, 3.0, 4.0], [5.0, 3.0, 4.0, 4.0])
>>> TimeMapping(seconds_per_hour=60.0, start_hour=10).hour_index(125.0)
12
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import _validate as V
from .. import data
from .._contracts import AnyOf, Instance, Int, Text, accepts
from ..tables import TableError, numbers, read_table

__all__ = [
    "ZONES",
    "REGIONS",
    "REGION_ZONES",
    "ALIASES",
    "TraceError",
    "CarbonTrace",
    "TimeMapping",
    "read_hourly_csv",
    "load_trace",
    "forecast_bounds",
    "trace_summary",
]

#: The regions every carbon study and panel offers, by the short names of the PCAPS paper's evaluation (and GB /
#: NYISO), and their Electricity Maps zone ids (the files in ``carbon-dag/carbon-intensity``): the one list.
REGION_ZONES = {
    "CAISO": "US-CAL-CISO",
    "DE": "DE-LU",
    "NSW": "AU-NSW",
    "ON": "CA-ON",
    "PJM": "US-MIDA-PJM",
    "ZA": "ZA",
    "GB": "GB",
    "NYISO": "US-NY-NYIS",
}
#: The regions' short names (the choices of the carbon experiments and panels).
REGIONS = tuple(REGION_ZONES)
#: Zones with files in ``carbon-dag/carbon-intensity`` (Electricity Maps zone ids).
ZONES = tuple(REGION_ZONES.values())
#: Every name a zone is known by: the short names, and the long ones the PCAPS paper also uses.
ALIASES = {**REGION_ZONES, "Germany": "DE-LU", "Ontario": "CA-ON", "South Africa": "ZA"}
_ROOT = "carbon-dag/carbon-intensity"
_COL_TIME = "Datetime (UTC)"
_COL_DIRECT = "Carbon Intensity gCO₂eq/kWh (direct)"
_COL_LCA = "Carbon Intensity gCO₂eq/kWh (LCA)"
_COL_EST = "Data Estimated"


class TraceError(ValueError):
    """A carbon trace that cannot be used: the message names the file (and line) and what is wrong."""


@accepts()
@dataclass(frozen=True)
class CarbonTrace:
    """Hourly carbon intensity of one zone.

    Attributes
    ----------
    zone : Electricity Maps zone id.
    hours : ``datetime64[h]`` UTC hour starts, strictly consecutive.
    direct, lca : gCO2eq/kWh, direct (operational) and life-cycle intensity per hour.
    estimated : True for hours Electricity Maps filled by estimation.
    """

    zone: str
    hours: np.ndarray
    direct: np.ndarray
    lca: np.ndarray
    estimated: np.ndarray

    def __len__(self) -> int:
        return int(self.hours.size)

    @accepts()
    def values(self, kind: str = "direct") -> np.ndarray:
        """The intensity series of ``kind`` (``"direct"`` or ``"lca"``), gCO2eq/kWh per hour."""
        V.one_of("kind", kind, ("direct", "lca"))
        return self.direct if kind == "direct" else self.lca

    @accepts(start=AnyOf(Text(), Instance(np.datetime64)), hours=Int(ge=1, le=10**6))
    def window(self, start: str | np.datetime64, hours: int) -> CarbonTrace:
        """The ``hours`` hours starting at UTC hour ``start`` (e.g. ``"2022-07-01T00"``); error if out of range."""
        hours = V.integer("hours", hours, minimum=1)
        t0 = np.datetime64(str(start), "h")
        i = int((t0 - self.hours[0]) / np.timedelta64(1, "h"))
        if i < 0 or i + hours > len(self):
            raise TraceError(
                f"window start={t0} hours={hours} is outside the {self.zone} trace "
                f"({self.hours[0]} .. {self.hours[-1]})"
            )
        s = slice(i, i + hours)
        return CarbonTrace(self.zone, self.hours[s], self.direct[s], self.lca[s], self.estimated[s])


@accepts()
@dataclass(frozen=True)
class TimeMapping:
    """How simulated time maps onto trace hours: ``hour = start_hour + floor(t / seconds_per_hour)``.

    ``seconds_per_hour`` simulated seconds cover one trace hour; the PCAPS simulator uses 60 (one trace hour per
    simulated minute), which compresses a week of grid variation into 168 simulated minutes.
    """

    seconds_per_hour: float = 60.0
    start_hour: int = 0

    def __post_init__(self) -> None:
        V.positive("seconds_per_hour", self.seconds_per_hour)
        V.integer("start_hour", self.start_hour, minimum=0)

    @accepts()
    def hour_index(self, t_s: float) -> int:
        """The trace-hour index that simulated time ``t_s`` (seconds) falls into."""
        return self._hour_index(t_s)

    @accepts()
    def hour_start(self, index: int) -> float:
        """The simulated time (s) at which trace hour ``index`` begins."""
        return (index - self.start_hour) * self.seconds_per_hour

    # Unchecked forms for a simulator's event loop, which asks per task with times it computed itself (the public
    # methods check each call, which costs more than the arithmetic).

    def _hour_index(self, t_s: float) -> int:
        return self.start_hour + int(t_s // self.seconds_per_hour)

    def _next_hour_start(self, t_s: float) -> float:
        """``hour_start(hour_index(t_s) + 1)``."""
        return (int(t_s // self.seconds_per_hour) + 1) * self.seconds_per_hour


def _zone_id(zone: str) -> str:
    if zone in ZONES:
        return zone
    if zone in ALIASES:
        return ALIASES[zone]
    raise TraceError(f"zone must be one of {', '.join(ZONES)} (or {', '.join(ALIASES)}); got {zone!r}")


@accepts()
def read_hourly_csv(path: str | os.PathLike) -> CarbonTrace:
    """Read one Electricity Maps hourly export, checking every row.

    Errors (:class:`TraceError`) name the file and the line: a missing column, an unparsable hour or intensity, an
    hour that does not advance (non-monotone), or a gap (a missing hour).
    """
    path = Path(path)
    if not path.exists():
        raise TraceError(f"{path}: no such carbon-trace file")
    try:
        table = read_table(path, (_COL_TIME, _COL_DIRECT, _COL_LCA, _COL_EST), what="carbon trace")
    except TableError as exc:
        raise TraceError(str(exc)) from None
    n = len(table)
    if n == 0:
        raise TraceError(f"{path}: no data rows")
    stamps = table.column(_COL_TIME)
    try:
        hours = np.array([t.replace(" ", "T")[:13] for t in stamps], dtype="datetime64[h]")
    except ValueError:
        for k, t in enumerate(stamps):
            try:
                np.datetime64(t.replace(" ", "T")[:13], "h")
            except ValueError:
                raise TraceError(f"{table.where(k)}: unparsable hour {t!r}") from None
        raise
    try:
        direct = numbers(table, _COL_DIRECT, ge=0.0)
        lca = numbers(table, _COL_LCA, ge=0.0)
    except TableError as exc:
        raise TraceError(f"{exc} (intensity must be a finite number >= 0)") from None
    vals = np.column_stack([direct, lca])
    step = np.diff(hours).astype(np.int64)
    if (step <= 0).any():
        k = int(np.argmax(step <= 0)) + 1
        raise TraceError(f"{table.where(k)}: hour {hours[k]} does not advance past {hours[k - 1]} (non-monotone hours)")
    if (step > 1).any():
        k = int(np.argmax(step > 1)) + 1
        raise TraceError(f"{table.where(k)}: gap of {int(step[k - 1]) - 1} hour(s) after {hours[k - 1]}")
    flags = [e.lower() for e in table.column(_COL_EST)]
    odd = [k for k, e in enumerate(flags) if e not in ("true", "false", "")]
    if odd:
        raise TraceError(f"{table.where(odd[0])}: column {_COL_EST!r} must be true or false, got {flags[odd[0]]!r}")
    est = np.array([e == "true" for e in flags])
    zone = table.column("Zone Id")[0] if "Zone Id" in table.header else path.stem
    return CarbonTrace(zone, hours, vals[:, 0].copy(), vals[:, 1].copy(), est)


@accepts()
def load_trace(zone: str, years: int | tuple[int, ...] | None = None) -> CarbonTrace:
    """Load the hourly trace of ``zone`` (an id of :data:`ZONES` or a short name of :data:`ALIASES`).

    ``years`` picks files (default: every year present, 2021-2024); consecutive files must join without a gap or an
    overlap (the error names both files). A zone without a folder or file raises :class:`TraceError` naming the path.
    """
    zid = _zone_id(zone)
    folder = data.find(f"{_ROOT}/{zid}")
    if folder is None or not folder.is_dir():
        raise TraceError(f"no carbon-trace folder {_ROOT}/{zid} on the data search path for zone {zone!r}")
    if years is None:
        files = sorted(folder.glob(f"{zid}_*_hourly.csv"))
    else:
        ys = (years,) if isinstance(years, int) else tuple(years)
        files = [folder / f"{zid}_{V.integer('years', y, minimum=1900)}_hourly.csv" for y in ys]
    if not files:
        raise TraceError(f"{folder}: no {zid}_<year>_hourly.csv files for zone {zone!r}")
    parts = [read_hourly_csv(f) for f in files]
    for a, b, fa, fb in zip(parts, parts[1:], files, files[1:], strict=False):
        gap = int((b.hours[0] - a.hours[-1]) / np.timedelta64(1, "h"))
        if gap != 1:
            what = "overlap" if gap < 1 else f"gap of {gap - 1} hour(s)"
            raise TraceError(f"{fb}:2: {what} between {fa.name} (ends {a.hours[-1]}) and {b.hours[0]}")
    return CarbonTrace(
        zid,
        np.concatenate([p.hours for p in parts]),
        np.concatenate([p.direct for p in parts]),
        np.concatenate([p.lca for p in parts]),
        np.concatenate([p.estimated for p in parts]),
    )


@accepts()
def forecast_bounds(values: np.ndarray, horizon: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """Per hour ``t``: ``L_t = min`` and ``U_t = max`` of ``values[t : t + horizon]`` (shorter at the end).

    These are the forecast bounds of PCAPS / CAP (arXiv 2502.09717, Sec. 4: ``L`` and ``U`` bound the carbon
    intensity over the next 48 hours); a perfect forecast here, as in the authors' simulator.
    """
    v = V.array_1d("values", values, min_size=1)
    horizon = V.integer("horizon", horizon, minimum=1)
    pad = np.concatenate([v, np.full(horizon - 1, np.nan)])
    win = np.lib.stride_tricks.sliding_window_view(pad, horizon)
    return np.nanmin(win, axis=1), np.nanmax(win, axis=1)


@accepts()
def trace_summary(trace: CarbonTrace, kind: str = "direct") -> dict[str, float | str]:
    """Summary of a trace: mean, min, max, mean daily spread (max - min within each UTC day, averaged over whole
    days), coefficient of variation, the share of hours below the mean of the next 48 hours, and the share of
    estimated hours.

    Examples
    --------
    >>> h = np.arange(np.datetime64("2023-01-01T00"), np.datetime64("2023-01-03T00"))
    >>> v = 300 + 100 * np.sin(np.arange(48) / 24 * 2 * np.pi)
    >>> s = trace_summary(CarbonTrace("DE", h, v, 1.2 * v, np.zeros(48, bool)))
    >>> s["hours"], round(s["mean"], 1), round(s["daily_spread"], 1)
    (48, 300.0, 200.0)
    """
    v = trace.values(kind)
    days = v.size // 24
    day = v[: days * 24].reshape(days, 24) if days else v.reshape(1, -1)
    lo, hi = day.min(axis=1), day.max(axis=1)
    h = 48
    csum = np.concatenate([[0.0], np.cumsum(v)])
    idx = np.arange(v.size)
    end = np.minimum(idx + h, v.size)
    fwd_mean = (csum[end] - csum[idx]) / (end - idx)
    return {
        "zone": trace.zone,
        "hours": int(v.size),
        "mean": float(v.mean()),
        "min": float(v.min()),
        "max": float(v.max()),
        "daily_spread": float((hi - lo).mean()),
        "relative_daily_spread": float(((hi - lo) / np.maximum(day.mean(axis=1), 1e-9)).mean()),
        "cv": float(v.std() / max(v.mean(), 1e-9)),
        "share_below_48h_mean": float((v < fwd_mean).mean()),
        "share_estimated": float(trace.estimated.mean()),
    }
