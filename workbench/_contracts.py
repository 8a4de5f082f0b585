"""Declared input contracts: what every public function, method, record and loader accepts, as data.

A contract maps each parameter of a function to a :class:`Spec` (a kind of value and its allowed range), plus
cross-parameter :class:`Rule` s, and is attached to the function by :func:`accepts`. The wrapper checks every
argument before the body runs, with one message shape everywhere (the parameter, the value, what is allowed), and
converts it (``3.0`` for an ``Int`` becomes ``3``; a list for an ``Array`` becomes an array). Because the contract is
data (``fn.__contract__``), the hostile-input suite (``tests/hostile/test_contracts.py``) generates its cases from
it: for every declared parameter, the values the spec refuses (:meth:`Spec.hostile`: NaN, infinities, negative,
zero, huge, the wrong type, empty) must be refused with an error that names the parameter, and the valid extremes
(:meth:`Spec.edges`) must return or raise a named error, never hang or fail with a raw error. A public function
without a contract fails that suite.

Most parameters need no words at the call site: the workbench's vocabulary fixes what a name means
(``ARCHITECTURE.md``: ``rate_rps``, ``*_s``, ``*_bytes``, ``tp``, ``seed``, ...), so :data:`NAMES` and
:data:`SUFFIXES` give the spec of a parameter by its name, refined by its annotation (an ``int`` annotation makes
a count of a rule's real number); what differs goes in the decorator::

    @accepts(q=Real(gt=0, lt=1))
    def wait_quantile(q: float, utilization: float, mean_service_s: float) -> float: ...

A parameter whose values the vocabulary cannot describe (a callable, a model record of another package) is declared
:class:`Opaque` with the reason, so "no contract" is never silent.

Examples
--------
>>> @accepts(n=Int(ge=1, le=1000))
... def draws(n: int, rate_rps: float, seed=None):
...     return n * rate_rps
>>> draws(3.0, 2)
6.0
>>> draws(0, 2)
Traceback (most recent call last):
...
ValueError: n must be >= 1, got 0 (allowed: integer in [1, 1000])
>>> draws(3, float("nan"))
Traceback (most recent call last):
...
ValueError: rate_rps must be a number, got NaN (allowed: real number > 0)
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

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
    "Rule",
    "Contract",
    "accepts",
    "contract_of",
    "NAMES",
    "SUFFIXES",
    "INDICES",
    "NONNEGATIVE",
    "PROBABILITIES",
]

F = TypeVar("F", bound=Callable[..., Any])

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


def _real(name: str, value: Any) -> float:
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

    def _check(self, name: str, value: Any) -> float:
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
            (label, v) for label, v in _bad_numbers(self.ge, self.gt, self.le, self.lt, self.finite)
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
            ok = value in self.options
        except TypeError:  # an unhashable or uncomparable value
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

    ndim: int = 1
    min_size: int = 0
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    finite: bool = True
    dtype: Any = None
    integer: bool = False
    allow_nan: bool = False

    def _check(self, name: str, value: Any) -> np.ndarray:
        if isinstance(value, (str, bytes, Mapping)) or value is None:
            raise TypeError(f"{name} must be an array of numbers, got {type(value).__name__} {_show(value)}")
        try:
            arr = np.asarray(value, dtype=float if self.integer else self.dtype)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be an array of numbers ({exc})") from None
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be an array of numbers, got an array of {arr.dtype}")
        if self.integer:
            bad = ~(np.isfinite(arr) & (arr == np.round(arr)))
            if bad.any():
                i = int(np.argmax(bad.ravel()))
                raise ValueError(f"{name} must hold integers; element {i} is {arr.ravel()[i]}")
        if arr.ndim == 0 and self.ndim == 1:
            raise TypeError(f"{name} must be an array of numbers, got the scalar {_show(value)}")
        if arr.ndim != self.ndim:
            raise ValueError(f"{name} must have {self.ndim} dimension(s), got shape {arr.shape}")
        if arr.size < self.min_size:
            raise ValueError(f"{name} must have at least {self.min_size} element(s), got {arr.size}")
        if arr.size and np.issubdtype(arr.dtype, np.number):
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
        return f"{self.ndim}-D array of {kind}{' ' + b if b else ''}{size}"

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
        if self.integer:
            out.append(("fraction-element", [1.0, 2.5]))
        low = self.ge if self.ge is not None else self.gt
        if low is not None:
            out.append(("below-element", [low + 1.0, low - 1.0]))
        return out

    def edges(self) -> list[tuple[str, Any]]:
        return [] if self.min_size else [("empty", [] if self.ndim == 1 else np.zeros((0,) * self.ndim))]


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
        if not isinstance(value, self.types):
            raise TypeError(f"{name} must be {self.describe()}, got {type(value).__name__} {_show(value)}")
        return value

    def describe(self) -> str:
        return " or ".join(f"a {t.__name__}" for t in self.types)

    def hostile(self) -> list[tuple[str, Any]]:
        return [*super().hostile(), ("number", 1.0), ("text", "x"), ("object", WRONG)]


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


@dataclass(frozen=True)
class Rule:
    """A constraint between parameters: ``test(**arguments)`` is true when they agree; ``message`` (formatted with
    the arguments) says what is wrong. ``names`` are the parameters it reads (the suite perturbs them)."""

    names: tuple[str, ...]
    test: Callable[..., bool]
    message: str

    def check(self, arguments: Mapping[str, Any]) -> None:
        values = {n: arguments[n] for n in self.names}
        if not self.test(**values):
            raise ValueError(self.message.format(**values))


@dataclass(frozen=True)
class Contract:
    """A function's declared inputs: a spec per parameter and the rules between them."""

    function: str
    specs: Mapping[str, Spec]
    rules: tuple[Rule, ...] = ()
    inferred: frozenset[str] = field(default_factory=frozenset)

    def check(self, arguments: dict[str, Any]) -> dict[str, Any]:
        for name, spec in self.specs.items():
            if name in arguments:
                arguments[name] = spec.check(name, arguments[name])
        for rule in self.rules:
            rule.check(arguments)
        return arguments


