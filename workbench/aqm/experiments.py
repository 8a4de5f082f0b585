"""Sweeps that compare marking schemes, shared by the PRED reproduction, its notebook and its widget.

Each function loops over a handful of schemes or concurrency points (never over flows or packets) and returns a tidy
DataFrame for :mod:`workbench.viz.aqm`.
"""

from __future__ import annotations

import pandas as pd

from .._rng import Seed, spawn
from .._validate import array_1d
from .fluid import steady_state
from .packet import PredConfig, SimResult, dumbbell, fct_summary, leaf_spine_fct
from .red import RedMarking

__all__ = ["STATIC_DEFAULT", "PRED_DEFAULT", "concurrency_sweep", "compare_schemes", "fabric_comparison"]

#: The static baseline used throughout: ECN marking from 20 to 200 packets, probability up to 0.1, then 1.
STATIC_DEFAULT = RedMarking(20.0, 200.0, 0.1)
#: PRED as described in the paper, with a per-flow slope of 0.01 per packet from min_k = 5 packets.
PRED_DEFAULT = PredConfig()


def _fluid_marking(scheme) -> tuple[RedMarking, bool, str]:
    if isinstance(scheme, PredConfig):
        return RedMarking.from_slope(scheme.min_k_pkts, scheme.unit_slope_per_pkt), scheme.fcs, scheme.fcs_scaling
    return scheme, False, "linear"


def concurrency_sweep(
    n_flows,
    schemes: dict | None = None,
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
    schemes : dict name -> RedMarking or PredConfig
        Default ``{"static": STATIC_DEFAULT, "pred": PRED_DEFAULT}``. The fluid model of PRED is its FCS alone.
    packet : bool
        Also run the packet-level dumbbell at every point (``duration_s`` each, a fifth of it warm-up).
    duration_s, capacity_gbps, rtt_s : float
    seed : int, Generator or None

    Returns
    -------
    DataFrame ``scheme, model, n_flows, queue_pkts, utilization``.

    Examples
    --------
    >>> df = concurrency_sweep([2, 8], packet=False)
    >>> df.groupby("scheme").queue_pkts.max().round(0).to_dict()
    {'pred': 6.0, 'static': 101.0}
    """
    n = array_1d("n_flows", n_flows, min_size=1, low=1).astype(int)
    schemes = {"static": STATIC_DEFAULT, "pred": PRED_DEFAULT} if schemes is None else schemes
    rows = []
    for name, scheme in schemes.items():
        marking, scale, scaling = _fluid_marking(scheme)
        q = steady_state(n, marking, capacity_gbps=capacity_gbps, rtt_s=rtt_s, scale_with_flows=scale,
                         scaling=scaling)
        rows += [(name, "fluid", int(k), float(v), 1.0) for k, v in zip(n, q)]
    if packet:
        rngs = spawn(seed, n.size)
        for name, scheme in schemes.items():
            for k, rng in zip(n, rngs):
                r = dumbbell(int(k), scheme, capacity_gbps=capacity_gbps, rtt_s=rtt_s, duration_s=duration_s,
                             seed=rng)
                link = r.links.iloc[0]
                rows.append((name, "packet", int(k), float(link.mean_queue_pkts), float(link.utilization)))
    return pd.DataFrame(rows, columns=["scheme", "model", "n_flows", "queue_pkts", "utilization"])


def compare_schemes(
    schemes: dict | None = None,
    *,
    n_long_flows: int = 8,
    load: float = 0.5,
    duration_s: float = 0.2,
    capacity_gbps: float = 10.0,
    rtt_s: float = 100e-6,
    seed: Seed = 0,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, SimResult]]:
    """Long flows plus web-search traffic on one bottleneck under each scheme (same seed, same flows).

    Returns
    -------
    links : DataFrame ``scheme, utilization, mean_queue_pkts, marks, drops``
    fct : DataFrame ``scheme, size_class, count, unfinished, p50_s, p99_s`` (flows after the warm-up)
    results : dict of the raw :class:`~workbench.aqm.packet.SimResult`

    Examples
    --------
    >>> links, fct, _ = compare_schemes(duration_s=0.02, load=0.3)
    >>> links.scheme.tolist()
    ['static', 'pred']
    """
    schemes = {"static": STATIC_DEFAULT, "pred": PRED_DEFAULT} if schemes is None else schemes
    link_rows, fct_rows, results = [], [], {}
    for name, scheme in schemes.items():
        r = dumbbell(n_long_flows, scheme, load=load, capacity_gbps=capacity_gbps, rtt_s=rtt_s,
                     duration_s=duration_s, seed=seed)
        results[name] = r
        link = r.links.iloc[0]
        link_rows.append((name, float(link.utilization), float(link.mean_queue_pkts), int(link.marks),
                          float(link.drops)))
        s = fct_summary(r.flows, min_start_s=duration_s / 5)
        s.insert(0, "scheme", name)
        fct_rows.append(s)
    links = pd.DataFrame(link_rows, columns=["scheme", "utilization", "mean_queue_pkts", "marks", "drops"])
    return links, pd.concat(fct_rows, ignore_index=True), results


def fabric_comparison(
    load: float,
    schemes: dict | None = None,
    *,
    topology=None,
    routing: str = "ecmp",
    duration_s: float = 0.05,
    seed: Seed = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Leaf-spine web-search FCT under each scheme (same flows); returns ``(links, fct)`` like
    :func:`compare_schemes` (links averaged over switch ports).

    Examples
    --------
    >>> from workbench.fabric.topology import leaf_spine
    >>> links, fct = fabric_comparison(0.3, topology=leaf_spine(2, 2, 4, 10, 20), duration_s=0.005)
    >>> sorted(fct.scheme.unique())
    ['pred', 'static']
    """
    schemes = {"static": STATIC_DEFAULT, "pred": PRED_DEFAULT} if schemes is None else schemes
    link_rows, fct_rows = [], []
    for name, scheme in schemes.items():
        r = leaf_spine_fct(load, scheme, topology=topology, routing=routing, duration_s=duration_s, seed=seed)
        link_rows.append((name, float(r.links.utilization.mean()), float(r.links.mean_queue_pkts.mean()),
                          float(r.links.mean_queue_pkts.max()), int(r.links.marks.sum())))
        s = fct_summary(r.flows, min_start_s=duration_s / 5)
        s.insert(0, "scheme", name)
        fct_rows.append(s)
    links = pd.DataFrame(link_rows, columns=["scheme", "utilization", "mean_queue_pkts", "max_queue_pkts", "marks"])
    return links, pd.concat(fct_rows, ignore_index=True)


