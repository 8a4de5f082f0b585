"""The scheduling policies of the serving engine (:class:`Scheduler`): who is admitted at an iteration boundary, what
an iteration batches, and how the KV cache is accounted.

* ``"vllm"``: vLLM's classic scheduler (v0.x default): prefill-prioritised. At an iteration boundary it admits waiting
  requests FCFS while ``max_num_seqs``, ``max_num_batched_tokens`` (whole prompts) and the free blocks (less a 1%
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
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validate import integer, one_of

__all__ = ["PREEMPTIONS", "SCHEDULERS", "Scheduler"]

SCHEDULERS = ("vllm", "sarathi", "orca", "reserve")
PREEMPTIONS = ("recompute", "swap")


@dataclass(frozen=True)
class Scheduler:
    """Batching policy of a replica (see the module docstring for each ``kind``).

    Parameters
    ----------
    kind : {"vllm", "sarathi", "orca", "reserve"}
    max_num_seqs : int
        Most requests running (decoding or prefilling) at once.
    max_num_batched_tokens : int
        Tokens one iteration may process: whole prompts for vLLM, Orca and the reservation (whose first admitted
        request always passes), the chunk budget (decodes included) for Sarathi-Serve (its papers use 512-2048).
    block_tokens : int
        Tokens per KV-cache block (paged policies).
    watermark : float
        Fraction of the blocks kept free when admitting (vLLM's 0.01; paged policies).
    preemption : {"recompute", "swap"}
        What happens to a preempted request's KV cache: dropped and recomputed on re-admission (vLLM's default), or
        copied to host memory over PCIe and copied back (the cost model's ``swap_s_per_token`` each way). The
        reservation never preempts (it has no effect there).

    Examples
    --------
    >>> Scheduler("reserve", max_num_seqs=64).kind
    'reserve'
    """

    kind: str = "vllm"
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    block_tokens: int = 16
    watermark: float = 0.01
    preemption: str = "recompute"

    def __post_init__(self) -> None:
        one_of("kind", self.kind, SCHEDULERS)
        one_of("preemption", self.preemption, PREEMPTIONS)
        integer("max_num_seqs", self.max_num_seqs, minimum=1)
        integer("max_num_batched_tokens", self.max_num_batched_tokens, minimum=1)
        integer("block_tokens", self.block_tokens, minimum=1)
        if not 0 <= self.watermark < 1:
            raise ValueError(f"watermark must be in [0, 1), got {self.watermark}")
        if self.kind == "sarathi" and self.max_num_batched_tokens <= self.max_num_seqs:
            raise ValueError(
                f"a Sarathi token budget (max_num_batched_tokens={self.max_num_batched_tokens}) must exceed "
                f"max_num_seqs={self.max_num_seqs}, or decodes alone fill it"
            )
