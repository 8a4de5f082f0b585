"""The one evaluation of a :class:`~workbench.serving.cost.CostTable`: compiled, shared by the engine's event loop
(:mod:`workbench.serving._engine_kernel`) and every Python caller (:meth:`CostTable.iteration_s`,
:meth:`CostTable.decode_line`), so the engine and, say, a validation replay compute an iteration the same way."""

from __future__ import annotations

import math

import numpy as np

from .._jit import njit


@njit(cache=True, inline="always")
def tok_at(tok, lane, t):
    """``tok[lane]`` at ``t`` tokens (beyond the table: its last 64 tokens' slope)."""
    n = tok.shape[1]
    if t <= n - 1:
        return tok[lane, int(t)]
    back = min(64, n - 1)
    return tok[lane, n - 1] + (tok[lane, n - 1] - tok[lane, n - 1 - back]) / back * (t - n + 1)


@njit(cache=True, inline="always")
def pf_rate_at(pf_logc, pf_pre, pf_rate, lane, c, p):
    """Prefill attention seconds per causal pair of a sequence of ``c`` query tokens after a prefix of ``p``: the
    rate interpolated in (log chunk, prefix), held at the grid's edges."""
    if c <= 0 or pf_rate.shape[1] == 0:
        return 0.0
    lc = math.log(c)
    nc, npp = pf_logc.size, pf_pre.size
    if lc <= pf_logc[0]:
        a, fa = 0, 0.0
    elif lc >= pf_logc[nc - 1]:
        a, fa = nc - 2, 1.0
    else:
        a = 0
        while pf_logc[a + 1] < lc:
            a += 1
        fa = (lc - pf_logc[a]) / (pf_logc[a + 1] - pf_logc[a])
    if npp == 1:
        return pf_rate[lane, a, 0] * (1 - fa) + pf_rate[lane, a + 1, 0] * fa
    if p <= pf_pre[0]:
        b, fb = 0, 0.0
    elif p >= pf_pre[npp - 1]:
        b, fb = npp - 2, 1.0
    else:
        b = 0
        while pf_pre[b + 1] < p:
            b += 1
        fb = (p - pf_pre[b]) / (pf_pre[b + 1] - pf_pre[b])
    r0 = pf_rate[lane, a, b] * (1 - fb) + pf_rate[lane, a, b + 1] * fb
    r1 = pf_rate[lane, a + 1, b] * (1 - fb) + pf_rate[lane, a + 1, b + 1] * fb
    return r0 * (1 - fa) + r1 * fa


@njit(cache=True, inline="always")
def pf_cost(pf_logc, pf_pre, pf_rate, pf_floor, pf_tile, lane, P, pairs, tiles):
    """The prefill attention of an iteration: ``P`` prompt tokens holding ``pairs`` causal pairs in sequences of
    ``tiles`` 128-token query tiles in all. One kernel launch (``pf_floor``) and the pairs at the rate of the
    reference shape with as many thread blocks (``pf_tile x tiles`` tokens of chunk) and as many keys per query
    (``pairs / P``: the chunk's own half plus its prefix)."""
    if P <= 0:
        return 0.0
    c = pf_tile * tiles
    p = pairs / P - (c + 1) / 2.0
    if p < 0:
        p = 0.0
    return pf_floor + pairs * pf_rate_at(pf_logc, pf_pre, pf_rate, lane, c, p)


@njit(cache=True, inline="always")
def segment(da_len, L):
    """The segment of the context grid holding ``L`` (the last one extrapolates)."""
    j = 0
    n = da_len.size
    while j < n - 2 and da_len[j + 1] <= L:
        j += 1
    return j


@njit(cache=True, inline="always")
def da_at(da_len, da, lane, d, k):
    """Decode attention of ``d`` requests holding ``k`` KV tokens in all."""
    if d <= 0:
        return 0.0
    bmax = da.shape[1] - 1
    L = k / d
    j = segment(da_len, L)
    b = int(d) if d <= bmax else bmax
    y = da[lane, b, j] + (da[lane, b, j + 1] - da[lane, b, j]) * (L - da_len[j]) / (da_len[j + 1] - da_len[j])
    return y if d <= bmax else y * d / bmax


