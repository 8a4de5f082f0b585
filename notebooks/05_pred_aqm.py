# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   workbench:
#     requires_data:
#     - fabric-websearch-128/ws_128_10g_90_25ms.cm
#     - fabric-websearch-128/ws_128_10g_90_25ms.spines
#     - fabric-websearch-128/ws_128_10g_90_50ms.cm
#     - fabric-websearch-128/ws_128_10g_90_50ms.spines
# ---

# %% [markdown]
# # PRED: RED/ECN marking that adapts to flow concurrency
#
# A switch that marks ECN with fixed RED thresholds lets its standing queue grow with the number of DCTCP flows that
# share it. PRED (*Performance-oriented Random Early Detection for Consistently Stable Performance in Datacenters*,
# USENIX NSDI 2025) re-parameterizes the ramp by its start point `minK` and slope `lambda = maxP/(maxK - minK)` and
# adapts both: a **Flow Concurrent Stabilizer** scales the slope with the number of concurrent flows (counted every
# ~1.25 RTT), and a **Queue Length Adjuster** hill-climbs a utility of throughput (weight 0.4) and queue every ~5 RTT.
# This notebook reproduces its claims with the workbench's fluid model and its per-packet simulation.
#
# **What moved (issue 23).** The three packet-level studies of this notebook (`pred-queue-vs-concurrency`,
# `pred-dumbbell-fct`, `pred-fct-vs-load`) ran on a chunked simpy engine that sent windows as trains of up to 16
# packets over fluid queues; on the loaded 128-host fabric it was 1.8-6.8x off the per-packet engine on FCT tails,
# so it is gone and every study here now runs packet by packet (experiment versions 2). Three things moved, each
# stated where it shows below: the static queue on one bottleneck is higher (~180 instead of ~130 packets with 8
# flows), so PRED's FCT gain there is larger (52% instead of 43%, small-flow p50); the leaf-spine study
# `pred-fct-vs-load` now finds PRED's small-flow p99 76% lower than the static ramp (it found ~equal before),
# because its host NICs no longer mark; and the bottleneck queue traces are gone (the per-packet engine samples no
# queue). Every verdict is unchanged.

# %%
import pandas as pd
from tqdm.auto import tqdm

from workbench import aqm, data, experiments, viz
from workbench.aqm import validation
from workbench.aqm.replay import LeafSpineNetwork, fct_statistics, read_connection_matrix, replay
from workbench.reproductions import build_figures, show_claims
from workbench.reproductions import pred as rep
from workbench.viz.aqm import fct_by_class, fct_vs_load, validation_envelope
from workbench.widgets.aqm import pred_panel
from workbench.widgets.explore import explore_panel

viz.setup_notebook()
pd.set_option("display.width", 200)
pd.set_option("display.max_colwidth", 80)

# %% [markdown]
# ## The claims
#
# Measured at the "quick" configuration, which reaches the same verdicts as the paper-sized ("full") one that
# `workbench reproduce --paper pred` runs (each claim's note gives both numbers, and the chunked engine's before).
# With an empty cache measuring them takes ~20 s of CPU (a bar counts the claims); afterwards they are read back.

# %% tags=["nbval-ignore-output"]
claims = show_claims("pred", "quick", progress=True)

# %%
claims

# %% [markdown]
# ## The model in a few sentences
#
# * **Marking** (`aqm.RedMarking`): probability 0 below `minK`, a linear ramp to `maxP` at `maxK`, then 1 (DCTCP-style
#   ECN). PRED's form `RedMarking.from_slope(minK, lambda)` is the same curve with `maxP = 1`.
# * **Fluid steady state** (`aqm.steady_state`): N DCTCP flows hold windows `W = (BDP + q)/N`; a window with a mark
#   (probability `P = 1 - (1-p)^W`) is cut by `W*alpha/2` and does not grow, others grow by one packet, and
#   `alpha = p(q)` at equilibrium. So `1 - P = P*W*p/2`, i.e. roughly `lambda*(q - minK) = 2N/(BDP + q)`: with a
#   fixed slope the queue grows with N; with the slope scaled by N it does not. The delay ODE (`aqm.simulate_fluid`)
#   adds the dynamics and utilization.
# * **Per packet** (`aqm.dumbbell`, `aqm.leaf_spine_fct`, `aqm.leaf_spine_mix`, all on
#   `aqm.perpacket.simulate_packets`): every data packet and every 40 B ACK through every hop's FIFO, compiled;
#   DCTCP senders (slow start, per-window alpha, ACK clocking, fast retransmit and a 10 ms timeout), RED/ECN
#   marking or PRED's two controllers on every switch port, web-search flows with Poisson arrivals. Every flow runs
#   to completion, so a "long" flow on the bottleneck is a large one (twice its fair share of the window; the
#   experiments report `long_active`, the fraction still sending when the window closes: 1 in every run here).
#
# Static baseline: marking from 20 to 200 packets with max probability 0.1. PRED: slope 0.01 per flow from
# `minK` = 5 packets. Bottleneck 10 Gbit/s, base RTT 100 µs (BDP 83 packets of 1500 B).

