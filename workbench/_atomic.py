"""The one writer of files: a temporary file beside the target, fsynced and renamed over it (:func:`atomic_path`),
so a reader never sees half a file and a failed write leaves the old one; and the check that a target is a regular
file (:func:`check_target`). Every file the project writes (cache entries, sweep records, scoreboard, figures,
replays, exports) goes through it; :mod:`workbench.cache` re-exports both. It sits below the caches and the code
fingerprints (:mod:`workbench._deps`, whose stored import lists it writes), so it imports neither.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from ._contracts import accepts

__all__ = ["atomic_path", "check_target"]


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on directories
        pass
    finally:
        os.close(fd)


@accepts()
def check_target(path: str | os.PathLike, *, overwrite: bool) -> Path:
    """Refuse to write over what is not a regular file: a directory, a FIFO, a device or a socket always; an existing
    file or a dangling symlink unless ``overwrite`` (the CLI's ``--force``). Returns the path.

    Examples
    --------
    >>> check_target("/dev/null", overwrite=True)
    Traceback (most recent call last):
    ...
    IsADirectoryError: /dev/null is a character device, not a regular file; refusing to replace it
    """
    target = Path(path)
    if not os.path.lexists(target):
        return target
    if target.is_symlink() and not target.exists():
        if not overwrite:
            raise FileExistsError(f"{target} is a dangling symbolic link; pass --force (overwrite=True) to replace it")
        return target
    st = target.stat()
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "directory"
            if stat.S_ISDIR(st.st_mode)
            else "FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "character device"
            if stat.S_ISCHR(st.st_mode)
            else "block device"
            if stat.S_ISBLK(st.st_mode)
            else "socket"
        )
        raise IsADirectoryError(f"{target} is a {kind}, not a regular file; refusing to replace it")
    if not overwrite:
        raise FileExistsError(f"{target} exists; pass --force (overwrite=True) to replace it")
    return target


_swept_dirs: set[tuple[str, str]] = set()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - another user's live process
        return True
    return True


def _remove_stale_temporaries(directory: Path, name: str) -> None:
    """Delete ``.<name>.<pid>.<hex>.tmp`` files left in ``directory`` by processes that no longer run (a writer
    killed with SIGKILL cannot clean up after itself). Once per directory and target name per process."""
    key = (str(directory), name)
    if key in _swept_dirs:
        return
    _swept_dirs.add(key)
    prefix = f".{name}."
    try:
        entries = [e for e in os.scandir(directory) if e.name.startswith(prefix) and e.name.endswith(".tmp")]
    except OSError:
        return
    for e in entries:
        pid_text = e.name[len(prefix) :].split(".", 1)[0]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and not _pid_alive(int(pid_text)):
            with contextlib.suppress(OSError):
                os.unlink(e.path)


@accepts()
@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, overwrite: bool = True) -> Iterator[Path]:
    """Context manager yielding a temporary path in ``path``'s directory; on success the file is fsynced and renamed
    over ``path``, on any error (SIGINT, and SIGTERM under the ``workbench`` command, included) it is deleted and
    ``path`` is left as it was. The project's one writer of output and cache files.

    The target must be a regular file or absent (:func:`check_target`: directories, FIFOs and devices are refused);
    ``overwrite=False`` raises :class:`FileExistsError` (before anything is written, and again before the rename)
    when ``path`` exists or is a dangling symlink. The temporary file gets a unique name
    ``.<name>.<pid>.<random>.tmp``; temporaries of dead processes beside the target are removed. It is created with
    the process umask, like a plain ``open``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('done', ['out.txt'])
    """
    target = check_target(path, overwrite=overwrite)
    directory = target.parent
    _remove_stale_temporaries(directory, target.name)
    tmp = None
    for _ in range(100):
        candidate = directory / f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:  # pragma: no cover - 32 random bits collided
            continue
        os.close(fd)
        tmp = candidate
        break
    if tmp is None:  # pragma: no cover
        raise FileExistsError(f"could not create a temporary file beside {target}")
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            fh.flush()
            os.fsync(fh.fileno())
        check_target(target, overwrite=overwrite)  # again: something may have appeared while we wrote
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(directory)
