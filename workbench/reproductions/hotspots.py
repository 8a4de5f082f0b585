"""Hotspot-aware placement (Google, NSDI 2025): ToR hotspots, their latency cost, and placement that avoids them.

Models: :mod:`workbench.placement`. Latency: a 10 Gbit/s link (1.2 us per packet) fed by Gamma arrivals with CV 2
(bursty), by the Lindley recursion of :mod:`workbench.arrivals`. Placement: 1000 racks of 40 slots, 80% full, ToR
uplinks of 100/200/400 Gbit/s, lognormal task demands (sigma 1.5) scaled to 40% mean uplink utilization, realized
demand = prediction x lognormal noise (sigma 0.5); hot ToR = realized utilization above 0.75 (the latency knee).
"""

from __future__ import annotations

import numpy as np

from .. import placement as P
from .._deps import remember
from ..viz import placement as viz
from . import AtLeast, Measured, Paper, Within, claim, figure

PAPER = Paper(
    "hotspots",
    title="Preventing Network Bottlenecks: Accelerating Datacenter Services with Hotspot-Aware Placement for "
    "Compute and Storage",
    citation="Google, USENIX NSDI 2025",
    url="https://www.usenix.org/conference/nsdi25",
    notebook="notebooks/06_hotspots.ipynb",
    panel="workbench.widgets.placement:hotspot_panel",
    dashboard="Hotspot-aware placement",
    experiments=("placement-hot-tors", "placement-tor-utilization", "placement-latency-curve"),
)

UTILIZATION = np.round(np.arange(0.05, 0.951, 0.05), 2)
HOT = 0.75


@remember
def curves(scale: str):
    """Latency vs utilization for Poisson (CV 1) and bursty (CV 2) sources."""
    n = 400_000 if scale == "full" else 100_000
    return {
        "Poisson (CV 1)": P.latency_vs_utilization(UTILIZATION, cv=1.0, n=n, seed=1),
        "bursty (CV 2)": P.latency_vs_utilization(UTILIZATION, cv=2.0, n=n, seed=2),
    }


@remember
def study(scale: str):
    """Random vs aware placement over independent clusters."""
    if scale == "full":
        return P.placement_study(1000, seeds=8, hot_threshold=HOT, seed=0)
    return P.placement_study(400, seeds=4, hot_threshold=HOT, seed=0)


@remember
def example(scale: str):
    """One cluster placed both ways (for the utilization figure and notebook 06's latency table): ``(cluster,
    {policy: Placement})``. A single example run (one cluster, the paper's two policies as one model call), not a
    parameter study; the hot-ToR study over many clusters is :func:`study`."""
    cluster = P.make_cluster(1000 if scale == "full" else 400, seed=11)
    return cluster, P.place_policies(cluster, hot_threshold=HOT, seed=12)


@claim(
    PAPER,
    "knee_near_75",
    text="Queueing latency on a link turns up sharply at a knee near 75% utilization.",
    paper_value="knee near 75% utilization",
    compare=Within(0.75, abs=0.05, partial_abs=0.1),
    note="Knee (Kneedle rule over 5-95% utilization, 1% steps) of the exact GI/M/1 mean latency of bursty sources "
    "(Gamma CV 2, exponential service): 78% at any CV. The simulated curve's knee moves between 75% and 85% with the "
    "seed (50,000 packets per point), so the claim is measured on the exact curve, and the panel shows the same.",
)
def _knee(scale):
    knee = P.knee_utilization(P.KNEE_GRID, P.exact_mean_latency(P.KNEE_GRID, cv=2.0))
    return Measured(knee, f"knee at {knee:.0%} utilization (exact mean latency, bursty sources, CV 2)")


@claim(
    PAPER,
    "latency_2x_high_util",
    text="At high utilization latency is more than twice its value at moderate utilization.",
    paper_value="> 2x latency at high utilization",
    compare=AtLeast(2.0, partial=1.5),
)
def _ratio(scale):
    df = curves(scale)["bursty (CV 2)"].set_index("utilization")
    ratio = df.loc[0.9, "mean_latency_s"] / df.loc[0.5, "mean_latency_s"]
    return Measured(
        float(ratio),
        f"{ratio:.1f}x mean latency at 90% vs 50% utilization",
        {"p99_ratio": float(df.loc[0.9, "tail_latency_s"] / df.loc[0.5, "tail_latency_s"])},
    )


@claim(
    PAPER,
    "fewer_hot_tors",
    text="Hotspot-aware placement with migration sharply reduces the number of hot ToRs.",
    paper_value="90% fewer hot ToRs",
    compare=Within(0.9, abs=0.05, partial_abs=0.2),
    expected="partial",
    note="The model removes about 80% of hot ToRs: the scheduler places on predicted demand, realized demand differs "
    "by lognormal noise (sigma 0.5), and migration only moves network-intensive tasks (top decile), so racks made "
    "hot by many medium tasks stay hot. The paper's production scheduler and migration policy have more levers.",
)
def _hot(scale):
    agg = study(scale).groupby("policy")["hot_tors"].mean()
    red = 1 - agg["aware"] / agg["random"]
    return Measured(float(red), f"{red:.0%} fewer ({agg['random']:.0f} -> {agg['aware']:.0f} hot ToRs)")


@claim(
    PAPER,
    "intensive_on_hot_7x",
    text="Without hotspot awareness network-intensive tasks land on hot ToRs several times more often.",
    paper_value="7x",
    compare=Within(7.0, rel=0.25, partial_rel=0.6),
)
def _intensive(scale):
    agg = study(scale).groupby("policy")["intensive_on_hot"].mean()
    ratio = agg["random"] / agg["aware"]
    return Measured(
        float(ratio), f"{ratio:.1f}x ({agg['random']:.1%} vs {agg['aware']:.1%} of network-intensive tasks on hot ToRs)"
    )


@figure(PAPER, "latency_vs_utilization")
def _fig_latency(scale):
    c = curves(scale)
    knee = P.knee_utilization(P.KNEE_GRID, P.exact_mean_latency(P.KNEE_GRID, cv=2.0))  # what the claim measures
    return viz.latency_curve(c, knee=knee, knee_label="knee of the exact mean latency (CV 2)")


@figure(PAPER, "hot_tors")
def _fig_hot(scale):
    return viz.hot_tor_bars(study(scale))


@figure(PAPER, "tor_utilization")
def _fig_util(scale):
    return viz.utilization_cdf({k: p.utilization for k, p in example(scale)[1].items()}, threshold=HOT)