# %% [markdown]
# ## Try it
#
# Number of long flows, short-flow load, RTT, the static thresholds, PRED's per-flow slope and its two controllers.
# Left: the fluid model's standing queue over concurrency (lines) and the packet simulation at the chosen point
# (markers). Right: the per-packet FCT by size class (150 ms of flows). Both come from the registered experiments
# `pred-queue-vs-concurrency` and `pred-dumbbell-fct` through `experiments.sweep` (cached: a setting seen before
# redraws at once).

# %% tags=["nbval-ignore-output"]
pred_panel()

# %% [markdown]
# ## Queue vs concurrency: fluid vs packet level
#
# PRED's queue stays within a few packets at every concurrency; the static queue climbs to the ramp's end. Per
# packet the static queue sits ~1.6x above the fluid steady state for 2-8 flows (on the chunked engine the two
# agreed within a few percent): the per-packet DCTCP senders keep adding `1/cwnd` per unmarked ACK in the window in
# which they cut, where the fluid model (and Linux, which holds the window for that round) does not grow it. The
# fluid balance with that growth, `1 = P*W*p/2` instead of `1 - P = P*W*p/2`, gives 72, 105 and 155 packets at 2,
# 4 and 8 flows against the 79, 110 and 165 measured per packet at full scale (50 ms). At quick scale (20 ms, shown
# here) the static queue has not quite settled at 2-4 flows.

# %%
sweep = rep.sweep("quick")
print(sweep.pivot_table(index="n_flows", columns=["marking", "model"], values="queue_pkts").round(1).to_string())
print(sweep[sweep.model == "packet"].pivot_table(index="n_flows", columns="marking", values="utilization")
      .round(3).to_string())

# %% tags=["nbval-ignore-output"]
figs = build_figures("pred", "quick")  # the reproduction figures draw what the claims above computed
figs["pred/queue_vs_concurrency"]

# %% [markdown]
# Why the paper scales the slope linearly: in the queue equation `lambda*(q - minK) ~ 2N/(BDP + q)` only
# `lambda` proportional to N cancels N. With square-root scaling the queue still grows as sqrt(N).

# %%
scaling = rep.scaling_sweep("quick")
print(scaling[scaling.n_flows.isin([1, 2, 4, 8, 16, 32, 64])]
      .pivot_table(index="n_flows", columns="marking", values="queue_pkts").round(1).to_string())

# %% tags=["nbval-ignore-output"]
figs["pred/slope_scaling"]

# %% [markdown]
# The delay ODE for the same sweep: mean queue, its oscillation (standard deviation) and the link utilization.

# %%
ode_static = aqm.simulate_fluid(rep.N_FLOWS, aqm.STATIC_DEFAULT)
ode_pred = aqm.simulate_fluid(rep.N_FLOWS, **aqm.PRED_DEFAULT.fluid_marking().kwargs())
print(pd.DataFrame({
    "n_flows": ode_static.n_flows,
    "static queue": ode_static.mean_queue_pkts.round(1), "static std": ode_static.std_queue_pkts.round(1),
    "static util": ode_static.utilization.round(3),
    "FCS queue": ode_pred.mean_queue_pkts.round(1), "FCS std": ode_pred.std_queue_pkts.round(1),
    "FCS util": ode_pred.utilization.round(3),
}).to_string(index=False))

# %% [markdown]
# ## Long flows plus web search on one bottleneck
#
# 8 long flows and Poisson web-search flows at 50% load, same flows for both markings: 1 s of arrivals here (quick
# scale), 2 s at full scale. Per packet the static ramp holds ~180 packets (~130 on the chunked engine), PRED ~7, so
# PRED removes more queue than before and small flows gain more: their p50 is 51-52% lower (quick, full) against
# 43% on the chunked engine. Medium and large flows gain little: their FCT is mostly their own transfer time.

