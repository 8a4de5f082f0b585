"""Microservice call graphs under overload: coordinated (Rajomon) vs per-service overload control.

- :mod:`~workbench.microservices.graphs`: services, request types (call trees with sequential stages and parallel
  fan-out), DeathStarBench's hotel-reservation and social-network graphs, chains; validated.
- :mod:`~workbench.microservices.simulate`: open-loop load with spikes and steps, the compiled event loop, goodput,
  tail latency, drops and wasted work.
- :mod:`~workbench.microservices.controllers`: none, DAGOR-style, Breakwater-style and Rajomon's tokens and prices.
"""

from __future__ import annotations

from .controllers import (
    CONTROLLERS,
    Controller,
    breakwater_credits,
    dagor_level,
    make_controller,
    rajomon_price,
    split_tokens,
)
from .graphs import (
    GRAPHS,
    CallGraph,
    GraphError,
    RequestType,
    Service,
    chain,
    hotel_reservation,
    make_graph,
    social_network,
)
from .simulate import STATUS, Load, SimResult, arrivals, compare_controllers, simulate

__all__ = [
    "CONTROLLERS",
    "Controller",
    "breakwater_credits",
    "dagor_level",
    "make_controller",
    "rajomon_price",
    "split_tokens",
    "GRAPHS",
    "CallGraph",
    "GraphError",
    "RequestType",
    "Service",
    "chain",
    "hotel_reservation",
    "make_graph",
    "social_network",
    "STATUS",
    "Load",
    "SimResult",
    "arrivals",
    "compare_controllers",
    "simulate",
]
