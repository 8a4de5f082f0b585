"""PRED parameter studies: standing queue vs concurrency, bottleneck FCT vs load, leaf-spine FCT vs load.

* ``pred-queue-vs-concurrency`` -- N long DCTCP flows through one bottleneck: the fluid steady-state standing queue
  (:func:`workbench.aqm.steady_state`, deterministic) or the packet-level dumbbell (:func:`workbench.aqm.dumbbell`,
  run per packet: mean queue and utilization after the warm-up, a fifth of ``duration_s``, and the fraction of the
  long flows still sending when the window closes, which should be 1).
* ``pred-dumbbell-fct`` -- long flows plus web-search flows at ``load`` on one bottleneck: FCT percentiles by size
  class (:func:`workbench.aqm.fct_summary`) plus the link's mean queue and utilization.
* ``pred-fct-vs-load`` -- web-search flows on a leaf-spine (:func:`workbench.aqm.leaf_spine_fct`, run per packet),
  every switch port marking with ``marking``: FCT by size class plus the fabric's mean switch queue. A default point
  (128 hosts, 50 ms) takes ~10 s of CPU.

The first three ran on a chunked simpy engine (trains of up to 16 packets over fluid queues) up to version 1; from
version 2 all four run on the per-packet engine (:func:`workbench.aqm.perpacket.simulate_packets`), the chunked one
being 1.8-6.8x off it on FCT tails at 90% load.
* ``pred-leafspine-mix`` -- PRED's leaf-spine setting (128 hosts, 10 Gbit/s links, web search at 90% load) with
  one of :data:`workbench.aqm.MIXES` (web search alone, plus long-lived background flows, plus incast bursts) and
  either PRED or one of the static baselines of :data:`STATIC_BASELINES` (step thresholds and RED ramps) on every
  switch port (:func:`workbench.aqm.leaf_spine_mix`, run packet by packet on the validated per-packet engine): FCT
  of the web-search flows by size class plus the switch ports' time-mean queues. A default point takes seconds of
  CPU (web search alone, incast) to ~10 s (background flows, which run to completion).

``marking`` is ``"static"`` (RED/ECN from ``min_k_pkts`` to ``max_k_pkts``, probability up to ``max_p``; default
:data:`workbench.aqm.STATIC_DEFAULT`) or ``"pred"`` (:class:`workbench.aqm.PredConfig` with ``slope_per_pkt``,
``pred_min_k_pkts``, ``fcs``, ``qla``, ``fcs_scaling``; default :data:`workbench.aqm.PRED_DEFAULT`). The marking
parameters, ``routing`` and ``model`` are treatments (not seeded): at a given point and seed every combination
carries the same flows.
"""

from __future__ import annotations

from .. import aqm
from ..fabric import topology
from ._space import Param, experiment

__all__ = [
    "pred_queue_vs_concurrency",
    "pred_dumbbell_fct",
    "pred_fct_vs_load",
    "pred_leafspine_mix",
    "MARKINGS",
    "STATIC_BASELINES",
    "marking_config",
]

#: Marking values and their default configurations (static RED/ECN 20-200 packets; PRED as in the paper).
MARKINGS: dict[str, aqm.RedMarking | aqm.PredConfig] = {"static": aqm.STATIC_DEFAULT, "pred": aqm.PRED_DEFAULT}

#: Static baselines of ``pred-leafspine-mix``: DCTCP step marking at K packets, and RED ramps from min to max
#: packets (``red-20-200``: probability up to 0.1, the workbench default; ``red-5-65``: up to 1, a ramp spanning
#: the step thresholds).
STATIC_BASELINES: dict[str, aqm.RedMarking] = {
    "step-5": aqm.RedMarking.step(5),
    "step-15": aqm.RedMarking.step(15),
    "step-30": aqm.RedMarking.step(30),
    "step-65": aqm.RedMarking.step(65),
    "red-20-200": aqm.RedMarking(20, 200, 0.1),
    "red-5-65": aqm.RedMarking(5, 65, 1.0),
}

