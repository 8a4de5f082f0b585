"""The files a replay reads: htsim connection matrices (``.cm``: ``Nodes N``, ``Connections C``, then ``SRC->DST id ID
start PS size BYTES``) and the per-flow spines of a reference run (``.spines``: ``ID SPINE``), each malformed line one
``ValueError`` naming the file and line; their writers; and either gzip-compressed (a name ending ``.gz``).
:mod:`workbench.aqm.replay` re-exports both readers.

This module imports nothing from the workbench but its input contracts (``_contracts``, which needs numpy only):
``scripts/ns3_replay.py`` loads the two by path, outside the project's environment.
"""

from __future__ import annotations

import gzip
import io
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .._contracts import accepts

__all__ = ["read_connection_matrix", "read_spines", "write_connection_matrix", "write_spines", "MAX_HOSTS"]

#: The most hosts a replayed network may have (the per-packet engine keeps state per port and per host pair of a leaf).
MAX_HOSTS = 65536
_LINE = re.compile(r"^\s*(\d+)->(\d+)\s+id\s+(\d+)\s+start\s+(\d+)\s+size\s+(\d+)\s*$")
_HEADER = re.compile(r"^\s*(Nodes|Connections)\s+(\d+)\s*$")

#: Bounds on a .cm file's numbers: picosecond start times below 2**62 (53 days), sizes below 2**50 bytes (1 PiB).
_MAX_START_PS = 1 << 62
_MAX_SIZE_BYTES = 1 << 50


