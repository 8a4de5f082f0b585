"""ServeGen client pools: the released per-client statistics of Alibaba Model Studio, loaded into arrays.

ServeGen (Xiang et al., "ServeGen: Workload Characterization of Large Language Model Serving in Production",
arXiv 2505.09999) characterizes the traffic of a production LLM service *per client* (an API key or application)
and releases, for each client of five models, two kinds of statistics:

* every 600-second window: the client's request rate, the coefficient of variation (CV) of its inter-arrival times
  and the distribution family (Gamma or Weibull) that fits them best;
* every 6-hour window: probability mass functions (PMFs) of its token lengths (input and output for the language
  models; text/image/audio/video tokens and counts for the multimodal model; input, output and the reasoning share
  of the output for the reasoning model).

A :class:`ClientPool` holds one model's clients as dense arrays (``rate_rps[client, window]``, ...) and every PMF
concatenated into one :class:`PmfTable` per length field, so that selecting a time span, filtering clients,
summarizing and sampling lengths are array operations. Pools come from three places, all giving the same object:

* the raw files on the data search path (``servegen/data/<category>/<model>/chunk-<id>-{trace.csv,dataset.json}``),
  parsed once (the PMF literals with a small safe parser, never ``eval``) and then cached as ``.npz`` under
  :func:`workbench.data.cache_dir`;
* the compact embedded summary committed under ``datasets/servegen/`` (made by ``scripts/build_servegen_summary.py``
  from the raw files), used when the raw data is absent: the arrival statistics at full resolution and each length
  PMF reduced to equally likely quantile atoms.

Some upstream length files are missing (``MISSING_FILES.txt``); such a client keeps its arrival statistics and has
``has_lengths == False``. Wherever a client-window has no PMF of its own (missing file, or a window with traffic but
no length record), sampling falls back to the *pooled* PMF of that 6-hour window: the mixture of the other clients'
PMFs weighted by their request counts.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import data
from .._validate import array_1d, finite, integer, nonnegative, one_of

__all__ = [
    "MODELS",
    "WINDOW_S",
    "LENGTH_WINDOW_S",
    "FAMILIES",
    "PmfTable",
    "ClientPool",
    "load_pool",
    "parse_pmf_literal",
    "raw_model_dir",
]

#: Released models: name -> (category folder, days covered).
MODELS: dict[str, tuple[str, int]] = {
    "m-large": ("language", 14),
    "m-mid": ("language", 14),
    "m-small": ("language", 14),
    "mm-image": ("multimodal", 1),
    "deepseek-r1": ("reason", 1),
}
#: Length fields released per category, in file order.
FIELDS: dict[str, tuple[str, ...]] = {
    "language": ("input_tokens", "output_tokens"),
    "reason": ("input_tokens", "output_tokens", "reason_ratio"),
    "multimodal": (
        "text_tokens",
        "image_tokens",
        "audio_tokens",
        "video_tokens",
        "image_count",
        "audio_count",
        "video_count",
        "output_tokens",
    ),
}
WINDOW_S = 600.0
LENGTH_WINDOW_S = 21600.0
#: Codes of ``ClientPool.family``: 0 inactive window, 1 Gamma, 2 Weibull.
FAMILIES = ("", "gamma", "weibull")
_PATTERN_CODE = {"": 0, "Gamma": 1, "Weibull": 2}
_CACHE_VERSION = 1

_ALLOWED_BYTES = np.zeros(256, dtype=bool)
_ALLOWED_BYTES[np.frombuffer(b"0123456789.eE+-:, \t\r\n", dtype=np.uint8)] = True


# ----------------------------------------------------------------------------------------------------------- PMFs
def parse_pmf_literal(text: str, *, where: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Parse a ServeGen PMF literal ``"{value: probability, ...}"`` into ``(values, probabilities)``.

    A small safe parser (never ``eval``): the text must be a brace-enclosed list of ``number: number`` pairs. Pairs
    with probability 0 are dropped; probabilities must lie in [0, 1] and sum to 1 within 1e-3 (they are then
    renormalized); values must be non-negative. ``"{}"`` gives two empty arrays.

    Parameters
    ----------
    text : str
        The literal, e.g. ``"{12: 0.25, 40: 0.75}"``.
    where : str
        Location used in error messages (file, line, window, field).

    Returns
    -------
    values, probabilities : numpy.ndarray
        float64 arrays sorted by value.

    Examples
    --------
    >>> v, p = parse_pmf_literal("{40: 0.75, 12: 0.25}")
    >>> v.tolist(), p.tolist()
    ([12.0, 40.0], [0.25, 0.75])
    """
    loc = f" ({where})" if where else ""
    if not isinstance(text, str):
        raise TypeError(f"PMF literal must be a str, got {type(text).__name__}{loc}")
    s = text.strip()
    if len(s) < 2 or s[0] != "{" or s[-1] != "}":
        raise ValueError(f"malformed PMF literal{loc}: must be '{{value: probability, ...}}', got {s[:40]!r}")
    body = s[1:-1].strip().rstrip(",")
    if not body:
        return np.empty(0), np.empty(0)
    try:
        raw = body.encode("ascii")
    except UnicodeEncodeError:
        raise ValueError(f"malformed PMF literal{loc}: non-ASCII character") from None
    bad = ~_ALLOWED_BYTES[np.frombuffer(raw, dtype=np.uint8)]
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"malformed PMF literal{loc}: unexpected character {body[i]!r} at offset {i + 1}")
    n_pairs = body.count(":")
    if body.count(",") != n_pairs - 1:
        raise ValueError(f"malformed PMF literal{loc}: {n_pairs} ':' but {body.count(',')} ','")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            nums = np.fromstring(body.replace(":", ","), sep=",")
        except (DeprecationWarning, ValueError):
            nums = np.empty(0)
    if nums.size != 2 * n_pairs:
        raise ValueError(f"malformed PMF literal{loc}: expected {n_pairs} 'number: number' pairs")
    values, probs = nums[0::2], nums[1::2]
    if not (np.isfinite(nums).all() and (values >= 0).all()):
        raise ValueError(f"malformed PMF literal{loc}: values must be finite and >= 0")
    if ((probs < 0) | (probs > 1 + 1e-9)).any():
        raise ValueError(f"malformed PMF literal{loc}: probabilities must lie in [0, 1]")
    total = probs.sum()
    if abs(total - 1.0) > 1e-3:
        raise ValueError(f"malformed PMF literal{loc}: probabilities sum to {total:.6g}, not 1")
    keep = probs > 0
    values, probs = values[keep], probs[keep] / total
    order = np.argsort(values, kind="stable")
    return values[order], probs[order]


