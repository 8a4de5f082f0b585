"""Minder-style detector: the machine whose monitoring metrics stay apart from its peers' for a continuity window.

Minder (Deng et al., NSDI 2025, arXiv:2411.01791) rests on *machine-level similarity* (machines of one job run the
same code, so their metrics look alike and a faulty one looks different), *continuity* (abnormal patterns last
minutes, while noise does not) and per-metric denoising (an LSTM-VAE per metric in the paper). Here:

* **denoise**: a moving average over ``smooth_samples`` samples per machine and metric (not a learned VAE: on
  synthetic metrics with independent noise an average is the matched filter; this is a stated substitution);
* **distance to peers**: per metric and sample, the machine's robust z-score across machines (median, MAD; the MAD
  floored at ``floor`` x the median so a noiseless metric does not divide by zero), squared and averaged over a
  sliding ``window_samples`` window, square-rooted: the RMS distance from the peers' median over the window. A
  machine's dissimilarity is the largest over metrics (Minder checks metrics in priority order and alarms on the
  first that separates a machine; the max is that rule without a learned priority);
* **continuity**: alarm when the same machine is the most dissimilar, above ``threshold``, for ``continuity_s``
  seconds of consecutive samples. The suspects are the three most dissimilar machines at the alarm sample.

Its delay is therefore at least the continuity window plus the sampling interval; the paper's "3.6 s" is the time
Minder takes to react to the data it is given, a different quantity (see :mod:`workbench.reproductions.minder`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.ndimage import uniform_filter1d

from ..._contracts import accepts
from ..._validate import integer, positive
from ._common import median, suspects_frame
from .signals import Signals, check_signals

__all__ = ["detect", "dissimilarity"]


def _moving_mean(x: np.ndarray, n: int) -> np.ndarray:
    """Trailing mean over ``n`` samples along the last axis (NaN samples ignored; the first sample repeated at the
    start). The samples are the last, contiguous axis: scipy's filter along a strided first axis took five times as
    long on the same values (Minder's full-scale sweep: 2,048 machines x 8 metrics x 420 samples)."""
    if not np.isnan(x).any():
        return uniform_filter1d(x, n, axis=-1, origin=(n - 1) // 2, mode="nearest")
    valid = ~np.isnan(x)
    c = np.zeros((*x.shape[:-1], x.shape[-1] + 1))
    np.cumsum(np.where(valid, x, 0.0), axis=-1, out=c[..., 1:])
    k = np.zeros(c.shape, np.int32)
    np.cumsum(valid, axis=-1, out=k[..., 1:])
    lo = np.maximum(np.arange(1, x.shape[-1] + 1) - n, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((c[..., 1:] - c[..., lo]) / (k[..., 1:] - k[..., lo])).astype(np.float32)


@accepts()
def dissimilarity(
    signals: Signals, *, smooth_samples: int = 5, window_samples: int = 10, floor: float = 0.02
) -> np.ndarray:
    """Each machine's distance from its peers, float32 ``(samples, machines)`` (largest over metrics).

    Examples
    --------
    >>> from workbench.training.diagnosis import Fault, JobSpec, simulate
    >>> s = simulate(JobSpec(ranks=64), 200, Fault("cpu_contention", 20, onset_iteration=50, severity=2.0), seed=0)
    >>> int(dissimilarity(s)[-1].argmax())
    2
    """
    smooth_samples = integer("smooth_samples", smooth_samples, minimum=1)
    window_samples = integer("window_samples", window_samples, minimum=1)
    floor = positive("floor", floor)
    smooth = _moving_mean(np.ascontiguousarray(signals.metrics.transpose(2, 1, 0)), smooth_samples)  # (metrics, m, t)
    x = np.ascontiguousarray(smooth.transpose(2, 0, 1))  # (t, metrics, m): the peers of a sample contiguous
    med = median(x, 2)
    x -= med  # the deviation from the peers' median (x is this function's own array)
    scale = np.maximum(1.4826 * median(np.abs(x), 2), floor * np.abs(med) + 1e-6)
    x /= scale
    z2 = np.square(x, out=x)
    d = _moving_mean(np.ascontiguousarray(z2.transpose(1, 2, 0)), window_samples)  # (metrics, m, t)
    d = np.sqrt(np.maximum(d, 0.0))  # a running mean can round below 0
    return np.ascontiguousarray(np.nan_to_num(d, nan=0.0).max(axis=0).T)


@accepts()
def detect(
    signals: Signals,
    *,
    threshold: float = 4.0,
    continuity_s: float = 30.0,
    smooth_samples: int = 5,
    window_samples: int = 10,
    floor: float = 0.02,
) -> pd.DataFrame:
    """Machine-level suspects (``rank`` -1) with Minder's alarm time.

    Examples
    --------
    >>> from workbench.training.diagnosis import Fault, JobSpec, simulate
    >>> s = simulate(JobSpec(ranks=64), 200, Fault("slow_gpu", 41, onset_iteration=50, severity=2.0), seed=0)
    >>> int(detect(s).loc[0, "machine"])
    5
    """
    check_signals(signals)
    threshold = positive("threshold", threshold)
    continuity_s = positive("continuity_s", continuity_s)
    d = dissimilarity(signals, smooth_samples=smooth_samples, window_samples=window_samples, floor=floor)
    need = int(np.ceil(continuity_s / signals.sample_interval_s)) + 1  # samples spanning continuity_s
    top = d.argmax(axis=1)
    above = d.max(axis=1) > threshold
    key = np.where(above, top, -1)
    # run length of the same top machine above threshold, vectorized with run starts
    change = np.ones(key.size, bool)
    change[1:] = key[1:] != key[:-1]
    starts = np.maximum.accumulate(np.where(change, np.arange(key.size), 0))
    run = np.arange(key.size) - starts + 1
    hit = above & (run >= need)
    if not hit.any():
        return suspects_frame([], [], [], [], [])
    t = int(np.argmax(hit))
    order = np.argsort(-d[t], kind="stable")[:3]
    alarm_s = float(signals.sample_s[t])
    it = int(np.clip(np.searchsorted(signals.iteration_start_s, alarm_s, side="right") - 1, 0, signals.iterations - 1))
    return suspects_frame(
        np.full(order.size, -1), order, d[t, order], np.full(order.size, it), np.full(order.size, alarm_s)
    )
