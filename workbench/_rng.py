"""Seeds and random streams.

Every stochastic function in the workbench takes ``seed: int | numpy.random.Generator | None`` and turns it into a
Generator with :func:`generator`. Sweeps derive independent per-point streams with :func:`spawn`, which uses
:class:`numpy.random.SeedSequence` so that point *i* of a sweep gets the same stream whatever the sweep's length.
There is no global random state anywhere in the package.
"""

from __future__ import annotations

import numbers

import numpy as np

Seed = int | np.random.Generator | np.random.SeedSequence | None

__all__ = ["Seed", "generator", "spawn"]


def generator(seed: Seed) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``seed``.

    An int or SeedSequence builds a new PCG64 generator (same seed, same stream); a Generator is used as given (its
    state advances); ``None`` draws fresh OS entropy (not reproducible, for exploration only).
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed}")
        return np.random.default_rng(int(seed))
    raise TypeError(f"seed must be an int, a numpy Generator, a SeedSequence or None, got {type(seed).__name__}")


def spawn(seed: Seed, n: int) -> list[np.random.Generator]:
    """Return ``n`` independent generators derived from ``seed`` (deterministic for an int seed)."""
    if isinstance(seed, np.random.Generator):
        return list(seed.spawn(n))
    if isinstance(seed, np.random.SeedSequence):
        seq = seed
    else:
        seq = np.random.SeedSequence(generator_seed(seed))
    return [np.random.default_rng(s) for s in seq.spawn(n)]


def generator_seed(seed: int | None) -> int | None:
    """Validate an int-or-None seed and return it unchanged."""
    if seed is None:
        return None
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        return int(seed)
    raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
