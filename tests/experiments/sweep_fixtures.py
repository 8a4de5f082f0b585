"""Experiments the sweep tests run: seeded draws that take a set time, and points that fail on request.

Imported by the tests (and by the client subprocess of the kill test) from this directory; shipped to Dask workers by
value (:func:`cloudpickle.register_pickle_by_value`), so a separately started worker needs no test code on its path.
"""

from __future__ import annotations

import sys
import time

import cloudpickle
import numpy as np
import pandas as pd

from workbench.experiments import Param, experiment

cloudpickle.register_pickle_by_value(sys.modules[__name__])


@experiment(
    "test-draws",
    version="1",
    params=[
        Param("x", 1.0, "", low=0.0, high=10.0, doc="scale of the draws"),
        Param("arm", "a", choices=("a", "b"), seeded=False, doc="a treatment"),
        Param("busy_s", 0.0, "s", low=0.0, high=5.0, doc="seconds each point takes"),
        Param("fail_above", 100.0, "", doc="points with x above this raise"),
    ],
)
def draws(*, x, arm, busy_s, fail_above, seed):
    """Three seeded draws scaled by x (a tidy three-row result); sleeps ``busy_s``; raises above ``fail_above``."""
    if x > fail_above:
        raise RuntimeError(f"x={x} is above {fail_above}")
    time.sleep(busy_s)
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"k": np.arange(3), "value": x * rng.random(3) + (arm == "b")})
