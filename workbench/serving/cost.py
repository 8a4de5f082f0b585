"""The cost-model protocol of the serving engine, the one tabulation of a replica's costs, and the one swap cost.

The engine (its event loop, schedulers and KV accounting, :mod:`workbench.serving.engine`) is one; what a replica
*costs* is a cost model behind this small protocol, :class:`CostModel`. Two implement it:

* :class:`~workbench.serving.roofline.Deployment`: a model on ``tp * pp`` GPUs, per-operator costs from measured
  kernels (sequential or overlapped), the KV capacity left by the weights, its PCIe links for swapping;
* :class:`~workbench.serving.linear.ServerConfig`: the abstract linear-cost server, ``base + prefill_token x prompt
  tokens + decode_seq x decoding requests + kv_token x resident KV tokens`` and a KV budget in tokens.

A cost model turns into **one table** (:class:`CostTable`, ``cost_model.cost_table(max_tokens, max_seqs)``), which
every caller uses: the compiled engine, :meth:`Deployment.iteration_s <workbench.serving.roofline.Deployment
.iteration_s>`, the decode lines of a run, the linear fit. An iteration that prefills sequences ``(c_i, p_i)`` (``c_i``
prompt tokens after a prefix of ``p_i`` already in the cache), decodes ``D`` requests holding ``K`` KV tokens in all and
samples ``s`` tokens costs, per *lane* ``l`` (one lane for engines that run operators one after another; compute,
memory and network lanes for NanoFlow's overlapped execution, whose iteration is the busiest lane)::

    gpu_l = tok[l, sum c_i + D] + head[l, s] + sum_i pairs(c_i, p_i) x pf_rate[l](c_i, p_i) + da[l](D, K / D)
    gpu   = max_l gpu_l + c_prefill x sum c_i + c_decode x D
    iteration = gpu + cpu  (or max(gpu, cpu) for an engine that hides its host step), cpu = cpu0 + per_seq x max(D, s)

``tok`` holds everything that depends only on the tokens of the iteration (projections, the layers' other kernels,
all-reduces, KV writes), ``head`` the LM head by sampled tokens, ``pf_rate`` the prefill attention's seconds per causal
(query, key) pair on a grid of chunk lengths and prefixes (a measured kernel's efficiency), ``da`` the decode
attention of ``b`` requests at a mean context ``L`` on a grid of contexts (exactly linear in ``L`` for a roofline;
measured kernels bend it). Between grid points the engine interpolates linearly, beyond them it extrapolates with the
last segment (token counts, contexts) or holds the last efficiency (chunks, prefixes): more work at the same rate.

**Swap**: a copy of a request's KV between the replica and host memory costs :func:`swap_seconds`, ``ceil(blocks /
group_blocks) x swap_calls_per_copy`` copy calls of ``swap_call_s`` each plus the blocks' bytes at
``swap_s_per_token``: vLLM's ``swap_blocks`` (``csrc/cache_kernels.cu``) issues one ``cudaMemcpyAsync`` per block
and per cache tensor (a K and a V tensor per layer: ``vllm/worker/cache_engine.py``), FastSwitch's block groups
(arXiv 2411.18424) one per contiguous group. The per-call cost, :data:`COPY_CALL_S` = 10 µs, is stated from vLLM's
own measurement (PR #11531, A100-40GB SXM: ``swap_blocks`` moved 1,250 pages at 3.1 GB/s, against 12.6 GB/s for one
kernel copying them all: for a 32 KiB page, one 16-token block of one layer's K or V of an 8B GQA model, that is 10.5
µs per page, of which the bytes take 1.3 µs at 25 GB/s). The bytes go over the replica's PCIe links (one per GPU, each
holding ``1 / gpus`` of the cache) at :data:`PCIE_EFFICIENCY` of their one-direction datasheet rate (the same PR's
one-kernel copies reach 12.6 of 32 GB/s on A100-40GB; pinned ``cudaMemcpy`` of large buffers ~80%: a stated
assumption).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .._contracts import NONNEGATIVE, Int, Opaque, accepts, output
from .._validate import integer
from ._cost_eval import da_at, iteration, iterations, line, pf_cost

__all__ = [
    "COPY_CALL_S",
    "PCIE_EFFICIENCY",
    "CostModel",
    "CostTable",
    "check_cost_model",
    "prefill_of",
    "swap_seconds",
    "work_of",
]

#: Seconds per copy call (one ``cudaMemcpyAsync`` per block and cache tensor in vLLM's ``swap_blocks``): see above.
COPY_CALL_S = 10e-6
#: Fraction of the PCIe datasheet bandwidth (one direction) a pinned-memory KV copy reaches: a stated assumption.
PCIE_EFFICIENCY = 0.8

#: The context grid (tokens per request) of a decode-attention table that is linear in the context.
LINEAR_CONTEXTS = np.array([1.0, 1024.0])


@output
@dataclass(frozen=True, eq=False)
class CostTable:
    """One replica's iteration cost as tables (see the module docstring for the formula).

    Attributes
    ----------
    tok : float64[lanes, T]
        Seconds by tokens in the iteration (prefill plus decode), ``0 .. T - 1``.
    head : float64[lanes, S]
        Seconds by sampled tokens.
    pf_logc, pf_prefix : float64[nc], float64[np]
        The prefill-attention grid: log chunk lengths and prefixes (``np`` may be 1: no prefix dependence).
    pf_rate : float64[lanes, nc, np]
        Prefill attention seconds per causal (query, key) pair at each grid point (``nc = 0``: no prefill attention).
    pf_floor, pf_tile : float
        The prefill attention's seconds per iteration that prefills (a kernel launch per layer), and the chunk of
        the grid a 128-token query tile of a sequence counts for (the grid is one reference geometry's: a shape with
        fewer query heads per GPU runs fewer thread blocks per tile).
    da_len : float64[nl]
        The decode-attention grid of contexts per request (at least two points).
    da : float64[lanes, bmax + 1, nl]
        Decode attention seconds of ``b`` requests at each context (row 0 is zero); above ``bmax`` requests it grows
        in proportion to the requests.
    c_prefill, c_decode : float
        Seconds per prompt token and per decoding request outside the lanes (the linear server's terms).
    cpu0, per_seq : float
        The engine's host seconds per iteration: ``cpu0 + per_seq x max(decodes, sampled)``.
    overlap_cpu : bool
        The host step overlaps the GPU's (the iteration takes the larger of the two).
    """

    tok: np.ndarray
    head: np.ndarray
    pf_logc: np.ndarray
    pf_prefix: np.ndarray
    pf_rate: np.ndarray
    da_len: np.ndarray
    da: np.ndarray
    pf_floor: float = 0.0
    pf_tile: float = 128.0
    c_prefill: float = 0.0
    c_decode: float = 0.0
    cpu0: float = 0.0
    per_seq: float = 0.0
    overlap_cpu: bool = False
    _lines: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # costs are seconds: finite and >= 0, and an iteration of one token takes time (else the engine's clock
        # would stand still: a loop without progress); checked here, before any run
        for name in ("tok", "head", "pf_rate", "da"):
            arr = np.asarray(getattr(self, name), dtype=float)
            if arr.size and not (np.isfinite(arr) & (arr >= 0)).all():
                raise ValueError(f"CostTable: {name} must hold finite seconds >= 0")
        for name in ("pf_floor", "c_prefill", "c_decode", "cpu0", "per_seq"):
            v = float(getattr(self, name))
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"CostTable: {name} must be finite seconds >= 0, got {v}")
        lanes = self.tok.shape[0]
        if self.tok.ndim != 2 or self.head.ndim != 2 or self.head.shape[0] != lanes or self.tok.shape[1] < 2:
            raise ValueError("CostTable: tok and head must be [lanes, >= 2] arrays with the same lanes")
        if not (self.tok[:, 1:].sum(axis=0) + self.c_prefill + self.cpu0 > 0).all():
            raise ValueError(
                "CostTable: an iteration of one or more tokens must take time (tok, c_prefill or cpu0 > 0)"
            )
        if (
            self.da.ndim != 3
            or self.da.shape[0] != lanes
            or self.da.shape[2] != self.da_len.size
            or self.da_len.size < 2
        ):
            raise ValueError("CostTable: da must be [lanes, bmax + 1, contexts] over at least two contexts")
        if self.pf_rate.ndim != 3 or self.pf_rate.shape[0] != lanes:
            raise ValueError("CostTable: pf_rate must be [lanes, chunks, prefixes]")
        if self.pf_rate.shape[1] and (self.pf_rate.shape[1] != self.pf_logc.size or self.pf_rate.shape[2] !=
                                      self.pf_prefix.size or self.pf_logc.size < 2):  # fmt: skip
            raise ValueError("CostTable: pf_rate's grid must match pf_logc (>= 2 chunks) and pf_prefix")

    @property
    def lanes(self) -> int:
        return int(self.tok.shape[0])

    @accepts()
    def arrays(self) -> tuple:
        """The arguments the compiled engine takes, in its order."""
        return (
            self.tok, self.head, self.pf_logc, self.pf_prefix, self.pf_rate, float(self.pf_floor), float(self.pf_tile),
            self.da_len, self.da, float(self.c_prefill), float(self.c_decode), float(self.cpu0), float(self.per_seq),
            bool(self.overlap_cpu),
        )  # fmt: skip

    @accepts()
    def iteration_s(
        self,
        prefill_tokens: float = 0,
        prefill_pairs: float = 0,
        decode_seqs: float = 0,
        kv_tokens: float = 0,
        sampled: float = 0,
        *,
        prefill_tiles: float | None = None,
    ) -> float:
        """Seconds of one iteration prefilling ``prefill_tokens`` tokens (``prefill_pairs`` causal pairs, in sequences
        of ``prefill_tiles`` 128-token query tiles in all: default one sequence), decoding ``decode_seqs`` requests
        that hold ``kv_tokens`` and sampling ``sampled`` tokens (the engine's own formula)."""
        tiles = math.ceil(prefill_tokens / 128) if prefill_tiles is None else prefill_tiles
        return float(iteration(*self.arrays(), float(prefill_tokens), float(prefill_pairs), float(tiles),
                               float(decode_seqs), float(kv_tokens), float(sampled)))  # fmt: skip

    @accepts(decode_seqs=NONNEGATIVE, kv_tokens=NONNEGATIVE)
    def decode_s(self, decode_seqs, kv_tokens) -> np.ndarray:
        """Seconds of pure-decode iterations of ``decode_seqs`` requests holding ``kv_tokens`` (arrays; 0 for no
        request), as the engine computes each."""
        d, k = np.broadcast_arrays(np.asarray(decode_seqs, dtype=float), np.asarray(kv_tokens, dtype=float))
        return iterations(*self.arrays(), d.ravel(), k.ravel()).reshape(d.shape)

    @accepts()
    def prefill_attention_s(self, prefill_tokens: float, prefill_pairs: float, prefill_tiles: float, lane: int = 0):
        """The prefill attention of an iteration in lane ``lane`` (see :meth:`iteration_s`)."""
        return float(pf_cost(self.pf_logc, self.pf_prefix, self.pf_rate, float(self.pf_floor), float(self.pf_tile),
                             lane, float(prefill_tokens), float(prefill_pairs), float(prefill_tiles)))  # fmt: skip

    @accepts()
    def decode_attention_s(self, decode_seqs: float, kv_tokens: float, lane: int = 0) -> float:
        """The decode attention of ``decode_seqs`` requests holding ``kv_tokens`` in lane ``lane``."""
        return float(da_at(self.da_len, self.da, lane, float(decode_seqs), float(kv_tokens)))

    @accepts()
    def decode_line(self, decode_seqs: int, kv_tokens: float) -> tuple[float, float, float]:
        """A pure-decode iteration of ``decode_seqs`` requests as ``a + s * kv_tokens``, valid for KV totals up to the
        returned limit: ``(a, s, limit)`` (the engine's closed form of a run of decode iterations)."""
        a, s, lim = line(*self.arrays(), float(decode_seqs), float(kv_tokens))
        return float(a), float(s), float(lim)


@accepts()
class CostModel(Protocol):
    """What the engine needs of a replica.

    Attributes
    ----------
    gpus : int
        GPUs one replica occupies (what a :class:`~workbench.serving.ServeResult` and a capacity in GPUs count).
    kv_capacity_tokens : int
        KV-cache capacity of one replica, in tokens.
    swap_s_per_token, swap_call_s, swap_calls_per_copy :
        The swap cost's terms (:func:`swap_seconds`; only swap preemption asks: a model without a figure raises
        ``ValueError`` there).

    Optional (read with a default when absent): ``scheduler``, the policy a run uses when given none (else
    ``Scheduler()``), and ``frontend_s``, seconds an API server adds to each request's first and last token (else 0).
    Whether the engine schedules one step ahead is the table's ``overlap_cpu``.
    """

    @property
    def gpus(self) -> int: ...

    @property
    def kv_capacity_tokens(self) -> int: ...

    @property
    def swap_s_per_token(self) -> float: ...

    @property
    def swap_call_s(self) -> float: ...

    @property
    def swap_calls_per_copy(self) -> int: ...

    @accepts()
    def cost_table(self, max_tokens: int = 16384, max_seqs: int = 256) -> CostTable:
        """The replica's :class:`CostTable`, exact for iterations of up to ``max_tokens`` tokens and ``max_seqs``
        decoding requests (extrapolated beyond)."""
        ...


#: What every run needs of a :class:`CostModel` (the contracts check these; the swap terms only where swap preemption
#: asks). Set on the protocol outside its body, where a type checker would take it for a member.
_REQUIRED = ("gpus", "kv_capacity_tokens", "cost_table")
CostModel._required = _REQUIRED  # type: ignore[attr-defined]


@accepts(server=Opaque("any object: this is the check"))
def check_cost_model(server) -> None:
    """Raise ``TypeError`` unless ``server`` has what :class:`CostModel` lists (checked by name, statically)."""
    missing = [name for name in _REQUIRED if not hasattr(server, name)]
    if missing:
        raise TypeError(
            f"server must be a cost model (a Deployment, a ServerConfig, or an object with gpus, kv_capacity_tokens "
            f"and cost_table()); {type(server).__name__} lacks {missing}"
        )


@accepts(
    server=Opaque("a cost model (CostModel)"),
    tokens=NONNEGATIVE,
    block_tokens=Int(ge=1, le=4096),
    group_blocks=Int(ge=1, le=10**6),
)
def swap_seconds(server, tokens, *, block_tokens: int = 16, group_blocks: int = 1):
    """Seconds to copy the KV of ``tokens`` tokens (whole blocks of ``block_tokens``) one way between ``server`` and
    host memory: ``ceil(blocks / group_blocks) x swap_calls_per_copy`` calls of ``swap_call_s`` plus the bytes.

    The one swap cost: the engine charges it for every swap (``Scheduler(preemption="swap")``), per block
    (``group_blocks=1``, vLLM) or per block group (FastSwitch).

    Examples
    --------
    >>> from workbench.serving import Deployment
    >>> d = Deployment("Llama-3.1-8B", "A100-80GB")
    >>> round(float(swap_seconds(d, 1024)) * 1e3, 1), round(float(swap_seconds(d, 1024, group_blocks=64)) * 1e3, 1)
    (46.2, 5.9)
    """
    B = integer("block_tokens", block_tokens, minimum=1)
    G = integer("group_blocks", group_blocks, minimum=1)
    tok = np.asarray(tokens, dtype=np.int64)
    if (tok < 0).any():
        raise ValueError(f"tokens must be >= 0, got {tok.min()}")
    blocks = (tok + B - 1) // B
    calls = (blocks + G - 1) // G * int(server.swap_calls_per_copy)
    return calls * float(server.swap_call_s) + blocks * B * float(server.swap_s_per_token)


@accepts()
def work_of(
    prefill_tokens: float = 0,
    prefill_pairs: float = 0,
    decode_seqs: float = 0,
    kv_tokens: float = 0,
    sampled: float | None = None,
) -> tuple[float, float, float, float, float]:
    """The work of one iteration, by position or name (``sampled`` defaults to ``decode_seqs``)."""
    return prefill_tokens, prefill_pairs, decode_seqs, kv_tokens, decode_seqs if sampled is None else sampled


@accepts()
def prefill_of(
    P: float, pairs: float, prefill_seqs: float | None = None, prefill_tiles: float | None = None
) -> tuple[float, float, float]:
    """``(tokens, pairs, tiles)`` of an iteration's prefill given its tokens and causal pairs: ``prefill_tiles`` if
    given, else ``prefill_seqs`` equal sequences (default: one, unless the pairs are fewer than one prompt's of ``P``
    tokens, which means several prompts, taken as equal prompts of ``2 pairs / P - 1`` tokens: exact for equal
    prompts), each of ``ceil(tokens / 128)`` query tiles."""
    if P <= 0:
        return 0.0, 0.0, 0.0
    if prefill_tiles is not None:
        return float(P), float(pairs), float(prefill_tiles)
    if prefill_seqs is None:
        n = P / max(2 * pairs / P - 1, 1.0) if pairs < P * (P + 1) / 2 - 1e-9 else 1.0
    else:
        n = float(prefill_seqs)
        if n <= 0:
            raise ValueError(f"prefill_seqs must be > 0, got {prefill_seqs}")
    return float(P), float(pairs), n * math.ceil(P / n / 128 - 1e-9)
