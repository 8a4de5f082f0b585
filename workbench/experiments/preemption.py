"""Priority preemption in LLM serving: context-switch mechanisms vs priority-change rate, block size, PCIe, load.

* ``llm-preemption`` -- ``n_conversations`` multi-turn conversations (:func:`workbench.serving.conversations
  .conversations`, starting at ``load`` conversations per second) served on one replica of ``model`` on ``gpu`` with
  its KV cache capped at ``kv_tokens`` (memory pressure), priorities changing by ``priority_kind`` at ``rate`` per
  iteration over ``levels`` levels, and preemption by swapping under ``mechanism`` (:data:`workbench.serving
  .preemption.MECHANISMS`: ``vllm``, ``+block-groups``, ``+async``, ``+reuse``, ``fastswitch``) with
  ``block_tokens``-token blocks, ``group_blocks`` blocks per group (the block-group mechanisms), ``pcie_gbs`` GB/s
  per GPU and direction (0: the GPU table's) and ``launch_s`` per copy call: the one engine
  (:func:`workbench.serving.preemption.run`) with the mechanism's scheduler and the deployment's swap cost, on the
  engine profile of vLLM 0.x (``"vllm-v0"``: swap preemption is a V0 feature; V1 recomputes preempted requests, vLLM docs
  "Optimization and Tuning", Preemption, https://docs.vllm.ai/en/stable/configuration/optimization/), without an API server (FastSwitch measures at the engine).

Reported (:func:`workbench.serving.preemption.summary`): p99 and mean TTFT and TBT (FastSwitch's TBT: every gap
between tokens), output tokens per second, the synchronous stall's share of the tail TTFT and TBT and of the run,
preemptions per request, GB copied, and the fraction finished. ``mechanism`` is a treatment (not
seeded), and so are the priority process, the copy mechanism's constants, the KV cap and the hardware: every
value of them serves the same conversations with the same initial priorities and the same stream of random draws
(common random numbers); only ``load``, ``n_conversations`` and ``think_s`` shape the conversations.
"""

from __future__ import annotations

from ..serving.conversations import conversations
from ..serving.preemption import MECHANISMS, PRIORITY_KINDS, PriorityProcess, fastswitch_scheduler, run, summary
from ..serving.roofline import Deployment
from ._space import Param, experiment

__all__ = ["llm_preemption", "MODELS", "GPUS"]

MODELS = ("Llama-3.1-8B", "Llama-2-13B", "Llama-2-7B")
GPUS = ("A100-80GB", "A100-40GB", "H100-SXM", "L40S")


@experiment(
    "llm-preemption",
    version="6",
    small={"n_conversations": 60, "mechanism": ["vllm", "fastswitch"], "rate": [0.01, 0.05]},
    params=[
        Param("mechanism", "vllm", choices=tuple(MECHANISMS), seeded=False, doc="how preemption moves KV caches"),
        Param(
            "rate",
            0.02,
            "fraction",
            low=0.0,
            high=1.0,
            seeded=False,
            label="priority change rate",
            doc="priority-change probability per iteration",
        ),
        Param(
            "priority_kind",
            "reshuffle",
            choices=PRIORITY_KINDS,
            seeded=False,
            doc="reshuffle all at once or a Markov walk",
        ),
        Param("levels", 8, "", low=1, high=1024, seeded=False, doc="priority levels"),
        Param("block_tokens", 16, "tokens", choices=(8, 16, 32, 64, 128), seeded=False, doc="KV block size"),
        Param(
            "group_blocks",
            64,
            "",
            low=1,
            high=4096,
            log=True,
            seeded=False,
            doc="blocks per group (block groups)",
        ),
        Param(
            "pcie_gbs",
            0.0,
            "",
            low=0.0,
            high=1000.0,
            seeded=False,
            label="PCIe per GPU (GB/s)",
            doc="PCIe per GPU and direction in GB/s (0: the GPU table's)",
        ),
        Param("launch_s", 10e-6, "s", low=1e-7, high=1e-2, log=True, seeded=False, doc="overhead per copy call"),
        Param(
            "load",
            0.6,
            "",
            low=0.0,
            low_inclusive=False,
            high=1000.0,
            label="load (conversations/s)",
            doc="conversation arrival rate per second",
        ),
        Param(
            "n_conversations",
            200,
            "",
            low=1,
            high=100_000,
            log=True,
            doc="conversations served (100,000: about 320,000 turns and 1e8 output tokens, whose every gap is kept)",
        ),
        Param("think_s", 5.0, "s", low=0.0, low_inclusive=False, doc="mean pause between turns"),
        Param("model", "Llama-3.1-8B", choices=MODELS, seeded=False, doc="served model"),
        Param("gpu", "A100-80GB", choices=GPUS, seeded=False, doc="accelerator"),
        Param(
            "kv_tokens",
            16384,
            "tokens",
            low=1024,
            high=10_000_000,
            log=True,
            seeded=False,
            doc="KV cache cap (pressure)",
        ),
    ],
)
def llm_preemption(
    *,
    mechanism,
    rate,
    priority_kind,
    levels,
    block_tokens,
    group_blocks,
    pcie_gbs,
    launch_s,
    load,
    n_conversations,
    think_s,
    model,
    gpu,
    kv_tokens,
    seed,
):
    """Tail latency, throughput and stall share of one mechanism at one point."""
    reqs = conversations(n_conversations, load, think_s=think_s, max_context=min(4096, kv_tokens // 2), seed=seed)
    dep = Deployment(model, gpu, max_kv_tokens=kv_tokens, pcie_gbs=pcie_gbs if pcie_gbs > 0 else None,
                     copy_call_s=launch_s, engine="vllm-v0")  # fmt: skip
    sch = fastswitch_scheduler(mechanism, PriorityProcess(priority_kind, rate, levels), group_blocks=group_blocks,
                               block_tokens=block_tokens)  # fmt: skip
    out = summary(run(reqs, dep, sch, seed=seed))
    out["requests"] = float(len(reqs))
    return out
