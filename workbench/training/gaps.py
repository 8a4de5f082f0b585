"""What the iteration model cannot explain on the validation corpus, measured: a source's published breakdown of an
iteration against the model's terms (:func:`gap_table`: how much the model lacks for Issue 38's worst-case bar), and
the published runs that contradict each other for any model in which more data parallelism cannot shorten an
iteration (:func:`consistency_floor`: the least worst error such a model reaches on them). Both read the corpus and
the leave-one-source-out estimates of :mod:`workbench.training.validation`; ``docs/training_validation.md`` reports
them for Lumos's runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._contracts import accepts
from .._validate import one_of
from .iteration import assemble
from .validation import BREAKDOWNS, _corpus, _loso, _published_compute, _stated, validation_points

__all__ = ["WORST_BAR", "consistency_floor", "gap_table"]

#: Issue 38's bar on the worst headline row: ``|error| <= 0.20``.
WORST_BAR = 0.20
#: What two runs must share for one to do the same work per replica as the other (all but ``dp``): the model, the
#: GPU, the software, the plan but its data parallelism and, per pipeline, micro-batches of the same size and count.
_SAME_REPLICA = ("model_name", "gpu", "era", "pipeline", "nic_gbps", "tp", "pp", "ep", "virtual_stages", "micro_batch",
                 "micro_batches", "recompute", "sequence_parallel", "distributed_optimizer", "overlap_tp",
                 "overlap_p2p", "overlap_dp", "balanced_ends", "metric")  # fmt: skip


@accepts()
def consistency_floor() -> pd.DataFrame:
    """Where the published runs contradict each other for any model in which more data parallelism cannot make an
    iteration shorter (beyond the optimizer step it shards), and the least worst ``|error|`` such a model can reach.

    Two runs with the same per-replica work (every setting of ``_SAME_REPLICA`` equal: the same model, GPU, software,
    TP/PP/EP, virtual stages and micro-batches per pipeline) and different ``dp`` differ only by the data-parallel
    collective, which more replicas can only make longer (more of the ring on the fabric, ``2 (n - 1) / n`` of the
    bytes per GPU), and by the optimizer step, which the distributed optimizer shards over them: the model's
    iteration with more replicas is at least its iteration with fewer minus that saving (``saving_s``, the model's
    HBM-bound step: 28 bytes per local parameter). When the run with more replicas was faster by more than the
    saving, no such model can be within less than ``floor = (T_small - T_large - saving) / (T_small + T_large)`` of
    both, reached by predicting ``T_small (1 - floor)`` for the run with fewer replicas (``best_small_s``). Only
    iteration-time rows (the pair's metric compares directly).

    Returns
    -------
    pandas.DataFrame
        One row per contradicting pair: ``source``, ``small``/``large`` (the runs' ids, fewer and more replicas),
        ``dp_small``/``dp_large``, ``published_small``/``published_large`` (s), ``model_small``/``model_large`` (the
        model's iteration, s), ``saving_s``, ``best_small_s``, ``floor`` and whether both runs are ``headline`` rows.

    Examples
    --------
    >>> f = consistency_floor()
    >>> f = f[f.floor > 0.05]  # Lumos: 1.446 s at DP 4 and 1.010 s at DP 8 on the same pipeline
    >>> list(f.small), round(float(f.floor.max()), 3)
    (['lumos-15b-2x8x4'], 0.177)
    """
    df, parts = _stated()
    p = validation_points()
    d = df.assign(micro_batches=parts["micro_batches"], nic_gbps=df.nic_gbps.fillna(-1.0), model=p.iteration_s,
                  optimizer=parts["optimizer_s"])  # fmt: skip
    d = d[d.metric == "iteration_s"]
    rows = []
    for _, g in d.groupby(list(_SAME_REPLICA), sort=False):
        g = g.sort_values("dp")
        for a in range(len(g)):
            for b in range(a + 1, len(g)):
                small, large = g.iloc[a], g.iloc[b]
                ts, tl = float(small.value), float(large.value)
                saving = max(0.0, float(small.optimizer - large.optimizer))
                if large.dp == small.dp or ts - tl <= saving:
                    continue
                floor = (ts - tl - saving) / (ts + tl)
                rows.append((small.source, small.id, large.id, int(small.dp), int(large.dp), ts, tl,
                             float(small.model), float(large.model), saving, ts * (1 - floor), floor,
                             bool(small.headline and large.headline)))  # fmt: skip
    cols = ["source", "small", "large", "dp_small", "dp_large", "published_small", "published_large", "model_small",
            "model_large", "saving_s", "best_small_s", "floor", "headline"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


@accepts()
def gap_table(source: str = "lumos2025") -> pd.DataFrame:
    """Each run of ``source`` with a published breakdown (:func:`breakdowns`): what it measured against what the
    model has, term by term, and how much the model lacks to meet Issue 38's worst-case bar (:data:`WORST_BAR`).

    Per run (milliseconds; the calibration estimated without the source): ``measured_ms``, its ``measured_compute_ms``
    (exposed plus overlapped compute) and ``measured_rest_ms`` (exposed communication and idle); the model's
    ``model_ms`` and its terms: ``compute_ms`` (one GPU of a mean stage), ``ends_ms`` (what the slowest rank, the
    last with the output layer and loss, computes beyond a mean stage), ``bubble_ms``, ``exchange_ms`` (the blocking
    pipeline exchanges), ``tp_ms``, ``dp_ms`` (the exposed DP collective and the tied-embedding all-reduce) and
    ``optimizer_ms``; ``rest_ms`` (the model's iteration beyond ``compute_ms``) and ``lacking_ms``, what the model
    would have to add to come within the bar (``(1 - WORST_BAR) x measured - model``; 0 when it is within).

    Examples
    --------
    >>> g = gap_table().set_index("id")
    >>> round(float(g.lacking_ms["lumos-15b-2x16x4"]))  # a mechanism worth about 0.6 s at PP 16 and 32 micro-batches
    616
    """
    one_of("source", source, tuple(_corpus().source.unique()))
    df, parts = _stated()
    compute = _published_compute(df)
    rows = np.flatnonzero((df.source == source).to_numpy() & np.isfinite(compute))
    if rows.size == 0:
        raise ValueError(f"source {source!r} publishes no breakdown in {BREAKDOWNS}")
    sub = {k: a[rows] for k, a in parts.items()}
    out = assemble(sub, _loso()[source])
    gen = parts["generation"][rows]
    sustained = np.array([_loso()[source].sustained(str(g)) for g in gen])
    mean_compute = sub["micro_batches"] * sub["kernel_s"] / sustained
    measured = df.value.to_numpy()[rows]
    t = df.iloc[rows][["id", "model_name", "tp", "pp", "dp"]].reset_index(drop=True)
    t["micro_batches"] = sub["micro_batches"].astype(int)
    t["measured_ms"] = measured * 1e3
    t["measured_compute_ms"] = compute[rows] * 1e3
    t["measured_rest_ms"] = t.measured_ms - t.measured_compute_ms
    t["model_ms"] = out["iteration_s"] * 1e3
    t["compute_ms"] = mean_compute * 1e3
    t["ends_ms"] = out["compute_s"] * 1e3 - t.compute_ms
    t["bubble_ms"] = out["bubble_s"] * 1e3
    t["exchange_ms"] = out["pp_p2p_s"] * 1e3
    t["tp_ms"] = out["tp_comm_s"] * 1e3
    t["dp_ms"] = out["dp_exposed_s"] * 1e3
    t["optimizer_ms"] = out["optimizer_s"] * 1e3
    t["rest_ms"] = t.model_ms - t.compute_ms
    t["lacking_ms"] = np.maximum(0.0, (1.0 - WORST_BAR) * t.measured_ms - t.model_ms)
    return t