# ----------------------------------------------------------------------------------------------------------------------
# The vocabulary: what a parameter name means across the workbench
# ----------------------------------------------------------------------------------------------------------------------

_COUNT = Int(ge=1, le=10**9)

#: An index or an array of indices (hosts, leaves, spines, ranks): non-negative integers.
INDICES = AnyOf(Int(ge=0), Array(integer=True, ge=0))
#: A real number or an array of them, each finite and non-negative (sizes, durations, counts as floats).
NONNEGATIVE = AnyOf(Real(ge=0.0), Array(ge=0.0))
#: A probability or an array of them.
PROBABILITIES = AnyOf(Real(ge=0.0, le=1.0), Array(ge=0.0, le=1.0))
_FRACTION_OPEN = Real(gt=0.0, lt=1.0)
_FRACTION = Real(ge=0.0, le=1.0)

#: Specs by exact parameter name (ARCHITECTURE.md's vocabulary).
NAMES: dict[str, Spec] = {
    "seed": Seed,
    "utilization": _FRACTION_OPEN,
    "load": _FRACTION_OPEN,
    "rate_rps": Real(gt=0.0),
    "mean_rate_rps": Real(gt=0.0),
    "rate_scale": Real(gt=0.0),
    "burstiness": Real(gt=0.0),
    "cv": Real(ge=0.0),
    "quantile": _FRACTION_OPEN,
    "tp": Int(ge=1, le=1024),
    "pp": Int(ge=1, le=1024),
    "dp": Int(ge=1, le=10**6),
    "ep": Int(ge=1, le=1024),
    "replicas": Int(ge=1, le=10**5),
    "n_replicas": Int(ge=1, le=10**5),
    "gpus": Int(ge=1, le=10**7),
    "n_gpus": Int(ge=1, le=10**7),
    "layers": Int(ge=1, le=10**4),
    "heads": Int(ge=1, le=10**4),
    "kv_heads": Int(ge=1, le=10**4),
    "hidden": Int(ge=1, le=10**7),
    "samples": Int(ge=1, le=10**8),
    "iterations": Int(ge=1, le=10**9),
    "input_tokens": Int(ge=0, le=10**8),
    "output_tokens": Int(ge=0, le=10**8),
    "progress": Bool(),
    "overwrite": Bool(),
    "force": Bool(),
    "quiet": Bool(),
}

