"""ServeGen-style workload composition: a production-like request stream built client by client.

ServeGen's observation (Xiang et al., arXiv 2505.09999) is that an LLM service's aggregate traffic is a mixture of
heterogeneous clients: a few clients carry most of the requests, each client has its own burstiness (inter-arrival
CV, Gamma- or Weibull-shaped), its own diurnal rate and its own token-length distributions, which shift over the day.
Generating a workload from aggregate statistics (one Poisson process, one pooled length distribution) loses that
structure, and the paper shows it misleads capacity planning.

:func:`compose` re-builds a workload the ServeGen way from a :class:`~workbench.workloads.servegen.ClientPool`:

1. pick a span and a target aggregate rate curve (:func:`target_rates`: the data's own curve, optionally scaled to a
   given mean rate, or a constant or a curve you give, one value per 600 s window);
2. give each client, in each window, its share of the target rate (its share of the data's aggregate in that window);
3. draw each (client, window) arrival process with that rate and the client's CV and family, all rows at once through
   :func:`workbench.arrivals.piecewise_arrivals`: a stationary renewal process, so a window's count keeps its
   natural variance. ServeGen's reference generator instead gives each client-window a fixed count and rescales its
   gaps to fill the window; ``fixed_window_counts=True`` does the same, for parity with it;
4. draw each request's lengths from its client's PMF of that 6-hour window (inverse CDF over concatenated PMFs, one
   ``searchsorted`` for all requests). Fields are independent by default (the paper finds the input/output
   correlation weak); ``correlation`` couples input and output through a Gaussian copula. Multimodal requests get an
   item count per modality and, because the released PMFs give tokens *per item* (per image, audio clip, video), one
   token draw per item, summed (a request with no image has no image tokens); reasoning requests split their output
   into reasoning and answer tokens from the client's reasoning-ratio PMF.

The result is a request table in the workbench schema (``client_id``, ``arrival_s``, ``input_tokens``,
``output_tokens``, ...), ready for the exporters in :mod:`workbench.workloads.export`. :func:`naive_workload` builds
the baseline the paper compares against: Poisson arrivals at the same mean rate with lengths drawn from the pooled
distribution.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from ... import arrivals
from ..._contracts import accepts
from ..._rng import Seed, generator
from ..._validate import array_1d, finite, in_range, positive
from ..blocks import BlockPlan, materialize, n_blocks
from .pmf import PmfTable
from .pool import FAMILIES, WINDOW_S, ClientPool

__all__ = ["target_rates", "compose", "compose_plan", "naive_workload"]

#: The block of the composer's random stream: ServeGen's 600 s statistics window.
BLOCK_S = WINDOW_S
#: Every media column of a multimodal workload (zeros where a modality is absent: every block has the same columns).
_MEDIA_COLUMNS = (
    "text_tokens",
    "image_count",
    "image_tokens",
    "audio_count",
    "audio_tokens",
    "video_count",
    "video_tokens",
)


@accepts()
def target_rates(
    pool: ClientPool, rate_rps: Any = None, *, mean_rate_rps: float | None = None, rate_scale: float = 1.0
) -> np.ndarray:
    """Per-window target aggregate rate (req/s) over the pool's span.

    ``rate_rps=None`` keeps the data's own aggregate curve (:meth:`ClientPool.aggregate_rate`); a scalar asks for a
    constant aggregate rate; an array gives one value per 600 s window of the pool's span. ``mean_rate_rps`` (only
    with ``rate_rps=None``) scales the data's own curve so that its mean over the span is ``mean_rate_rps``: the
    shape of the day is kept, the level is chosen. The result is multiplied by ``rate_scale``.

    Raises
    ------
    ValueError
        If ``mean_rate_rps`` is given together with ``rate_rps``, or the span has no traffic to scale.

    Examples
    --------

    >>> from workbench.workloads.servegen import load_pool
    >>> pool = load_pool("deepseek-r1").select(0, 3600)
    >>> target_rates(pool, 10.0).tolist()
    [10.0, 10.0, 10.0, 10.0, 10.0, 10.0]
    >>> round(float(target_rates(pool, mean_rate_rps=4.0).mean()), 9)
    4.0
    """
    scale = positive("rate_scale", rate_scale)
    if mean_rate_rps is not None:
        if rate_rps is not None:
            raise ValueError(
                f"give either rate_rps (a rate) or mean_rate_rps (the data's curve scaled to this mean), not both; "
                f"got rate_rps={rate_rps!r}, mean_rate_rps={mean_rate_rps!r}"
            )
        target = positive("mean_rate_rps", mean_rate_rps)
        own = pool.aggregate_rate().to_numpy()
        if own.sum() <= 0:
            raise ValueError(
                f"{pool.model} has no traffic in the span starting at {pool.start_s:g} s: its rate curve cannot be "
                f"scaled to mean_rate_rps={target:g}"
            )
        curve = own * (target / own.mean())
    elif rate_rps is None:
        curve = pool.aggregate_rate().to_numpy()
    elif np.ndim(rate_rps) == 0:
        curve = np.full(pool.n_windows, finite("rate_rps", rate_rps))
        if curve[0] < 0:
            raise ValueError(f"rate_rps must be >= 0, got {rate_rps}")
    else:
        curve = array_1d("rate_rps", rate_rps, low=0.0)
        if curve.size != pool.n_windows:
            raise ValueError(
                f"rate_rps must have one value per {WINDOW_S:g} s window of the span ({pool.n_windows}), "
                f"got {curve.size}"
            )
    return curve * scale


@accepts()
def compose(
    pool: ClientPool,
    *,
    start_s: float | None = None,
    duration_s: float | None = None,
    rate_rps: Any = None,
    mean_rate_rps: float | None = None,
    rate_scale: float = 1.0,
    correlation: float = 0.0,
    fixed_window_counts: bool = False,
    seed: Seed = None,
) -> pd.DataFrame:
    """Compose a per-client workload from a client pool.

    Parameters
    ----------
    pool : ClientPool
        From :func:`load_pool`, possibly filtered (``pool.filter(...)``).
    start_s, duration_s : float, optional
        Span in seconds from 00:00 of day 1 (default: the whole pool). Snapped outward to 600 s windows for the
        statistics; arrivals are kept only inside ``[start_s, start_s + duration_s)``.
    rate_rps : None, float or array
        Target aggregate rate: ``None`` the data's own curve, a float a constant rate, an array one value per window.
    mean_rate_rps : float, optional
        With ``rate_rps=None``: the data's own curve over the span, scaled so that its mean is this rate (see
        :func:`target_rates`).
    rate_scale : float
        Multiplies the target curve.
    correlation : float in [-1, 1]
        Gaussian-copula correlation between input and output lengths (0: independent, the paper's finding).
    fixed_window_counts : bool
        ``False`` (default): each (client, window) is a stationary renewal process at the client's rate, so the count
        in a window varies as a renewal count does (more for burstier clients) and bursts cross window boundaries
        freely. ``True``: the behaviour of ServeGen's reference generator, for parity with it: each (client,
        window) gets exactly ``round(rate x window length)`` requests, whose gaps (drawn from the client's family
        and CV) are rescaled to fill the window, so the count variance between windows is removed and the CV within
        a window is kept.
    seed : int, Generator or None
        Roots the block stream: the span is composed in 600 s blocks from ``start_s`` (:func:`compose_plan`), block
        ``k`` from the stream ``keyed(seed, k)``, so ``compose(..., seed=7)`` gives the requests ``workbench
        workload generate servegen ... --seed 7`` writes for the same span and rate.

    Returns
    -------
    pandas.DataFrame
        Sorted by ``arrival_s`` (seconds from the span start): ``client_id``, ``arrival_s``, ``input_tokens``,
        ``output_tokens``; reasoning models add ``reasoning_tokens`` and ``answer_tokens``; multimodal models add
        ``text_tokens`` and the item count and tokens of each modality (``image_count``, ``image_tokens``, then
        audio and video, zero where absent). ``attrs`` records the provenance: model, span start and length, the
        source of the statistics.

    Examples
    --------

    >>> from workbench.workloads.servegen import load_pool
    >>> pool = load_pool("m-large")
    >>> df = compose(pool, start_s=12 * 3600, duration_s=600, rate_rps=20.0, seed=1)
    >>> list(df.columns[:4]), 10000 < len(df) < 14000
    (['client_id', 'arrival_s', 'input_tokens', 'output_tokens'], True)
    """
    plan = compose_plan(
        pool,
        start_s=start_s,
        duration_s=duration_s,
        rate_rps=rate_rps,
        mean_rate_rps=mean_rate_rps,
        rate_scale=rate_scale,
        correlation=correlation,
        fixed_window_counts=fixed_window_counts,
    )
    frame = materialize(plan, seed)
    frame.attrs = {  # provenance: what was composed (ARCHITECTURE.md, "attrs")
        "model": pool.model,
        "start_s": float(pool.start_s if start_s is None else start_s),
        "duration_s": float(plan.duration_s),
        "source": pool.source,
        "fixed_window_counts": bool(fixed_window_counts),
    }
    return frame


@accepts()
def compose_plan(
    pool: ClientPool,
    *,
    start_s: float | None = None,
    duration_s: float | None = None,
    rate_rps: Any = None,
    mean_rate_rps: float | None = None,
    rate_scale: float = 1.0,
    correlation: float = 0.0,
    fixed_window_counts: bool = False,
) -> BlockPlan:
    """:func:`compose` as a :class:`~workbench.workloads.blocks.BlockPlan` of 600 s blocks from ``start_s`` (the
    same arguments but the seed): ``compose(..., seed=s)`` is ``materialize(compose_plan(...), s)``, and
    ``workbench workload generate servegen`` streams the same plan to a file. The target rate curve is computed once
    over the whole span (so ``mean_rate_rps`` scales the whole span's curve, not each block's); block ``k`` composes
    ``[start_s + 600 k, start_s + 600 (k + 1))`` from its own random stream."""
    if not isinstance(pool, ClientPool):
        raise TypeError(f"pool must be a ClientPool (from load_pool), got {type(pool).__name__}")
    rho = in_range("correlation", correlation, -1.0, 1.0)
    start = pool.start_s if start_s is None else finite("start_s", start_s)
    dur = pool.end_s - start if duration_s is None else positive("duration_s", duration_s)
    span = pool.select(start, dur)
    curve = target_rates(span, rate_rps, mean_rate_rps=mean_rate_rps, rate_scale=rate_scale)
    fixed = bool(fixed_window_counts)
    media = _MEDIA_COLUMNS if span.category == "multimodal" else ()
    reason = ("reasoning_tokens", "answer_tokens") if span.category == "reason" else ()
    cols = ["client_id", "arrival_s", "input_tokens", "output_tokens", *reason, *media]

    def draw(k: int, rng: np.random.Generator) -> pd.DataFrame:
        a = start + k * BLOCK_S
        d = min(BLOCK_S, start + dur - a)
        i0 = int(np.floor((a - span.start_s) / WINDOW_S + 1e-9))
        block = span.select(a, d)
        df = _compose_block(block, a, d, curve[i0 : i0 + block.n_windows], rho, fixed, rng)
        df["arrival_s"] += a - start
        return df.reindex(columns=cols, fill_value=0)

    wstart = span.window_start_s
    overlap = np.clip(np.minimum(wstart + WINDOW_S, start + dur) - np.maximum(wstart, start), 0, None)
    return BlockPlan(
        n_blocks(dur, BLOCK_S),
        BLOCK_S,
        dur,
        draw,
        float((curve * overlap).sum()),
        f"ServeGen {span.model} from {start:g} s for {dur:g} s",
    )


def _compose_block(
    span: ClientPool, start: float, dur: float, curve: np.ndarray, rho: float, fixed: bool, rng: np.random.Generator
) -> pd.DataFrame:
    """One block of :func:`compose`: ``[start, start + dur)`` of ``span`` at the target ``curve`` (one rate per
    window of ``span``), arrivals from ``start``."""
    agg = span.aggregate_rate().to_numpy()
    dead = (curve > 0) & (agg <= 0)
    if dead.any():
        w = int(np.argmax(dead))
        raise ValueError(f"no selected client is active in the window starting at {span.window_start_s[w]:g} s")
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(agg > 0, span.rate_rps / agg, 0.0)
    client_rate = share * curve[None, :]

    # One row per active (client, window), clipped to the requested span.
    c_idx, w_idx = np.nonzero(client_rate > 0)
    w_start = span.window_start_s[w_idx]
    lo = np.maximum(w_start, start)
    hi = np.minimum(w_start + span.window_s, start + dur)
    ok = hi > lo
    c_idx, w_idx, lo, hi = c_idx[ok], w_idx[ok], lo[ok], hi[ok]
    fam = np.asarray(FAMILIES, dtype=object)[span.family[c_idx, w_idx]].astype(str)
    if c_idx.size and fixed:
        times, row = _fixed_count_arrivals(lo, hi - lo, client_rate[c_idx, w_idx], span.cv[c_idx, w_idx], fam, rng)
    elif c_idx.size:
        times, row = arrivals.piecewise_arrivals(
            lo, hi - lo, client_rate[c_idx, w_idx], span.cv[c_idx, w_idx], family=fam, seed=rng
        )
    else:
        times, row = np.empty(0), np.empty(0, dtype=np.int64)
    client = c_idx[row]
    pmf = span.length_index[client, span.length_window_of(times)]

    out: dict[str, np.ndarray] = {"client_id": span.client_ids[client], "arrival_s": times - start}
    out.update(_sample_lengths(span, pmf, rho, rng))
    return pd.DataFrame(out)


def _fixed_count_arrivals(
    start_s: np.ndarray,
    dur_s: np.ndarray,
    rate_rps: np.ndarray,
    cv: np.ndarray,
    family: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Per row, ``round(rate x duration)`` arrivals whose gaps fill the row's window exactly (the reference
    generator's rule): ``n + 1`` gaps are drawn from the row's family with its CV, and the first ``n`` partial sums,
    divided by the total, place the arrivals inside ``(start, start + duration)``. All rows at once; returns
    ``(times, row)`` sorted by time."""
    count = np.rint(rate_rps * dur_s).astype(np.int64)
    draws = count + (count > 0)
    idx = np.repeat(np.arange(count.size), draws)
    shape = np.ones(count.size)
    weibull = (family == "weibull") & (cv > 0)
    gamma = ~weibull & (cv > 0)
    shape[gamma] = 1.0 / cv[gamma] ** 2
    if weibull.any():
        shape[weibull] = arrivals.weibull_shape_from_cv(cv[weibull])
    gaps = np.ones(idx.size)  # cv = 0: constant spacing
    g, w = gamma[idx], weibull[idx]
    gaps[g] = rng.gamma(shape[idx[g]])
    gaps[w] = rng.weibull(shape[idx[w]])
    active = draws > 0
    first = np.concatenate(([0], np.cumsum(draws)[:-1]))[active]
    # Normalize each row's gaps to sum to 1 before the running sum, so that a huge gap in one row (tiny Gamma shape)
    # cannot swamp the precision of the rows after it.
    row_sum = np.add.reduceat(gaps, first) if first.size else np.empty(0)
    underflow = np.repeat(row_sum <= 0, draws[active])  # every gap underflowed (CV in the thousands): even spacing
    gaps[underflow] = 1.0
    frac = gaps / np.repeat(np.where(row_sum > 0, row_sum, draws[active]), draws[active])
    total = np.cumsum(frac)
    base = np.repeat(total[first] - frac[first], draws[active])
    within = np.clip(total - base, 0.0, 1.0)
    last = np.zeros(idx.size, dtype=bool)
    last[first + draws[active] - 1] = True  # the (n+1)-th gap only closes the window
    times = start_s[idx] + dur_s[idx] * within
    times = np.minimum(times, np.nextafter(start_s[idx] + dur_s[idx], -np.inf))
    times, idx = times[~last], idx[~last]
    order = np.argsort(times, kind="stable")
    return times[order], idx[order]


