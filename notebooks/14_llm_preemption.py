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
# # LLM serving under changing priorities: FastSwitch's context switching
#
# Shen, Li and Gao, *FastSwitch: Optimizing Context Switching Efficiency in Fairness-aware Large Language Model
# Serving* ([arXiv:2411.18424](https://arxiv.org/abs/2411.18424)). A fairness-aware server changes request
# priorities while they run and, when KV memory is short, preempts the lowest-priority running request for the
# highest-priority waiting one by swapping KV caches to host memory. In vLLM that swap copies the cache one 16-token
# block (and one layer's K or V tensor) at a time, synchronously, and sends a conversation's whole KV out again at
# every preemption, so context switching itself becomes the tail: up to 59.9% of the P99 latency in the paper's
# high-stress cases (introduction). FastSwitch groups blocks into contiguous block groups (fewer, larger copies), swaps
# asynchronously, and reuses the host copy of earlier turns; it reports 1.4-11.2x better tail TTFT and TBT than
# vLLM (abstract) on LLaMA-8B and Qwen-32B serving multi-turn conversations.
#
# Here the mechanisms are policies of the workbench's one serving engine (issue 37: the engine of notebook 10, the
# deployment's one cost table and one swap cost): which of the paper's numbers a model can reach, and on what they
# depend.

# %%
import pandas as pd

from workbench import experiments as ex
from workbench import viz
from workbench.reproductions import build_figures, fastswitch, show_claims

viz.setup_notebook()
pd.set_option("display.width", 200)

# %% [markdown]
# ## The claims
#
# `workbench reproduce --paper fastswitch` prints the same rows at the full scale (three seeds instead of the first
# one used here; the verdicts are the same).

# %%
show_claims("fastswitch")

# %% [markdown]
# ## The model in a few sentences
#
# * **Workload** (`serving.conversations`): conversations start as a Poisson process; each has a few turns (user
#   inputs of ~120 tokens and answers of ~250, lognormal, the project's length laws); a turn's prompt is the whole
#   conversation so far and the next turn arrives a think time (5 s mean) after the previous one ends.
# * **Priorities** change at a rate per iteration: a reshuffle of every active request's level, or a Markov walk of
#   each request's level (`PriorityProcess`). The claims use the reshuffle; the Markov walk gives the same picture
#   at higher rates (one request moves at a time): FastSwitch's p99 TBT gain is about 2x, 4x and 48x at 0.01, 0.05
#   and 0.2 per iteration (150 conversations; `priority_kind="markov"` in the panel).
# * **Engine**: the eager vLLM 0.x profile (`Deployment(..., engine="vllm-v0")`: host work between GPU steps, no API
#   server): swap preemption is a V0 feature (vLLM V1 recomputes preempted requests, its "Optimization and Tuning"
#   guide), and FastSwitch compares against that engine.
# * **Scheduler**: the engine's vLLM policy (`Scheduler("vllm", preemption="swap", priority="priority")`, built by
#   `serving.preemption.fastswitch_scheduler`): at an iteration boundary the highest-priority waiting request (new
#   or swapped out) is admitted while memory and `max_num_seqs` allow, swapping out running requests of strictly
#   lower priority to make room; when the cache cannot hold one more token for every running request, the
#   lowest-priority one is swapped out. An iteration that prefills carries no decodes (vLLM's classic batching).
#   Iteration times are the deployment's cost table, the one notebook 10 uses (Llama-3.1-8B on an A100-80GB, KV cache
#   capped at 16k tokens for memory pressure).
# * **Copy cost**, the engine's one swap cost (`serving.swap_seconds`): `ceil(blocks / group) x 2 x layers` copy
#   calls of 10 µs each (vLLM's `swap_blocks` issues one `cudaMemcpyAsync` per block and K/V tensor; the 10 µs from
#   vLLM's own measurement in its PR #11531) plus the bytes over PCIe (32 GB/s per direction at 80% efficiency).
#   **Sync**: the iteration waits for the copies; **async**: they overlap compute on each link direction, and only
#   the request that needs the blocks waits. **Reuse**: the host copy stays valid, so a swap-out sends only the blocks
#   past it. Each mechanism is a field of the scheduler (`swap_group_blocks`, `swap_async`, `kv_reuse`).
#
# Why vLLM's copies are slow: a 1,000-token context of Llama-3.1-8B is 63 blocks, each 64 tensors. The same function
# prices notebook 10's swap preemption.

# %%
# the serving-swap-cost experiment: 1,000 tokens of Llama-3.1-8B on an A100-80GB (its defaults)
copy = ex.sweep("serving-swap-cost", {"swap_group_blocks": [1, 4, 16, 64]}, client=False, progress=False)
pd.DataFrame({"blocks per copy": copy["swap_group_blocks"], "copy calls": copy["copy_calls"],
              "copy time (ms)": copy["copy_s"] * 1e3, "share in call overhead": copy["call_share"]}).round(3)

