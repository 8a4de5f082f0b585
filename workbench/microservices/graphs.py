"""Microservice call graphs: services (workers, service-time distribution) and request types (call trees with
sequential stages and parallel fan-out), flattened into the arrays the compiled engine reads.

A request type names its entry service and, for each service it reaches, the **stages** of calls that service makes
after its own work: stages run one after another, the calls inside a stage run in parallel, and a service finishes
when its last stage has answered. Expanding the calls from the entry gives the request's call tree (a service may
appear in several branches; it may not call itself through any chain: that is a cycle).

The two DeathStarBench applications the Rajomon paper evaluates on (Xing et al., NSDI'25, evaluation) are built
from DeathStarBench's public descriptions (github.com/delimitrou/DeathStarBench, ``hotelReservation`` and
``socialNetwork``; Gan et al., ASPLOS'19): every service and edge is listed in :func:`hotel_reservation` and
:func:`social_network`. Databases and caches (MongoDB, memcached, Redis) are folded into the service that calls
them. **Service times and worker counts are this model's assumptions** (DeathStarBench publishes none): sub-ms
means chosen so that one downstream service is the bottleneck, which is the case coordinated overload control is
about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._contracts import accepts, output
from .._validate import integer, one_of, positive

__all__ = [
    "GraphError",
    "Service",
    "RequestType",
    "CallGraph",
    "Flat",
    "flatten",
    "hotel_reservation",
    "social_network",
    "chain",
    "GRAPHS",
    "make_graph",
]

DISTRIBUTIONS = ("exp", "const")


class GraphError(ValueError):
    """A call graph that cannot be simulated: the message names the request type, service or value at fault."""


@accepts()
@dataclass(frozen=True)
class Service:
    """One microservice: ``workers`` parallel workers, each request takes a ``dist`` service time of mean
    ``mean_ms`` ("exp": exponential, "const": deterministic)."""

    name: str
    workers: int
    mean_ms: float
    dist: str = "exp"

    def __post_init__(self) -> None:
        integer(f"workers of service {self.name!r}", self.workers, minimum=1)
        positive(f"mean_ms of service {self.name!r}", self.mean_ms)
        one_of(f"dist of service {self.name!r}", self.dist, DISTRIBUTIONS)

    @property
    def capacity_rps(self) -> float:
        """Requests per second the service can complete (workers / mean service time)."""
        return self.workers / (self.mean_ms / 1e3)


@accepts()
@dataclass(frozen=True)
class RequestType:
    """One API: entered at ``entry``; ``calls[s]`` is the list of stages service ``s`` runs (each stage a list of
    services called in parallel); ``weight`` its share of the load."""

    name: str
    entry: str
    calls: Mapping[str, Sequence[Sequence[str]]] = field(default_factory=dict)
    weight: float = 1.0


@accepts()
@dataclass(frozen=True)
class CallGraph:
    """Services, request types and the end-to-end latency SLO (ms)."""

    name: str
    services: tuple[Service, ...]
    types: tuple[RequestType, ...]
    slo_ms: float

    def __post_init__(self) -> None:
        flatten(self)  # validates

    @accepts()
    def service_index(self, name: str) -> int:
        """Index of service ``name``."""
        for i, s in enumerate(self.services):
            if s.name == name:
                return i
        raise GraphError(f"graph {self.name!r} has no service {name!r}")

    @accepts()
    def critical_path_ms(self) -> dict[str, float]:
        """Per request type: the mean service-time sum along its slowest path (no queueing): the least latency."""
        f = flatten(self)
        return {t.name: float(f.critical_ms[f.type_root[k]]) for k, t in enumerate(self.types)}

    @accepts()
    def visits(self) -> np.ndarray:
        """Calls per request to each service, weighted by the type mix (shape services)."""
        f = flatten(self)
        v = np.zeros(len(self.services))
        for k in range(len(self.types)):
            lo, hi = f.type_root[k], f.type_root[k] + f.type_nodes[k]
            np.add.at(v, f.node_service[lo:hi], f.type_weight[k])
        return v

    @accepts()
    def capacity_rps(self) -> float:
        """The load (requests/s) at which the busiest service is saturated, for this type mix."""
        cap = np.array([s.capacity_rps for s in self.services])
        v = self.visits()
        used = v > 0
        return float(np.min(cap[used] / v[used]))


@output
@dataclass(frozen=True, eq=False)
class Flat:
    """The call trees of every request type as flat arrays (nodes of all types concatenated)."""

    node_service: np.ndarray  #: service index of each node
    node_parent: np.ndarray  #: parent node (-1 at the root)
    node_depth: np.ndarray  #: hops from the entry (root 0)
    node_nstages: np.ndarray  #: stages of calls the node makes
    node_stage_off: np.ndarray  #: index into stage_start of the node's first stage
    stage_start: np.ndarray  #: children of stage j are child_node[stage_start[j]:stage_start[j + 1]]
    child_node: np.ndarray
    node_child_off: np.ndarray  #: children of node n are child_node[node_child_off[n]:node_child_off[n + 1]]
    critical_ms: np.ndarray  #: mean-time critical path below and including the node
    type_root: np.ndarray  #: root node of each type
    type_nodes: np.ndarray  #: nodes in each type's tree
    type_weight: np.ndarray  #: normalised load shares
    svc_workers: np.ndarray
    svc_mean_s: np.ndarray
    svc_dist: np.ndarray  #: 0 exp, 1 const
    max_nodes: int


def _expand(g: CallGraph, t: RequestType, names: dict[str, int]) -> list[tuple[int, int, int, list[list[int]]]]:
    """Nodes of one request type as (service, parent, depth, stages of child node ids), preorder."""
    for s, stages in t.calls.items():
        if s not in names:
            raise GraphError(f"request type {t.name!r} of graph {g.name!r}: calls of unknown service {s!r}")
        for stage in stages:
            if isinstance(stage, str):
                raise GraphError(f"request type {t.name!r}: a stage of {s!r} must be a list of services, got {stage!r}")
            for c in stage:
                if c not in names:
                    raise GraphError(f"request type {t.name!r} of graph {g.name!r}: {s!r} calls unknown service {c!r}")
    if t.entry not in names:
        raise GraphError(f"request type {t.name!r} of graph {g.name!r}: unknown entry service {t.entry!r}")
    nodes: list[tuple[int, int, int, list[list[int]]]] = []

    def visit(svc: str, parent: int, path: tuple[str, ...]) -> int:
        if svc in path:
            cyc = " -> ".join((*path[path.index(svc) :], svc))
            raise GraphError(f"request type {t.name!r} of graph {g.name!r}: the call graph has a cycle: {cyc}")
        me = len(nodes)
        nodes.append((names[svc], parent, len(path), []))
        for stage in t.calls.get(svc, ()):
            nodes[me][3].append([visit(c, me, (*path, svc)) for c in stage])
        return me

    visit(t.entry, -1, ())
    return nodes


@accepts()
def flatten(g: CallGraph) -> Flat:
    """Validate ``g`` and flatten its request types' call trees (raises :class:`GraphError` naming the fault)."""
    if not g.services:
        raise GraphError(f"graph {g.name!r} has no services")
    if not g.types:
        raise GraphError(f"graph {g.name!r} has no request types")
    names: dict[str, int] = {}
    for i, s in enumerate(g.services):
        if s.name in names:
            raise GraphError(f"graph {g.name!r}: service {s.name!r} is listed twice")
        names[s.name] = i
    positive(f"slo_ms of graph {g.name!r}", g.slo_ms)
    mean_s = np.array([s.mean_ms / 1e3 for s in g.services])
    svc: list[int] = []
    par: list[int] = []
    dep: list[int] = []
    nst: list[int] = []
    soff: list[int] = []
    sst: list[int] = [0]
    child: list[int] = []
    coff: list[int] = []
    roots: list[int] = []
    counts: list[int] = []
    weights: list[float] = []
    for t in g.types:
        w = positive(f"weight of request type {t.name!r}", t.weight)
        nodes = _expand(g, t, names)
        base = len(svc)
        roots.append(base)
        counts.append(len(nodes))
        weights.append(w)
        for si, p, d, stages in nodes:
            svc.append(si)
            par.append(p + base if p >= 0 else -1)
            dep.append(d)
            nst.append(len(stages))
            soff.append(len(sst) - 1)
            coff.append(len(child))
            for stage in stages:
                child.extend(c + base for c in stage)
                sst.append(len(child))
    coff.append(len(child))
    n = len(svc)
    crit = np.zeros(n)
    for i in range(n - 1, -1, -1):  # children come after their parent in preorder
        tot = mean_s[svc[i]] * 1e3
        for j in range(nst[i]):
            kids = child[sst[soff[i] + j] : sst[soff[i] + j + 1]]
            tot += max((crit[c] for c in kids), default=0.0)
        crit[i] = tot
    for k, t in enumerate(g.types):
        if crit[roots[k]] > g.slo_ms:
            raise GraphError(
                f"graph {g.name!r}: slo_ms = {g.slo_ms:g} is below the mean service time of request type "
                f"{t.name!r} ({crit[roots[k]]:.3g} ms along its critical path with no queueing)"
            )
    wsum = float(sum(weights))
    i64 = np.int64
    return Flat(
        node_service=np.array(svc, i64),
        node_parent=np.array(par, i64),
        node_depth=np.array(dep, i64),
        node_nstages=np.array(nst, i64),
        node_stage_off=np.array(soff, i64),
        stage_start=np.array(sst, i64),
        child_node=np.array(child, i64),
        node_child_off=np.array(coff, i64),
        critical_ms=crit,
        type_root=np.array(roots, i64),
        type_nodes=np.array(counts, i64),
        type_weight=np.array(weights) / wsum,
        svc_workers=np.array([s.workers for s in g.services], i64),
        svc_mean_s=mean_s,
        svc_dist=np.array([DISTRIBUTIONS.index(s.dist) for s in g.services], i64),
        max_nodes=int(max(counts)),
    )