@njit(cache=True, inline="always")
def combine(tok, head, da_len, da, c_pre, c_dec, cpu0, per_seq, ovc, P, pf0, pf1, pf2, D, K, s):
    """One iteration's seconds: ``P`` prompt tokens whose attention costs ``pf0..2`` per lane, ``D`` decodes holding
    ``K`` KV tokens, ``s`` tokens sampled."""
    g = 0.0
    for lane in range(tok.shape[0]):
        pfl = pf0 if lane == 0 else (pf1 if lane == 1 else pf2)
        x = tok_at(tok, lane, P + D) + tok_at(head, lane, s) + pfl + da_at(da_len, da, lane, D, K)
        if x > g:
            g = x
    g += c_pre * P + c_dec * D
    c = cpu0 + per_seq * (D if s < D else s)
    if ovc:
        return g if g > c else c
    return g + c


@njit(cache=True, inline="always")
def line(tok, head, pf_logc, pf_pre, pf_rate, pf_floor, pf_tile, da_len, da, c_pre, c_dec, cpu0, per_seq, ovc, D,
         K0):  # fmt: skip
    """A run of decode iterations of ``D`` requests as ``a + s K``, valid for KV totals ``K`` below the returned
    limit (the end of the context segment, where another lane overtakes, or where the host step stops binding)."""
    nl = da_len.size
    bmax = da.shape[1] - 1
    L = K0 / D
    j = segment(da_len, L)
    lim = D * da_len[j + 1] if j < nl - 2 else np.inf
    b = int(D) if bmax >= D else bmax
    scale = 1.0 if bmax >= D else D / bmax
    ba, bs, best = 0.0, 0.0, -1.0
    for lane in range(tok.shape[0]):  # the lane binding at K0
        sl = (da[lane, b, j + 1] - da[lane, b, j]) / (da_len[j + 1] - da_len[j]) * scale / D
        a = tok_at(tok, lane, D) + tok_at(head, lane, D) + da[lane, b, j] * scale - sl * D * da_len[j]
        if a + sl * K0 > best:
            best, ba, bs = a + sl * K0, a, sl
    for lane in range(tok.shape[0]):  # where a steeper lane overtakes it
        sl = (da[lane, b, j + 1] - da[lane, b, j]) / (da_len[j + 1] - da_len[j]) * scale / D
        a = tok_at(tok, lane, D) + tok_at(head, lane, D) + da[lane, b, j] * scale - sl * D * da_len[j]
        if sl > bs:
            x = (ba - a) / (sl - bs)
            if K0 < x < lim:
                lim = x
    ba += c_dec * D
    c = cpu0 + per_seq * D
    if ovc:
        if c > ba + bs * K0:
            if bs > 0:
                x = (c - ba) / bs
                if x < lim:
                    lim = x
            return c, 0.0, lim
        return ba, bs, lim
    return ba + c, bs, lim


@njit(cache=True)
def iteration(tok, head, pf_logc, pf_pre, pf_rate, pf_floor, pf_tile, da_len, da, c_pre, c_dec, cpu0, per_seq, ovc, P,
              pairs, tiles, D, K, s):  # fmt: skip
    """One iteration prefilling ``P`` tokens (``pairs`` causal pairs, ``tiles`` query tiles), as :func:`combine`."""
    pf = np.zeros(3)
    for lane in range(tok.shape[0]):
        pf[lane] = pf_cost(pf_logc, pf_pre, pf_rate, pf_floor, pf_tile, lane, P, pairs, tiles)
    return combine(tok, head, da_len, da, c_pre, c_dec, cpu0, per_seq, ovc, P, pf[0], pf[1], pf[2], D, K, s)


@njit(cache=True)
def iterations(tok, head, pf_logc, pf_pre, pf_rate, pf_floor, pf_tile, da_len, da, c_pre, c_dec, cpu0, per_seq, ovc,
               D, K):  # fmt: skip
    """Pure-decode iterations of ``D[i]`` requests holding ``K[i]`` tokens (arrays), as :func:`combine`."""
    out = np.empty(D.size)
    for i in range(D.size):
        out[i] = combine(tok, head, da_len, da, c_pre, c_dec, cpu0, per_seq, ovc, 0.0, 0.0, 0.0, 0.0, D[i], K[i],
                         D[i]) if D[i] > 0 else 0.0  # fmt: skip
    return out
