"""What the detectors share: the suspects table, robust per-iteration outlier scores and a persistence rule."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The columns every detector returns first (a detector may add its own after them: PerfTracker names the function,
#: scope and trigger of its diagnosis).
SUSPECT_COLUMNS = ("rank", "machine", "score", "alarm_iteration", "alarm_s")


def suspects_frame(rank, machine, score, alarm_iteration, alarm_s) -> pd.DataFrame:
    """Ranked suspects: highest score first, earlier alarm breaking ties; ``rank`` is -1 for machine-level ones."""
    frame = pd.DataFrame(
        {
            "rank": np.asarray(rank, dtype=np.int64),
            "machine": np.asarray(machine, dtype=np.int64),
            "score": np.asarray(score, dtype=float),
            "alarm_iteration": np.asarray(alarm_iteration, dtype=np.int64),
            "alarm_s": np.asarray(alarm_s, dtype=float),
        },
        columns=list(SUSPECT_COLUMNS),
    )
    return frame.sort_values(["score", "alarm_s"], ascending=[False, True], kind="stable").reset_index(drop=True)


#: Medians across more peers than this are taken over an evenly strided subset of them (a peer median over 1,024
#: ranks is as good an estimate of "normal" as over 10,000, at a tenth of the cost).
MAX_PEERS = 1024


def median(x: np.ndarray, axis: int) -> np.ndarray:
    """Median along ``axis`` (keepdims; over at most :data:`MAX_PEERS` strided entries), NaN-aware when needed."""
    n = x.shape[axis]
    if n > MAX_PEERS:
        x = np.take(x, np.arange(0, n, -(-n // MAX_PEERS)), axis=axis)
    return np.nanmedian(x, axis=axis, keepdims=True) if np.isnan(x).any() else np.median(x, axis=axis, keepdims=True)


def robust_z(x: np.ndarray, axis: int, *, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """``(x - median) / (1.4826 MAD)`` along ``axis`` and the median; the scale floored at ``floor`` (a noiseless
    job has MAD 0)."""
    med = median(x, axis)
    dev = x - med
    scale = np.maximum(1.4826 * median(np.abs(dev), axis), floor)
    dev /= scale
    return dev, med


def first_persistent(flags: np.ndarray, window: int, need: int) -> np.ndarray:
    """Per column, the first row at which at least ``need`` of the last ``window`` rows are flagged (-1 if never)."""
    counts = np.cumsum(flags, axis=0, dtype=np.int32)
    lagged = np.zeros_like(counts)
    lagged[window:] = counts[:-window]
    hit = (counts - lagged) >= need
    return np.where(hit.any(axis=0), hit.argmax(axis=0), -1)


def live_iterations(signals) -> int:
    """Iterations that started (a fail-stop leaves the later ones NaN)."""
    return int(np.searchsorted(np.isnan(signals.iteration_start_s), True))


def hang(signals, timeout_s: float) -> tuple[np.ndarray, int, float]:
    """Ranks missing from a hung collective, its iteration and when a ``timeout_s`` watchdog notices (or empty)."""
    end = signals.iteration_end_s
    if not np.isnan(end).any():
        return np.zeros(0, np.int64), -1, np.nan
    h = int(np.argmax(np.isnan(end)))
    missing = np.flatnonzero(np.isnan(signals.compute_s[h]))
    arrived = float(signals.iteration_start_s[h] + np.nanmax(signals.compute_s[h]))
    return missing, h, arrived + timeout_s
