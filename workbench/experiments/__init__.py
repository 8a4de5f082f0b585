"""Experiments: named parameter studies over the models, run by one :func:`sweep` on Dask, cached and resumable.

An experiment is a pure function of keyword parameters and a seed, registered with its parameter space (names,
defaults, units, allowed values) and a ``version``. :func:`sweep` runs it over a grid x seeds on a Dask cluster (the
process's LocalCluster by default, any scheduler address to go past one machine, or serially), stores each point x
seed under ``$WORKBENCH_CACHE/experiments/<name>/`` so a rerun computes only what is missing, seeds every point from
``numpy.random.SeedSequence`` keyed by the point, and returns one tidy DataFrame.

The registered studies wrap the public model functions (each wrapper keeps the model's keyword names in one place,
so a rename in a model package is a one-line change in the wrapper):

================================  ================================================================================
``arrivals-burstiness``           gaps, counts and waits of a Gamma arrival process vs Poisson
``arrivals-exact-wait``           exact GI/M/1 waiting-time quantile (and Kingman's) vs utilization x process
``arrivals-gap-cv``               measured CV of Gamma gaps vs vLLM burstiness
``arrivals-idc``                  index of dispersion of counts vs window x arrival process
``arrivals-pooled-waits``         waiting-time CCDF and p99 of one FIFO server, pooled over runs, vs process
``arrivals-queue-wait``           waiting time of one FIFO server vs utilization x arrival process
``ballsbins-max-load``            expected maximum load of flows hashed on paths (exact and Monte-Carlo)
``burstgpt-round-trip``           BurstGPT fit -> generate -> fit vs rate scale
``burstgpt-trace-analysis``       BurstGPT's analysis of one trace (per-window fits, lengths, regeneration)
``collective-time-vs-size``       collective completion time vs message size x routing
``diagnosis-detection``           fault detection and localization vs detector x fault x noise
``fabric-congestion``             fabric congestion ratio vs GPU count x routing x collective
``minimal-split-subflows``        the minimal splitting rule's subflow count checked by brute force vs spines
``minimal-split-vs-spray``        the minimal splitting rule vs ideal spraying on random fabrics and demands
``step-congestion``               one collective step's congestion vs ideal, from a named stream, vs routing
``uplink-loads``                  leaf->spine link loads of one (or the busiest) collective step vs routing
``placement-hot-tors``            hot ToRs vs utilization, random vs aware placement
``pred-dumbbell-fct``             flow completion time by size class vs load x marking (one bottleneck)
``pred-fct-vs-load``              flow completion time by size class vs load x marking x routing (leaf-spine)
``pred-leafspine-mix``            PRED vs static baselines on a leaf-spine vs workload mix
``pred-queue-vs-concurrency``     standing queue vs long flows x marking, fluid and packet level (one bottleneck)
``servegen-serving``              a ServeGen span (composed or naive) served on one linear-cost server
``serving-capacity``              serving capacity vs model x hour x workload (composed, naive)
``serving-hardware``              latency and throughput of a deployment (model, GPU, TP, PP, scheduler, balancer)
``serving-hardware-requests``     per-request TTFT and TBT of a ``serving-hardware`` point
``serving-hardware-gpus``         GPUs (TP x replicas) a workload needs within a p99 TTFT and TBT SLO
``serving-iteration``             one iteration's time and attention time of a deployment vs engine x operator costs
``serving-replica``               a named trace window on replicas vs scheduler x preemption x prefix sharing x TP/PP
``serving-replica-requests``      per-request TTFT and TBT of a ``serving-replica`` point
``serving-replica-gpus``          GPUs a trace window needs within an SLO vs engine x operator costs
``serving-swap-cost``             one request's KV swap: copy calls, time and call overhead vs blocks per copy
``training-ettr``                 effective training time ratio vs MTBF x checkpointing
``training-ettr-vs-interval``     ETTR (closed form and Monte-Carlo) and GPU-hours lost vs checkpoint interval
``training-iteration-breakdown``  a job's iteration breakdown, MFU and memory per routing (07's iteration panel)
``training-iteration-time``       training iteration time breakdown vs plan on a leaf-spine
``training-what-if``              execution-graph edit of a base plan: breakdown of both plans and every stage
================================  ================================================================================

Examples
--------
>>> from workbench import experiments
>>> "pred-fct-vs-load" in experiments.names()
True
>>> experiments.get("pred-fct-vs-load").param("marking").choices
('static', 'pred')
"""

from ._engine import cluster, dashboard_link, shutdown
from ._space import Experiment, Param, builtin_modules, experiment, get, names
from ._store import cache_key, cache_path, point_seed
from ._sweep import SweepError, SweepRun, run_point, run_sweep, summarize, sweep

__all__ = [
    "Experiment",
    "Param",
    "experiment",
    "get",
    "names",
    "builtin_modules",
    "sweep",
    "run_point",
    "run_sweep",
    "SweepRun",
    "SweepError",
    "summarize",
    "cluster",
    "dashboard_link",
    "shutdown",
    "point_seed",
    "cache_key",
    "cache_path",
]