# %%
mixed = rep.mixed("quick")
print(rep.per_run(mixed).round(3).to_string())
print(mixed.assign(p50_ms=mixed.p50_s * 1e3, p99_ms=mixed.p99_s * 1e3)
      .drop(columns=["p50_s", "p99_s", "mean_queue_pkts", "utilization"]).round(3).to_string(index=False))

# %% tags=["nbval-ignore-output"]
figs["pred/fct_by_class"]

# %% [markdown]
# ## Leaf-spine at 90% load
#
# `pred-fct-vs-load`: at full scale 128 hosts (8 leaves x 16 hosts at 10 Gbit/s, 4 spines at 40 Gbit/s, from
# `workbench.fabric.topology`), ECMP, web-search flows between random hosts for 50 ms; here the quick scale, 32 hosts
# (4 leaves x 8, 2 spines) for 30 ms. Every switch port marks; host NICs are plain FIFOs. No claim measures this
# study (the leaf-spine claim runs `pred-leafspine-mix`, below), so `workbench reproduce` does not run it; this
# notebook runs it at quick scale, and the full-scale numbers quoted here come from `workbench sweep run
# pred-fct-vs-load` (command below; ~10 s of CPU per run).
#
# **This moved most.** On the chunked engine this study found PRED and static ~equal (small-flow p99 1.18 vs
# 1.22 ms at full scale) because that engine's host NICs marked with a 5-20 packet ramp (a stand-in for TCP small
# queues) that throttled every sender at its own NIC before the switch thresholds mattered. Per packet the NICs do
# not mark, the static ramp lets switch ports queue, and PRED's small-flow p99 is 76% lower at full scale (7.8 ->
# 1.9 ms, ECMP) and 69% lower at quick scale (4.5 -> 1.4 ms), in line with the mix study below. PRED pays in medium
# and large flows (full scale, ECMP: medium p50 7.1 -> 9.8 ms, large p50 48 -> 60 ms): its switch ports run emptier
# (mean utilization 0.52 against 0.60).
#
# The runs of this section and the FCT-vs-load one below: static and PRED under ECMP at 50% and 90% load, one seed
# (4 runs, ~8 s of CPU with an empty cache; cached under `$WORKBENCH_CACHE/experiments/pred-fct-vs-load/`).

# %% tags=["nbval-ignore-output"]
FCT_GRID = {"load": [0.5, 0.9], "marking": ["static", "pred"], "routing": "ecmp",
            "leaves": 4, "spines": 2, "hosts_per_leaf": 8, "duration_s": 0.03}
fct_sweep = experiments.sweep("pred-fct-vs-load", FCT_GRID, seeds=1, client=False, progress=True)

# %%
fab = fct_sweep[fct_sweep.load == 0.9][  # the 90% runs: rep.ecmp("quick")
    ["marking", "size_class", "count", "unfinished", "p50_s", "p99_s", "mean_queue_pkts", "utilization"]]
print(rep.per_run(fab).round(3).to_string())
print(fab.assign(p50_ms=fab.p50_s * 1e3, p99_ms=fab.p99_s * 1e3)
      .drop(columns=["p50_s", "p99_s", "mean_queue_pkts", "utilization"]).round(3).to_string(index=False))

# %% tags=["nbval-ignore-output"]
fct_by_class(fab, title="FCT by size class, 32-host leaf-spine at 90% load, ECMP (pred-fct-vs-load)")

# %% [markdown]
# The same flows with packet spraying (packet `i` of a flow through spine `i mod spines`) instead of ECMP: does
# spreading the load leave PRED more to gain for small flows? Per packet PRED's gain is about the same under both
# (full scale: 76% and 75% lower; quick scale: 69% and 77%); spraying reorders packets, which costs PRED's medium
# flows most (full scale: medium p50 15.4 ms sprayed against 9.8 ms with ECMP). To keep this notebook quick the
# sprayed runs are not run here: `rep.routing_comparison("quick")` prints the comparison (four 32-host runs, ~12 s
# of CPU), and the explore panel at the end draws them with "spray" added to its routing selection.

