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
# ---

# %% [markdown]
# # Hotspot-aware placement: hot ToRs, their latency cost, and placement that avoids them
#
# *Preventing Network Bottlenecks: Accelerating Datacenter Services with Hotspot-Aware Placement for Compute and
# Storage* (Google, USENIX NSDI 2025) finds that ToR uplinks past a utilization knee (~75%) add queueing latency that
# hurts the tasks behind them, that network-intensive tasks often land on those hot ToRs, and that placing tasks by
# ToR utilization (and migrating the heaviest off hot ToRs) removes most hotspots. This notebook reproduces the
# latency curve with bursty sources and the placement comparison in a synthetic cluster.

# %%
import pandas as pd

from workbench import placement, viz
from workbench.reproductions import build_figures, show_claims
from workbench.reproductions import hotspots as rep
from workbench.widgets.placement import hotspot_panel

viz.setup_notebook()
pd.set_option("display.width", 200)
pd.set_option("display.max_colwidth", 80)

# %% [markdown]
# ## The claims
#
# Full-scale configuration; `workbench reproduce --paper hotspots` prints the same rows.

# %%
show_claims("hotspots", "full")

# %% [markdown]
# ## The model in a few sentences
#
# * **Latency vs utilization** (`placement.latency_vs_utilization`): one 10 Gbit/s link (1.2 µs per 1500-B packet,
#   exponential service) fed by Gamma-renewal arrivals (`workbench.arrivals`, CV 2 for bursty sources, CV 1 for
#   Poisson), waiting times by the Lindley recursion; the same queue's exact mean is GI/M/1
#   (`placement.exact_mean_latency`). The knee (`placement.knee_utilization`) is the point of the normalized curve
#   farthest below its chord, located on the exact curve over 5-95% utilization in 1% steps.
# * **Cluster** (`placement.make_cluster`): 1,000 racks x 40 slots, 80% full; ToR uplinks of 100/200/400 Gbit/s
#   (30/40/30%); lognormal task demands (sigma 1.5) scaled to 40% mean uplink utilization; the scheduler sees a
#   prediction, the realized demand is the prediction x lognormal noise (sigma 0.5). Network-intensive = top decile.
# * **Placement** (`placement.place`): *random* slots, or *aware*: each task samples 4 racks with free slots and takes
#   the one with the lowest ToR utilization as of its batch, then tasks of network-intensive size are migrated off
#   ToRs above 75% realized utilization to the roomiest ToRs. Hot ToR: realized utilization above 75%.

# %% [markdown]
# ## Try it
#
# Source burstiness, mean utilization, demand tail, prediction noise, choices per task, the hot threshold and
# migration. Left: latency vs utilization with its knee; right: ToR utilization across racks for both policies.

# %% tags=["nbval-ignore-output"]
hotspot_panel()

# %% [markdown]
# ## Latency vs utilization

# %%
curves = rep.curves("full")
table = pd.concat({k: v.set_index("utilization")[["mean_latency_s", "tail_latency_s"]]
                   .rename(columns={"mean_latency_s": "mean (µs)", "tail_latency_s": "tail (µs)"}) * 1e6
                   for k, v in curves.items()}, axis=1)
print("queueing latency")
print(table.round(2).to_string())
bursty = curves["bursty (CV 2)"]
print("knee of the exact curve (CV 1, 2, 4):",
      [placement.knee_utilization(placement.KNEE_GRID, placement.exact_mean_latency(placement.KNEE_GRID, cv=cv))
       for cv in (1.0, 2.0, 4.0)])
print("knee of the simulated CV-2 curve (one seed, 5% steps):",
      placement.knee_utilization(bursty.utilization, bursty.mean_latency_s))

# %% tags=["nbval-ignore-output"]
figs = build_figures("hotspots", "full")
figs["hotspots/latency_vs_utilization"]

# %% [markdown]
# ## Random vs hotspot-aware placement
#
# Eight independent 1,000-rack clusters, each placed both ways.

