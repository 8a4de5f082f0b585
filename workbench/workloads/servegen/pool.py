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
summarizing and sampling lengths are array operations. Pools come from two places, both giving the same object
(:func:`~workbench.workloads.servegen.load_pool`, in :mod:`~workbench.workloads.servegen.load`):

* the raw files on the data search path (``servegen/data/<category>/<model>/chunk-<id>-{trace.csv,dataset.json}``),
  parsed once (the PMF literals with a small safe parser, never ``eval``) and then cached as a verified ``.npz``
  under ``$WORKBENCH_CACHE/servegen`` keyed by the files' content (:mod:`workbench.cache`);
* the compact embedded summary committed under ``datasets/servegen/`` (made by ``scripts/build_servegen_summary.py``
  from the raw files), used when the raw data is absent: the arrival statistics at full resolution and each length
  PMF reduced to equally likely quantile atoms.

Some upstream length files are missing (``MISSING_FILES.txt``); such a client keeps its arrival statistics and has
``has_lengths == False``. Wherever a client-window has no PMF of its own (missing file, or a window with traffic but
no length record), sampling falls back to the *pooled* PMF of that 6-hour window: the mixture of the other clients'
PMFs weighted by their request counts. This matters: in the released data 15 m-large clients have no
``dataset.json``, and they carry 74% of m-large's requests at 14:00. The workbench keeps them (with the pooled length
distribution); ServeGen's reference generator drops them. ``pool.filter(has_lengths=True)`` gives the reference's
client set.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..._contracts import AnyOf, Array, Bool, Int, Items, Opaque, Real, accepts, output
from ..._validate import array_1d, finite, integer, nonnegative, one_of
from ...distributions import weighted_quantile
from .pmf import PmfTable, mixture

__all__ = [
    "MODELS",
    "FIELDS",
    "WINDOW_S",
    "LENGTH_WINDOW_S",
    "FAMILIES",
    "ClientPool",
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


@output
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

    @accepts()
    def length_window_of(self, t_s: np.ndarray) -> np.ndarray:
        """Index into ``length_index`` columns of absolute times ``t_s``."""
        first = int(np.floor(self.start_s / self.length_window_s + 1e-9))
        lw = np.floor(np.asarray(t_s, dtype=float) / self.length_window_s + 1e-9).astype(np.int64) - first
        return np.clip(lw, 0, self.length_index.shape[1] - 1)

    # ---- selection
    @accepts()
    def select(self, start_s: float | None = None, duration_s: float | None = None) -> ClientPool:
        """The pool restricted to ``[start_s, start_s + duration_s)`` (whole 600 s windows; times absolute).

        Examples
        --------

        >>> from workbench.workloads.servegen import load_pool
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

    @accepts(mask_or_index=Opaque("a boolean mask or integer positions (numpy indexing)"))
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

    @accepts(
        min_cv=Real(ge=0.0, optional=True),
        max_cv=Real(ge=0.0, optional=True),
        has_lengths=Bool(optional=True),
        top=Int(ge=1, le=10**9, optional=True),
        client_ids=Items(Int(ge=0), optional=True),
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

        >>> from workbench.workloads.servegen import load_pool
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
    @accepts()
    def aggregate_rate(self) -> pd.Series:
        """Aggregate request rate (req/s) per 600 s window, indexed by window start (s)."""
        return pd.Series(
            self.rate_rps.sum(axis=0), index=pd.Index(self.window_start_s, name="window_start_s"), name="rate_rps"
        )

    @accepts()
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

    @accepts()
    def cv_distribution(self) -> tuple[np.ndarray, np.ndarray]:
        """``(cv, weight)`` over active client-windows, weight = requests in the window (rate-weighted CV)."""
        active = self.family > 0
        return self.cv[active], self.rate_rps[active] * self.window_s

    @accepts(q=AnyOf(Real(ge=0.0, le=1.0), Array(ge=0.0, le=1.0)))
    def weighted_cv_quantiles(self, q: Any = (0.1, 0.25, 0.5, 0.75, 0.9)) -> np.ndarray:
        """Quantiles of the rate-weighted CV distribution of :meth:`cv_distribution`."""
        cv, w = self.cv_distribution()
        return weighted_quantile(cv, w, q)

    @accepts()
    def pooled_pmf(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        """The pool's length distribution of ``field``: every client-window PMF weighted by its requests."""
        one_of("field", field, self.fields)
        w = self._requests_per_length_window()
        keep = w > 0
        return mixture(self.tables[field], self.length_index[keep], w[keep])

    @accepts(q=AnyOf(Real(ge=0.0, le=1.0), Array(ge=0.0, le=1.0)))
    def length_percentiles(self, q: Any = (0.5, 0.9, 0.99)) -> pd.DataFrame:
        """Percentiles of every length field of the pooled (request-weighted) distribution."""
        q = array_1d("q", q, low=0.0, high=1.0, min_size=1)
        rows = {f: weighted_quantile(*self.pooled_pmf(f), q) for f in self.fields}
        return pd.DataFrame(rows, index=pd.Index(q, name="quantile")).T
