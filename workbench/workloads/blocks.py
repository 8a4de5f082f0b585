"""The block stream every workload generator draws from: one seed, one stream, whatever the chunk size.

A :class:`BlockPlan` defines a workload as a sequence of time blocks (600 s for ServeGen and renewal workloads, the
model's window for BurstGPT-style ones). Block ``k`` is drawn from its own random stream, ``keyed(seed, k)``
(:func:`workbench._rng.keyed`: ``SeedSequence(seed, spawn_key=(k,))``), which depends only on the seed and ``k``.
Generating the blocks one at a time, a few at a time (:func:`iter_chunks`) or all at once (:func:`materialize`)
therefore gives the same requests, and this block stream is *the* stream of a source: ``servegen.compose(...,
seed=7)``, ``burstgpt.generate(..., seed=7)`` and ``workbench workload generate ... --seed 7`` (which streams the
same plan to a file in chunks) give the same requests.

Examples
--------
>>> import pandas as pd
>>> plan = BlockPlan(3, 1.0, 3.0, lambda k, rng: pd.DataFrame({"block": [k], "u": [rng.random()]}), 3.0, "demo")
>>> a = materialize(plan, seed=1)
>>> a.equals(pd.concat(list(iter_chunks(plan, seed=1, chunk_blocks=2)), ignore_index=True))
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import _validate as V
from .._contracts import Opaque, Real, accepts, output
from .._rng import Seed, keyed, root

__all__ = ["BlockPlan", "iter_chunks", "materialize", "n_blocks"]


@output
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


@accepts(block_s=Real(gt=0.0))
def n_blocks(duration_s: float, block_s: float) -> int:
    """The number of ``block_s`` blocks covering ``duration_s`` (at least one; the last one may be partial)."""
    return max(1, math.ceil(duration_s / block_s - 1e-9))


@accepts(progress=Opaque("a function called with the number of blocks done, or None"))
def iter_chunks(plan: BlockPlan, seed: Seed, *, chunk_blocks: int = 1, progress=None) -> Iterator[pd.DataFrame]:
    """Yield the workload ``chunk_blocks`` blocks at a time (the last chunk may be shorter).

    ``seed``: an int (the reproducible case), a SeedSequence, a Generator (its next child sequence roots the
    blocks) or None (fresh entropy, drawn once). ``progress`` is called with each chunk's number of requests (e.g. a
    tqdm bar's ``update``).
    """
    chunk_blocks = V.integer("chunk_blocks", chunk_blocks, minimum=1)
    base = root(seed)
    for first in range(0, plan.n_blocks, chunk_blocks):
        ks = range(first, min(first + chunk_blocks, plan.n_blocks))
        parts = [plan.draw(k, keyed(base, k)) for k in ks]
        chunk = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
        yield chunk
        if progress is not None:
            progress(len(chunk))


@accepts()
def materialize(plan: BlockPlan, seed: Seed) -> pd.DataFrame:
    """The whole workload as one table (the concatenation of every block)."""
    return next(iter_chunks(plan, seed, chunk_blocks=plan.n_blocks))
