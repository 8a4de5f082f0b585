"""What a fresh process pays to import the studies: every panel, dashboard kernel, CLI call and Dask worker is one.

``scipy.stats`` and ``scipy.optimize`` cost ~0.5 s at import. The serving studies reach
:mod:`workbench.arrivals` and the workload characterization through ServeGen's composer, and used to pay it without
calling either library; the few functions that use them import them where they are used."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd

#: Modules whose import must not load :data:`HEAVY`: the serving, arrival and workload studies and the panels built on
#: them.
LIGHT = (
    "workbench.experiments.serving",
    "workbench.experiments.arrivals",
    "workbench.arrivals",
    "workbench.workloads.characterize",
    "workbench.workloads.describe",
    "workbench.widgets.preemption",
    "workbench.widgets.serving_hw",
)

#: Libraries loaded only by the functions that use them.
HEAVY = ("scipy.stats", "scipy.optimize")


def test_importing_the_serving_and_arrival_studies_leaves_scipy_stats_unloaded():
    code = (
        "import importlib, sys\n"
        f"for m in {LIGHT!r}: importlib.import_module(m)\n"
        f"print(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)) or '-')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["-"], f"importing {LIGHT} loaded {out.stdout.strip()}"


def test_the_functions_that_need_scipy_stats_still_reach_it():
    from scipy import stats

    from workbench import arrivals
    from workbench.workloads.characterize import lengths

    p = arrivals.Gamma.from_burstiness(rate_rps=2.0, burstiness=0.5)
    x = np.array([0.1, 0.5, 2.0])
    assert np.allclose(p.pdf(x), stats.gamma.pdf(x, p.shape, scale=p.scale_s), rtol=1e-12)
    gaps = p.interarrivals(20_000, seed=3)
    fit = arrivals.fit_gamma(gaps)
    assert 0.0 <= fit.p_value < 1e-6  # a burstiness-0.5 Gamma is far from Poisson
    rr = lengths.request_response(
        pd.DataFrame(
            {"arrival_s": np.arange(200.0), "input_tokens": np.arange(1, 201), "output_tokens": np.arange(1, 201) * 2}
        )
    )
    assert rr.spearman == 1.0
