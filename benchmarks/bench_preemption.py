"""Priority preemption in LLM serving (FastSwitch, issue 28, on the one engine since issue 37): 10,000 multi-turn
requests (about 3 million output tokens) served on one replica with priorities reshuffled at 0.02 per iteration, under
vLLM's mechanism and under all three FastSwitch mechanisms, every inter-token gap recorded, in a few seconds each on
one core (the engine's compiled event loop; the load is one at which vLLM stays below its swap cliff, so the run
length is the workload's, not a collapse's)."""

from __future__ import annotations

from benchmarks import Benchmark, best_time
from workbench.serving.conversations import conversations
from workbench.serving.preemption import PriorityProcess, fastswitch_scheduler, run
from workbench.serving.roofline import Deployment

_DEP = Deployment("Llama-3.1-8B", "A100-80GB", max_kv_tokens=16384, engine="vllm-v0")


def _requests():
    return conversations(3_100, 0.35, seed=0)  # 10,100 turns


def _run(mech: str) -> float:
    reqs = _requests()
    sch = fastswitch_scheduler(mech, PriorityProcess("reshuffle", 0.02))
    run(conversations(5, 1.0), _DEP, sch, seed=0)  # compile outside the clock (cached on disk)
    return best_time(lambda: run(reqs, _DEP, sch, seed=0), repeat=2)


BENCHMARKS = [
    Benchmark("10k multi-turn requests, vLLM's swap (sync, per block)", 3.0, "s", lambda: _run("vllm")),
    Benchmark("10k multi-turn requests, FastSwitch (groups, async, reuse)", 3.0, "s", lambda: _run("fastswitch")),
]
