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
ValueError: rate_rps must be a number, got NaN (allowed: finite real number > 0)
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import math
import os
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from . import _specs
from ._specs import (
    AnyOf,
    Array,
    Bool,
    Choice,
    FilePath,
    Frame,
    Instance,
    Int,
    Items,
    MappingOf,
    Opaque,
    Real,
    Seed,
    Spec,
    Text,
)

#: The value specs (re-exported from :mod:`workbench._specs`, so a model module imports one place) and the contracts.
__all__ = [
    *(n for n in _specs.__all__ if n not in ("HUGE", "WRONG")),
    "Rule",
    "same_length",
    "Contract",
    "accepts",
    "output",
    "contract_of",
    "NAMES",
    "SUFFIXES",
    "INDICES",
    "NONNEGATIVE",
    "PROBABILITIES",
]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Rule:
    """A constraint between parameters: ``test(**arguments)`` is true when they agree; ``message`` (formatted with
    the arguments) says what is wrong. ``names`` are the parameters it reads (the suite perturbs them)."""

    names: tuple[str, ...]
    test: Callable[..., bool]
    message: str | Callable[..., str]

    def check(self, arguments: Mapping[str, Any]) -> None:
        values = {n: arguments[n] for n in self.names}
        if not self.test(**values):
            text = self.message(**values) if callable(self.message) else self.message.format(**values)
            raise ValueError(text)


def same_length(*names: str) -> Rule:
    """The rule that the array parameters ``names`` have one length each (one entry per flow, per request, ...)."""

    def lengths(**values: Any) -> list[int]:
        return [int(np.size(v)) for v in values.values() if v is not None]  # an optional one left out: no length

    return Rule(
        tuple(names),
        lambda **values: len(set(lengths(**values))) <= 1,
        lambda **values: f"{', '.join(names)} must have the same length, got {', '.join(map(str, lengths(**values)))}",
    )


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

_COUNT = Int(ge=0, le=10**9)

#: An index or an array of indices (hosts, leaves, spines, ranks): non-negative integers.
INDICES = AnyOf(Int(ge=0), Array(integer=True, ge=0))
#: A real number or an array of them, each finite and non-negative (sizes, durations, counts as floats).
NONNEGATIVE = AnyOf(Real(ge=0.0), Array(ndim=None, ge=0.0))
#: A probability or an array of them.
PROBABILITIES = AnyOf(Real(ge=0.0, le=1.0), Array(ndim=None, ge=0.0, le=1.0))
_FRACTION_OPEN = Real(gt=0.0, lt=1.0)
_FRACTION = Real(ge=0.0, le=1.0)