def _uniform_pair(n: int, rho: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two uniform vectors with Gaussian-copula correlation ``rho`` (independent when 0)."""
    if rho == 0.0:
        return rng.random(n), rng.random(n)
    z1 = rng.standard_normal(n)
    z2 = rho * z1 + np.sqrt(1 - rho * rho) * rng.standard_normal(n)
    return special.ndtr(z1), special.ndtr(z2)


def _draw(table: PmfTable, pmf: np.ndarray, u: np.ndarray) -> np.ndarray:
    if table.values.size == table.n:  # every PMF is a single value (e.g. no audio): no search needed
        return table.values[pmf]
    return table.sample_guided(pmf, np.minimum(u, np.nextafter(1.0, 0.0)))


class _UsedTables:
    """The pool's length tables restricted to the PMFs a workload uses (small arrays: cache-friendly sampling)."""

    def __init__(self, pool: ClientPool, pmf: np.ndarray) -> None:
        n_tab = pool.tables[pool.fields[0]].n
        self.used = np.flatnonzero(np.bincount(pmf, minlength=n_tab) > 0)
        remap = np.full(n_tab, -1, dtype=np.int64)
        remap[self.used] = np.arange(self.used.size)
        self.local = remap[pmf]
        self.pool = pool
        self._cache: dict[str, PmfTable] = {}

    def __getitem__(self, field: str) -> PmfTable:
        if field not in self._cache:
            self._cache[field] = self.pool.tables[field].subset(self.used)
        return self._cache[field]


def _per_item_sum(table: PmfTable, pmf: np.ndarray, count: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each request's total media tokens: the sum of ``count[i]`` independent draws from its PMF of tokens *per
    item*.

    The released multimodal PMFs give tokens per image (per audio clip, per video), so a request with three images
    carries three draws, and a request with none carries zero tokens. All draws are made at once (one row per item,
    ``np.repeat``) and summed per request with ``np.bincount``.
    """
    owner = np.repeat(np.arange(count.size), count)
    per_item = np.rint(_draw(table, pmf[owner], rng.random(owner.size)))
    return np.bincount(owner, weights=per_item, minlength=count.size).astype(np.int64)


def _sample_lengths(pool: ClientPool, pmf: np.ndarray, rho: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
    n = pmf.size
    t = _UsedTables(pool, pmf)
    pmf = t.local
    out: dict[str, np.ndarray] = {}
    if pool.category in ("language", "reason"):
        u_in, u_out = _uniform_pair(n, rho, rng)
        out["input_tokens"] = np.rint(_draw(t["input_tokens"], pmf, u_in)).astype(np.int64)
        out["output_tokens"] = np.rint(_draw(t["output_tokens"], pmf, u_out)).astype(np.int64)
        if pool.category == "reason":
            ratio = np.clip(_draw(t["reason_ratio"], pmf, rng.random(n)), 0.0, 1.0)
            reasoning = np.rint(out["output_tokens"] * ratio).astype(np.int64)
            out["reasoning_tokens"] = reasoning
            out["answer_tokens"] = out["output_tokens"] - reasoning
        return out
    # multimodal: every modality's token count and item count per request; input = text + media tokens.
    u_in, u_out = _uniform_pair(n, rho, rng)
    text = np.rint(_draw(t["text_tokens"], pmf, u_in)).astype(np.int64)
    cols: dict[str, np.ndarray] = {"text_tokens": text}
    total = text.copy()
    for media in ("image", "audio", "video"):
        count = np.maximum(np.rint(_draw(t[f"{media}_count"], pmf, rng.random(n))), 0).astype(np.int64)
        tokens = _per_item_sum(t[f"{media}_tokens"], pmf, count, rng)
        if media == "image" or count.any() or tokens.any():
            cols[f"{media}_count"] = count
            cols[f"{media}_tokens"] = tokens
        total += tokens
    out["input_tokens"] = total
    out["output_tokens"] = np.rint(_draw(t["output_tokens"], pmf, u_out)).astype(np.int64)
    out.update(cols)
    return out


@accepts()
def naive_workload(
    requests: pd.DataFrame, *, seed: Seed = None, duration_s: float | None = None, keep: str | None = None
) -> pd.DataFrame:
    """The naive baseline of a composed workload: Poisson arrivals at the same mean rate, lengths pooled.

    Arrivals are one Poisson process over ``[0, duration_s)`` (default: the span recorded in ``requests.attrs`` or
    the last arrival) at the workload's mean rate; every request's lengths are drawn with replacement from all the
    composed requests' lengths (the pooled distribution: no client identity, no time variation).

    ``keep`` builds the two halves of the baseline for ablations: ``"arrivals"`` keeps the composed arrival times
    (and client ids) and pools only the lengths; ``"lengths"`` draws Poisson arrivals but keeps every request's
    lengths in their composed order (so the drift and the clustering of lengths in time survive, the burstiness does
    not).

    Examples
    --------

    >>> from workbench.workloads.servegen import load_pool
    >>> comp = compose(load_pool("deepseek-r1"), start_s=12 * 3600, duration_s=600, rate_rps=5.0, seed=0)
    >>> naive = naive_workload(comp, seed=0)
    >>> abs(len(naive) - len(comp)) < 300
    True

    Examples
    --------
    >>> import pandas as pd
    >>> from workbench.workloads.schema import standardize
    >>> df = standardize(pd.DataFrame({"arrival_s": [0.0, 1.0, 2.0, 3.0], "input_tokens": [10, 20, 30, 40],
    ...                                "output_tokens": [5, 6, 7, 8]}))
    >>> len(naive_workload(df, seed=0)) > 0
    True
    """
    if not isinstance(requests, pd.DataFrame) or "arrival_s" not in requests:
        raise TypeError("requests must be a request DataFrame with an arrival_s column")
    if len(requests) == 0:
        raise ValueError("requests is empty: nothing to pool")
    dur = duration_s if duration_s is not None else requests.attrs.get("duration_s")
    if dur is None:
        dur = float(requests["arrival_s"].max())
    dur = positive("duration_s", dur)
    if keep not in (None, "arrivals", "lengths"):
        raise ValueError(f"keep must be None, 'arrivals' or 'lengths'; got {keep!r}")
    rng = generator(seed)
    n = len(requests)
    if keep == "arrivals":
        times = requests["arrival_s"].to_numpy()
        clients = requests["client_id"].to_numpy() if "client_id" in requests else np.full(n, -1, dtype=np.int64)
    else:
        times = arrivals.arrivals_until(arrivals.Poisson(n / dur), dur, seed=rng)
        clients = np.full(times.size, -1, dtype=np.int64)
    if keep == "lengths":  # the composed lengths in order, stretched over the Poisson arrivals
        pick = np.minimum((np.arange(times.size) * n) // max(times.size, 1), n - 1)
    else:
        pick = rng.integers(0, n, size=times.size)
    cols = [c for c in requests.columns if c not in ("arrival_s", "client_id")]
    out = {"client_id": clients, "arrival_s": times}
    for c in cols:
        out[c] = requests[c].to_numpy()[pick]
    frame = pd.DataFrame(out)
    frame.attrs.update(dict(requests.attrs))
    frame.attrs["naive"] = keep or True
    return frame
