"""Sweeps over fabric sizes and schemes, shared by the reproductions, the widgets and the notebooks.

Each sweep is a short loop over a handful of sweep points (fabric sizes, schemes); everything inside a point is the
vectorized model of :mod:`workbench.fabric.routing` and :mod:`workbench.fabric.metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .._rng import Seed, spawn
from .._validate import integer, positive
from .collectives import collective_steps
from .metrics import congestion_ratio
from .planning import fabric_slowdown
from .topology import leaf_spine

__all__ = ["ratio_vs_size"]


def ratio_vs_size(
    leaves: Sequence[int],
    spines: int,
    hosts_per_leaf: int,
    collective: str = "halving_doubling",
    schemes: Sequence[str] = ("ecmp", "mp-8", "minimal"),
    step: int | None = 0,
    samples: int = 200,
    seed: Seed = 0,
    host_gbps: float = 100.0,
    uplink_gbps: float | None = None,
    failed_links: Sequence[tuple[int, int]] = (),
) -> pd.DataFrame:
    """Congestion ratio to ideal spraying per scheme for fabrics of ``leaves[i]`` leaves, one rank per host.

    For ``halving_doubling`` the ranks are the largest power of two that fits, placed on the first hosts.

    With ``step`` an index, the ratio of that step's max congestion (Monte-Carlo mean); with ``step=None`` the
    ratio of the whole collective's bandwidth time (``fabric_slowdown`` with spraying as the baseline). Failed
    links that do not exist in a smaller fabric are ignored there.

    Returns
    -------
    pandas.DataFrame with columns ``leaves, gpus, scheme, ratio``.

    Examples
    --------
    >>> t = ratio_vs_size([2, 4], 4, 4, schemes=("ecmp", "minimal"), samples=50)
    >>> t.loc[t.scheme == "minimal", "ratio"].round(6).tolist()
    [1.0, 1.0]
    """
    spines = integer("spines", spines, minimum=1)
    hosts_per_leaf = integer("hosts_per_leaf", hosts_per_leaf, minimum=1)
    samples = integer("samples", samples, minimum=1)
    host_gbps = positive("host_gbps", host_gbps)
    rows = []
    for n_leaves, rng in zip(leaves, spawn(seed, len(leaves))):
        n_leaves = integer("leaves element", n_leaves, minimum=1)
        failed = [(a, b) for a, b in failed_links if a < n_leaves and b < spines]
        topo = leaf_spine(n_leaves, spines, hosts_per_leaf, host_gbps=host_gbps, uplink_gbps=uplink_gbps,
                          failed_links=failed)
        n = topo.n_hosts
        if collective == "halving_doubling":
            n = 1 << (n.bit_length() - 1)  # largest power of two that fits, on the first hosts
        if n < 2:
            continue
        steps = collective_steps(collective, n, 2**30, seed=rng)
        for scheme, srng in zip(schemes, spawn(rng, len(schemes))):
            if step is None:
                r = fabric_slowdown(topo, collective, n, scheme, baseline="spray", samples=samples, seed=srng)
            else:
                r = congestion_ratio(topo, steps[min(step, len(steps) - 1)], scheme, samples=samples, seed=srng)
            rows.append((n_leaves, n, scheme, float(r)))
    return pd.DataFrame(rows, columns=["leaves", "gpus", "scheme", "ratio"])
