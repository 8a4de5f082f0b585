"""Per-machine monitoring metrics sampled at a fixed interval, as a monitoring agent would report them.

Minder (Deng et al., NSDI 2025) detects faulty machines from such metrics: CPU usage, PFC Tx packet rate, GPU duty
cycle and power draw, NVLink bandwidth, memory usage, TCP+RDMA throughput (its list; the blog summary at
https://photoszzt.github.io/blog/2025/minder lists them). Each sample reports the value over the iteration it falls
in, with multiplicative noise ``Noise.metric_sigma``:

* ``gpu_util``: share of the iteration the machine's GPUs compute (a slow GPU computes longer, its peers wait);
* ``gpu_power_w``: per-GPU mean, 80 W idle + 620 W x util; a throttled GPU draws ``1/sqrt(severity)`` of that;
* ``nvlink_gbps``, ``nic_gbps``, ``pcie_gbps``: bytes moved per iteration / iteration time (the same on every healthy
  machine of a synchronous job; 0 on a dead one);
* ``cpu_util``: 0.3 baseline, + 0.35 x (severity - 1) under CPU contention (capped at 1);
* ``mem_util``: 0.6 with noise (0.05 on a dead machine);
* ``pfc_pps``: PFC pause frames; ~50/s baseline, + 2,000/s x (severity - 1) on a machine whose NIC or link is
  degraded, flapping or the cause of an irregular iteration.

After a fail-stop, the other machines' GPUs spin in the hung collective (util 1, NCCL's busy-wait) while the dead
machine drops to idle.
"""

from __future__ import annotations

import numpy as np

from ..._contracts import Opaque, accepts
from .faults import FAULT_KINDS

__all__ = ["METRICS", "machine_metrics"]

METRICS = ("gpu_util", "gpu_power_w", "nvlink_gbps", "nic_gbps", "pcie_gbps", "cpu_util", "mem_util", "pfc_pps")
_NIC_GBPS, _NVLINK_GBPS, _PCIE_GBPS = 400.0, 900.0, 16.0
#: The most metric values (``samples x machines x metrics``) :func:`machine_metrics` draws: 800 MB of float32, and
#: as much again for their noise.
MAX_METRIC_VALUES = 200_000_000


@accepts(signals=Opaque("a Signals record from simulate"), effects=Opaque("the faults' effects, from simulate"))
def machine_metrics(signals, effects, rng: np.random.Generator) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """Names, sample times and values ``float32 (samples, machines, metrics)`` of the machines' metrics."""
    job = signals.job
    m, rpm, it = job.machines, job.ranks_per_machine, signals.iterations
    nominal = job.iteration_s
    live = int(np.searchsorted(np.isnan(signals.iteration_end_s), True))
    dur = np.where(np.isnan(signals.iteration_time_s), nominal, signals.iteration_time_s)
    horizon = float(np.nansum(dur))
    n_samples = int(np.ceil(horizon / signals.sample_interval_s))
    if n_samples * m * len(METRICS) > MAX_METRIC_VALUES:
        raise ValueError(
            f"the job runs {horizon:,.0f} s ({it:,} iterations of {horizon / it:.3g} s on average at its noise "
            f"level): {n_samples:,} samples every sample_interval_s = {signals.sample_interval_s:g} s of "
            f"{len(METRICS)} metrics on {m:,} machines is {n_samples * m * len(METRICS):.3g} values, over the "
            f"{MAX_METRIC_VALUES:,} drawn at most: lower the noise level, iterations or ranks, or sample less often"
        )
    sample_s = np.arange(0.0, horizon, signals.sample_interval_s)
    ends = (
        np.concatenate(
            [signals.iteration_end_s[:live], signals.iteration_start_s[live - 1 : live] + np.cumsum(dur[live - 1 :])]
        )
        if live < it
        else signals.iteration_end_s
    )
    idx = np.minimum(np.searchsorted(ends, sample_s, side="right"), it - 1)

    comp = signals.compute_s.reshape(it, m, rpm)
    seen = (~np.isnan(comp)).sum(axis=2)
    util = np.nansum(comp, axis=2) / np.maximum(seen, 1) / dur[:, None]  # (it, m); no record -> busy
    util = np.clip(np.where(seen > 0, util, 1.0), 0.0, 1.0).astype(np.float32)
    power_scale = np.ones((it, m), np.float32)
    cpu = np.full((it, m), 0.3, np.float32)
    pfc = np.full((it, m), 50.0, np.float32)
    dead = np.zeros(m, bool)
    halt = it
    for f, fx in zip(signals.faults, effects):
        mach = f.machine(rpm)
        if f.kind == "slow_gpu":
            power_scale[fx.active, mach] = 1.0 - (1.0 - 1.0 / np.sqrt(f.severity)) / rpm  # one GPU of the machine
        elif f.kind == "cpu_contention":
            cpu[fx.active, mach] = min(1.0, 0.3 + 0.35 * (f.severity - 1.0))
        elif FAULT_KINDS.get(f.kind) == "link":
            pfc[fx.active, mach] += 2000.0 * (f.severity - 1.0)
        elif f.kind == "fail_stop":
            dead[mach] = True
            halt = min(halt, f.onset_iteration)
    through = (nominal / dur).astype(np.float32)[:, None] * np.ones((1, m), np.float32)
    if halt < it:
        util[halt:] = 1.0
        util[halt:, dead] = 0.0
        through[halt:] = 0.0
        cpu[halt:, dead] = 0.02
    power = (80.0 + 620.0 * util * power_scale).astype(np.float32)
    mem = np.full((it, m), 0.6, np.float32)
    if halt < it:
        mem[halt:, dead] = 0.05
        power[halt:, dead] = 80.0
    names = METRICS
    per_iter = (
        util,
        power,
        through * _NVLINK_GBPS * job.allreduce_s / nominal,
        through * _NIC_GBPS * job.allreduce_s / nominal,
        through * _PCIE_GBPS * 0.1,
        cpu,
        mem,
        pfc,
    )
    values = np.stack([v.astype(np.float32, copy=False) for v in per_iter], axis=-1)[idx]  # per iteration, then sampled
    noise = rng.standard_normal(values.shape, dtype=np.float32)
    noise *= np.float32(signals.noise.metric_sigma)
    np.exp(noise, out=noise)
    values *= noise
    return names, sample_s, values
