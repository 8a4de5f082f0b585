"""The HTTP transfer behind :func:`workbench.data.fetch`: one file into a ``.part``, resumed with Range requests after a
drop or stall (bounded retries with backoff), restarted when the server ignores Range, then checked for length and
sha256 before the caller renames it into place. Loopback tests: ``tests/test_data_fetch.py``, ``tests/faults/``."""

from __future__ import annotations

import http.client
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from .cache import fingerprint

__all__ = ["ChecksumError", "DownloadError", "download", "check_complete", "say"]


class ChecksumError(ValueError):
    """A file does not match its registered (or first-recorded) sha256 or size; the message says what was kept."""


class DownloadError(ConnectionError):
    """A download failed after its retries (HTTP error, dropped or stalled connection); the message names the URL
    and says where the partial file is kept for the next ``fetch`` to resume."""


_RETRYABLE_HTTP = frozenset({408, 425, 429, 500, 502, 503, 504})


class _Dropped(Exception):
    """One attempt ended early in a way a retry can fix (the partial file keeps what arrived)."""


def say(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, file=sys.stderr)


def _size(p: Path) -> int:
    return p.stat().st_size if p.exists() else 0


def _range_total(headers) -> tuple[int | None, int | None]:
    """(first byte, total size) from a ``Content-Range: bytes a-b/N`` (or ``bytes */N``) header."""
    m = re.match(r"\s*bytes\s+(\d+|\*)(?:-\d+)?/(\d+|\*)", headers.get("Content-Range", "") if headers else "")
    if not m:
        return None, None
    first = int(m.group(1)) if m.group(1) != "*" else None
    return first, int(m.group(2)) if m.group(2) != "*" else None


def _attempt(
    url: str, part: Path, *, timeout_s: float, progress: bool, label: str, expected_size: int | None, log: list[str]
) -> int | None:
    """One request: append to ``part`` from its size with a Range request (restart from zero when the server sends
    the whole file; ``log`` gets "resumed", "restarted" or "new"). Returns the total size the server announced, or
    ``None``. ``timeout_s`` bounds every read; a body shorter than ``Content-Length`` (or, without one, than
    ``expected_size``) is a drop."""
    from tqdm.auto import tqdm

    have = _size(part)
    req = urllib.request.Request(url, headers={"User-Agent": "workbench-data-fetch"})
    if have:
        req.add_header("Range", f"bytes={have}-")
    try:
        resp = urllib.request.urlopen(req, timeout=timeout_s)  # URLs come from the registry or the user
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:
            _, total = _range_total(exc.headers)
            if total == have:
                return total
            part.unlink()  # the partial file is longer than the file upstream: start over
            raise _Dropped(f"the partial file ({have} bytes) is longer than the file upstream ({total})") from None
        if exc.code in _RETRYABLE_HTTP:
            raise _Dropped(f"HTTP {exc.code} {exc.reason}") from None
        raise DownloadError(f"download of {url} failed: HTTP {exc.code} {exc.reason}") from None
    except TimeoutError:
        raise _Dropped(f"no response in {timeout_s:g} s") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        raise _Dropped(str(getattr(exc, "reason", exc)) or type(exc).__name__) from None
    with resp:
        length_header = resp.headers.get("Content-Length")
        length = int(length_header) if length_header and length_header.isdigit() else None
        if resp.status == 206 and have:
            first, total = _range_total(resp.headers)
            if first != have:
                part.unlink()
                raise _Dropped(f"the server answered a Range request from byte {have} with bytes from {first}")
            mode = "ab"
            log.append("resumed")
        else:
            mode = "wb"
            log.append("restarted" if have else "new")
            have, total = 0, length
        got = 0
        with (
            open(part, mode) as out,
            tqdm(
                total=total,
                initial=have,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                desc=label,
                disable=not progress,
                file=sys.stderr,
            ) as bar,
        ):
            while True:
                try:
                    block = resp.read1(1 << 16)  # what has arrived, so a stall keeps every byte received
                except TimeoutError:
                    raise _Dropped(f"no data for {timeout_s:g} s after {have + got} bytes") from None
                except (OSError, http.client.HTTPException) as exc:
                    raise _Dropped(f"connection lost after {have + got} bytes ({type(exc).__name__})") from None
                if not block:
                    break
                try:
                    out.write(block)
                except OSError as exc:
                    raise OSError(
                        exc.errno,
                        f"writing {part} failed ({exc.strerror}); the partial download is kept "
                        "and the next fetch resumes it",
                    ) from None
                got += len(block)
                bar.update(len(block))
        if length is not None and got < length:
            raise _Dropped(f"connection closed after {have + got} of {have + length} bytes")
        if length is None and expected_size is not None and have + got < expected_size:
            raise _Dropped(f"connection closed after {have + got} of {expected_size} bytes (no Content-Length)")
    return total


def download(
    url: str,
    part: Path,
    *,
    label: str,
    expected_size: int | None,
    timeout_s: float,
    retries: int,
    backoff_s: float,
    progress: bool,
    quiet: bool,
) -> tuple[int | None, list[str]]:
    """Download into ``part``, allowing ``retries`` consecutive attempts that make no progress and waiting
    ``backoff_s * 2**k`` (at most 30 s) before each. Returns (announced total size or ``None``, what each attempt
    did: "new", "resumed", "restarted"). Raises :class:`DownloadError` naming the URL."""
    failures = 0
    log: list[str] = []
    while True:
        before = _size(part)
        try:
            total = _attempt(
                url, part, timeout_s=timeout_s, progress=progress, label=label, expected_size=expected_size, log=log
            )
            return total, log
        except _Dropped as exc:
            after = _size(part)
            failures = 0 if after > before else failures + 1
            if failures > retries:
                if part.exists() and after == 0:
                    part.unlink()
                kept = (
                    f"; the partial file {part} ({after} bytes) is kept and the next fetch resumes it" if after else ""
                )
                raise DownloadError(
                    f"download of {url} failed: {exc} (gave up after {retries} retries){kept}"
                ) from None
            wait = min(30.0, backoff_s * 2 ** max(failures - 1, 0))
            say(f"{label}: {exc}; retrying in {wait:g} s with {after} bytes kept", quiet)
            time.sleep(wait)


def check_complete(part: Path, url: str, total: int | None, *, size_bytes: int | None, sha256: str | None) -> str:
    """Byte count against the server's total and the registry, then sha256 against the registry; a mismatch
    deletes ``part`` (its bytes are wrong, not short) and raises :class:`ChecksumError`."""
    size = part.stat().st_size
    problems = []
    if total is not None and size != total:
        problems.append(f"{size} bytes, the server announced {total}")
    if size_bytes is not None and size != size_bytes:
        problems.append(f"{size} bytes, the registry says {size_bytes}")
    got = fingerprint(part)
    if not problems and sha256 is not None and got != sha256:
        problems.append(f"sha256 mismatch: expected {sha256}, got {got} ({size} bytes)")
    if problems:
        part.unlink()
        raise ChecksumError(
            f"{part.name[:-5]} from {url}: {'; '.join(problems)}; deleted the partial file {part}. "
            "Run fetch again to restart the download."
        )
    return got