# %% [markdown]
# ## FCT vs load: static vs PRED, ECMP vs spraying
#
# The registered experiment `pred-fct-vs-load` (one per-packet leaf-spine run per load x marking x routing x seed;
# marking and routing are treatments, so at one load and seed all four combinations carry the same flows) run by
# `experiments.sweep` and summarized by `experiments.summarize`. To keep this notebook quick the sweep is the one
# above: the quick-scale 32-host leaf-spine at two loads under ECMP with one seed; the explore panel at the end runs
# more seeds and spraying (error bars: one standard error over seeds). The full-size sweep (128 hosts, 50 ms per
# run, ~10 s of CPU per run) belongs on a cluster:
#
# ```
# workbench sweep run pred-fct-vs-load --grid load=0.3,0.5,0.7,0.9 --grid marking=static,pred \
#     --grid routing=ecmp,spray --seeds 3 [--scheduler tcp://HOST:8786] --out pred_fct_vs_load.parquet
# ```
#
# and `fct_vs_load(experiments.summarize(pd.read_parquet("pred_fct_vs_load.parquet"), ["p50_s", "p99_s"]))` draws
# it. Every run is cached under `$WORKBENCH_CACHE/experiments/pred-fct-vs-load/`, so rerunning the sweep (or the CLI
# after an interruption) computes only what is missing.

# %%
fct_summary = experiments.summarize(fct_sweep, ["p50_s", "p99_s"])
small = fct_summary[fct_summary.size_class.str.startswith("small")]
print("small flows (< 100 KB), one seed (ms):")
print(small.assign(mean_ms=small["mean"] * 1e3)
      .pivot_table(index="load", columns=["quantity", "marking", "routing"], values="mean_ms").round(3).to_string())
print(fct_sweep.groupby(["marking", "routing"]).mean_queue_pkts.mean().round(2).to_string())

# %% [markdown]
# **Light load has the longer static tails here, and why.** At 50% load the static ramp's small-flow p99
# (10.6 ms) comes out above its 90% value (4.5 ms; sprayed: 10.4 and 7.3 ms); another run found 11-17 ms at 30%
# and 60%. The switch queues do not explain it (a 30% run had no drops and no timeouts, and its busiest port averaged 67
# packets, 80 µs); the host NICs most likely do: the engine's NIC is a FIFO without a limit and
# its senders have no receive-window cap, so a large flow that meets no marking switch port (light load, or a
# rack-local path) keeps growing its window and queues thousands of packets at its own NIC, and a small flow from
# the same host waits behind them (one run: a 20 KB flow started 5 ms after a lone 30 MB flow from the same host
# takes 14 ms). Linux's TCP small queues and the reference network's 1,000-packet NIC queues bound this; the engine
# work of issue 23 brings the NIC limit, and these light-load tails will move with it. PRED suffers less because
# its ports mark from 5 packets, so more of those windows are cut.

# %% tags=["nbval-ignore-output"]
fct_vs_load(fct_summary, title="FCT vs load, 32-host leaf-spine, per packet (one seed)")

# %% [markdown]
# ## The engine on `fabric-websearch-128`: nine FCT statistics and their spread over ECMP draws
#
# Everything above runs on the per-packet engine. `workbench aqm replay FILE` replays the `fabric-websearch-128`
# dataset's connection matrices on the network its README describes; the next section checks the engine against two
# independent simulators on the same flows and paths. First, how much one run's statistics depend on the paths: the
# engine's nine statistics (mean, p50, p99 of small < 100 KB, medium 100 KB-1 MB and large >= 1 MB flows;
# `aqm.replay.fct_statistics`) under three ECMP path draws (`replay(..., seed=k)`). To keep this notebook quick the
# draws replay the first third of the 25 ms file (the 714 of its 2,119 flows that arrive in the first 8 ms, at the
# same 90% load; ~1.5 s of CPU per replay; with an empty cache the first replay also compiles the engine's NewReno
# loop, ~10 s). The p50s move by 8-24% between draws, the p99s by 1.3-1.9x, the medium and small means by 1.1-1.2x;
# the large mean moves 2.4x, because in one draw a 7.7 MB flow loses its whole first window at a full leaf uplink and,
# with no ACK and no RTT sample, waits the README's 3 s initial timeout (next section). So one run's tail is only
# comparable with another simulator's on the same paths. (Skipped, with a note, where the dataset is not on the data
# search path.)

