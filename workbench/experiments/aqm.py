"""PRED flow completion time vs load x marking x routing on the 128-host leaf-spine.

One point is one packet-level run of :func:`workbench.aqm.leaf_spine_fct` (web-search flows between random host
pairs, every switch port marking with ``marking``), summarised by :func:`workbench.aqm.fct_summary` after the warm-up
(a fifth of ``duration_s``): p50/p99 FCT of finished short flows per size class, plus the fabric's mean switch
queue. ``marking`` and ``routing`` are treatments (not seeded): at a given load and seed every combination carries
the same flows, as in :func:`workbench.aqm.fabric_comparison`. A default point takes ~10-20 s of CPU.
"""

from __future__ import annotations

from .. import aqm
from ..fabric import topology
from ._space import Param, experiment

__all__ = ["pred_fct_vs_load", "MARKINGS"]

#: Marking values and the configurations they stand for (static RED/ECN 20-200 packets; PRED as in the paper).
MARKINGS = {"static": aqm.STATIC_DEFAULT, "pred": aqm.PRED_DEFAULT}


@experiment(
    "pred-fct-vs-load",
    version="1",
    params=[
        Param.fraction("load", 0.9, "offered load per host NIC"),
        Param("marking", "pred", choices=tuple(MARKINGS), seeded=False, doc="AQM marking policy of every port"),
        Param("routing", "ecmp", choices=("ecmp", "spray"), seeded=False, doc="ECMP per flow or packet spraying"),
        Param("leaves", 8, "", low=1, high=64, doc="leaf switches"),
        Param("spines", 4, "", low=1, high=64, doc="spine switches"),
        Param("hosts_per_leaf", 16, "", low=1, high=64, doc="hosts per leaf (default 8 x 16 = 128 hosts)"),
        Param("host_gbps", 10.0, "Gbit/s", low=0.0, low_inclusive=False, doc="host link capacity"),
        Param("uplink_gbps", 40.0, "Gbit/s", low=0.0, low_inclusive=False, doc="leaf-spine link capacity"),
        Param("duration_s", 0.05, "s", low=0.0, high=10.0, low_inclusive=False, doc="flow arrival window"),
    ],
)
def pred_fct_vs_load(*, load, marking, routing, leaves, spines, hosts_per_leaf, host_gbps, uplink_gbps, duration_s,
                     seed):
    """FCT percentiles by size class and mean switch queue of web-search traffic on a leaf-spine."""
    topo = topology.leaf_spine(leaves, spines, hosts_per_leaf, host_gbps=host_gbps, uplink_gbps=uplink_gbps)
    # the marking configuration is passed by position: a keyword rename in the model needs no change here
    run = aqm.leaf_spine_fct(load, MARKINGS[marking], topology=topo, routing=routing, duration_s=duration_s,
                             seed=seed)
    fct = aqm.fct_summary(run.flows, min_start_s=duration_s / 5)
    fct["mean_queue_pkts"] = float(run.links.mean_queue_pkts.mean())
    fct["utilization"] = float(run.links.utilization.mean())
    return fct
