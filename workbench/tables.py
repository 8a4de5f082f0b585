"""Checked reading of the small CSV tables the models load (carbon traces, engine profiles, operator-cost profiles,
RLHF instances, validation tables): one reader, so every loader gets the same per-line checks.

:func:`read_table` refuses, with the file and the line in the message: a path that is not a regular file (a
directory, a FIFO), a file over ``max_bytes``, bytes that are not UTF-8 (a byte-order mark is allowed and dropped), an
empty file, a header that names a column twice or lacks a required one, and a row whose field count differs from the
header's (a line cut short, or an extra field that would shift the values after it). :func:`numbers` then parses
columns as numbers within a range, naming the first bad line.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
>>> _ = p.write_text("name,cost_s\\na,0.5\\nb,1.5\\n")
>>> t = read_table(p, required=("name", "cost_s"))
>>> numbers(t, "cost_s", ge=0).tolist()
[0.5, 1.5]
>>> _ = p.write_text("name,cost_s\\na,0.5\\nb,1.5,7\\n")
>>> read_table(p)
Traceback (most recent call last):
...
workbench.tables.TableError: ...t.csv:3: 3 fields where the header has 2 (an extra field would shift the values after it)
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._contracts import Bool, FilePath, Frame, Items, Opaque, Real, Text, accepts

__all__ = ["TableError", "Table", "read_table", "numbers", "frame", "write_or_check", "MAX_TABLE_BYTES"]

#: The largest table a loader reads (the models' tables are kilobytes to a few megabytes).
MAX_TABLE_BYTES = 256 * 2**20


class TableError(ValueError):
    """A malformed table: the message names the file and the line."""


@dataclass(frozen=True)
class Table:
    """A checked CSV table: its path, header, rows (lists of stripped strings) and each row's line in the file."""

    path: Path
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    lines: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> list[str]:
        """The cells of column ``name``, as strings."""
        if name not in self.header:
            raise TableError(f"{self.path}:1: no column {name!r} (have {', '.join(self.header)})")
        j = self.header.index(name)
        return [r[j] for r in self.rows]

    def records(self) -> list[dict[str, str]]:
        """Each row as a dict by column name."""
        return [dict(zip(self.header, r, strict=True)) for r in self.rows]

    def where(self, k: int) -> str:
        """``path:line`` of row ``k``."""
        return f"{self.path}:{self.lines[k]}"


def _regular_file(path: Path, max_bytes: int) -> int:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (a FIFO, socket or device)"
        raise TableError(f"{path}: is {kind}; give a CSV file")
    if st.st_size > max_bytes:
        raise TableError(f"{path}: {st.st_size:,} bytes, over the {max_bytes:,}-byte limit for a table")
    return st.st_size


@accepts()
def read_table(
    path: str | os.PathLike, required: Sequence[str] = (), *, max_bytes: int = MAX_TABLE_BYTES, what: str = "table"
) -> Table:
    """Read a CSV table with a header, checking every line (see the module docstring); ``required`` columns must be
    present, ``what`` names the table in messages (``"carbon trace"``, ``"engine profile"``)."""
    path = Path(path)
    _regular_file(path, max_bytes)
    raw = path.read_bytes()
    if path.suffix == ".gz":  # a compressed table (the packet references' FCTs): checked as its text
        try:
            with gzip.open(path, "rb") as fh:
                raw = fh.read(max_bytes + 1)
        except (OSError, EOFError) as exc:
            raise TableError(f"{path}: not a readable gzip file ({exc})") from None
        if len(raw) > max_bytes:
            raise TableError(f"{path}: over the {max_bytes:,}-byte limit for a table once decompressed")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise TableError(f"{path}:{line}: not UTF-8 (byte 0x{raw[exc.start]:02x}); save the {what} as UTF-8") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise TableError(f"{path}:{line}: a NUL byte; the {what} is not a text file")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)  # strict: a quote left open at the end is an error
    header: list[str] | None = None
    rows: list[tuple[str, ...]] = []
    lines: list[int] = []
    try:
        for fields in reader:
            line = reader.line_num
            if not fields or all(not f.strip() for f in fields):
                continue  # a blank line
            cells = tuple(f.strip() for f in fields)
            if header is None:
                header = list(cells)
                seen: dict[str, int] = {}
                for i, name in enumerate(header, start=1):
                    if not name:
                        raise TableError(f"{path}:{line}: column {i} of the header has no name")
                    if name in seen:
                        raise TableError(
                            f"{path}:{line}: column {name!r} appears twice (columns {seen[name]} and {i}); which one "
                            "holds the data is ambiguous: remove or rename one"
                        )
                    seen[name] = i
                missing = [c for c in required if c not in seen]
                if missing:
                    raise TableError(
                        f"{path}:{line}: missing column(s) {', '.join(map(repr, missing))} of the {what} "
                        f"(have {', '.join(header)})"
                    )
                continue
            if len(cells) != len(header):
                why = (
                    "a line cut short, or a missing field" if len(cells) < len(header)
                    else "an extra field would shift the values after it"
                )  # fmt: skip
                raise TableError(f"{path}:{line}: {len(cells)} fields where the header has {len(header)} ({why})")
            rows.append(cells)
            lines.append(line)
    except csv.Error as exc:
        raise TableError(f"{path}:{reader.line_num}: malformed CSV ({exc})") from None
    if header is None:
        raise TableError(f"{path}: empty {what} (no header)")
    return Table(path, tuple(header), tuple(rows), tuple(lines))


