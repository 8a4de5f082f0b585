"""What a value may be: the kinds of value a declared input contract is made of (:mod:`workbench._contracts`).

Each kind (:class:`Real`, :class:`Int`, :class:`Array`, :class:`Choice`, a :class:`FilePath`, ...) checks a value,
naming the parameter and what is allowed, converts it (``3.0`` for an ``Int`` becomes ``3``), and lists the values it
refuses (:meth:`Spec.hostile`) and the valid extremes (:meth:`Spec.edges`) that the hostile-input suite generates its
cases from. They are combined with :class:`AnyOf`, :class:`Items` and :class:`MappingOf`.

The module is longer than ~500 lines because each of its kinds is a short class holding its check, its message, its
hostile values and its extremes: one reads them together.

Examples
--------
>>> Real(gt=0.0).check("rate_rps", 2)
2.0
>>> Int(ge=1).check("n", 0)
Traceback (most recent call last):
...
ValueError: n must be >= 1, got 0 (allowed: integer >= 1)
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._validate import _show

__all__ = [
    "Spec",
    "Real",
    "Int",
    "Bool",
    "Choice",
    "Text",
    "Array",
    "Frame",
    "Instance",
    "Seed",
    "FilePath",
    "Opaque",
    "AnyOf",
    "Items",
    "MappingOf",
    "HUGE",
    "WRONG",
]

#: The value every hostile suite tries as "huge" for a number (beyond any declared upper bound).
HUGE = 1e300


class _Wrong:
    """A value of no type any contract accepts (the suite's "wrong type")."""

    def __repr__(self) -> str:
        return "<object>"


WRONG = _Wrong()


@dataclass(frozen=True)
class Spec:
    """What one parameter accepts. Subclasses implement :meth:`_check`; ``optional`` also accepts ``None``."""

    optional: bool = field(default=False, kw_only=True)

    def check(self, name: str, value: Any) -> Any:
        """The value, validated and converted; ``TypeError``/``ValueError`` naming ``name`` and what is allowed."""
        if value is None and self.optional:
            return None
        try:
            return self._check(name, value)
        except (TypeError, ValueError) as exc:
            message = str(exc)
            if "(allowed:" not in message:
                message = f"{message} (allowed: {self.describe()})"
            raise type(exc)(message) from None

    def _check(self, name: str, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:
        """What is allowed, in words."""
        return "any value"

    def hostile(self) -> list[tuple[str, Any]]:
        """Values this spec refuses, labelled: the hostile-input suite expects a named error for each."""
        return [] if self.optional else [("none", None)]

    def edges(self) -> list[tuple[str, Any]]:
        """Valid extreme values: the suite expects a result or a named error, never a hang or a raw error."""
        return []


def _scalar(value: Any) -> Any:
    """A 0-d numpy array as its scalar (``np.asarray(3.0)``, what a reduction over an array gives); else as is."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf":
        return value.item()
    return value


def _real(name: str, value: Any) -> float:
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {_show(value)}")
    out = float(value)
    if math.isnan(out):
        raise ValueError(f"{name} must be a number, got NaN")
    return out


def _bounds(ge, gt, le, lt) -> str:
    parts = []
    if ge is not None:
        parts.append(f">= {ge:g}")
    if gt is not None:
        parts.append(f"> {gt:g}")
    if le is not None:
        parts.append(f"<= {le:g}")
    if lt is not None:
        parts.append(f"< {lt:g}")
    if len(parts) == 2 and (ge is not None or gt is not None) and (le is not None or lt is not None):
        lo = f"[{ge:g}" if ge is not None else f"({gt:g}"
        hi = f"{le:g}]" if le is not None else f"{lt:g})"
        return f"in {lo}, {hi}"
    return " and ".join(parts)


def _in_bounds(name: str, value: float, ge, gt, le, lt) -> None:
    if ge is not None and not value >= ge:
        raise ValueError(f"{name} must be >= {ge:g}, got {_show(value)}")
    if gt is not None and not value > gt:
        raise ValueError(f"{name} must be > {gt:g}, got {_show(value)}")
    if le is not None and not value <= le:
        raise ValueError(f"{name} must be <= {le:g}, got {_show(value)}")
    if lt is not None and not value < lt:
        raise ValueError(f"{name} must be < {lt:g}, got {_show(value)}")


def _bad_numbers(ge, gt, le, lt, finite: bool) -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = [("nan", math.nan)]
    if finite or (le is not None or lt is not None):
        out.append(("inf", math.inf))
    if finite or (ge is not None or gt is not None):
        out.append(("-inf", -math.inf))
    low = ge if ge is not None else gt
    if low is not None:
        out.append(("below", low - max(1.0, abs(low))))
        if gt is not None:
            out.append(("at-open-low", gt))
    high = le if le is not None else lt
    if high is not None:
        out.append(("huge", HUGE if high < HUGE else -HUGE))
        if lt is not None:
            out.append(("at-open-high", lt))
    return out


@dataclass(frozen=True)
class Real(Spec):
    """A real number (an ``int`` is accepted and converted to ``float``) in an interval; finite unless
    ``finite=False`` (NaN is always refused)."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    finite: bool = True
    allow_nan: bool = False

    def _check(self, name: str, value: Any) -> float:
        value = _scalar(value)
        if self.allow_nan and isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isnan(value):
            return float(value)  # "not stated" (a GPU without FP8)
        out = _real(name, value)
        if self.finite and not math.isfinite(out):
            raise ValueError(f"{name} must be finite, got {out}")
        _in_bounds(name, out, self.ge, self.gt, self.le, self.lt)
        return out

    def describe(self) -> str:
        b = _bounds(self.ge, self.gt, self.le, self.lt)
        return ("finite real number" if self.finite else "real number") + (f" {b}" if b else "")

    def hostile(self) -> list[tuple[str, Any]]:
        return [*super().hostile(), ("text", "1"), ("bool", True), ("object", WRONG)] + [
            (label, v)
            for label, v in _bad_numbers(self.ge, self.gt, self.le, self.lt, self.finite)
            if not (self.allow_nan and label == "nan")
        ]

    def edges(self) -> list[tuple[str, Any]]:
        out = []
        if self.ge is not None:
            out.append(("min", float(self.ge)))
        if self.gt is not None:
            out.append(("just-above-min", float(self.gt) + max(1e-9, abs(self.gt) * 1e-9)))
        if self.ge is None and self.gt is None and self.le is None and self.lt is None:
            out.append(("zero", 0.0))
        return out


@dataclass(frozen=True)
class Int(Spec):
    """An integer (an integral float such as ``3.0`` is accepted and converted; ``bool`` is not) in a range."""

    ge: int | None = None
    le: int | None = None

    def _check(self, name: str, value: Any) -> int:
        value = _scalar(value)
        if isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be an integer, got bool {value}")
        if isinstance(value, numbers.Integral):
            out = int(value)
        elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
            out = int(float(value))
        else:
            raise TypeError(f"{name} must be an integer, got {type(value).__name__} {_show(value)}")
        if self.ge is not None and out < self.ge:
            raise ValueError(f"{name} must be >= {self.ge}, got {out}")
        if self.le is not None and out > self.le:
            raise ValueError(f"{name} must be <= {self.le}, got {out}")
        return out

    def describe(self) -> str:
        if self.ge is not None and self.le is not None:
            return f"integer in [{self.ge}, {self.le}]"
        if self.ge is not None:
            return f"integer >= {self.ge}"
        if self.le is not None:
            return f"integer <= {self.le}"
        return "integer"

    def hostile(self) -> list[tuple[str, Any]]:
        out = [*super().hostile(), ("fraction", 2.5), ("nan", math.nan), ("inf", math.inf), ("text", "3")]
        out += [("bool", True), ("object", WRONG)]
        if self.ge is not None:
            out.append(("below", self.ge - 1))
        if self.le is not None:
            out.append(("huge", 10**18 if self.le < 10**18 else -(10**18)))
        return out

    def edges(self) -> list[tuple[str, Any]]:
        return [("min", self.ge)] if self.ge is not None else [("zero", 0)]


@dataclass(frozen=True)
class Bool(Spec):
    """``True`` or ``False`` (numpy's booleans too; not ``0``/``1``, not strings)."""

    def _check(self, name: str, value: Any) -> bool:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {type(value).__name__} {_show(value)}")
        return bool(value)

    def describe(self) -> str:
        return "True or False"

    def hostile(self) -> list[tuple[str, Any]]:
        return [*super().hostile(), ("text", "yes"), ("number", 2), ("object", WRONG)]


@dataclass(frozen=True)
class Choice(Spec):
    """One of a fixed set of values."""

    options: tuple = ()

    def __init__(self, *options: Any, optional: bool = False) -> None:
        object.__setattr__(self, "optional", optional)
        object.__setattr__(self, "options", tuple(options))

    def _check(self, name: str, value: Any) -> Any:
        try:
            ok = bool(value in self.options)
        except (TypeError, ValueError):  # an unhashable or uncomparable value (an array)
            ok = False
        if not ok or (isinstance(value, float) and math.isnan(value)):
            raise ValueError(f"{name} must be one of {', '.join(map(repr, self.options))}; got {_show(value)}")
        return value

    def describe(self) -> str:
        return "one of " + ", ".join(map(repr, self.options))

    def hostile(self) -> list[tuple[str, Any]]:
        return [*super().hostile(), ("unknown", "no-such-choice"), ("number", -1), ("object", WRONG)]


@dataclass(frozen=True)
class Text(Spec):
    """A string (non-empty unless ``empty=True``)."""

    empty: bool = False

    def _check(self, name: str, value: Any) -> str:
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string, got {type(value).__name__} {_show(value)}")
        if not value and not self.empty:
            raise ValueError(f"{name} must not be empty")
        return value

    def describe(self) -> str:
        return "string" if self.empty else "non-empty string"

    def hostile(self) -> list[tuple[str, Any]]:
        return [*super().hostile(), ("number", 3), ("object", WRONG)] + ([] if self.empty else [("empty", "")])


@dataclass(frozen=True)
class Array(Spec):
    """An array of numbers (a list, tuple or array), ``ndim`` dimensions, at least ``min_size`` elements, finite
    unless ``finite=False``, every element within the bounds; returned as a float (or ``dtype``) numpy array."""

    ndim: int | None = 1
    min_size: int = 0
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    finite: bool = True
    dtype: Any = None
    integer: bool = False
    allow_nan: bool = False
    any_kind: bool = False

    def _check(self, name: str, value: Any) -> np.ndarray:
        if isinstance(value, (str, bytes, Mapping)) or value is None or hasattr(value, "columns"):
            raise TypeError(f"{name} must be an array of numbers, got {type(value).__name__} {_show(value)}")
        try:
            arr = np.asarray(value, dtype=float if self.integer else self.dtype)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be an array of numbers ({exc})") from None
        if self.any_kind and arr.dtype.kind != "O":  # an array of what the function documents (numbers, times, labels)
            return arr
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be an array of numbers, got an array of {arr.dtype}")
        if self.integer:
            bad = ~(np.isfinite(arr) & (arr == np.round(arr)))
            if bad.any():
                i = int(np.argmax(bad.ravel()))
                raise ValueError(f"{name} must hold integers; element {i} is {arr.ravel()[i]}")
        if arr.ndim == 0 and self.ndim != 0:
            raise TypeError(f"{name} must be an array of numbers, got the scalar {_show(value)}")
        if self.ndim is not None and arr.ndim != self.ndim:
            raise ValueError(f"{name} must have {self.ndim} dimension(s), got shape {arr.shape}")
        if arr.size < self.min_size:
            raise ValueError(f"{name} must have at least {self.min_size} element(s), got {arr.size}")
        if arr.size and np.issubdtype(arr.dtype, np.number) and arr.dtype.kind != "b":
            nan = np.isnan(arr) if np.issubdtype(arr.dtype, np.floating) else np.zeros(arr.shape, bool)
            if nan.any() and not self.allow_nan:
                raise ValueError(f"{name} must not contain NaN; element {int(np.argmax(nan.ravel()))} is NaN")
            if self.finite and np.issubdtype(arr.dtype, np.floating):
                bad = ~np.isfinite(arr) & ~nan
                if bad.any():
                    i = int(np.argmax(bad.ravel()))
                    raise ValueError(f"{name} must be finite; element {i} is {arr.ravel()[i]}")
            for op, bound, ok in (
                (">=", self.ge, lambda a, b: a >= b),
                (">", self.gt, lambda a, b: a > b),
                ("<=", self.le, lambda a, b: a <= b),
                ("<", self.lt, lambda a, b: a < b),
            ):
                if bound is not None:
                    bad = ~ok(arr, bound) & ~nan
                    if bad.any():
                        i = int(np.argmax(bad.ravel()))
                        raise ValueError(f"{name} must be {op} {bound:g}; element {i} is {arr.ravel()[i]}")
        return arr.astype(np.int64) if self.integer else arr

    def describe(self) -> str:
        b = _bounds(self.ge, self.gt, self.le, self.lt)
        size = f", at least {self.min_size} element(s)" if self.min_size else ""
        kind = "integers" if self.integer else f"{'finite ' if self.finite else ''}numbers"
        dims = "array" if self.ndim is None else f"{self.ndim}-D array"
        return f"{dims} of {kind}{' ' + b if b else ''}{size}"

    def hostile(self) -> list[tuple[str, Any]]:
        out = [*super().hostile(), ("text", "1,2"), ("object", WRONG)]
        if not self.allow_nan:
            out.append(("nan-element", [1.0, math.nan]))
        if self.finite:
            out.append(("inf-element", [1.0, math.inf]))
        if self.min_size:
            out.append(("empty", []))
        if self.ndim == 1:
            out.append(("2-d", [[1.0, 2.0], [3.0, 4.0]]))
        if self.any_kind:
            out = [(label, v) for label, v in out if label in ("none", "text", "object")]
        if self.integer:
            out.append(("fraction-element", [1.0, 2.5]))
        low = self.ge if self.ge is not None else self.gt
        if low is not None:
            out.append(("below-element", [low + 1.0, low - 1.0]))
        return out

    def edges(self) -> list[tuple[str, Any]]:
        if self.min_size:
            return []
        return [("empty", [] if self.ndim in (1, None) else np.zeros((0,) * self.ndim))]


@dataclass(frozen=True)
class Frame(Spec):
    """A pandas DataFrame holding at least ``columns``."""

    columns: tuple[str, ...] = ()

    def _check(self, name: str, value: Any) -> Any:
        import pandas as pd

        if not isinstance(value, pd.DataFrame):
            raise TypeError(f"{name} must be a pandas DataFrame, got {type(value).__name__} {_show(value)}")
        missing = [c for c in self.columns if c not in value.columns]
        if missing:
            raise ValueError(f"{name} is missing the column(s) {missing}; it has {list(value.columns)}")
        if value.columns.duplicated().any():
            dup = sorted(set(value.columns[value.columns.duplicated()].map(str)))
            raise ValueError(f"{name} has duplicated column(s) {dup}")
        return value

    def describe(self) -> str:
        return "DataFrame" + (f" with columns {list(self.columns)}" if self.columns else "")

    def hostile(self) -> list[tuple[str, Any]]:
        import pandas as pd

        out = [*super().hostile(), ("list", [1, 2]), ("object", WRONG)]
        if self.columns:
            out.append(("no-columns", pd.DataFrame({"unrelated": [1.0]})))
        return out


@dataclass(frozen=True)
class Instance(Spec):
    """An instance of one of ``types`` (a record of another package: a ``Deployment``, a ``Plan``, a topology)."""

    types: tuple[type, ...] = ()

    def __init__(self, *types: type, optional: bool = False) -> None:
        object.__setattr__(self, "optional", optional)
        object.__setattr__(self, "types", tuple(types))

    def _check(self, name: str, value: Any) -> Any:
        if not any(_is_instance(value, t) for t in self.types):
            raise TypeError(f"{name} must be {self.describe()}, got {type(value).__name__} {_show(value)}")
        return value

    def describe(self) -> str:
        def one(t: type) -> str:
            if not getattr(t, "_is_protocol", False):
                return f"a {t.__name__}"
            members = sorted(getattr(t, "_required", None) or _protocol_members(t))
            return f"a {t.__name__} (an object with {', '.join(members)})"

        return " or ".join(map(one, self.types))

    def hostile(self) -> list[tuple[str, Any]]:
        return [*super().hostile(), ("number", 1.0), ("text", "x"), ("object", WRONG)]


def _protocol_members(proto: type) -> set[str]:
    names: set[str] = set()
    for base in proto.__mro__:
        if base.__name__ in ("Protocol", "Generic", "object"):
            continue
        names |= {n for n in (*vars(base), *getattr(base, "__annotations__", {})) if not n.startswith("_")}
    return names


def _is_instance(value: Any, cls: type) -> bool:
    """``isinstance``, or for a ``typing.Protocol`` (which ``isinstance`` refuses unless runtime-checkable) whether
    ``value`` has every member the protocol lists."""
    if getattr(cls, "_is_protocol", False):  # looked up statically first: a property is not evaluated
        held = set(getattr(value, "__dict__", {})) | {n for k in type(value).__mro__ for n in vars(k)}
        missing = set(getattr(cls, "_required", None) or _protocol_members(cls)) - held
        # a wrapper that delegates by __getattr__ (a recording or caching proxy) holds them dynamically
        return not missing or (hasattr(type(value), "__getattr__") and all(hasattr(value, n) for n in missing))
    return isinstance(value, cls)


@dataclass(frozen=True)
class _Seed(Spec):
    """A seed: a non-negative integer, a numpy ``Generator`` or ``SeedSequence``, or ``None`` (fresh entropy)."""

    def _check(self, name: str, value: Any) -> Any:
        if value is None or isinstance(value, (np.random.Generator, np.random.SeedSequence)):
            return value
        if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
            if value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value}")
            return int(value)
        raise TypeError(
            f"{name} must be an int, a numpy Generator, a SeedSequence or None, got {type(value).__name__} "
            f"{_show(value)}"
        )

    def describe(self) -> str:
        return "a non-negative int, a numpy Generator or SeedSequence, or None"

    def hostile(self) -> list[tuple[str, Any]]:
        return [("negative", -1), ("fraction", 1.5), ("text", "7"), ("bool", True), ("object", WRONG)]


#: The seed of every stochastic function.
Seed = _Seed(optional=True)


@dataclass(frozen=True)
class FilePath(Spec):
    """A path (``str`` or ``os.PathLike``) to an existing regular file (``kind="file"``) or directory
    (``kind="dir"``), or any path (``kind="any"``, e.g. an output). Loaders check the content themselves, against
    their schema, naming file and line."""

    kind: str = "file"

    def _check(self, name: str, value: Any) -> Any:
        if not isinstance(value, (str, os.PathLike)) or isinstance(value, bytes):
            raise TypeError(f"{name} must be a path (str or os.PathLike), got {type(value).__name__} {_show(value)}")
        if isinstance(value, str) and not value:
            raise ValueError(f"{name} must not be an empty path")
        if self.kind == "any":
            return value
        p = Path(value)
        if self.kind == "file" and p.is_dir():
            raise IsADirectoryError(f"{name} must be a file, got the directory {p}")
        if self.kind == "dir" and p.exists() and not p.is_dir():
            raise NotADirectoryError(f"{name} must be a directory, got the file {p}")
        return value

    def describe(self) -> str:
        return {"file": "a path to a file", "dir": "a path to a directory"}.get(self.kind, "a path")

    def hostile(self) -> list[tuple[str, Any]]:
        return [*super().hostile(), ("number", 3), ("empty", ""), ("object", WRONG)]


@dataclass(frozen=True)
class Opaque(Spec):
    """A parameter the vocabulary does not describe (a callable, keyword arguments handed on): accepted as given.
    ``why`` says why, so an undeclared parameter is never silent."""

    why: str = ""

    def _check(self, name: str, value: Any) -> Any:
        return value

    def describe(self) -> str:
        return f"anything ({self.why})"

    def hostile(self) -> list[tuple[str, Any]]:
        return []


@dataclass(frozen=True)
class AnyOf(Spec):
    """A value any of ``specs`` accepts (tried in order; the first that accepts it converts it)."""

    specs: tuple[Spec, ...] = ()

    def __init__(self, *specs: Spec, optional: bool = False) -> None:
        object.__setattr__(self, "optional", optional)
        object.__setattr__(self, "specs", tuple(specs))

    def _check(self, name: str, value: Any) -> Any:
        errors = []
        for spec in self.specs:
            try:
                return spec.check(name, value)
            except (TypeError, ValueError) as exc:
                errors.append(exc)
        kind = ValueError if any(isinstance(e, ValueError) for e in errors) else TypeError
        first = next((e for e in errors if isinstance(e, kind)), errors[0])
        raise kind(f"{str(first).split(' (allowed:')[0]} (allowed: {self.describe()})")

    def describe(self) -> str:
        return " or ".join(s.describe() for s in self.specs)

    def hostile(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = [] if self.optional else [("none", None)]
        for spec in self.specs:
            for label, value in spec.hostile():
                if label == "none" or any(_accepts(other, value) for other in self.specs):
                    continue
                out.append((label, value))
        return out


def _accepts(spec: Spec, value: Any) -> bool:
    try:
        spec.check("x", value)
        return True
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Items(Spec):
    """A list or tuple (not a string) of at least ``min_size`` items, each accepted by ``item``; returned as a
    tuple of the converted items."""

    item: Spec = field(default_factory=lambda: Opaque("any item"))
    min_size: int = 0

    def _check(self, name: str, value: Any) -> tuple:
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise TypeError(f"{name} must be a list or tuple, got {type(value).__name__} {_show(value)}")
        items = tuple(value)
        if len(items) < self.min_size:
            raise ValueError(f"{name} must have at least {self.min_size} item(s), got {len(items)}")
        return tuple(self.item.check(f"{name}[{i}]", v) for i, v in enumerate(items))

    def describe(self) -> str:
        size = f"at least {self.min_size} " if self.min_size else ""
        return f"a list of {size}items, each {self.item.describe()}"

    def hostile(self) -> list[tuple[str, Any]]:
        out = [*super().hostile(), ("text", "ab"), ("object", WRONG)]
        if self.min_size:
            out.append(("empty", []))
        bad = [v for label, v in self.item.hostile() if label not in ("none",)][:1]
        if bad:
            out.append(("bad-item", [bad[0]]))
        return out


@dataclass(frozen=True)
class MappingOf(Spec):
    """A mapping whose keys and values the given specs accept (returned as given)."""

    key: Spec = field(default_factory=lambda: Opaque("any key"))
    value: Spec = field(default_factory=lambda: Opaque("any value"))

    def _check(self, name: str, value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a mapping (dict), got {type(value).__name__} {_show(value)}")
        for k, v in value.items():
            self.key.check(f"{name} key", k)
            self.value.check(f"{name}[{k!r}]", v)
        return value

    def describe(self) -> str:
        return "a mapping"

    def hostile(self) -> list[tuple[str, Any]]:
        return [*super().hostile(), ("list", [1]), ("object", WRONG)]
