"""Run registered experiments at the ends of their declared ranges (every numeric parameter at its low and its high
end, the others at their defaults) or at random points inside them (``--random N``: every parameter drawn at once),
each point in its own process, stopped past a time or a memory limit.

An experiment's ``Param`` ranges are a promise to whoever sweeps it or moves its explore panel's controls: a value
inside them runs, or fails with an error that names what to change (``ARCHITECTURE.md``, "Input contracts"). The
conformance test runs each experiment's ``small`` grid only; this script checks the promise at its edges, where a
point can need minutes or gigabytes (on 2026-11-30 it found six such ends, each now refused by name before it
allocates: a diagnosis job's metrics at 100x noise, 1e6 preemption conversations' token gaps, 1e11 hashed balls, 5e8
pooled waits, and execution graphs of 1e6 sequences in training-what-if and training-dse).

Each point ends as one of:

* ``ok`` -- the point function returned;
* ``refused`` -- a ``ValueError`` or ``TypeError`` (its message is printed: it should say what to lower);
* ``memory`` -- a ``MemoryError``, or resident memory past ``--memory-gb`` (a defect: the range admits a point
  that cannot run where a researcher runs it);
* ``slow`` -- still running after ``--timeout`` seconds (the range's end needs minutes; say so in the ``Param``'s
  doc, or bound it);
* ``crash`` -- any other exception (a defect).

Random points find what the ends alone do not: combinations. On 2026-11-30 six per experiment found a packet run
inside ``pred-fct-vs-load``'s ranges (1,071 hosts at 55 Gbit/s for 7.6 s: 30 M flows) that ran out of memory, now
refused by ``MAX_FLOW_PATHS``, and a declared real-valued ``size_bytes`` that ``uplink-loads`` refused whenever it
was not whole. A drawn value lies inside its declared range; an unbounded top is drawn up to ten times the default
(so that most points finish), log-uniformly where the range spans more than a factor of 100.

Usage::

    python scripts/probe_experiment_edges.py                      # every registered experiment, both ends
    python scripts/probe_experiment_edges.py llm-preemption --ends high --timeout 60
    python scripts/probe_experiment_edges.py --random 6 --seed 1 --timeout 45   # six random points of each

Exit status 1 when any point ends in ``memory`` or ``crash``. Points run one at a time (each may use every core);
the sweep cache is not read or written (``WORKBENCH_CACHE`` points at a temporary directory for the run).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

import psutil

from workbench import experiments as ex

#: Outcomes that are defects of the experiment (its declared range admits a point that cannot run).
DEFECTS = ("memory", "crash")


def edge_points(name: str, ends: tuple[str, ...]) -> list[tuple[str, object]]:
    """``(parameter, value)`` of each numeric parameter's declared end (inclusive, finite, not its default)."""
    exp = ex.get(name)
    out = []
    for p in exp.params:
        if p.choices is not None or p.kind in (bool, str):
            continue
        for end in ends:
            value, inclusive = (p.low, p.low_inclusive) if end == "low" else (p.high, p.high_inclusive)
            if value is None or not inclusive or abs(value) == float("inf"):
                continue
            value = int(value) if p.kind is int else float(value)
            if value != p.default:
                out.append((p.name, value))
    return out


def _draw(p: ex.Param, rng: random.Random) -> object:
    """One value of ``p`` inside its declared range (see the module's docstring for how)."""
    if p.choices is not None:
        return rng.choice(p.choices)
    if p.kind is bool:
        return rng.random() < 0.5
    if p.kind is str:
        return p.default
    cap = 10 * max(abs(p.default), 1)
    lo = -cap if p.low is None else p.low
    hi = max(cap, lo + 1) if p.high is None else min(p.high, max(cap, lo + 1))
    while True:
        if lo > 0 and hi / lo > 100:
            value = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        else:
            value = rng.uniform(lo, hi)
        if p.kind is int:
            value = min(math.floor(hi), max(math.ceil(lo), round(value)))
            if p.multiple:  # the nearest multiple inside the range
                m = p.multiple
                value = min(math.floor(hi / m) * m, max(math.ceil(lo / m) * m, round(value / m) * m))
        open_end = (value == p.low and not p.low_inclusive) or (value == p.high and not p.high_inclusive)
        if not open_end:
            return value