@accepts()
def hotel_reservation(mix: str = "search", slo_ms: float = 20.0) -> CallGraph:
    """DeathStarBench's hotel-reservation application (Go, gRPC).

    Services and edges (DeathStarBench ``hotelReservation``): ``frontend`` serves four APIs:

    * **search** (``/hotels``): frontend -> search; search -> geo (nearby hotels), then -> rate (their rates);
      then frontend -> reservation (availability), then -> profile (hotel profiles).
    * **recommend** (``/recommendations``): frontend -> recommendation, then -> profile.
    * **reserve** (``/reservation``): frontend -> user (check the user), then -> reservation (make it).
    * **login** (``/user``): frontend -> user.

    ``mix``: "search" (search only: 6 services, the benchmark graph) or "mixed" (DeathStarBench's wrk2 mix:
    search 60%, recommend 39%, reserve 0.5%, login 0.5%). Worker counts and means are assumptions; geo and rate
    (4 workers, 0.5 ms) are the bottleneck, at about 8,000 search requests/s.
    """
    one_of("mix", mix, ("search", "mixed"))
    services = (
        Service("frontend", 16, 0.2),
        Service("search", 8, 0.3),
        Service("geo", 4, 0.5),
        Service("rate", 4, 0.5),
        Service("reservation", 8, 0.4),
        Service("profile", 8, 0.4),
        Service("recommendation", 4, 0.3),
        Service("user", 4, 0.2),
    )
    search = RequestType(
        "search",
        "frontend",
        {"frontend": [["search"], ["reservation"], ["profile"]], "search": [["geo"], ["rate"]]},
        0.6,
    )
    types: tuple[RequestType, ...] = (search,)
    if mix == "mixed":
        types = (
            search,
            RequestType("recommend", "frontend", {"frontend": [["recommendation"], ["profile"]]}, 0.39),
            RequestType("reserve", "frontend", {"frontend": [["user"], ["reservation"]]}, 0.005),
            RequestType("login", "frontend", {"frontend": [["user"]]}, 0.005),
        )
    used = {"frontend", "search", "geo", "rate", "reservation", "profile"} if mix == "search" else None
    svcs = tuple(s for s in services if used is None or s.name in used)
    return CallGraph(f"hotel-reservation ({mix})", svcs, types, slo_ms)