# %% tags=["nbval-ignore-output"]
CM = "fabric-websearch-128/ws_128_10g_90_25ms.cm"
HEAD_S = 0.008  # the first third of the file's 25 ms of arrivals
draws = None
if data.find(CM) is not None:
    cm_flows = read_connection_matrix(data.find(CM))
    cm_flows = cm_flows[cm_flows.start_s < HEAD_S]
    net = LeafSpineNetwork.of_dataset("fabric-websearch-128")
    draws = pd.concat([fct_statistics(replay(cm_flows, net, seed=k)).assign(draw=k)
                       for k in tqdm(range(3), desc="ECMP draws", unit="replay")])

# %%
if draws is None:
    print(f"{CM} is not on the data search path (workbench data fetch fabric-websearch-128): replays skipped")
else:
    nine = draws.melt(id_vars=["size_class", "draw"], value_vars=["mean_s", "p50_s", "p99_s"], var_name="stat")
    table = nine.pivot_table(index=["size_class", "stat"], columns="draw", values="value", sort=False).mul(1e6)
    table["max/min"] = table.max(axis=1) / table.min(axis=1)
    print(f"{len(cm_flows)} flows (arriving in the first {HEAD_S * 1e3:g} ms), FCT (us) per ECMP draw:")
    print(table.round(2).to_string())

# %% [markdown]
# ## The engine against two references: ns-3 and htsim
#
# Two independent per-packet simulators replayed the same flows on the same pinned spines, on the README's network:
# **ns-3** (`scripts/ns3_replay.py` with the README sender corrections) and **htsim** (Broadcom's csg-htsim, the
# simulator that README derives from, with a small driver; `docs/packet_validation.md`). Ten workloads: the
# dataset's two files (90% load, 25 and 50 ms of arrivals) and eight generated the same way
# (`aqm.workload.websearch_matrix`: loads 30, 50, 70 and 90%, seeds 1 and 2, 20 ms each). Their per-flow FCTs are in
# `datasets/validation/packets/`. The two references disagree with each other where a rare event dominates a
# statistic (one 250 ms retransmission timeout moves a class's mean or p99 by tens of percent), so agreement with
# one of them is not the test. **The envelope** of a statistic runs from 0.85 x the lower of the two references to
# 1.15 x the higher; `aqm.validation.validation_points()` gives one row per workload and statistic (the engine's
# replays take ~30 s of CPU once, then come from the cache).

# %% tags=["nbval-ignore-output"]
points = validation.validation_points()

# %%
print(f"{int(points.within.sum())} of {len(points)} statistics inside the envelope, on {points.workload.nunique()} "
      "workloads; outside:")
outside = points[~points.within.astype(bool)]
print(outside.assign(ns3_us=outside.ns3 * 1e6, htsim_us=outside.htsim * 1e6, engine_us=outside.model * 1e6)
      [["workload", "metric", "ns3_us", "htsim_us", "engine_us", "error"]].round(3).to_string(index=False))
robust = validation.validation_points(without_timeouts=True)
print(f"leaving out, in all three, the flows that waited a retransmission timeout in any: "
      f"{int(robust.within.sum())} of {len(robust)} inside")
agree = validation.flow_agreement()
print("share of flows whose FCTs differ by more than 1.5x (median over workloads):")
print(agree.pivot_table(index="size_class", columns="pair", values="share_beyond", aggfunc="median", sort=False)
      .round(3).to_string())

# %% tags=["nbval-ignore-output"]
validation_envelope(points)

# %% [markdown]
# **What lies outside, and why.** 86 of the 90 statistics lie inside the envelope (73 before the engine changes of
# issue 40, below); the four outside are means and p99s of classes in which a 250 ms retransmission timeout fell on
# different flows in the three simulators: on the 25 ms file one medium flow of each reference waits a timeout and
# none of the engine's, which puts its medium mean 32% and its medium p99 17% below both; on two generated
# workloads the engine has one small-flow timeout more than htsim (+82% on the small mean) or none where both
# references have some (-67%). Leaving those few flows out of all three simulators alike (0-4 per workload), all 90
# lie inside, and every p50 is inside on the raw statistics too. Flow by flow the engine is closer to htsim than the
# two references are to each other (the table above), and about as far from ns-3 as htsim is.
#
# **The engine's 3-s timeouts, explained.** Before this check the engine finished two flows of the 25 ms file and
# five of the 50 ms file after 3.0 s, the README's initial retransmission timeout, which neither reference showed.
# Six of the seven were not lost first windows but tail losses of flows that already had an RTT sample (RTO 250 ms):
# the engine checked a flow's timer only where the first send's deadline (start + 3 s) had put the check, and a
# restart that moved the deadline earlier scheduled no earlier check. Fixed, they time out after 250-270 ms, as in
# both references. The seventh lost its whole first window at a full port: with no ACK there is neither a duplicate
# ACK nor an RTT sample, so the README's sender waits its 3 s initial RTO, and htsim does the same
# (`datasets/validation/packets/mechanisms/incast_first_window.cm`: the engine and htsim agree flow by flow; ns-3's
# handshake gives its senders an RTT sample, so it waits 250 ms). The engine met such losses more often because its
# senders left slow start one round trip after the first CE echo, where both references leave at once; it now does
# as they do, and cuts its window after every window while alpha > 0, as the README states and htsim does. Details:
# `docs/packet_validation.md`.