#: Specs by exact parameter name (ARCHITECTURE.md's vocabulary).
NAMES: dict[str, Spec] = {
    "seed": Seed,
    "utilization": _FRACTION_OPEN,
    "load": _FRACTION_OPEN,
    "rate_rps": Real(gt=0.0),
    "ttft_limit_s": Real(gt=0.0, finite=False, optional=True),  # inf or None: no limit; NaN refused
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
    "input_tokens": Int(ge=0, le=10**7),  # the engine's limit per request (serving MAX_SERVED_TOKENS)
    "output_tokens": Int(ge=0, le=10**7),
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
        spec = _COUNT  # a number of things: 0 or more (a function that needs at least one says so)
    numeric = {int, float, np.ndarray, type(None)}
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    members = typing.get_args(annotation) if union else (annotation,)
    kinds = {typing.get_origin(a) or a for a in members if not isinstance(a, list)}
    kinds = {k for k in kinds if isinstance(k, type)} or {annotation}
    if spec is not None and annotation not in (None, Any) and not kinds <= numeric:
        return None  # something else of that name (a ``Load`` record, a length spec string): its annotation says
    if not isinstance(spec, (Real, Int)):
        return spec
    ge, gt = spec.ge, getattr(spec, "gt", None)
    le, lt = spec.le, getattr(spec, "lt", None)
    if isinstance(spec, Int) and (annotation is float or kinds == {float} or kinds == {float, type(None)}):
        # a count that may be fractional here (a mean, an expected number of tokens): a real number in its range
        return Real(ge=spec.ge, le=spec.le)
    if annotation is int and isinstance(spec, Real):  # a count in that unit
        low: int | None = None
        if ge is not None:
            low = math.floor(ge)
        elif gt is not None:
            low = math.floor(gt) + 1
        return Int(ge=low, le=10**12)
    # an array of a positive quantity may hold zeros (a rate curve's idle windows, a failed link's capacity)
    as_array = Array(ndim=None, ge=ge if gt is None else gt, le=le, lt=lt, integer=isinstance(spec, Int))
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
    if annotation is np.ndarray:  # an array whose meaning the name does not give: any shape, numbers or times
        return Array(ndim=None, finite=False, allow_nan=True, any_kind=True)
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


def accepts(*rules: Rule, **specs: Spec) -> Callable[[F], F]:
    """Declare and enforce what a function (or a method, or a class's constructor) accepts.

    Each parameter's spec is the one given here, else the vocabulary's for its name (:data:`NAMES`,
    :data:`SUFFIXES`, refined by an ``int`` annotation), else the one its annotation gives; a parameter none of
    these covers is an error at decoration time (declare it, ``Opaque("why")`` if nothing fits). A parameter whose
    default is ``None`` also accepts ``None``. ``*args`` and ``**kwargs`` are declared ``Opaque`` by their nature.
    """

    def decorate(target: F) -> F:
        if inspect.isclass(target):
            wrapped = _wrap(target.__init__, rules, specs, skip_first=True, name=target.__qualname__)
            setattr(target, "__init__", wrapped)  # noqa: B010 - a method replaced on purpose
            setattr(target, "__contract__", wrapped.__contract__)  # noqa: B010
            return target
        return _wrap(target, rules, specs, skip_first=False, name=target.__qualname__)

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
        if isinstance(spec, Text) and p.default == "" and not spec.empty:  # an empty default: empty is allowed
            spec = dataclasses.replace(spec, empty=True)
        if p.name in inferred:  # a default is a valid value: the vocabulary's range widens to hold it
            spec = _holding(spec, p.default)
        resolved[p.name] = _with_optional(spec, p.default is None)
    if missing:
        raise TypeError(
            f"accepts({name}): no spec for parameter(s) {missing}: declare them (Opaque('why') if nothing fits)"
        )
    contract = Contract(name, resolved, tuple(rules), frozenset(inferred))

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{name}(): {exc}") from None
        if _HARVEST is not None and wrapper not in _HARVEST:
            _HARVEST[wrapper] = (args[1:] if skip_first else args, dict(kwargs))
        arguments = bound.arguments
        try:
            for pname, spec in contract.specs.items():
                if pname in arguments:
                    arguments[pname] = spec.check(pname, arguments[pname])
            if contract.rules:
                full = {**{p.name: p.default for p in params if p.default is not p.empty}, **arguments}
                for rule in contract.rules:
                    rule.check(full)
        except (TypeError, ValueError) as exc:
            if not skip_first:
                raise
            # a record: say which one (its first argument when that is its name, e.g. Service('x'))
            first_arg = next((v for k, v in arguments.items() if k not in ("self", "cls")), None)
            label = f"{name}({first_arg!r})" if isinstance(first_arg, str) else name
            raise type(exc)(f"{label}: {exc}") from None
        return fn(*bound.args, **bound.kwargs)

    wrapper.__contract__ = contract  # type: ignore[attr-defined]
    wrapper.__signature__ = sig  # type: ignore[attr-defined]
    return wrapper


def _holding(spec: Spec, default: Any) -> Spec:
    """``spec`` widened to accept ``default`` when the vocabulary's range would refuse it (``inf``: no limit; ``0``:
    none), so a function's own default is never an error when passed explicitly."""
    if isinstance(spec, AnyOf):
        return AnyOf(*(_holding(s, default) for s in spec.specs), optional=spec.optional)
    if not isinstance(spec, Real) or isinstance(default, bool) or not isinstance(default, (int, float)):
        return spec
    if math.isinf(default) and spec.finite:
        spec = dataclasses.replace(spec, finite=False)
    if default == 0 and spec.gt == 0:
        spec = dataclasses.replace(spec, gt=None, ge=0.0)
    return spec


def _strip_optional(annotation: Any) -> Any:
    args = typing.get_args(annotation)
    if type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


#: While not ``None``, the first call of every contracted function is recorded here (``wrapper -> (args,
#: kwargs)``; a class's constructor without the instance): :func:`harvesting` fills it for the hostile-input suite.
_HARVEST: dict[Any, tuple[tuple, dict]] | None = None


@contextlib.contextmanager
def harvesting() -> Iterator[dict[Any, tuple[tuple, dict]]]:
    """Record the first call of every contracted function made inside the block (the hostile-input suite takes them
    from the docstring examples as the valid calls it perturbs one parameter at a time)."""
    global _HARVEST
    outer, _HARVEST = _HARVEST, {}
    try:
        yield _HARVEST
    finally:
        _HARVEST = outer


def output(cls: type) -> type:
    """Mark a public record as an *output*: the library makes it (a simulation's result, a parsed file, a
    measurement), so it has no input contract; the functions that make it check what they are given."""
    cls.__output__ = True  # type: ignore[attr-defined]
    return cls


def contract_of(obj: Any) -> Contract | None:
    """The :class:`Contract` declared on a function, method or class (``None`` when it has none)."""
    return getattr(obj, "__contract__", None)


def iter_args(values: Iterable[Any] | Sequence[Any]) -> list[Any]:  # pragma: no cover - helper for messages
    return list(values)