@accepts()
def social_network(mix: str = "mixed", slo_ms: float = 20.0) -> CallGraph:
    """DeathStarBench's social-network application (C++, Thrift).

    Services and edges (DeathStarBench ``socialNetwork``), ``nginx`` the front end:

    * **compose-post**: nginx -> compose-post; compose-post -> in parallel text, unique-id, media, user;
      text -> in parallel url-shorten, user-mention; then compose-post -> in parallel post-storage,
      user-timeline, home-timeline; home-timeline -> social-graph (the followers to fan out to).
    * **read-home-timeline**: nginx -> home-timeline -> post-storage.
    * **read-user-timeline**: nginx -> user-timeline -> post-storage.

    ``mix``: "mixed" (DeathStarBench's wrk2 mixed workload: read-home 60%, read-user 30%, compose 10%) or
    "compose" (compose-post only: the deepest tree, 12 calls). Worker counts and means are assumptions;
    post-storage is the bottleneck of the mixed workload.

    Examples
    --------
    >>> g = social_network()
    >>> len(g.services), [t.name for t in g.types]
    (12, ['read-home-timeline', 'read-user-timeline', 'compose-post'])
    """
    one_of("mix", mix, ("mixed", "compose"))
    services = (
        Service("nginx", 16, 0.2),
        Service("compose-post", 8, 0.4),
        Service("text", 4, 0.3),
        Service("url-shorten", 4, 0.2),
        Service("user-mention", 4, 0.2),
        Service("unique-id", 4, 0.1),
        Service("media", 4, 0.2),
        Service("user", 4, 0.2),
        Service("post-storage", 8, 1.0),
        Service("user-timeline", 8, 0.4),
        Service("home-timeline", 8, 0.4),
        Service("social-graph", 4, 0.4),
    )
    compose = RequestType(
        "compose-post",
        "nginx",
        {
            "nginx": [["compose-post"]],
            "compose-post": [
                ["text", "unique-id", "media", "user"],
                ["post-storage", "user-timeline", "home-timeline"],
            ],
            "text": [["url-shorten", "user-mention"]],
            "home-timeline": [["social-graph"]],
        },
        0.1,
    )
    if mix == "compose":
        return CallGraph("social-network (compose)", services, (compose,), slo_ms)
    types = (
        RequestType(
            "read-home-timeline", "nginx", {"nginx": [["home-timeline"]], "home-timeline": [["post-storage"]]}, 0.6
        ),
        RequestType(
            "read-user-timeline", "nginx", {"nginx": [["user-timeline"]], "user-timeline": [["post-storage"]]}, 0.3
        ),
        compose,
    )
    return CallGraph("social-network (mixed)", services, types, slo_ms)


