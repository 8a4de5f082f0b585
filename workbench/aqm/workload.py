"""Poisson flow arrivals at a chosen load over a flow-size distribution, and the size classes of FCT breakdowns.

The flow-size distributions themselves (:class:`FlowSizeCDF`, :func:`web_search`, re-exported here) live in
:mod:`workbench.fabric.flow_sizes`, below both the packet engine and the flow-level models that draw from them.
The web-search distribution is the flow-size CDF measured in a production web-search cluster and published with DCTCP
(Alizadeh et al., SIGCOMM 2010); the piecewise-linear table below is the version that later datacenter transport
papers (pFabric, HPCC, PRED) use in simulation. More than half of the flows are under 100 KB, but nearly all bytes
belong to multi-megabyte flows, which is what makes the short-flow tail latency so sensitive to the queue the long
flows build.

Flows arrive as a Poisson process whose rate makes the offered load a chosen fraction of a link's capacity:
``rate = load * capacity_bps / (8 * mean_size_bytes)``. :func:`websearch_matrix` draws a whole leaf-spine's flows
the way the ``fabric-websearch-128`` connection matrices were made (such a process per source host, a uniformly
random destination, a uniformly random spine per flow); :mod:`~workbench.aqm.cm_files` writes them as ``.cm`` and
``.spines`` files.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._contracts import Items, Opaque, accepts
from .._rng import Seed, generator, keyed
from .._validate import array_1d, in_range, integer, positive
from ..fabric.flow_sizes import WEB_SEARCH_CDF, FlowSizeCDF, web_search

__all__ = [
    "WEB_SEARCH_CDF",
    "FlowSizeCDF",
    "web_search",
    "poisson_flows",
    "websearch_matrix",
    "SIZE_CLASSES",
    "VALIDATION_SIZE_CLASSES",
    "size_class",
]


#: Flow-size classes used for FCT breakdowns: (label, low bytes inclusive, high bytes exclusive).
SIZE_CLASSES = (
    ("small (<100KB)", 0, 100_000),
    ("medium (100KB-10MB)", 100_000, 10_000_000),
    ("large (>=10MB)", 10_000_000, np.inf),
)


#: The classes the packet-level validation against per-packet simulators reports (issue 16): < 100 KB, 100 KB-1 MB,
#: >= 1 MB.
VALIDATION_SIZE_CLASSES = (
    ("small (<100KB)", 0, 100_000),
    ("medium (100KB-1MB)", 100_000, 1_000_000),
    ("large (>=1MB)", 1_000_000, np.inf),
)


@accepts(classes=Items(Opaque("a (label, low bytes, high bytes) triple"), min_size=1))
def size_class(size_bytes, classes=SIZE_CLASSES) -> np.ndarray:
    """Label of ``classes`` (default :data:`SIZE_CLASSES`) for each flow size (finite, >= 0 bytes).

    Examples
    --------
    >>> size_class([1000, 200_000, 20_000_000]).tolist()
    ['small (<100KB)', 'medium (100KB-10MB)', 'large (>=10MB)']
    >>> size_class([2_000_000], VALIDATION_SIZE_CLASSES).tolist()
    ['large (>=1MB)']
    """
    size = array_1d("size_bytes", size_bytes, low=0)
    edges = np.array([c[1] for c in classes[1:]], dtype=float)
    labels = np.array([c[0] for c in classes], dtype=object)
    return labels[np.searchsorted(edges, size, side="right")]


@accepts()
def poisson_flows(
    load: float,
    capacity_gbps: float,
    duration_s: float,
    *,
    sizes: FlowSizeCDF | None = None,
    seed: Seed = None,
) -> pd.DataFrame:
    """Poisson flow arrivals whose offered load is ``load`` times ``capacity_gbps`` over ``duration_s``.

    Parameters
    ----------
    load : float
        Offered load as a fraction of capacity, in ``(0, 1)`` (a steady state needs ``load < 1``).
    capacity_gbps : float
        Capacity the load refers to (one link, or the sum of host links for a fabric).
    duration_s : float
        Arrivals are generated in ``[0, duration_s)``.
    sizes : FlowSizeCDF, optional
        Flow-size distribution; default :func:`web_search`.
    seed : int, Generator or None

    Returns
    -------
    DataFrame with columns ``start_s`` (sorted) and ``size_bytes``.

    Examples
    --------
    >>> f = poisson_flows(0.5, 10.0, 0.01, seed=1)
    >>> list(f.columns)
    ['start_s', 'size_bytes']
    """
    load = in_range("load", load, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    capacity_gbps = positive("capacity_gbps", capacity_gbps)
    duration_s = positive("duration_s", duration_s)
    dist = web_search() if sizes is None else sizes
    rng = generator(seed)
    rate = load * capacity_gbps * 1e9 / (8.0 * dist.mean_bytes)
    n = int(rng.poisson(rate * duration_s))
    start = np.sort(rng.uniform(0.0, duration_s, n))
    return pd.DataFrame({"start_s": start, "size_bytes": dist.sample(n, rng)})


@accepts()
def websearch_matrix(
    load: float,
    duration_s: float,
    *,
    seed: int,
    leaves: int = 16,
    hosts_per_leaf: int = 8,
    spines: int = 8,
    link_gbps: float = 10.0,
    sizes: FlowSizeCDF | None = None,
) -> pd.DataFrame:
    """The flows of a leaf-spine connection matrix drawn as the ``fabric-websearch-128`` README states: per source
    host, Poisson arrivals at ``load`` x ``link_gbps`` (:func:`poisson_flows`), each to a uniformly random other host,
    with web-search sizes, each pinned to a uniformly random spine (per-flow ECMP; ``-1`` between two hosts of one
    leaf).

    Host ``h`` draws from the stream ``keyed(seed, h)`` (its arrivals, sizes, destinations, then spines), so a host's
    flows do not depend on how many hosts there are. Start times are whole picoseconds, as a ``.cm`` file holds them.

    Parameters
    ----------
    load : float
        Offered load of every host link, in ``(0, 1)``.
    duration_s : float
        Arrivals in ``[0, duration_s)``.
    seed : int
    leaves, hosts_per_leaf, spines : int
        Hosts ``hosts_per_leaf * l ... hosts_per_leaf * (l + 1) - 1`` sit under leaf ``l``.
    link_gbps : float
        Host link rate the load refers to.
    sizes : FlowSizeCDF, optional
        Default :func:`web_search`.

    Returns
    -------
    DataFrame
        ``flow_id`` (1, 2, ... in start order), ``src, dst, start_s, size_bytes, spine``.

    Examples
    --------
    >>> m = websearch_matrix(0.5, 0.002, seed=1)
    >>> list(m.columns), bool((m.src != m.dst).all()), bool(((m.spine == -1) == (m.src // 8 == m.dst // 8)).all())
    (['flow_id', 'src', 'dst', 'start_s', 'size_bytes', 'spine'], True, True)
    """
    load = in_range("load", load, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    duration_s = positive("duration_s", duration_s)
    leaves = integer("leaves", leaves, minimum=1, maximum=4096)
    hosts_per_leaf = integer("hosts_per_leaf", hosts_per_leaf, minimum=1, maximum=4096)
    spines = integer("spines", spines, minimum=1, maximum=4096)
    hosts = leaves * hosts_per_leaf
    if hosts < 2:
        raise ValueError(f"leaves x hosts_per_leaf must be at least 2 hosts, got {hosts}")
    parts = []
    for h in range(hosts):  # one stream per host (hosts, not flows: at most a few thousand)
        rng = keyed(seed, h)
        f = poisson_flows(load, link_gbps, duration_s, sizes=sizes, seed=rng)
        n = len(f)
        dst = rng.integers(0, hosts - 1, n)
        dst = dst + (dst >= h)
        spine = rng.integers(0, spines, n)
        parts.append(
            pd.DataFrame(
                {
                    "src": h,
                    "dst": dst,
                    "start_ps": np.round(f["start_s"].to_numpy() * 1e12),
                    "size_bytes": f["size_bytes"].to_numpy(),
                    "spine": spine,
                }
            )
        )
    df = pd.concat(parts, ignore_index=True)
    df["start_ps"] = df["start_ps"].astype(np.int64)
    df = df.sort_values(["start_ps", "src"], kind="stable", ignore_index=True)
    df.loc[df["src"] // hosts_per_leaf == df["dst"] // hosts_per_leaf, "spine"] = -1
    return pd.DataFrame(
        {
            "flow_id": np.arange(1, len(df) + 1, dtype=np.int64),
            "src": df["src"].to_numpy(np.int64),
            "dst": df["dst"].to_numpy(np.int64),
            "start_s": df["start_ps"].to_numpy() * 1e-12,
            "size_bytes": df["size_bytes"].to_numpy(np.int64),
            "spine": df["spine"].to_numpy(np.int64),
        }
    )
