"""Generation's long tail in RLHF and RLHFuse's inter-stage fusion (issue 27, part 2).

An RLHF iteration first *generates* a response to every prompt with the Actor (decoding), then runs *inference*
(the Reference, Critic and Reward models score every sample: one forward pass each), then trains. Generation is
data-parallel over ``instances`` serving replicas (each a :class:`~workbench.serving.roofline.Deployment`), each
holding its share of the samples as one continuously batched decode. Output lengths are long-tailed, so near the end
a few long samples hold the whole stage while most instances idle (RLHFuse, Zhong et al., NSDI'25, arXiv
2409.13221v3, abstract and §1-§2: "the generation bottleneck dominated by long-tailed samples").

The model, per instance (:func:`decode_timeline`): samples sorted by output length ``L``; decode step ``t`` runs the
``b(t) = #{L_i >= t}`` samples still unfinished over their resident contexts ``kv(t) = sum (P_i + t - 1)``; its
duration is the serving package's iteration cost for the deployment at that batch and KV
(:func:`decode_cost`: the deployment's one cost table, what the serving engine computes; nothing of the roofline is
restated here). A sample finishes at the prefill plus the cumulative step times
up to its length. All steps of an instance are one array: no loop over samples.

* **Baseline** (:func:`generation_stage`): inference starts when the last sample of the last instance is done, and
  runs on all instances: ``T = max_i c_i + W / I``.
* **Fused** (RLHFuse's inter-stage fusion): once at most ``threshold * n`` samples remain (at ``t_m``), they migrate
  (their KV caches, over the instances' NICs) to ``tail_instances`` instances, which finish them; the freed
  instances start inference on the finished samples at once, and every tail instance joins them when its last
  sample is done. Inference work is divisible (batched forward passes, additive over samples), so the stage ends
  when a fluid server of that time-varying capacity has done the work arriving at the samples' completion times.

Inference per sample costs ``inference_models`` forward passes of an Actor-sized model over its ``P + L`` tokens
(compute-bound prefill at the deployment's roofline: ``k_tok (P+L) + k_pair (P+L)(P+L+1)/2`` seconds).

Output lengths come from the project's length models (:func:`sample_lengths`): ServeGen's reasoning model
(DeepSeek-R1's pooled output PMF; prompts from its input PMF) or the BurstGPT generator (Zipf prompts, log-normal
responses whose ``sigma`` sets the tail), both capped at ``max_tokens`` (RLHF generation sets a maximum length).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._deps import remember
from .._rng import Seed, generator
from .._validate import in_range, integer, nonnegative, one_of, positive
from ..serving.roofline import Deployment

__all__ = [
    "SOURCES",
    "TailRun",
    "sample_lengths",
    "decode_cost",
    "decode_timeline",
    "inference_seconds",
    "generation_stage",
    "threshold_curve",
]

SOURCES = ("servegen-reasoning", "burstgpt")


@remember
def _reasoning_pmfs() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    from ..workloads import servegen as sg

    pool = sg.load_pool("deepseek-r1")
    return pool.pooled_pmf("input_tokens"), pool.pooled_pmf("output_tokens")


def sample_lengths(
    source: str,
    n: int,
    *,
    sigma: float = 0.8,
    max_tokens: int = 8192,
    max_prompt: int = 2048,
    seed: Seed = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Prompt and output token lengths of ``n`` RLHF samples from one of the project's length models.

    Parameters
    ----------
    source : {"servegen-reasoning", "burstgpt"}
        ``"servegen-reasoning"``: ServeGen's DeepSeek-R1 pooled input and output PMFs (independent draws; the
        embedded summary is used where the raw release is absent). ``"burstgpt"``: the BurstGPT generator's Zipf
        (1.1) prompts and ``log(response) = 3.5 + 0.3 log(prompt) + sigma N(0, 1)``.
    sigma : float
        The BurstGPT response's log-space spread: the tail's weight (unused for ServeGen).
    max_tokens, max_prompt : int
        Caps on the output (the generation's maximum length) and on the prompt.

    Examples
    --------
    >>> p, o = sample_lengths("burstgpt", 1000, sigma=1.2, max_tokens=4096, seed=0)
    >>> int(o.max()) <= 4096, int(p.max()) <= 2048, bool(o.max() > 10 * np.median(o))
    (True, True, True)
    """
    one_of("source", source, SOURCES)
    n = integer("n", n, minimum=1)
    max_tokens = integer("max_tokens", max_tokens, minimum=1)
    max_prompt = integer("max_prompt", max_prompt, minimum=1)
    sigma = nonnegative("sigma", sigma)
    rng = generator(seed)
    if source == "burstgpt":
        from ..workloads import burstgpt

        m = burstgpt.from_params(60.0, 1.0, response_sigma=sigma, response_max=max_tokens)
        prompt, out = burstgpt.sample_requests(m, n, seed=rng)
    else:
        (vi, pi), (vo, po) = _reasoning_pmfs()
        prompt = rng.choice(vi, size=n, p=pi / pi.sum()).astype(np.int64)
        out = rng.choice(vo, size=n, p=po / po.sum()).astype(np.int64)
    return np.clip(prompt, 1, max_prompt).astype(np.int64), np.clip(out, 1, max_tokens).astype(np.int64)


