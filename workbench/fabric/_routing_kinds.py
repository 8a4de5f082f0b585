"""Routing names and their parsed record (:class:`Routing`): the vocabulary every topology's routing code shares.

Kept apart from :mod:`workbench.fabric.routing` so that each topology module (leaf-spine in ``routing``, fat-tree in
``fattree``) can take a parsed routing without importing the other: routing dispatches to a topology's own methods,
never on its type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._contracts import accepts
from .._validate import integer, one_of

__all__ = ["ROUTINGS", "Routing", "parse_routing"]

#: Routings offered in menus; any ``"mp-x"`` with integer x >= 1 is accepted too.
ROUTINGS = ("ecmp", "mp-2", "mp-4", "mp-8", "spray", "minimal", "planned")
_KINDS = ("ecmp", "mp", "spray", "minimal", "planned")
_MP = re.compile(r"^mp-?(\d+)$")


@accepts()
@dataclass(frozen=True)
class Routing:
    """A parsed routing: ``kind`` (``ecmp``/``mp``/``spray``/``minimal``/``planned``) and ``split``, the hashed
    subflows per flow (``x`` for ``mp-x``, 1 otherwise). Build it with :func:`parse_routing`; ``str()`` gives the
    canonical string back.

    Examples
    --------
    >>> r = Routing("mp", 8)
    >>> str(r), r.hashed
    ('mp-8', True)
    """

    kind: str
    split: int = 1

    def __post_init__(self) -> None:
        one_of("routing kind", self.kind, _KINDS)
        low = 2 if self.kind == "mp" else 1
        high = None if self.kind == "mp" else 1
        integer(f"split of routing kind {self.kind!r}", self.split, minimum=low, maximum=high)

    def __str__(self) -> str:
        return f"mp-{self.split}" if self.kind == "mp" else self.kind

    @property
    def hashed(self) -> bool:
        """Whether paths are drawn by hashing (``ecmp``, ``mp-x``), i.e. random."""
        return self.kind in ("ecmp", "mp")


@accepts()
def parse_routing(routing: str | Routing) -> Routing:
    """The :class:`Routing` record of a routing string (a :class:`Routing` is returned as it is).

    Case and surrounding blanks are ignored; ``"mp-1"`` is ECMP.

    Examples
    --------
    >>> parse_routing("MP-8"), parse_routing("ecmp")
    (Routing(kind='mp', split=8), Routing(kind='ecmp', split=1))
    """
    if isinstance(routing, Routing):
        return routing
    if not isinstance(routing, str):
        raise TypeError(f"routing must be a str or Routing, got {type(routing).__name__}")
    s = routing.strip().lower()
    m = _MP.match(s)
    if m:
        x = int(m.group(1))
        if x < 1:
            raise ValueError(f"routing {routing!r}: the MP split factor must be >= 1")
        return Routing("ecmp") if x == 1 else Routing("mp", x)
    one_of("routing", s, ("ecmp", "spray", "minimal", "planned", "mp-x"))
    return Routing(s)
