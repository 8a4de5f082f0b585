"""Microservice overload speed (issue 28): 20 s of a 10,000 req/s spike on the 6-service hotel-reservation search
graph <= 5 s per controller (about 200,000 requests and 1.2 million calls through the compiled event loop; the
graph's capacity is 8,000 req/s, so every controller works in overload). Compilation is excluded (numba caches
it on disk; a warm-up run loads it).
"""

from __future__ import annotations

from benchmarks import Benchmark, best_time


def _spike(controller: str) -> float:
    from workbench.microservices import Load, hotel_reservation, simulate

    g = hotel_reservation("search")
    load = Load(10_000.0, 10_000.0, 20.0)
    simulate(g, Load(1000.0, 1000.0, 0.1), controller, seed=1)  # load the compiled engine
    return best_time(lambda: simulate(g, load, controller, seed=1), repeat=2)


BENCHMARKS = [
    Benchmark(f"20 s of a 10,000 req/s spike, 6-service graph: {c}", 5.0, "s", lambda c=c: _spike(c))
    for c in ("none", "dagor", "breakwater", "rajomon")
]
