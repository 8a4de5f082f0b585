"""The scheduling policies of the serving engine (:class:`Scheduler`): who is admitted at an iteration boundary, what
an iteration batches, how the KV cache is accounted, and what a preemption does with a request's KV.

Batching (``kind``):

* ``"vllm"``: vLLM's classic scheduler (v0.x default): prefill-prioritised. At an iteration boundary it admits waiting
  requests while ``max_num_seqs``, ``max_num_batched_tokens`` (whole prompts) and the free blocks (less a 1%
  watermark) allow; an iteration that prefills carries **no decodes**, so every admission stalls the running batch.
* ``"sarathi"``: Sarathi-Serve's stall-free batching (Agrawal et al., OSDI'24): every iteration decodes all running
  requests and fills the rest of a ``max_num_batched_tokens`` token budget with prompt *chunks* (FCFS).
* ``"orca"``: iteration-level scheduling (Yu et al., OSDI'22): whole prompts join the running decodes in one
  iteration under the token budget, on the paged KV cache.
* ``"reserve"``: Orca's iteration-level scheduling *with Orca's own memory management* (Yu et al., OSDI'22, §4.2
  and its Algorithm 1: the scheduler reserves a request's KV slots for its maximum sequence length when it admits
  it). Whole prompts join the running decodes (FCFS, at most ``max_num_seqs`` running); the iteration's prompt tokens
  stay within ``max_num_batched_tokens`` except that the first request admitted always passes; each admitted request
  *reserves* its full context, ``input + output`` tokens, of the KV capacity until it finishes. The reservation uses
  the request's **true output length** (an oracle; Orca reserves the maximum length, which a trace does not record),
  so the cache never overflows and nothing is ever preempted. A request whose context alone exceeds the capacity is
  rejected when it reaches the head of the queue. It is the default policy of the linear-cost server
  (:class:`~workbench.serving.linear.ServerConfig`), and it runs on any cost model.

The first three hold the KV cache in blocks of ``block_tokens`` that grow token by token and preempt when it fills up
(:mod:`workbench.serving.engine`); ``"reserve"`` counts tokens and never preempts.

What a preemption does, and how requests are ordered, are policies too (FastSwitch's mechanisms, Shen et al., arXiv
2411.18424, are settings of these fields; :data:`workbench.serving.preemption.MECHANISMS` names them):

* ``preemption``: ``"recompute"`` (vLLM's default: the KV is dropped and prefilled again on re-admission) or
  ``"swap"`` (copied to host memory and back). A copy costs the cost model's one swap cost
  (:func:`workbench.serving.cost.swap_seconds`): ``ceil(blocks / swap_group_blocks) x copy calls per contiguous run``
  (one per layer and K/V tensor) at the cost model's per-call cost, plus the blocks' bytes over PCIe.
* ``swap_group_blocks``: blocks per contiguous copy, 1 for vLLM (one ``cudaMemcpyAsync`` per block and tensor, its
  ``swap_blocks``), more for FastSwitch's block groups.
* ``swap_async``: copies run on the host links beside compute (FastSwitch's swap manager): the batch does not wait;
  a swapped-out request's blocks return when its copy ends, a swapped-in request joins when its copy ends. Without
  it (vLLM) the iteration waits for every copy.
* ``kv_reuse``: a conversation's copy in host memory stays valid across swap-ins and turns (FastSwitch's KV reuse), so
  a swap-out sends only the blocks past it; without it (vLLM) the host blocks are freed on swap-in.
* ``prefix_cache``: freed blocks keep their KV until they are reused (vLLM V1's automatic prefix caching, on by
  default there): a request preempted by recompute prefills again only the part of its context whose blocks other
  requests have since taken. vLLM's ``BlockPool`` hands out free blocks oldest-freed first and frees a request's
  blocks in reverse order, "so that the tail blocks are evicted first" (``KVCacheManager.free``): the leading blocks
  of a preempted request survive longest, and on re-admission its longest cached prefix is reused
  (``get_computed_blocks``, at most all but its last token).
* ``priority``: ``"fcfs"`` (arrival order; preempted requests first) or ``"priority"`` (each request carries a level,
  higher first: the highest waiting request, the first in queue order on ties, is admitted first, preempting running
  requests of strictly lower level when it does not fit; victims are the lowest level, latest arrival on ties, as
  vLLM's priority policy).
  ``priority_changes`` (a :class:`PriorityProcess`) lets the levels change while requests run.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._contracts import accepts
from .._validate import integer, one_of, probability

__all__ = ["ORDERS", "PREEMPTIONS", "PRIORITY_KINDS", "SCHEDULERS", "PriorityProcess", "Scheduler"]

SCHEDULERS = ("vllm", "sarathi", "orca", "reserve")
PREEMPTIONS = ("recompute", "swap")
ORDERS = ("fcfs", "priority")
PRIORITY_KINDS = ("reshuffle", "markov")


@accepts()
@dataclass(frozen=True)
class PriorityProcess:
    """How request priorities change while they are in the system (a policy of fairness-aware serving).

    Parameters
    ----------
    kind : {"reshuffle", "markov"}
        ``"reshuffle"``: with probability ``rate`` per iteration, every request in the system draws a new level at
        once; ``"markov"``: each request moves one level up or down with probability ``rate`` per iteration
        (reflecting at the ends).
    rate : float
        Probability per iteration, in [0, 1].
    levels : int
        Number of priority levels (>= 1); a request's initial level is drawn uniformly unless given.

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


