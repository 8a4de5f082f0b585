"""Content fingerprints of data files: what every cache key and every recorded data dependency is computed from.

:func:`fingerprint` is the sha256 of a whole file (what ``fetch`` verifies and records, so one hash serves both);
:func:`path_digest` extends it to directories and missing paths. Within one process the fingerprint of an unchanged
file is remembered (keyed by device, inode, size, modification and change time); a file whose change time is within
:data:`RACY_WINDOW_S` of when it was hashed is always hashed again, so an edit made in the same clock tick as the hash
is not missed (the "racy" case git guards against too). Re-exported by :mod:`workbench.cache`; a module of its own so
that the dependency recorder (:mod:`workbench._deps`) and the cache, which keys entries by code, need not import
each other.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

from ._contracts import accepts

__all__ = ["RACY_WINDOW_S", "fingerprint", "path_digest"]

#: A file changed less than this long before it was hashed is re-hashed on every use (see the module notes).
RACY_WINDOW_S = 2.0

_CHUNK_BYTES = 1 << 20


_fp_lock = threading.Lock()
_fp_memo: dict[tuple[int, int], tuple[tuple[int, int, int], int, str]] = {}


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_CHUNK_BYTES):
            h.update(block)
    return h.hexdigest()


@accepts()
def fingerprint(path: str | os.PathLike) -> str:
    """Hex sha256 of the whole file ``path`` (remembered while the file is unchanged, see the module notes).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x"
    >>> _ = p.write_bytes(b"abc")
    >>> fingerprint(p)[:16]
    'ba7816bf8f01cfea'
    """
    p = Path(path)
    st = p.stat()
    ident = (st.st_dev, st.st_ino)
    sig = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _fp_lock:
        known = _fp_memo.get(ident)
    if known is not None and known[0] == sig and st.st_ctime_ns < known[1] - int(RACY_WINDOW_S * 1e9):
        return known[2]
    hashed_at_ns = time.time_ns()
    digest = _sha256_file(p)
    after = p.stat()
    if (after.st_size, after.st_mtime_ns, after.st_ctime_ns) == sig:  # not modified while we read it
        with _fp_lock:
            _fp_memo[ident] = (sig, hashed_at_ns, digest)
    return digest


@accepts()
def path_digest(path: str | os.PathLike | None) -> str:
    """What a data dependency is checked against: ``"missing"`` for ``None`` or a path that does not exist, the
    file's :func:`fingerprint`, or for a directory a sha256 over every file below it (relative name and
    fingerprint; hidden files, checksum sidecars and partial downloads left out).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.csv").write_text("1")
    >>> before = path_digest(d)
    >>> _ = (d / "a.csv").write_text("2")
    >>> path_digest(d) != before, path_digest(d / "nope")
    (True, 'missing')
    """
    if path is None:
        return "missing"
    p = Path(path)
    try:
        if p.is_file():
            return fingerprint(p)
        if not p.is_dir():
            return "missing"
        h = hashlib.sha256(b"directory\0")
        for dirpath, dirnames, filenames in os.walk(p):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if name.startswith(".") or name.endswith((".sha256", ".part", ".tmp")):
                    continue
                f = Path(dirpath, name)
                h.update(f"{f.relative_to(p).as_posix()}\0{fingerprint(f)}\0".encode())
        return h.hexdigest()
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"


def forget() -> None:
    """Forget every remembered fingerprint (the next use of each file hashes it again)."""
    with _fp_lock:
        _fp_memo.clear()
