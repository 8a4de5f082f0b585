"""Run a command and report the CPU time of every process it started, orphans included, grouped by kind.

``/usr/bin/time`` counts only the processes their parents waited for. A test run leaves many that nobody waits
for: Chromium's processes, the kernels Lab and Voilà stop, daemons started by subprocesses. Their CPU is missing from
its total (about a tenth of ``make test``'s, measured: docs/test_time.md). This script makes itself the child
subreaper (Linux ``PR_SET_CHILD_SUBREAPER``), so every descendant stays in its process tree when its parent exits,
and reads each descendant's cumulative CPU (``utime + stime`` of ``/proc/<pid>/stat``) every ``--interval`` seconds.
A process that lives less than one interval can be missed; its CPU is at most that interval.

Usage::

    python scripts/cpu_by_process.py [--interval 0.5] [--json out.json] -- make test

It prints the wall time, the CPU per kind of process (the command line reduced to a short label: ``python -m X`` as
``X``, a script as its name, Chromium's processes by ``--type``) and the processes that used the most. The command's
exit status is the script's.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float, float] | None:
    """(parent pid, CPU seconds, start time in ticks) of ``pid``, or None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = raw[raw.rindex(")") + 2 :].split()
    return int(rest[1]), (int(rest[11]) + int(rest[12])) / TICK, float(rest[19])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def label(cmd: str) -> str:
    """A short name for a process's kind, from its command line."""
    if not cmd:
        return "(no command line: read while it was exec'ing)"
    words = cmd.split()
    exe = Path(words[0]).name
    if "chrom" in exe:
        kind = next((w.split("=", 1)[1] for w in words if w.startswith("--type=")), "browser")
        return f"chromium {kind}"
    if exe.startswith("python"):
        args = [w for w in words[1:] if w not in ("-u", "-B", "-E", "-s")]
        if len(args) >= 2 and args[0] == "-m":
            return args[1]
        if args and args[0] == "-c":
            return "python -c"
        if args:
            return Path(args[0]).name
    return exe


def _descendants(root: int, procs: dict[int, tuple[int, float, float]]) -> set[int]:
    children = defaultdict(list)
    for pid, (ppid, _, _) in procs.items():
        children[ppid].append(pid)
    out, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between samples (default 0.5)")
    parser.add_argument("--json", type=Path, help="write every process (label, command, CPU) here")
    parser.add_argument("--top", type=int, default=15, help="processes listed by CPU (default 15)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    if args.interval <= 0:
        parser.error(f"--interval must be > 0 seconds, got {args.interval}")
    if not sys.platform.startswith("linux"):
        parser.error("reads /proc and uses PR_SET_CHILD_SUBREAPER: Linux only")
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        parser.error(f"prctl(PR_SET_CHILD_SUBREAPER) failed: {os.strerror(ctypes.get_errno())}")

    seen: dict[tuple[int, float], dict] = {}  # (pid, start) -> command, CPU
    me = os.getpid()
    start = time.monotonic()
    proc = subprocess.Popen(command)
    code: list[int | None] = [None]

    def sample() -> None:
        procs = {}
        for name in os.listdir("/proc"):
            if name.isdigit() and (st := _stat(int(name))) is not None:
                procs[int(name)] = st
        for pid in _descendants(me, procs):
            _, cpu, started = procs[pid]
            row = seen.setdefault((pid, started), {"pid": pid, "cmd": "", "cpu": 0.0})
            # read every time: a forked child shows its parent's command line until it execs, and an empty one while
            # it execs
            row["cmd"] = _cmdline(pid) or row["cmd"]
            row["cpu"] = cpu

    def reap() -> None:
        """Wait for what exited: the command (its status is ours) and the orphans reparented to us."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == proc.pid:
                code[0] = proc.returncode = os.waitstatus_to_exitcode(status)

    signal.signal(signal.SIGINT, lambda *_: proc.send_signal(signal.SIGINT))
    while code[0] is None:
        sample()
        reap()
        if code[0] is None:
            time.sleep(args.interval)
    wall = time.monotonic() - start

    rows = [dict(r, label=label(r["cmd"])) for r in seen.values()]
    total = sum(r["cpu"] for r in rows)
    kinds: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for r in rows:
        kinds[r["label"]][0] += 1
        kinds[r["label"]][1] += r["cpu"]
    print(f"\nwall {wall:,.0f} s; CPU of {len(rows)} processes {total:,.0f} s ({total / wall:.0%} of one core)")
    print(f"{'CPU (s)':>9} {'procs':>6}  kind")
    for name, (n, cpu) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        print(f"{cpu:9,.1f} {n:6d}  {name}")
    print(f"\n{'CPU (s)':>9}  the {args.top} processes that used the most")
    for r in sorted(rows, key=lambda r: -r["cpu"])[: args.top]:
        print(f"{r['cpu']:9,.1f}  {r['cmd'][:110]}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return code[0] if code[0] is not None else 1


if __name__ == "__main__":
    sys.exit(main())