@accepts()
@dataclass(frozen=True)
class Scheduler:
    """Batching, memory and preemption policy of a replica (see the module docstring for each field).

    Parameters
    ----------
    kind : {"vllm", "sarathi", "orca", "reserve"}
    max_num_seqs : int
        Most requests running (decoding, prefilling or being swapped in) at once.
    max_num_batched_tokens : int
        Tokens one iteration may process: whole prompts for vLLM, Orca and the reservation (whose first admitted
        request always passes), the chunk budget (decodes included) for Sarathi-Serve (its papers use 512-2048).
    block_tokens : int
        Tokens per KV-cache block (paged policies).
    watermark : float
        Fraction of the blocks kept free when admitting (vLLM V0's 0.01; V1 keeps none; paged policies).
    preemption : {"recompute", "swap"}
        What happens to a preempted request's KV cache. The reservation never preempts (no effect there).
    swap_group_blocks : int
        Blocks per contiguous copy (1: vLLM's per-block copies; FastSwitch's block groups: more).
    swap_async : bool
        Swap copies overlap compute instead of stalling the iteration.
    kv_reuse : bool
        A conversation's host copy stays valid: swap-outs send only the blocks past it.
    prefix_cache : bool
        Freed blocks stay cached until reused: a request preempted by recompute skips the prefill of its leading
        blocks still cached when it is re-admitted.
    priority : {"fcfs", "priority"}
        Request order: arrival, or priority levels (``Request`` levels from the ``priority`` column of a table).
    priority_changes : PriorityProcess, optional
        How levels change while requests are in the system (``priority="priority"`` only).

    Examples
    --------
    >>> Scheduler("reserve", max_num_seqs=64).kind
    'reserve'
    >>> Scheduler(preemption="swap", swap_group_blocks=64, swap_async=True).swap_group_blocks
    64
    """

    kind: str = "vllm"
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    block_tokens: int = 16
    watermark: float = 0.01
    preemption: str = "recompute"
    swap_group_blocks: int = 1
    swap_async: bool = False
    kv_reuse: bool = False
    prefix_cache: bool = False
    priority: str = "fcfs"
    priority_changes: PriorityProcess | None = None

    def __post_init__(self) -> None:
        one_of("kind", self.kind, SCHEDULERS)
        one_of("preemption", self.preemption, PREEMPTIONS)
        one_of("priority", self.priority, ORDERS)
        integer("max_num_seqs", self.max_num_seqs, minimum=1)
        integer("max_num_batched_tokens", self.max_num_batched_tokens, minimum=1)
        integer("block_tokens", self.block_tokens, minimum=1)
        integer("swap_group_blocks", self.swap_group_blocks, minimum=1)
        if not 0 <= self.watermark < 1:
            raise ValueError(f"watermark must be in [0, 1), got {self.watermark}")
        if self.kind == "sarathi" and self.max_num_batched_tokens <= self.max_num_seqs:
            raise ValueError(
                f"a Sarathi token budget (max_num_batched_tokens={self.max_num_batched_tokens}) must exceed "
                f"max_num_seqs={self.max_num_seqs}, or decodes alone fill it"
            )
        if self.priority_changes is not None:
            if not isinstance(self.priority_changes, PriorityProcess):
                raise TypeError(
                    f"priority_changes must be a PriorityProcess, got {type(self.priority_changes).__name__}"
                )
            if self.priority != "priority":
                raise ValueError("priority_changes needs priority='priority' (levels order the queue)")
        if self.kind == "reserve" and self.priority == "priority":
            raise ValueError("the reservation ('reserve') never preempts: priority scheduling needs a paged kind")

    @property
    def paged(self) -> bool:
        """Paged KV (blocks that grow token by token), as opposed to the reservation."""
        return self.kind != "reserve"
