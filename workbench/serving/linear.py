"""The linear-cost server: the engine's abstract cost model.

A :class:`ServerConfig` is a cost model of the one serving engine (:mod:`workbench.serving.engine`, protocol
:class:`~workbench.serving.cost.CostModel`) whose iteration cost is linear::

    iteration_s = base_s + prefill_token_s * (prompt tokens prefilled) + decode_seq_s * (decoding requests)
                  + kv_token_s * (KV-cache tokens resident in the decoding batch)

and whose KV cache is a budget of ``kv_budget_tokens``. Alone it means this cost with the engine's reservation policy
(``Scheduler("reserve", max_num_seqs=max_batch, max_num_batched_tokens=max_prefill_tokens)``, its
:attr:`~ServerConfig.scheduler`; see :mod:`workbench.serving.scheduler`): FCFS admission at iteration boundaries
while the batch has fewer than ``max_batch`` requests, the iteration's prompt tokens stay within
``max_prefill_tokens`` (the first admitted request always passes) and the budget holds the request's full context;
each admitted request *reserves* ``input_tokens + output_tokens`` (an oracle of its output length, after Orca) until
it finishes, so nothing is preempted, and a request whose context alone exceeds the budget is rejected. Prompts are
prefilled whole in an iteration that also decodes the running batch. Any other engine policy runs on this cost too
(``serve(requests, ServerConfig(), Scheduler("vllm"))``: paged KV in the same budget).

Its cost table (:meth:`ServerConfig.cost_table`) is the linear formula in the engine's one table: a constant
``base_s`` per iteration, ``prefill_token_s`` and ``decode_seq_s`` beside the lanes, ``kv_token_s`` as a decode
attention exactly linear in the context. :func:`simulate_linear` is the engine on it under the reservation; a
capacity search runs it tens of times per workload (the loop is compiled and jumps over whole runs of decode
iterations in closed form: O(requests log requests) in all).

The default costs are illustrative (the order of magnitude of a 13B-parameter model on one 80 GB GPU); what the
workbench compares with it is workloads on the same server, not absolute numbers. Costs derived from real hardware
come from :func:`workbench.serving.linear_fit.fit_linear` (a least-squares fit of the roofline model over a grid).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import integer, nonnegative, positive
from ._common import ReplicaRun
from .cost import LINEAR_CONTEXTS, CostTable
from .engine import simulate_replica
from .scheduler import Scheduler

__all__ = ["ServerConfig", "simulate_linear"]


@dataclass(frozen=True)
class ServerConfig:
    """The linear cost model of one replica, and the limits of its default reservation policy.

    Parameters
    ----------
    base_s : float
        Fixed cost of one iteration (kernel launches, sampling, scheduling), seconds.
    prefill_token_s : float
        Seconds per prompt token prefilled in an iteration.
    decode_seq_s : float
        Seconds per decoding request in an iteration.
    kv_token_s : float
        Seconds per KV-cache token resident in the decoding batch (attention reads), per iteration.
    kv_budget_tokens : int
        KV-cache capacity in tokens; each running request reserves ``input + output`` tokens.
    max_batch : int
        Most requests running at once (its :attr:`scheduler`'s ``max_num_seqs``).
    max_prefill_tokens : int
        Prompt-token budget of one iteration (its :attr:`scheduler`'s ``max_num_batched_tokens``; one request is
        always admitted if it fits the KV cache).
    gpus : int
        GPUs one replica occupies (what :attr:`ServeResult.gpus <workbench.serving.ServeResult>` and
        :func:`~workbench.serving.gpus.capacity_gpus` count).

    Examples
    --------
    >>> ServerConfig().iteration_s(prefill_tokens=1000, decode_seqs=10, kv_tokens=20000)
    0.1329
    >>> ServerConfig(max_batch=64).scheduler == Scheduler("reserve", max_num_seqs=64, max_num_batched_tokens=16384)
    True
    """

    base_s: float = 0.010
    prefill_token_s: float = 1.2e-4
    decode_seq_s: float = 2.5e-4
    kv_token_s: float = 2.0e-8
    kv_budget_tokens: int = 150_000
    max_batch: int = 256
    max_prefill_tokens: int = 16_384
    gpus: int = 1

    def __post_init__(self) -> None:
        positive("base_s", self.base_s)
        nonnegative("prefill_token_s", self.prefill_token_s)
        nonnegative("decode_seq_s", self.decode_seq_s)
        nonnegative("kv_token_s", self.kv_token_s)
        integer("kv_budget_tokens", self.kv_budget_tokens, minimum=1)
        integer("max_batch", self.max_batch, minimum=1)
        integer("max_prefill_tokens", self.max_prefill_tokens, minimum=1)
        integer("gpus", self.gpus, minimum=1)

    def iteration_s(self, prefill_tokens: float = 0, decode_seqs: float = 0, kv_tokens: float = 0) -> float:
        """Duration of one iteration."""
        return round(
            self.base_s
            + self.prefill_token_s * prefill_tokens
            + self.decode_seq_s * decode_seqs
            + self.kv_token_s * kv_tokens,
            12,
        )

    @property
    def kv_capacity_tokens(self) -> int:
        """The KV budget in tokens (:class:`~workbench.serving.cost.CostModel`)."""
        return self.kv_budget_tokens

    @property
    def swap_s_per_token(self) -> float:
        """The linear server has no swap cost: asking for it (``preemption="swap"``) raises ``ValueError``."""
        raise ValueError("the linear-cost server (ServerConfig) has no swap cost: preemption='swap' needs a Deployment")

    @property
    def swap_call_s(self) -> float:
        return self.swap_s_per_token

    @property
    def swap_calls_per_copy(self) -> int:
        return int(self.swap_s_per_token)

    @property
    def scheduler(self) -> Scheduler:
        """The policy the engine runs it with when none is given: the reservation, with its limits."""
        return Scheduler("reserve", max_num_seqs=self.max_batch, max_num_batched_tokens=self.max_prefill_tokens)

    def cost_table(self, max_tokens: int = 16384, max_seqs: int = 256) -> CostTable:
        """The linear cost as the engine's :class:`~workbench.serving.cost.CostTable` (exact at every size)."""
        b = np.arange(max(int(max_seqs), 1) + 1, dtype=float)
        da = float(self.kv_token_s) * b[:, None] * LINEAR_CONTEXTS[None, :]
        return CostTable(
            np.full((1, 2), float(self.base_s)), np.zeros((1, 2)), np.zeros(0), np.zeros(1), np.zeros((1, 0, 1)),
            LINEAR_CONTEXTS, da[None], c_prefill=float(self.prefill_token_s), c_decode=float(self.decode_seq_s),
        )  # fmt: skip


def simulate_linear(
    arrival_s: np.ndarray,
    input_tokens: np.ndarray,
    output_tokens: np.ndarray,
    config: ServerConfig = ServerConfig(),
    *,
    ttft_limit_s: float = math.inf,
    max_violations: int | None = None,
) -> ReplicaRun:
    """Serve requests (sorted by arrival) on one linear-cost replica under its reservation policy (limits
    ``config.max_batch`` and ``config.max_prefill_tokens``): :func:`workbench.serving.simulate_replica` with
    ``config.scheduler``.

    ``output_tokens`` below 1 count as 1 (every request produces at least its first token).

    Parameters
    ----------
    arrival_s, input_tokens, output_tokens : array
    config : ServerConfig
    ttft_limit_s, max_violations : optional early stop
        When more than ``max_violations`` requests are certain to miss ``ttft_limit_s`` (their queueing delay alone
        exceeds it, or they are rejected), stop: an SLO check has already failed (``stopped`` is True).

    Returns
    -------
    ReplicaRun
        ``admit_s``, ``first_token_s``, ``finish_s`` (NaN for rejected requests), ``rejected`` (bool),
        ``preemptions`` (0: the reservation never preempts), ``prefill_tokens`` (the prompt, once, for admitted
        requests), ``busy_s``, ``stopped`` and ``violations`` (requests certain to miss ``ttft_limit_s``).

    Examples
    --------
    >>> r = simulate_linear([0.0], [100], [3], ServerConfig(base_s=0.01, prefill_token_s=0.0, decode_seq_s=0.0,
    ...                     kv_token_s=0.0))
    >>> r.first_token_s.tolist(), r.finish_s.tolist()
    ([0.01], [0.03])
    """
    return simulate_replica(
        arrival_s, input_tokens, output_tokens, config, config.scheduler, ttft_limit_s=ttft_limit_s,
        max_violations=max_violations,
    )  # fmt: skip
