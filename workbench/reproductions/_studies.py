"""Studies several papers share, computed once per source tree: a ``functools.cache`` shares a study between the
claims and figures of one paper (one process), and :func:`shared_study` between papers, which run in separate
processes (:func:`~workbench.reproductions.run_papers`). The result is stored as parquet next to the papers' results,
keyed like them by :func:`~workbench.reproductions.source_fingerprint` (any edit to the code or the data is a new
key), under a lock so that papers running at the same time compute it once: the second waits and reads it."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ._runner import _locked, source_fingerprint

__all__ = ["shared_study"]


def shared_study(name: str, scale: str, build: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """``build()`` (a DataFrame), computed once per study ``name``, ``scale`` and source tree across processes.

    A damaged or unreadable entry is recomputed; an unwritable cache only loses the sharing.
    """
    from ..cache import atomic_path
    from ..data import cache_dir

    entry = cache_dir() / "reproductions" / scale / f"study-{name}-{source_fingerprint()}.parquet"
    with _locked(entry):
        try:
            return pd.read_parquet(entry)
        except (OSError, ValueError):  # absent, or damaged (pyarrow raises ArrowInvalid, a ValueError)
            pass
        df = build()
        try:
            with atomic_path(entry) as tmp:
                df.to_parquet(tmp, index=False)
        except OSError:
            pass
        return df
