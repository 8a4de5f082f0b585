"""The iteration model against every fully stated public training run: the corpus, the estimated parameters and the
error on each run, leave-one-source-out.

The corpus is data, ``datasets/training_validation/corpus.csv`` (read through the data search path; every column and
every source is described in the folder's ``README.md``): one row per published run, with its source (URL, commit for
repositories, table or figure), model shape, GPU, TP/PP/DP/EP, virtual stages, micro-batch, global batch, sequence
length, recomputation, precision, software era, pipeline engine, the published metric and value, what the source
leaves unstated with the assumption made, the plausible alternatives to that assumption and the ``headline`` flag: a
row whose assumption could move the modelled result by more than 5% (any alternative, :func:`sensitivity`) is kept
out of the headline statistic.

The model (:func:`workbench.training.iteration.iteration_table`, the default compute form, each row in its software
era) has two parameters no source states (:class:`~workbench.training.iteration.Calibration`): the fraction of the
measured kernels' throughput a training step sustains on ampere and on hopper GPUs. :func:`estimate` chooses them to
minimise the summed ``|log(model / published)|`` over the headline rows it is given (on the measured compute time
where the source publishes one, ``breakdowns.csv``: :func:`breakdowns`); :func:`validation_points` estimates them
once per source on the other sources' rows and reports each source's rows under the estimate that never saw them
(leave-one-source-out): that is the ``error`` reported everywhere. Nothing else is chosen per row or per source.

Two checks beside it: :func:`compute_check` sets the model's compute per GPU against a source's measured compute
under the batch the corpus states or a fixed global batch (how Lumos's batch is pinned), and
:func:`rendezvous_table` measures, per run, what waiting at the blocking pipeline exchanges costs under the measured
kernel and NCCL variability (:mod:`workbench.training.rendezvous`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .._contracts import Opaque, accepts
from .._deps import remember
from .._validate import integer, one_of
from ..data import require
from ..serving.specs import gpu as gpu_record
from ..serving.specs import model as model_record
from ..tables import frame
from . import kernels
from .iteration import CALIBRATION, Calibration, assemble, iteration_parts
from .rendezvous import rendezvous_wait
from .specs import Model, Plan, stage_loads

__all__ = [
    "BREAKDOWNS",
    "CORPUS",
    "HEADLINE_SENSITIVITY",
    "METRICS",
    "breakdowns",
    "compute_check",
    "corpus",
    "corpus_model",
    "corpus_plan",
    "estimate",
    "rendezvous_table",
    "sensitivity",
    "source_summary",
    "validation_points",
]

CORPUS = "training_validation/corpus.csv"
#: Published breakdowns of an iteration (Lumos's bars: exposed compute, overlapped, exposed communication, other).
BREAKDOWNS = "training_validation/breakdowns.csv"
_BARS = ("actual", "lumos", "dpro")
_BREAKDOWN_PARTS = ("exposed_compute_ms", "overlapped_ms", "exposed_comm_ms", "other_ms")
#: Published metrics a row may carry (the model reports each): seconds per iteration, model FLOPs utilisation,
#: model and hardware (recomputation counted) TFLOP/s per GPU.
METRICS = ("iteration_s", "mfu", "model_tflops_per_gpu", "hardware_tflops_per_gpu")
#: A row stays in the headline statistic only if no alternative to its assumptions moves the model by more.
HEADLINE_SENSITIVITY = 0.05
_BOOL = ("gated_ffn", "tied_embeddings", "position_embeddings", "distributed_optimizer", "balanced_ends",
         "overlap_p2p", "overlap_tp", "overlap_dp", "sequence_parallel", "headline")  # fmt: skip
_INT = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq_len", "gpus", "tp", "pp", "dp", "ep",
        "virtual_stages", "micro_batch", "global_batch")  # fmt: skip
_PLAN = ("tp", "pp", "dp", "global_batch", "micro_batch", "ep", "virtual_stages", "recompute", "distributed_optimizer",
         "balanced_ends", "overlap_p2p", "overlap_tp", "overlap_dp", "pipeline", "sequence_parallel")  # fmt: skip
#: The sustained fractions :func:`estimate` searches.
_SUSTAINED = np.round(np.arange(0.60, 1.2001, 0.005), 3)


@remember
def _corpus() -> pd.DataFrame:
    path = require(CORPUS, hint="(the training validation corpus ships in the project's datasets/ folder)")
    df = frame(path, what="validation table", dtype=str, keep_default_na=False)
    missing = {*_BOOL, *_INT, *_PLAN, "id", "source", "source_name", "url", "locator", "model_name", "gpu", "era", "metric",
               "value", "unstated", "alternatives", "nic_gbps"} - set(df.columns)  # fmt: skip
    if missing:
        raise ValueError(f"{CORPUS}: missing columns {sorted(missing)}")
    for c in _BOOL:
        bad = ~df[c].isin(("true", "false"))
        if bad.any():
            raise ValueError(f"{CORPUS}: column {c!r} must be true or false, row {df.id[bad].iloc[0]!r}")
        df[c] = df[c] == "true"
    for c in _INT:
        df[c] = df[c].astype(int)
    df["value"] = df["value"].astype(float)
    df["nic_gbps"] = pd.to_numeric(df["nic_gbps"].replace("", np.nan))
    bad = ~df.metric.isin(METRICS)
    if bad.any():
        raise ValueError(
            f"{CORPUS}: row {df.id[bad].iloc[0]!r} has metric {df.metric[bad].iloc[0]!r}; allowed {METRICS}"
        )
    wrong = df.gpus != df.tp * df.pp * df.dp
    if wrong.any():
        raise ValueError(f"{CORPUS}: row {df.id[wrong].iloc[0]!r}: gpus is not tp x pp x dp")
    if df.id.duplicated().any():
        raise ValueError(f"{CORPUS}: duplicate id {df.id[df.id.duplicated()].iloc[0]!r}")
    return df


@accepts()
def corpus() -> pd.DataFrame:
    """The validation corpus, one row per published run (a copy; columns in ``datasets/training_validation/README.md``).

    Examples
    --------
    >>> c = corpus()
    >>> len(c) >= 50, c.source.nunique() >= 8, sorted(c.gpu.unique())
    (True, True, ['A100-80GB', 'H100-SXM'])
    """
    return _corpus().copy()


@remember
def _breakdowns() -> pd.DataFrame:
    path = require(BREAKDOWNS, hint="(the published iteration breakdowns ship in the project's datasets/ folder)")
    df = frame(path, what="validation table", dtype=str, keep_default_na=False)
    missing = {"corpus_id", "source", "locator", "bar", *_BREAKDOWN_PARTS} - set(df.columns)
    if missing:
        raise ValueError(f"{BREAKDOWNS}: missing columns {sorted(missing)}")
    bad = ~df.bar.isin(_BARS)
    if bad.any():
        raise ValueError(
            f"{BREAKDOWNS}: row {int(np.flatnonzero(bad)[0])} has bar {df.bar[bad].iloc[0]!r}; allowed {_BARS}"
        )
    for c in _BREAKDOWN_PARTS:
        df[c] = df[c].astype(float)
        if (df[c] < 0).any():
            raise ValueError(f"{BREAKDOWNS}: column {c!r} must be non-negative")
    ids = set(_corpus().id)
    unknown = sorted(set(df.corpus_id) - ids)
    if unknown:
        raise ValueError(f"{BREAKDOWNS}: corpus_id {unknown[0]!r} is not a row of {CORPUS}")
    if df[df.bar == "actual"].corpus_id.duplicated().any():
        raise ValueError(f"{BREAKDOWNS}: more than one actual bar for one corpus row")
    return df


@accepts()
def breakdowns() -> pd.DataFrame:
    """Published breakdowns of an iteration (a copy of ``datasets/training_validation/breakdowns.csv``): per bar
    (``actual``: measured; ``lumos``, ``dpro``: a simulator's replay or prediction) the milliseconds of exposed
    compute, compute overlapped with communication, exposed communication and other (idle), with ``compute_ms``
    (exposed plus overlapped: the GPU's compute time) and ``total_ms`` added; ``corpus_id`` names the corpus row of
    the same run (an actual bar's total is that row's published iteration time).

    Examples
    --------
    >>> b = breakdowns()
    >>> a = b[b.bar == "actual"].set_index("corpus_id")
    >>> int(a.total_ms["lumos-15b-2x16x4"]), int(a.compute_ms["lumos-15b-2x16x4"])
    (1785, 471)
    """
    df = _breakdowns().copy()
    df["compute_ms"] = df.exposed_compute_ms + df.overlapped_ms
    df["total_ms"] = df[list(_BREAKDOWN_PARTS)].sum(axis=1)
    return df


@accepts(row=Opaque("a row of corpus()"))
def corpus_model(row) -> Model:
    """The :class:`Model` of a corpus row: the hardware table's record when ``model_name`` names a row of
    ``datasets/serving_specs/models.csv`` (its shape must match the corpus row's), otherwise built from the row's
    shape: per layer the attention projections (``h x (heads + kv_heads) x head_dim`` twice), the FFN (2 or, gated,
    3 matrices of ``h x ffn``) and their biases and norms (``9 h + ffn``), plus the vocabulary embedding (twice when
    not tied) and learned positions when the model has them. ``active_params`` (what FLOPs are counted on) leaves out
    an untied input embedding: a lookup, no matmul."""
    try:
        known = model_record(row["model_name"])
    except ValueError:
        known = None
    L, h, H, kv, f, V, s = (int(row[c]) for c in ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq_len"))
    if known is not None:
        shape = (known.layers, known.hidden, known.heads, known.kv_heads, known.ffn, known.vocab)
        if shape != (L, h, H, kv, f, V):
            raise ValueError(f"{CORPUS}: row {row['id']!r} names {row['model_name']!r} but its shape {(L, h, H, kv, f, V)} "
                             f"is not the models table's {shape}")  # fmt: skip
        return replace(known, seq_len=s)
    d = h // H
    layer = h * (2 * H * d + 2 * kv * d) + (3 if row["gated_ffn"] else 2) * h * f + 9 * h + f
    emb = V * h + (s * h if row["position_embeddings"] else 0)
    untied = 0 if row["tied_embeddings"] else V * h
    p = float(L * layer + emb + untied)
    return Model(row["model_name"], L, h, H, kv, d, d, 2 * kv * d, f, V, p, p - untied, seq_len=s)


@accepts(row=Opaque("a row of corpus()"))
def corpus_plan(row) -> Plan:
    """The :class:`Plan` a corpus row states (or assumes)."""
    return Plan(**{k: (v.item() if hasattr(v, "item") else v) for k, v in ((k, row[k]) for k in _PLAN)})


def _alternatives(row) -> list[list[tuple[str, object]]]:
    """The row's alternatives: ``;`` separates alternatives, ``&`` joins the settings one alternative changes together
    (an implementation's bundle of defaults), each ``<plan field or nic_gbps>=<value>``."""
    out: list[list[tuple[str, object]]] = []
    for alternative in filter(None, (s.strip() for s in str(row["alternatives"]).split(";"))):
        changes: list[tuple[str, object]] = []
        for item in (s.strip() for s in alternative.split("&")):
            field, _, value = item.partition("=")
            if field not in (*_PLAN, "nic_gbps") or not value:
                raise ValueError(
                    f"{CORPUS}: row {row['id']!r}: alternative {item!r} must be <plan field or nic_gbps>=<value>"
                )
            if field in _BOOL:
                if value not in ("true", "false"):
                    raise ValueError(f"{CORPUS}: row {row['id']!r}: alternative {item!r} must be true or false")
                changes.append((field, value == "true"))
            else:
                changes.append(
                    (field, float(value) if field == "nic_gbps" else (int(value) if field in _INT else value))
                )
        out.append(changes)
    return out


def _variants(df: pd.DataFrame) -> pd.DataFrame:
    """Each row as stated, then one variant per alternative (``variant`` names it, ``row`` is the row's index)."""
    rows = []
    for i, r in df.iterrows():
        rows.append({**r.to_dict(), "row": i, "variant": ""})
        for changes in _alternatives(r):
            name = "&".join(f"{field}={str(value).lower() if isinstance(value, bool) else value}"
                            for field, value in changes)  # fmt: skip
            rows.append({**r.to_dict(), **dict(changes), "row": i, "variant": name})
    return pd.DataFrame(rows)


def _parts(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """:func:`~workbench.training.iteration.iteration_parts` of every row, one call per (model, GPU, era, NIC)."""
    keys = ["model_name", "layers", "hidden", "seq_len", "vocab", "gpu", "era", "nic_gbps"]
    out: dict[str, np.ndarray] = {}
    order = []
    frames = []
    key = pd.Series(["|".join(map(str, t)) for t in zip(*(df[k].tolist() for k in keys))], index=df.index)
    for _, g in df.groupby(key, sort=False):
        r = g.iloc[0]
        cols = {k: g[k].to_numpy() for k in _PLAN}
        nic = None if pd.isna(r["nic_gbps"]) else float(r["nic_gbps"])
        frames.append(iteration_parts(corpus_model(r), cols, gpu_record(r["gpu"]), era=r["era"], nic_gbps=nic))
        order.append(g.index.to_numpy())
    idx = np.argsort(np.concatenate(order), kind="stable")
    for k in frames[0]:
        out[k] = np.concatenate([np.broadcast_to(f[k], (len(o),)) for f, o in zip(frames, order)])[idx]
    return out


@remember
def _corpus_variants() -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    v = _variants(_corpus()).reset_index(drop=True)
    for c in _PLAN:
        if c in _INT:
            v[c] = v[c].astype(int)
    return v, _parts(v)


def _metric(out: dict, metric: np.ndarray) -> np.ndarray:
    return np.select([metric == m for m in METRICS], [out[m] for m in METRICS])


@accepts()
def sensitivity(calibration: Calibration = CALIBRATION) -> pd.DataFrame:
    """How far each row's modelled metric moves under each alternative to its assumptions: ``id``, ``variant``,
    ``change`` (relative to the row as stated), and per row the largest ``|change|`` (``max_change``) and whether
    it stays within :data:`HEADLINE_SENSITIVITY` (``headline``, what the corpus's flag must say).

    Examples
    --------
    >>> flags = sensitivity().groupby("id").headline.first()
    >>> bool((flags == corpus().set_index("id").headline.loc[flags.index]).all())
    True
    """
    v, parts = _corpus_variants()
    value = _metric(assemble(parts, calibration), v.metric.to_numpy())
    base = pd.Series(value, index=v.index).groupby(v.row).transform("first").to_numpy()
    t = pd.DataFrame({"id": v.id, "variant": v.variant, "change": value / base - 1.0})
    t["max_change"] = t.change.abs().groupby(t.id).transform("max")
    t["headline"] = t.max_change <= HEADLINE_SENSITIVITY
    return t


def _stated() -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    v, parts = _corpus_variants()
    sel = (v.variant == "").to_numpy()
    return v[sel].reset_index(drop=True), {k: a[sel] for k, a in parts.items()}


def _published_compute(df: pd.DataFrame) -> np.ndarray:
    """Per corpus row, the GPU compute seconds of one iteration its source publishes (an actual breakdown), or NaN."""
    b = breakdowns()
    a = b[b.bar == "actual"].set_index("corpus_id").compute_ms / 1e3
    return df.id.map(a).to_numpy(dtype=float)


@accepts()
def estimate(exclude_source: str | None = None) -> Calibration:
    """The :class:`~workbench.training.iteration.Calibration` that minimises ``sum |log(model / published)|`` over the
    headline rows of the corpus (those of ``exclude_source`` left out): the sustained fraction of each GPU generation
    on its own rows, searched on a grid of step 0.005 from 0.6 to 1.2 (1.0 for a generation with no such row).

    The fraction is a compute parameter, so a row whose source publishes its compute time separately (an actual bar
    of :func:`breakdowns`: Lumos measures its GPUs' compute per iteration) is compared on that compute time (the
    model's per-GPU compute of a mean stage, ``micro-batches x kernel seconds / fraction``), not on its iteration
    time: the rest of a breakdown is communication and idle time, which the fraction does not govern. Every other
    row is compared on the metric it publishes.

    Examples
    --------
    >>> c = estimate()
    >>> 0.6 <= c.sustained_hopper <= 1.2 and 0.6 <= c.sustained_ampere <= 1.2
    True
    """
    df, parts = _stated()
    use = df.headline.to_numpy() & (df.source != exclude_source).to_numpy()
    compute = _published_compute(df)
    chosen = {}
    for g in ("ampere", "hopper"):
        rows = np.flatnonzero(use & (parts["generation"] == g))
        if rows.size == 0:
            chosen[g] = 1.0
            continue
        sub = {k: a[rows] for k, a in parts.items()}
        out = assemble(sub, sustained=_SUSTAINED[:, None])  # one row of candidates per grid value
        has = np.isfinite(compute[rows])
        model = np.where(has, sub["micro_batches"] * sub["kernel_s"] / _SUSTAINED[:, None],
                         _metric(out, df.metric.to_numpy()[rows]))  # fmt: skip
        observed = np.where(has, compute[rows], df.value.to_numpy()[rows])
        loss = np.abs(np.log(model / observed)).sum(axis=1)
        chosen[g] = float(_SUSTAINED[int(np.argmin(loss))])
    return Calibration(chosen["ampere"], chosen["hopper"])


@remember
def _loso() -> dict[str, Calibration]:
    return {s: estimate(s) for s in _corpus().source.unique()}


@accepts()
def validation_points(loso: bool = True) -> pd.DataFrame:
    """Model vs published on every corpus row, as a tidy table for the fidelity scoreboard.

    ``loso=True`` (the reported numbers) models each source's rows under the calibration estimated without that
    source (:func:`estimate`); ``False`` under the whole corpus's (:data:`~workbench.training.iteration.CALIBRATION`).

    Returns
    -------
    pandas.DataFrame
        One row per corpus row: ``id, source, source_name, locator, metric, reference, model, error`` (``(model - reference) /
        reference`` in the row's metric), ``time_error`` (the same as an iteration-time error: positive when the
        model is slower), ``headline``, the envelope ``gpu, model_name, tp, pp, dp, gpus, virtual_stages,
        micro_batch, global_batch, seq_len, recompute, era, pipeline``, the sustained fraction used (``sustained``)
        and the modelled ``iteration_s``.

    Examples
    --------
    >>> p = validation_points()
    >>> len(p) == len(corpus()), bool(p.headline.any())
    (True, True)
    """
    df, parts = _stated()
    cals = _loso() if loso else dict.fromkeys(df.source.unique(), CALIBRATION)
    gen = parts["generation"]
    out_rows = []
    for source, cal in cals.items():
        rows = np.flatnonzero((df.source == source).to_numpy())
        sub = {k: a[rows] for k, a in parts.items()}
        out = assemble(sub, cal)
        model = _metric(out, df.metric.to_numpy()[rows])
        for j, i in enumerate(rows):
            out_rows.append((i, model[j], float(out["iteration_s"][j]), cal.sustained(str(gen[i]))))
    out_rows.sort()
    model = np.array([r[1] for r in out_rows])
    ref = df.value.to_numpy()
    t = pd.DataFrame(
        {
            "id": df.id,
            "source": df.source,
            "source_name": df.source_name,
            "locator": df.locator,
            "metric": df.metric,
            "reference": ref,
            "model": model,
            "error": model / ref - 1.0,
            "time_error": np.where(df.metric == "iteration_s", model / ref, ref / model) - 1.0,
            "headline": df.headline,
        }
    )
    for c in ("gpu", "model_name", "tp", "pp", "dp", "gpus", "virtual_stages", "micro_batch", "global_batch",
              "seq_len", "recompute", "era", "pipeline"):  # fmt: skip
        t[c] = df[c]
    t["sustained"] = [r[3] for r in out_rows]
    t["iteration_s"] = [r[2] for r in out_rows]
    return t


@accepts()
def compute_check(global_batch: int | None = None) -> pd.DataFrame:
    """The model's GPU compute per iteration against the compute a source measures (the actual bars of
    :func:`breakdowns`): what the batch assumption implies, checked on the one quantity the batch scales.

    Per run with a published breakdown: ``measured_ms`` (its exposed plus overlapped compute), ``micro_batches`` and
    ``model_ms`` (one GPU of a mean pipeline stage: micro-batches x one micro-batch's kernels / the sustained
    fraction estimated without the run's source) and ``ratio`` (model / measured); with the batch as the corpus
    states it, or with one fixed ``global_batch`` for every run (``global_batch / (dp x micro_batch)`` micro-batches
    per pipeline), what a fixed-global-batch reading of the source would give.

    Examples
    --------
    >>> stated = compute_check()
    >>> fixed = compute_check(global_batch=128)
    >>> lumos = stated.model_name == "gpt3-15b"
    >>> round(float(stated.ratio[lumos].max() / stated.ratio[lumos].min()), 2) < 1.1  # the same per GPU everywhere
    True
    >>> round(float(fixed.ratio[lumos].max() / fixed.ratio[lumos].min()), 1)  # a fixed global batch: over 4x apart
    4.3
    """
    df, parts = _stated()
    compute = _published_compute(df)
    rows = np.flatnonzero(np.isfinite(compute))
    m = parts["micro_batches"][rows].astype(float)
    if global_batch is not None:
        g = integer("global_batch", global_batch, minimum=1)
        m = np.floor(g / (df.dp.to_numpy()[rows] * df.micro_batch.to_numpy()[rows]))
        if (m < 1).any():
            raise ValueError(f"global_batch {g} leaves a pipeline without a micro-batch (dp x micro_batch up to "
                             f"{int((df.dp * df.micro_batch).to_numpy()[rows].max())})")  # fmt: skip
    cals = _loso()
    sustained = np.array([cals[df.source[i]].sustained(str(parts["generation"][i])) for i in rows])
    model = m * parts["kernel_s"][rows] / sustained
    t = df.iloc[rows][["id", "source", "model_name", "tp", "pp", "dp"]].reset_index(drop=True)
    t["micro_batches"] = m.astype(int)
    t["measured_ms"] = compute[rows] * 1e3
    t["model_ms"] = model * 1e3
    t["ratio"] = model / compute[rows]
    return t


@remember
def _rendezvous(samples: int, seed: int, source: str | None) -> pd.DataFrame:
    df, parts = _stated()
    cals = _loso()
    points = validation_points()
    rows = []
    for i in np.flatnonzero((df.pp > 1).to_numpy() & ((df.source == source).to_numpy() if source else True)):
        r = df.iloc[i]
        model = corpus_model(r)
        gen = str(parts["generation"][i])
        sustained = cals[r.source].sustained(gen)
        p, v = int(r.pp), int(r.virtual_stages)
        # the interleaved schedule as a 1F1B over its p x (m v) grid of chunk passes (each 1/v of a stage's layers)
        m = int(parts["micro_batches"][i]) * v
        loads = stage_loads(model, p, bool(r.balanced_ends))
        fwd = parts["kernel_fwd_s"][i] / sustained / v * loads
        bwd = (parts["kernel_s"][i] - parts["kernel_fwd_s"][i]) / sustained / v * loads
        layers = max(1.0, model.layers / (p * v))
        per = 4.0 if r.pipeline == "deepspeed" else 2.0
        x = float(parts["exchange_s"][i]) / (per * v)
        nbytes = 2.0 * r.micro_batch * model.seq_len * model.hidden / r.tp
        cv_f = float(kernels.layer_jitter(gen, float(fwd.mean()) / layers)) / np.sqrt(layers)
        cv_b = float(kernels.layer_jitter(gen, float(bwd.mean()) / layers)) / np.sqrt(layers)
        cv_x = float(kernels.send_recv_jitter(gen, nbytes, r.tp * r.pp * r.dp > 8))
        res = rendezvous_wait(fwd, bwd, m, x, cv_f, cv_b, min(cv_x, 1.0), samples=samples, seed=seed)
        it = float(points.iteration_s[i])
        rows.append((r.id, r.source, p, v, m, cv_f, cv_b, cv_x, res.base_s, res.extra_s, res.stderr_s,
                     res.extra_s / it))  # fmt: skip
    cols = ["id", "source", "pp", "virtual_stages", "passes", "cv_forward", "cv_backward", "cv_exchange", "base_s",
            "extra_s", "stderr_s", "share"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


@accepts()
def rendezvous_table(samples: int = 32, seed: int = 0, source: str | None = None) -> pd.DataFrame:
    """What waiting at the pipeline's blocking exchanges costs every corpus run with a pipeline, from measured
    variability (:func:`workbench.training.rendezvous.rendezvous_wait`): per row the coefficients of variation of
    one micro-batch's forward and backward on a stage (a layer's measured ``layer_jitter`` over ``sqrt`` of the
    stage's layers) and of one exchange (``send_recv_jitter``), the schedule's deterministic length (``base_s``), the
    mean extra time over ``samples`` Monte-Carlo iterations (``extra_s``, its standard error ``stderr_s``) and its
    ``share`` of the modelled iteration. The interleaved schedule is taken as a 1F1B over its ``p x (m v)`` chunk
    passes (``passes``), DeepSpeed's as Megatron's. ``source`` keeps one source's rows.

    Examples
    --------
    >>> t = rendezvous_table(samples=8, source="lumos2025")
    >>> bool(t.share.max() < 0.01)  # measured variability: far below Lumos's 20-53%
    True
    """
    if source is not None:
        one_of("source", source, tuple(_corpus().source.unique()))
    return _rendezvous(integer("samples", samples, minimum=2), integer("seed", seed, minimum=0), source).copy()


@accepts()
def source_summary(points: pd.DataFrame) -> pd.DataFrame:
    """Per source (and ``"headline"``, ``"all rows"``): rows, headline rows, median and worst ``|error|`` of all its
    rows and of its headline rows, from a :func:`validation_points` table."""
    rows = []
    groups = [*points.groupby("source", sort=False), ("all rows", points)]
    for name, g in groups:
        e, h = g.error.abs(), g.error[g.headline].abs()
        rows.append((name, len(g), int(g.headline.sum()), e.median(), e.max(), h.median(), h.max()))
    cols = [
        "source",
        "rows",
        "headline_rows",
        "median_abs_error",
        "worst_abs_error",
        "headline_median",
        "headline_worst",
    ]
    return pd.DataFrame(rows, columns=cols)