#: Specs by the end of a parameter's name (units and kinds), tried longest first.
SUFFIXES: dict[str, Spec] = {
    "_s": Real(ge=0.0),
    "_ms": Real(ge=0.0),
    "_bytes": Real(ge=0.0),
    "_gbps": Real(gt=0.0),
    "_gbs": Real(gt=0.0),
    "_tbps": Real(gt=0.0),
    "_tflops": Real(gt=0.0),
    "_rps": Real(gt=0.0),
    "_gb": Real(ge=0.0),
    "_gib": Real(ge=0.0),
    "_kwh": Real(ge=0.0),
    "_tokens": Int(ge=0, le=10**9),
    "_pkts": Real(ge=0.0),
    "_fraction": _FRACTION,
    "_prob": _FRACTION,
    "_share": _FRACTION,
}


def _by_name(name: str, annotation: Any) -> Spec | None:
    """The vocabulary's spec for ``name``, shaped by its annotation: the name gives the range, the annotation the
    kind (an ``int`` makes a count, an array annotation an array of that range, none or a union of a number and an
    array either)."""
    spec = NAMES.get(name)
    if spec is None:
        for suffix in sorted(SUFFIXES, key=len, reverse=True):
            if name.endswith(suffix):
                spec = SUFFIXES[suffix]
                break
    if spec is None and name.startswith("n_"):
        spec = _COUNT
    if not isinstance(spec, (Real, Int)):
        return spec
    ge, gt = spec.ge, getattr(spec, "gt", None)
    le, lt = spec.le, getattr(spec, "lt", None)
    if annotation is int and isinstance(spec, Real):  # a count in that unit
        low = None if ge is None and gt is None else math.floor(ge) if ge is not None else math.floor(gt) + 1
        return Int(ge=low, le=10**12)
    as_array = Array(ge=ge, gt=gt, le=le, lt=lt, integer=isinstance(spec, Int))
    kinds = set(typing.get_args(annotation)) or {annotation}
    if annotation is np.ndarray:
        return as_array
    if annotation in (int, float) or kinds <= {int, float}:
        return spec
    if annotation is None or annotation is Any or np.ndarray in kinds:
        return AnyOf(spec, as_array)
    return spec


def _from_annotation(annotation: Any) -> Spec | None:
    """A spec from a type annotation alone (``int``, ``float``, ``bool``, ``str``, a Literal, an array, a frame, a
    path, a class, a union, a sequence or mapping of those, a callable), ``None`` when it says nothing usable."""
    import collections.abc as cabc
    import types as pytypes

    if annotation is None or annotation is Any:
        return None
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, pytypes.UnionType):
        optional = type(None) in args
        rest = [a for a in args if a is not type(None)]
        if set(rest) == {str, os.PathLike} or set(rest) <= {str, os.PathLike, Path}:
            return FilePath(kind="any", optional=optional)
        specs = [_from_annotation(a) for a in rest]
        if any(sp is None for sp in specs):
            return None
        if len(specs) == 1:
            return _with_optional(specs[0], optional)  # type: ignore[arg-type]
        return AnyOf(*specs, optional=optional)  # type: ignore[arg-type]
    if origin is typing.Literal:
        return Choice(*args)
    if origin in (tuple, list, cabc.Sequence, cabc.Iterable, cabc.Collection):
        inner = [a for a in args if a is not Ellipsis]
        item = _from_annotation(inner[0]) if len(set(inner)) == 1 else None
        return Items(item or Opaque("items of several kinds"))
    if origin in (dict, cabc.Mapping):
        key, value = (*args, None, None)[:2]
        return MappingOf(_from_annotation(key) or Opaque("any key"), _from_annotation(value) or Opaque("any value"))
    if origin is cabc.Callable or annotation is cabc.Callable:
        return Opaque("a function")
    if annotation is bool:
        return Bool()
    if annotation is int:
        return Int()
    if annotation is float:
        return Real()
    if annotation is str:
        return Text()
    if annotation in (Path, os.PathLike):
        return FilePath(kind="any")
    if annotation is np.ndarray:
        return Array()
    if annotation is dict:
        return MappingOf()
    if annotation in (list, tuple):
        return Items()
    try:
        import pandas as pd

        if annotation is pd.DataFrame:
            return Frame()
    except ImportError:  # pragma: no cover
        pass
    if inspect.isclass(annotation):  # a family of records may stand for its base (a LeafSpine for any Topology)
        return Instance(getattr(annotation, "__accepts_as__", annotation))
    return None


