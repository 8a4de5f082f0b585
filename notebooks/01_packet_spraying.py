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
# # Packet spraying vs singlepath routing for training collectives
#
# Reproduction of V. Addanki, P. Goyal, I. Marinos, *Challenging the Need for Packet Spraying in Large-Scale
# Distributed Training*, arXiv:2407.00550, 2024 (v2: *Ethereal*). The paper's argument: collective flows are
# equal-size and start together, so a source that splits its flows to each destination leaf by a *minimal splitting
# rule* loads every link exactly like ideal packet spraying, while ECMP hashing pays the expected maximum of
# balls-into-bins. Everything below is computed by `workbench.fabric`.

# %%
import numpy as np
import pandas as pd

from workbench import experiments, viz
from workbench import fabric as fb
from workbench.reproductions import build_figures, show_claims
from workbench.widgets.fabric import spraying_panel

viz.setup_notebook()
pd.set_option("display.width", 200)
pd.set_option("display.max_colwidth", 90)

# %% [markdown]
# ## The claims
#
# Each row is a registered claim (`workbench reproduce --paper spraying` prints the same rows).

# %%
show_claims("spraying", "full")

# %% [markdown]
# ## The model in a few sentences
#
# * **Topology.** A leaf-spine with *L* leaves, *s* spines and *H* hosts per leaf; every directed link has an id
#   (host up/down, leaf->spine, spine->leaf) so a flow routed through spine *p* maps to its link ids by arithmetic.
# * **Collectives** are steps of equal-size flows that start together (ring, halving-doubling, double binary tree,
#   all-to-all, permutation). A step ends when its most loaded link drains (fluid model): its time is the *max
#   congestion*, max over links of load / capacity, NIC links included.
# * **Routings.** ECMP hashes each flow to one spine; MP-*x* splits it into *x* hashed subflows; ideal spraying
#   spreads every flow over all spines; the **minimal splitting rule** sends *q = n div s* whole flows per spine
#   and splits each of the *r = n mod s* leftovers into *s/gcd(r, s)* pieces; *planned* assigns unsplit flows
#   globally (C4P-style). Loads are one `np.bincount` over flow -> link ids.
# * **Balls into bins.** With ECMP, a leaf's *m* flows land on its *s* uplinks like balls in bins; the expected
#   maximum is computed exactly (Poissonization + an FFT convolution at a single point), not sampled.
#
# The tables below are sweeps of registered experiments (`workbench.experiments`: `ballsbins-max-load`,
# `fabric-congestion`), serially and cached, each a tidy DataFrame with the parameters first.

# %%
def run(name, grid):
    """A sweep of one seed, serially in this kernel (cached under $WORKBENCH_CACHE/experiments/)."""
    return experiments.sweep(name, grid, client=False, progress=False)


cases = [{"flows": 8, "paths": 8}, {"flows": 16, "paths": 16}, {"flows": 64, "paths": 16}, {"flows": 256, "paths": 16},
         {"flows": 1024, "paths": 1024}]
loads = run("ballsbins-max-load", cases)
print(loads[["flows", "paths", "expected_max_exact", "expected_max_monte_carlo"]].round(3).to_string(index=False))

# %% [markdown]
# ## Try it
#
# Pick a fabric, an oversubscription, a collective, a message size, the routings, and fail some of leaf 0's uplinks.
# The controls are the `uplink-loads` experiment's parameters; the panel keeps the fabric within 512 hosts so that an
# update stays interactive (the experiments take up to 512 leaves x 256 hosts), and oversubscription 0 leaves the
# uplinks at the experiment's 100 Gbit/s.
# Top left: the collective's bandwidth time relative to ideal spraying as the fabric grows (Monte-Carlo mean over
# hashings); top right: leaf->spine loads for the step with the most cross-leaf bytes; bottom: collective time vs
# message size (fluid, 5 µs per step) and connections per host.

# %% tags=["nbval-ignore-output"]
spraying_panel()

# %% [markdown]
# ## The paper's 256-GPU fabric: a halving-doubling step that crosses leaves
#
# 16 leaves x 16 hosts, 16 spines, all links 400 Gb/s. In the first reduce-scatter step rank *r* exchanges with
# *r* XOR 128, so each leaf sends its 16 flows to one other leaf: every leaf's uplinks are an independent
# 16-balls-in-16-bins experiment (and the downlinks mirror them), hence the exact value is E[max over 16 leaves]
# (`fb.exact_congestion_ratio`).

# %%
fabric = {"leaves": 16, "spines": 16, "hosts_per_leaf": 16, "host_gbps": 400.0, "uplink_gbps": 400.0}
routings = ["ecmp", "mp-2", "mp-4", "mp-8", "minimal", "planned"]
table = run("fabric-congestion", {**fabric, "routing": routings, "samples": 4000})
print(table[["routing", "ratio", "ratio_exact", "connections_per_host"]].round(3).to_string(index=False))

# %% [markdown]
# The splitting rule is not free in connections when a source sends fewer flows to a leaf than there are spines:
# here each host sends one flow to the other leaf (n = 1, r = 1), so the rule cuts it into s = 16 pieces, the same
# count as spraying over 16 QPs; when *s* divides *n* (the all-to-all below) it needs no extra connection at all.
#
# Other collectives on the same fabric, worst step (ECMP, MP-8, minimal): the rank-ordered ring never crosses a leaf
# with more than one flow, so hashing cannot collide; the all-to-all has 240 flows per uplink, so the hash evens
# out; trees and permutations sit in between.

