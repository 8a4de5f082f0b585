"""Experiments and their parameter spaces: registration, validation and grid expansion.

An :class:`Experiment` is a named, pure function of keyword parameters and a ``seed`` (an int) that returns a dict of
scalars (one result row) or a tidy DataFrame (several rows). Its :class:`Param` entries give each parameter's default,
unit, allowed values and whether the parameter keys the random stream. Grids are validated here, before anything is
scheduled, so a bad value fails in the caller's process with the parameter's name.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import math
import numbers
import pkgutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._validate import in_range, integer, one_of

__all__ = ["Param", "Experiment", "experiment", "get", "names", "builtin_modules"]

_KINDS = (bool, int, float, str)
_REGISTRY: dict[str, Experiment] = {}


@dataclass(frozen=True)
class Param:
    """One parameter of an experiment.

    Parameters
    ----------
    name : str
        Keyword of the experiment function, in the settled vocabulary (``load``, ``routing``, ``marking``,
        ``rate_scale``, ...).
    default : bool, int, float or str
        Default value; its type is the parameter's kind (``int`` parameters accept integral floats such as ``3.0``).
    unit : str
        Unit of the value (``"s"``, ``"rps"``, ``"fraction"``); ``""`` when dimensionless or categorical.
    low, high : float, optional
        Allowed interval for numbers (``low_inclusive``/``high_inclusive`` say whether the ends are allowed).
    choices : tuple, optional
        Allowed values (for strings, or a discrete set of numbers).
    seeded : bool
        Whether the value keys the point's random stream. ``False`` for a *treatment* (a marking policy, a routing,
        a workload kind): every value of it then sees the same random draws at a given point of the other
        parameters (common random numbers), so differences between treatments are not sampling noise.
    doc : str
        One line shown by ``workbench sweep show``.
    label : str
        What a reader calls it (a control's description, an axis title); default: the name without its unit suffix
        (``mean_rate_rps`` -> ``mean rate``), see :func:`workbench._units.name_label`.
    log : bool
        Whether values are best chosen on a logarithmic scale (a control then offers 1-2-5 steps between the
        bounds, and the default exactly).
    multiple : int, optional
        For an ``int`` parameter: the values must be multiples of it (ranks that fill whole machines of 8); a control
        offers only such values, and a value that is not one is refused naming the parameter.

    Examples
    --------
    >>> p = Param("load", 0.5, "fraction", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    >>> p.validate(0.7), p.parse("0.3")
    (0.7, 0.3)
    >>> Param("ranks", 64, low=8, high=4096, multiple=8).allowed
    '[8, 4096], a multiple of 8'
    """

    name: str
    default: Any
    unit: str = ""
    low: float | None = None
    high: float | None = None
    low_inclusive: bool = True
    high_inclusive: bool = True
    choices: tuple | None = None
    seeded: bool = True
    doc: str = ""
    label: str = ""
    log: bool = False
    multiple: int | None = None
    kind: type = field(init=False)

    def __post_init__(self) -> None:
        kind = type(self.default)
        if kind not in _KINDS:
            raise TypeError(
                f"default of parameter {self.name!r} must be a bool, int, float or str, got {kind.__name__}"
            )
        object.__setattr__(self, "kind", kind)
        if self.multiple is not None:
            if kind is not int or self.choices is not None:
                raise TypeError(f"multiple of parameter {self.name!r} applies to an int parameter without choices")
            object.__setattr__(
                self, "multiple", integer(f"multiple of parameter {self.name!r}", self.multiple, minimum=1)
            )
        if self.choices is not None:
            object.__setattr__(self, "choices", tuple(self.choices))
        self.validate(self.default)

    @classmethod
    def fraction(cls, name: str, default: float, doc: str = "", *, seeded: bool = True) -> Param:
        """A fraction strictly between 0 and 1 (a load, a utilization)."""
        return cls(
            name,
            float(default),
            "fraction",
            low=0.0,
            high=1.0,
            low_inclusive=False,
            high_inclusive=False,
            seeded=seeded,
            doc=doc,
        )

    @property
    def title(self) -> str:
        """The reader's label with its unit, e.g. ``"mean rate (req/s)"`` (for controls and axis titles)."""
        from .._units import name_label, with_unit

        return with_unit(self.label or name_label(self.name), self.unit)

    @property
    def allowed(self) -> str:
        """The allowed values in words (for messages and ``workbench sweep show``)."""
        if self.choices is not None:
            return ", ".join(map(str, self.choices))
        if self.kind is bool:
            return "true, false"
        if self.low is None and self.high is None:
            return f"any {self.kind.__name__}"
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        left = "[" if self.low_inclusive and self.low is not None else "("
        right = "]" if self.high_inclusive and self.high is not None else ")"
        every = f", a multiple of {self.multiple}" if self.multiple and self.multiple > 1 else ""
        return f"{left}{lo}, {hi}{right}{every}"

    def validate(self, value: Any) -> Any:
        """Return ``value`` converted to the parameter's kind; ``ValueError``/``TypeError`` naming the parameter."""
        name = f"parameter {self.name!r}"
        if self.kind is bool:
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be true or false, got {type(value).__name__} {value!r}")
        elif self.kind is str:
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a string, got {type(value).__name__} {value!r}")
        elif self.kind is int:
            value = integer(name, value)
        else:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
            value = float(value)
            if not math.isfinite(value):  # no model parameter means anything at infinity or NaN
                raise ValueError(f"{name} must be a finite number, got {value!r}; allowed: {self.allowed}")
        if self.choices is not None:
            return one_of(name, value, self.choices)
        if self.kind in (int, float) and (self.low is not None or self.high is not None):
            lo = -math.inf if self.low is None else self.low
            hi = math.inf if self.high is None else self.high
            in_range(name, value, lo, hi, low_inclusive=self.low_inclusive, high_inclusive=self.high_inclusive)
        if self.multiple and value % self.multiple:
            raise ValueError(f"{name} must be a multiple of {self.multiple}, got {value}; allowed: {self.allowed}")
        return value

    def parse(self, text: str) -> Any:
        """Parse a command-line value (``"0.3"``, ``"ecmp"``, ``"true"``) and validate it."""
        text = text.strip()
        if self.kind is bool:
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"parameter {self.name!r} must be true or false, got {text!r}")
            return self.validate(text.lower() in ("true", "1"))
        if self.kind is str:
            return self.validate(text)
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"parameter {self.name!r} must be a number, got {text!r}") from None
        return self.validate(number)


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: ``fn(**params, seed=int) -> dict | DataFrame`` with its parameter space.

    ``version`` is documentation (what a reader or a changelog calls this revision of the study); it is part of the
    cache key, but nothing needs bumping when a model changes: the key follows the code the function can reach and
    each record the data it read (:mod:`workbench._deps`).
    """

    name: str
    fn: Callable[..., Any]
    params: tuple[Param, ...]
    version: str
    description: str = ""
    small: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = field(default=None, compare=False, hash=False)
    limits: Mapping[str, Callable[..., float]] = field(default_factory=dict, compare=False, hash=False)

    @property
    def module(self) -> str:
        """The module that registered the experiment (``workbench.experiments.<topic>`` for a built-in one)."""
        return self.fn.__module__

    def param(self, name: str) -> Param:
        """The :class:`Param` called ``name``; ``ValueError`` naming the known parameters otherwise."""
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params)
        raise ValueError(f"unknown parameter {name!r} of experiment {self.name!r}; its parameters are: {known}")

    def limit(self, name: str, **values: Any) -> float:
        """The largest value of parameter ``name`` the experiment runs at the other parameters ``values`` (the rest at
        their defaults): its declared limit (``experiment(limits=...)``) where that depends on the other parameters or
        on data, capped by the ``Param``'s ``high``. A panel offers stops up to it; past it a point may not run (the
        experiment then refuses it, naming what to change).

        Examples
        --------
        >>> @experiment("doc-budget", params=[Param("n", 1, "", low=1, high=100), Param("cap", 10, "", low=1)],
        ...             limits={"n": lambda cap, **_: 2 * cap})
        ... def budget(*, n, cap, seed):
        ...     return {"n": n}
        >>> budget.limit("n"), budget.limit("n", cap=80)
        (20, 100)
        """
        p = self.param(name)
        point = {**self.defaults(), **{k: self.param(k).validate(v) for k, v in values.items()}}
        high = math.inf if p.high is None else p.high
        fn = self.limits.get(name)
        return high if fn is None else min(high, fn(**{k: v for k, v in point.items() if k != name}))

    def defaults(self) -> dict[str, Any]:
        """Every parameter at its default."""
        return {p.name: p.default for p in self.params}

    def describe(self) -> pd.DataFrame:
        """The parameter space as a table: ``parameter, default, unit, allowed, seeded, doc``."""
        return pd.DataFrame(
            [(p.name, p.default, p.unit, p.allowed, p.seeded, p.doc) for p in self.params],
            columns=["parameter", "default", "unit", "allowed", "seeded", "doc"],
        )

    def points(self, grid: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
        """Expand and validate ``grid`` into full parameter dicts (defaults filled in), in a stable order.

        A mapping is a Cartesian product (a scalar value is a one-value axis; the last parameter varies fastest);
        a sequence of mappings is an explicit list of points. Unknown parameters, empty value lists, values out of
        range and duplicate points raise before anything runs.
        """
        if grid is None:
            grid = {}
        if isinstance(grid, Mapping):
            axes = []
            for name, values in grid.items():
                p = self.param(name)
                if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                    values = [values]
                values = list(values)
                if not values:
                    raise ValueError(f"the grid gives no values for parameter {name!r} of experiment {self.name!r}")
                axes.append([(name, p.validate(v)) for v in values])
            raw = [dict(combo) for combo in itertools.product(*axes)]
        elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
            if not grid:
                raise ValueError(f"the explicit list of points for experiment {self.name!r} is empty")
            raw = []
            for point in grid:
                if not isinstance(point, Mapping):
                    raise TypeError(f"each explicit point must be a mapping, got {type(point).__name__}")
                raw.append({name: self.param(name).validate(v) for name, v in point.items()})
        else:
            raise TypeError(
                f"grid must be a mapping of parameter -> values or a list of points, got {type(grid).__name__}"
            )
        out, seen = [], set()
        for point in raw:
            full = {p.name: point.get(p.name, p.default) for p in self.params}
            frozen = tuple(full.items())
            if frozen in seen:
                raise ValueError(f"the grid repeats the point {full} of experiment {self.name!r}")
            seen.add(frozen)
            out.append(full)
        return out


def experiment(
    name: str,
    *,
    params: Sequence[Param],
    version: str = "1",
    description: str = "",
    small: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    limits: Mapping[str, Callable[..., float]] | None = None,
):
    """Register the decorated function as the experiment ``name`` and return the :class:`Experiment`.

    The function takes every parameter as a keyword plus ``seed`` (an int) and returns a dict of scalars or a tidy
    DataFrame whose columns do not repeat a parameter name or ``seed``. A ``**settings`` argument may take the
    declared parameters the function does not name (a group handed on as one, e.g. a marking configuration); a name
    the space does not declare is still an error.

    ``small`` is the experiment's conformance grid: at least two points that run serially in a few seconds. The test
    suite runs every registered experiment at its ``small`` grid (``tests/experiments/test_registered.py``), so a new
    experiment is tested by declaring it; it is validated here, at registration.

    ``limits`` maps a parameter to ``fn(**other_parameters) -> float``, the largest value it runs at when that
    depends on the others or on data (jobs that fit in a trace window): :meth:`Experiment.limit` reads it.

    Examples
    --------
    >>> @experiment("doc-square", version="1", params=[Param("x", 2.0, "", low=0.0)])
    ... def square(*, x, seed):
    ...     return {"y": x * x}
    >>> square.fn(x=3.0, seed=0), square.points({"x": [1, 2]})
    ({'y': 9.0}, [{'x': 1.0}, {'x': 2.0}])
    """
    params = tuple(params)
    if not isinstance(version, str) or not version:
        raise ValueError(f"version of experiment {name!r} must be a non-empty string, got {version!r}")

    def register(fn: Callable[..., Any]) -> Experiment:
        wanted = {p.name for p in params} | {"seed"}
        signature = inspect.signature(fn).parameters.values()
        accepted = {a.name for a in signature if a.kind is not inspect.Parameter.VAR_KEYWORD}
        rest = len(accepted) < len(signature)  # a **settings argument takes the declared parameters not named
        if not (accepted == wanted or (rest and "seed" in accepted and accepted <= wanted)):
            raise TypeError(
                f"experiment {name!r}: the function takes {sorted(accepted)} but the parameter space "
                f"declares {sorted(wanted)}"
            )
        if len(wanted) != len(params) + 1:
            raise ValueError(f"experiment {name!r} declares a parameter twice or one named 'seed'")
        old = _REGISTRY.get(name)
        if old is not None and (old.fn.__module__, old.fn.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ValueError(f"experiment {name!r} is already registered by {old.fn.__module__}.{old.fn.__qualname__}")
        first_line = description or (inspect.getdoc(fn) or "").split("\n")[0]
        unknown = sorted(set(limits or {}) - {p.name for p in params})
        if unknown:
            raise ValueError(f"experiment {name!r}: limits name parameters it does not declare: {unknown}")
        exp = Experiment(name, fn, params, version, first_line, small, dict(limits or {}))
        if small is not None and len(exp.points(small)) < 2:
            raise ValueError(f"experiment {name!r}: the small grid must have at least two points, got {small!r}")
        _REGISTRY[name] = exp
        return exp

    return register


def builtin_modules() -> list[str]:
    """The modules that register the built-in experiments: every non-underscore module of
    :mod:`workbench.experiments`, discovered (adding a study is adding a module; no list to edit)."""
    package = importlib.import_module(__package__)
    return sorted(
        f"{__package__}.{info.name}" for info in pkgutil.iter_modules(package.__path__) if not info.name.startswith("_")
    )


_LOADED = False


def _load_builtin() -> None:
    global _LOADED
    if not _LOADED:
        for module in builtin_modules():
            importlib.import_module(module)
        _LOADED = True


def _load_naming(name: str) -> None:
    """Import the built-in modules whose source names ``name`` as a string literal, until one registers it.

    Finding one experiment this way imports its study's models only: importing every built-in module (what
    :func:`names` needs) costs a fresh process ~1-1.8 s (scipy.stats, the packet engine, the serving engine...), which
    every panel, dashboard kernel and CLI call paid for the one experiment it runs. A module that merely mentions the
    name is imported to no harm; a name no module spells out is found by :func:`_load_builtin`."""
    package = importlib.import_module(__package__)
    for module in builtin_modules():
        path = Path(package.__path__[0], module.rpartition(".")[2] + ".py")
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:  # a module that is not a plain file: found by the full load
            continue
        if f'"{name}"' in text or f"'{name}'" in text:
            importlib.import_module(module)
            if name in _REGISTRY:
                return


def get(name: str | Experiment) -> Experiment:
    """The registered experiment called ``name`` (an :class:`Experiment` is returned as given)."""
    if isinstance(name, Experiment):
        return name
    if name not in _REGISTRY:
        _load_naming(name)
    if name not in _REGISTRY:
        _load_builtin()
    if name not in _REGISTRY:
        raise ValueError(f"unknown experiment {name!r}; registered: {', '.join(names())}")
    return _REGISTRY[name]


def names() -> list[str]:
    """Names of every registered experiment (the built-in ones and any registered since), sorted."""
    _load_builtin()
    return sorted(_REGISTRY)