@accepts()
def chain(depth: int, slo_ms: float = 20.0, mean_ms: float = 0.2, workers: int = 8) -> CallGraph:
    """A sequential chain of ``depth`` services (s0 -> s1 -> ... ), the last one the bottleneck (half the workers).

    A synthetic family for the "deeper graphs" claim: the work an upstream service spends on a request that the
    last service drops grows with the depth.
    """
    depth = integer("depth", depth, minimum=1, maximum=64)
    svcs = tuple(Service(f"s{i}", workers if i < depth - 1 else max(1, workers // 2), mean_ms) for i in range(depth))
    calls = {f"s{i}": [[f"s{i + 1}"]] for i in range(depth - 1)}
    return CallGraph(f"chain-{depth}", svcs, (RequestType("chain", "s0", calls),), slo_ms)


GRAPHS = ("hotel-search", "hotel-mixed", "social-mixed", "social-compose", "chain-2", "chain-4", "chain-8")


@accepts()
def make_graph(name: str, slo_ms: float | None = None) -> CallGraph:
    """A named graph of :data:`GRAPHS` (``slo_ms`` None: the default SLO, 20 ms)."""
    one_of("graph", name, GRAPHS)
    slo = 20.0 if slo_ms is None else slo_ms
    if name.startswith("hotel"):
        return hotel_reservation(name.split("-")[1], slo)
    if name.startswith("social"):
        return social_network(name.split("-")[1], slo)
    return chain(int(name.split("-")[1]), slo)
