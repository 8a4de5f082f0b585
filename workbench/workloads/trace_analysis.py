"""The BurstGPT analysis of one request trace: the traces it runs on, selections, and trace-vs-regeneration.

What the BurstGPT reproduction (:mod:`workbench.reproductions.burstgpt`) and its panel
(:mod:`workbench.widgets.burstgpt`) both need, written once here in the model layer:

* the traces: :func:`burstgpt_trace`, BurstGPT when a file is on the data search path, else the labelled stand-in
  generated from the paper's parameters (:func:`workbench.workloads.burstgpt.stand_in`), and :func:`real_trace`,
  the real production traces of :data:`REAL_TRACES` (Azure LLM inference 2023 code and conversation, Mooncake
  conversation) when present;
* :func:`select`, the rows of one model and/or log type;
* :func:`length_curve`, a length column's empirical tail with its Zipf and lognormal fits;
* :func:`analyze`, everything the panel shows for one trace (:class:`TraceAnalysis`): per-window Gamma fits, a
  BurstGPT-style regeneration from the trace's own fit at a rate multiplier, both arrival-rate series, the length
  curve, request-response bins and the headline summary.

Examples
--------
>>> from workbench.workloads import burstgpt as gen
>>> df = select(gen.stand_in(days=1.0, seed=1), log_type="api")
>>> set(df["log_type"].astype(str))
{'api'}
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import data
from .._contracts import accepts, output
from .._deps import remember
from .._rng import spawn
from ..distributions import survival_at_values
from . import burstgpt as gen
from . import characterize as C
from . import traces

__all__ = [
    "SEED",
    "WINDOW_S",
    "BURSTGPT_FILES",
    "REAL_TRACES",
    "STAND_IN_DAYS",
    "burstgpt_path",
    "burstgpt_trace",
    "burstgpt_label",
    "real_trace",
    "select",
    "length_curve",
    "TraceAnalysis",
    "analyze",
]

#: Seed of the analysis and of the stand-in (BurstGPT's arXiv date).
SEED = 20240127
#: BurstGPT's 20-minute windows.
WINDOW_S = 1200.0
BURSTGPT_FILES = ("burstgpt/BurstGPT_1.csv", "burstgpt/BurstGPT_2.csv", "burstgpt/BurstGPT_3.csv")
#: Real production traces by display name -> path on the data search path.
REAL_TRACES = {
    "Azure code": "azure-llm-2023/AzureLLMInferenceTrace_code.csv",
    "Azure conversation": "azure-llm-2023/AzureLLMInferenceTrace_conv.csv",
    "Mooncake conversation": "mooncake-fast25/conversation_trace.jsonl",
}
#: Days of the stand-in per scale.
STAND_IN_DAYS = {"full": 7.0, "quick": 3.0}


@accepts()
def burstgpt_path() -> str | None:
    """The first BurstGPT file on the data search path, or None."""
    for rel in BURSTGPT_FILES:
        if data.find(rel) is not None:
            return rel
    return None


@accepts()
@remember
def burstgpt_trace(scale: str) -> pd.DataFrame:
    """The BurstGPT trace if present on the search path, else the labelled stand-in (``attrs["stand_in"]``) of
    ``STAND_IN_DAYS[scale]`` days."""
    rel = burstgpt_path()
    if rel is not None:
        return traces.load_trace(rel)
    return gen.stand_in(days=STAND_IN_DAYS[scale], seed=SEED)


@accepts()
def burstgpt_label(scale: str = "full") -> str:
    """Display name of :func:`burstgpt_trace`: ``"BurstGPT"`` or ``"BurstGPT stand-in (generated)"``.

    Examples
    --------
    >>> burstgpt_label("quick") in ("BurstGPT", "BurstGPT stand-in (generated)")
    True
    """
    return "BurstGPT stand-in (generated)" if burstgpt_trace(scale).attrs.get("stand_in") else "BurstGPT"


@accepts()
@remember
def real_trace(name: str) -> pd.DataFrame | None:
    """A real production trace by display name (see :data:`REAL_TRACES`), or None when not on the search path."""
    rel = REAL_TRACES[name]
    return traces.load_trace(rel) if data.find(rel) is not None else None


@accepts()
def select(df: pd.DataFrame, *, model: str | None = None, log_type: str | None = None) -> pd.DataFrame:
    """Rows of one model and/or log type (``None`` keeps all), with the source's attrs.

    Examples
    --------
    >>> df = pd.DataFrame({"arrival_s": [0.0, 1.0], "model": ["GPT-4", "ChatGPT"], "log_type": ["api", "api"]})
    >>> select(df, model="GPT-4")["arrival_s"].tolist()
    [0.0]
    """
    keep = np.ones(len(df), bool)
    if model is not None:
        keep &= (df["model"].astype("string") == model).fillna(False).to_numpy()
    if log_type is not None:
        keep &= (df["log_type"].astype("string") == log_type).fillna(False).to_numpy()
    out = df[keep].reset_index(drop=True)
    out.attrs = dict(df.attrs)
    return out


@accepts()
def length_curve(df: pd.DataFrame, column: str = "input_tokens") -> dict:
    """Empirical CCDF of a length column (lengths >= 1) and the fitted Zipf and lognormal CCDFs on a log grid.

    Returns ``{"values", "ccdf"}`` (every distinct length and ``P(X >= length)``,
    :func:`workbench.distributions.survival_at_values`), ``"grid"`` and ``"fits"`` (label -> CCDF on the grid).

    Examples
    --------
    >>> df = pd.DataFrame({"input_tokens": np.arange(1, 1001)})
    >>> c = length_curve(df)
    >>> float(c["ccdf"][0]), sorted(c) == ["ccdf", "fits", "grid", "values"]
    (1.0, True)
    """
    x = df[column].to_numpy()
    vals, ccdf = survival_at_values(x[x >= 1])
    grid = np.unique(np.geomspace(1, vals.max(), 200).astype(int))
    fits = {}
    for fam, fit in (("Zipf", C.fit_zipf(x)), ("lognormal", C.fit_lognormal(x))):
        fits[f"{fam} (KS {fit.ks:.2f})"] = 1.0 - fit.cdf(grid - 1)
    return {"values": vals, "ccdf": ccdf, "grid": grid, "fits": fits}


@output
@dataclass(frozen=True)
class TraceAnalysis:
    """What :func:`analyze` measures on one trace.

    Attributes
    ----------
    fits : DataFrame
        Per-window Gamma fits (:func:`workbench.workloads.characterize.window_gamma_fits`).
    model : BurstGPTModel
        The BurstGPT-style model fitted to the trace.
    generated : DataFrame
        A request table generated from ``model`` at the rate multiplier.
    series : dict of str -> DataFrame
        Arrival-rate series of the trace and of the regeneration (``"generated x<rate_scale>"``).
    length : dict
        :func:`length_curve` of the request lengths.
    request_response : RequestResponse
        :func:`workbench.workloads.characterize.request_response`.
    summary : TraceSummary
        :func:`workbench.workloads.characterize.summarize`.
    """

    fits: pd.DataFrame
    model: gen.BurstGPTModel
    generated: pd.DataFrame
    series: dict[str, pd.DataFrame]
    length: dict
    request_response: C.RequestResponse
    summary: C.TraceSummary


@accepts()
def analyze(
    df: pd.DataFrame, *, window_s: float = WINDOW_S, rate_scale: float = 1.0, seed: int = SEED
) -> TraceAnalysis:
    """Everything the interactive panel shows for one trace: per-window fits, a BurstGPT-style regeneration at
    ``rate_scale`` times the rate from the trace's own fit, arrival-rate series of both, length curves and
    request-response bins.

    Raises
    ------
    ValueError
        If ``df`` has fewer than 50 requests.

    Examples
    --------
    >>> from workbench.workloads import burstgpt as gen
    >>> out = analyze(gen.stand_in(days=1.0, seed=1), window_s=1200.0, rate_scale=2.0)
    >>> list(out.series)
    ['trace', 'generated x2']
    """
    if len(df) < 50:
        raise ValueError(f"the selection has {len(df)} requests; at least 50 are needed")
    r_fit, r_gen = spawn(seed, 2)
    fits = C.window_gamma_fits(df, window_s, seed=r_fit)
    model = gen.fit_model(df, window_s=window_s, seed=r_fit, min_gaps=5)
    generated = gen.generate(model, rate_scale=rate_scale, seed=r_gen)
    span = float(df["arrival_s"].iloc[-1])
    bin_s = 3600.0 if span > 6 * 3600 else 60.0
    series = {"trace": C.rate_series(df, bin_s), f"generated x{rate_scale:g}": C.rate_series(generated, bin_s)}
    return TraceAnalysis(
        fits=fits,
        model=model,
        generated=generated,
        series=series,
        length=length_curve(df, "input_tokens"),
        request_response=C.request_response(df),
        summary=C.summarize(df, window_s=window_s, seed=seed),
    )
