"""Single-server FIFO queues fed by these arrivals: the Lindley recursion, the exact GI/M/1 wait and Kingman's
heavy-traffic approximation."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from .. import _validate as V
from .._contracts import Int, Items, Real, accepts, output
from .._rng import Seed, spawn
from .processes import Deterministic, Gamma, Poisson, Process, _check_process

if TYPE_CHECKING:
    import pandas as pd


@accepts()
def lindley_waits(interarrival_s: np.ndarray, service_s: np.ndarray) -> np.ndarray:
    """Waiting times in a single-server FIFO queue, by the Lindley recursion in closed form.

    ``interarrival_s[i]`` is the gap between customer ``i - 1`` and customer ``i`` (``interarrival_s[0]`` is
    ignored: customer 0 finds the queue empty); ``service_s[i]`` is customer ``i``'s service time. With
    ``X[i] = S[i-1] - A[i]`` and ``U`` their cumulative sum (``U[0] = 0``), the recursion
    ``W[i] = max(0, W[i-1] + X[i])`` has the solution ``W = U - running_min(U)``.

    Examples
    --------
    >>> lindley_waits(np.array([0.0, 1.0, 1.0, 5.0]), np.array([3.0, 3.0, 1.0, 1.0]))
    array([0., 2., 4., 0.])
    """
    a = V.array_1d("interarrival_s", interarrival_s, min_size=1, low=0.0)
    s = V.array_1d("service_s", service_s, min_size=1, low=0.0)
    if a.size != s.size:
        raise ValueError(f"interarrival_s and service_s must have the same length, got {a.size} and {s.size}")
    u = np.empty(a.size)
    u[0] = 0.0
    np.cumsum(s[:-1] - a[1:], out=u[1:])
    return u - np.minimum.accumulate(np.minimum(u, 0.0))


@accepts()
def queue_waits(
    process: Process,
    utilization: float,
    n: int,
    *,
    service: Literal["exponential", "deterministic"] = "exponential",
    seed: Seed = None,
) -> np.ndarray:
    """Waiting times of ``n`` customers arriving by ``process`` at a single server loaded to ``utilization``.

    The mean service time is ``utilization / rate``; service times are exponential (CV 1) or deterministic (CV 0).

    Examples
    --------
    >>> w = queue_waits(Poisson(1.0), 0.5, 200_000, seed=0)   # M/M/1: E[W] = rho / (mu - lambda) = 0.5
    >>> round(float(w.mean()), 1)
    0.5
    """
    process = _check_process(process)
    rho = V.in_range("utilization", utilization, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    n = V.integer("n", n, minimum=1)
    V.one_of("service", service, ("exponential", "deterministic"))
    arrivals_rng, service_rng = spawn(seed, 2)
    mean_service = rho / process.rate_rps
    gaps = process.interarrivals(n, arrivals_rng)
    if service == "exponential":
        svc = service_rng.exponential(mean_service, n)
    else:
        svc = np.full(n, mean_service)
    return lindley_waits(gaps, svc)


@output
@dataclass(frozen=True)
class GIM1Wait:
    """Exact waiting time of a GI/M/1 queue: ``P(W > t) = sigma * exp(-decay_per_s * t)``.

    ``sigma`` is the probability of waiting (the root of ``sigma = A*(mu (1 - sigma))``, with ``A*`` the Laplace
    transform of the inter-arrival distribution); for Poisson arrivals ``sigma`` equals the utilization.
    """

    sigma: float
    decay_per_s: float

    @property
    def mean_s(self) -> float:
        return self.sigma / self.decay_per_s

    def quantile(self, q: float | np.ndarray) -> np.ndarray:
        """Waiting-time quantile(s): 0 below ``1 - sigma``, else ``log(sigma / (1 - q)) / decay``."""
        q = np.asarray(q, dtype=float)
        if ((q < 0) | (q >= 1)).any():
            raise ValueError(f"q must be in [0, 1), got {q}")
        with np.errstate(divide="ignore"):
            return np.maximum(0.0, np.log(self.sigma / (1 - q)) / self.decay_per_s)

    def ccdf(self, t_s: np.ndarray) -> np.ndarray:
        """``P(W > t)`` for ``t >= 0``."""
        return self.sigma * np.exp(-self.decay_per_s * np.asarray(t_s, dtype=float))


@accepts()
def gim1_wait(process: Poisson | Gamma | Deterministic, utilization: float) -> GIM1Wait:
    """Exact FIFO waiting time for Poisson, Gamma or constant-spacing arrivals at an exponential server.

    Examples
    --------
    >>> w = gim1_wait(Poisson(1.0), 0.7)          # M/M/1: sigma = rho, decay = mu - lambda
    >>> round(w.sigma, 6), round(w.decay_per_s, 6)
    (0.7, 0.428571)
    """
    rho = V.in_range("utilization", utilization, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    if not isinstance(process, (Poisson, Gamma, Deterministic)):
        raise TypeError(f"gim1_wait supports Poisson, Gamma or Deterministic arrivals, got {type(process).__name__}")
    lam = process.rate_rps
    mu = lam / rho
    if isinstance(process, Poisson) or (isinstance(process, Gamma) and process.shape == 1.0):
        return GIM1Wait(rho, mu - lam)
    if isinstance(process, Deterministic) or math.isinf(getattr(process, "shape", math.inf)):

        def log_lst(s: float) -> float:
            return -s / lam
    else:
        k, theta = process.shape, process.scale_s

        def log_lst(s: float) -> float:
            return -k * math.log1p(s * theta)

    y = _gim1_decay_fraction(log_lst, mu, rho)
    # sigma = A*(mu y) evaluated directly keeps full relative precision at both ends (sigma near 0 and near 1),
    # where 1 - y would not.
    return GIM1Wait(float(math.exp(log_lst(mu * y))), float(mu * y))


def _gim1_decay_fraction(log_lst, mu: float, rho: float) -> float:
    """The root ``y = 1 - sigma`` in (0, 1) of ``log(1 - y) = log A*(mu y)``, away from the trivial root ``y = 0``.

    With ``h(y) = log1p(-y) - log A*(mu y)``: ``h(0) = 0`` and ``h'(0) = 1/rho - 1 > 0``, and ``h`` is concave
    (``log A*`` of a Laplace transform is convex), falling to ``-inf`` at ``y = 1``, so it has exactly one root in
    (0, 1). Solving for ``sigma`` directly near 1 (as a bracket ``[0, 1 - 1e-15]`` does) lets rounding noise in
    ``A*`` pass for the trivial root ``sigma = 1`` at high utilization; ``h`` is computed with ``log1p`` and stays
    accurate near 0, and the lower end of the bracket is moved down until ``h`` is clearly positive there.
    """

    def h(y: float) -> float:
        return math.log1p(-y) - log_lst(mu * y)

    # h(y) ~ (1/rho - 1) y - O(y^2) near 0: below this y the linear term dominates.
    lo = min(0.5, 1e-3 * (1.0 - rho))
    while h(lo) <= 0.0:
        lo *= 0.5
        if lo < 1e-300:
            raise ArithmeticError(f"gim1_wait: no non-trivial root found at utilization {rho!r}")
    hi = math.nextafter(1.0, 0.0)
    if h(hi) >= 0.0:  # sigma < 1e-16: the queue almost never waits; y = 1 to double precision
        return 1.0
    from scipy import optimize  # imported where used: with scipy.stats ~0.5 s at import

    return float(optimize.brentq(h, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500))


@accepts()
def kingman_mean_wait(utilization: float, ca2: float, cs2: float, mean_service_s: float) -> float:
    """Kingman's approximation of the mean FIFO wait: ``rho/(1-rho) * (ca^2 + cs^2)/2 * E[S]``.

    Examples
    --------
    >>> round(kingman_mean_wait(0.7, 1.0, 1.0, 1.0), 4)     # exact for M/M/1
    2.3333
    """
    rho = V.in_range("utilization", utilization, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    ca2 = V.nonnegative("ca2", ca2)
    cs2 = V.nonnegative("cs2", cs2)
    mean_service_s = V.positive("mean_service_s", mean_service_s)
    return rho / (1 - rho) * (ca2 + cs2) / 2 * mean_service_s


@accepts()
def kingman_wait_quantile(q: float, utilization: float, ca2: float, cs2: float, mean_service_s: float) -> float:
    """Quantile of the FIFO wait under the heavy-traffic approximation: exponential with Kingman's mean.

    Examples
    --------
    >>> round(kingman_wait_quantile(0.99, 0.7, 1.0, 1.0, 1.0), 3)   # 2.333 * ln(100)
    10.745
    """
    q = V.in_range("q", q, 0.0, 1.0, high_inclusive=False)
    return -math.log1p(-q) * kingman_mean_wait(utilization, ca2, cs2, mean_service_s)


@accepts(n=Int(ge=2, le=10**8), percentiles=Items(Real(ge=0.0, le=100.0), min_size=1))
def compare_waits(
    rate_rps: float,
    burstiness: float,
    utilization: float,
    *,
    n: int = 200_000,
    percentiles: tuple[float, ...] = (50.0, 90.0, 99.0, 99.9),
    seed: Seed = None,
) -> pd.DataFrame:
    """Waiting-time percentiles (seconds) of Poisson vs vLLM-Gamma arrivals at the same rate and utilization.

    Exponential service with mean ``utilization / rate_rps``. One row per arrival process with the simulated
    percentiles (Lindley recursion over ``n`` customers), the exact GI/M/1 percentiles and Kingman's heavy-traffic
    percentiles.

    Examples
    --------
    >>> df = compare_waits(10.0, 1 / 9, 0.7, n=100_000, seed=0)
    >>> df.index.tolist(), df.columns[:2].tolist()
    (['poisson', 'gamma'], ['sim_p50_s', 'sim_p90_s'])
    """
    import pandas as pd

    rho = V.in_range("utilization", utilization, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    q = V.array_1d("percentiles", percentiles, min_size=1, low=0.0, high=100.0) / 100.0
    if (q >= 1).any():
        raise ValueError("percentiles must be < 100")
    processes: dict[str, Poisson | Gamma] = {
        "poisson": Poisson(rate_rps),
        "gamma": Gamma.from_burstiness(rate_rps, burstiness),
    }
    streams = spawn(seed, len(processes))
    mean_service = rho / processes["poisson"].rate_rps
    rows = {}
    for (name, proc), rng in zip(processes.items(), streams):
        waits = queue_waits(proc, rho, n, seed=rng)
        exact = gim1_wait(proc, rho)
        row = {f"sim_p{p:g}_s": v for p, v in zip(q * 100, np.quantile(waits, q))}
        row |= {f"exact_p{p:g}_s": float(v) for p, v in zip(q * 100, exact.quantile(q))}
        row |= {
            f"kingman_p{p:g}_s": kingman_wait_quantile(float(qq), rho, proc.cv**2, 1.0, mean_service)
            for p, qq in zip(q * 100, q)
        }
        row |= {"sim_mean_s": float(waits.mean()), "exact_mean_s": exact.mean_s, "cv": proc.cv}
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")