# %%
study = rep.study("full")
print(study.groupby("policy")[["hot_tors", "hot_fraction", "intensive_on_hot", "other_on_hot", "max_utilization",
                               "migrated"]].mean().round(4).to_string())

# %% tags=["nbval-ignore-output"]
figs["hotspots/hot_tors"]

# %% tags=["nbval-ignore-output"]
figs["hotspots/tor_utilization"]

# %% [markdown]
# What the hot ToRs cost: each task's queueing latency read off the bursty latency curve at its ToR's utilization
# (ToRs beyond the curve's 95% end get the 95% value, so overloaded ToRs are understated).

# %%
cluster, placed = rep.example("full")
by_policy = placement.latency_by_policy(cluster, placed, bursty)
words = {"hot_tors": "hot ToRs", "mean_latency_s": "mean latency (µs)", "p99_latency_s": "p99 latency (µs)",
         "intensive_mean_latency_s": "network-intensive tasks' mean latency (µs)"}
print(by_policy.set_index(["policy", "hot_tors"]).mul(1e6).round(2).reset_index().rename(columns=words)
      .to_string(index=False))

# %% [markdown]
# ## Explore: sweep a parameter study
#
# Any parameter of the registered experiment `placement-hot-tors` as a control (a multi-select for a choice, a list
# `0.3,0.9` or a range `start:stop:count` for a number). The panel runs the grid below when it is built (cached under
# `$WORKBENCH_CACHE/experiments/placement-hot-tors/`, so re-running the notebook reads it back); "Run sweep" runs a
# new grid through `experiments.sweep` and plots the mean over seeds with error bars of one standard error. Here: the
# share of hot ToRs vs the mean utilization, random vs hotspot-aware placement, on 200 racks.

# %% tags=["nbval-ignore-output"]
from workbench.widgets.explore import explore_panel

explore_panel("placement-hot-tors", x="mean_utilization", series=["policy"], values=["hot_fraction"],
              grid={"mean_utilization": [0.3, 0.4, 0.5, 0.6], "racks": 200}, seeds=3, client=False,
              y_title="share of ToRs that are hot")

# %% [markdown]
# ## What differs from the paper and why
#
# * **Knee and latency growth reproduce**: the exact mean-latency curve bends at 78% utilization and the mean latency
#   at 90% is ~6x that at 50%. Burstier sources raise the whole curve (about `(1 + cv^2) / 2` in heavy traffic) but
#   not its normalized shape, so the knee stays at 78% for CV 1, 2 or 4: the paper's "~75%" is a property of the
#   queue's `rho / (1 - rho)` shape over the range one looks at. Knees read off one simulated curve move between 75%
#   and 85% with the seed; that spread is sampling noise, which is why the claim and the panel use the exact curve.
# * **Hot ToRs fall by ~80%, not 90%.** The scheduler places on predicted demand while realized demand differs
#   (lognormal noise), and migration only moves network-intensive tasks, so racks made hot by many medium tasks stay
#   hot. The production system has more levers (storage placement, continuous rebalancing) than this model.
# * **Network-intensive tasks on hot ToRs: ~6x** more often under random placement, close to the paper's 7x.
# * **Above ~0.65 mean utilization, "aware" has more hot ToRs than random** (at 0.7: 54% vs 48% of ToRs over the 0.75
#   threshold, 3 seeds of 200 racks; its hottest ToR is still far cooler, 2.7 vs 4.4x its capacity). Hot means "above
#   a threshold": once the mean demand nears the threshold, balancing the load pushes many ToRs to just above it,
#   where random placement leaves a wide spread, some ToRs far below and a few far above. Count hot ToRs and aware
#   placement looks worse; look at the peak (the `max_utilization` column) or at the latency the tasks see and it
#   is better. Sweep `mean_utilization` to 0.8 in the explore panel to see both.
# * The cluster is synthetic (the paper's fleet data is not public): its parameters are stated above and in
#   `workbench.placement`, and every number here moves with them in the panel.
