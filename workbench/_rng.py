"""Seeds and random streams.

Every stochastic function in the workbench takes ``seed: int | numpy.random.Generator | None`` and turns it into a
Generator with :func:`generator`. Sweeps derive independent per-point streams with :func:`spawn`, which uses
:class:`numpy.random.SeedSequence` so that point *i* of a sweep gets the same stream whatever the sweep's length.
A stream addressed by a name rather than a position comes from :func:`keyed` (the one keyed-seed helper: a sweep
point's stream keyed by its parameters, a generated workload's block *k* keyed by ``k``): the child
``SeedSequence(entropy, spawn_key=(*keys))`` of the seed, the same on every process, platform and Python version
(no ``hash()``, which is salted per process, no ``seed + i`` offsets, whose streams overlap between neighbouring
seeds). There is no global random state anywhere in the package.

Examples
--------
>>> a, b = keyed(7, 3).random(), keyed(7, 3).random()
>>> a == b, a == keyed(7, 4).random(), a == keyed(8, 3).random()
(True, False, False)
>>> keyed(7, "m-large", 3).random() == keyed(7, "m-large", 3).random()
True
"""

from __future__ import annotations

import hashlib
import json
import numbers
from typing import Any

import numpy as np

Seed = int | np.random.Generator | np.random.SeedSequence | None

__all__ = ["Seed", "generator", "spawn", "root", "keyed", "keyed_sequence", "keyed_int", "int31_seed"]


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


def root(seed: Seed) -> np.random.SeedSequence:
    """The :class:`~numpy.random.SeedSequence` a keyed family of streams hangs from.

    An int gives ``SeedSequence(seed)``; a SeedSequence is used as given; a Generator hands out its next child
    sequence (as :func:`spawn` does: deterministic for a seeded Generator, and the next call gets another one);
    ``None`` draws fresh OS entropy once (so the keyed streams of one root stay consistent with each other).
    """
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        seq = seed.bit_generator.seed_seq
        if not isinstance(seq, np.random.SeedSequence):
            raise TypeError("seed: a Generator built without a SeedSequence cannot be keyed; pass an int seed")
        return seq.spawn(1)[0]
    return np.random.SeedSequence(generator_seed(seed))


def _key_words(key: Any) -> tuple[int, ...]:
    """A non-negative int is one spawn-key word; anything else JSON-serializable (a name, a dict of parameters) is
    four 32-bit words of the SHA-256 of its canonical JSON."""
    if isinstance(key, numbers.Integral) and not isinstance(key, bool):
        if key < 0:
            raise ValueError(f"keys must be non-negative integers or JSON-serializable values, got {key}")
        return (int(key),)
    try:
        text = json.dumps(key, sort_keys=True, separators=(",", ":"))
    except TypeError:
        raise TypeError(
            f"keys must be non-negative integers or JSON-serializable values, got {type(key).__name__}"
        ) from None
    words = np.frombuffer(hashlib.sha256(text.encode()).digest()[:16], dtype="<u4")
    return tuple(int(w) for w in words)


def keyed_sequence(seed: Seed, *keys: Any) -> np.random.SeedSequence:
    """The child of ``root(seed)`` addressed by ``keys``: ``SeedSequence(entropy, spawn_key=(*spawn_key, *words))``
    where each int key is one word and any other key four words of its SHA-256 (see :func:`keyed`)."""
    base = root(seed)
    words = tuple(w for k in keys for w in _key_words(k))
    return np.random.SeedSequence(base.entropy, spawn_key=(*base.spawn_key, *words))


def keyed(seed: Seed, *keys: Any) -> np.random.Generator:
    """A generator for the stream of ``seed`` addressed by ``keys`` (ints, names, dicts of parameters).

    The stream depends only on the seed and the keys, not on how many other streams were drawn or in which order,
    and it is the same on every process and platform: ``keyed(7, k)`` is block ``k`` of a generated workload of seed
    7 however the blocks are grouped, ``keyed(seed, params, r)`` a sweep point's replicate ``r``.
    """
    return np.random.default_rng(keyed_sequence(seed, *keys))


def keyed_int(seed: Seed, *keys: Any) -> int:
    """An integer seed (64 bits) for the stream of ``seed`` addressed by ``keys``, for APIs that take an int."""
    return int(keyed_sequence(seed, *keys).generate_state(1, np.uint64)[0])


def int31_seed(seed: int) -> int:
    """A 31-bit int seed, ``seed mod 2**31``, for the APIs that take one (numba's ``np.random.seed`` inside a
    compiled loop, a model function validated to ``[0, 2**31)``): the one fold of a 64-bit point seed
    (:func:`keyed_int`, a sweep point's seed) into that range, so every caller folds the same way.

    >>> int31_seed(7), int31_seed(2**31 + 7), int31_seed(2**64 - 1)
    (7, 7, 2147483647)
    """
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed) % 2**31