# %% [markdown]
# **How much of the count is timing.** Which flow loses the tail of a window at a full port, and so waits a 250 ms
# timeout, is decided by arrivals a fraction of a packet time apart. `validation.timing_spread()` replays workloads
# with every flow starting up to 1 ns later (a different draw per replay; a flow's FCT does not move in the median),
# and shows each statistic's range over the replays and how many of them lie inside the envelope. Below, the two
# generated workloads that have a statistic outside, four replays each (about 20 s of CPU once, then cached). A
# statistic inside in some replays and outside in others is decided by that timing, not by a mechanism of the engine.
# The small-flow mean of the 90% s1 workload stays outside in every replay: one 6.7 KB flow that both references lose
# at a full port and the engine does not; replays of subsets of the flows reverse that in ns-3 and in the engine alike
# (`docs/packet_validation.md`, which also has all ten workloads over eight replays).

# %% tags=["nbval-ignore-output"]
spread = validation.timing_spread(["ws_128_10g_50_20ms_s2", "ws_128_10g_90_20ms_s1"], replicas=4)

# %%
moved = spread[spread.within_share < 1]
us = {c: moved[c] * 1e6 for c in ("reference_low", "reference_high", "model", "replica_min", "replica_max")}
print(f"{len(spread)} statistics, {spread.replicas.iloc[0]} replays each; inside in every replay: "
      f"{int((spread.within_share == 1).sum())}; the others (FCT in us):")
print(moved.assign(**us, inside=(moved.within_share * moved.replicas).round().astype(int).astype(str) + " of "
                   + moved.replicas.astype(str))
      [["workload", "metric", "reference_low", "reference_high", "model", "replica_min", "replica_max", "inside"]]
      .rename(columns={"reference_low": "low", "reference_high": "high", "model": "engine", "replica_min": "min",
                       "replica_max": "max"})
      .round(0).to_string(index=False))

# %% [markdown]
# **The PRED studies below do not run these senders.** They, and notebook 13's mitigation check, run the engine's
# SACK-like senders (a loss found by three later ACKs or a fixed timeout after the drop, queues in whole packets, no
# slow-start threshold), the model their claims were measured on. Replayed with those senders on the same ten
# workloads (`validation.validation_points(loss_recovery="sack")`), 1 of the 90 statistics lies inside the envelope
# and 17 within 15% of it: 538 of 15,414 flows wait a 250 ms timeout (9 with the NewReno senders), as a slow start
# without a threshold overflows the 100-packet ports, so every p99 is 2.6-428x the nearer reference; the p50s are
# within -1% to +33%. The PRED panel's fidelity note shows that entry (`packets-sack`), not this one.

