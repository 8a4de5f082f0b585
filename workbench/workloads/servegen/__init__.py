"""ServeGen: per-client pools of Alibaba Model Studio's released statistics and a composer of per-client workloads.

ServeGen (Xiang et al., arXiv 2505.09999) characterizes a production LLM service client by client. This package:

* :mod:`~workbench.workloads.servegen.pool` -- :class:`ClientPool`, one model's clients as dense arrays (rate, CV
  and family per 600 s window; a length PMF per 6 h window), with span selection, client filters and summaries;
* :mod:`~workbench.workloads.servegen.pmf` -- the safe PMF-literal parser and :class:`PmfTable`, every PMF of a field
  concatenated for vectorized sampling;
* :mod:`~workbench.workloads.servegen.load` -- :func:`load_pool` from the raw release (cached) or the embedded summary;
* :mod:`~workbench.workloads.servegen.compose` -- :func:`compose`, the per-client workload, :func:`target_rates` (the
  one home of "the data's own rate curve scaled to a mean rate") and :func:`naive_workload`, the aggregate baseline;
* :mod:`~workbench.workloads.servegen.stats` -- the statistics behind the paper's findings (concentration,
  burstiness, diurnal profile, length shapes).

The names users need are importable from the package: ``from workbench.workloads import servegen as sg`` then
``sg.load_pool``, ``sg.compose``, ``sg.stats.top_share``.

Examples
--------
>>> from workbench.workloads import servegen as sg
>>> pool = sg.load_pool("m-large").select(14 * 3600, 1200)
>>> df = sg.compose(pool, mean_rate_rps=3.0, seed=0)
>>> 2000 < len(df) < 5000
True
"""

from ...distributions import weighted_quantile
from . import stats
from .compose import compose, compose_plan, naive_workload, target_rates
from .load import load_pool, raw_model_dir, summary_path
from .pmf import PmfTable, parse_pmf_literal
from .pool import FAMILIES, FIELDS, LENGTH_WINDOW_S, MODELS, WINDOW_S, ClientPool

__all__ = [
    "MODELS",
    "FIELDS",
    "FAMILIES",
    "WINDOW_S",
    "LENGTH_WINDOW_S",
    "ClientPool",
    "PmfTable",
    "load_pool",
    "raw_model_dir",
    "summary_path",
    "parse_pmf_literal",
    "weighted_quantile",
    "target_rates",
    "compose",
    "compose_plan",
    "naive_workload",
    "stats",
]
