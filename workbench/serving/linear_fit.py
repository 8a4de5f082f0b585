"""The linear cost model of :mod:`workbench.serving.linear` derived from the roofline: :func:`fit_linear`, a
least-squares fit of :class:`~workbench.serving.roofline.Deployment`'s iteration time over a grid of iterations, so
results in the old units stay reproducible."""

from __future__ import annotations

import numpy as np

from .._contracts import accepts
from .._validate import integer
from .linear import ServerConfig
from .roofline import Deployment

__all__ = ["fit_linear"]


@accepts()
def fit_linear(deployment: Deployment, *, max_batch: int = 256, max_prefill_tokens: int = 8192) -> ServerConfig:
    """The :class:`ServerConfig` (linear cost model) closest to ``deployment``'s roofline, by least squares.

    The grid spans prefill-only iterations (0 to ``max_prefill_tokens`` prompt tokens of 512-token prompts) and decode
    iterations (1 to ``max_batch`` requests, contexts up to the KV capacity); the fit's KV budget is the deployment's
    KV capacity.

    Examples
    --------
    >>> cfg = fit_linear(Deployment("Llama-2-13B", "A100-80GB"))
    >>> cfg.kv_budget_tokens > 10_000, cfg.decode_seq_s > 0
    (True, True)
    """
    max_batch = integer("max_batch", max_batch, minimum=1)
    max_prefill_tokens = integer("max_prefill_tokens", max_prefill_tokens, minimum=1)
    cap = deployment.kv_capacity_tokens
    rows, y = [], []
    for p in np.linspace(0, max_prefill_tokens, 9):  # a small grid (~200 points)
        for b in np.unique(np.linspace(0, max_batch, 9).astype(int)):
            for frac in (0.1, 0.5, 0.9):
                if p == 0 and b == 0:
                    continue
                kv = frac * cap if b else 0.0
                pairs = p / 512 * 512 * 513 / 2
                rows.append([1.0, p, b, kv])
                y.append(deployment.iteration_s(p, pairs, b, kv, sampled=b + p / 512))
    coef, *_ = np.linalg.lstsq(np.array(rows), np.array(y), rcond=None)
    coef = np.maximum(coef, [1e-6, 0.0, 0.0, 0.0])
    return ServerConfig(
        base_s=float(coef[0]),
        prefill_token_s=float(coef[1]),
        decode_seq_s=float(coef[2]),
        kv_token_s=float(coef[3]),
        kv_budget_tokens=cap,
        max_batch=max_batch,
        max_prefill_tokens=max_prefill_tokens,
    )
