"""Serving-engine profiles: the host (CPU) work an engine does per iteration, whether it overlaps the GPU step, its
kernels' families, its default scheduling policy and what its API server adds to a request's first token.

One row of ``datasets/serving_specs/engines.csv`` per engine, each number with its source. Per iteration the engine's
CPU work is ``iteration_s + per_seq_s * sequences`` plus, with ``tp >= 2``, ``tp_iteration_s + tp_rpc_s`` (feeding
more workers; the worker RPC of Ray-based engines) and ``rpc_per_seq_s * tp * sequences`` (the 2023 vLLM's pickling
of every sequence's metadata for each worker). An engine with ``overlap_cpu`` prepares the next step while the
GPU runs this one, so the iteration takes ``max(GPU time, CPU time)``; an eager engine pays ``GPU time + CPU time``.
Scheduling one step ahead has a price the engine charges too: a request that arrives while step N runs is seen when
step N + 2 is scheduled (:mod:`workbench.serving.engine`). GPU-side efficiency (kernels, CUDA graphs vs eager
launches) is not part of a profile beyond the all-reduce and attention kernel families (prefill ``attention`` and
``decode_attention``).

Which engine to name (``Deployment(..., engine=...)``; :data:`ALIASES` gives the same profiles under era names):

* ``"vllm"`` (alias ``"vllm-v1"``): a current vLLM (V1 engine, 2025+): CPU work hidden by async scheduling, custom
  all-reduce, FlashAttention 3 on Hopper, and its default policy :meth:`EngineProfile.scheduler`: chunked prefill
  under the OpenAI server's token budget (8,192 tokens, 1,024 sequences on >= 70 GiB GPUs that are not A100s; 2,048
  and 256 otherwise), plus ``frontend_s`` of HTTP server per request.
* ``"vllm-v0"``: the eager vLLM 0.x of 2023-24 (the engine of the Sarathi-Serve and Vidur artifacts): measured CPU
  work between GPU steps, Ray workers, NCCL, xformers prefill attention, a grouped-query-aware paged decode kernel
  (FlashAttention's, the measured profile's), prefill-first scheduling of whole prompts (``Scheduler("vllm")``).
* ``"vllm-2023"``: the 2023 releases (vLLM 0.1-0.2): ``"vllm-v0"`` with vLLM's own PagedAttention decode kernel
  (``decode_attention="paged-v1"``: a grouped-query model's KV heads are read once per query head, the share of the
  repeats that reaches HBM measured: :func:`workbench.serving.attention.decode_read_factor`) and Ray workers sent
  every sequence's metadata each step (``rpc_per_seq_s``, from vLLM PR #2221's measured speed-up).
* ``"trtllm-v0.5"``: TensorRT-LLM of late 2023 (v0.5-v0.7): no overlap scheduler, NCCL, and the masked multi-head
  attention decode kernel before XQA (``decode_attention="mmha"``: a KV head read once per query head, as vLLM's
  2023 kernel does).
* ``"sarathi-serve"``, ``"sglang"``, ``"trtllm"``, ``"nanoflow"``: see each row's description.

A profile without a stated ``scheduler`` leaves the policy to the caller (``Scheduler()`` by default).

Examples
--------
>>> e = engine("vllm-v0")
>>> e.overlap_cpu, round(e.cpu_s(32, tp=1) * 1e3, 2), round(e.cpu_s(32, tp=4) * 1e3, 2)
(False, 2.17, 9.08)
>>> engine("vllm").combine(gpu_s=0.010, cpu_s=0.002)   # async scheduling hides the CPU step
0.01
>>> engine("vllm-v1") == engine("vllm"), engine("vllm-2023").decode_attention
(True, 'paged-v1')
>>> s = engine("vllm").scheduler("H100-SXM")   # V1's OpenAI-server defaults on an 80 GB Hopper
>>> s.kind, s.max_num_batched_tokens, s.max_num_seqs
('sarathi', 8192, 1024)
>>> engine("vllm").scheduler("A100-80GB").max_num_batched_tokens   # A100s keep the smaller budget
2048
"""

from __future__ import annotations

from dataclasses import dataclass

from .._contracts import Text, accepts
from .._deps import remember
from ..data import require
from ..tables import read_table
from .attention import DECODE_KERNELS
from .scheduler import SCHEDULERS, Scheduler
from .specs import GPU, gpu

