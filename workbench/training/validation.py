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
measured kernels' throughput a training step sustains on ampere and on hopper GPUs. :func:`estimate` chooses them to minimise the summed ``|log(model / published)|`` over
the headline rows it is given; :func:`validation_points` estimates them once per source on the other sources' rows
and reports each source's rows under the estimate that never saw them (leave-one-source-out): that is the ``error``
reported everywhere. Nothing else is chosen per row or per source.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .._deps import remember
from ..data import require
from ..serving.specs import gpu as gpu_record
from ..serving.specs import model as model_record
from .iteration import CALIBRATION, Calibration, assemble, iteration_parts
from .specs import Model, Plan

__all__ = [
    "CORPUS",
    "HEADLINE_SENSITIVITY",
    "METRICS",
    "corpus",
    "corpus_model",
    "corpus_plan",
    "estimate",
    "sensitivity",
    "source_summary",
    "validation_points",
]

CORPUS = "training_validation/corpus.csv"
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
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
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


def corpus() -> pd.DataFrame:
    """The validation corpus, one row per published run (a copy; columns in ``datasets/training_validation/README.md``).

    Examples
    --------
    >>> c = corpus()
    >>> len(c) >= 50, c.source.nunique() >= 8, sorted(c.gpu.unique())
    (True, True, ['A100-80GB', 'H100-SXM'])
    """
    return _corpus().copy()


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


def corpus_plan(row) -> Plan:
    """The :class:`Plan` a corpus row states (or assumes)."""
    return Plan(**{k: (v.item() if hasattr(v, "item") else v) for k, v in ((k, row[k]) for k in _PLAN)})


def _alternatives(row) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for item in filter(None, (s.strip() for s in str(row["alternatives"]).split(";"))):
        field, _, value = item.partition("=")
        if field not in (*_PLAN, "nic_gbps") or not value:
            raise ValueError(
                f"{CORPUS}: row {row['id']!r}: alternative {item!r} must be <plan field or nic_gbps>=<value>"
            )
        out.append((field, float(value) if field == "nic_gbps" else (int(value) if field in _INT else value)))
    return out


def _variants(df: pd.DataFrame) -> pd.DataFrame:
    """Each row as stated, then one variant per alternative (``variant`` names it, ``row`` is the row's index)."""
    rows = []
    for i, r in df.iterrows():
        rows.append({**r.to_dict(), "row": i, "variant": ""})
        for field, value in _alternatives(r):
            rows.append({**r.to_dict(), field: value, "row": i, "variant": f"{field}={value}"})
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


def estimate(exclude_source: str | None = None) -> Calibration:
    """The :class:`~workbench.training.iteration.Calibration` that minimises ``sum |log(model / published)|`` over the
    headline rows of the corpus (those of ``exclude_source`` left out): the sustained fraction of each GPU generation
    on its own rows, searched on a grid of step 0.005 from 0.6 to 1.2 (1.0 for a generation with no such row).

    Examples
    --------
    >>> c = estimate()
    >>> 0.6 <= c.sustained_hopper <= 1.2 and 0.6 <= c.sustained_ampere <= 1.2
    True
    """
    df, parts = _stated()
    use = df.headline.to_numpy() & (df.source != exclude_source).to_numpy()
    chosen = {}
    for g in ("ampere", "hopper"):
        rows = np.flatnonzero(use & (parts["generation"] == g))
        if rows.size == 0:
            chosen[g] = 1.0
            continue
        sub = {k: a[rows] for k, a in parts.items()}
        out = assemble(sub, sustained=_SUSTAINED[:, None])  # one row of candidates per grid value
        model = _metric(out, df.metric.to_numpy()[rows])
        loss = np.abs(np.log(model / df.value.to_numpy()[rows])).sum(axis=1)
        chosen[g] = float(_SUSTAINED[int(np.argmin(loss))])
    return Calibration(chosen["ampere"], chosen["hopper"])


@remember
def _loso() -> dict[str, Calibration]:
    return {s: estimate(s) for s in _corpus().source.unique()}


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
