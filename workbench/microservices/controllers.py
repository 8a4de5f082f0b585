"""Overload controllers for microservice call graphs: none, DAGOR-style, Breakwater-style and Rajomon.

Each controller is a :class:`Controller` (name + parameters) the engine (:mod:`workbench.microservices._engine`)
reads as a kind and a parameter vector; the update rules are compiled pure functions, tested by hand:

* **none**: every request is admitted; queues grow without bound (up to the engine's queue capacity).
* **dagor** -- per-service admission on queueing delay, after DAGOR (Zhou et al., SoCC'18): each service keeps an
  admission level (the admitted share of the importance range); every window (1 s or 2,000 requests, whichever
  ends first) it lowers the level by ``alpha`` = 5% if the window's *mean* queueing delay exceeded the threshold
  and raises it by ``beta`` = 1% otherwise (:func:`dagor_level`). A request is admitted if its importance is in the
  admitted share. Importance is one draw per request carried to every hop, as DAGOR's business/user priorities
  are; DAGOR's upstream-collaborative admission (a caller learning the callee's level) is not modelled.
* **breakwater** -- credit-based admission, after Breakwater (Cho et al., OSDI'20): each service holds a credit pool
  (the most requests it lets be outstanding); every update it adds ``add`` credits if the *maximum* queueing delay
  was under the target and multiplies the pool by ``max(1 - beta (d - target) / d, 0.5)`` otherwise
  (:func:`breakwater_credits`). Per service, uncoordinated.
* **rajomon** -- tokens and prices (Xing et al., "Rajomon: Decentralized and Coordinated Overload Control for
  Latency-Sensitive Microservices", NSDI'25; rules as in the authors' public implementation, github.com/akisg/charon,
  ``tokenAndPrice.go`` and ``overloadDetection.go``): every request carries tokens (its importance times
  ``token_max``); every service sets its own price from its overload signal, the maximum queueing delay in each
  price-update interval (10 ms): up by ``price_step`` per 10 ms of delay above the threshold, down by one when the
  delay is below half the threshold, never below zero (:func:`rajomon_price`). A service's price for an API is its
  own price plus the sum of the last prices its downstream calls returned (prices piggyback on responses); a
  request whose tokens are below the price is dropped at that hop, otherwise the service keeps its own price and
  splits the rest among its calls, each child getting its known price plus an equal share of the surplus
  (:func:`split_tokens`). Rate limiting at the client (``client_limit`` 1): the client pools the tokens of the
  requests it generates and sends a request only when the pool covers the entry's last returned price, attaching
  the whole pool (the implementation's "all" token strategy); a request it holds back costs no work and is counted
  as "client-limited". The admitted rate is then about (token rate) / price, and responses keep refreshing the
  price (a price above every single request's tokens cannot lock the client out).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._contracts import Array, Real, accepts
from .._jit import njit
from .._validate import in_range, one_of, positive

__all__ = [
    "CONTROLLERS",
    "Controller",
    "make_controller",
    "rajomon_price",
    "split_tokens",
    "dagor_level",
    "breakwater_credits",
    "UPDATE_S",
]

CONTROLLERS = ("none", "dagor", "breakwater", "rajomon")
#: Controller update interval (s): Rajomon's price-update interval (``priceUpdateRate`` 10 ms in the authors'
#: implementation); Breakwater's credit update and DAGOR's window check run on the same tick.
UPDATE_S = 0.010

#: Defaults per controller (delay thresholds in seconds; see the module docstring for each rule). Rajomon's step and
#: decrement are in this model's token units (a request brings 0-100 tokens, 50 on average); the pair (20, 5) was
#: chosen on hotel-search and social-network at a 2x spike from steps {2, 5, 10, 20} x decrements {1, 3, 5, 10}
#: (a larger decrement recovers goodput after an overshoot, a larger step shortens the tail); the authors'
#: implementation decrements by 1 in its own token units. DAGOR's and Breakwater's constants are not tuned.
DEFAULTS: dict[str, dict[str, float]] = {
    "none": {},
    "dagor": {"threshold_s": 0.002, "alpha": 0.05, "beta": 0.01, "window_s": 1.0, "window_requests": 2000.0},
    "breakwater": {"threshold_s": 0.002, "add": 1.0, "beta": 0.1, "initial_per_worker": 4.0},
    "rajomon": {"threshold_s": 0.002, "price_step": 20.0, "decrement": 5.0, "token_max": 100.0, "client_limit": 1.0},
}


@accepts()
@dataclass(frozen=True)
class Controller:
    """An overload controller: ``name`` in :data:`CONTROLLERS` and its parameters (defaults in :data:`DEFAULTS`)."""

    name: str
    params: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        one_of("controller", self.name, CONTROLLERS)
        for k, v in self.params.items():
            one_of(f"parameter of controller {self.name!r}", k, tuple(DEFAULTS[self.name]))
            positive(f"{self.name} {k}", v) if k not in ("client_limit",) else in_range(f"{self.name} {k}", v, 0, 1)
        if "alpha" in self.params:
            in_range("dagor alpha", self.params["alpha"], 0.0, 1.0, low_inclusive=False, high_inclusive=False)

    @property
    def kind(self) -> int:
        """Index in :data:`CONTROLLERS` (what the engine switches on)."""
        return CONTROLLERS.index(self.name)

    @accepts()
    def vector(self) -> np.ndarray:
        """Parameters in the order of :data:`DEFAULTS` (the engine's layout), padded to 8."""
        full = {**DEFAULTS[self.name], **self.params}
        out = np.zeros(8)
        out[: len(full)] = list(full.values())
        return out


@accepts()
def make_controller(name: str, threshold_ms: float | None = None, **params: float) -> Controller:
    """A :class:`Controller` with an optional common queueing-delay threshold ``threshold_ms``.

    Examples
    --------
    >>> make_controller("rajomon", threshold_ms=1.0).vector()[:2].tolist()
    [0.001, 20.0]
    """
    if threshold_ms is not None and name != "none":
        params = {**params, "threshold_s": positive("threshold_ms", threshold_ms) / 1e3}
    return Controller(name, params)


@njit(cache=True)
def _rajomon_price(price: float, delay_s: float, threshold_s: float, step: float, decrement: float) -> float:
    """Compiled kernel of :func:`rajomon_price` (called from the engine's compiled loop; unchecked)."""
    diff = delay_s - threshold_s
    if diff > 0.0:
        price += step * diff / 0.010
    elif 2.0 * diff < -threshold_s:
        price -= decrement
    return max(price, 0.0)


@accepts(price=Real(ge=0.0), delay_s=Real(ge=0.0), threshold_s=Real(gt=0.0), step=Real(ge=0.0), decrement=Real(ge=0.0))
def rajomon_price(price: float, delay_s: float, threshold_s: float, step: float, decrement: float) -> float:
    """Rajomon's price update for one interval: ``+ step`` per 10 ms of queueing delay above ``threshold_s``,
    ``- decrement`` when the delay is below half the threshold, unchanged in between; never below zero.

    Examples
    --------
    >>> rajomon_price(0.0, 0.007, 0.002, 10.0, 1.0)  # 5 ms over: +5
    5.0
    >>> rajomon_price(5.0, 0.0005, 0.002, 10.0, 1.0)  # under half the threshold: -1
    4.0
    """
    return _rajomon_price(price, delay_s, threshold_s, step, decrement)


@njit(cache=True)
def _split_tokens(tokens: float, own_price: float, child_prices: np.ndarray) -> np.ndarray:
    """Compiled kernel of :func:`split_tokens` (called from the engine's compiled loop; unchecked)."""
    n = child_prices.shape[0]
    out = np.empty(n)
    if n == 0:
        return out
    extra = (tokens - own_price - child_prices.sum()) / n
    for j in range(n):
        out[j] = child_prices[j] + extra
    return out


@accepts(tokens=Real(ge=0.0), own_price=Real(ge=0.0), child_prices=Array(ge=0.0))
def split_tokens(tokens: float, own_price: float, child_prices: np.ndarray) -> np.ndarray:
    """Tokens a service passes to its calls: it keeps ``own_price`` and gives each call its known price plus an
    equal share of what is left over the calls' summed prices.

    Examples
    --------
    >>> split_tokens(20.0, 2.0, np.array([3.0, 5.0])).tolist()  # surplus 20 - 2 - 8 = 10 -> 5 each
    [8.0, 10.0]
    """
    return _split_tokens(tokens, own_price, child_prices)


@njit(cache=True)
def _dagor_level(level: float, mean_delay_s: float, threshold_s: float, alpha: float, beta: float) -> float:
    """Compiled kernel of :func:`dagor_level` (called from the engine's compiled loop; unchecked)."""
    if mean_delay_s > threshold_s:
        level *= 1.0 - alpha
    else:
        level *= 1.0 + beta
    return min(max(level, 0.01), 1.0)


@accepts(
    level=Real(ge=0.01, le=1.0),
    mean_delay_s=Real(ge=0.0),
    threshold_s=Real(gt=0.0),
    alpha=Real(ge=0.0, le=1.0),
    beta=Real(ge=0.0),
)
def dagor_level(level: float, mean_delay_s: float, threshold_s: float, alpha: float, beta: float) -> float:
    """DAGOR's admission-level update for one window: ``x (1 - alpha)`` if the mean queueing delay exceeded the
    threshold, else ``x (1 + beta)``; kept in [0.01, 1].

    Examples
    --------
    >>> round(dagor_level(1.0, 0.005, 0.002, 0.05, 0.01), 4)
    0.95
    """
    return _dagor_level(level, mean_delay_s, threshold_s, alpha, beta)


@njit(cache=True)
def _breakwater_credits(
    credits: float, max_delay_s: float, target_s: float, add: float, beta: float, floor: float
) -> float:
    """Compiled kernel of :func:`breakwater_credits` (called from the engine's compiled loop; unchecked)."""
    if max_delay_s < target_s:
        credits += add
    else:
        credits *= max(1.0 - beta * (max_delay_s - target_s) / max_delay_s, 0.5)
    return max(credits, floor)


@accepts(
    credits=Real(ge=0.0),
    max_delay_s=Real(ge=0.0),
    target_s=Real(gt=0.0),
    add=Real(ge=0.0),
    beta=Real(ge=0.0, le=1.0),
    floor=Real(ge=0.0),
)
def breakwater_credits(
    credits: float, max_delay_s: float, target_s: float, add: float, beta: float, floor: float
) -> float:
    """Breakwater's credit-pool update: ``+ add`` below the target delay, else
    ``x max(1 - beta (d - target) / d, 0.5)``; never below ``floor``.

    Examples
    --------
    >>> breakwater_credits(100.0, 0.004, 0.002, 1.0, 0.1, 1.0)  # d = 2 x target: x (1 - 0.05)
    95.0
    """
    return _breakwater_credits(credits, max_delay_s, target_s, add, beta, floor)
