"""Hostile input by construction: every public function of the model packages declares what it accepts, and the cases
below are generated from those declarations (:mod:`workbench._contracts`), in the spirit of scikit-learn's
``check_estimator``.

For each public module: its docstring examples run with call recording on, which gives one valid call of every
contracted function (:func:`workbench._contracts.harvesting`); then, one parameter at a time, every value the
parameter's spec refuses (:meth:`~workbench._contracts.Spec.hostile`: NaN, infinities, negative, zero, huge, the
wrong type, empty) must raise ``TypeError``/``ValueError`` (or an ``OSError`` for a path) whose message names the
parameter, and every valid extreme (:meth:`~workbench._contracts.Spec.edges`) must return or raise such an error,
never another exception. The cases of one module run in a forked child with a time limit per case, so a hang is
reported as a failure naming the call instead of stopping the suite. A public function without a contract, or without
a runnable example, fails ``test_every_public_function_declares_a_contract``: a new module is covered the moment it
is public.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import os
import pkgutil
import select
import signal
import warnings

import pandas as pd
import pytest

import workbench
from workbench import _contracts as C
from workbench import data

#: Layers above the models: their inputs come from the model layer (figures, panels, claims) or are checked by
#: their own entry points (experiments' ``Param``s, the CLI's parser).
NOT_MODELS = (
    "workbench.viz",
    "workbench.widgets",
    "workbench.reproductions",
    "workbench.experiments",
    "workbench.cli",
    "workbench.workload_cli",
    "workbench.dashboards",
    "workbench.testing",
    "workbench.templates",
)

#: The model packages and the data layer: every public callable in them carries a contract.
CONTRACTED = (
    "workbench.arrivals",
    "workbench.distributions",
    "workbench.fabric",
    "workbench.aqm",
    "workbench.workloads",
    "workbench.serving",
    "workbench.training",
    "workbench.placement",
    "workbench.carbon",
    "workbench.microservices",
    "workbench.data",
    "workbench.cache",
    "workbench._atomic",
)

#: Seconds one generated call may take before it counts as a hang.
CASE_LIMIT_S = 20.0


def _in_scope(name: str) -> bool:
    return name.startswith(CONTRACTED) and not name.startswith(NOT_MODELS)


def _public_by_module() -> dict[str, dict[str, object]]:
    """Every public callable of the model packages (named in some module's ``__all__``, a package's re-exports
    included), by the module that defines it."""
    out: dict[str, dict[str, object]] = {}
    for info in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if not _in_scope(info.name) or any(p.startswith("_") for p in info.name.split(".")[1:]):
            continue  # a private module's names are public only where a public module re-exports them
        module = importlib.import_module(info.name)
        for n in getattr(module, "__all__", None) or []:
            obj = getattr(module, n, None)
            home = getattr(obj, "__module__", "") or ""
            if callable(obj) and _in_scope(home) and not inspect.ismodule(obj):
                out.setdefault(home, {})[getattr(obj, "__name__", n)] = obj
    return {k: out[k] for k in sorted(out)}


PUBLIC = _public_by_module()
MODULES = list(PUBLIC)


def _public(module) -> dict[str, object]:
    return PUBLIC.get(module.__name__, {})


def _needs_contract(obj) -> bool:
    if inspect.isclass(obj):  # an exception, an output record or an abstract base accepts nothing from a user
        return not (
            issubclass(obj, BaseException) or getattr(obj, "__output__", False) or obj.__init__ is object.__init__
        )
    return True


def _target(obj):
    """The contracted callable of a public object (a class's constructor) and how to call it."""
    if inspect.isclass(obj):
        return obj.__init__, obj
    return obj, obj


def _trace_file(layout: str = "timestamped") -> str:
    import tempfile
    from pathlib import Path

    p = Path(tempfile.mkdtemp()) / "t.csv"
    if layout == "burstgpt":
        p.write_text(
            "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
            "5,ChatGPT,10,20,30,Conversation log\n6,ChatGPT,10,198,208,API log\n"
        )
    else:
        p.write_text("arrival_s,input_tokens,output_tokens\n0.5,10,20\n1.0,100,198\n")
    return str(p)


def _rank_both():
    from workbench.aqm.mitigation_check import rank_both
    from workbench.fabric.mitigation import Fabric, LinkFailure

    fab = Fabric(leaves=2, spines=2, hosts_per_leaf=4)
    return rank_both(fab, [LinkFailure(0, 0, drop_rate=0.01)], 0.3, duration_s=0.002, mitigations=("none", "disable"))


def _convert():
    import tempfile
    from pathlib import Path

    from workbench.workloads.convert import convert

    return convert(_trace_file(), Path(tempfile.mkdtemp()) / "t.jsonl")


def _plans():
    from workbench.workloads.burstgpt import fit_model
    from workbench.workloads.servegen import load_pool
    from workbench.workloads.streaming import burstgpt_plan, servegen_plan
    from workbench.workloads.trace_analysis import burstgpt_trace

    burstgpt_plan(fit_model(burstgpt_trace("quick")), duration_s=600.0)
    return servegen_plan(load_pool("m-small"), start_s=0.0, duration_s=600.0)


def _tmp_file(name: str, text: str) -> str:
    import tempfile

    p = os.path.join(tempfile.mkdtemp(), name)
    with open(p, "w", encoding="utf-8") as fh:
        fh.write(text)
    return p


def _latency_summary():
    from workbench.serving import Deployment, serve

    reqs = pd.DataFrame({"arrival_s": [0.0, 0.1], "input_tokens": [100, 200], "output_tokens": [10, 20]})
    return _call("workbench.serving._common", "latency_summary", serve(reqs, Deployment("Llama-3.1-8B", "A100-80GB")))


def _write_spines():
    flows = pd.DataFrame({"flow_id": [0, 1], "spine": [3, -1]})
    return _call("workbench.aqm.cm_files", "write_spines", flows, _tmp_file("f.spines", "") + ".new")


def _small_workload() -> str:
    from workbench.aqm.validation import available, workloads

    names = [w for w in workloads()["workload"] if available(w)]
    return min(names, key=lambda w: ("30" not in w, w))  # a light-load one: its engine replay is quick


def _checksum_status():
    from workbench import data as d

    f = d.datasets()[0].files[0]
    return _call("workbench.data", "checksum_status", f, None)


def _profiled_layer():
    from workbench.serving.specs import gpu, model

    return _call("workbench.serving.opcurves", "profiled_layer", gpu("A100-80GB"), model("Llama-3.1-8B"), 1)


def _engine_profile():
    from dataclasses import asdict

    from workbench.serving.engines import EngineProfile, engine

    return EngineProfile(**asdict(engine("vllm")))


def _register_model():
    from dataclasses import asdict

    from workbench.serving.specs import model

    return _call("workbench.serving.specs", "register_model", asdict(model("Llama-3.1-8B")) | {"model": "hostile-copy"})


def _load_specs():
    from workbench.data import require

    head = require("serving_specs/gpus.csv").read_text(encoding="utf-8").splitlines()[:2]
    first = head[1].split(",", 1)
    return _call(
        "workbench.serving.specs", "load_specs", _tmp_file("g.csv", "\n".join([head[0], "hostile-gpu," + first[1]]))
    )


#: Functions whose valid call downloads (perturbing it would reach the network): their argument checks, which run
#: before any download, are driven by tests/test_data_fetch.py and tests/faults/test_fetch_faults.py.
NETWORK = {"fetch"}

#: Valid calls of public functions whose examples need real data (made only when it is on the search path) or that
#: no docstring example calls: ``(data files the call needs, call)``.
EXTRA_CALLS: dict[str, tuple[tuple[str, ...], object]] = {
    "sample_jobs": (
        ("carbon-dag/tpch/10g/q01.json",),
        lambda: _call("workbench.carbon.cluster", "sample_jobs", 3, seed=1),
    ),
    "load_job": (("carbon-dag/tpch/10g/q01.json",), lambda: _call("workbench.carbon.dags", "load_job", 1, "10g")),
    "load_jobs": (("carbon-dag/tpch/10g/q01.json",), lambda: _call("workbench.carbon.dags", "load_jobs", ("10g",))),
    "read_hourly_csv": (
        ("carbon-dag/carbon-intensity/DE-LU/DE-LU_2023_hourly.csv",),
        lambda: _call(
            "workbench.carbon.traces",
            "read_hourly_csv",
            _data("carbon-dag/carbon-intensity/DE-LU/DE-LU_2023_hourly.csv"),
        ),
    ),
    "load_trace[carbon]": (
        ("carbon-dag/carbon-intensity/DE-LU/DE-LU_2023_hourly.csv",),
        lambda: _call("workbench.carbon.traces", "load_trace", "DE", 2023),
    ),
    "load_instances": (
        ("rlhfuse-schedules/instances.csv",),
        lambda: _call("workbench.training.fused_pipeline", "load_instances"),
    ),
    "published_schedule": (
        ("rlhfuse-schedules/traces/trace_exp0.txt",),
        lambda: _call("workbench.training.fused_pipeline", "published_schedule", 0),
    ),
    "read_schedule": (
        ("rlhfuse-schedules/traces/trace_exp0.txt",),
        lambda: _call(
            "workbench.training.fused_pipeline", "read_schedule", _data("rlhfuse-schedules/traces/trace_exp0.txt")
        ),
    ),
    "rank_both": ((), _rank_both),
    "convert": ((), _convert),
    "load_trace[workloads]": (
        (),
        lambda: _call("workbench.workloads.formats", "load_trace", _trace_file("burstgpt"), cache=False),
    ),
    "detect_format": ((), lambda: _call("workbench.workloads.formats", "detect_format", _trace_file("burstgpt"))),
    "plans": ((), _plans),
    "load_mooncake": (
        ("mooncake-fast25/conversation_trace.jsonl",),
        lambda: _call(
            "workbench.workloads.traces.formats", "load_mooncake", _data("mooncake-fast25/conversation_trace.jsonl")
        ),
    ),
    "balance": ((), lambda: _call("workbench.serving._common", "balance", 10, 3, "random", seed=0)),
    "latency_summary": ((), _latency_summary),
    "write_spines": ((), _write_spines),
    "load_workload": ((), lambda: _call("workbench.aqm.validation", "load_workload", _small_workload())),
    "reference_fct": ((), lambda: _call("workbench.aqm.validation", "reference_fct", _small_workload())),
    "engine_fct": ((), lambda: _call("workbench.aqm.validation", "engine_fct", _small_workload())),
    "validation_points[aqm]": (
        (),
        lambda: _call("workbench.aqm.validation", "validation_points", [_small_workload()], engine=False),
    ),
    "flow_agreement": ((), lambda: _call("workbench.aqm.validation", "flow_agreement", [_small_workload()])),
    "sha256_file": ((), lambda: _call("workbench.data", "sha256_file", _tmp_file("x.txt", "abc\n"))),
    "checksum_status": ((), _checksum_status),
    "profiled_gpu": (
        ("vidur-profiles/compute",),
        lambda: _call(
            "workbench.serving.opcurves", "profiled_gpu", _call("workbench.serving.specs", "gpu", "A100-80GB")
        ),
    ),
    "profiled_layer": (("vidur-profiles/compute",), _profiled_layer),
    "register_model": ((), _register_model),
    "EngineProfile": ((), _engine_profile),
    "load_specs": ((), _load_specs),
    "source_summary": (
        (),
        lambda: _call(
            "workbench.training.validation",
            "source_summary",
            _call("workbench.training.validation", "validation_points"),
        ),
    ),
    "real_trace": (
        ("azure-llm-2023/AzureLLMInferenceTrace_code.csv",),
        lambda: _call("workbench.workloads.trace_analysis", "real_trace", "Azure code"),
    ),
    # called directly: real_trace remembers its result once another test in the process has loaded the trace, and then
    # never calls the loader again (the harvest depended on which test files ran first in the worker)
    "load_azure": (
        ("azure-llm-2023/AzureLLMInferenceTrace_code.csv",),
        lambda: _call(
            "workbench.workloads.traces.formats", "load_azure", "azure-llm-2023/AzureLLMInferenceTrace_code.csv"
        ),
    ),
}


def _call(module: str, name: str, *args, **kwargs):
    return getattr(importlib.import_module(module), name)(*args, **kwargs)


def _data(relpath: str) -> str:
    from workbench import data

    return str(data.require(relpath))


_EXTRA: dict = {}


def _harvest(docstring_examples) -> dict:
    """The calls the package's docstring examples made (one run per process, shared with ``test_docstrings.py``:
    ``docstring_examples`` in ``tests/conftest.py``), and those of :data:`EXTRA_CALLS` whose data is present (made
    once per process): ``{contracted wrapper: (args, kwargs)}``, the first valid call of each."""
    if not _EXTRA:
        with C.harvesting() as calls, contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for needs, make in EXTRA_CALLS.values():
                if all(data.find(rel) is not None for rel in needs):
                    make()
        _EXTRA.update(calls)
    return {**_EXTRA, **docstring_examples[1]}


@pytest.mark.parametrize("name", MODULES)
def test_every_public_function_declares_a_contract(name, docstring_examples):
    module = importlib.import_module(name)
    public = {n: o for n, o in _public(module).items() if _needs_contract(o)}
    missing = [n for n, o in public.items() if C.contract_of(o) is None]
    assert missing == [], f"{name}: public callables without a declared contract (@accepts): {missing}"
    calls = _harvest(docstring_examples)
    no_example = [
        n
        for n, o in public.items()
        if _target(o)[0] not in calls and _perturbable(o) and not _needs_absent_data(n) and n not in NETWORK
    ]
    assert no_example == [], f"{name}: contracted callables no example calls (add an Examples line): {no_example}"


def _perturbable(obj) -> bool:
    """Whether the contract declares a parameter the suite can perturb (a function of no arguments needs no case)."""
    return any(not isinstance(s, C.Opaque) for s in C.contract_of(obj).specs.values())


def _needs_absent_data(name: str) -> bool:
    """Whether an example call of ``name`` needs data that is not on the search path (two functions of one name in
    two modules, ``load_trace[carbon]`` and ``load_trace[workloads]``, are told apart only by their keys; the one whose
    data is absent is then untested here, as the data tests are)."""
    keys = [k for k in EXTRA_CALLS if k == name or k.startswith(f"{name}[")]
    return bool(keys) and any(any(data.find(rel) is None for rel in EXTRA_CALLS[k][0]) for k in keys)


def _cases(name: str, calls: dict) -> list[tuple[str, str, str, object, tuple, dict, str]]:
    """Every generated call of ``name``'s public functions: (function, parameter, label, callable, args, kwargs,
    expectation) with expectation ``"refuse"`` (a hostile value) or ``"survive"`` (a valid extreme)."""
    module = importlib.import_module(name)
    out = []
    for fname, obj in sorted(_public(module).items()):
        target, call = _target(obj)
        contract = C.contract_of(obj)
        if contract is None or target not in calls:
            continue
        args, kwargs = calls[target]
        out.append((fname, "(example)", "as given", call, tuple(args), dict(kwargs), "accept"))
        sig = inspect.signature(target)
        params = list(sig.parameters)
        if inspect.isclass(obj) or (params and params[0] in ("self", "cls")):
            params = params[1:]
        for pname, spec in contract.specs.items():
            if isinstance(spec, C.Opaque):
                continue
            for expectation, values in (("refuse", spec.hostile()), ("survive", spec.edges())):
                for label, value in values:
                    a, kw = list(args), dict(kwargs)
                    if pname in kw or pname not in params[: len(a)]:
                        kw[pname] = value
                    else:
                        a[params.index(pname)] = value
                    out.append((fname, pname, label, call, tuple(a), kw, expectation))
    return out


def _run_case(case) -> dict:
    _fname, pname, _label, call, args, kwargs, expectation = case
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(*args, **kwargs)
    except (TypeError, ValueError, OSError) as exc:
        if expectation == "accept":  # the example itself: a contract that refuses it is wrong
            if isinstance(exc, (FileNotFoundError, FileExistsError)):  # its example's temporary file is gone, or
                # the file it writes is already there (a writer refuses to overwrite): nothing to perturb
                return {"skip": True}
            return {"problem": f"the example call is refused: {type(exc).__name__}: {exc}"}
        named = pname in str(exc)
        if expectation == "refuse" and not named:
            return {"problem": f"error does not name {pname!r}: {type(exc).__name__}: {exc}"}
        return {}
    except Exception as exc:
        return {"problem": f"raw {type(exc).__name__}: {str(exc)[:200]}"}
    if expectation == "refuse":
        return {"problem": "accepted a value its contract refuses"}
    return {}


def _run_all(cases: list) -> list[str]:
    """Run ``cases`` in forked children (a fresh one after a hang), ``CASE_LIMIT_S`` each; the problems found."""
    problems: list[str] = []
    start = 0
    while start < len(cases):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: run from `start`, one JSON line per case
            os.close(read_fd)
            with os.fdopen(write_fd, "w", buffering=1) as out:
                skipped: set[str] = set()  # functions whose example cannot be re-run (its temporary file is gone)
                for i in range(start, len(cases)):
                    result = {} if cases[i][0] in skipped else _run_case(cases[i])
                    if result.pop("skip", False):
                        skipped.add(cases[i][0])
                    out.write(json.dumps({"i": i, "result": result}) + "\n")
            os._exit(0)
        os.close(write_fd)
        reader = os.fdopen(read_fd)
        i = start
        while True:
            ready, _, _ = select.select([reader], [], [], CASE_LIMIT_S)
            if not ready:  # the current case hangs
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                fname, pname, label, *_ = cases[i]
                problems.append(f"{fname}({pname}={label}): no answer within {CASE_LIMIT_S:.0f} s (a hang)")
                start = i + 1
                break
            line = reader.readline()
            if not line:  # finished (or died)
                _, status = os.waitpid(pid, 0)
                if i < len(cases):
                    fname, pname, label, *_ = cases[i]
                    if status != 0:
                        problems.append(f"{fname}({pname}={label}): the process died (status {status})")
                start = i + 1 if status != 0 else len(cases)
                break
            rec = json.loads(line)
            i = rec["i"] + 1
            if rec["result"].get("problem"):
                fname, pname, label, *_ = cases[rec["i"]]
                problems.append(f"{fname}({pname}={label}): {rec['result']['problem']}")
        reader.close()
    return problems


@pytest.mark.parametrize("name", MODULES)
def test_hostile_values_are_refused_by_name_and_extremes_never_fail_raw(name, docstring_examples):
    cases = _cases(name, _harvest(docstring_examples))
    problems = _run_all(cases)
    assert problems == [], f"{name}: {len(problems)} of {len(cases)} generated cases failed:\n" + "\n".join(problems)
