"""Comparisons of marking policies (static RED/ECN vs PRED), shared by the PRED reproduction, its notebook and its
panel: queue vs concurrency (fluid and packet level), one bottleneck shared by long and web-search flows, and
web-search traffic across a leaf-spine fabric.

Each function loops over a handful of markings or concurrency points (never over flows or packets) and returns tidy
DataFrames for :mod:`workbench.viz.aqm`; the two FCT comparisons return the same record, :class:`MarkingComparison`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .._rng import Seed, spawn
from .._validate import array_1d
from .fluid import steady_state
from .pred import PredConfig, fluid_marking
from .red import RedMarking
from .scenarios import dumbbell, fct_summary, leaf_spine_fct

__all__ = [
    "STATIC_DEFAULT",
    "PRED_DEFAULT",
    "MarkingComparison",
    "concurrency_sweep",
    "compare_markings",
    "fabric_comparison",
]

#: The static baseline used throughout: ECN marking from 20 to 200 packets, probability up to 0.1, then 1.
STATIC_DEFAULT = RedMarking(20.0, 200.0, 0.1)
#: PRED as described in the paper, with a per-flow slope of 0.01 per packet from min_k = 5 packets.
PRED_DEFAULT = PredConfig()


@dataclass(frozen=True)
class MarkingComparison:
    """The same flows run under each marking policy.

    Attributes
    ----------
    links : DataFrame
        One row per marking: ``marking, utilization, mean_queue_pkts, max_queue_pkts, marks, drops`` (over the
        switch ports after the warm-up; a mean over ports and the largest port mean in a fabric).
    fct : DataFrame
        ``marking, size_class, count, unfinished, p50_s, p99_s`` (flows that started after the warm-up).
    queue : DataFrame
        Sampled queue of the monitored links: ``marking, time_s, link, queue_pkts``.
    """

    links: pd.DataFrame
    fct: pd.DataFrame
    queue: pd.DataFrame


def _defaults(markings: dict | None) -> dict:
    return {"static": STATIC_DEFAULT, "pred": PRED_DEFAULT} if markings is None else markings


def _collect(results: dict, warmup_s: float) -> MarkingComparison:
    link_rows, fct_rows, queues = [], [], []
    for name, r in results.items():
        link_rows.append((name, float(r.links.utilization.mean()), float(r.links.mean_queue_pkts.mean()),
                          float(r.links.mean_queue_pkts.max()), int(r.links.marks.sum()), float(r.links.drops.sum())))
        s = fct_summary(r.flows, min_start_s=warmup_s)
        s.insert(0, "marking", name)
        fct_rows.append(s)
        queues.append(r.queue.assign(marking=name)[["marking", "time_s", "link", "queue_pkts"]])
    links = pd.DataFrame(link_rows, columns=["marking", "utilization", "mean_queue_pkts", "max_queue_pkts", "marks",
                                             "drops"])
    return MarkingComparison(links, pd.concat(fct_rows, ignore_index=True), pd.concat(queues, ignore_index=True))


def concurrency_sweep(
    n_flows,
    markings: dict | None = None,
    *,
    packet: bool = True,
    duration_s: float = 0.05,
    capacity_gbps: float = 10.0,
    rtt_s: float = 100e-6,
    seed: Seed = 0,
) -> pd.DataFrame:
    """Standing queue and utilization vs number of long flows, fluid (steady state) and packet level.

    Parameters
    ----------
    n_flows : array-like of int
        Concurrency points.
    markings : dict name -> RedMarking or PredConfig
        Default ``{"static": STATIC_DEFAULT, "pred": PRED_DEFAULT}``. The fluid model of PRED is its FCS alone
        (:meth:`PredConfig.fluid_marking`).
    packet : bool
        Also run the packet-level dumbbell at every point (``duration_s`` each, a fifth of it warm-up).
    duration_s, capacity_gbps, rtt_s : float
    seed : int, Generator or None

    Returns
    -------
    DataFrame ``marking, model, n_flows, queue_pkts, utilization``.

    Examples
    --------
    >>> df = concurrency_sweep([2, 8], packet=False)
    >>> df.groupby("marking").queue_pkts.max().round(0).to_dict()
    {'pred': 6.0, 'static': 101.0}
    """
    n = array_1d("n_flows", n_flows, min_size=1, low=1).astype(int)
    markings = _defaults(markings)
    rows = []
    for name, marking in markings.items():
        q = steady_state(n, capacity_gbps=capacity_gbps, rtt_s=rtt_s, **fluid_marking(marking).kwargs())
        rows += [(name, "fluid", int(k), float(v), 1.0) for k, v in zip(n, q)]
    if packet:
        rngs = spawn(seed, n.size)
        for name, marking in markings.items():
            for k, rng in zip(n, rngs):
                r = dumbbell(int(k), marking, capacity_gbps=capacity_gbps, rtt_s=rtt_s, duration_s=duration_s,
                             seed=rng)
                link = r.links.iloc[0]
                rows.append((name, "packet", int(k), float(link.mean_queue_pkts), float(link.utilization)))
    return pd.DataFrame(rows, columns=["marking", "model", "n_flows", "queue_pkts", "utilization"])


def compare_markings(
    markings: dict | None = None,
    *,
    n_long_flows: int = 8,
    load: float = 0.5,
    duration_s: float = 0.2,
    capacity_gbps: float = 10.0,
    rtt_s: float = 100e-6,
    seed: Seed = 0,
) -> MarkingComparison:
    """Long flows plus web-search traffic on one bottleneck under each marking (same seed, same flows).

    Examples
    --------
    >>> c = compare_markings(duration_s=0.02, load=0.3)
    >>> c.links.marking.tolist()
    ['static', 'pred']
    """
    results = {name: dumbbell(n_long_flows, marking, load=load, capacity_gbps=capacity_gbps, rtt_s=rtt_s,
                              duration_s=duration_s, seed=seed)
               for name, marking in _defaults(markings).items()}
    return _collect(results, duration_s / 5)


def fabric_comparison(
    load: float,
    markings: dict | None = None,
    *,
    topology=None,
    routing: str = "ecmp",
    duration_s: float = 0.05,
    seed: Seed = 0,
) -> MarkingComparison:
    """Leaf-spine web-search FCT under each marking (same flows, same paths); see :func:`compare_markings`.

    Examples
    --------
    >>> from workbench.fabric.topology import leaf_spine
    >>> c = fabric_comparison(0.3, topology=leaf_spine(2, 2, 4, 10, 20), duration_s=0.005)
    >>> sorted(c.fct.marking.unique())
    ['pred', 'static']
    """
    results = {name: leaf_spine_fct(load, marking, topology=topology, routing=routing, duration_s=duration_s,
                                    seed=seed)
               for name, marking in _defaults(markings).items()}
    return _collect(results, duration_s / 5)
