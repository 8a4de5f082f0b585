"""Workloads generated block by block: any length, bounded memory, the same bytes whatever the chunk size.

Every generator here is a :class:`~workbench.workloads.blocks.BlockPlan`: block ``k`` is drawn from the stream
``keyed(seed, k)``, so generating the blocks one at a time, a few at a time (:func:`iter_chunks`) or all at once
(:func:`materialize`) gives the same requests, a day at 1,000 req/s can be streamed to disk in chunks and still be the
same file as a one-shot run of the same seed, and the block stream is *the* stream of each source (see
:mod:`workbench.workloads.blocks`).

Plans:

* :func:`renewal_plan` -- a stationary Gamma or Weibull renewal process (``rate_rps``, ``cv``) with token lengths from
  two :class:`LengthDist` laws or resampled (input, output) pairs of a trace (which keeps their correlation).
* :func:`burstgpt_plan` -- :func:`workbench.workloads.burstgpt.generate_plan`: the BurstGPT-style model window by
  window, time divided by ``rate_scale``; windows repeat cyclically when the requested duration is longer than the
  model. ``burstgpt.generate(model, rate_scale=r, seed=s)`` is this plan materialized.
* :func:`servegen_plan` -- :func:`workbench.workloads.servegen.compose_plan`: ServeGen's composer one 600 s block at
  a time. ``servegen.compose(pool, ..., seed=s)`` is this plan materialized.

Inside a block the renewal process starts in equilibrium (:func:`workbench.arrivals.piecewise_arrivals`), so block
boundaries leave the rate and gap CV unchanged.

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
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from .. import _validate as V
from .._contracts import Opaque, Text, accepts
from ..arrivals import piecewise_arrivals
from . import burstgpt as B
from .blocks import BlockPlan, iter_chunks, materialize, n_blocks

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


@accepts()
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
    @accepts(spec=Text())
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

    @accepts()
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


def _frame(t: np.ndarray, inp: np.ndarray, out: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"arrival_s": t, "input_tokens": inp, "output_tokens": out})


@accepts()
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
    n = n_blocks(duration_s, block_s)

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


@accepts()
def burstgpt_plan(model: B.BurstGPTModel, *, rate_scale: float = 1.0, duration_s: float | None = None) -> BlockPlan:
    """The BurstGPT-style generator window by window (:func:`workbench.workloads.burstgpt.generate_plan`)."""
    return B.generate_plan(model, rate_scale=rate_scale, duration_s=duration_s)


@accepts(pool=Opaque("a ClientPool (workloads.servegen)"))
def servegen_plan(
    pool,
    *,
    start_s: float,
    duration_s: float,
    rate_rps: float | None = None,
    mean_rate_rps: float | None = None,
) -> BlockPlan:
    """ServeGen's per-client composer over ``[start_s, start_s + duration_s)`` in 600 s blocks
    (:func:`workbench.workloads.servegen.compose_plan`); ``rate_rps`` a constant aggregate rate, ``mean_rate_rps``
    the data's own curve scaled to this mean over the whole span, neither the data's own curve."""
    from .servegen import compose_plan

    return compose_plan(pool, start_s=start_s, duration_s=duration_s, rate_rps=rate_rps, mean_rate_rps=mean_rate_rps)
