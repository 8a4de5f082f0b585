"""PRED (NSDI 2025): adaptive RED/ECN that scales its marking slope with flow concurrency and tunes it by utility.

Models: :mod:`workbench.aqm` (fluid steady state; the packet-level dumbbell, 128-host leaf-spine and leaf-spine mix,
:func:`workbench.aqm.dumbbell`, :func:`workbench.aqm.leaf_spine_fct`, :func:`workbench.aqm.leaf_spine_mix`, all run
packet by packet on :func:`workbench.aqm.perpacket.simulate_packets`). The static
baseline is ECN marking from 20 to 200 packets with probability up to 0.1; PRED uses a per-flow slope of 0.01 from
``min_k = 5`` packets with both controllers on. Bottleneck 10 Gbit/s, base RTT 100 us (BDP 83 packets).

The leaf-spine claim's setting
------------------------------
What is published about PRED's leaf-spine simulation, and where it comes from:

* the abstract (https://www.usenix.org/conference/nsdi25/presentation/du): physical testbed and large-scale
  simulations; 66% lower switch queue and up to 80% lower FCT than static-threshold methods, 34% lower tail FCT
  than ACC;
* two independent readers' summaries of the paper's PDF (public GitHub paper-notes collections, found by text
  search for "Flow Concurrent Stabilizer"): NS-3, a 128-host leaf-spine at 10 Gbit/s, WebSearch at 90% load;
  small-flow p99 FCT 1.4 ms with PRED against 4.34 ms with ECNsharp (68% lower) and 6.68 ms with CoDel (80% lower)
  -- so the "68-80%" is against ECNsharp and CoDel, and no static-ECN number or threshold is given; PRED's
  parameters: T_FCS 1.25 RTT, T_QLA 5 RTT in simulation, slope step 0.025, minK step 5 packets, beta 0.4,
  maxK fixed at 500 KB;
* a third-party NS-3 reimplementation (GitHub atharv02ag/Implementation-of-PRED-in-ns-3,
  ``scratch/leaf_spine_ecn.cc``): 8 spines, 8 leaves x 16 servers, 10 Gbit/s and 10 us per link, 1000-packet
  buffers, DCTCP with IW 10, step ECN at 70 packets as the baseline.

Not published (in what the workbench can read), hence assumed in ``pred-leafspine-mix``: a non-blocking fabric of
16 leaves x 8 hosts with 8 spines (the shape of the ``fabric-websearch-128`` network the packet engine is validated
on), 10 us per link (base RTT ~80 us, BDP ~67 packets; the reimplementation's value), 1000-packet buffers (above
PRED's 500 KB maxK), a 10 ms minimum RTO, and the static baselines, which are swept: step K = 5, 15, 30, 65 packets
(65 is DCTCP's recommendation at 10 Gbit/s) and RED 20-200 packets with probability up to 0.1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import experiments as ex
from .._deps import remember
from ..aqm import MIXES, PRED_DEFAULT
from ..aqm.fluid import steady_state
from ..viz import aqm as viz
from . import Check, InRange, Measured, Paper, Trend, claim, figure

PAPER = Paper(
    "pred",
    title="Performance-oriented Random Early Detection for Consistently Stable Performance in Datacenters",
    citation="PRED, USENIX NSDI 2025",
    url="https://www.usenix.org/conference/nsdi25/presentation/du",
    notebook="notebooks/05_pred_aqm.ipynb",
    panel="workbench.widgets.aqm:pred_panel",
    dashboard="PRED adaptive ECN marking",
    cost_s=80,  # claims + figures, cold, 2 cores (make reproduce, 2026-11-27): orders the first run
)

N_FLOWS = (2, 4, 8, 16, 32)


def run(experiment: str, grid) -> pd.DataFrame:
    """One seed of ``experiment`` over ``grid`` through :func:`workbench.experiments.sweep` (serially, cached);
    a point that raises fails the claim with its parameters."""
    return ex.sweep(experiment, grid, seeds=1, client=False, progress=False)


@remember
def sweep(scale: str) -> pd.DataFrame:
    """Queue vs concurrency, fluid and packet level (``pred-queue-vs-concurrency``, cached per scale):
    ``marking, model, n_flows, queue_pkts, utilization``."""
    df = run(
        "pred-queue-vs-concurrency",
        {
            "n_flows": list(N_FLOWS),
            "model": ["fluid", "packet"],
            "marking": ["static", "pred"],
            "duration_s": 0.05 if scale == "full" else 0.02,
        },
    )
    return df[["marking", "model", "n_flows", "queue_pkts", "utilization"]]


@remember
def mixed(scale: str) -> pd.DataFrame:
    """8 long flows plus web-search flows at 50% load on one bottleneck, static vs PRED (``pred-dumbbell-fct``):
    ``marking, size_class, count, unfinished, p50_s, p99_s, mean_queue_pkts, utilization``."""
    df = run(
        "pred-dumbbell-fct",
        {"n_long_flows": 8, "load": 0.5, "marking": ["static", "pred"], "duration_s": 2.0 if scale == "full" else 1.0},
    )
    return df[["marking", "size_class", "count", "unfinished", "p50_s", "p99_s", "mean_queue_pkts", "utilization"]]


def per_run(fct: pd.DataFrame) -> pd.DataFrame:
    """The per-run columns (``mean_queue_pkts, utilization``) of an FCT table, one row per marking."""
    return fct.groupby("marking", sort=False)[["mean_queue_pkts", "utilization"]].first()


@remember
def fabric(scale: str) -> pd.DataFrame:
    """Web-search flows at 90% load on a leaf-spine, static vs PRED, routed by ECMP and by packet spraying
    (``pred-fct-vs-load``; 128 hosts for 50 ms at full scale, 32 hosts for 30 ms at quick scale).

    No claim or figure computes it (``workbench reproduce`` does not run it; the leaf-spine claim measures
    ``pred-leafspine-mix``): notebook 05 runs its ECMP points at quick scale (the same cached runs), and the
    full-scale runs (~10 s of CPU each) are ``workbench sweep run pred-fct-vs-load``."""
    size = (
        {"leaves": 8, "spines": 4, "hosts_per_leaf": 16, "duration_s": 0.05}
        if scale == "full"
        else {"leaves": 4, "spines": 2, "hosts_per_leaf": 8, "duration_s": 0.03}
    )
    df = run("pred-fct-vs-load", {"load": 0.9, "marking": ["static", "pred"], "routing": ["ecmp", "spray"], **size})
    return df[
        ["routing", "marking", "size_class", "count", "unfinished", "p50_s", "p99_s", "mean_queue_pkts", "utilization"]
    ]


def ecmp(scale: str) -> pd.DataFrame:
    """The ECMP rows of :func:`fabric` (the paper's setting)."""
    df = fabric(scale)
    return df[df.routing == "ecmp"].drop(columns="routing")


#: Seeds of the leaf-spine mix study per scale.
MIX_SEEDS = {"full": 2, "quick": 1}
#: Static baselines the mix study compares PRED with (step thresholds K and one RED ramp).
MIX_BASELINES = ("step-5", "step-15", "step-30", "step-65", "red-20-200")


def mix_grid(scale: str, mixes: tuple[str, ...] = MIXES) -> list[dict]:
    """Points of the leaf-spine mix study (``pred-leafspine-mix``): every mix with PRED and with every static
    baseline of :data:`MIX_BASELINES`. Full scale is the paper's fabric (128 hosts, 15 ms of arrivals); quick scale
    a 32-host leaf-spine (8 leaves x 4 hosts, 4 spines) for 10 ms."""
    size = (
        {"duration_s": 0.015}
        if scale == "full"
        else {"leaves": 8, "spines": 4, "hosts_per_leaf": 4, "duration_s": 0.01}
    )
    points = []
    for mix in mixes:
        points.append({"mix": mix, "marking": "pred", **size})
        points += [{"mix": mix, "marking": "static", "baseline": b, **size} for b in MIX_BASELINES]
    return points


def mix_sweep(scale: str, mixes: tuple[str, ...] = MIXES, *, client=False, progress: bool = False) -> pd.DataFrame:
    """The leaf-spine mix study at ``scale`` (cached per point and seed): one row per mix x marking x baseline x
    seed x size class. ``client`` as in :func:`workbench.experiments.sweep` (default serial)."""
    grid = mix_grid(scale, mixes)
    return ex.sweep("pred-leafspine-mix", grid, seeds=MIX_SEEDS[scale], client=client, progress=progress)


@remember
def _mix_runs(scale: str, mixes: tuple[str, ...]) -> pd.DataFrame:
    """:func:`mix_sweep`, serially, once per process (the claim, the table and both figures read it)."""
    return mix_sweep(scale, mixes)


def web_fct(scale: str, baseline: str = "red-20-200") -> pd.DataFrame:
    """FCT by size class of the leaf-spine claim's web-search runs (:func:`mix_sweep`, web search alone), PRED and
    the static ``baseline`` (one of :data:`MIX_BASELINES`), mean over seeds: ``marking, size_class, count, p50_s,
    p99_s, mean_queue_pkts`` with ``marking`` ``static`` or ``pred``."""
    if baseline not in MIX_BASELINES:
        raise ValueError(f"baseline must be one of {', '.join(MIX_BASELINES)}; got {baseline!r}")
    df = _mix_runs(scale, ("websearch",))
    df = df[(df.marking == "pred") | (df.baseline == baseline)]
    cols = ["count", "p50_s", "p99_s", "mean_queue_pkts"]
    out = df.groupby(["marking", "size_class"], sort=False)[cols].mean().reset_index()
    order = {"static": 0, "pred": 1}
    return out.sort_values("marking", key=lambda m: m.map(order), kind="stable").reset_index(drop=True)


def small_flow_fct(fct: pd.DataFrame) -> pd.DataFrame:
    """The small-flow rows (< 100 KB) of an FCT table of one routing, indexed by marking."""
    return fct[fct["size_class"].str.startswith("small")].set_index("marking")


@remember
def routing_comparison(scale: str) -> pd.DataFrame:
    """Static vs PRED on the leaf-spine at 90% load (:func:`fabric`), routed by ECMP and by packet spraying: mean
    switch queue (packets), small-flow p99 FCT (ms) and PRED's change of that p99 (percent, negative is lower)."""
    rows = []
    for routing, fct in fabric(scale).groupby("routing", sort=False):
        queue = per_run(fct)["mean_queue_pkts"]
        p99_ms = small_flow_fct(fct)["p99_s"] * 1e3
        rows.append(
            {
                "routing": routing,
                "static_queue_pkts": queue["static"],
                "pred_queue_pkts": queue["pred"],
                "static_small_p99_ms": p99_ms["static"],
                "pred_small_p99_ms": p99_ms["pred"],
                "pred_vs_static_pct": 100 * (p99_ms["pred"] / p99_ms["static"] - 1),
            }
        )
    return pd.DataFrame(rows)


def _packet(scale: str, marking: str) -> np.ndarray:
    df = sweep(scale)
    return df[(df.model == "packet") & (df.marking == marking)].sort_values("n_flows")["queue_pkts"].to_numpy()


@claim(
    PAPER,
    "static_queue_grows",
    text="With static RED thresholds the standing queue grows with the number of concurrent long flows.",
    paper_value="grows with concurrency",
    compare=Trend("increasing", slack=0.05, min_change=1.0),
    note="Per packet (pred-queue-vs-concurrency version 2): 79 -> 188 packets for 2 -> 32 flows (quick scale, 20 ms "
    "windows still settling: 59 -> 183); on the chunked engine it read 50 -> 178 (quick 41 -> 167). The per-packet "
    "queue sits ~1.6x above the fluid steady state for 2-8 flows because its DCTCP senders keep adding 1/cwnd per "
    "unmarked ACK in the window in which they cut (Linux holds the window for that round, CWR; the fluid model "
    "does not grow it): the fluid balance with that growth, 1 = P W p / 2 instead of 1 - P = P W p / 2, gives 72, "
    "105 and 155 packets at 2, 4 and 8 flows against the measured 79, 110 and 165. From 16 flows the queue sits "
    "at the ramp's 200-packet end.",
)
def _static_grows(scale):
    q = _packet(scale, "static")
    return Measured(
        q.tolist(),
        f"{q[0]:.0f} -> {q[-1]:.0f} pkts for {N_FLOWS[0]} -> {N_FLOWS[-1]} flows",
        {"n_flows": list(N_FLOWS), "queue_pkts": q.round(2).tolist()},
    )


def _flat_verdict(ratio: float) -> str:
    return "reproduced" if ratio <= 0.1 else ("partial" if ratio <= 0.3 else "not reproduced")


@claim(
    PAPER,
    "fcs_keeps_queue_flat",
    text="Scaling the marking slope with the number of flows keeps the standing queue roughly flat as concurrency "
    "grows.",
    paper_value="roughly flat (stable up to ~32 flows)",
    compare=Check(_flat_verdict, "PRED's queue range <= 10% of the static queue's range over 2-32 flows"),
    note="Per packet: PRED 5.9-8.5 packets against static 79-188 (range ratio 0.02; quick 4.5-8.2 against 59-183, "
    "0.03); on the chunked engine 3.1-11.1 against 50-178 (0.06; quick 0.07). The per-packet static queue grew "
    "(see the claim above) and PRED's range narrowed, so the verdict holds with more margin.",
)
def _fcs_flat(scale):
    qs, qp = _packet(scale, "static"), _packet(scale, "pred")
    ratio = float(np.ptp(qp) / np.ptp(qs))
    return Measured(
        ratio,
        f"PRED queue {qp.min():.1f}-{qp.max():.1f} pkts vs static {qs.min():.0f}-{qs.max():.0f} "
        f"(range ratio {ratio:.2f})",
        {"pred_queue_pkts": qp.round(2).tolist()},
    )


@remember
def scaling_sweep(scale: str) -> pd.DataFrame:
    """Fluid steady state for static thresholds and FCS with square-root and linear slope scaling, 1-64 flows."""
    n = list(range(1, 65))
    points = [{"n_flows": k, "model": "fluid", "marking": "static"} for k in n] + [
        {"n_flows": k, "model": "fluid", "marking": "pred", "fcs_scaling": s} for s in ("sqrt", "linear") for k in n
    ]
    df = run("pred-queue-vs-concurrency", points)
    label = np.where(df.marking == "static", "static", np.where(df.fcs_scaling == "sqrt", "FCS sqrt(N)", "FCS linear"))
    return df.assign(marking=label)[["marking", "model", "n_flows", "queue_pkts", "utilization"]]


def _scaling_verdict(value) -> str:
    linear, sqrt = value
    if linear <= 0.1 and sqrt >= 0.3:
        return "reproduced"
    return "partial" if linear < sqrt else "not reproduced"


@claim(
    PAPER,
    "linear_over_sqrt",
    text="Scaling the slope linearly with the flow count keeps the queue flat where square-root scaling does not.",
    paper_value="linear scaling chosen over square root",
    compare=Check(_scaling_verdict, "linear growth <= 10% and sqrt growth >= 30% over 1-32 flows"),
)
def _linear_over_sqrt(scale):
    df = scaling_sweep(scale)
    growth = {}
    for name in ("FCS linear", "FCS sqrt(N)"):
        q = df[(df.marking == name) & (df.n_flows <= 32)].sort_values("n_flows").queue_pkts.to_numpy()
        growth[name] = float(q.max() / q[0] - 1)
    lin, sq = growth["FCS linear"], growth["FCS sqrt(N)"]
    return Measured([lin, sq], f"queue growth 1 -> 32 flows: linear {lin:+.0%}, sqrt {sq:+.0%}", growth)


@claim(
    PAPER,
    "stability_limit",
    text="With slope scaling the queue stays stable up to about 32 concurrent long flows.",
    paper_value="about 32 flows",
    compare=InRange(24, 40, partial_low=16, partial_high=64),
    expected="partial",
    note="In the fluid model the FCS queue is flat until DCTCP's two-packet minimum window forces q >= 2N - BDP; at "
    "10 Gbit/s and 100 us (BDP 83 packets) that happens near 47 flows, so the limit scales with the BDP and the "
    "paper's ~32 corresponds to a smaller BDP than ours.",
)
def _stability(scale):
    n = np.arange(1, 129 if scale == "full" else 97)
    q = steady_state(n, **PRED_DEFAULT.fluid_marking().kwargs())
    limit = int(n[q <= 2 * q[0]].max())
    return Measured(limit, f"flat up to {limit} flows (queue <= 2x the 1-flow queue)", {"queue_1_flow": float(q[0])})


@claim(
    PAPER,
    "queue_66_lower",
    text="PRED keeps a much lower switch queue than static thresholds.",
    paper_value="66% lower queue",
    compare=InRange(0.56, 0.76, partial_low=0.3, partial_high=1.0),
    expected="partial",
    note="Direction reproduced, magnitude larger: with 8 long flows and 50% web search the static ramp (20-200 "
    "packets, max p 0.1) sits at ~180 packets per packet (~130 on the chunked engine, whose senders did not grow "
    "their window in the round they cut) while PRED's steep concurrency-scaled slope holds ~7, so the reduction "
    "(96% at full and quick scale, as on the chunked engine) depends mostly on how high the static baseline's "
    "thresholds are; the paper's baseline is not reproduced exactly.",
)
def _queue_lower(scale):
    links = per_run(mixed(scale))
    red = 1 - links.loc["pred", "mean_queue_pkts"] / links.loc["static", "mean_queue_pkts"]
    return Measured(
        float(red),
        f"{red:.0%} lower ({links.loc['static', 'mean_queue_pkts']:.0f} -> "
        f"{links.loc['pred', 'mean_queue_pkts']:.1f} pkts)",
    )


@claim(
    PAPER,
    "similar_throughput",
    text="PRED lowers the queue at similar throughput.",
    paper_value="similar throughput",
    compare=InRange(0.9, 1.05, partial_low=0.8),
    note="Per packet PRED runs the bottleneck at 0.966 of capacity against static's 1.000 (quick 0.961; chunked "
    "engine 0.954, quick 0.961): PRED's ~7-packet queue runs dry now and then.",
)
def _throughput(scale):
    links = per_run(mixed(scale))
    ratio = links.loc["pred", "utilization"] / links.loc["static", "utilization"]
    return Measured(
        float(ratio),
        f"utilization {links.loc['pred', 'utilization']:.3f} vs "
        f"{links.loc['static', 'utilization']:.3f} ({ratio:.3f}x)",
    )


@claim(
    PAPER,
    "fct_up_to_80_lower",
    text="PRED lowers flow completion time on a bottleneck shared with long flows.",
    paper_value="up to 80% lower FCT",
    compare=InRange(0.6, 0.9, partial_low=0.3),
    expected="partial",
    note="On one 10 Gbit/s bottleneck with 8 long flows and 50% web-search load the best reduction (small-flow "
    "p50) is 52% per packet at full scale (2 s of arrivals; 51% at quick scale, 1 s) against 43% on the chunked "
    "engine (quick 55%): short flows gain the ~170 packets of queue PRED removes (about 200 us; the per-packet static "
    "queue is ~50 packets higher than the chunked one's) but their FCT also includes slow start over a 100 us RTT, "
    "which PRED does not change. The small-flow p50 sits at a boundary between RTT rounds: PRED's reads 0.24 ms "
    "with 0.3-0.8 s of arrivals and 0.33 ms with 1-2 s (static ~0.68 ms throughout), so windows below 1 s read "
    "~64% and would flip the verdict; the quick scale uses 1 s for that reason.",
)
def _fct(scale):
    fct = mixed(scale)
    s = fct[fct.marking == "static"].set_index("size_class")
    p = fct[fct.marking == "pred"].set_index("size_class")
    classes = [c for c in s.index if s.loc[c, "count"] >= 20]
    red = {f"{c} {q}": float(1 - p.loc[c, q] / s.loc[c, q]) for c in classes for q in ("p50_s", "p99_s")}
    best = max(red, key=red.get)
    return Measured(red[best], f"best {red[best]:.0%} lower ({best})", {k: round(v, 3) for k, v in red.items()})


def mix_cached(scale: str) -> bool:
    """Whether every point and seed of the mix study at ``scale`` is in the experiment cache (so loading it is
    instant)."""
    exp = ex.get("pred-leafspine-mix")
    return all(
        ex.cache_path(exp, ex.cache_key(exp, p, 0, r)).exists()
        for p in exp.points(mix_grid(scale))
        for r in range(MIX_SEEDS[scale])
    )


@remember
def mix_table(scale: str, mixes: tuple[str, ...] = MIXES) -> pd.DataFrame:
    """Small-flow (< 100 KB) p99 FCT of PRED against every static baseline in every mix (:func:`mix_sweep`).

    PRED and the static runs at one seed carry the same web-search flows (marking, baseline and mix are treatments),
    so PRED's change is paired per seed: ``change_pct`` is the mean over seeds of ``100 * (pred / static - 1)``
    (negative: PRED lower) and ``change_sem_pct`` its standard error. Columns: ``mix, baseline, seeds,
    static_p99_ms, static_sem_ms, pred_p99_ms, pred_sem_ms, change_pct, change_sem_pct, static_queue_pkts,
    pred_queue_pkts`` (mean queue over the switch ports).
    """
    df = _mix_runs(scale, tuple(mixes))
    small = df[df["size_class"].str.startswith("small")]
    pred = small.loc[small.marking == "pred", ["mix", "seed", "p99_s", "mean_queue_pkts"]]
    static = small[small.marking == "static"].merge(pred, on=["mix", "seed"], suffixes=("", "_pred"))
    static = static.assign(
        static_ms=static.p99_s * 1e3,
        pred_ms=static.p99_s_pred * 1e3,
        change=100 * (static.p99_s_pred / static.p99_s - 1),
    )
    g = static.groupby(["mix", "baseline"], sort=False)
    out = pd.DataFrame(
        {
            "seeds": g.size(),
            "static_p99_ms": g.static_ms.mean(),
            "static_sem_ms": g.static_ms.sem(),
            "pred_p99_ms": g.pred_ms.mean(),
            "pred_sem_ms": g.pred_ms.sem(),
            "change_pct": g.change.mean(),
            "change_sem_pct": g.change.sem(),
            "static_queue_pkts": g.mean_queue_pkts.mean(),
            "pred_queue_pkts": g.mean_queue_pkts_pred.mean(),
        }
    )
    return out.reset_index()


def _leafspine_verdict(value) -> str:
    weakest, strongest = value
    if weakest >= 0.68:
        return "reproduced"
    return "partial" if strongest >= 0.3 else "not reproduced"


@claim(
    PAPER,
    "small_flow_p99_leaf_spine",
    text="In a leaf-spine fabric at 90% load PRED lowers the small-flow p99 FCT well below static ECN.",
    paper_value="68-80% lower small-flow p99 FCT",
    compare=Check(
        _leafspine_verdict,
        "reproduced if >= 68% lower than even the best static baseline; partial if >= 30% lower than some",
    ),
    expected="partial",
    note="Measured on the per-packet engine (every packet and ACK through every hop) in the paper's setting as far as it is published (128-host "
    "leaf-spine, 10 Gbit/s links, DCTCP, web search alone at 90% load; non-blocking 16 x 8 hosts with 8 spines, "
    "10 us links and 1000-packet buffers assumed) against five static baselines: step K = 5, 15, 30, 65 packets and "
    "RED 20-200 (p 0.1). The paper's 68-80% is PRED (1.4 ms) against ECNsharp (4.34 ms) and CoDel (6.68 ms), per "
    "readers' summaries of the paper; its static-ECN thresholds are not published. At full scale (2 seeds, paired) "
    "PRED's small-flow p99 (1.2 ms) is 61-75% lower than K = 15, 30, 65 and RED 20-200, whose busiest ports hold "
    "40-140 packets on average against PRED's ~13; against K = 5 it is 18 +- 12% lower, not significant with two "
    "seeds (quick scale: 2% higher). PRED pays a little in medium flows (p50 ~7.3 ms against 6.3-6.8 ms with "
    "K = 15-65 and RED). With long-lived background flows or incast added PRED stays 34-71% lower against K >= 15 "
    "and RED and 7-12% lower against K = 5 (within the seed spread with background flows). So the gain is against static thresholds set for the BDP (~67 packets "
    "at 10 us links), not against static marking as such. The other leaf-spine study (pred-fct-vs-load: 8 x 16 "
    "hosts, 4 spines at 40 Gbit/s, RED 20-200; run by the experiment, not by this claim) agrees since it runs per "
    "packet (version 2): small-flow p99 76% lower under ECMP and 75% sprayed at full scale (quick, 32 hosts: 69% "
    "and 77%); on the chunked engine, whose "
    "host NICs marked with a 5-20 packet ramp that throttled senders before the switch thresholds mattered, it "
    "found ~equal FCT.",
)
def _fabric(scale):
    table = mix_table(scale, ("websearch",))
    web = table[table["mix"] == "websearch"].set_index("baseline")
    red = -web["change_pct"] / 100
    best, worst = web["static_p99_ms"].idxmin(), web["static_p99_ms"].idxmax()
    weakest, strongest = float(red[best]), float(red.max())

    def pct(r: float) -> str:
        return f"{r:.0%} lower" if r >= 0 else f"{-r:.0%} higher"

    return Measured(
        [weakest, strongest],
        f"{pct(weakest)} than the best static baseline ({best}: p99 {web.loc[best, 'static_p99_ms']:.2f} -> "
        f"{web.loc[best, 'pred_p99_ms']:.2f} ms); {pct(float(red[worst]))} than the worst ({worst}); "
        f"web search alone, {int(web.loc[best, 'seeds'])} seed(s)",
        {b: round(float(red[b]), 3) for b in web.index},
    )


@figure(PAPER, "queue_vs_concurrency")
def _fig_sweep(scale):
    return viz.queue_vs_concurrency(sweep(scale))


@figure(PAPER, "slope_scaling")
def _fig_scaling(scale):
    return viz.queue_vs_concurrency(scaling_sweep(scale), title="Fluid standing queue: static vs FCS scalings")


@figure(PAPER, "fct_by_class")
def _fig_fct(scale):
    return viz.fct_by_class(mixed(scale), title="FCT by size class, one bottleneck")


@figure(PAPER, "fabric_fct")
def _fig_fabric(scale):
    fct = web_fct(scale)
    n = _mix_runs(scale, ("websearch",)).seed.nunique()
    return viz.fct_by_class(
        fct,
        title=f"FCT by size class, leaf-spine at 90% load: PRED vs static RED 20-200 (web search, "
        f"{n} seed{'s' if n > 1 else ''})",
    )


@figure(PAPER, "leafspine_mix")
def _fig_mix(scale):
    # web search alone: the runs the claim measured (the other mixes: the registered experiment pred-leafspine-mix)
    return viz.pred_vs_baselines(
        mix_table(scale, ("websearch",)),
        title="PRED's change of small-flow p99 FCT vs each static baseline, leaf-spine, web search at 90% load",
    )