@accepts(name=Text(), ge=Real(optional=True), gt=Real(optional=True), le=Real(optional=True), lt=Real(optional=True))
def numbers(
    table: Table,
    name: str,
    *,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
    empty: float | None = None,
    integer: bool = False,
) -> np.ndarray:
    """Column ``name`` of ``table`` as finite numbers within the bounds (an empty cell is ``empty`` when given, else
    an error); the first bad cell is a :class:`TableError` naming the file, the line and the allowed range."""
    cells = table.column(name)
    out = np.empty(len(cells))
    for k, cell in enumerate(cells):
        if cell == "" and empty is not None:
            out[k] = empty
            continue
        try:
            v = float(cell)
        except ValueError:
            raise TableError(f"{table.where(k)}: column {name!r} is not a number: {cell!r}") from None
        if not math.isfinite(v):
            raise TableError(f"{table.where(k)}: column {name!r} must be a finite number, got {cell!r}")
        bad = (
            (ge is not None and v < ge) or (gt is not None and v <= gt)
            or (le is not None and v > le) or (lt is not None and v >= lt)
        )  # fmt: skip
        if bad or (integer and v != round(v)):
            allowed = " and ".join(
                f"{op} {b:g}" for op, b in ((">=", ge), (">", gt), ("<=", le), ("<", lt)) if b is not None
            )
            kind = "an integer" if integer else "a number"
            raise TableError(f"{table.where(k)}: column {name!r} must be {kind} {allowed}, got {cell!r}")
        out[k] = v
    return out


@accepts(required=Items(Text()), what=Text(), read_csv=Opaque("keyword arguments of pandas.read_csv"))
def frame(path: str | os.PathLike, required: Sequence[str] = (), *, what: str = "table", **read_csv):
    """:func:`read_table`'s checks, then the table as pandas reads it (``read_csv`` keywords passed on): for the
    loaders that parse with pandas, so a duplicated column or a cut line is an error naming the line, never a silent
    ``name.1`` column or a row of NaN."""
    import pandas as pd

    read_table(path, required, what=what)
    return pd.read_csv(path, encoding="utf-8-sig", **read_csv)


@accepts(
    table=Frame(("value",)),
    out=FilePath("any"),
    check=Bool(),
    rtol=Real(ge=0, le=1),
    keys=Items(Text()),
    float_format=Text(),
)
def write_or_check(
    table, out: str | os.PathLike, *, check: bool, rtol: float, keys: Sequence[str] = (), float_format: str = "%.6g"
) -> int:
    """The tail of every ``scripts/derive_*.py``: write a derived ``table`` to ``out`` (CSV), or with ``check`` compare
    it with the committed file instead -- same rows, the same ``keys`` columns, and every ``value`` within ``rtol`` --
    printing what to do when they differ. Returns the script's exit status (1: the committed table is stale).

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "curve.csv"
    >>> t = pd.DataFrame({"tp": [1, 2], "value": [0.5, 0.25]})
    >>> write_or_check(t, out, check=False, rtol=0.01)
    wrote 2 rows to ...curve.csv
    0
    >>> write_or_check(t.assign(value=[0.5, 0.3]), out, check=True, rtol=0.01, keys=("tp",))
    1
    """
    if not check:
        table.to_csv(out, index=False, float_format=float_format)
        print(f"wrote {len(table)} rows to {out}")
        return 0
    old = frame(out, ("value", *keys), what="derived table", keep_default_na=False)
    same = len(old) == len(table) and bool(
        np.allclose(old["value"].to_numpy(float), table["value"].to_numpy(float), rtol=rtol, atol=1e-9)
    )
    same = same and all((old[k].astype(str).to_numpy() == table[k].astype(str).to_numpy()).all() for k in keys)
    if not same:
        print(f"{out} differs from what its inputs give; rerun without --check", file=sys.stderr)
    return 0 if same else 1