def random_points(name: str, count: int, seed: int) -> list[dict]:
    """``count`` points of ``name``, every parameter drawn inside its declared range (:func:`_draw`); the same
    ``seed`` gives the same points."""
    exp = ex.get(name)
    rng = random.Random(f"{seed}:{name}")
    return [{p.name: _draw(p, rng) for p in exp.params} for _ in range(count)]


def _child(name: str, point_json: str) -> None:
    """Run one point (its parameters over the defaults) in this process and print its outcome as one JSON line."""
    exp = ex.get(name)
    point = exp.defaults()
    point.update({k: exp.param(k).validate(v) for k, v in json.loads(point_json).items()})
    t0 = time.perf_counter()
    try:
        exp.fn(**point, seed=0)
        outcome, message = "ok", ""
    except MemoryError as err:
        outcome, message = "memory", f"{type(err).__name__}: {err}"
    except (ValueError, TypeError) as err:
        outcome, message = "refused", f"{type(err).__name__}: {err}"
    except Exception as err:  # every other exception is the finding
        outcome, message = "crash", f"{type(err).__name__}: {err}"
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    seconds = time.perf_counter() - t0
    print(json.dumps({"outcome": outcome, "message": message, "seconds": seconds, "peak_gb": peak_gb}))


def probe(name: str, point: dict, *, timeout_s: float, memory_gb: float) -> dict:
    """One point (``{parameter: value}`` over the defaults) in a child process, stopped when its resident memory
    passes ``memory_gb`` or after ``timeout_s``."""
    cmd = [sys.executable, __file__, "--child", name, json.dumps(point)]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        proc = psutil.Process(child.pid)
        stopped = None
        while child.poll() is None:
            try:
                rss_gb = proc.memory_info().rss / 2**30
            except psutil.NoSuchProcess:
                break
            if rss_gb > memory_gb:
                stopped = {"outcome": "memory", "message": f"resident memory passed {memory_gb:g} GB"}
            elif time.perf_counter() - t0 > timeout_s:
                stopped = {"outcome": "slow", "message": f"still running after {timeout_s:g} s"}
            if stopped:
                child.kill()
                child.wait()
                return {**stopped, "seconds": time.perf_counter() - t0}
            time.sleep(0.05)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if lines:
        return json.loads(lines[-1])
    tail = (stderr.strip().splitlines() or [f"exit status {child.returncode}"])[-1]
    outcome = "memory" if "MemoryError" in stderr or child.returncode == -9 else "crash"
    return {"outcome": outcome, "message": tail, "seconds": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="experiments (default: every registered one)")
    parser.add_argument("--ends", choices=("low", "high", "both"), default="both")
    parser.add_argument("--random", type=int, default=0, metavar="N", help="N random interior points per experiment")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random points (default 0)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per point (default 120)")
    parser.add_argument("--memory-gb", type=float, default=8.0, help="resident memory per point (default 8)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(*args.child)
        return 0
    names = args.names or list(ex.names())
    for n in names:
        ex.get(n)  # an unknown name fails here, listing the registered ones
    ends = ("low", "high") if args.ends == "both" else (args.ends,)
    os.environ["WORKBENCH_CACHE"] = tempfile.mkdtemp(prefix="workbench-probe-")
    counts: dict[str, int] = {}
    for name in names:
        if args.random:
            points = random_points(name, args.random, args.seed)
        else:
            points = [{param: value} for param, value in edge_points(name, ends)]
        for point in points:
            r = probe(name, point, timeout_s=args.timeout, memory_gb=args.memory_gb)
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
            note = f"  {r['message'][:200]}" if r["message"] else ""
            shown = ", ".join(f"{k}={v!r}" for k, v in point.items())
            print(f"{r['outcome']:8s} {r['seconds']:7.1f} s  {name} {shown}{note}", flush=True)
    print("points: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if any(counts.get(k) for k in DEFECTS) else 0


if __name__ == "__main__":
    sys.exit(main())
