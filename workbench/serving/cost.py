"""The cost-model protocol of the serving engine: what :mod:`workbench.serving.engine` asks of a replica.

The engine (its event loop, schedulers and KV accounting) is one; what a replica *costs* is a cost model behind this
small protocol, :class:`CostModel`. Two implement it:

* :class:`~workbench.serving.roofline.Deployment`: a model on ``tp * pp`` GPUs, per-operator roofline iteration costs
  (sequential or overlapped), the KV capacity left by the weights, PCIe swap cost;
* :class:`~workbench.serving.linear.ServerConfig`: the abstract linear-cost server, ``base + prefill_token x prompt
  tokens + decode_seq x decoding requests + kv_token x resident KV tokens`` and a KV budget in tokens.

A cost model may name the policy the engine runs when none is given (``scheduler``; :class:`ServerConfig` names its
reservation, ``Scheduler("reserve", ...)``); otherwise the engine runs ``Scheduler()`` (vLLM).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["CostModel", "check_cost_model"]


class CostModel(Protocol):
    """What the engine needs of a replica.

    Attributes
    ----------
    gpus : int
        GPUs one replica occupies (what a :class:`~workbench.serving.ServeResult` and a capacity in GPUs count).
    kv_capacity_tokens : int
        KV-cache capacity of one replica, in tokens.
    decode_lines_fixed : bool
        ``decode_line``'s line for a batch size holds at every KV total (the engine asks once per batch size).
    swap_s_per_token : float
        Seconds to copy one token's KV between the replica and host memory, one way (only swap preemption asks;
        a model without a figure raises ``ValueError`` there).
    """

    @property
    def gpus(self) -> int: ...

    @property
    def kv_capacity_tokens(self) -> int: ...

    @property
    def decode_lines_fixed(self) -> bool: ...

    @property
    def swap_s_per_token(self) -> float: ...

    def iteration_cost(self) -> Callable[[float, float, float, float, float], float]:
        """A scalar ``f(prefill_tokens, prefill_pairs, decode_seqs, kv_tokens, sampled)``: the seconds of one
        iteration that prefills ``prefill_tokens`` prompt tokens (``prefill_pairs`` causal query-key pairs),
        decodes ``decode_seqs`` requests whose resident KV totals ``kv_tokens``, and samples ``sampled`` tokens."""
        ...

    def decode_line(self, decode_seqs: int, kv_tokens: float) -> tuple[float, float, float]:
        """A pure-decode iteration of ``decode_seqs`` requests as ``a + s * kv_tokens``, valid for KV totals up to the
        returned limit (``inf`` if the line holds for ever): ``(a, s, limit)``. The engine sums a run of decode
        iterations in closed form from it."""
        ...


def check_cost_model(server) -> None:
    """Raise ``TypeError`` unless ``server`` has what :class:`CostModel` lists (checked by name, statically)."""
    missing = [
        name
        for name in ("gpus", "kv_capacity_tokens", "decode_lines_fixed", "iteration_cost", "decode_line")
        if not hasattr(server, name)
    ]
    if missing:
        raise TypeError(
            f"server must be a cost model (a Deployment, a ServerConfig, or an object with gpus, kv_capacity_tokens, "
            f"decode_lines_fixed, iteration_cost() and decode_line()); {type(server).__name__} lacks {missing}"
        )
