"""Workloads generated block by block: any length, bounded memory, the same bytes whatever the chunk size.

A :class:`BlockPlan` defines a workload as a sequence of time blocks (600 s for ServeGen and renewal workloads, the
model's window for BurstGPT-style ones). Block ``k`` is drawn from its own random stream,
``SeedSequence(seed, spawn_key=(k,))``, which depends only on the seed and ``k``: generating the blocks one at a time,
a few at a time (:func:`iter_chunks`) or all at once (:func:`materialize`) gives the same requests, so a day at
1,000 req/s can be streamed to disk in chunks and still be the same file as a one-shot run of the same seed.

Plans:

* :func:`renewal_plan` -- a stationary Gamma or Weibull renewal process (``rate_rps``, ``cv``) with token lengths from
  two :class:`LengthDist` laws or resampled (input, output) pairs of a trace (which keeps their correlation).
* :func:`burstgpt_plan` -- :mod:`~workbench.workloads.burstgpt`'s piecewise Gamma windows, Zipf requests,
  conditional responses and failures, window by window, time divided by ``rate_scale``; windows repeat cyclically
  when the requested duration is longer than the model.
* :func:`servegen_plan` -- :func:`~workbench.workloads.servegen.compose` one 600 s block at a time, the target rate
  curve computed once over the whole span (so ``mean_rate_rps`` scales the whole span's curve, not each block).

Inside a block the renewal process starts in equilibrium (:func:`workbench.arrivals.piecewise_arrivals`), so block
boundaries leave the rate and gap CV unchanged. The block streams differ from one call of ``burstgpt.generate`` or
``servegen.compose`` with the same seed (those draw the whole span from one stream); the statistics are the same.

Examples
--------
>>> plan = renewal_plan(rate_rps=5.0, cv=2.0, duration_s=1800.0, input_tokens="const:100",
...                     output_tokens="uniform:1,10")
>>> a = materialize(plan, seed=1)
>>> b = pd.concat(list(iter_chunks(plan, seed=1, chunk_blocks=2)), ignore_index=True)
>>> a.equals(b), plan.n_blocks
(True, 3)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from .. import _validate as V
from ..arrivals import piecewise_arrivals
from . import burstgpt as B

__all__ = [
    "BLOCK_S",
    "LengthDist",
    "BlockPlan",
    "renewal_plan",
    "burstgpt_plan",
    "servegen_plan",
    "iter_chunks",
    "materialize",
]

#: Default block length: ServeGen's 600 s statistics window.
BLOCK_S = 600.0
_ARITY = {"const": 1, "uniform": 2, "lognormal": 2, "exponential": 1, "zipf": 2}
_MEDIA_COLUMNS = (
    "text_tokens",
    "image_count",
    "image_tokens",
    "audio_count",
    "audio_tokens",
    "video_count",
    "video_tokens",
)


@dataclass(frozen=True)
class LengthDist:
    """A token-length law from a short spec: ``const:N``, ``uniform:LO,HI`` (inclusive), ``lognormal:MEDIAN,SIGMA``,
    ``exponential:MEAN``, ``zipf:ALPHA,MAX`` (truncated Zipf on 1..MAX). Draws are integers >= 0 (>= 1 for zipf).

    Examples
    --------
    >>> d = LengthDist.parse("lognormal:1000,0.5")
    >>> x = d.sample(100_000, np.random.default_rng(0))
    >>> bool(abs(np.median(x) - 1000) < 15)
    True
    """

    kind: str
    params: tuple[float, ...]

    @classmethod
    def parse(cls, spec: str) -> LengthDist:
        kind, _, rest = str(spec).partition(":")
        if kind not in _ARITY:
            raise ValueError(f"length distribution {spec!r}: kind must be one of {', '.join(_ARITY)}")
        try:
            params = tuple(float(v) for v in rest.split(",")) if rest else ()
        except ValueError:
            raise ValueError(f"length distribution {spec!r}: parameters must be numbers") from None
        if len(params) != _ARITY[kind] or not all(math.isfinite(p) and p >= 0 for p in params):
            raise ValueError(
                f"length distribution {spec!r}: {kind} takes {_ARITY[kind]} non-negative number(s), e.g. "
                f"const:512, uniform:1,4096, lognormal:1000,0.8, exponential:300, zipf:1.1,16384"
            )
        if kind == "uniform" and params[0] > params[1]:
            raise ValueError(f"length distribution {spec!r}: uniform needs LO <= HI")
        if kind == "zipf" and (params[0] <= 0 or params[1] < 1):
            raise ValueError(f"length distribution {spec!r}: zipf needs ALPHA > 0 and MAX >= 1")
        return cls(kind, params)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        p = self.params
        if self.kind == "const":
            return np.full(n, int(round(p[0])), dtype=np.int64)
        if self.kind == "uniform":
            return rng.integers(int(p[0]), int(p[1]) + 1, size=n, dtype=np.int64)
        if self.kind == "lognormal":
            return np.rint(p[0] * np.exp(p[1] * rng.standard_normal(n))).astype(np.int64)
        if self.kind == "exponential":
            return np.rint(rng.exponential(p[0], n)).astype(np.int64)
        model = B.from_params(1.0, 1.0, zipf_alpha=p[0], request_max=int(p[1]))
        return B.sample_requests(model, n, seed=rng)[0]


@dataclass(frozen=True)
class BlockPlan:
    """A workload as ``n_blocks`` time blocks of ``block_s`` seconds over ``[0, duration_s)``.

    ``draw(k, rng)`` returns block ``k``'s request table (``arrival_s`` from the workload start, sorted, inside the
    block), the same columns for every block; ``expected_requests`` sizes progress bars; ``description`` says what
    was asked.
    """

    n_blocks: int
    block_s: float
    duration_s: float
    draw: Callable[[int, np.random.Generator], pd.DataFrame]
    expected_requests: float
    description: str


def _root(seed: int | None) -> np.random.SeedSequence:
    if seed is not None and (not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return np.random.SeedSequence(seed)


def _block_rng(root: np.random.SeedSequence, k: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, k)))


def iter_chunks(plan: BlockPlan, seed: int | None, *, chunk_blocks: int = 1, progress=None) -> Iterator[pd.DataFrame]:
    """Yield the workload ``chunk_blocks`` blocks at a time (the last chunk may be shorter).

    ``progress`` is called with each chunk's number of requests (e.g. a tqdm bar's ``update``).
    """
    chunk_blocks = V.integer("chunk_blocks", chunk_blocks, minimum=1)
    root = _root(seed)
    for first in range(0, plan.n_blocks, chunk_blocks):
        ks = range(first, min(first + chunk_blocks, plan.n_blocks))
        parts = [plan.draw(k, _block_rng(root, k)) for k in ks]
        chunk = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
        yield chunk
        if progress is not None:
            progress(len(chunk))


def materialize(plan: BlockPlan, seed: int | None) -> pd.DataFrame:
    """The whole workload as one table (the concatenation of every block)."""
    return next(iter_chunks(plan, seed, chunk_blocks=plan.n_blocks))


def _frame(t: np.ndarray, inp: np.ndarray, out: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"arrival_s": t, "input_tokens": inp, "output_tokens": out})


def _n_blocks(duration_s: float, block_s: float) -> int:
    return max(1, math.ceil(duration_s / block_s - 1e-9))


def renewal_plan(
    *,
    rate_rps: float,
    cv: float,
    duration_s: float,
    family: Literal["gamma", "weibull"] = "gamma",
    input_tokens: str | LengthDist | None = None,
    output_tokens: str | LengthDist | None = None,
    lengths: pd.DataFrame | None = None,
    block_s: float = BLOCK_S,
) -> BlockPlan:
    """A stationary renewal workload (Gamma or Weibull gaps of mean ``1/rate_rps`` and CV ``cv``).

    Lengths come from ``input_tokens`` and ``output_tokens`` (specs or :class:`LengthDist`, independent draws) or,
    with ``lengths`` (a request table, e.g. a loaded trace), from its (input, output) pairs resampled with
    replacement, which keeps their joint distribution.
    """
    rate = V.positive("rate_rps", rate_rps)
    cv = V.nonnegative("cv", cv)
    duration_s = V.positive("duration_s", duration_s)
    block_s = V.positive("block_s", block_s)
    V.one_of("family", family, ("gamma", "weibull"))
    if (lengths is None) == (input_tokens is None or output_tokens is None):
        raise ValueError("give either lengths (a request table) or both input_tokens and output_tokens")
    if lengths is not None:
        pairs = lengths[["input_tokens", "output_tokens"]].to_numpy(dtype=np.int64)
        if len(pairs) == 0:
            raise ValueError("lengths has no requests to resample")
        what = f"lengths resampled from {lengths.attrs.get('source', 'a table')}"
    else:
        assert input_tokens is not None and output_tokens is not None  # checked above: both are given
        d_in = input_tokens if isinstance(input_tokens, LengthDist) else LengthDist.parse(input_tokens)
        d_out = output_tokens if isinstance(output_tokens, LengthDist) else LengthDist.parse(output_tokens)
        what = f"input {d_in.kind}{d_in.params}, output {d_out.kind}{d_out.params}"
    n = _n_blocks(duration_s, block_s)

    def draw(k: int, rng: np.random.Generator) -> pd.DataFrame:
        start = k * block_s
        t, _ = piecewise_arrivals(start, min(block_s, duration_s - start), rate, cv, family=family, seed=rng)
        if lengths is not None:
            ij = pairs[rng.integers(0, len(pairs), size=t.size)]
            return _frame(t, ij[:, 0], ij[:, 1])
        return _frame(t, d_in.sample(t.size, rng), d_out.sample(t.size, rng))

    return BlockPlan(
        n,
        block_s,
        duration_s,
        draw,
        rate * duration_s,
        f"renewal {family} rate {rate:g} req/s cv {cv:g}; {what}",
    )


def burstgpt_plan(model: B.BurstGPTModel, *, rate_scale: float = 1.0, duration_s: float | None = None) -> BlockPlan:
    """The BurstGPT-style generator window by window, over ``duration_s`` output seconds (default: the model's
    duration divided by ``rate_scale``); window ``k`` uses the model's window ``k mod n_windows``."""
    if not isinstance(model, B.BurstGPTModel):
        raise TypeError(f"model must be a BurstGPTModel, got {type(model).__name__}")
    scale = V.positive("rate_scale", rate_scale)
    block_s = model.window_s / scale
    dur = model.duration_s / scale if duration_s is None else V.positive("duration_s", duration_s)
    n = _n_blocks(dur, block_s)
    labels = {c: v for c, v in (("model", model.model), ("log_type", model.log_type)) if v is not None}

    def draw(k: int, rng: np.random.Generator) -> pd.DataFrame:
        w = k % model.n_windows
        span = min(block_s, dur - k * block_s) * scale
        t, _ = piecewise_arrivals(0.0, span, model.rate_rps[w], 1.0 / np.sqrt(model.shape[w]), seed=rng)
        req, resp = B.sample_requests(model, t.size, seed=rng)
        failed = rng.random(t.size) < model.failure_prob[w]
        df = _frame(k * block_s + t / scale, req, np.where(failed, 0, resp))
        for c, v in labels.items():
            df[c] = pd.Categorical.from_codes(np.zeros(t.size, dtype=np.int8), categories=[v])
        df["failed"] = pd.array(failed, dtype="boolean")
        return df

    reps = np.resize(model.rate_rps, n)
    return BlockPlan(
        n,
        block_s,
        dur,
        draw,
        float(reps.sum() * model.window_s) * min(1.0, dur / (n * block_s)),
        f"BurstGPT-style from {model.source}, rate_scale {scale:g}",
    )


