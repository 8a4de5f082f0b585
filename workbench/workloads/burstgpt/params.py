"""Parameter files of the BurstGPT-style generator: a :class:`~.model.BurstGPTModel` as JSON and back, or the keyword
arguments of :func:`~.model.from_params` written by hand (``workbench workload generate burstgpt --params``, ``--save-params``)."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from ..._contracts import FilePath, accepts
from .model import BurstGPTModel, from_params

__all__ = ["save_params", "load_params"]


@accepts(path=FilePath(kind="any"))
def save_params(model: BurstGPTModel, path, *, overwrite: bool = True) -> Path:
    """Write a model as JSON (per-window arrays as lists), atomically; :func:`load_params` reads it back.
    ``overwrite=False`` refuses an existing file (the CLI's ``--save-params`` without ``--force``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> m = from_params(3600.0, 2.0)
    >>> back = load_params(save_params(m, pathlib.Path(tempfile.mkdtemp()) / "m.json"))
    >>> np.array_equal(back.rate_rps, m.rate_rps), back.zipf_alpha == m.zipf_alpha
    (True, True)
    """
    from ...cache import atomic_path

    if not isinstance(model, BurstGPTModel):
        raise TypeError(f"model must be a BurstGPTModel, got {type(model).__name__}")
    doc = {f.name: getattr(model, f.name) for f in fields(model)}
    doc = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in doc.items()}
    p = Path(path).expanduser()
    with atomic_path(p, overwrite=overwrite) as tmp:
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
    return p


@accepts(path=FilePath())
def load_params(path) -> BurstGPTModel:
    """Read a model from JSON: a file :func:`save_params` wrote (every field), or the keyword arguments of
    :func:`from_params` (``{"duration_s": 3600, "rate_rps": 2.0, "shape": 0.5, ...}``)."""
    p = Path(path).expanduser()
    try:
        doc = json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{p}: expected a JSON object of model parameters")
    names = {f.name for f in fields(BurstGPTModel)}
    try:
        if "duration_s" in doc:
            return from_params(**doc)
        unknown = set(doc) - names
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(sorted(unknown))}")
        values: dict[str, Any] = {k: np.asarray(v, float) if isinstance(v, list) else v for k, v in doc.items()}
        return BurstGPTModel(**values)
    except TypeError as exc:
        raise ValueError(f"{p}: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{p}: {exc}") from None