# %% [markdown]
# ## PRED's leaf-spine claim: static thresholds x workload mix
#
# The paper's claim, "68-80% lower small-flow p99 FCT in a leaf-spine at 90% load", comes from an NS-3 simulation
# of a 128-host leaf-spine at 10 Gbit/s with WebSearch traffic at 90% load. Readers' summaries of the paper give
# PRED 1.4 ms against ECNsharp's 4.34 ms (68% lower) and CoDel's 6.68 ms (80% lower): the range is against those two
# schemes, and neither the static-ECN number nor its thresholds are published where the workbench can read them
# (sources and what is assumed: the docstring of `workbench.reproductions.pred`). So here the static baseline is a
# swept parameter: step marking at K = 5, 15, 30, 65 packets (65 is DCTCP's recommendation at 10 Gbit/s) and a RED
# ramp from 20 to 200 packets. The fabric is 16 leaves x 8 hosts with 8 spines, 10 Gbit/s and 10 µs per link (base
# RTT ~80 µs), 1000-packet buffers, DCTCP, ECMP, and three mixes on top of the same web-search flows at 90% load:
# web search alone; plus 8 long-lived flows into each of 16 hosts (each sized so that it is still sending 30 ms after
# the start, then left to finish); plus 16-to-1 incast bursts of 64 KB, 2000 a second. Marking, baseline and mix are
# treatments, so at one seed every run carries the same web-search flows and PRED's change is paired per seed. It
# runs on the per-packet engine (every packet and ACK through every hop), and every flow runs to completion.
#
# The registered experiment `pred-leafspine-mix` runs it (15 ms of arrivals per run, 2 seeds: 36 runs, ~4 min of
# CPU on this machine). `workbench reproduce --paper pred` runs web search alone at full scale, the claim's runs,
# and its two figures of this study draw those runs; the background and incast mixes are run only by the
# experiment (the commands below, or the explore panel at the end). To stay quick this notebook shows web search
# alone at quick scale (a 32-host leaf-spine, 8 leaves x 4 hosts with 4 spines, 10 ms, one seed: the claim's runs,
# computed with the claims above); the full-scale numbers of all three mixes are quoted below. The full study:
#
# ```
# workbench sweep run pred-leafspine-mix --grid mix=websearch,background,incast --grid marking=static \
#     --grid baseline=step-5,step-15,step-30,step-65,red-20-200 --grid duration_s=0.015 --seeds 2 --out static.parquet
# workbench sweep run pred-leafspine-mix --grid mix=websearch,background,incast --grid marking=pred \
#     --grid duration_s=0.015 --seeds 2 --out pred.parquet
# ```

# %%
mix_table = rep.mix_table("quick", ("websearch",))
print("small flows (< 100 KB): p99 FCT (ms), PRED's change (%), web search alone, quick scale, one seed;")
print("time-mean queue over the switch ports (pkts)")
print(mix_table.round(2).to_string(index=False))

# %% tags=["nbval-ignore-output"]
figs["pred/leafspine_mix"]

# %% [markdown]
# What the lower thresholds cost: p50 and p99 FCT (ms) of every size class with web search alone, and the time-mean
# queue (packets) of the average and of the busiest switch port (quick scale, one seed).

# %%
mix_runs = rep.mix_sweep("quick", ("websearch",))
web = mix_runs[mix_runs["mix"] == "websearch"].assign(
    setting=lambda d: d.marking.where(d.marking == "pred", d.baseline))
print(web.pivot_table(index="setting", columns="size_class", values=["p50_s", "p99_s"], sort=False)
      .mul(1e3).round(2).to_string())
print(web.groupby("setting", sort=False)[["mean_queue_pkts", "max_mean_queue_pkts"]].mean().round(1).to_string())

# %% [markdown]
# The reproduction's figure of the same runs: FCT by size class, PRED against the RED 20-200 ramp.

# %% tags=["nbval-ignore-output"]
figs["pred/fabric_fct"]

# %% [markdown]
# **Where PRED's advantage appears and where it does not** (full scale, 2 seeds, from the claim's note; this study
# ran per packet before issue 23 too, so nothing here moved). With web search alone (the paper's setting) PRED's
# small-flow p99 (1.2 ms) is 61-75% below static step marking at K = 15, 30 and 65 packets and below the RED 20-200
# ramp: the claimed range, reached against exactly the thresholds one would set for this fabric's bandwidth-delay
# product (~67 packets at 10 µs per link; DCTCP recommends K = 65 at 10 Gbit/s). Those thresholds let the busiest
# ports hold 40-140 packets on average (0.1 ms at 10 Gbit/s each, several ports per path), and a short flow's tail
# is that queue; PRED's concurrency-scaled slope holds the busiest port to ~13 packets. A static threshold of K = 5
# packets does nearly the same: against it PRED is 18 +- 12% lower, not significant with two seeds (at quick scale,
# 2% higher). PRED gives up a little in medium flows: their median is ~7.3 ms against 6.3-6.8 ms with K = 15-65 and
# RED (K = 5: 7.7 ms). Adding 8 long-lived flows into each of 16 hosts, or 16-to-1 incast bursts, keeps the picture:
# 34-71% lower against K >= 15 and RED, 7-12% lower against K = 5.
#
# So the claim's magnitude reproduces, and the verdict is *partial*: PRED is 68-80% lower than static ECN set the
# usual way, not than static ECN as such, and the paper's 68-80% is against ECNsharp and CoDel, whose static-ECN
# thresholds are not published. The leaf-spine study above (`pred-fct-vs-load`, 4 spines at 40 Gbit/s, RED 20-200
# as the baseline) now agrees: 76% lower small-flow p99 at full scale. On the chunked engine it found ~equal FCT
# because that engine marked at every host NIC with a 5-20 packet ramp, which throttled every sender at its own NIC
# so the switch thresholds hardly mattered.