@dataclass(frozen=True)
class PmfTable:
    """Many PMFs concatenated: PMF ``i`` occupies ``values[offsets[i]:offsets[i+1]]``.

    ``cdf`` is each PMF's own cumulative probability (ending at exactly 1). Sampling is one ``searchsorted`` over the
    key ``i + cdf`` for every request at once (inverse-CDF over concatenated PMFs).
    """

    values: np.ndarray
    cdf: np.ndarray
    offsets: np.ndarray
    _key: np.ndarray = field(repr=False, compare=False, default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        counts = np.diff(self.offsets)
        if (counts <= 0).any():
            raise ValueError("every PMF in a PmfTable needs at least one value")
        key = np.repeat(np.arange(counts.size, dtype=np.float64), counts) + self.cdf
        object.__setattr__(self, "_key", key)

    @classmethod
    def from_pmfs(cls, pmfs: list[tuple[np.ndarray, np.ndarray]]) -> PmfTable:
        """Build from a list of ``(values, probabilities)``."""
        counts = np.array([len(v) for v, _ in pmfs], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)])
        values = np.concatenate([v for v, _ in pmfs]) if pmfs else np.empty(0)
        cdf = np.concatenate([_cdf(p) for _, p in pmfs]) if pmfs else np.empty(0)
        return cls(values.astype(np.float64), cdf, offsets)

    @property
    def n(self) -> int:
        return int(self.offsets.size - 1)

    def probabilities(self) -> np.ndarray:
        """Per-value probabilities (the differences of ``cdf`` within each PMF)."""
        p = np.diff(self.cdf, prepend=0.0)
        p[self.offsets[:-1]] = self.cdf[self.offsets[:-1]]
        return p

    def pmf(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """``(values, probabilities)`` of PMF ``i``."""
        a, b = self.offsets[i], self.offsets[i + 1]
        return self.values[a:b], self.probabilities()[a:b]

    def sample(self, pmf_index: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Inverse-CDF draw: for each request, the value of PMF ``pmf_index`` at uniform quantile ``u`` in [0, 1)."""
        pmf_index = np.asarray(pmf_index, dtype=np.int64)
        pos = np.searchsorted(self._key, pmf_index + np.asarray(u, dtype=np.float64), side="right")
        pos = np.clip(pos, self.offsets[pmf_index], self.offsets[pmf_index + 1] - 1)
        return self.values[pos]

    def sample_guided(self, pmf_index: np.ndarray, u: np.ndarray, *, guide_size: int | None = None) -> np.ndarray:
        """Same draws as :meth:`sample`, in O(1) expected time per draw (a guide table, Chen and Asau 1974).

        For every PMF a guide of ``guide_size`` entries (default: about the mean PMF size) stores where its CDF
        first exceeds ``k / guide_size``; a
        draw starts there and steps forward (vectorized) until the CDF exceeds ``u``. Exact, and several times
        faster than a binary search when the tables are large and the queries unsorted.
        """
        pmf_index = np.asarray(pmf_index, dtype=np.int64)
        u = np.asarray(u, dtype=np.float64)
        if guide_size is None:  # about one atom per guide slot: O(1) steps per draw, guide no bigger than the table
            guide_size = int(np.clip(2 ** np.ceil(np.log2(max(self.values.size / max(self.n, 1), 1.0))), 64, 4096))
        g = int(guide_size)
        grid = (np.repeat(np.arange(self.n, dtype=np.float64), g) + np.tile(np.arange(g) / g, self.n))
        guide = np.searchsorted(self._key, grid, side="right")
        q = pmf_index + u
        pos = guide[pmf_index * g + np.minimum((u * g).astype(np.int64), g - 1)]
        last = self.values.size - 1
        idx = np.flatnonzero(self._key[np.minimum(pos, last)] <= q)
        while idx.size:
            pos[idx] += 1
            idx = idx[self._key[np.minimum(pos[idx], last)] <= q[idx]]
        pos = np.clip(pos, self.offsets[pmf_index], self.offsets[pmf_index + 1] - 1)
        return self.values[pos]

    def means(self) -> np.ndarray:
        """Mean of every PMF."""
        which = np.repeat(np.arange(self.n), np.diff(self.offsets))
        return np.bincount(which, weights=self.values * self.probabilities(), minlength=self.n)

    def quantiles(self, q: np.ndarray) -> np.ndarray:
        """``(n_pmf, len(q))`` matrix of quantiles (inverse CDF at each level of ``q``)."""
        q = np.asarray(q, dtype=float)
        idx = np.repeat(np.arange(self.n), q.size)
        return self.sample(idx, np.tile(np.minimum(q, 1 - 1e-12), self.n)).reshape(self.n, q.size)

    def subset(self, index: np.ndarray) -> PmfTable:
        """A table holding only PMFs ``index`` (in that order)."""
        index = np.asarray(index, dtype=np.int64)
        counts = np.diff(self.offsets)[index]
        starts = self.offsets[index]
        pos = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(counts.sum())
        offsets = np.concatenate([[0], np.cumsum(counts)])
        return PmfTable(self.values[pos], self.cdf[pos], offsets)


def _cdf(p: np.ndarray) -> np.ndarray:
    c = np.cumsum(p)
    if c.size:
        c /= c[-1]
        c[-1] = 1.0
    return c


def mixture(table: PmfTable, index: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mixture of PMFs ``index`` of ``table`` with ``weights``: ``(values, probabilities)`` on merged support."""
    index = np.asarray(index, dtype=np.int64)
    weights = np.asarray(weights, dtype=float)
    counts = np.diff(table.offsets)[index]
    starts = table.offsets[index]
    pos = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(counts.sum())
    probs = table.probabilities()[pos] * np.repeat(weights, counts)
    values, inv = np.unique(table.values[pos], return_inverse=True)
    p = np.bincount(inv, weights=probs, minlength=values.size)
    return values, p / p.sum()


# ----------------------------------------------------------------------------------------------------------- pool
@dataclass(frozen=True)
class ClientPool:
    """One model's clients: per-window arrival statistics and per-window length PMFs, as arrays.

    Attributes
    ----------
    model, category : str
        Model name (``"m-large"``...) and category (``"language"``, ``"reason"``, ``"multimodal"``).
    source : str
        ``"raw"`` (the released files) or ``"summary"`` (the embedded compact summary).
    client_ids : ndarray of int64, shape (n_clients,)
    start_s : float
        Time of window 0 in seconds from 00:00 of the first day.
    rate_rps, cv : ndarray, shape (n_clients, n_windows)
        Request rate and inter-arrival CV per 600 s window (0 where the client is inactive).
    family : ndarray of int8, shape (n_clients, n_windows)
        0 inactive, 1 Gamma, 2 Weibull.
    fields : tuple of str
        Length fields of this category.
    tables : dict of str -> PmfTable
        One table per field; PMF ``k`` of every table belongs to the same (client, length window).
    length_index : ndarray of int64, shape (n_clients, n_length_windows)
        PMF id of each client's 6 h window (its own PMF, or the pooled fallback of that window).
    own_lengths : ndarray of bool, shape (n_clients, n_length_windows)
        True where the PMF is the client's own (False: pooled fallback).
    has_lengths : ndarray of bool, shape (n_clients,)
        False for clients whose length file is missing upstream.
    """

    model: str
    category: str
    source: str
    client_ids: np.ndarray
    start_s: float
    rate_rps: np.ndarray
    cv: np.ndarray
    family: np.ndarray
    fields: tuple[str, ...]
    tables: dict[str, PmfTable]
    length_index: np.ndarray
    own_lengths: np.ndarray
    has_lengths: np.ndarray
    window_s: float = WINDOW_S
    length_window_s: float = LENGTH_WINDOW_S

    # ---- shape
    @property
    def n_clients(self) -> int:
        return int(self.client_ids.size)

    @property
    def n_windows(self) -> int:
        return int(self.rate_rps.shape[1])

    @property
    def duration_s(self) -> float:
        return self.n_windows * self.window_s

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s

    @property
    def window_start_s(self) -> np.ndarray:
        """Start time of every 600 s window (seconds from 00:00 of day 1)."""
        return self.start_s + self.window_s * np.arange(self.n_windows)

    def length_window_of(self, t_s: np.ndarray) -> np.ndarray:
        """Index into ``length_index`` columns of absolute times ``t_s``."""
        first = int(np.floor(self.start_s / self.length_window_s + 1e-9))
        lw = np.floor(np.asarray(t_s, dtype=float) / self.length_window_s + 1e-9).astype(np.int64) - first
        return np.clip(lw, 0, self.length_index.shape[1] - 1)

    # ---- selection
    def select(self, start_s: float | None = None, duration_s: float | None = None) -> ClientPool:
        """The pool restricted to ``[start_s, start_s + duration_s)`` (whole 600 s windows; times absolute).

        Examples
        --------
        >>> pool = load_pool("deepseek-r1")
        >>> pool.select(12 * 3600, 3600).n_windows
        6
        """
        start = self.start_s if start_s is None else finite("start_s", start_s)
        dur = self.end_s - start if duration_s is None else finite("duration_s", duration_s)
        if dur <= 0:
            raise ValueError(f"duration_s must be > 0, got {dur}")
        if start < self.start_s - 1e-9 or start + dur > self.end_s + 1e-6:
            raise ValueError(
                f"span [{start:g}, {start + dur:g}) s is outside the {self.model} data, which covers "
                f"[{self.start_s:g}, {self.end_s:g}) s"
            )
        w0 = int(np.floor((start - self.start_s) / self.window_s + 1e-9))
        w1 = int(np.ceil((start + dur - self.start_s) / self.window_s - 1e-9))
        new_start = self.start_s + w0 * self.window_s
        lw0 = int(np.floor(new_start / self.length_window_s + 1e-9)) - int(
            np.floor(self.start_s / self.length_window_s + 1e-9)
        )
        lw1 = int(np.ceil((self.start_s + w1 * self.window_s) / self.length_window_s - 1e-9)) - int(
            np.floor(self.start_s / self.length_window_s + 1e-9)
        )
        return replace(
            self,
            start_s=new_start,
            rate_rps=self.rate_rps[:, w0:w1],
            cv=self.cv[:, w0:w1],
            family=self.family[:, w0:w1],
            length_index=self.length_index[:, lw0:lw1],
            own_lengths=self.own_lengths[:, lw0:lw1],
        )

    def subset(self, mask_or_index: np.ndarray) -> ClientPool:
        """The pool restricted to some clients (boolean mask or integer positions)."""
        idx = np.asarray(mask_or_index)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        if idx.size == 0:
            raise ValueError(f"client selection of {self.model} is empty: no client matches the filter")
        return replace(
            self,
            client_ids=self.client_ids[idx],
            rate_rps=self.rate_rps[idx],
            cv=self.cv[idx],
            family=self.family[idx],
            length_index=self.length_index[idx],
            own_lengths=self.own_lengths[idx],
            has_lengths=self.has_lengths[idx],
        )

    def filter(
        self,
        *,
        min_rate_rps: float | None = None,
        max_rate_rps: float | None = None,
        min_cv: float | None = None,
        max_cv: float | None = None,
        min_mean_input_tokens: float | None = None,
        max_mean_input_tokens: float | None = None,
        min_mean_output_tokens: float | None = None,
        max_mean_output_tokens: float | None = None,
        has_lengths: bool | None = None,
        top: int | None = None,
        client_ids: Any = None,
    ) -> ClientPool:
        """Clients whose span statistics (see :meth:`client_summary`) pass every given bound.

        ``top`` keeps the ``top`` busiest clients (by mean rate); ``client_ids`` keeps the listed clients. An empty
        result raises ``ValueError``.

        Examples
        --------
        >>> pool = load_pool("deepseek-r1").select(0, 6 * 3600)
        >>> pool.filter(top=5).n_clients
        5
        """
        s = self.client_summary()
        keep = np.ones(self.n_clients, dtype=bool)
        bounds = [
            ("min_rate_rps", min_rate_rps, "mean_rate_rps", np.greater_equal),
            ("max_rate_rps", max_rate_rps, "mean_rate_rps", np.less_equal),
            ("min_cv", min_cv, "cv", np.greater_equal),
            ("max_cv", max_cv, "cv", np.less_equal),
            ("min_mean_input_tokens", min_mean_input_tokens, "mean_input_tokens", np.greater_equal),
            ("max_mean_input_tokens", max_mean_input_tokens, "mean_input_tokens", np.less_equal),
            ("min_mean_output_tokens", min_mean_output_tokens, "mean_output_tokens", np.greater_equal),
            ("max_mean_output_tokens", max_mean_output_tokens, "mean_output_tokens", np.less_equal),
        ]
        for name, bound, col, op in bounds:
            if bound is not None:
                keep &= op(s[col].to_numpy(), nonnegative(name, bound))
        if has_lengths is not None:
            keep &= s["has_lengths"].to_numpy() == bool(has_lengths)
        if client_ids is not None:
            wanted = array_1d("client_ids", client_ids, dtype=np.int64)
            unknown = np.setdiff1d(wanted, self.client_ids)
            if unknown.size:
                raise ValueError(f"client_ids {unknown[:5].tolist()} are not clients of {self.model}")
            keep &= np.isin(self.client_ids, wanted)
        if top is not None:
            top = integer("top", top, minimum=1)
            rate = np.where(keep, s["mean_rate_rps"].to_numpy(), -1.0)
            order = np.argsort(-rate, kind="stable")[:top]
            mask = np.zeros_like(keep)
            mask[order] = True
            keep &= mask
        return self.subset(keep)

    # ---- summaries
    def aggregate_rate(self) -> pd.Series:
        """Aggregate request rate (req/s) per 600 s window, indexed by window start (s)."""
        return pd.Series(self.rate_rps.sum(axis=0), index=pd.Index(self.window_start_s, name="window_start_s"),
                         name="rate_rps")

    def client_summary(self) -> pd.DataFrame:
        """One row per client over the pool's span.

        Columns: ``client_id``, ``mean_rate_rps``, ``share`` (of requests), ``active_fraction`` (of windows),
        ``cv`` (rate-weighted mean CV), ``gamma_fraction`` (of active windows fitted by Gamma), ``mean_input_tokens``
        and ``mean_output_tokens`` (request-weighted, own PMFs only; NaN without length data), ``has_lengths``.
        """
        rate = self.rate_rps
        total = rate.sum(axis=1)
        active = self.family > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            cv = (rate * self.cv).sum(axis=1) / total
            gamma_frac = (self.family == 1).sum(axis=1) / active.sum(axis=1)
        out = {
            "client_id": self.client_ids,
            "mean_rate_rps": rate.mean(axis=1),
            "share": total / max(total.sum(), 1e-300),
            "active_fraction": active.mean(axis=1),
            "cv": cv,
            "gamma_fraction": gamma_frac,
        }
        req_lw = self._requests_per_length_window()
        for f, col in (("input_tokens", "mean_input_tokens"), ("output_tokens", "mean_output_tokens")):
            if f in self.tables:
                m = self.tables[f].means()[self.length_index]
                w = req_lw * self.own_lengths
                with np.errstate(invalid="ignore", divide="ignore"):
                    out[col] = (m * w).sum(axis=1) / w.sum(axis=1)
            else:
                out[col] = np.full(self.n_clients, np.nan)
        out["has_lengths"] = self.has_lengths
        return pd.DataFrame(out)

    def _requests_per_length_window(self) -> np.ndarray:
        """Expected requests of each client in each 6 h window of ``length_index``."""
        lw = self.length_window_of(self.window_start_s)
        req = self.rate_rps * self.window_s
        out = np.zeros(self.length_index.shape)
        np.add.at(out.T, lw, req.T)
        return out

    def cv_distribution(self) -> tuple[np.ndarray, np.ndarray]:
        """``(cv, weight)`` over active client-windows, weight = requests in the window (rate-weighted CV)."""
        active = self.family > 0
        return self.cv[active], self.rate_rps[active] * self.window_s

    def weighted_cv_quantiles(self, q: Any = (0.1, 0.25, 0.5, 0.75, 0.9)) -> np.ndarray:
        """Quantiles of the rate-weighted CV distribution of :meth:`cv_distribution`."""
        cv, w = self.cv_distribution()
        return weighted_quantile(cv, w, q)

    def pooled_pmf(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        """The pool's length distribution of ``field``: every client-window PMF weighted by its requests."""
        one_of("field", field, self.fields)
        w = self._requests_per_length_window()
        keep = w > 0
        return mixture(self.tables[field], self.length_index[keep], w[keep])

    def length_percentiles(self, q: Any = (0.5, 0.9, 0.99)) -> pd.DataFrame:
        """Percentiles of every length field of the pooled (request-weighted) distribution."""
        q = array_1d("q", q, low=0.0, high=1.0, min_size=1)
        rows = {}
        for f in self.fields:
            v, p = self.pooled_pmf(f)
            c = np.cumsum(p)
            rows[f] = v[np.minimum(np.searchsorted(c, q * c[-1], side="left"), v.size - 1)]
        return pd.DataFrame(rows, index=pd.Index(q, name="quantile")).T


def weighted_quantile(x: np.ndarray, w: np.ndarray, q: Any) -> np.ndarray:
    """Quantiles ``q`` of values ``x`` with weights ``w`` (lower weighted quantile)."""
    x = np.asarray(x, dtype=float)
    w = np.asarray(w, dtype=float)
    q = np.atleast_1d(np.asarray(q, dtype=float))
    if x.size == 0 or w.sum() <= 0:
        return np.full(q.size, np.nan)
    order = np.argsort(x, kind="stable")
    c = np.cumsum(w[order])
    return x[order][np.minimum(np.searchsorted(c, q * c[-1], side="left"), x.size - 1)]


# ----------------------------------------------------------------------------------------------------------- loading
def raw_model_dir(model: str) -> Path | None:
    """Directory of ``model``'s released files on the data search path, or ``None``."""
    category = _check_model(model)
    return data.find(f"servegen/data/{category}/{model}")


def _check_model(model: str) -> str:
    if not isinstance(model, str):
        raise TypeError(f"model must be a str, got {type(model).__name__}")
    one_of("model", model, MODELS)
    return MODELS[model][0]


_CHUNK = re.compile(r"chunk-(\d+)-trace\.csv$")


def _client_files(directory: Path) -> list[tuple[int, Path, Path]]:
    out = []
    for p in directory.iterdir():
        m = _CHUNK.match(p.name)
        if m:
            cid = int(m.group(1))
            out.append((cid, p, directory / f"chunk-{cid}-dataset.json"))
    if not out:
        raise FileNotFoundError(f"no chunk-*-trace.csv files in {directory}")
    return sorted(out)


def _fingerprint(files: list[tuple[int, Path, Path]]) -> str:
    h = hashlib.sha256(f"v{_CACHE_VERSION}".encode())
    for cid, t, d in files:
        for p in (t, d):
            try:
                st = p.stat()
                h.update(f"{p.name}:{st.st_size}:{st.st_mtime_ns};".encode())
            except FileNotFoundError:
                h.update(f"{p.name}:missing;".encode())
    return h.hexdigest()[:16]


def _read_trace(path: Path) -> np.ndarray:
    """Parse one trace CSV into a structured view: (timestamp, rate, cv, pattern code)."""
    try:
        frame = pd.read_csv(path, header=None, names=["t", "rate", "cv", "pattern", "shape", "scale"],
                            keep_default_na=False, dtype={"pattern": str})
    except Exception as exc:  # pandas parser errors carry the line
        raise ValueError(f"{path}: malformed trace CSV: {exc}") from None
    for col in ("t", "rate", "cv"):
        vals = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(vals) | (vals < 0)
        if bad.any():
            line = int(np.argmax(bad)) + 1
            got = frame[col].iloc[line - 1]
            raise ValueError(f"{path}:{line}: column {col!r} must be a finite number >= 0, got {got!r}")
        frame[col] = vals
    codes = frame["pattern"].map(_PATTERN_CODE)
    if codes.isna().any():
        line = int(np.argmax(codes.isna().to_numpy())) + 1
        got = frame["pattern"].iloc[line - 1]
        raise ValueError(f"{path}:{line}: pattern must be 'Gamma', 'Weibull' or empty, got {got!r}")
    t = frame["t"].to_numpy()
    bad_t = (np.abs(t / WINDOW_S - np.round(t / WINDOW_S)) > 1e-6) | np.r_[False, np.diff(t) <= 0]
    if bad_t.any():
        line = int(np.argmax(bad_t)) + 1
        raise ValueError(f"{path}:{line}: timestamps must be increasing multiples of {WINDOW_S:g} s")
    active_bad = (frame["rate"].to_numpy() > 0) & ((codes.to_numpy() == 0) | (frame["cv"].to_numpy() <= 0))
    if active_bad.any():
        line = int(np.argmax(active_bad)) + 1
        raise ValueError(f"{path}:{line}: a window with rate > 0 needs a pattern and a cv > 0")
    return np.stack([t, frame["rate"].to_numpy(), frame["cv"].to_numpy(), codes.to_numpy(dtype=float)])


def _line_of(text: str, needle: str) -> int:
    pos = text.find(needle)
    return text.count("\n", 0, pos) + 1 if pos >= 0 else 1


def _read_lengths(path: Path, fields: tuple[str, ...]) -> dict[int, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Parse one dataset.json: {window index: {field: (values, probs)}}; inactive windows are omitted."""
    text = path.read_text()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}:1: expected a JSON object keyed by window timestamp")
    out: dict[int, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    for ts, entry in doc.items():
        try:
            t = float(ts)
        except ValueError:
            raise ValueError(f"{path}:{_line_of(text, json.dumps(ts))}: window key {ts!r} is not a timestamp") from None
        if isinstance(entry, str) and entry.strip() in ("{}", ""):
            continue
        if not isinstance(entry, dict):
            raise ValueError(f"{path}:{_line_of(text, json.dumps(ts))}: window {ts} must map fields to PMF literals")
        parsed = {}
        for f in fields:
            lit = entry.get(f, "{}")
            try:
                parsed[f] = parse_pmf_literal(lit)
            except (ValueError, TypeError) as exc:
                line = _line_of(text, json.dumps(ts))
                raise ValueError(f"{path}:{line}: window {ts}, field {f}: {exc}") from None
        if all(v.size == 0 for v, _ in parsed.values()):
            continue
        if any(v.size == 0 for v, _ in parsed.values()):
            missing = [f for f, (v, _) in parsed.items() if v.size == 0]
            raise ValueError(f"{path}:{_line_of(text, json.dumps(ts))}: window {ts} lacks PMFs for {missing}")
        out[int(round(t / LENGTH_WINDOW_S))] = parsed
    return out


def _build_from_raw(model: str, files: list[tuple[int, Path, Path]]) -> dict[str, np.ndarray]:
    category, days = MODELS[model]
    fields = FIELDS[category]
    n_w = int(round(days * 86400 / WINDOW_S))
    n_lw = int(round(days * 86400 / LENGTH_WINDOW_S))
    n_c = len(files)
    rate = np.zeros((n_c, n_w))
    cv = np.zeros((n_c, n_w))
    fam = np.zeros((n_c, n_w), dtype=np.int8)
    own = -np.ones((n_c, n_lw), dtype=np.int64)
    has = np.zeros(n_c, dtype=bool)
    pmfs: dict[str, list] = {f: [] for f in fields}
    for i, (cid, tpath, dpath) in enumerate(files):
        t, r, c, code = _read_trace(tpath)
        w = np.round(t / WINDOW_S).astype(np.int64)
        if w.size and w.max() >= n_w:
            raise ValueError(f"{tpath}:{int(np.argmax(w >= n_w)) + 1}: timestamp beyond the {days}-day span")
        rate[i, w], cv[i, w], fam[i, w] = r, c, code.astype(np.int8)
        if dpath.exists():
            has[i] = True
            for lw, entry in sorted(_read_lengths(dpath, fields).items()):
                if not 0 <= lw < n_lw:
                    raise ValueError(f"{dpath}: length window {lw * LENGTH_WINDOW_S:g} s beyond the {days}-day span")
                own[i, lw] = len(pmfs[fields[0]])
                for f in fields:
                    pmfs[f].append(entry[f])
    return _finish_arrays(model, np.array([f[0] for f in files], dtype=np.int64), rate, cv, fam, own, has, pmfs)


def _finish_arrays(model, client_ids, rate, cv, fam, own, has, pmfs) -> dict[str, np.ndarray]:
    """Append pooled fallback PMFs per 6 h window and flatten everything into npz-ready arrays."""
    category = MODELS[model][0]
    fields = FIELDS[category]
    n_own = len(pmfs[fields[0]])
    tables = {f: PmfTable.from_pmfs(pmfs[f]) for f in fields}
    n_lw = own.shape[1]
    per_lw = int(round(LENGTH_WINDOW_S / WINDOW_S))
    req = (rate * WINDOW_S).reshape(rate.shape[0], n_lw, per_lw).sum(axis=2)
    fallback = np.empty(n_lw, dtype=np.int64)
    for lw in range(n_lw):  # a loop over 6 h windows (<= 56), once at load time
        sel = own[:, lw] >= 0
        w = req[sel, lw] if req[sel, lw].sum() > 0 else np.ones(sel.sum())
        if not sel.any():  # no client has lengths in this window: pool over all windows
            sel2 = own >= 0
            idx, w = own[sel2], np.maximum(req[sel2], 1e-9)
        else:
            idx = own[sel, lw]
        fallback[lw] = n_own + lw
        for f in fields:
            pmfs[f].append(mixture(tables[f], idx, w))
    index = np.where(own >= 0, own, fallback[None, :])
    out = {
        "model": np.array(model),
        "client_ids": client_ids,
        "rate_rps": rate,
        "cv": cv,
        "family": fam,
        "length_index": index,
        "own_lengths": own >= 0,
        "has_lengths": has,
    }
    for f in fields:
        t = PmfTable.from_pmfs(pmfs[f])
        out[f"{f}__values"], out[f"{f}__cdf"], out[f"{f}__offsets"] = t.values, t.cdf, t.offsets
    return out


def _pool_from_arrays(arrays: Any, source: str) -> ClientPool:
    model = str(arrays["model"])
    category = MODELS[model][0]
    fields = FIELDS[category]
    tables = {
        f: PmfTable(
            np.asarray(arrays[f"{f}__values"], dtype=np.float64),
            np.asarray(arrays[f"{f}__cdf"], dtype=np.float64),
            np.asarray(arrays[f"{f}__offsets"], dtype=np.int64),
        )
        for f in fields
    }
    return ClientPool(
        model=model,
        category=category,
        source=source,
        client_ids=np.asarray(arrays["client_ids"], dtype=np.int64),
        start_s=0.0,
        rate_rps=np.asarray(arrays["rate_rps"], dtype=np.float64),
        cv=np.asarray(arrays["cv"], dtype=np.float64),
        family=np.asarray(arrays["family"], dtype=np.int8),
        fields=fields,
        tables=tables,
        length_index=np.asarray(arrays["length_index"], dtype=np.int64),
        own_lengths=np.asarray(arrays["own_lengths"], dtype=bool),
        has_lengths=np.asarray(arrays["has_lengths"], dtype=bool),
    )


def summary_path(model: str) -> Path | None:
    """The embedded compact summary of ``model`` (``datasets/servegen/<model>.npz``) if present."""
    _check_model(model)
    return data.find(f"servegen/summary/{model}.npz")


def _load_summary(model: str) -> ClientPool:
    path = summary_path(model)
    if path is None:
        raise FileNotFoundError(
            f"neither the ServeGen raw data (servegen/data/...) nor the embedded summary servegen/summary/{model}.npz "
            "is on the data search path"
        )
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    fields = FIELDS[MODELS[model][0]]
    for f in fields:  # the summary stores K equally likely quantile atoms per PMF
        atoms = arrays.pop(f"{f}__atoms").astype(np.float64)
        n, k = atoms.shape
        arrays[f"{f}__values"] = atoms.ravel()
        arrays[f"{f}__cdf"] = np.tile(np.arange(1, k + 1) / k, n)
        arrays[f"{f}__offsets"] = np.arange(n + 1, dtype=np.int64) * k
    arrays["rate_rps"] = arrays["rate_rps"].astype(np.float64)
    arrays["cv"] = arrays["cv"].astype(np.float64)
    return _pool_from_arrays(arrays, "summary")


def _load_raw(model: str, directory: Path, *, cache: bool) -> ClientPool:
    files = _client_files(directory)
    cache_file = None
    if cache:
        cache_file = data.cache_dir() / "servegen" / f"{model}-{_fingerprint(files)}.npz"
        if cache_file.exists():
            try:
                with np.load(cache_file, allow_pickle=False) as z:
                    return _pool_from_arrays({k: z[k] for k in z.files}, "raw")
            except (OSError, ValueError, KeyError):
                pass  # a corrupt cache is rebuilt
    arrays = _build_from_raw(model, files)
    if cache_file is not None:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(f".tmp{os.getpid()}.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, cache_file)
    return _pool_from_arrays(arrays, "raw")


@functools.lru_cache(maxsize=8)
def _memo(model: str, source: str, directory: str) -> ClientPool:
    if source == "summary":
        return _load_summary(model)
    return _load_raw(model, Path(directory), cache=True)


def load_pool(model: str, *, source: str = "auto", cache: bool = True) -> ClientPool:
    """Load one released model's client pool.

    Parameters
    ----------
    model : {"m-large", "m-mid", "m-small", "mm-image", "deepseek-r1"}
    source : {"auto", "raw", "summary"}
        ``"raw"`` parses the released files on the data search path (``servegen/data/...``), cached as ``.npz`` in
        :func:`workbench.data.cache_dir`; ``"summary"`` reads the embedded compact summary
        (``datasets/servegen/summary/<model>.npz``); ``"auto"`` prefers the raw files when present.
    cache : bool
        Use (and fill) the on-disk cache and an in-memory memo; ``False`` always re-parses.

    Returns
    -------
    ClientPool

    Examples
    --------
    >>> pool = load_pool("m-large")
    >>> pool.n_clients
    162
    """
    _check_model(model)
    one_of("source", source, ("auto", "raw", "summary"))
    directory = raw_model_dir(model) if source != "summary" else None
    if source == "raw" and directory is None:
        raise FileNotFoundError(
            f"ServeGen raw data servegen/data/{MODELS[model][0]}/{model} is not on the data search path "
            f"({', '.join(map(str, data.search_path()))})"
        )
    chosen = "raw" if directory is not None else "summary"
    if not cache:
        return _load_raw(model, directory, cache=False) if chosen == "raw" else _load_summary(model)
    return _memo(model, chosen, str(directory) if directory else "")