__all__ = ["ALIASES", "DECODE_KERNELS", "ENGINES_CSV", "EngineProfile", "engine", "engines"]

#: The engine profiles' table on the data search path (the project's ``datasets/`` unless shadowed).
ENGINES_CSV = "serving_specs/engines.csv"
_NUMBERS = ("iteration_s", "per_seq_s", "tp_iteration_s", "tp_rpc_s")
#: Optional number columns (0 when empty or absent).
_OPTIONAL = ("rpc_per_seq_s",)
_POLICY = ("max_num_batched_tokens", "max_num_seqs", "large_gpu_max_num_batched_tokens", "large_gpu_max_num_seqs")
#: Era names for the vLLM profiles: the current V1 engine (the 2023 releases have a row of their own, ``vllm-2023``).
ALIASES = {"vllm-v1": "vllm"}
#: vLLM's "large GPU" test for its larger batch defaults (vllm/engine/arg_utils.py, get_batch_defaults): at least
#: 70 GiB of device memory, and not an A100 (a larger budget lowered A100 throughput, vLLM PR #17885).
LARGE_GPU_BYTES = 70 * 2**30


@accepts(policy_kind=Text(empty=True), description=Text(empty=True), source=Text(empty=True), decode_attention=Text())
@dataclass(frozen=True)
class EngineProfile:
    """One engine's per-iteration host costs (seconds) and whether they overlap the GPU step; ``source`` says where
    each number comes from."""

    engine: str
    iteration_s: float
    per_seq_s: float
    tp_iteration_s: float
    tp_rpc_s: float
    overlap_cpu: bool
    description: str = ""
    source: str = ""
    allreduce: str = "nccl"  # "custom": a one-/two-shot all-reduce kernel over NVLink for small messages
    attention: str = "flash2"  # prefill attention kernel family (workbench.serving.attention.KERNELS)
    #: default scheduling policy: kind, then (budget, sequences) on other GPUs and on large ones; "" = not stated
    policy_kind: str = ""
    policy: tuple[int, int, int, int] = (0, 0, 0, 0)
    #: seconds the engine's API server adds to every request's first token (and last) as the client sees it
    frontend_s: float = 0.0
    #: host seconds per running sequence and tensor-parallel worker of an iteration at ``tp >= 2``: the Ray workers of
    #: vLLM before PR #2221 (2024-01) received every sequence's metadata, pickled once per worker, each step
    rpc_per_seq_s: float = 0.0
    #: the decode attention kernel family (one of :data:`DECODE_KERNELS`): ``"gqa"`` reads each
    #: KV head once for all its query heads (FlashAttention's and FlashInfer's paged kernels, the measured profile),
    #: ``"paged-v1"`` is vLLM's PagedAttention kernel of 2023, one thread block per query head re-reading its KV head,
    #: ``"mmha"`` TensorRT-LLM's masked multi-head attention kernel before XQA (the same design)
    decode_attention: str = "gqa"
    #: the stated policy's KV watermark (fraction of blocks kept free on admission) and whether freed blocks stay
    #: cached (:class:`~workbench.serving.scheduler.Scheduler` fields ``watermark`` and ``prefix_cache``)
    watermark: float = Scheduler.watermark
    prefix_cache: bool = False

    @accepts()
    def scheduler(self, on: str | GPU) -> Scheduler | None:
        """The engine's default :class:`~workbench.serving.scheduler.Scheduler` on GPU ``on`` (its stated kind and
        budgets, the large-GPU pair where vLLM's test holds), or ``None`` when the profile states no policy."""
        if not self.policy_kind:
            return None
        g = gpu(on)
        large = g.hbm_bytes >= LARGE_GPU_BYTES and "a100" not in g.gpu.lower()
        tokens, seqs = self.policy[2:] if large else self.policy[:2]
        return Scheduler(
            self.policy_kind,
            max_num_seqs=seqs,
            max_num_batched_tokens=tokens,
            watermark=self.watermark,
            prefix_cache=self.prefix_cache,
        )

    @accepts()
    def cpu_s(self, sequences: float, *, tp: int = 1) -> float:
        """Host seconds of one iteration over ``sequences`` running sequences on a ``tp``-GPU replica."""
        extra = self.tp_iteration_s + self.tp_rpc_s if tp > 1 else 0.0
        return self.iteration_s + self.per_seq(tp) * sequences + extra

    @accepts()
    def per_seq(self, tp: int = 1) -> float:
        """Host seconds per running sequence of one iteration on a ``tp``-GPU replica (``per_seq_s``, plus
        ``rpc_per_seq_s`` for each of the ``tp`` workers at ``tp >= 2``)."""
        return self.per_seq_s + (self.rpc_per_seq_s * tp if tp > 1 else 0.0)

    @accepts()
    def combine(self, gpu_s: float, cpu_s: float) -> float:
        """The iteration's duration: ``max`` of the two when the engine overlaps them, else their sum."""
        return max(gpu_s, cpu_s) if self.overlap_cpu else gpu_s + cpu_s


