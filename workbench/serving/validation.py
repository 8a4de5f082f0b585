"""The serving models against published measurements: model vs published value and the error, per point.

The published points (``datasets/serving_specs/published.csv``) state their configuration: engine, model, GPU,
precision, tensor parallelism, batch size and input/output lengths (plus, where the benchmark had them, the prefill
chunk, the number of requests and the engine's token budget). Each is replayed as the benchmark ran it
(:data:`METRICS` names each metric, its kind and how it is replayed):

*Iteration times* (one engine step, or a prompt's chunks in a row, on the roofline
:meth:`~workbench.serving.roofline.Deployment.iteration_s`; Sarathi-Serve's artifact and Splitwise's characterization):

* ``prefill_iteration_s``: ``batch`` whole prompts of ``input_tokens`` in one iteration.
* ``decode_iteration_s``: ``batch`` decodes, each over a context of ``input_tokens``.
* ``chunked_prefill_s``: one prompt of ``input_tokens`` prefilled in chunks of ``chunk_tokens`` (Sarathi-Serve's
  chunked prefill, Figure 9a): the sum of its chunk iterations, each chunk attending to the chunks before it.

*End-to-end* (the hardware-grounded replica :func:`~workbench.serving.engine.simulate_replica`):

* ``output_tokens_per_s_per_gpu`` and ``ttft_s`` (TensorRT-LLM's ``gptSessionBenchmark``): ``batch`` requests present
  at once, prefilled together in one iteration, then decoded to their output length (static batching); TTFT is the
  end of the prefill iteration.
* ``total_tokens_per_s_per_gpu`` (NanoFlow's offline throughput, prompt plus output tokens): ``batch`` requests present
  at once on a replica executing overlapped (``overlap=True``) with chunked prefill under a 2,048-token dense batch
  (:data:`DENSE_BATCH_TOKENS`), prompt and output tokens over the makespan, per GPU.
* ``offline_output_tokens_per_s`` (``trtllm-bench throughput``): ``requests`` requests queued at t=0 and served by
  in-flight batching (whole prompts join the running decodes, Orca-style: :class:`~workbench.serving.engine.Scheduler`
  ``kind="orca"``) with at most ``batch`` running requests and ``max_batched_tokens`` tokens per iteration; output
  tokens of the replica over the makespan (not per GPU: the published table gives the total).
* ``single_request_ttft_s`` and ``single_request_itl_s`` (NVIDIA NIM's AIPerf sweep at concurrency 1: one request in
  flight at a time): one request alone on the replica; its time to first token, and the mean time between its output
  tokens (``(finish - first token) / (output_tokens - 1)``).
* ``trace_mean_ttft_s``, ``trace_mean_tpot_s`` and ``trace_output_tokens_per_s`` (an online run recorded request by
  request: ``datasets/serving_specs/traces/<source_id>.csv``, each request's arrival and lengths with its measured
  first and last token): the recorded requests replayed at their arrival times on the engine profile's scheduler with
  the run's ``batch`` (``max_num_seqs``), ``max_batched_tokens`` and KV cache (``kv_tokens``, as the engine reported
  it: the memory beside the weights is set to hold exactly that many tokens); the mean TTFT, the mean TPOT
  (:func:`~workbench.serving.metrics.tbt_values`) and all output tokens over the span from the first arrival to the
  last token.

Nothing is fitted: the efficiencies are the cost model's own, and the engine's host work comes from its profile
(:mod:`~workbench.serving.engines`, the engine of each row by :data:`ENGINE_OF`). Every benchmark is replayed offline
(no API server: ``frontend_s=0``), as each ran, except NIM's, whose AIPerf client measures through NIM's HTTP
server, for which no latency is stated (none added). FP8 rows use one byte per weight and
per KV element (TensorRT-LLM's FP8 with an FP8 KV cache: the 13B batch of 1,024 needs ~214 GB of BF16 KV, more than an
H200 holds, so the KV was 8-bit). :func:`validation_summary` gives, per kind, the count, the median |error| and the
worst point. :func:`validation_points` is the tidy form, one row per (reference point, metric) with the envelope
that places it (what a fidelity scoreboard reads), and :func:`validation_by_source` its median and worst error per
source and metric.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from .._contracts import Opaque, accepts
from ..data import require
from ..tables import frame
from ._common import metrics_table
from .engine import Scheduler, policy, simulate_replica
from .metrics import tbt_values, ttft_values
from .roofline import Deployment
from .specs import gpu, model

__all__ = [
    "DENSE_BATCH_TOKENS",
    "ENGINE_OF",
    "KINDS",
    "METRICS",
    "POINT_COLUMNS",
    "TRACES",
    "published",
    "replay",
    "trace_statistics",
    "validation_by_source",
    "validation_points",
    "validation_summary",
    "validation_table",
]

#: The engine profile (``engines.csv``) of each engine named in the published table: Sarathi-Serve's artifact ran
#: its vLLM 0.x fork; Splitwise's characterization a vLLM release of 2023 (eager, Ray workers); TensorRT-LLM's
#: v0.5/v0.6 tables its C++ runtime before the overlap scheduler (``gptSessionBenchmark``, not overlapped); its
#: perf-overview (v0.19+, ``trtllm-bench`` on the PyTorch backend)
#: the current runtime with the overlap scheduler on by default, as does NVIDIA NIM's TensorRT-LLM profile;
#: NanoFlow its asynchronous engine; a current vLLM (``vllm-v1``: the V1 engine, LLMServingSim's recorded runs) the
#: current profile.
ENGINE_OF = {
    "vllm": "vllm-v0",
    "vllm-2023": "vllm-2023",
    "sarathi-serve": "sarathi-serve",
    "tensorrt-llm": "trtllm-v0.5",
    "tensorrt-llm-pytorch": "trtllm",
    "nanoflow": "nanoflow",
    "nim": "trtllm",
    "vllm-v1": "vllm",
}

#: Tokens per iteration of NanoFlow's dense batch (chunked prefill topping up the decodes); its search picks the size,
#: here stated once (a throughput-oriented engine keeps the GEMMs at thousands of tokens).
DENSE_BATCH_TOKENS = 2048

#: Each metric of the published table: its kind (``iteration`` or ``end_to_end``) and how it is replayed.
METRICS = {
    "prefill_iteration_s": ("iteration", "one iteration prefilling `batch` prompts of `input_tokens`"),
    "decode_iteration_s": ("iteration", "one iteration decoding `batch` requests over contexts of `input_tokens`"),
    "chunked_prefill_s": ("iteration", "one prompt of `input_tokens` prefilled in chunks of `chunk_tokens`"),
    "ttft_s": ("end_to_end", "static batch of `batch` requests: end of the prefill iteration"),
    "output_tokens_per_s_per_gpu": ("end_to_end", "static batch of `batch` requests: output tokens / makespan / GPUs"),
    "total_tokens_per_s_per_gpu": (
        "end_to_end",
        "`batch` requests at t=0, overlapped chunked prefill: all tokens / s / GPU",
    ),
    "single_request_ttft_s": ("end_to_end", "one request alone (concurrency 1): its time to first token"),
    "single_request_itl_s": ("end_to_end", "one request alone (concurrency 1): mean time between its output tokens"),
    "offline_output_tokens_per_s": (
        "end_to_end",
        "`requests` at t=0, in-flight batching (`batch` seqs, `max_batched_tokens`): output tokens / makespan",
    ),
    "trace_mean_ttft_s": ("end_to_end", "a recorded online run's requests replayed at their arrivals: mean TTFT"),
    "trace_mean_tpot_s": ("end_to_end", "a recorded online run's requests replayed at their arrivals: mean TPOT"),
    "trace_output_tokens_per_s": (
        "end_to_end",
        "a recorded online run's requests replayed at their arrivals: output tokens / (last token - first arrival)",
    ),
}

#: The two kinds of point, in the order :func:`validation_summary` lists them.
KINDS = ("iteration", "end_to_end")

_COLUMNS = (
    "point",
    "source_id",
    "engine",
    "model",
    "gpu",
    "dtype",
    "tp",
    "pp",
    "batch",
    "input_tokens",
    "output_tokens",
    "metric",
    "value",
)
_NEEDS = {
    "chunked_prefill_s": ("chunk_tokens",),
    "offline_output_tokens_per_s": ("requests", "max_batched_tokens"),
    "single_request_ttft_s": ("max_batched_tokens",),
    "single_request_itl_s": ("max_batched_tokens",),
    **dict.fromkeys(
        ("trace_mean_ttft_s", "trace_mean_tpot_s", "trace_output_tokens_per_s"),
        ("requests", "max_batched_tokens"),  # kv_tokens where the run reported it (else the model's own cache)
    ),
}
#: Where the request tables of the ``trace_*`` points are, by ``source_id``.
TRACES = "serving_specs/traces/{source}.csv"


@accepts()
def published() -> pd.DataFrame:
    """The published measurements, one row per point, with their source."""
    return frame(require("serving_specs/published.csv"), what="published-measurement table")


def _point(row) -> str:
    return str(row.get("point", "<unnamed>"))


def _int(row, column: str) -> int:
    value = row.get(column)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise ValueError(f"published point {_point(row)!r}: metric {row['metric']!r} needs column {column!r}")
    return int(value)


def _check(row) -> None:
    missing = [c for c in _COLUMNS if c not in row]
    if missing:
        raise ValueError(f"published point {_point(row)!r} lacks column(s) {missing}")
    if row["metric"] not in METRICS:
        raise ValueError(
            f"published point {_point(row)!r}: unknown metric {row['metric']!r}; known: {', '.join(METRICS)}"
        )
    if row["engine"] not in ENGINE_OF:
        raise ValueError(
            f"published point {_point(row)!r}: unknown engine {row['engine']!r}; known: {', '.join(ENGINE_OF)}"
        )
    value = float(row["value"])
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"published point {_point(row)!r}: value must be finite and > 0, got {row['value']!r}")


def _kv_memory(row, m, gpu_name: str, n_gpu: int) -> dict:
    """The Deployment keywords that give exactly the KV cache a run reported (``kv_tokens``): the memory per GPU
    beside the weights set to hold that many tokens (vLLM's profiled reserve), and the cache capped there."""
    value = row.get("kv_tokens")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return {}
    kv = int(value)
    g = gpu(gpu_name)
    util = 0.9  # vLLM's default gpu_memory_utilization, passed to the Deployment with the reserve it implies
    reserve = (g.hbm_bytes * util - (m.weight_bytes + (kv + 1) * m.kv_bytes_per_token) / n_gpu) / 1e9
    if kv < 1 or reserve < 0:
        raise ValueError(
            f"kv_tokens ({kv}) must be >= 1 and fit beside {m.model}'s weights in {util:.0%} of {n_gpu} x {g.gpu} "
            f"(at most {int((g.hbm_bytes * util * n_gpu - m.weight_bytes) // m.kv_bytes_per_token)} tokens)"
        )
    return {"memory_utilization": util, "activation_reserve_gb": reserve, "max_kv_tokens": kv}


def _deployment(row, costs: str | None = None) -> Deployment:
    try:
        m = model(row["model"])
        if row["dtype"] == "fp8":
            m = dataclasses.replace(m, model=f"{m.model}-fp8", bytes_per_param=1.0, bytes_per_kv=1.0)
        tp, pp = int(row["tp"]), int(row["pp"])
        return Deployment(
            m,
            row["gpu"],
            tp=tp,
            pp=pp,
            dtype=row["dtype"],
            engine=ENGINE_OF[row["engine"]],
            overlap=row["engine"] == "nanoflow",
            costs=costs,
            frontend_s=0.0,
            **_kv_memory(row, m, row["gpu"], tp * pp),
        )
    except ValueError as e:
        raise ValueError(f"published point {_point(row)!r}: {e}") from e


def _chunked_prefill_s(dep: Deployment, prompt: int, chunk: int) -> float:
    """A prompt prefilled ``chunk`` tokens per iteration: each chunk's attention covers itself and the chunks before;
    only the last chunk samples (produces the first output token)."""
    starts = np.arange(0, prompt, chunk)
    sizes = np.minimum(chunk, prompt - starts)
    pairs = sizes * starts + sizes * (sizes + 1) / 2
    sampled = (starts + sizes >= prompt).astype(float)
    return float(sum(dep.iteration_s(int(c), float(p), 0, 0, sampled=s) for c, p, s in zip(sizes, pairs, sampled)))


@accepts(row=Opaque("a row of published()"))
def replay(row, costs: str | None = None) -> float:
    """The model's value of one published point (a row of :func:`published`), with the operator costs of ``costs``
    (:class:`~workbench.serving.roofline.Deployment`; default: the measured curves).

    Raises ``ValueError`` naming the point when its metric, engine, model or GPU is unknown or a column its metric
    needs is empty.
    """
    _check(row)
    metric = row["metric"]
    for column in _NEEDS.get(metric, ()):
        _int(row, column)
    dep = _deployment(row, costs)
    b, isl, osl = int(row["batch"]), int(row["input_tokens"]), int(row["output_tokens"])
    if metric == "prefill_iteration_s":
        return dep.iteration_s(b * isl, b * isl * (isl + 1) / 2, 0, 0, sampled=b, prefill_seqs=b)
    if metric == "decode_iteration_s":
        return dep.iteration_s(0, 0, b, b * isl)
    if metric == "chunked_prefill_s":
        return _chunked_prefill_s(dep, isl, _int(row, "chunk_tokens"))
    if metric == "total_tokens_per_s_per_gpu":
        r = simulate_replica(
            np.zeros(b),
            np.full(b, isl),
            np.full(b, osl),
            dep,
            Scheduler("sarathi", max_num_seqs=DENSE_BATCH_TOKENS // 2, max_num_batched_tokens=DENSE_BATCH_TOKENS),
        )
        return float(b * (isl + osl) / np.max(r.finish_s) / dep.gpus)
    if metric == "offline_output_tokens_per_s":
        n = _int(row, "requests")
        r = simulate_replica(
            np.zeros(n),
            np.full(n, isl),
            np.full(n, osl),
            dep,
            Scheduler("orca", max_num_seqs=b, max_num_batched_tokens=_int(row, "max_batched_tokens")),
        )
        if r.rejected.any():
            raise ValueError(f"published point {_point(row)!r}: {int(r.rejected.sum())} of {n} requests rejected")
        return float(n * osl / np.max(r.finish_s))
    if metric.startswith("trace_"):
        return _trace_replay(row, dep, metric)
    if metric in ("single_request_ttft_s", "single_request_itl_s"):
        r = simulate_replica(
            [0.0],
            [isl],
            [osl],
            dep,
            Scheduler("orca", max_num_seqs=1, max_num_batched_tokens=_int(row, "max_batched_tokens")),
        )
        if metric == "single_request_ttft_s":
            return float(r.first_token_s[0])
        if osl < 2:
            raise ValueError(f"published point {_point(row)!r}: an inter-token latency needs output_tokens >= 2")
        return float((r.finish_s[0] - r.first_token_s[0]) / (osl - 1))
    r = simulate_replica(
        np.zeros(b),
        np.full(b, isl),
        np.full(b, osl),
        dep,
        Scheduler("vllm", max_num_seqs=b, max_num_batched_tokens=max(b * isl, 1)),
    )
    if metric == "ttft_s":
        return float(np.max(r.first_token_s))
    return float(b * osl / np.max(r.finish_s) / dep.gpus)  # output_tokens_per_s_per_gpu


def _trace_replay(row, dep: Deployment, metric: str) -> float:
    """A recorded run's requests (:data:`TRACES`) replayed at their arrivals; ``metric`` of the replay."""
    name = TRACES.format(source=row["source_id"])
    t = frame(require(name), ("arrival_s", "input_tokens", "output_tokens"), what="recorded request table")
    n = _int(row, "requests")
    if len(t) != n:
        raise ValueError(f"published point {_point(row)!r}: {name} holds {len(t)} requests, the row states {n}")
    sched = dataclasses.replace(
        policy(dep, None), max_num_seqs=int(row["batch"]), max_num_batched_tokens=_int(row, "max_batched_tokens")
    )
    r = simulate_replica(t["arrival_s"], t["input_tokens"], t["output_tokens"], dep, sched)
    if r.rejected.any():
        raise ValueError(f"published point {_point(row)!r}: {int(r.rejected.sum())} of {n} requests rejected")
    return trace_statistics(t.assign(first_token_s=r.first_token_s, finish_s=r.finish_s))[metric]


@accepts()
def trace_statistics(table: pd.DataFrame) -> dict[str, float]:
    """The statistics of an online run's requests (``arrival_s``, ``input_tokens``, ``output_tokens``,
    ``first_token_s``, ``finish_s``), as the ``trace_*`` metrics define them, for a recorded run and its replay alike:
    mean TTFT, mean TPOT (:func:`~workbench.serving.metrics.tbt_values`: requests of two or more output tokens) and
    output tokens per second from the first arrival to the last token.

    Examples
    --------
    >>> t = pd.DataFrame({"arrival_s": [0.0, 0.5], "input_tokens": [100, 200], "output_tokens": [5, 1],
    ...                   "first_token_s": [0.2, 1.0], "finish_s": [0.6, 1.0]})
    >>> {k: round(v, 3) for k, v in trace_statistics(t).items()}
    {'trace_mean_ttft_s': 0.35, 'trace_mean_tpot_s': 0.1, 'trace_output_tokens_per_s': 6.0}
    """
    missing = [c for c in ("arrival_s", "input_tokens", "output_tokens", "first_token_s", "finish_s") if c not in table]
    if missing:
        raise ValueError(f"an online run's table lacks column(s) {missing}")
    arr = table["arrival_s"].to_numpy(float)
    out = table["output_tokens"].to_numpy(np.int64)
    first, finish = table["first_token_s"].to_numpy(float), table["finish_s"].to_numpy(float)
    served = metrics_table(arr, "replica", np.zeros(len(arr), np.int64), table["input_tokens"].to_numpy(), out,
                           first, first, finish, np.zeros(len(arr), bool))  # fmt: skip
    return {
        "trace_mean_ttft_s": float(ttft_values(served).mean()),
        "trace_mean_tpot_s": float(tbt_values(served).mean()),
        "trace_output_tokens_per_s": float(out.sum() / (finish.max() - arr.min())),
    }


@accepts()
def validation_table(points: pd.DataFrame | None = None, *, costs: str | None = None) -> pd.DataFrame:
    """One row per published point: its configuration, ``kind``, ``engine_profile``, ``published``,
    ``model_estimate`` and ``error`` (model / published - 1). ``points`` defaults to :func:`published`.

    Examples
    --------
    >>> t = validation_table()
    >>> len(t) >= 4 and bool(t["model_estimate"].gt(0).all())
    True
    """
    pub = published() if points is None else points
    rows = []
    for row in pub.to_dict("records"):  # ~120 points, each one replay
        value = replay(row, costs)
        rows.append(
            {
                **{k: row[k] for k in _COLUMNS if k != "value"},
                "kind": METRICS[row["metric"]][0],
                "engine_profile": ENGINE_OF[row["engine"]],
                "published": float(row["value"]),
                "model_estimate": value,
                "error": value / float(row["value"]) - 1,
                "rate_rps": float(row["rate_rps"]) if pd.notna(row.get("rate_rps")) else math.nan,
                "source": row.get("source", ""),
            }
        )
    return pd.DataFrame(rows)


#: The columns of :func:`validation_points`, in order (a fidelity scoreboard reads these names).
POINT_COLUMNS = (
    "source",
    "metric",
    "reference",
    "model",
    "error",
    "kind",
    "gpu",
    "model_name",
    "tp",
    "pp",
    "batch",
    "input_tokens",
    "output_tokens",
    "engine",
    "rate_rps",
    "point",
    "dtype",
    "engine_as_published",
    "citation",
)


@accepts()
def validation_points(table: pd.DataFrame | None = None, *, costs: str | None = None) -> pd.DataFrame:
    """Every published point against the model, tidy: one row per (reference point, metric), columns
    :data:`POINT_COLUMNS`.

    ``source`` is the publication's short id (``published.csv``'s ``source_id``), ``reference`` the published value,
    ``model`` the modelled one, ``error`` the signed relative error ``(model - reference) / reference`` and ``kind``
    ``"iteration"`` or ``"end_to_end"``; the envelope that places the point: ``gpu``, ``model_name``, ``tp``, ``pp``,
    ``batch``, ``input_tokens``, ``output_tokens``, ``engine`` (the engine profile replayed, ``engines.csv``;
    ``engine_as_published`` the table's name) and ``rate_rps`` (requests per second of an online run; NaN for the
    offline and single-request benchmarks); ``point`` the row's id, ``citation`` the document, table or figure.
    ``table`` is a :func:`validation_table` to reuse (default: computed with ``costs``).

    Examples
    --------
    >>> p = validation_points()
    >>> list(p.columns[:6]), bool(p["error"].abs().lt(10).all())
    (['source', 'metric', 'reference', 'model', 'error', 'kind'], True)
    >>> bool((p["error"] == (p["model"] - p["reference"]) / p["reference"]).all())
    True
    """
    t = validation_table(costs=costs) if table is None else table
    out = pd.DataFrame(
        {
            "source": t["source_id"].astype(str),
            "metric": t["metric"].astype(str),
            "reference": t["published"].astype(float),
            "model": t["model_estimate"].astype(float),
        }
    )
    out["error"] = (out["model"] - out["reference"]) / out["reference"]
    out["kind"] = t["kind"].astype(str)
    out["gpu"] = t["gpu"].astype(str)
    out["model_name"] = t["model"].astype(str)
    for c in ("tp", "pp", "batch", "input_tokens", "output_tokens"):
        out[c] = t[c].astype(int)
    out["engine"] = t["engine_profile"].astype(str)
    out["rate_rps"] = t["rate_rps"].astype(float)
    out["point"] = t["point"].astype(str)
    out["dtype"] = t["dtype"].astype(str)
    out["engine_as_published"] = t["engine"].astype(str)
    out["citation"] = t["source"].astype(str)
    return out[list(POINT_COLUMNS)].reset_index(drop=True)


@accepts()
def validation_by_source(points: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per source and metric (index), from :func:`validation_points`: ``kind``, ``points``, ``median_abs_error``,
    ``worst_error`` (the signed error of largest magnitude) and its ``worst_point``.

    Examples
    --------
    >>> p = pd.DataFrame({"source": ["a", "a", "a"], "metric": ["m"] * 3, "kind": ["iteration"] * 3,
    ...                   "point": ["x", "y", "z"], "error": [0.1, -0.3, 0.2]})
    >>> s = validation_by_source(p)
    >>> float(s.loc[("a", "m"), "median_abs_error"]), float(s.loc[("a", "m"), "worst_error"])
    (0.2, -0.3)
    """
    p = validation_points() if points is None else points
    missing = {"source", "metric", "kind", "point", "error"} - set(p.columns)
    if missing:
        raise ValueError(f"points lack column(s) {sorted(missing)}; pass a validation_points()")
    rows = []
    for (src, metric), g in p.groupby(["source", "metric"], sort=True):
        a = g["error"].abs()
        w = a.idxmax()
        rows.append(
            {
                "source": src,
                "metric": metric,
                "kind": g["kind"].iloc[0],
                "points": len(g),
                "median_abs_error": float(a.median()),
                "worst_error": float(g.loc[w, "error"]),
                "worst_point": g.loc[w, "point"],
            }
        )
    return pd.DataFrame(rows).sort_values(["kind", "source", "metric"]).set_index(["source", "metric"])


@accepts()
def validation_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per kind (``iteration``, ``end_to_end``): ``points``, ``median_abs_error``, ``worst_point`` (largest |error|)
    and its ``worst_error`` (signed), from a :func:`validation_table` (or any frame with ``kind``, ``point``, ``error``).

    Examples
    --------
    >>> t = pd.DataFrame({"kind": ["iteration"] * 3, "point": ["a", "b", "c"], "error": [0.1, -0.3, 0.2]})
    >>> s = validation_summary(t)
    >>> float(s.loc["iteration", "median_abs_error"]), s.loc["iteration", "worst_point"]
    (0.2, 'b')
    """
    missing = {"kind", "point", "error"} - set(table.columns)
    if missing:
        raise ValueError(f"table lacks column(s) {sorted(missing)}; pass a validation_table()")
    unknown = set(table["kind"]) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown kind(s) {sorted(unknown)}; known: {', '.join(KINDS)}")
    out = []
    for kind in KINDS:
        t = table[table["kind"] == kind]
        if t.empty:
            continue
        a = t["error"].abs()
        worst = a.idxmax()
        out.append(
            {
                "kind": kind,
                "points": len(t),
                "median_abs_error": float(a.median()),
                "worst_point": t.loc[worst, "point"],
                "worst_error": float(t.loc[worst, "error"]),
            }
        )
    return pd.DataFrame(out).set_index("kind")