_S, _P = aqm.STATIC_DEFAULT, aqm.PRED_DEFAULT
#: The marking parameters shared by the bottleneck experiments (defaults are the two default configurations).
MARKING_PARAMS = [
    Param("marking", "pred", choices=tuple(MARKINGS), seeded=False, doc="AQM marking policy of the bottleneck"),
    Param(
        "min_k_pkts",
        _S.min_k_pkts,
        "",
        low=0.0,
        high=10_000.0,
        seeded=False,
        doc="static ramp start (packets)",
        label="static min K (packets)",
    ),
    Param(
        "max_k_pkts",
        _S.max_k_pkts,
        "",
        low=1.0,
        high=10_000.0,
        seeded=False,
        doc="static ramp end (packets), above min_k_pkts",
        label="static max K (packets)",
        log=True,
    ),
    Param(
        "max_p",
        _S.max_p,
        "fraction",
        low=0.0,
        high=1.0,
        low_inclusive=False,
        seeded=False,
        doc="static marking probability at max_k_pkts",
        label="static max P",
    ),
    Param(
        "slope_per_pkt",
        _P.slope_per_pkt,
        "",
        low=1e-4,
        high=1.0,
        seeded=False,
        doc="PRED marking slope per flow (probability per packet)",
        label="PRED slope per flow",
        log=True,
    ),
    Param("pred_min_k_pkts", _P.min_k_pkts, "", low=0.0, high=10_000.0, seeded=False, doc="PRED ramp start (packets)"),
    Param(
        "fcs",
        _P.fcs,
        seeded=False,
        doc="PRED Flow Concurrent Stabilizer (slope scaled with the flow count)",
        label="FCS (slope x flows)",
    ),
    Param(
        "qla",
        _P.qla,
        seeded=False,
        doc="PRED Queue Length Adjuster (utility hill climb; packet level only)",
        label="QLA (utility hill climb)",
    ),
    Param(
        "fcs_scaling",
        _P.fcs_scaling,
        choices=("linear", "sqrt"),
        seeded=False,
        doc="how FCS scales the slope with flows",
    ),
    Param("capacity_gbps", 10.0, "Gbit/s", low=0.0, low_inclusive=False, doc="bottleneck capacity"),
    Param("rtt_s", 100e-6, "s", low=1e-6, high=1.0, doc="base round-trip time", label="RTT", log=True),
]


def marking_config(
    marking: str,
    *,
    min_k_pkts: float,
    max_k_pkts: float,
    max_p: float,
    slope_per_pkt: float,
    pred_min_k_pkts: float,
    fcs: bool,
    qla: bool,
    fcs_scaling: str,
):
    """The :class:`~workbench.aqm.RedMarking` or :class:`~workbench.aqm.PredConfig` a ``marking`` value stands for.

    Examples
    --------
    >>> marking_config("static", min_k_pkts=20.0, max_k_pkts=200.0, max_p=0.1, slope_per_pkt=0.01,
    ...                pred_min_k_pkts=5.0, fcs=True, qla=True, fcs_scaling="linear") == MARKINGS["static"]
    True
    """
    if marking == "static":
        return aqm.RedMarking(min_k_pkts, max_k_pkts, max_p)
    return aqm.PredConfig(
        slope_per_pkt=slope_per_pkt, min_k_pkts=pred_min_k_pkts, fcs=fcs, qla=qla, fcs_scaling=fcs_scaling
    )


