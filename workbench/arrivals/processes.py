"""Renewal arrival processes and the generators that draw from them.

:class:`Poisson`, :class:`Gamma` (vLLM's burstiness and Vidur's CV conventions), :class:`Weibull` and
:class:`Deterministic` share a mean rate ``rate_rps``; :func:`arrival_times` draws ``n`` arrivals (plain i.i.d. gaps
or vLLM's normalization), :func:`arrivals_until` fills a span, :func:`piecewise_arrivals` draws many
piecewise-stationary (stream, window) rows at once, and :func:`superpose` merges streams.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from scipy import special

from .. import _validate as V
from .._contracts import NONNEGATIVE, Real, accepts
from .._rng import Seed, generator

if TYPE_CHECKING:
    pass

Family = Literal["gamma", "weibull"]
_FAMILIES = ("gamma", "weibull")
#: Largest gap CV a process accepts (ServeGen's client-windows reach about 1e3). A Gamma gap of shape 1/cv^2 is below
#: the smallest double with probability about exp(-744 / cv^2): above cv ~ 30 most gaps are 0 s, harmless while a
#: few long gaps carry the span, but at cv = 1e6 every gap of any practical sample is 0 s and the rate is lost.
MAX_CV = 1e4


@dataclass(frozen=True)
class _Renewal:
    """What every renewal process here shares: a validated mean rate and the mean gap."""

    rate_rps: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rate_rps", V.positive("rate_rps", self.rate_rps))

    @property
    def mean_s(self) -> float:
        return 1.0 / self.rate_rps


@accepts()
@dataclass(frozen=True)
class Poisson(_Renewal):
    """Poisson arrivals: exponential gaps with mean ``1/rate_rps``.

    Examples
    --------
    >>> Poisson(2.0).interarrivals(3, seed=0).round(3)
    array([0.34, 0.51, 0.01])
    """

    @property
    def cv(self) -> float:
        return 1.0

    def interarrivals(self, n: int, seed: Seed = None) -> np.ndarray:
        """``n`` i.i.d. gaps in seconds."""
        n = V.integer("n", n, minimum=0)
        return generator(seed).exponential(self.mean_s, n)

    def pdf(self, x_s: np.ndarray) -> np.ndarray:
        """Probability density of a gap of ``x_s`` seconds."""
        from scipy import stats  # imported where used: ~0.5 s at import, and most users never need a density

        return stats.expon.pdf(x_s, scale=self.mean_s)


@accepts(shape=Real(gt=0.0, finite=False))  # infinite shape: constant spacing (vLLM's burstiness -> inf)
@dataclass(frozen=True)
class Gamma(_Renewal):
    """Gamma-renewal arrivals with mean rate ``rate_rps`` and shape ``shape`` (CV = 1/sqrt(shape)).

    ``shape = inf`` is constant spacing. Build it with :meth:`from_burstiness` (vLLM) or :meth:`from_cv` (Vidur).

    Examples
    --------
    >>> g = Gamma.from_burstiness(4.0, burstiness=0.5)
    >>> g.shape, g.scale_s, round(g.cv, 4)
    (0.5, 0.5, 1.4142)
    >>> Gamma.from_cv(4.0, cv=2.0).shape
    0.25
    """

    shape: float

    def __post_init__(self) -> None:
        super().__post_init__()
        shape = V.positive("shape", self.shape, allow_inf=True)
        if shape < MAX_CV**-2:
            raise ValueError(
                f"shape must be >= {MAX_CV**-2:g} (gap CV <= {MAX_CV:g}), got {shape:g}: below it float64 gaps "
                "underflow to 0 s and the process cannot realize its rate"
            )
        object.__setattr__(self, "shape", shape)

    @classmethod
    def from_burstiness(cls, rate_rps: float, burstiness: float) -> Gamma:
        """vLLM's convention: shape = burstiness, scale = 1/(rate x burstiness); 1 is Poisson, ``inf`` constant."""
        return cls(rate_rps, V.positive("burstiness", burstiness, allow_inf=True))

    @classmethod
    def from_cv(cls, rate_rps: float, cv: float) -> Gamma:
        """Vidur's convention: shape = 1/cv^2 (``cv = 0`` is constant spacing)."""
        cv = V.in_range("cv", cv, 0.0, MAX_CV)
        return cls(rate_rps, math.inf if cv == 0 else 1.0 / cv**2)

    @property
    def burstiness(self) -> float:
        return self.shape

    @property
    def scale_s(self) -> float:
        return 0.0 if math.isinf(self.shape) else 1.0 / (self.rate_rps * self.shape)

    @property
    def cv(self) -> float:
        return 1.0 / math.sqrt(self.shape)

    def interarrivals(self, n: int, seed: Seed = None) -> np.ndarray:
        """``n`` i.i.d. gaps in seconds."""
        n = V.integer("n", n, minimum=0)
        if math.isinf(self.shape):
            return np.full(n, self.mean_s)
        return generator(seed).gamma(self.shape, self.scale_s, n)

    def pdf(self, x_s: np.ndarray) -> np.ndarray:
        """Probability density of a gap of ``x_s`` seconds (not defined for constant spacing)."""
        if math.isinf(self.shape):
            raise ValueError("constant spacing (shape = inf) has no density")
        from scipy import stats  # imported where used: ~0.5 s at import, and most users never need a density

        return stats.gamma.pdf(x_s, self.shape, scale=self.scale_s)