def decode_cost(deployment: Deployment, batch, kv_tokens) -> np.ndarray:
    """Seconds of pure-decode iterations at ``batch`` running samples over ``kv_tokens`` resident tokens (arrays).

    The serving model's own iteration (:meth:`~workbench.serving.cost.CostTable.decode_s` of the deployment's one
    cost table, what its engine computes). A batch of 0 costs 0.

    Examples
    --------
    >>> d = Deployment("Llama-3.1-8B", "H100-SXM")
    >>> c = decode_cost(d, [1, 50], [1000, 80_000])
    >>> bool(abs(c[1] - d.iteration_s(decode_seqs=50, kv_tokens=80_000)) < 1e-9 * c[1])
    True
    """
    if not isinstance(deployment, Deployment):
        raise TypeError(f"deployment must be a Deployment, got {type(deployment).__name__}")
    b = np.asarray(batch, dtype=float)
    kv = np.asarray(kv_tokens, dtype=float)
    if b.size and (b.min() < 0 or kv.min() < 0):
        raise ValueError("batch and kv_tokens must be >= 0")
    return deployment.cost_table().decode_s(b, kv)


def decode_timeline(
    deployment: Deployment, prompt, output, *, start_s: float = 0.0, prefill: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Completion time of every sample decoded together on one instance, and the end time of every decode step.

    ``prompt`` is each sample's context before its first generated token and ``output`` the tokens it still
    generates. With ``prefill`` the prompts are first processed in one iteration (all prompts at once).

    Examples
    --------
    >>> d = Deployment("Llama-3.1-8B", "H100-SXM")
    >>> done, steps = decode_timeline(d, [100, 100], [1, 3], prefill=False)
    >>> c = decode_cost(d, [2, 1, 1], [200, 101, 102])  # step t decodes over P + t - 1 tokens per sample
    >>> bool(np.allclose(done, [c[0], c.sum()])), len(steps)
    (True, 3)
    """
    p = np.asarray(prompt, dtype=float)
    out = np.asarray(output, dtype=np.int64)
    if p.shape != out.shape or p.ndim != 1:
        raise ValueError(f"prompt and output must be 1-D arrays of one length, got shapes {p.shape} and {out.shape}")
    if out.size == 0:
        return np.empty(0), np.empty(0)
    if out.min() < 1 or p.min() < 0:
        raise ValueError("output lengths must be >= 1 and prompts >= 0")
    order = np.argsort(out, kind="stable")
    length, ctx = out[order], p[order]
    n = length.size
    t = np.arange(1, int(length[-1]) + 1)
    first = np.searchsorted(length, t, side="left")  # samples first.. are still decoding at step t
    batch = n - first
    suffix = np.concatenate([np.cumsum(ctx[::-1])[::-1], [0.0]])
    kv = suffix[first] + (t - 1) * batch
    pre = 0.0
    if prefill and p.sum() > 0:
        pre = deployment.iteration_s(p.sum(), float((p * (p + 1) / 2).sum()), 0, 0.0, sampled=n)
    ends = start_s + pre + np.cumsum(decode_cost(deployment, batch, kv))
    done = np.empty(n)
    done[order] = ends[length - 1]
    return done, ends


@remember
def _inference_coefficients(deployment: Deployment) -> tuple[float, float]:
    """Seconds per token and per causal (query, key) pair of a large batched forward pass (compute-bound)."""
    big = 1e6
    per_tok = deployment.gpu_s(big, 0.0, 0, 0.0, sampled=0) / big
    pairs = big * 1e4
    per_pair = (deployment.gpu_s(big, pairs, 0, 0.0, sampled=0) - per_tok * big) / pairs
    return float(per_tok), float(per_pair)


def inference_seconds(deployment: Deployment, prompt, output, inference_models: float = 3.0) -> np.ndarray:
    """Inference seconds per sample on one instance: ``inference_models`` forward passes over its ``P + L`` tokens.

    Examples
    --------
    >>> d = Deployment("Llama-3.1-8B", "H100-SXM")
    >>> w = inference_seconds(d, [500, 500], [100, 1100])
    >>> bool(w[1] > 2 * w[0])
    True
    """
    models = nonnegative("inference_models", inference_models)
    tok = np.asarray(prompt, dtype=float) + np.asarray(output, dtype=float)
    k_tok, k_pair = _inference_coefficients(deployment)
    return models * (k_tok * tok + k_pair * tok * (tok + 1) / 2)


@dataclass(frozen=True)
class TailRun:
    """One generation + inference stage, baseline and fused (seconds; see :func:`generation_stage`)."""

    baseline_s: float
    fused_s: float
    generation_s: float
    fused_generation_s: float
    migrate_at_s: float
    migrate_s: float
    migrated: int
    inference_s: float
    kv_peak_fraction: float
    completion: np.ndarray = field(repr=False)
    fused_completion: np.ndarray = field(repr=False)

    @property
    def gain(self) -> float:
        """Baseline stage time over the fused one."""
        return self.baseline_s / self.fused_s

    def summary(self) -> dict[str, float]:
        """The scalar results (what the experiment returns)."""
        return {
            "baseline_s": self.baseline_s,
            "fused_s": self.fused_s,
            "gain": self.gain,
            "generation_s": self.generation_s,
            "fused_generation_s": self.fused_generation_s,
            "migrate_at_s": self.migrate_at_s,
            "migrate_s": self.migrate_s,
            "migrated": float(self.migrated),
            "inference_s": self.inference_s,
            "tail_share": 1.0 - float(np.quantile(self.completion, 0.9)) / self.generation_s,
            "kv_peak_fraction": self.kv_peak_fraction,
        }


def _fluid_finish(arrival, work, breaks, rates) -> float:
    """When a divisible-work server finishes ``work`` arriving at ``arrival``; its capacity is ``rates[k]``
    instances from ``breaks[k]`` (``rates > 0``, nondecreasing breaks; nothing is served before ``breaks[0]``)."""
    cum = np.concatenate([[0.0], np.cumsum(np.diff(breaks) * rates[:-1])])

    def cap(t):  # cumulative capacity at times t
        k = np.clip(np.searchsorted(breaks, t, side="right") - 1, 0, None)
        return cum[k] + (np.maximum(t, breaks[0]) - breaks[k]) * rates[k]

    def inv(c):
        k = np.searchsorted(cum, c, side="right") - 1
        return breaks[k] + (c - cum[k]) / rates[k]

    order = np.argsort(arrival, kind="stable")
    a, w = arrival[order], work[order]
    suffix = np.cumsum(w[::-1])[::-1]
    return float(np.max(inv(cap(a) + suffix)))


def generation_stage(
    deployment: Deployment,
    prompt,
    output,
    *,
    instances: int = 8,
    tail_instances: int = 1,
    threshold: float = 0.1,
    inference_models: float = 3.0,
    nic_gbps: float | None = None,
) -> TailRun:
    """Generation then inference of ``n`` samples on ``instances`` replicas: the baseline and RLHFuse's fusion.

    Parameters
    ----------
    deployment : Deployment
        One generation instance (the Actor on ``tp * pp`` GPUs); inference runs on the same instances.
    prompt, output : array-like
        Token lengths per sample; sample ``i`` is generated on instance ``i mod instances`` (the draws are i.i.d.,
        so this is a random balanced assignment).
    tail_instances : int
        Instances that finish the migrated samples (fewer than ``instances``).
    threshold : float
        Migrate once at most ``threshold * n`` samples remain (0: never; the fused run is then the baseline).
    inference_models : float
        Actor-sized forward passes per sample in the inference stage (Reference, Critic, Reward: 3).
    nic_gbps : float, optional
        Network bandwidth per GPU for moving the migrated samples' KV caches (Gb/s; default the GPU's NIC from the
        hardware table, e.g. 400 Gb/s per H100 in a DGX H100). Each tail instance receives its share over its GPUs'
        NICs.

    Examples
    --------
    >>> d = Deployment("Llama-3.1-8B", "H100-SXM")
    >>> p, o = sample_lengths("burstgpt", 256, sigma=1.2, max_tokens=4096, seed=0)
    >>> r = generation_stage(d, p, o, instances=4, threshold=0.02)
    >>> r.fused_s < r.baseline_s, r.migrated <= 0.02 * 256
    (True, True)
    >>> generation_stage(d, p, o, instances=4, threshold=0.0).gain
    1.0
    """
    if not isinstance(deployment, Deployment):
        raise TypeError(f"deployment must be a Deployment, got {type(deployment).__name__}")
    p = np.asarray(prompt, dtype=float)
    out = np.asarray(output, dtype=np.int64)
    if p.ndim != 1 or p.shape != out.shape or p.size == 0:
        raise ValueError(f"prompt and output must be non-empty 1-D arrays of one length, got {p.shape}, {out.shape}")
    n = p.size
    inst = integer("instances", instances, minimum=1, maximum=n)
    m = integer("tail_instances", tail_instances, minimum=1, maximum=max(inst - 1, 1))
    thr = in_range("threshold", threshold, 0.0, 1.0, high_inclusive=False)
    nic = deployment.gpu.nic_gbps if nic_gbps is None else positive("nic_gbps", nic_gbps)
    nic_bytes = (nic if np.isfinite(nic) else deployment.gpu.pcie_gbps * 4) * 1e9 / 8 * deployment.gpus
    where = np.arange(n) % inst
    done = np.empty(n)
    steps: list[np.ndarray] = []
    kv_peak = 0.0
    for j in range(inst):  # one vectorized timeline per instance
        sel = where == j
        done[sel], ends = decode_timeline(deployment, p[sel], out[sel])
        steps.append(ends)
        kv_peak = max(kv_peak, float((p[sel] + out[sel]).sum()))
    work = inference_seconds(deployment, p, out, inference_models)
    gen = float(done.max())
    base = gen + float(work.sum()) / inst
    keep = int(np.floor(thr * n))
    inf_s = float(work.sum()) / inst
    kv_frac = kv_peak / deployment.kv_capacity_tokens
    if keep == 0 or inst == 1:
        return TailRun(base, base, generation_s=gen, fused_generation_s=gen, migrate_at_s=gen, migrate_s=0.0,
                       migrated=0, inference_s=inf_s, kv_peak_fraction=kv_frac, completion=done,
                       fused_completion=done)  # fmt: skip
    t_m = float(np.sort(done)[n - keep - 1])  # the (n - keep)-th completion: at most `keep` remain after it
    tail = np.flatnonzero(done > t_m)
    progress = np.zeros(n, dtype=np.int64)
    for j in range(inst):
        progress[where == j] = np.searchsorted(steps[j], t_m, side="right")
    ctx = p[tail] + progress[tail]
    left = out[tail] - progress[tail]
    byorder = np.argsort(-left, kind="stable")
    host = np.empty(tail.size, dtype=np.int64)
    host[byorder] = np.arange(tail.size) % m  # longest first, round-robin: balanced tails
    kv_bytes = deployment.model.kv_bytes_per_token
    move = float(max(ctx[host == k].sum() for k in range(m)) * kv_bytes / nic_bytes)
    fused_done = done.copy()
    tail_end = np.full(m, t_m + move)
    for k in range(m):
        sel = host == k
        if sel.any():
            fused_done[tail[sel]], _ = decode_timeline(
                deployment, ctx[sel], left[sel], start_s=t_m + move, prefill=False
            )
            tail_end[k] = fused_done[tail[sel]].max()
    breaks = np.concatenate([[t_m], np.sort(tail_end)])
    rates = np.arange(inst - m, inst + 1, dtype=float)
    fused = _fluid_finish(np.maximum(fused_done, t_m), work, breaks, rates)
    return TailRun(base, fused, generation_s=gen, fused_generation_s=float(fused_done.max()), migrate_at_s=t_m,
                   migrate_s=move, migrated=int(tail.size), inference_s=inf_s, kv_peak_fraction=kv_frac,
                   completion=done, fused_completion=fused_done)  # fmt: skip


def threshold_curve(deployment: Deployment, prompt, output, thresholds, **kw) -> pd.DataFrame:
    """One :func:`generation_stage` per threshold (a table for figures; experiments sweep the registered one).

    Examples
    --------
    >>> d = Deployment("Llama-3.1-8B", "H100-SXM")
    >>> p, o = sample_lengths("burstgpt", 128, seed=0)
    >>> list(threshold_curve(d, p, o, [0.0, 0.2], instances=4).threshold)
    [0.0, 0.2]
    """
    rows = [{"threshold": float(t), **generation_stage(deployment, prompt, output, threshold=t, **kw).summary()}
            for t in thresholds]  # fmt: skip
    return pd.DataFrame(rows)
