"""Argument validation shared by every public function.

Each checker names the parameter, shows the offending value and states what is allowed, so that an error message
tells the user what to fix. They return the validated (and, where useful, converted) value so call sites stay short::

    rate_rps = positive("rate_rps", rate_rps)
    n = integer("n", n, minimum=1)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "finite",
    "positive",
    "nonnegative",
    "in_range",
    "integer",
    "one_of",
    "array_1d",
    "probability",
]


def _show(value: Any) -> str:
    """``value`` for an error message, at most 60 characters. An array or a table of more than a few values is named
    by its shape, not printed: a message is built on every refusal, including the ones a union of specs tries and
    drops (an array offered to "a real number or an array"), and printing a large array costs more than the call."""
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and math.prod(shape) > 6:
        return f"<{type(value).__name__} of shape {shape}>"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {_show(value)}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, got NaN")
    return value


def finite(name: str, value: Any) -> float:
    """Return ``value`` as a float after checking it is a finite real number."""
    value = _real(name, value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def positive(name: str, value: Any, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float after checking ``0 < value`` (``< inf`` unless ``allow_inf``)."""
    value = _real(name, value)
    if not value > 0 or (math.isinf(value) and not allow_inf):
        allowed = "0 < value <= inf" if allow_inf else "0 < value < inf"
        raise ValueError(f"{name} must satisfy {allowed}, got {value}")
    return value


def nonnegative(name: str, value: Any) -> float:
    """Return ``value`` as a float after checking ``0 <= value < inf``."""
    value = _real(name, value)
    if not (0 <= value < math.inf):
        raise ValueError(f"{name} must satisfy 0 <= value < inf, got {value}")
    return value


def in_range(
    name: str,
    value: Any,
    low: float,
    high: float,
    *,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """Return ``value`` as a float after checking it lies in the interval from ``low`` to ``high``."""
    value = _real(name, value)
    ok_low = value >= low if low_inclusive else value > low
    ok_high = value <= high if high_inclusive else value < high
    if not (ok_low and ok_high):
        lb = "[" if low_inclusive else "("
        hb = "]" if high_inclusive else ")"
        raise ValueError(f"{name} must be in {lb}{low}, {high}{hb}, got {value}")
    return value


def probability(name: str, value: Any) -> float:
    """Return ``value`` as a float after checking ``0 <= value <= 1``."""
    return in_range(name, value, 0.0, 1.0)


def integer(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int after checking it is integral (``3.0`` is accepted, ``3.5`` is not) and in range."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got bool {value}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        out = int(math.floor(value))  # exact for an integral-valued Real (Decimal, Fraction, float)
    else:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {_show(value)}")
    if minimum is not None and out < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {out}")
    if maximum is not None and out > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {out}")
    return out


def one_of(name: str, value: Any, options: Iterable[Any]) -> Any:
    """Return ``value`` after checking it is one of ``options``."""
    options = list(options)
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}; got {_show(value)}")
    return value


def array_1d(
    name: str,
    values: Any,
    *,
    dtype: Any = float,
    min_size: int = 0,
    finite_only: bool = True,
    low: float | None = None,
    low_inclusive: bool = True,
    high: float | None = None,
) -> np.ndarray:
    """Return ``values`` as a 1-D numpy array, checking size, NaN/inf and bounds, naming the first offender."""
    try:
        arr = np.asarray(values, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 1-D array of numbers: {exc}") from None
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} element(s), got {arr.size}")
    if arr.size == 0 or not np.issubdtype(arr.dtype, np.number):
        return arr
    if finite_only:
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{name} must be finite; element {i} is {arr[i]}")
    elif np.isnan(arr).any():
        i = int(np.argmax(np.isnan(arr)))
        raise ValueError(f"{name} must not contain NaN; element {i} is NaN")
    if low is not None:
        bad = arr < low if low_inclusive else arr <= low
        if bad.any():
            i = int(np.argmax(bad))
            op = ">=" if low_inclusive else ">"
            raise ValueError(f"{name} must be {op} {low}; element {i} is {arr[i]}")
    if high is not None:
        bad = arr > high
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{name} must be <= {high}; element {i} is {arr[i]}")
    return arr