@accepts()
def weibull_shape_from_cv(cv: float | np.ndarray) -> np.ndarray:
    """The Weibull shape ``k`` whose CV is ``cv``: solves ``Gamma(1+2/k)/Gamma(1+1/k)^2 - 1 = cv^2``.

    Vectorized bisection in log k (the CV decreases monotonically in k); ``cv = 1`` gives k = 1 (exponential).
    Valid for 1e-5 <= cv <= 1e4.

    Examples
    --------
    >>> weibull_shape_from_cv([1.0, 0.5]).round(4)
    array([1.    , 2.1013])
    """
    cvs = V.array_1d("cv", cv, low=1e-5)
    if (cvs > MAX_CV).any():
        raise ValueError(f"cv must be <= {MAX_CV:g} for a Weibull process, got {cvs.max()}")
    target = np.log(cvs)
    lo = np.full(cvs.shape, math.log(0.02))  # cv(0.02) ~ 3e14
    hi = np.full(cvs.shape, math.log(2e5))  # cv(2e5) ~ 6e-6
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        k = np.exp(mid)
        log_cv = 0.5 * np.log(np.expm1(special.gammaln(1 + 2 / k) - 2 * special.gammaln(1 + 1 / k)))
        too_bursty = log_cv > target  # k too small
        lo = np.where(too_bursty, mid, lo)
        hi = np.where(too_bursty, hi, mid)
    return np.exp(0.5 * (lo + hi))


@accepts()
@dataclass(frozen=True)
class Weibull(_Renewal):
    """Weibull-renewal arrivals with mean rate ``rate_rps`` and gap CV ``cv`` (shape from :func:`weibull_shape_from_cv`).

    Examples
    --------
    >>> w = Weibull(10.0, cv=1.0)
    >>> round(w.shape, 6), round(w.scale_s, 6)
    (1.0, 0.1)
    """

    cv: float

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "cv", V.in_range("cv", self.cv, 1e-5, MAX_CV))

    @property
    def shape(self) -> float:
        return float(weibull_shape_from_cv(self.cv)[0])

    @property
    def scale_s(self) -> float:
        return self.mean_s / math.exp(special.gammaln(1 + 1 / self.shape))

    def interarrivals(self, n: int, seed: Seed = None) -> np.ndarray:
        """``n`` i.i.d. gaps in seconds."""
        n = V.integer("n", n, minimum=0)
        return self.scale_s * generator(seed).weibull(self.shape, n)

    def pdf(self, x_s: np.ndarray) -> np.ndarray:
        """Probability density of a gap of ``x_s`` seconds."""
        from scipy import stats  # imported where used: ~0.5 s at import, and most users never need a density

        return stats.weibull_min.pdf(x_s, self.shape, scale=self.scale_s)


