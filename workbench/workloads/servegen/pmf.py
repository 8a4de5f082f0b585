"""Token-length PMFs of ServeGen clients: the safe literal parser and the concatenated :class:`PmfTable`."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..._contracts import Array, Items, Opaque, accepts, output

__all__ = ["parse_pmf_literal", "PmfTable", "mixture"]

_ALLOWED_BYTES = np.zeros(256, dtype=bool)
_ALLOWED_BYTES[np.frombuffer(b"0123456789.eE+-:, \t\r\n", dtype=np.uint8)] = True


@accepts()
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


@output
@dataclass(frozen=True)
class PmfTable:
    """Many PMFs concatenated: PMF ``i`` occupies ``values[offsets[i]:offsets[i+1]]``.

    ``cdf`` is each PMF's own cumulative probability (ending at exactly 1). Sampling is one ``searchsorted`` over the
    key ``i + cdf`` for every request at once (inverse-CDF over concatenated PMFs).
    """

    values: np.ndarray
    cdf: np.ndarray
    offsets: np.ndarray
    _key: np.ndarray = field(init=False, repr=False, compare=False)  # set in __post_init__

    def __post_init__(self) -> None:
        counts = np.diff(self.offsets)
        if (counts <= 0).any():
            raise ValueError("every PMF in a PmfTable needs at least one value")
        key = np.repeat(np.arange(counts.size, dtype=np.float64), counts) + self.cdf
        object.__setattr__(self, "_key", key)

    @classmethod
    @accepts(pmfs=Items(Opaque("a (values, probabilities) pair, checked by the table"), min_size=1))
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

    @accepts()
    def probabilities(self) -> np.ndarray:
        """Per-value probabilities (the differences of ``cdf`` within each PMF)."""
        p = np.diff(self.cdf, prepend=0.0)
        p[self.offsets[:-1]] = self.cdf[self.offsets[:-1]]
        return p

    @accepts()
    def pmf(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """``(values, probabilities)`` of PMF ``i``."""
        a, b = self.offsets[i], self.offsets[i + 1]
        return self.values[a:b], self.probabilities()[a:b]

    @accepts()
    def sample(self, pmf_index: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Inverse-CDF draw: for each request, the value of PMF ``pmf_index`` at uniform quantile ``u`` in [0, 1)."""
        pmf_index = np.asarray(pmf_index, dtype=np.int64)
        pos = np.searchsorted(self._key, pmf_index + np.asarray(u, dtype=np.float64), side="right")
        pos = np.clip(pos, self.offsets[pmf_index], self.offsets[pmf_index + 1] - 1)
        return self.values[pos]

    @accepts()
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
        grid = np.repeat(np.arange(self.n, dtype=np.float64), g) + np.tile(np.arange(g) / g, self.n)
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

    @accepts()
    def means(self) -> np.ndarray:
        """Mean of every PMF."""
        which = np.repeat(np.arange(self.n), np.diff(self.offsets))
        return np.bincount(which, weights=self.values * self.probabilities(), minlength=self.n)

    @accepts()
    def quantiles(self, q: np.ndarray) -> np.ndarray:
        """``(n_pmf, len(q))`` matrix of quantiles (inverse CDF at each level of ``q``)."""
        q = np.asarray(q, dtype=float)
        idx = np.repeat(np.arange(self.n), q.size)
        return self.sample(idx, np.tile(np.minimum(q, 1 - 1e-12), self.n)).reshape(self.n, q.size)

    @accepts(index=Array(integer=True, ge=0))
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


@accepts()
def mixture(table: PmfTable, index: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mixture of PMFs ``index`` of ``table`` with ``weights``: ``(values, probabilities)`` on merged support.

    Examples
    --------
    >>> t = PmfTable.from_pmfs([(np.array([1.0, 2.0]), np.array([0.5, 0.5])),
    ...                         (np.array([2.0, 3.0]), np.array([0.25, 0.75]))])
    >>> v, p = mixture(t, np.array([0, 1]), np.array([1.0, 1.0]))
    >>> v.tolist(), p.round(4).tolist()
    ([1.0, 2.0, 3.0], [0.25, 0.375, 0.375])
    """
    index = np.asarray(index, dtype=np.int64)
    weights = np.asarray(weights, dtype=float)
    counts = np.diff(table.offsets)[index]
    starts = table.offsets[index]
    pos = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(counts.sum())
    probs = table.probabilities()[pos] * np.repeat(weights, counts)
    values, inv = np.unique(table.values[pos], return_inverse=True)
    p = np.bincount(inv, weights=probs, minlength=values.size)
    return values, p / p.sum()