@experiment(
    "pred-queue-vs-concurrency",
    version="2",  # 2: the per-packet engine (1: the chunked simpy engine)
    small={"n_flows": 4, "model": ["fluid", "packet"], "duration_s": 0.005},
    params=[
        Param("n_flows", 8, "", low=1, high=1024, doc="concurrent long flows"),
        Param(
            "model",
            "packet",
            choices=("fluid", "packet"),
            seeded=False,
            doc="fluid steady state or packet-level dumbbell",
        ),
        *MARKING_PARAMS,
        Param(
            "duration_s",
            0.05,
            "s",
            low=0.0,
            high=60.0,
            low_inclusive=False,
            doc="packet run length (minutes of simulation near the top; past 200 M packets a point is refused)",
        ),
    ],
)
def pred_queue_vs_concurrency(*, n_flows, model, capacity_gbps, rtt_s, duration_s, seed, **marking):
    """Standing queue (packets), utilization and the fraction of long flows still sending at the window's end of N
    long flows on one bottleneck (the fluid model's utilization and fraction are 1)."""
    marking = marking_config(**marking)
    if model == "fluid":
        q = aqm.steady_state(
            [n_flows], capacity_gbps=capacity_gbps, rtt_s=rtt_s, **aqm.fluid_marking(marking).kwargs()
        )[0]
        return {"queue_pkts": float(q), "utilization": 1.0, "long_active": 1.0}
    run = aqm.dumbbell(n_flows, marking, capacity_gbps=capacity_gbps, rtt_s=rtt_s, duration_s=duration_s, seed=seed)
    link = run.links.iloc[0]
    return {
        "queue_pkts": float(link.mean_queue_pkts),
        "utilization": float(link.utilization),
        "long_active": _long_active(run.flows, duration_s),
    }


def _long_active(flows, duration_s: float) -> float:
    """Fraction of the long flows of a dumbbell run still sending at ``duration_s`` (1 if there are none)."""
    long = flows[flows["is_long"]]
    return float(((long["start_s"] + long["fct_s"]) >= duration_s).mean()) if len(long) else 1.0


@experiment(
    "pred-dumbbell-fct",
    version="2",  # 2: the per-packet engine (1: the chunked simpy engine)
    small={"n_long_flows": 2, "load": 0.3, "duration_s": 0.01, "marking": ["static", "pred"]},
    params=[
        Param.fraction("load", 0.5, "web-search load of the bottleneck"),
        Param("n_long_flows", 8, "", low=0, high=1024, doc="long flows sharing the bottleneck", label="long flows"),
        *MARKING_PARAMS,
        Param(
            "duration_s",
            0.2,
            "s",
            low=0.0,
            high=60.0,
            low_inclusive=False,
            doc="flow arrival window (minutes of simulation near the top; past 200 M packets a point is refused)",
        ),
    ],
)
def pred_dumbbell_fct(*, load, n_long_flows, capacity_gbps, rtt_s, duration_s, seed, **marking):
    """FCT percentiles by size class, mean queue and utilization of the bottleneck, and the fraction of long flows
    still sending when the window closes."""
    marking = marking_config(**marking)
    run = aqm.dumbbell(
        n_long_flows, marking, load=load, capacity_gbps=capacity_gbps, rtt_s=rtt_s, duration_s=duration_s, seed=seed
    )
    fct = aqm.fct_summary(run.flows, min_start_s=duration_s / 5)
    link = run.links.iloc[0]
    return fct.assign(
        mean_queue_pkts=float(link.mean_queue_pkts),
        utilization=float(link.utilization),
        long_active=_long_active(run.flows, duration_s),
    )


