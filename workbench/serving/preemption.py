"""Priority preemption in LLM serving and the cost of its context switches (FastSwitch, arXiv 2411.18424), as
policies of the one engine.

Fairness-oriented serving changes request priorities while they run, and when KV memory is short the scheduler
preempts the lowest-priority running request for the highest-priority waiting one, swapping KV caches between GPU and
host memory. FastSwitch (Shen, Li, Gao; arXiv 2411.18424, abstract and introduction) shows that in vLLM this context
switching becomes the tail: up to 59.9% of the P99 latency is preemption stall in high-stress cases, because (1) vLLM
copies the KV cache one 16-token block at a time, per layer, so PCIe is used in tiny transfers (inadequate I/O
utilisation); (2) the swap is synchronous, so the whole batch waits for it (GPU idleness); (3) a multi-turn
conversation's KV is sent to the host again in full at every preemption (unnecessary I/O). Its three mechanisms
answer each: a dynamic block group manager (contiguous groups, fewer and larger copies), a multithreading swap manager
(asynchronous swaps), and a KV cache reuse mechanism (the host copy stays valid; only new tokens go out).

Here every one of them is a field of the engine's :class:`~workbench.serving.scheduler.Scheduler`, run by the one
engine (:mod:`workbench.serving.engine`, which documents the model) on the deployment's one cost table and one swap
cost (:func:`~workbench.serving.cost.swap_seconds`): :data:`MECHANISMS` names the five configurations of the study
(vLLM's per-block synchronous swaps, each FastSwitch mechanism alone, all three), :func:`fastswitch_scheduler` builds
the scheduler (vLLM's batching, swap preemption, priority order with a :class:`PriorityProcess`), :func:`run` serves
a multi-turn table (:func:`~workbench.serving.conversations.conversations`) with every inter-token gap recorded, and
:func:`summary` reads the tails (the one definition of each statistic: :mod:`workbench.serving.metrics`) and the
synchronous stall's share of them.

What it leaves out: the CPU cost of FastSwitch's swap threads, conflicts between an asynchronous swap-out and a later
swap-in of the same request (the inbound copy is not ordered after the outbound one), host memory limits, prefix
caching of the conversation history (every turn prefills its whole prompt).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._rng import Seed
from .._validate import integer, one_of
from ._common import ServeResult
from .cluster import serve
from .cost import COPY_CALL_S, PCIE_EFFICIENCY
from .metrics import itl_quantile, quantile, ttft_values
from .roofline import Deployment
from .scheduler import PRIORITY_KINDS, PriorityProcess, Scheduler

__all__ = ["COPY_CALL_S", "MECHANISMS", "PCIE_EFFICIENCY", "PRIORITY_KINDS", "PriorityProcess",
           "fastswitch_scheduler", "run", "summary"]  # fmt: skip

#: The five configurations of the study, as scheduler fields: vLLM (one synchronous copy per block and tensor, host
#: blocks freed on swap-in), each FastSwitch mechanism alone, and all three. Block groups are 64 blocks (a stated
#: choice: FastSwitch's manager sizes them dynamically).
MECHANISMS: dict[str, dict] = {
    "vllm": {"swap_group_blocks": 1, "swap_async": False, "kv_reuse": False},
    "+block-groups": {"swap_group_blocks": 64, "swap_async": False, "kv_reuse": False},
    "+async": {"swap_group_blocks": 1, "swap_async": True, "kv_reuse": False},
    "+reuse": {"swap_group_blocks": 1, "swap_async": False, "kv_reuse": True},
    "fastswitch": {"swap_group_blocks": 64, "swap_async": True, "kv_reuse": True},
}


def fastswitch_scheduler(
    mechanism: str = "vllm",
    priority: PriorityProcess | None = None,
    *,
    group_blocks: int | None = None,
    block_tokens: int = 16,
    max_num_seqs: int = 256,
    max_num_batched_tokens: int = 8192,
) -> Scheduler:
    """The engine's scheduler for one configuration of :data:`MECHANISMS`: vLLM's batching, preemption by swap,
    priority order whose levels change by ``priority`` (default ``PriorityProcess()``); ``group_blocks`` overrides the block groups' size.

    Examples
    --------
    >>> s = fastswitch_scheduler("fastswitch", group_blocks=32)
    >>> s.preemption, s.swap_group_blocks, s.swap_async, s.kv_reuse, s.priority
    ('swap', 32, True, True, 'priority')
    """
    one_of("mechanism", mechanism, MECHANISMS)
    priority = PriorityProcess() if priority is None else priority
    if not isinstance(priority, PriorityProcess):
        raise TypeError(f"priority must be a PriorityProcess, got {type(priority).__name__}")
    fields = dict(MECHANISMS[mechanism])
    if group_blocks is not None and fields["swap_group_blocks"] > 1:
        fields["swap_group_blocks"] = integer("group_blocks", group_blocks, minimum=1)
    return Scheduler("vllm", max_num_seqs=max_num_seqs, max_num_batched_tokens=max_num_batched_tokens,
                     block_tokens=block_tokens, preemption="swap", priority="priority", priority_changes=priority,
                     **fields)  # fmt: skip


def run(requests: pd.DataFrame, deployment: Deployment, scheduler: Scheduler, *, seed: Seed = 0) -> ServeResult:
    """Serve a multi-turn table (:func:`~workbench.serving.conversations.conversations`) on one replica with
    ``scheduler`` (:func:`fastswitch_scheduler`), every inter-token gap recorded: exactly
    ``serve(requests, deployment, scheduler, record_gaps=True, seed=seed)``.

    Examples
    --------
    >>> from workbench.serving.conversations import conversations
    >>> reqs = conversations(40, 4.0, seed=0)
    >>> d = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=8192)
    >>> pp = PriorityProcess("reshuffle", 0.05)
    >>> a = summary(run(reqs, d, fastswitch_scheduler("vllm", pp), seed=1))
    >>> b = summary(run(reqs, d, fastswitch_scheduler("fastswitch", pp), seed=1))
    >>> a["finished"], b["finished"], b["p99_tbt_s"] < a["p99_tbt_s"]
    (1.0, 1.0, True)
    """
    if not isinstance(deployment, Deployment):
        raise TypeError(f"deployment must be a Deployment, got {type(deployment).__name__}")
    for col in ("arrival_s", "input_tokens", "output_tokens", "conversation", "next", "think_s"):
        if col not in requests:
            raise ValueError(f"requests need a {col!r} column (see workbench.serving.conversations)")
    B = scheduler.block_tokens
    n_blocks = deployment.kv_capacity_tokens // B
    ctx = requests["input_tokens"].to_numpy(np.int64) + requests["output_tokens"].to_numpy(np.int64)
    if ((ctx + B - 1) // B > n_blocks).any():
        raise ValueError(
            f"a request's context ({int(ctx.max())} tokens) exceeds the KV cache ({n_blocks} blocks of {B}): raise "
            "max_kv_tokens or cap the conversations' max_context"
        )
    return serve(requests, deployment, scheduler, record_gaps=True, seed=seed)


def summary(result: ServeResult, q: float = 0.99) -> dict:
    """Tail TTFT and TBT (quantile ``q``; TBT here is FastSwitch's: every gap between tokens, the engine's ITL), their
    means, output throughput (tokens/s over the makespan), the synchronous swap stall's share of the requests and gaps
    at or above those tails and of the run, preemptions per request, GB copied and the fraction finished.

    ``stall_share_ttft``: over requests with TTFT >= its quantile, the stall they waited through before their first
    token divided by their TTFT; ``stall_share_tbt``: likewise over the gaps >= the TBT quantile.
    """
    if result.gaps is None:
        raise ValueError("summary needs the run's inter-token gaps: serve with record_gaps=True (or use run())")
    t = result.table
    done = t["e2e_s"].notna().to_numpy()
    ttft = ttft_values(t)
    p_ttft = quantile(ttft, q)
    tail = ttft >= p_ttft
    share_ttft = float(t["stall_ttft_s"][tail].sum() / ttft[tail].sum()) if tail.any() else math.nan
    dur, w, stall = result.gaps.expanded()
    p_tbt = itl_quantile(result.gaps, q)
    sel = dur >= p_tbt
    share_tbt = float((stall[sel] * w[sel]).sum() / (dur[sel] * w[sel]).sum()) if sel.any() else math.nan
    start = float(np.nanmin(t["arrival_s"]))
    span = float(np.nanmax(t["arrival_s"] + t["e2e_s"]) - start) if done.any() else math.nan
    swaps = result.swaps
    return {
        "p99_ttft_s": p_ttft,
        "p99_tbt_s": p_tbt,
        "mean_ttft_s": float(np.mean(ttft)) if ttft.size else math.nan,
        "mean_tbt_s": float((dur * w).sum() / w.sum()) if w.size else math.nan,
        "throughput_tok_s": float(t["output_tokens"][done].sum()) / span if span > 0 else math.nan,
        "stall_share_ttft": share_ttft,
        "stall_share_tbt": share_tbt,
        "stall_share_time": swaps.stall_s / span if span > 0 else math.nan,
        "preemptions_per_request": float(t["preemptions"].mean()),
        "copy_gb": swaps.copy_bytes / 1e9,
        "finished": float(done.mean()),
    }