# %%
routings = ["ecmp", "mp-8", "minimal"]
worst = run("fabric-congestion", {**fabric, "collective": fb.COLLECTIVES, "routing": routings, "measure": "worst_step"})
print(worst.pivot(index="collective", columns="routing", values="ratio")
      .loc[list(fb.COLLECTIVES), routings].round(3).to_string())

# %% [markdown]
# **Failures.** Fail 4 of leaf 0's 16 uplinks. Every routing routes around the dead links; the splitting rule (applied
# over the 12 live paths of each affected leaf pair) still equals spraying on every link, and both are limited by the
# 16 flows sharing 12 uplinks (16/12 = 1.33x). Planned paths keep flows whole, so some live uplink of leaf 0 must
# carry 2 flows (2x): with failures, splitting beats any unsplit plan.

# %%
routings = ["ecmp", "mp-8", "spray", "minimal", "planned"]
fail = run("fabric-congestion", {**fabric, "failed_uplinks": 4, "routing": routings, "measure": "step_vs_healthy",
                                 "samples": 1000})
print(fail[["routing", "failed_uplinks", "ratio"]].rename(columns={"ratio": "time_vs_ideal"}).round(3)
      .to_string(index=False))
failed = fb.leaf_spine(16, 16, 16, host_gbps=400, uplink_gbps=400, failed_links=[(0, 0), (0, 1), (0, 2), (0, 3)])
step = fb.collective_steps("halving_doubling", 256, 2**30)[0]
print("minimal == spray on every link:", np.allclose(fb.link_loads(failed, step, "minimal"),
                                                    fb.link_loads(failed, step, "spray")))

# %% [markdown]
# **Three tiers.** The same routings on a k = 8 fat-tree (128 hosts, 16 core switches, all links equal), over the
# path index: a halving-doubling step across pods has 16 paths per flow, so ECMP collides even more; the splitting
# rule, applied per (source host, destination edge switch) over the group's paths, is again exactly ideal.

# %%
collectives = ["halving_doubling", "all_to_all", "permutation"]
routings = ["ecmp", "mp-8", "minimal", "planned"]
ft_table = run("fabric-congestion", {"topology": "fat_tree", "k": 8, "collective": collectives, "routing": routings})
print(ft_table.assign(step=ft_table.collective + " (" + ft_table.step_label + ")")
      .pivot(index="step", columns="routing", values="ratio").loc[:, routings].round(3).to_string())

# %% [markdown]
# ## Reproduction figures

# %% tags=["nbval-ignore-output"]
figs = build_figures("spraying", "full")
for fig in figs.values():
    fig.show()

# %% [markdown]
# ## Explore: sweep a parameter study
#
# Any parameter of the registered experiment `fabric-congestion` as a control (a multi-select for a choice, a list
# `0.3,0.9` or a range `start:stop:count` for a number). The panel runs the grid below when it is built (cached under
# `$WORKBENCH_CACHE/experiments/fabric-congestion/`, so re-running the notebook reads it back); "Run sweep" runs a new
# grid through `experiments.sweep` and plots the mean over seeds with error bars of one standard error. Here: the
# crossing halving-doubling step's congestion vs ideal spraying as the fabric grows (16 spines, 16 hosts per leaf),
# for ECMP, MP-8 and the minimal splitting rule.

# %% tags=["nbval-ignore-output"]
from workbench.widgets.explore import explore_panel

explore_panel("fabric-congestion", x="leaves", series=["routing"], values=["ratio"],
              grid={"leaves": [2, 4, 8, 16], "spines": 16, "hosts_per_leaf": 16,
                    "routing": ["ecmp", "mp-8", "minimal"], "samples": 100}, seeds=3, client=False,
              y_title="max congestion / spraying")

# %% [markdown]
# ## What differs from the paper and why
#
# * **Fluid, not packet-level.** Step time is the max over links of load / capacity; there is no congestion control,
#   queueing or packet reordering. The paper's ratios are statements about link loads, which the fluid model
#   computes exactly, so they reproduce; absolute completion times would differ in a packet simulator.
# * **Expectations over hashing** are Monte-Carlo means over independent hashings (thousands), cross-checked by the
#   exact balls-into-bins values; the crossing halving-doubling step is the first reduce-scatter step (distance
#   128); every crossing step of this algorithm on this fabric has the same structure.
# * **All-to-all "about 1.2x".** Over all links (NICs included) we measure about 1.12x at 256 GPUs, because the
#   ideal is NIC-bound (255 flows per NIC vs 240 per uplink); over the spine links alone it is 1.20x.
# * **Failures** are modelled as dead cables withdrawn from routing; hashing routings still hash uniformly over the
#   live paths. The paper's v2 (Ethereal) treats asymmetric failures in more depth.
# * The fat-tree's *planned* routing colours flows level by level (aggregation switch, then core); it reaches the
#   ideal in these steps but is not proven optimal for every demand. Failures are modelled on the leaf-spine only.