@accepts()
@dataclass(frozen=True)
class Deterministic(_Renewal):
    """Constant spacing ``1/rate_rps`` (CV 0).

    Examples
    --------
    >>> arrival_times(Deterministic(4.0), 3, seed=0).tolist()
    [0.25, 0.5, 0.75]
    """

    @property
    def cv(self) -> float:
        return 0.0

    def interarrivals(self, n: int, seed: Seed = None) -> np.ndarray:
        """``n`` gaps of exactly ``1/rate_rps`` seconds (``seed`` is accepted and unused)."""
        n = V.integer("n", n, minimum=0)
        return np.full(n, self.mean_s)


Process = Poisson | Gamma | Weibull | Deterministic


@accepts()
def renewal(rate_rps: float, cv: float, family: Family = "gamma") -> Process:
    """A renewal process with the given mean rate and gap CV: ``cv = 0`` is :class:`Deterministic`; otherwise
    :class:`Gamma` (shape 1/cv^2) or :class:`Weibull`.

    Examples
    --------
    >>> renewal(5.0, 0.5)
    Gamma(rate_rps=5.0, shape=4.0)
    """
    V.one_of("family", family, _FAMILIES)
    cv = V.in_range("cv", cv, 0.0, MAX_CV)
    if cv == 0:
        return Deterministic(rate_rps)
    return Gamma.from_cv(rate_rps, cv) if family == "gamma" else Weibull(rate_rps, cv)


def _check_process(process: object) -> Process:
    if not isinstance(process, (Poisson, Gamma, Weibull, Deterministic)):
        raise TypeError(f"process must be Poisson, Gamma, Weibull or Deterministic, got {type(process).__name__}")
    return process


@accepts()
def arrival_times(
    process: Process,
    n: int,
    *,
    seed: Seed = None,
    normalize: bool = False,
    start_s: float = 0.0,
) -> np.ndarray:
    """Arrival times (seconds, ascending) of ``n`` requests: ``start_s`` plus the cumulative sum of the gaps.

    With ``normalize=True`` the times are rescaled so that the last arrival is exactly at ``start_s + n / rate``
    (vLLM's benchmark normalization: the sample's realized rate equals the requested one; the CV is unchanged).

    Examples
    --------
    >>> t = arrival_times(Gamma.from_burstiness(2.0, 0.5), 1000, seed=3, normalize=True)
    >>> float(t[-1])
    500.0
    """
    process = _check_process(process)
    n = V.integer("n", n, minimum=1)
    start_s = V.finite("start_s", start_s)
    times = np.cumsum(process.interarrivals(n, seed))
    if normalize:
        if times[-1] <= 0:
            raise ValueError(
                f"all {n} gaps of {process} underflowed to 0 s (gap CV {process.cv:g}): normalize=True needs a "
                "positive span; draw more arrivals or use a smaller CV"
            )
        times *= (n / process.rate_rps) / times[-1]
    return times + start_s if start_s else times


@accepts()
def arrivals_until(process: Process, duration_s: float, *, seed: Seed = None, start_s: float = 0.0) -> np.ndarray:
    """All arrival times in ``[start_s, start_s + duration_s)``, the process started in equilibrium at ``start_s``.

    Examples
    --------
    >>> t = arrivals_until(Poisson(100.0), 60.0, seed=0)
    >>> bool(5400 < t.size < 6600 and t.max() < 60.0)
    True
    """
    process = _check_process(process)
    duration_s = V.positive("duration_s", duration_s)
    family: Family = "weibull" if isinstance(process, Weibull) else "gamma"
    times, _ = piecewise_arrivals(start_s, duration_s, process.rate_rps, process.cv, family=family, seed=seed)
    return times


