"""Waiting at the pipeline's rendezvous: what per-stage variability costs a 1F1B pipeline whose exchanges block.

Megatron-LM's 1F1B schedule (``forward_backward_pipelining_without_interleaving`` in
``megatron/core/pipeline_parallel/schedules.py``) exchanges activations and gradients with both neighbours at every
micro-batch boundary, and each exchange blocks the stage until every transfer in it is done (``_communicate`` in
``p2p_communication.py`` waits on each request). An NCCL send or receive completes only once both peers have reached
it, so a stage that finishes early waits for its neighbour at every step, not only in the pipeline's fill and drain:
with random stage times the iteration is a last-passage time through the schedule's dependency grid, longer on
average than the deterministic schedule with the same mean times.

:func:`rendezvous_wait` measures that extra time by Monte-Carlo: it runs the schedule's program on every stage
(warm-up forwards with ``send_forward``, steady ``forward, send_forward_recv_backward, backward,
send_backward_recv_forward``, cool-down backwards with ``recv_backward`` / ``send_backward``), every call a
rendezvous (a transfer starts when both peers have arrived and takes ``exchange_s``; a call ends when all its
transfers have), with Gaussian per-micro-batch stage times of the given coefficients of variation, and compares the
mean iteration with the deterministic one. The variability it is given in the validation
(:func:`workbench.training.validation.rendezvous_table`) is measured: one layer's kernels vary over repeats by the
coefficient of Vidur's profiles (:func:`workbench.training.kernels.layer_jitter`; a stage's ``L`` layers independently,
so ``cv / sqrt(L)``), an exchange by its NCCL send/recv's (:func:`~workbench.training.kernels.send_recv_jitter`).

Examples
--------
>>> r = rendezvous_wait(np.full(4, 1e-3), np.full(4, 2e-3), 8)  # no variability: exactly the schedule
>>> round(r.base_s * 1e3, 6), r.extra_s
(33.0, 0.0)
>>> r = rendezvous_wait(np.full(4, 1e-3), np.full(4, 2e-3), 8, cv_forward=0.01, cv_backward=0.01, seed=1)
>>> 0.0 < r.extra_s / r.base_s < 0.01
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._contracts import Int, accepts
from .._jit import njit
from .._rng import Seed, generator
from .._validate import in_range, integer, nonnegative

__all__ = ["RendezvousResult", "rendezvous_wait"]

# call sub-operations: send forward to s+1, receive backward from s+1, send backward to s-1, receive forward from s-1
_SF, _RB, _SB, _RF = 0, 1, 2, 3
_FORWARD, _BACKWARD, _CALL = 0, 1, 2


@njit(cache=True)
def _program(p, m):  # pragma: no cover
    """Every stage's 1F1B program: ``kind[s, k]`` (forward, backward, p2p call), ``mb[s, k]`` (micro-batch of a
    compute op) and ``sub[s, k, :]`` (the micro-batch of each of a call's four possible transfers, -1 for none)."""
    cap = 6 * m + 4
    kind = -np.ones((p, cap), np.int64)
    mb = -np.ones((p, cap), np.int64)
    sub = -np.ones((p, cap, 4), np.int64)
    n = np.zeros(p, np.int64)
    for s in range(p):
        k = 0
        first, last = s == 0, s == p - 1
        w = min(p - s - 1, m)
        rest = m - w
        for i in range(w):  # warm-up
            if not first:
                kind[s, k] = _CALL
                sub[s, k, _RF] = i
                k += 1
            kind[s, k], mb[s, k] = _FORWARD, i
            k += 1
            if not last:
                kind[s, k] = _CALL
                sub[s, k, _SF] = i
                k += 1
        if rest > 0 and not first:
            kind[s, k] = _CALL
            sub[s, k, _RF] = w
            k += 1
        for i in range(rest):  # steady state: one forward, one backward
            f = w + i
            kind[s, k], mb[s, k] = _FORWARD, f
            k += 1
            if not last:
                kind[s, k] = _CALL
                sub[s, k, _SF] = f
                sub[s, k, _RB] = i
                k += 1
            kind[s, k], mb[s, k] = _BACKWARD, i
            k += 1
            if not first:
                kind[s, k] = _CALL
                sub[s, k, _SB] = i
                if i < rest - 1:
                    sub[s, k, _RF] = f + 1
                k += 1
        for i in range(w):  # cool-down
            b = rest + i
            if not last:
                kind[s, k] = _CALL
                sub[s, k, _RB] = b
                k += 1
            kind[s, k], mb[s, k] = _BACKWARD, b
            k += 1
            if not first:
                kind[s, k] = _CALL
                sub[s, k, _SB] = b
                k += 1
        n[s] = k
    return kind, mb, sub, n


@njit(cache=True)
def _run(kind, mb, sub, n, tf, tb, x):  # pragma: no cover
    """The iteration's length: every stage runs its program; a call's transfer to or from a neighbour starts when
    both have arrived at their matching calls and lasts ``x[s, j, d]`` (the sender's stage ``s``, micro-batch ``j``,
    direction ``d``: 0 forward, 1 backward); the call ends when its last transfer does. -1 on a deadlock."""
    p = n.size
    m = tf.shape[1]
    pc = np.zeros(p, np.int64)
    t = np.zeros(p)
    arrive = -np.ones((4, p, m))  # when stage s reached the call holding transfer kind q of micro-batch j
    progress = True
    while progress:
        progress = False
        for s in range(p):
            while pc[s] < n[s]:
                k = pc[s]
                if kind[s, k] == _FORWARD:
                    t[s] += tf[s, mb[s, k]]
                elif kind[s, k] == _BACKWARD:
                    t[s] += tb[s, mb[s, k]]
                else:
                    for q in range(4):
                        if sub[s, k, q] >= 0:
                            arrive[q, s, sub[s, k, q]] = t[s]
                    end = t[s]
                    ready = True
                    for q in range(4):
                        j = sub[s, k, q]
                        if j < 0:
                            continue
                        if q == _SF:
                            peer, pq, dur = s + 1, _RF, x[s, j, 0]
                        elif q == _RB:
                            peer, pq, dur = s + 1, _SB, x[s + 1, j, 1]
                        elif q == _SB:
                            peer, pq, dur = s - 1, _RB, x[s, j, 1]
                        else:
                            peer, pq, dur = s - 1, _SF, x[s - 1, j, 0]
                        other = arrive[pq, peer, j]
                        if other < 0.0:
                            ready = False
                            break
                        end = max(end, max(t[s], other) + dur)
                    if not ready:
                        break
                    t[s] = end
                pc[s] += 1
                progress = True
    for s in range(p):
        if pc[s] < n[s]:
            return -1.0
    return t.max()


@accepts(samples=Int(ge=0, le=10**8))  # 0: no variability, nothing sampled
@dataclass(frozen=True)
class RendezvousResult:
    """One pipeline's iteration (seconds) without variability (``base_s``), its Monte-Carlo mean with it
    (``mean_s``), the extra time the blocking rendezvous costs (``extra_s = mean_s - base_s``, not negative: a
    negative estimate is Monte-Carlo noise around zero and is reported as 0) and the standard error of the mean."""

    base_s: float
    mean_s: float
    extra_s: float
    stderr_s: float
    samples: int


@accepts()
def rendezvous_wait(
    forward_s,
    backward_s,
    micro_batches: int,
    exchange_s: float = 0.0,
    cv_forward: float = 0.0,
    cv_backward: float = 0.0,
    cv_exchange: float = 0.0,
    samples: int = 64,
    seed: Seed = 0,
) -> RendezvousResult:
    """Mean iteration of a 1F1B pipeline with blocking exchanges when every stage's micro-batch times vary.

    Parameters
    ----------
    forward_s, backward_s : array of float, one per pipeline stage
        Mean seconds of one micro-batch's forward and backward (recomputation included) on each stage.
    micro_batches : int
        Micro-batches per iteration (``m >= 1``).
    exchange_s : float
        Seconds of one stage-boundary transfer (activation or gradient).
    cv_forward, cv_backward, cv_exchange : float
        Coefficients of variation (standard deviation over mean, in [0, 1]) of one forward, one backward and one
        transfer; each draw is Gaussian, independent, and cut at zero.
    samples : int
        Monte-Carlo iterations (the mean's standard error is returned).
    seed : int or numpy Generator

    Returns
    -------
    RendezvousResult
    """
    tf_mean = np.asarray(forward_s, dtype=float).ravel()
    tb_mean = np.asarray(backward_s, dtype=float).ravel()
    if tf_mean.size == 0 or tf_mean.size != tb_mean.size:
        raise ValueError("forward_s and backward_s must be non-empty arrays of the same length (one per stage)")
    if (tf_mean < 0).any() or (tb_mean < 0).any() or not (np.isfinite(tf_mean).all() and np.isfinite(tb_mean).all()):
        raise ValueError("forward_s and backward_s must be finite and non-negative")
    m = integer("micro_batches", micro_batches, minimum=1)
    x0 = nonnegative("exchange_s", exchange_s)
    cvs = [in_range(name, v, 0.0, 1.0) for name, v in
           (("cv_forward", cv_forward), ("cv_backward", cv_backward), ("cv_exchange", cv_exchange))]  # fmt: skip
    n = integer("samples", samples, minimum=2)
    p = tf_mean.size
    kind, mb, sub, count = _program(p, m)
    tf = np.broadcast_to(tf_mean[:, None], (p, m)).copy()
    tb = np.broadcast_to(tb_mean[:, None], (p, m)).copy()
    x = np.full((p, m, 2), x0)
    base = _run(kind, mb, sub, count, tf, tb, x)
    if base < 0:  # pragma: no cover - the program is deadlock-free by construction
        raise RuntimeError("the 1F1B program deadlocked")
    if not any(cvs):
        return RendezvousResult(base, base, 0.0, 0.0, 0)
    rng = generator(seed)
    out = np.empty(n)
    for i in range(n):
        f = np.maximum(tf * (1.0 + cvs[0] * rng.standard_normal((p, m))), 0.0)
        b = np.maximum(tb * (1.0 + cvs[1] * rng.standard_normal((p, m))), 0.0)
        xs = np.maximum(x * (1.0 + cvs[2] * rng.standard_normal((p, m, 2))), 0.0)
        out[i] = _run(kind, mb, sub, count, f, b, xs)
    mean = float(out.mean())
    return RendezvousResult(base, mean, max(0.0, mean - base), float(out.std(ddof=1) / np.sqrt(n)), n)
