"""The linear-cost server: a replica whose iteration cost is linear and whose KV cache is a token budget.

It follows how Orca/vLLM-style servers work, with the least machinery. The server runs *iterations*; in each iteration
every running request produces one token, and requests admitted at the iteration's start are prefilled in it (their
prompt is processed and their first token produced). The iteration's duration comes from a linear cost model
(:class:`ServerConfig`)::

    iteration_s = base_s + prefill_token_s * (prompt tokens prefilled) + decode_seq_s * (decoding requests)
                  + kv_token_s * (KV-cache tokens resident in the decoding batch)

Admission is FCFS at iteration boundaries: the head of the queue is admitted while the batch has fewer than
``max_batch`` requests, the iteration's prompt tokens stay within ``max_prefill_tokens`` (the first admitted request
is always allowed), and the KV cache can hold the request's full context: each admitted request *reserves*
``input_tokens + output_tokens`` of the ``kv_budget_tokens`` budget until it finishes (an oracle of the output length:
no preemption; a request whose context alone exceeds the budget is rejected). Between events (an arrival that can be
admitted, a completion) the batch is constant, so the loop jumps over whole runs of decode iterations in closed form
(the KV term grows by one token per request per iteration, so the run's duration is a quadratic in its length). The
work is a loop over events, O(requests log requests) in all, compiled (:mod:`._linear_kernel`), with no per-iteration
work.

It is one of the two replica models of :func:`workbench.serving.serve` (pass a :class:`ServerConfig` where a
:class:`~workbench.serving.roofline.Deployment` would go); the request validator, the balancer, the per-request table
and the capacity search are the same for both. The default costs are illustrative (the order of magnitude of a
13B-parameter model on one 80 GB GPU); what the workbench compares with it is workloads on the same server, not
absolute numbers. Costs derived from real hardware come from :func:`workbench.serving.linear_fit.fit_linear` (a
least-squares fit of the roofline model over a grid), and the hardware replica with a paged KV cache and real
schedulers is :mod:`workbench.serving.engine`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validate import integer, nonnegative, positive
from ._common import ReplicaRun, check_requests
from ._linear_kernel import simulate_linear_kernel

__all__ = ["ServerConfig", "simulate_linear"]


@dataclass(frozen=True)
class ServerConfig:
    """Cost model and limits of one linear-cost replica.

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
        Most requests running at once.
    max_prefill_tokens : int
        Prompt-token budget of one iteration (one request is always admitted if it fits the KV cache).
    gpus : int
        GPUs one replica occupies (what :attr:`ServeResult.gpus <workbench.serving.ServeResult>` counts).

    Examples
    --------
    >>> ServerConfig().iteration_s(prefill_tokens=1000, decode_seqs=10, kv_tokens=20000)
    0.1329
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


def simulate_linear(
    arrival_s: np.ndarray,
    input_tokens: np.ndarray,
    output_tokens: np.ndarray,
    config: ServerConfig = ServerConfig(),
    *,
    ttft_limit_s: float = math.inf,
    max_violations: int | None = None,
) -> ReplicaRun:
    """Serve requests (sorted by arrival) on one linear-cost replica; return per-request times (what
    :func:`workbench.serving.simulate_replica` does when given a :class:`ServerConfig`).

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
    arr, inp, out = check_requests(arrival_s, input_tokens, output_tokens)
    n = arr.size
    admit, first, finish = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    rejected = np.zeros(n, dtype=bool)
    if max_violations is not None and int(max_violations) < 0:
        raise ValueError(f"max_violations must be >= 0 or None, got {max_violations}")
    allowed = -1 if max_violations is None else int(max_violations)
    stopped, violations, busy = simulate_linear_kernel(
        arr, inp, out, float(config.base_s), float(config.prefill_token_s), float(config.decode_seq_s),
        float(config.kv_token_s), int(config.kv_budget_tokens), int(config.max_batch), int(config.max_prefill_tokens),
        float(ttft_limit_s), allowed, admit, first, finish, rejected,
    )  # fmt: skip
    return ReplicaRun(
        admit,
        first,
        finish,
        rejected,
        np.zeros(n, dtype=np.int64),
        np.where(np.isnan(admit), 0, inp),
        float(busy),
        bool(stopped),
        int(violations),
    )