def _with_optional(spec: Spec, optional: bool) -> Spec:
    if not optional or spec.optional:
        return spec
    import dataclasses

    if isinstance(spec, (Choice, Instance, AnyOf)):
        fields_ = {"optional": True}
        args = spec.options if isinstance(spec, Choice) else spec.types if isinstance(spec, Instance) else spec.specs
        return type(spec)(*args, **fields_)
    return dataclasses.replace(spec, optional=True)


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:  # an annotation that does not resolve: the names still give specs
        return {}


_AUDIT: list = []


def accepts(*rules: Rule, **specs: Spec) -> Callable[[F], F]:
    """Declare and enforce what a function (or a method, or a class's constructor) accepts.

    Each parameter's spec is the one given here, else the vocabulary's for its name (:data:`NAMES`,
    :data:`SUFFIXES`, refined by an ``int`` annotation), else the one its annotation gives; a parameter none of
    these covers is an error at decoration time (declare it, ``Opaque("why")`` if nothing fits). A parameter whose
    default is ``None`` also accepts ``None``. ``*args`` and ``**kwargs`` are declared ``Opaque`` by their nature.
    """

    def decorate(target: F) -> F:
        if inspect.isclass(target):
            init = target.__init__
            target.__init__ = _wrap(init, rules, specs, skip_first=True, name=target.__qualname__)  # type: ignore[misc]
            target.__contract__ = target.__init__.__contract__  # type: ignore[attr-defined]
            return target
        return _wrap(target, rules, specs, skip_first=False, name=target.__qualname__)  # type: ignore[return-value]

    return decorate


def _wrap(fn, rules, given, *, skip_first: bool, name: str):
    sig = inspect.signature(fn)
    hints = _hints(fn)
    params = list(sig.parameters.values())
    if skip_first or (params and params[0].name in ("self", "cls")):
        params = params[1:]
    unknown = set(given) - {p.name for p in params}
    if unknown:
        raise TypeError(f"accepts({name}): no parameter(s) {sorted(unknown)}")
    resolved: dict[str, Spec] = {}
    inferred = set()
    missing = []
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            resolved[p.name] = given.get(p.name, Opaque("arguments handed on"))
            continue
        annotation = hints.get(p.name)
        spec = given.get(p.name)
        if spec is None:
            spec = _by_name(p.name, _strip_optional(annotation)) or _from_annotation(annotation)
            inferred.add(p.name)
        if spec is None:
            missing.append(p.name)
            continue
        resolved[p.name] = _with_optional(spec, p.default is None)
    if missing:
        if os.environ.get("WB_AUDIT"):
            _AUDIT.append((fn.__module__, name, missing, {m: hints.get(m) for m in missing}))
            resolved.update({m: Opaque("audit") for m in missing})
        else:
            raise TypeError(
                f"accepts({name}): no spec for parameter(s) {missing}: declare them (Opaque('why') if nothing fits)"
            )
    contract = Contract(name, resolved, tuple(rules), frozenset(inferred))
    first = bool(skip_first or (list(sig.parameters)[:1] in (["self"], ["cls"])))

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{name}(): {exc}") from None
        arguments = bound.arguments
        for pname, spec in contract.specs.items():
            if pname in arguments:
                arguments[pname] = spec.check(pname, arguments[pname])
        if contract.rules:
            full = {**{p.name: p.default for p in params if p.default is not p.empty}, **arguments}
            for rule in contract.rules:
                rule.check(full)
        return fn(*bound.args, **bound.kwargs)

    wrapper.__contract__ = contract  # type: ignore[attr-defined]
    wrapper.__signature__ = sig  # type: ignore[attr-defined]
    del first
    return wrapper


def _strip_optional(annotation: Any) -> Any:
    args = typing.get_args(annotation)
    if type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def contract_of(obj: Any) -> Contract | None:
    """The :class:`Contract` declared on a function, method or class (``None`` when it has none)."""
    return getattr(obj, "__contract__", None)


def iter_args(values: Iterable[Any] | Sequence[Any]) -> list[Any]:  # pragma: no cover - helper for messages
    return list(values)