def _stationary_excess(
    shape: np.ndarray, scale: np.ndarray, is_weibull: np.ndarray, u: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """First gap of a renewal process in equilibrium: a uniform fraction ``u`` of a length-biased gap.

    Length-biased Gamma(k, theta) is Gamma(k + 1, theta); for Weibull(k, lam), (X/lam)^k length-biased is
    Gamma(1 + 1/k), so X = lam * G^(1/k). Constant spacing (shape inf) gives u * mean.
    """
    out = np.empty(shape.size)
    det = np.isinf(shape)
    gam = ~is_weibull & ~det
    wei = is_weibull & ~det
    out[det] = scale[det]  # for constant spacing `scale` holds the gap itself
    if gam.any():
        out[gam] = rng.gamma(shape[gam] + 1.0, scale[gam])
    if wei.any():
        out[wei] = scale[wei] * rng.gamma(1.0 + 1.0 / shape[wei]) ** (1.0 / shape[wei])
    return u * out


@accepts(rate_rps=NONNEGATIVE)  # a window's rate may be 0 (no arrivals), as a scalar too: an idle window of a fit
def piecewise_arrivals(
    start_s: float | np.ndarray,
    duration_s: float | np.ndarray,
    rate_rps: float | np.ndarray,
    cv: float | np.ndarray,
    *,
    family: Family | np.ndarray = "gamma",
    seed: Seed = None,
    sort: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Arrivals of a piecewise-stationary renewal process, vectorized over rows.

    Each row ``r`` is a window ``[start_s[r], start_s[r] + duration_s[r])`` of one stream with mean rate
    ``rate_rps[r]`` (0 allowed: no arrivals), gap CV ``cv[r]`` (0 = constant spacing) and ``family[r]`` (``"gamma"``
    or ``"weibull"``). Rows are independent: several streams, several windows each, all at once. Inside a window the
    renewal process starts in equilibrium, so a constant-rate process split into windows has the statistics of the
    unsplit one (up to the independence across boundaries).

    Parameters
    ----------
    start_s, duration_s, rate_rps, cv : float or array
        Scalars or arrays of one common length ``R`` (scalars are repeated); ``duration_s > 0``, ``rate_rps >= 0``,
        ``0 <= cv <= MAX_CV``, all finite.
    family : str or array of str
        ``"gamma"`` (default) or ``"weibull"``, per row or for all.
    seed : int, Generator or None
    sort : bool
        Sort the output by time (default). Otherwise rows come out one after another, each in time order.

    Returns
    -------
    times_s : ndarray of float
        Arrival times.
    row : ndarray of int64
        The row each arrival came from (index into the broadcast inputs).

    Examples
    --------
    >>> t, row = piecewise_arrivals([0, 600], 600, [1.0, 5.0], [3.0, 1.0], seed=7)
    >>> np.bincount(row).tolist()  # about 600 and 3000
    [665, 3027]
    >>> bool(np.all(np.diff(t) >= 0))
    True
    """
    columns = {
        "start_s": V.array_1d("start_s", start_s),
        "duration_s": V.array_1d("duration_s", duration_s, low=0.0, low_inclusive=False),
        "rate_rps": V.array_1d("rate_rps", rate_rps, low=0.0),
        "cv": V.array_1d("cv", cv, low=0.0, high=MAX_CV),
    }
    lengths = {name: a.size for name, a in columns.items()}
    if len({size for size in lengths.values() if size != 1}) > 1:
        raise ValueError(
            "start_s, duration_s, rate_rps and cv must each be a scalar or have one entry per row; got lengths "
            + ", ".join(f"{name}={size}" for name, size in lengths.items())
        )
    start, dur, rate, cvs = np.broadcast_arrays(*columns.values())
    R = start.size
    fam = np.asarray(family)
    if fam.ndim == 0:
        V.one_of("family", str(fam), _FAMILIES)
        is_weibull = np.full(R, str(fam) == "weibull")
    else:
        if fam.shape != (R,):
            raise ValueError(f"family must be a string or have one entry per row ({R}), got shape {fam.shape}")
        bad = ~np.isin(fam, _FAMILIES)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"family must be 'gamma' or 'weibull'; row {i} is {fam[i]!r}")
        is_weibull = fam == "weibull"
    rng = generator(seed)

    # Per-row gap distribution: shape and scale (for constant spacing, shape = inf and scale = the gap).
    det = cvs == 0
    is_weibull = is_weibull & ~det
    with np.errstate(divide="ignore"):
        shape = np.where(det, np.inf, 1.0 / np.where(det, 1.0, cvs) ** 2)
    mean = np.divide(1.0, rate, out=np.full(R, np.inf), where=rate > 0)
    if is_weibull.any():
        shape[is_weibull] = weibull_shape_from_cv(cvs[is_weibull])
    with np.errstate(invalid="ignore"):
        scale = np.where(det, mean, mean / shape)
    if is_weibull.any():
        k = shape[is_weibull]
        scale[is_weibull] = mean[is_weibull] / np.exp(special.gammaln(1 + 1 / k))

    active = rate > 0
    expected = np.where(active, rate * dur, 0.0)
    need = np.where(active, np.ceil(expected + 3 * np.sqrt(expected * np.maximum(cvs**2, 1.0)) + 4), 0).astype(np.int64)

    times_parts, row_parts = [], []
    todo = np.flatnonzero(active)
    while todo.size:
        k_draws = need[todo]
        idx = np.repeat(todo, k_draws)
        first = np.zeros(idx.size, dtype=bool)
        offsets = np.concatenate(([0], np.cumsum(k_draws)[:-1]))
        first[offsets] = True
        gaps = np.empty(idx.size)
        s, sc, w = shape[idx], scale[idx], is_weibull[idx]
        d = np.isinf(s)
        g = ~w & ~d
        gaps[d] = sc[d]
        if g.any():
            gaps[g] = rng.gamma(s[g], sc[g])
        if w.any():
            gaps[w] = sc[w] * rng.weibull(s[w])
        gaps[first] = _stationary_excess(shape[todo], scale[todo], is_weibull[todo], rng.random(todo.size), rng)
        total = np.cumsum(gaps)
        base = np.repeat(total[offsets] - gaps[offsets], k_draws)
        within = total - base
        ends = offsets + k_draws - 1
        enough = within[ends] >= dur[todo]
        ok_rows = np.repeat(enough, k_draws)
        keep = ok_rows & (within < dur[idx])
        times_parts.append(start[idx[keep]] + within[keep])
        row_parts.append(idx[keep])
        # Rows whose draws ran out before the window's end are redrawn whole with twice as many gaps.
        todo = todo[~enough]
        need[todo] *= 2
    if times_parts:
        times = np.concatenate(times_parts)
        rows = np.concatenate(row_parts).astype(np.int64)
    else:
        times, rows = np.empty(0), np.empty(0, dtype=np.int64)
    order = np.argsort(times, kind="stable") if sort else np.lexsort((times, rows))
    return times[order], rows[order]


@accepts()
def superpose(*streams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge independent arrival-time arrays into one sorted stream; returns ``(times_s, stream_index)``.

    Examples
    --------
    >>> superpose(np.array([0.0, 2.0]), np.array([1.0]))
    (array([0., 1., 2.]), array([0, 1, 0]))
    """
    if not streams:
        raise ValueError("superpose needs at least one stream")
    arrays = [V.array_1d(f"streams[{i}]", s) for i, s in enumerate(streams)]
    times = np.concatenate(arrays)
    label = np.repeat(np.arange(len(arrays)), [a.size for a in arrays])
    order = np.argsort(times, kind="stable")
    return times[order], label[order]