def servegen_plan(
    pool,
    *,
    start_s: float,
    duration_s: float,
    rate_rps: float | None = None,
    mean_rate_rps: float | None = None,
    block_s: float = BLOCK_S,
) -> BlockPlan:
    """ServeGen's per-client composer over ``[start_s, start_s + duration_s)`` in blocks of ``block_s`` (a
    multiple of 600 s); ``rate_rps`` a constant aggregate rate, ``mean_rate_rps`` the data's own curve scaled to
    this mean over the whole span, neither the data's own curve."""
    from . import servegen as sg

    start = V.finite("start_s", start_s)
    dur = V.positive("duration_s", duration_s)
    block_s = V.positive("block_s", block_s)
    if abs(block_s / sg.WINDOW_S - round(block_s / sg.WINDOW_S)) > 1e-9:
        raise ValueError(f"block_s must be a multiple of {sg.WINDOW_S:g} s, got {block_s:g}")
    span = pool.select(start, dur)
    curve = sg.target_rates(span, rate_rps, mean_rate_rps=mean_rate_rps)
    n = _n_blocks(dur, block_s)
    media = _MEDIA_COLUMNS if pool.category == "multimodal" else ()
    reason = ("reasoning_tokens", "answer_tokens") if pool.category == "reason" else ()
    cols = ("client_id", "arrival_s", "input_tokens", "output_tokens", *reason, *media)

    def draw(k: int, rng: np.random.Generator) -> pd.DataFrame:
        a = start + k * block_s
        d = min(block_s, start + dur - a)
        i0 = int(math.floor((a - span.start_s) / sg.WINDOW_S + 1e-9))
        nw = pool.select(a, d).n_windows
        df = sg.compose(pool, start_s=a, duration_s=d, rate_rps=curve[i0 : i0 + nw], seed=rng)
        df["arrival_s"] += a - start
        return df.reindex(columns=list(cols), fill_value=0)

    wstart = span.window_start_s
    overlap = np.clip(np.minimum(wstart + sg.WINDOW_S, start + dur) - np.maximum(wstart, start), 0, None)
    return BlockPlan(
        n,
        block_s,
        dur,
        draw,
        float((curve * overlap).sum()),
        f"ServeGen {pool.model} from {start:g} s for {dur:g} s",
    )
