"""Call graphs: DeathStarBench structures, critical paths, capacities, and one clear error per bad graph."""

import pytest

from workbench.microservices import (
    CallGraph,
    GraphError,
    RequestType,
    Service,
    chain,
    hotel_reservation,
    make_graph,
    social_network,
)
from workbench.microservices.graphs import flatten

SVCS = (Service("a", 2, 1.0), Service("b", 2, 1.0), Service("c", 2, 1.0))


def test_hotel_search_is_the_six_service_graph():
    g = hotel_reservation("search")
    assert [s.name for s in g.services] == ["frontend", "search", "geo", "rate", "reservation", "profile"]
    f = flatten(g)
    # frontend -> search -> geo, rate; frontend -> reservation; frontend -> profile: 6 calls, depth 2
    assert len(f.node_service) == 6 and f.node_depth.max() == 2
    # critical path: 0.2 + (0.3 + 0.5 + 0.5) + 0.4 + 0.4 (all sequential)
    assert g.critical_path_ms()["search"] == pytest.approx(2.3)
    # geo and rate: 4 workers / 0.5 ms = 8,000 req/s each, the bottleneck
    assert g.capacity_rps() == pytest.approx(8000.0)


def test_social_network_compose_fans_out_in_parallel():
    g = social_network("compose")
    f = flatten(g)
    assert len(f.node_service) == 12  # nginx, compose, 4 + 2 + 3 + social-graph
    # nginx 0.2 + compose 0.4 + max(text 0.3 + 0.2, ...) + max(post-storage 1.0, home 0.4 + graph 0.4)
    assert g.critical_path_ms()["compose-post"] == pytest.approx(0.2 + 0.4 + 0.5 + 1.0)
    mixed = social_network("mixed")
    assert mixed.visits()[mixed.service_index("post-storage")] == pytest.approx(1.0)
    assert mixed.capacity_rps() == pytest.approx(8000.0)


def test_chain_and_named_graphs():
    assert chain(4).critical_path_ms()["chain"] == pytest.approx(0.8)
    assert chain(4).capacity_rps() == pytest.approx(4 / 0.2e-3)
    assert make_graph("chain-8").name == "chain-8"
    assert make_graph("hotel-mixed").slo_ms == 20.0


def test_cycle_is_named():
    t = RequestType("loop", "a", {"a": [["b"]], "b": [["c"]], "c": [["a"]]})
    with pytest.raises(GraphError, match=r"cycle: a -> b -> c -> a"):
        CallGraph("g", SVCS, (t,), 100.0)


def test_unknown_service_is_named():
    with pytest.raises(GraphError, match=r"'a' calls unknown service 'zz'"):
        CallGraph("g", SVCS, (RequestType("t", "a", {"a": [["zz"]]}),), 100.0)
    with pytest.raises(GraphError, match=r"unknown entry service 'q'"):
        CallGraph("g", SVCS, (RequestType("t", "q"),), 100.0)
    with pytest.raises(GraphError, match=r"calls of unknown service 'x'"):
        CallGraph("g", SVCS, (RequestType("t", "a", {"x": [["b"]]}),), 100.0)


def test_slo_below_the_service_time_is_named():
    t = RequestType("t", "a", {"a": [["b", "c"]]})
    CallGraph("g", SVCS, (t,), 2.0)  # a then b || c: 2 ms, allowed
    with pytest.raises(GraphError, match=r"slo_ms = 1.5 is below the mean service time of request type 't' \(2 ms"):
        CallGraph("g", SVCS, (t,), 1.5)


def test_bad_services_and_weights():
    with pytest.raises(ValueError, match="workers of service 'x'"):
        Service("x", 0, 1.0)
    with pytest.raises(ValueError, match=r"Service\('x'\): mean_ms must be >= 0"):
        Service("x", 1, -1.0)
    with pytest.raises(ValueError, match="weight of request type 't'"):
        CallGraph("g", SVCS, (RequestType("t", "a", weight=-1.0),), 10.0)
    with pytest.raises(GraphError, match="listed twice"):
        CallGraph("g", (SVCS[0], SVCS[0]), (RequestType("t", "a"),), 10.0)