# %% [markdown]
# ## Panel: priority-change rate and mechanisms -> tail latency
#
# Every bar is a point of the `llm-preemption` experiment (150 conversations at the chosen load, as in the claims;
# the panel test checks its numbers against the experiment's and the claims'). Raise the rate and watch vLLM's bars leave the others: past a rate, its
# synchronous stall slows every request, more requests wait, memory pressure and preemptions grow, and the tail runs
# away (the swap cliff). Smaller blocks or a slower link move the cliff to lower rates.

# %% tags=["nbval-ignore-output"]
from workbench.widgets.preemption import preemption_panel

preemption_panel()

# %% [markdown]
# ## Reproduction figures
#
# One factor at a time around the centre (reshuffle rate 0.02 per iteration, 16-token blocks, the A100's PCIe, 0.6
# conversations/s): each mechanism's gain over vLLM in p99 TTFT and p99 TBT. The table: all three mechanisms
# together (FastSwitch) against vLLM, with the throughput ratio.

# %%
gains = fastswitch.gain_table("quick")
fs = gains[gains.mechanism == "fastswitch"].set_index(["factor", "value"])
fs[["ttft_gain", "tbt_gain", "throughput_ratio"]].round(2)

# %% tags=["nbval-ignore-output"]
figs = build_figures("fastswitch", "quick")
figs["fastswitch/gain_vs_rate"]

# %% tags=["nbval-ignore-output"]
figs["fastswitch/vllm_stall"]

# %% tags=["nbval-ignore-output"]
figs["fastswitch/gain_vs_block"]

# %% tags=["nbval-ignore-output"]
figs["fastswitch/gain_vs_pcie"]

# %% [markdown]
# ## Explore: the load
#
# The gain depends most on how close vLLM runs to its swap cliff, and load moves that as much as the change rate.
# Sweep it here (p99 TBT per mechanism, 100 conversations per point).

# %% tags=["nbval-ignore-output"]
from workbench.widgets.explore import explore_panel

explore_panel("llm-preemption", x="load", series=["mechanism"], values=["p99_tbt_s"],
              grid={"load": [0.4, 0.6, 0.8], "mechanism": ["vllm", "+block-groups", "fastswitch"],
                    "n_conversations": 100}, seeds=1, client=False, log_y=True,
              y_title="p99 TBT (s)")  # fmt: skip

# %% [markdown]
# ## What differs from the paper
#
# * **1.4-11.2x is a regime, not a constant.** Below vLLM's swap cliff (rare priority changes, large blocks, light
#   load) the model's gains are ~2x; past it vLLM's tail grows with the run and the ratio reaches tens. The paper's
#   range sits between; the model's median (~6x) lies inside it and the stress end exceeds it. Likewise the stall
#   share: about 35-45% of vLLM's p99 TBT at low change rates, ~56% at the centre and up to ~80% at the highest
#   (the paper: up to 59.9%), so the stall-share claim stays partial.
# * **The copy cost is a stated model**, not a measurement: 10 µs per copy call (vLLM PR #11531) and 80% of the
#   datasheet PCIe. The paper measures its own kernels and copy engines; block groups here are a fixed 64 blocks,
#   FastSwitch's manager sizes them dynamically.
# * **The asynchronous swap is free** of the CPU and synchronisation costs of FastSwitch's swap threads, and an
#   inbound copy is not ordered after a pending outbound copy of the same request; the model's async gains are an
#   upper bound.
# * **Workload and policy**: synthetic ShareGPT-like conversations and a random priority process stand in for the
#   paper's traces and fairness policy; every turn prefills its whole prompt (no prefix caching) under every
#   mechanism, so reuse saves only I/O. Only LLaMA-8B-class serving on one A100 is modelled, not Qwen-32B.
# * **What moved when the mechanisms became policies of the one engine** (issue 37). The earlier model had its own
#   loop with its own swap cost and cost tables; here every number comes from the engine of notebook 10, so: the
#   swap of a 1,024-token Llama-3.1-8B context costs the same 46 ms per-block (5.9 ms in block groups) in both
#   notebooks; iteration times are the deployment's one cost table, which now holds Vidur's measured attention
#   kernels and, for this eager engine, its measured host work per step; vLLM's batching is the engine's prefill-first
#   policy (an iteration that prefills carries no decodes). Against the separate loop the median gain went from
#   10.7x to 6.2x, the per-rate gains from 2.4/3.6/10.8/49.6x to 1.9/2.2/8.3/29.8x (rates 0.005-0.05), the
#   per-block gains from 25.7/9.4/3.9/1.5x to 22.8/6.0/4.3/2.0x (8-64 tokens), the PCIe gains from 16.8/12.6/10.8/10.9x
#   to 18.1/9.3/8.3/9.8x (8-64 GB/s), the stall share at rates 0.005-0.05 from 42/50/61/78% to 35/45/56/78% of p99
#   TBT, and FastSwitch's throughput over vLLM from 1.05-2.58x to 1.15-3.02x: every step iteration is longer (host
#   work, measured attention), which shortens vLLM's swap stall relative to it. The verdicts did not change.