# %% [markdown]
# ## Explore
#
# Any parameter of `pred-fct-vs-load` as a control (a multi-select for a choice, a list `0.3, 0.9` or a range
# `0.3:0.9:4` for a number); "Run sweep" sends the grid x seeds to `experiments.sweep` (cached: points already run,
# such as the sweep above, come back at once; new ones show a progress bar) and plots the mean over seeds with error
# bars, one column per size class (raise the seeds for error bars: each 32-host run takes ~1 s of CPU at 50% load, ~3 s at 90%). Set `client=None` to run on the Dask LocalCluster (or a scheduler address).

# %% tags=["nbval-ignore-output"]
explore_panel("pred-fct-vs-load", x="load", series=["marking", "routing"], values=["p50_s", "p99_s"],
              grid=FCT_GRID, seeds=1, facet_col="size_class", client=False, scale=1e3,
              log_y=True, y_title="FCT (ms, log scale)")

# %% [markdown]
# The leaf-spine mix study the same way: `pred-leafspine-mix` with the mix, the marking and the static baseline as
# multi-selects (on a 32-host leaf-spine for 10 ms per run, so a few settings take seconds).

# %% tags=["nbval-ignore-output"]
explore_panel("pred-leafspine-mix", x="load", series=["mix", "marking", "baseline"], values=["p99_s"],
              grid={"mix": "websearch", "marking": ["static", "pred"], "baseline": "step-15", "load": [0.5, 0.9],
                    "leaves": 8, "spines": 4, "hosts_per_leaf": 4, "duration_s": 0.01},
              seeds=1, facet_col="size_class", client=False, scale=1e3, log_y=True, y_title="p99 FCT (ms, log scale)")

# %% [markdown]
# ## What differs from the paper and why
#
# * **Queue growth and FCS flatness reproduce.** Static thresholds let the queue climb from ~80 to ~190 packets
#   between 2 and 32 flows (per packet, full scale); PRED stays between ~6 and ~9 packets. Linear slope scaling is
#   flat in the fluid model where square-root scaling grows by ~70% over 1-32 flows, which is the paper's reason
#   for choosing it.
# * **Stability limit: ~47 flows, not ~32.** In the fluid model FCS holds the queue until DCTCP's two-packet minimum
#   window forces `q >= 2N - BDP`; the limit therefore scales with the bandwidth-delay product, and ours (83 packets)
#   is larger than what "about 32" implies.
# * **Queue reduction is larger than 66%** (~96%): the reduction is set mostly by how high the static baseline's
#   thresholds are; the paper's exact baseline is not reproduced.
# * **FCT gains are smaller than "up to 80%"** on one bottleneck (~52% for small flows' p50): PRED removes ~170
#   packets (~200 µs) of queue, but short flows also spend several RTTs in slow start, which marking cannot change.
# * **The leaf-spine small-flow p99 claim reproduces against usual static thresholds, not against all.** In the
#   paper's setting (128 hosts, 10 Gbit/s, web search at 90% load; the link delay, buffers and static thresholds are
#   assumed, see above) PRED's small-flow p99 is 61-75% lower than static K = 15-65 and RED 20-200, and within the
#   seed spread of K = 5 (18 +- 12% lower); `pred-fct-vs-load`'s fabric (4 spines at 40 Gbit/s) gives 76% lower
#   than RED 20-200, ECMP or sprayed.
# * **Model limits.** Every packet-level number here is per packet, on an engine whose DCTCP senders keep growing
#   the window in the round they cut (which raises the static queue on one bottleneck ~1.6x above the fluid model)
#   and that is being brought to the `fabric-websearch-128` reference network (slow-start threshold, NewReno, RTO
#   estimation, byte-counted buffers: issue 23); the numbers will move with it. PRED's QLA gets bounds the paper
#   does not state (`minK` within 0-40 packets, slope offset within +-0.25, slope at least one flow's), because a
#   hill climb on a noisy utility otherwise drifts.