@experiment(
    "pred-fct-vs-load",
    version="2",  # 2: the per-packet engine, host NICs plain FIFOs (1: the chunked engine, NICs marking 5-20 packets)
    small={"leaves": 2, "spines": 2, "hosts_per_leaf": 4, "duration_s": 0.005, "marking": ["static", "pred"]},
    params=[
        Param.fraction("load", 0.9, "offered load per host NIC"),
        Param("marking", "pred", choices=tuple(MARKINGS), seeded=False, doc="AQM marking policy of every port"),
        Param("routing", "ecmp", choices=("ecmp", "spray"), seeded=False, doc="ECMP per flow or packet spraying"),
        Param("leaves", 8, "", low=1, high=64, doc="leaf switches (64: minutes of simulation)"),
        Param("spines", 4, "", low=1, high=64, doc="spine switches"),
        Param("hosts_per_leaf", 16, "", low=1, high=64, doc="hosts per leaf (default 8 x 16 = 128 hosts)"),
        Param("host_gbps", 10.0, "Gbit/s", low=0.0, low_inclusive=False, doc="host link capacity"),
        Param("uplink_gbps", 40.0, "Gbit/s", low=0.0, low_inclusive=False, doc="leaf-spine link capacity"),
        Param(
            "duration_s",
            0.05,
            "s",
            low=0.0,
            high=10.0,
            low_inclusive=False,
            doc="flow arrival window (minutes of simulation near the top; past 200 M packets a point is refused)",
        ),
    ],
)
def pred_fct_vs_load(
    *, load, marking, routing, leaves, spines, hosts_per_leaf, host_gbps, uplink_gbps, duration_s, seed
):
    """FCT percentiles by size class and mean switch queue of web-search traffic on a leaf-spine."""
    topo = topology.leaf_spine(leaves, spines, hosts_per_leaf, host_gbps=host_gbps, uplink_gbps=uplink_gbps)
    # the marking configuration is passed by position: a keyword rename in the model needs no change here
    run = aqm.leaf_spine_fct(load, MARKINGS[marking], topology=topo, routing=routing, duration_s=duration_s, seed=seed)
    fct = aqm.fct_summary(run.flows, min_start_s=duration_s / 5)
    fct["mean_queue_pkts"] = float(run.links.mean_queue_pkts.mean())
    fct["utilization"] = float(run.links.utilization.mean())
    return fct


@experiment(
    "pred-leafspine-mix",
    version="2",  # 2: the per-packet engine (1: the chunked simpy engine)
    small={"leaves": 2, "spines": 2, "hosts_per_leaf": 4, "duration_s": 0.004, "marking": ["static", "pred"]},
    params=[
        Param("mix", "websearch", choices=aqm.MIXES, seeded=False, doc="web search alone, + background, + incast"),
        Param("marking", "pred", choices=tuple(MARKINGS), seeded=False, doc="AQM marking policy of every port"),
        Param(
            "baseline",
            "step-65",
            choices=tuple(STATIC_BASELINES),
            seeded=False,
            doc="the static marking when marking is 'static' (ignored for PRED)",
        ),
        Param.fraction("load", 0.9, "web-search load per host NIC"),
        Param("leaves", 16, "", low=1, high=64, doc="leaf switches"),
        Param("spines", 8, "", low=1, high=64, doc="spine switches"),
        Param("hosts_per_leaf", 8, "", low=1, high=64, doc="hosts per leaf (default 16 x 8 = 128 hosts)"),
        Param("link_gbps", 10.0, "Gbit/s", low=0.0, low_inclusive=False, doc="capacity of every link"),
        Param("link_delay_s", 10e-6, "s", low=0.0, high=1e-3, doc="one-way propagation delay per link"),
        Param("buffer_pkts", 1000, "", low=1, high=100_000, doc="switch buffer per port (packets)"),
        Param(
            "duration_s",
            0.02,
            "s",
            low=0.0,
            high=10.0,
            low_inclusive=False,
            doc="flow arrival window (minutes of simulation near the top; past 200 M packets a point is refused)",
        ),
    ],
)
def pred_leafspine_mix(
    *,
    mix,
    marking,
    baseline,
    load,
    leaves,
    spines,
    hosts_per_leaf,
    link_gbps,
    link_delay_s,
    buffer_pkts,
    duration_s,
    seed,
):
    """FCT percentiles of the web-search flows by size class, and the switch ports' mean and largest mean queue."""
    topo = topology.leaf_spine(leaves, spines, hosts_per_leaf, host_gbps=link_gbps, uplink_gbps=link_gbps)
    config = STATIC_BASELINES[baseline] if marking == "static" else MARKINGS[marking]
    run = aqm.leaf_spine_mix(
        config,
        mix=mix,
        load=load,
        topology=topo,
        link_delay_s=link_delay_s,
        buffer_pkts=buffer_pkts,
        duration_s=duration_s,
        seed=seed,
    )
    web = run.flows[run.flows["kind"] == "websearch"]
    fct = aqm.fct_summary(web, min_start_s=duration_s / 5)
    fct["mean_queue_pkts"] = float(run.links.mean_queue_pkts.mean())
    fct["max_mean_queue_pkts"] = float(run.links.mean_queue_pkts.max())
    return fct