@accepts()
@remember
def engines() -> dict[str, EngineProfile]:
    """Every profile of ``engines.csv``, by name; a malformed row is an error naming the file and line."""
    out: dict[str, EngineProfile] = {}
    path = require(ENGINES_CSV)
    table = read_table(path, ("engine", *_NUMBERS, "overlap_cpu", "description", "source"), what="engine profile")
    for i, row in enumerate(table.records()):
        lineno = table.lines[i]
        try:
            values = {k: float(row[k]) for k in _NUMBERS}
            values.update({k: float(row.get(k) or 0.0) for k in _OPTIONAL})
            if any(not 0 <= v < 1 for v in values.values()):
                raise ValueError(f"costs must be in [0, 1) s, got {values}")
            overlap = {"true": True, "false": False}[row["overlap_cpu"].strip().lower()]
            allreduce = (row.get("allreduce") or "nccl").strip()
            if allreduce not in ("nccl", "custom"):
                raise ValueError(f"allreduce must be 'nccl' or 'custom', got {allreduce!r}")
            attention = (row.get("attention") or "flash2").strip()
            if attention not in ("xformers", "flash2", "flash2-paged", "flash3"):
                raise ValueError(f"attention must be xformers, flash2, flash2-paged or flash3, got {attention!r}")
            kind = (row.get("scheduler") or "").strip()
            if kind and kind not in SCHEDULERS:
                raise ValueError(f"scheduler must be one of {', '.join(SCHEDULERS)} or empty, got {kind!r}")
            policy = tuple(int(row[k]) if kind else 0 for k in _POLICY)
            if kind and min(policy) < 1:
                raise ValueError(f"a stated scheduler needs positive {', '.join(_POLICY)}, got {policy}")
            frontend = float(row.get("frontend_s") or 0.0)
            if not 0 <= frontend < 1:
                raise ValueError(f"frontend_s must be in [0, 1) s, got {frontend}")
            watermark = float(row.get("watermark") or Scheduler.watermark)
            if not 0 <= watermark < 1:
                raise ValueError(f"watermark must be in [0, 1), got {watermark}")
            pcache = (row.get("prefix_caching") or "false").strip().lower()
            if pcache not in ("true", "false"):
                raise ValueError(f"prefix_caching must be true, false or empty, got {pcache!r}")
            decode = (row.get("decode_attention") or "gqa").strip()
            if decode not in DECODE_KERNELS:
                raise ValueError(f"decode_attention must be one of {', '.join(DECODE_KERNELS)}, got {decode!r}")
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}:{lineno}: malformed engine row ({exc})") from None
        name = row["engine"].strip()
        if name in out:
            raise ValueError(f"{path}:{lineno}: engine {name!r} is listed twice")
        out[name] = EngineProfile(
            name,
            **values,
            overlap_cpu=overlap,
            description=row["description"],
            source=row["source"],
            allreduce=allreduce,
            attention=attention,
            policy_kind=kind,
            policy=policy,  # type: ignore[arg-type]
            frontend_s=frontend,
            decode_attention=decode,
            watermark=watermark,
            prefix_cache=pcache == "true",
        )
    return out


@accepts()
def engine(name: str | EngineProfile) -> EngineProfile:
    """The profile called ``name`` or one of its :data:`ALIASES` (a profile passes through); ``ValueError`` listing
    the known engines otherwise."""
    if isinstance(name, EngineProfile):
        return name
    table = engines()
    name = ALIASES.get(name, name)
    if name not in table:
        raise ValueError(
            f"unknown engine {name!r}; engines.csv has: {', '.join(table)} (aliases: {', '.join(ALIASES)})"
        )
    return table[name]
