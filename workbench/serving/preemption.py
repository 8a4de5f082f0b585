"""Priority preemption in LLM serving with a context-switch cost model (FastSwitch, arXiv 2411.18424).

Fairness-oriented serving changes request priorities while they run, and when KV memory is short the scheduler
preempts the lowest-priority running request for the highest-priority waiting one, swapping KV caches between GPU and
host memory. FastSwitch (Shen, Li, Gao; arXiv 2411.18424, abstract and introduction) shows that in vLLM this context switching
becomes the tail: up to 59.9% of the P99 latency is preemption stall in high-stress cases, because (1) vLLM copies the KV
cache one 16-token block at a time, per layer, so PCIe is used in tiny transfers (inadequate I/O utilisation); (2)
the swap is synchronous, so the whole batch waits for it (GPU idleness); (3) a multi-turn conversation's KV is sent
to the host again in full at every preemption (unnecessary I/O). Its three mechanisms answer each: a dynamic block
group manager (contiguous groups, fewer and larger copies), a multithreading swap manager (asynchronous swaps), and a
KV cache reuse mechanism (the host copy stays valid; only new tokens go out).

The model, one replica (a :class:`~workbench.serving.roofline.Deployment`), iteration by iteration:

* **Requests**: multi-turn conversations (:mod:`workbench.serving.conversations`); a turn's prompt is the
  conversation so far. Each request has a priority level in ``0 .. levels - 1`` (higher first) drawn at arrival.
* **Priorities change** (:class:`PriorityProcess`): ``"reshuffle"``, with probability ``rate`` per iteration all
  active requests draw new levels at once; ``"markov"``, each active request steps one level up or down with
  probability ``rate`` per iteration (reflecting at the ends).
* **Scheduler** (vLLM's priority preemption): each running request needs room for one more token; while it is
  short the lowest-priority running request (latest arrival on ties) is swapped out. Then the highest-priority
  waiting request (new, or swapped out) is admitted while memory and ``max_num_seqs`` allow, preempting
  lower-priority running requests (strictly lower) to make room. Admitted prompts prefill in the same iteration as
  the decodes, under ``max_num_batched_tokens``. Blocks are ``block_tokens`` tokens; a request holds
  ``ceil(context / block_tokens)``.
* **Copy cost** (:func:`copy_seconds`): a swap of ``b`` blocks issues ``ceil(b / group_blocks) * 2 * layers``
  copies (vLLM keeps one K and one V cache tensor per layer and calls one ``cudaMemcpyAsync`` per block and tensor;
  a FastSwitch block group is contiguous, one copy per group and tensor), each paying ``launch_s``, plus the bytes
  (whole blocks) over PCIe at ``pcie_gbs`` per GPU and direction.
* **Synchronous swap** (vLLM): the iteration waits for every copy issued at its start (all requests stall).
  **Asynchronous** (FastSwitch): copies queue on the outbound and inbound links and overlap compute; a swapped-in
  request joins the batch when its copy ends, and a swapped-out request's blocks return when its copy ends (an
  admission that needs them waits; nobody else does).
* **KV reuse**: a conversation's host copy stays valid across swap-ins and turns, so a swap-out sends only the
  blocks past the host copy's last full block; without it (vLLM) host blocks are freed on swap-in and every
  swap-out sends the whole context.
* **Iteration time** from the deployment's roofline (:meth:`Deployment.gpu_s`, :meth:`Deployment.cpu_s`),
  tabulated once per deployment: linear layers and KV writes by total tokens, prefill attention per causal pair,
  decode attention per resident KV token, the LM head by sampled tokens, the engine's host step (overlapped or not).
  Exact for decode iterations; within a few percent for mixed ones (tested).

Constants (every one a parameter): ``launch_s`` = 10 us per copy call, the order of one ``cudaMemcpyAsync`` call's
host overhead plus DMA setup (NVIDIA, CUDA C++ Best Practices Guide, "Data Transfer Between Host and Device":
batching many small transfers into one performs much better because of the per-transfer overhead); PCIe one
direction per GPU from the GPU table (``pcie_gbps / 2``, e.g. 32 GB/s for A100's Gen4 x16; pinned-memory copies
reach ~80% of it, so the default applies ``pcie_efficiency`` = 0.8, a stated assumption).

What it leaves out: recompute preemption, the CPU cost of FastSwitch's swap threads, conflicts between an
asynchronous swap-out and a later swap-in of the same request (the inbound copy is not ordered after the outbound
one), host memory limits, prefix caching of the conversation history (every turn prefills its whole prompt).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._rng import Seed, generator
from .._validate import integer, one_of, positive, probability
from . import _preemption_kernel as K
from .roofline import Deployment

__all__ = [
    "LAUNCH_S",
    "MECHANISMS",
    "PCIE_EFFICIENCY",
    "PRIORITY_KINDS",
    "Mechanism",
    "PreemptionRun",
    "PriorityProcess",
    "copy_seconds",
    "mechanism",
    "simulate_preemption",
]

#: Seconds per copy call (one ``cudaMemcpyAsync`` per block and cache tensor in vLLM): see the module docstring.
LAUNCH_S = 10e-6
#: Fraction of the PCIe datasheet bandwidth (one direction) a pinned-memory copy reaches: a stated assumption.
PCIE_EFFICIENCY = 0.8
PRIORITY_KINDS = ("reshuffle", "markov")


@dataclass(frozen=True)
class Mechanism:
    """How a preemption moves KV caches.

    Parameters
    ----------
    group_blocks : int
        Blocks per contiguous copy: 1 for vLLM (one copy per 16-token block and tensor); FastSwitch's block groups
        (its dynamic block group manager keeps a request's blocks in contiguous groups; 64 blocks here, a stated
        choice).
    async_swap : bool
        Copies overlap compute (FastSwitch's multithreading swap manager) instead of stalling the iteration.
    reuse : bool
        The host copy of a conversation stays valid (FastSwitch's KV cache reuse): swap-outs send only new blocks.
    """

    group_blocks: int = 1
    async_swap: bool = False
    reuse: bool = False

    def __post_init__(self) -> None:
        integer("group_blocks", self.group_blocks, minimum=1)


#: The five mechanisms of the study: vLLM, each FastSwitch mechanism alone, and all three.
MECHANISMS: dict[str, Mechanism] = {
    "vllm": Mechanism(),
    "+block-groups": Mechanism(group_blocks=64),
    "+async": Mechanism(async_swap=True),
    "+reuse": Mechanism(reuse=True),
    "fastswitch": Mechanism(group_blocks=64, async_swap=True, reuse=True),
}


def mechanism(name: str | Mechanism) -> Mechanism:
    """The mechanism called ``name`` (one of :data:`MECHANISMS`; a :class:`Mechanism` passes through)."""
    if isinstance(name, Mechanism):
        return name
    one_of("mechanism", name, MECHANISMS)
    return MECHANISMS[name]


@dataclass(frozen=True)
class PriorityProcess:
    """How priorities change over time.

    Parameters
    ----------
    kind : {"reshuffle", "markov"}
        ``"reshuffle"``: with probability ``rate`` per iteration, every active request draws a new level at once;
        ``"markov"``: each active request moves one level up or down with probability ``rate`` per iteration.
    rate : float
        Probability per iteration, in [0, 1].
    levels : int
        Number of priority levels (>= 1).

    Examples
    --------
    >>> PriorityProcess("markov", 0.05).rate
    0.05
    >>> PriorityProcess("markov", -0.1)
    Traceback (most recent call last):
    ...
    ValueError: priority change rate must be in [0.0, 1.0], got -0.1
    """

    kind: str = "reshuffle"
    rate: float = 0.02
    levels: int = 8

    def __post_init__(self) -> None:
        one_of("priority kind", self.kind, PRIORITY_KINDS)
        object.__setattr__(self, "rate", probability("priority change rate", self.rate))
        integer("priority levels", self.levels, minimum=1)


def copy_seconds(
    tokens,
    *,
    block_tokens: int = 16,
    group_blocks: int = 1,
    tensors: int,
    launch_s: float = LAUNCH_S,
    bytes_per_token: float,
    bandwidth_bps: float,
) -> np.ndarray:
    """Seconds to copy the KV of ``tokens`` tokens one way: ``ceil(blocks / group_blocks) * tensors`` copy calls of
    ``launch_s`` plus whole blocks' bytes over ``bandwidth_bps`` (bytes/s).

    Examples
    --------
    >>> # 64 tokens = 4 blocks of 16; 2 tensors (K, V of one layer); 1 KB per token; 1 GB/s
    >>> float(copy_seconds(64, tensors=2, launch_s=1e-5, bytes_per_token=1e3, bandwidth_bps=1e9))
    0.000144
    >>> float(copy_seconds(64, group_blocks=4, tensors=2, launch_s=1e-5, bytes_per_token=1e3, bandwidth_bps=1e9))
    8.4e-05
    """
    B = integer("block_tokens", block_tokens, minimum=1)
    G = integer("group_blocks", group_blocks, minimum=1)
    tok = np.asarray(tokens, dtype=np.int64)
    if (tok < 0).any():
        raise ValueError(f"tokens must be >= 0, got {tok.min()}")
    blocks = (tok + B - 1) // B
    copies = (blocks + G - 1) // G * integer("tensors", tensors, minimum=1)
    return copies * positive("launch_s", launch_s) + blocks * B * positive(
        "bytes_per_token", bytes_per_token
    ) / positive("bandwidth_bps", bandwidth_bps)


@dataclass(frozen=True)
class PreemptionRun:
    """One simulation's outputs: per request (``requests``: the input table plus ``first_token_s``, ``finish_s``,
    ``ttft_s``, ``preemptions``, ``stall_ttft_s``), per token gap (``tbt_s`` and its synchronous-stall part
    ``tbt_stall_s``), and totals (``stall_s``, ``copy_bytes``, ``copies``, ``swap_outs``, ``swap_ins``,
    ``iterations``, ``compute_s``, ``makespan_s``, ``finished``)."""

    requests: pd.DataFrame
    tbt_s: np.ndarray
    tbt_stall_s: np.ndarray
    totals: dict

    def summary(self, q: float = 0.99) -> dict:
        """Tail TTFT and TBT (quantile ``q``), the synchronous stall's share of the requests and gaps at or above
        those tails, output throughput (tokens/s over the makespan) and totals.

        ``stall_share_ttft``: over requests with TTFT >= its quantile, the stall they waited through before their
        first token divided by their TTFT; ``stall_share_tbt``: likewise over token gaps >= the TBT quantile.
        """
        r = self.requests
        done = r.finish_s.notna()
        ttft = r.ttft_s[r.first_token_s.notna()].to_numpy()
        p_ttft = float(np.quantile(ttft, q)) if ttft.size else math.nan
        tail = r.ttft_s >= p_ttft
        share_ttft = float(r.stall_ttft_s[tail].sum() / r.ttft_s[tail].sum()) if tail.any() else math.nan
        gaps = self.tbt_s[np.isfinite(self.tbt_s)]
        p_tbt = float(np.quantile(gaps, q)) if gaps.size else math.nan
        sel = np.isfinite(self.tbt_s) & (self.tbt_s >= p_tbt)
        share_tbt = float(self.tbt_stall_s[sel].sum() / self.tbt_s[sel].sum()) if sel.any() else math.nan
        span = self.totals["makespan_s"]
        tokens = float(r.output_tokens[done].sum())
        return {
            "p99_ttft_s": p_ttft,
            "p99_tbt_s": p_tbt,
            "mean_ttft_s": float(np.mean(ttft)) if ttft.size else math.nan,
            "mean_tbt_s": float(np.mean(gaps)) if gaps.size else math.nan,
            "throughput_tok_s": tokens / span if span > 0 else math.nan,
            "stall_share_ttft": share_ttft,
            "stall_share_tbt": share_tbt,
            "stall_share_time": self.totals["stall_s"] / span if span > 0 else math.nan,
            "preemptions_per_request": float(r.preemptions.mean()),
            "copy_gb": self.totals["copy_bytes"] / 1e9,
            "finished": float(done.mean()),
        }


@functools.lru_cache(maxsize=32)
def _cost_tables(dep: Deployment, max_tokens: int, max_seqs: int):
    """The deployment's iteration cost as tables and slopes, evaluated through its own roofline functions: by total
    tokens (linear layers, KV writes, all-reduce), per prefill pair, per resident KV token, by sampled tokens (LM
    head), the host step by sequences, and the decode attention's fixed floor (paid when anything decodes). The token
    and head tables are evaluated exactly up to 256 and every 16 tokens above, linearly interpolated between (the
    measured efficiency curves change by quarter-octaves of tokens)."""

    def table(f, size: int) -> np.ndarray:
        x = np.unique(np.r_[np.arange(min(size, 257)), np.arange(256, size, 16), size - 1]).astype(int)
        return np.interp(np.arange(size), x, [f(int(v)) for v in x])

    tok = table(lambda t: dep.gpu_s(t, 0, 0, 0, sampled=0), max_tokens + max_seqs + 1)
    att = (dep.gpu_s(1, 1e9, 0, 0, sampled=0) - dep.gpu_s(1, 0, 0, 0, sampled=0)) / 1e9
    kv = (dep.gpu_s(0, 0, 1, 1e6, sampled=0) - dep.gpu_s(0, 0, 1, 0, sampled=0)) / 1e6
    head = table(lambda s: dep.gpu_s(0, 0, 0, 0, sampled=s), 2 * max_seqs + 2)
    cpu = np.array([dep.cpu_s(s) for s in range(2 * max_seqs + 2)])
    floor = dep.gpu_s(0, 0, 1, 0, sampled=0) - dep.gpu_s(1, 0, 0, 0, sampled=0)
    return tok, float(att), float(kv), head, cpu, bool(dep.profile.overlap_cpu), float(floor)


def iteration_seconds(dep: Deployment, prefill_tokens, prefill_pairs, decode_seqs, kv_tokens, sampled, *,
                      max_tokens: int = 8192, max_seqs: int = 256) -> float:  # fmt: skip
    """The simulator's iteration time (the tabulated roofline), for comparison with :meth:`Deployment.iteration_s`."""
    tok, att, kv, head, cpu, ov, floor = _cost_tables(dep, max_tokens, max_seqs)
    return float(K._iter_cost(prefill_tokens, prefill_pairs, decode_seqs, kv_tokens, sampled, tok, att, kv, head,
                              cpu, ov, floor))  # fmt: skip


def simulate_preemption(
    requests: pd.DataFrame,
    deployment: Deployment,
    mech: str | Mechanism = "vllm",
    priority: PriorityProcess = PriorityProcess(),
    *,
    block_tokens: int = 16,
    max_num_seqs: int = 256,
    max_num_batched_tokens: int = 8192,
    launch_s: float = LAUNCH_S,
    pcie_gbs: float | None = None,
    pcie_efficiency: float = PCIE_EFFICIENCY,
    priorities=None,
    max_iterations: int = 50_000_000,
    seed: Seed = 0,
) -> PreemptionRun:
    """Serve multi-turn ``requests`` (a :func:`~workbench.serving.conversations.conversations` table) on one replica
    with priority preemption; see the module docstring for the model.

    ``pcie_gbs``: one direction per GPU in GB/s (default: the GPU table's ``pcie_gbps / 2``), scaled by
    ``pcie_efficiency``. ``seed`` draws the initial priorities (uniform over the levels, unless ``priorities`` gives
    one level per request) and their changes.

    Examples
    --------
    >>> from workbench.serving.conversations import conversations
    >>> reqs = conversations(40, 4.0, seed=0)
    >>> d = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=8192)
    >>> a = simulate_preemption(reqs, d, "vllm", PriorityProcess("reshuffle", 0.05), seed=1).summary()
    >>> b = simulate_preemption(reqs, d, "fastswitch", PriorityProcess("reshuffle", 0.05), seed=1).summary()
    >>> a["finished"], b["finished"], b["p99_tbt_s"] < a["p99_tbt_s"]
    (1.0, 1.0, True)
    """
    if not isinstance(deployment, Deployment):
        raise TypeError(f"deployment must be a Deployment, got {type(deployment).__name__}")
    if not isinstance(priority, PriorityProcess):
        raise TypeError(f"priority must be a PriorityProcess, got {type(priority).__name__}")
    if deployment.overlap or deployment.pp > 1:
        raise ValueError("preemption is modelled for sequential execution without pipeline parallelism")
    m = mechanism(mech)
    B = integer("block_tokens", block_tokens, minimum=1)
    seqs = integer("max_num_seqs", max_num_seqs, minimum=1)
    budget = integer("max_num_batched_tokens", max_num_batched_tokens, minimum=1)
    launch = positive("launch_s", launch_s)
    eff = probability("pcie_efficiency", pcie_efficiency)
    if eff == 0:
        raise ValueError("pcie_efficiency must be in (0, 1], got 0")
    g = deployment.gpu
    if pcie_gbs is None:
        if not g.pcie_gbps or math.isnan(g.pcie_gbps):
            raise ValueError(f"GPU {g.gpu!r} has no pcie_gbps in its spec: pass pcie_gbs")
        bw = g.pcie_bytes_per_s * eff
    else:
        bw = positive("pcie_gbs", pcie_gbs) * 1e9 * eff
    token_s = deployment.model.kv_bytes_per_token / (deployment.gpus * bw)
    tensors = 2 * math.ceil(deployment.model.layers / deployment.pp)
    n_blocks = deployment.kv_capacity_tokens // B
    for col in ("arrival_s", "input_tokens", "output_tokens", "conversation", "next", "think_s"):
        if col not in requests:
            raise ValueError(f"requests need a {col!r} column (see workbench.serving.conversations)")
    r = requests.reset_index(drop=True)
    n = len(r)
    prompt = r.input_tokens.to_numpy(np.int64)
    out = r.output_tokens.to_numpy(np.int64)
    if n == 0 or (prompt < 1).any() or (out < 1).any():
        raise ValueError("requests need at least one row, input_tokens >= 1 and output_tokens >= 1")
    if ((prompt + out + B - 1) // B > n_blocks).any():
        raise ValueError(
            f"a request's context ({int((prompt + out).max())} tokens) exceeds the KV cache "
            f"({n_blocks} blocks of {B}): raise max_kv_tokens or cap the conversations' max_context"
        )
    arrival = r.arrival_s.to_numpy(float)
    nxt_in = r["next"].to_numpy(np.int64)
    conv_in = r.conversation.to_numpy(np.int64)
    linked = nxt_in >= 0
    if (nxt_in >= n).any() or (nxt_in < -1).any() or (nxt_in[linked] <= np.flatnonzero(linked)).any():
        raise ValueError("requests' next must be -1 or the row of a later turn in the table (was it truncated?)")
    if (conv_in < 0).any() or (conv_in[nxt_in[linked]] != conv_in[linked]).any():
        raise ValueError("requests' next must point to a turn of the same conversation")
    later = np.zeros(n, bool)
    later[nxt_in[linked]] = True
    if np.isnan(arrival[~later]).any() or (arrival[~later] < 0).any():
        raise ValueError("every first turn needs an arrival_s >= 0 (later turns arrive after the previous one ends)")
    arrival = np.where(later | np.isnan(arrival), np.inf, arrival)
    rng = generator(seed)
    prio0 = rng.integers(0, priority.levels, n).astype(np.int64)
    if priorities is not None:
        prio0 = np.asarray(priorities, dtype=np.int64)
        if prio0.shape != (n,) or (prio0 < 0).any() or (prio0 >= priority.levels).any():
            raise ValueError(f"priorities must give one level in [0, {priority.levels}) per request ({n})")
    kseed = int(rng.integers(0, 2**31 - 1))
    gap_off = np.r_[0, np.cumsum(out - 1)[:-1]].astype(np.int64)
    n_gaps = int((out - 1).sum())
    tok, att, kvs, head, cpu, ov, floor = _cost_tables(deployment, budget, seqs)
    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    pre = np.zeros(n, np.int64)
    stall_ttft = np.zeros(n)
    gaps = np.full(n_gaps, np.nan)
    gap_stall = np.zeros(n_gaps)
    totals = np.zeros(8)
    end = K.run(
        arrival, prompt, out, r.conversation.to_numpy(np.int64), r["next"].to_numpy(np.int64),
        r.think_s.to_numpy(float), prio0, gap_off, int(r.conversation.max()) + 1, priority.levels,
        PRIORITY_KINDS.index(priority.kind), priority.rate, kseed, B, n_blocks, seqs, budget, m.group_blocks,
        tensors, launch, token_s, m.async_swap, m.reuse, tok, att, kvs, head, cpu, ov, floor,
        integer("max_iterations", max_iterations, minimum=1),
        first, finish, pre, stall_ttft, gaps, gap_stall, totals,
    )  # fmt: skip
    out_df = r.copy()
    # the simulation sets later turns' arrivals: recover them from the previous turn's finish
    arr = arrival.copy()
    nxt = r["next"].to_numpy(np.int64)
    has = (nxt >= 0) & np.isfinite(finish)
    arr[nxt[has]] = finish[has] + r.think_s.to_numpy(float)[has]
    out_df["arrival_s"] = np.where(np.isinf(arr), np.nan, arr)
    out_df["first_token_s"] = first
    out_df["finish_s"] = finish
    out_df["ttft_s"] = first - out_df.arrival_s.to_numpy()
    out_df["preemptions"] = pre
    out_df["stall_ttft_s"] = stall_ttft
    start = float(np.nanmin(out_df.arrival_s))
    names = ("stall_s", "copy_bytes", "copies", "swap_outs", "swap_ins", "iterations", "compute_s", "out_copy_s")
    tot = dict(zip(names, totals.tolist(), strict=True))
    tot["copy_bytes"] *= deployment.model.kv_bytes_per_token
    tot["makespan_s"] = float(np.nanmax(finish) - start) if np.isfinite(finish).any() else math.nan
    tot["end_s"] = float(end)
    tot["finished"] = int(np.isfinite(finish).sum())
    return PreemptionRun(out_df, gaps, gap_stall, tot)