@accepts()
def read_connection_matrix(path: str | Path) -> pd.DataFrame:
    """Read an htsim connection matrix: ``Nodes N``, ``Connections C``, then ``SRC->DST id ID start PS size BYTES``.

    Start times are picoseconds in the file and seconds in the result. A malformed line, a host outside
    ``[0, N)``, a flow to itself, a zero size or a count that disagrees with ``Connections`` raises ``ValueError``
    naming the file and line.

    Returns
    -------
    DataFrame
        ``flow_id, src, dst, start_s, size_bytes`` in file order; ``attrs["n_hosts"]`` is ``N``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "m.cm"
    ...     _ = p.write_text("Nodes 4\\nConnections 1\\n0->3 id 1 start 2000000 size 1500\\n")
    ...     read_connection_matrix(p)[["src", "dst", "start_s", "size_bytes"]].values.tolist()
    [[0.0, 3.0, 2e-06, 1500.0]]
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if not path.is_file():  # a FIFO would block for ever, /dev/zero fill memory
        raise ValueError(f"{path}: not a regular file; give a .cm connection matrix")
    header: dict[str, int] = {}
    rows: list[tuple[int, int, int, int, int]] = []
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            m = _LINE.match(line)
            if m is None:
                h = _HEADER.match(line)
                if h is None or h.group(1) in header or rows:
                    raise ValueError(
                        f"{path}:{lineno}: expected 'SRC->DST id ID start PS size BYTES' (or a Nodes/"
                        f"Connections header before the flows), got {line.strip()[:80]!r}"
                    )
                header[h.group(1)] = int(h.group(2))
                if h.group(1) == "Nodes" and not 2 <= header["Nodes"] <= MAX_HOSTS:
                    raise ValueError(f"{path}:{lineno}: Nodes must be in [2, {MAX_HOSTS}], got {header['Nodes']}")
                continue
            if "Nodes" not in header:
                raise ValueError(f"{path}:{lineno}: a 'Nodes N' line must come before the flows")
            src, dst, fid, start, size = (int(x) for x in m.groups())
            n = header["Nodes"]
            if src >= n or dst >= n:
                raise ValueError(f"{path}:{lineno}: host {max(src, dst)} outside 0..{n - 1} (Nodes {n})")
            if src == dst:
                raise ValueError(f"{path}:{lineno}: flow {fid} goes from host {src} to itself")
            if size < 1:
                raise ValueError(f"{path}:{lineno}: flow {fid} has size 0")
            if size >= _MAX_SIZE_BYTES or start >= _MAX_START_PS or fid >= 1 << 63:
                raise ValueError(
                    f"{path}:{lineno}: flow {fid}: start {start} ps or size {size} B is out of range "
                    f"(start < 2**62 ps, size < 2**50 B)"
                )
            rows.append((fid, src, dst, start, size))
    if "Nodes" not in header:
        raise ValueError(f"{path}: no 'Nodes N' line")
    if "Connections" in header and header["Connections"] != len(rows):
        raise ValueError(f"{path}: 'Connections {header['Connections']}' but {len(rows)} flow lines")
    a = np.array(rows, dtype=np.int64).reshape(-1, 5)
    df = pd.DataFrame(
        {"flow_id": a[:, 0], "src": a[:, 1], "dst": a[:, 2], "start_s": a[:, 3] * 1e-12, "size_bytes": a[:, 4]}
    )
    df.attrs["n_hosts"] = header["Nodes"]
    return df


_SPINE_LINE = re.compile(r"^\s*(\d+)\s+(-?\d+)\s*$")


@accepts()
def read_spines(path: str | Path, flows: pd.DataFrame, spines: int, hosts_per_leaf: int) -> np.ndarray:
    """Read a ``.spines`` file (``ID SPINE`` per line: the spine each flow of a connection matrix was pinned to,
    ``-1`` for a flow between two hosts of one leaf) and return the spine of every row of ``flows``.

    A malformed line, an id not among ``flows.flow_id`` or given twice, a spine outside ``0..spines-1``, ``-1`` for a
    flow across leaves (or a spine for one within a leaf), or a line count other than the number of flows raises
    one ``ValueError`` naming the file and line.

    Examples
    --------
    >>> import tempfile
    >>> flows = pd.DataFrame({"flow_id": [1, 2], "src": [0, 0], "dst": [3, 1]})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "m.spines"
    ...     _ = p.write_text("1 1\\n2 -1\\n")
    ...     read_spines(p, flows, spines=2, hosts_per_leaf=2).tolist()
    [1, -1]
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file (a .spines file: one 'ID SPINE' line per flow)")
    ids = flows["flow_id"].to_numpy(dtype=np.int64) if "flow_id" in flows else np.arange(1, len(flows) + 1)
    row_of = {int(i): r for r, i in enumerate(ids)}
    local = (flows["src"].to_numpy() // hosts_per_leaf) == (flows["dst"].to_numpy() // hosts_per_leaf)
    out = np.full(len(flows), -2, dtype=np.int64)
    lineno = 0
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            m = _SPINE_LINE.match(line)
            if m is None:
                raise ValueError(f"{path}:{lineno}: expected 'ID SPINE' (two integers), got {line.strip()[:80]!r}")
            fid, sp = int(m.group(1)), int(m.group(2))
            r = row_of.get(fid)
            if r is None:
                raise ValueError(f"{path}:{lineno}: flow id {fid} is not in the connection matrix")
            if out[r] != -2:
                raise ValueError(f"{path}:{lineno}: flow id {fid} is given twice")
            if not -1 <= sp < spines:
                raise ValueError(f"{path}:{lineno}: spine {sp} of flow {fid} outside 0..{spines - 1} (or -1)")
            if (sp == -1) != bool(local[r]):
                where = "within one leaf needs spine -1" if local[r] else "across leaves needs a spine, not -1"
                raise ValueError(f"{path}:{lineno}: flow {fid} {where}")
            out[r] = sp
    missing = int((out == -2).sum())
    if missing:
        raise ValueError(
            f"{path}:{lineno}: the file ends here but {missing} of the {len(flows)} flows have no spine "
            f"(first: id {int(ids[np.argmax(out == -2)])})"
        )
    return out


def _open_text(path: Path) -> io.TextIOBase:
    """A text file, gzip-decompressed if its name ends in ``.gz``."""
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return path.open(encoding="utf-8")


def _write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it (gzip without a timestamp if the name ends
    in ``.gz``, so the same text gives the same bytes)."""
    data = text.encode("utf-8")
    if path.suffix == ".gz":
        data = gzip.compress(data, compresslevel=9, mtime=0)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@accepts()
def write_connection_matrix(flows: pd.DataFrame, path: str | Path, n_hosts: int) -> Path:
    """Write ``flows`` (``flow_id, src, dst, start_s, size_bytes``, in file order) as an htsim connection matrix that
    :func:`read_connection_matrix` reads back exactly (start times rounded to whole picoseconds).

    Examples
    --------
    >>> import tempfile
    >>> f = pd.DataFrame({"flow_id": [1], "src": [0], "dst": [3], "start_s": [2e-6], "size_bytes": [1500]})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_connection_matrix(f, Path(d) / "m.cm.gz", n_hosts=4)
    ...     read_connection_matrix(p)[["src", "dst", "start_s", "size_bytes"]].values.tolist()
    [[0.0, 3.0, 2e-06, 1500.0]]
    """
    path = Path(path)
    src, dst = flows["src"].to_numpy(np.int64), flows["dst"].to_numpy(np.int64)
    if len(flows) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n_hosts or (src == dst).any()):
        raise ValueError(f"flows must go between two distinct hosts in 0..{n_hosts - 1}")
    start_ps = np.round(flows["start_s"].to_numpy(float) * 1e12).astype(np.int64)
    lines = [f"Nodes {n_hosts}", f"Connections {len(flows)}"]
    lines += [
        f"{a}->{b} id {i} start {t} size {z}"
        for a, b, i, t, z in zip(src, dst, flows["flow_id"].to_numpy(np.int64), start_ps, flows["size_bytes"])
    ]
    _write_text(path, "\n".join(lines) + "\n")
    return path


@accepts()
def write_spines(flows: pd.DataFrame, path: str | Path) -> Path:
    """Write the ``spine`` of every row of ``flows`` (``flow_id, spine``; ``-1`` within a leaf) as a ``.spines``
    file."""
    path = Path(path)
    ids, sp = flows["flow_id"].to_numpy(np.int64), flows["spine"].to_numpy(np.int64)
    _write_text(path, "".join(f"{i} {s}\n" for i, s in zip(ids, sp)))
    return path
