"""Fluid models of N long DCTCP flows sharing one RED/ECN bottleneck.

Two levels of the same model, both vectorized over an array of concurrency points (numbers of long flows):

*Steady state* (:func:`steady_state`). Each of N flows holds a window ``W = (BDP + q) / N`` packets, where ``q`` is
the standing queue. In a window that saw at least one mark (probability ``P = 1 - (1 - p)^W``) DCTCP cuts the window
by ``W * alpha / 2`` and, being in its congestion-window-reduced state for that round trip, does not grow it; in any
other window it adds one packet. At equilibrium ``alpha`` (the EWMA of the marked fraction) equals the marking
probability ``p(q)``, so the standing queue solves ``1 - P = P * W * p(q) / 2``; for ``W p >> 1`` this is
``p(q) ~ 2 N / (BDP + q)``. With a fixed RED
slope lambda, ``lambda (q - min_k) = 2N / (BDP + q)``: the queue grows about linearly with N until it reaches
``max_k``. Scaling the slope with N (PRED's Flow Concurrent Stabilizer) removes N from the equation, which is why the
paper's queue stays flat as concurrency grows. DCTCP never cuts below two packets, so once ``W = 2`` the flows cannot
back off further and the queue is at least ``2N - BDP``: that is where any marking scheme loses control of the queue.
Solved by vectorized bisection.

*Delay ODE* (:func:`simulate_fluid`), the DCTCP fluid model of Alizadeh, Javanmard and Prabhakar (SIGMETRICS 2011)
with the marking ramp in place of a step::

    dW/dt     = (1 - P) / R - W alpha / (2R) * P,    P = 1 - (1 - p(t - R0))^W
    dalpha/dt = g / R * (p(t - R0) - alpha)
    dq/dt     = N W / R - C         (q clipped to [0, buffer])
    R         = R0 + q / C

integrated by forward Euler on all concurrency points at once. It gives the queue's oscillation and the link
utilization (the fraction of time-averaged capacity used: the queue running dry loses throughput). Flows are
synchronized in the ODE, so it overstates oscillations with many flows; the packet-level simulation
(:mod:`workbench.aqm.perpacket`) has unsynchronized flows and is the reference where the two differ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._contracts import accepts
from .._validate import array_1d, in_range, integer, one_of, positive
from .red import RedMarking, _ramp

__all__ = ["bdp_pkts", "steady_state", "simulate_fluid", "FluidResult", "DCTCP_G", "SCALINGS"]

#: DCTCP's EWMA gain for alpha.
DCTCP_G = 1.0 / 16.0
#: DCTCP never cuts its window below two packets (as in Linux tcp_dctcp).
MIN_CWND_PKTS = 2.0


@accepts()
def bdp_pkts(capacity_gbps: float, rtt_s: float, packet_bytes: int = 1500) -> float:
    """Bandwidth-delay product in packets.

    Examples
    --------
    >>> round(bdp_pkts(10.0, 100e-6), 1)
    83.3
    """
    capacity_gbps = positive("capacity_gbps", capacity_gbps)
    rtt_s = positive("rtt_s", rtt_s)
    packet_bytes = integer("packet_bytes", packet_bytes, minimum=64)
    return capacity_gbps * 1e9 * rtt_s / (8.0 * packet_bytes)


#: How PRED's Flow Concurrent Stabilizer may scale the slope with the flow count N.
SCALINGS = ("linear", "sqrt")


def _ramp_arrays(marking, n: np.ndarray, scale_with_flows: bool, scaling: str = "linear"):
    """min_k, max_k, max_p arrays (one per concurrency point) for a marking, optionally FCS-scaled by N."""
    if not isinstance(marking, RedMarking):
        raise TypeError(f"marking must be a RedMarking, got {type(marking).__name__}")
    one_of("scaling", scaling, SCALINGS)
    lo = np.full(n.shape, marking.min_k_pkts)
    width = marking.max_k_pkts - marking.min_k_pkts
    factor = (n if scaling == "linear" else np.sqrt(n)) if scale_with_flows else 1.0
    hi = lo + width / factor
    return lo, hi, np.full(n.shape, marking.max_p)


@accepts()
def steady_state(
    n_flows,
    marking: RedMarking,
    *,
    capacity_gbps: float = 10.0,
    rtt_s: float = 100e-6,
    packet_bytes: int = 1500,
    scale_with_flows: bool = False,
    scaling: str = "linear",
    buffer_pkts: float = np.inf,
) -> np.ndarray:
    """Standing queue (packets) of ``n_flows`` long DCTCP flows at equilibrium, one value per concurrency point.

    Parameters
    ----------
    n_flows : array-like of int
        Numbers of concurrent long flows (each >= 1).
    marking : RedMarking
        The marking ramp (for one flow when ``scale_with_flows``).
    capacity_gbps, rtt_s, packet_bytes : float
        Bottleneck capacity, base (propagation) round-trip time and packet size.
    scale_with_flows : bool
        PRED's Flow Concurrent Stabilizer: multiply the slope by N (or by sqrt(N), see ``scaling``).
    scaling : {"linear", "sqrt"}
        How the slope follows N; the paper settles on linear (the queue equation above shows why: only linear
        scaling removes N from it).
    buffer_pkts : float
        Queue cap (tail drop); the result is clipped to it.

    Examples
    --------
    >>> m = RedMarking(20, 200, 0.1)
    >>> q = steady_state([1, 8, 32], m)
    >>> bool(q[0] < q[1] < q[2])
    True
    >>> qp = steady_state([1, 8, 32], RedMarking.from_slope(5, 0.01), scale_with_flows=True)
    >>> bool(qp.max() - qp.min() < 2)
    True
    """
    n = array_1d("n_flows", n_flows, min_size=1, low=1)
    bdp = bdp_pkts(capacity_gbps, rtt_s, packet_bytes)
    buffer_pkts = positive("buffer_pkts", buffer_pkts, allow_inf=True)
    lo, hi, max_p = _ramp_arrays(marking, n, scale_with_flows, scaling)

    def excess(q: np.ndarray) -> np.ndarray:
        w = (bdp + q) / n
        p = _ramp(q, lo, hi, max_p)
        cut = 1.0 - (1.0 - p) ** w
        return cut * (1.0 + w * p / 2.0) - 1.0

    a = np.zeros_like(n)
    b = np.maximum(hi, 2.0 * n - bdp) + 1.0
    for _ in range(60):  # bisection on a monotone function; 60 halvings reach float resolution
        m = 0.5 * (a + b)
        neg = excess(m) < 0
        a = np.where(neg, m, a)
        b = np.where(neg, b, m)
    root = 0.5 * (a + b)
    return np.minimum(np.maximum(root, MIN_CWND_PKTS * n - bdp), buffer_pkts)


@accepts()
@dataclass(frozen=True)
class FluidResult:
    """Delay-ODE trajectories and summaries, one row per concurrency point.

    Attributes
    ----------
    n_flows : ndarray, shape (k,)
    time_s : ndarray, shape (t,)
        Sample times of the traces.
    queue_pkts : ndarray, shape (k, t)
        Queue trace per concurrency point.
    mean_queue_pkts, std_queue_pkts, utilization : ndarray, shape (k,)
        Time averages over the second half of the run.
    """

    n_flows: np.ndarray
    time_s: np.ndarray
    queue_pkts: np.ndarray
    mean_queue_pkts: np.ndarray
    std_queue_pkts: np.ndarray
    utilization: np.ndarray


@accepts()
def simulate_fluid(
    n_flows,
    marking: RedMarking,
    *,
    capacity_gbps: float = 10.0,
    rtt_s: float = 100e-6,
    packet_bytes: int = 1500,
    scale_with_flows: bool = False,
    scaling: str = "linear",
    buffer_pkts: float = 2000.0,
    duration_rtts: int = 300,
    steps_per_rtt: int = 20,
    g: float = DCTCP_G,
    samples: int = 400,
) -> FluidResult:
    """Integrate the DCTCP delay ODE for every concurrency point at once.

    Parameters
    ----------
    n_flows : array-like of int
        Numbers of concurrent long flows (each >= 1).
    marking : RedMarking
        Marking ramp (per flow when ``scale_with_flows``).
    capacity_gbps, rtt_s, packet_bytes : float
        Bottleneck capacity, propagation RTT, packet size.
    scale_with_flows : bool
        PRED's Flow Concurrent Stabilizer (slope times N, or sqrt(N) with ``scaling="sqrt"``).
    scaling : {"linear", "sqrt"}
    buffer_pkts : float
        Queue cap.
    duration_rtts, steps_per_rtt : int
        Length of the run in base RTTs and Euler steps per RTT.
    g : float
        DCTCP EWMA gain.
    samples : int
        Number of trace samples kept.

    Examples
    --------
    >>> r = simulate_fluid([2, 16], RedMarking(20, 200, 0.1), duration_rtts=100)
    >>> r.queue_pkts.shape
    (2, 400)
    >>> bool((r.utilization > 0.9).all())
    True
    """
    n = array_1d("n_flows", n_flows, min_size=1, low=1)
    bdp = bdp_pkts(capacity_gbps, rtt_s, packet_bytes)
    buffer_pkts = positive("buffer_pkts", buffer_pkts)
    duration_rtts = integer("duration_rtts", duration_rtts, minimum=10)
    steps_per_rtt = integer("steps_per_rtt", steps_per_rtt, minimum=4)
    g = in_range("g", g, 0.0, 1.0, low_inclusive=False)
    samples = integer("samples", samples, minimum=2)
    lo, hi, max_p = _ramp_arrays(marking, n, scale_with_flows, scaling)

    c = bdp / rtt_s  # packets per second
    dt = rtt_s / steps_per_rtt
    steps = duration_rtts * steps_per_rtt
    delay = steps_per_rtt  # feedback delay of one base RTT, in steps
    hist = np.zeros((delay, n.size))  # ring buffer of past marking probabilities
    w = np.maximum(bdp / n, MIN_CWND_PKTS)
    alpha = np.zeros_like(n)
    q = np.zeros_like(n)
    keep = np.linspace(0, steps - 1, samples).astype(int)
    trace = np.empty((n.size, samples))
    half = steps // 2
    q_sum = np.zeros_like(n)
    q_sq = np.zeros_like(n)
    served = np.zeros_like(n)
    j = 0
    for step in range(steps):
        r = rtt_s + q / c
        p_now = _ramp(q, lo, hi, max_p)
        p_old = hist[step % delay].copy()
        hist[step % delay] = p_now
        cut = 1.0 - (1.0 - p_old) ** np.maximum(w, 1.0)
        w = np.maximum(w + dt * (1.0 - cut - w * alpha / 2.0 * cut) / r, MIN_CWND_PKTS)
        alpha = alpha + dt * g / r * (p_old - alpha)
        inflow = n * w / r
        q_new = np.clip(q + dt * (inflow - c), 0.0, buffer_pkts)
        if step >= half:
            # departures in this step: capacity while backlogged, else what arrived
            out = np.where(q_new > 0, c, np.minimum(inflow, c)) * dt
            served += out
            q_sum += q_new
            q_sq += q_new * q_new
        q = q_new
        if j < samples and step == keep[j]:
            trace[:, j] = q
            j += 1
    count = steps - half
    mean = q_sum / count
    std = np.sqrt(np.maximum(q_sq / count - mean**2, 0.0))
    util = served / (c * dt * count)
    return FluidResult(n.astype(int), keep * dt, trace, mean, std, util)
