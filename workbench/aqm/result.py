"""The result of a packet-level run (:func:`workbench.aqm.perpacket.simulate_packets` and the scenarios built on it)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .._contracts import accepts

__all__ = ["SimResult"]


@accepts()
@dataclass(frozen=True)
class SimResult:
    """Outputs of a packet-level run.

    Attributes
    ----------
    flows : DataFrame
        One row per flow: ``flow_id, size_bytes, start_s, fct_s`` (NaN if unfinished), ``finished`` and the
        engine's per-flow counters (scenarios add columns such as ``is_long`` and ``kind``).
    queue : DataFrame
        Sampled queue lengths: ``time_s, link, queue_pkts`` (empty when nothing is sampled).
    links : DataFrame
        Per switch port over the measurement window: ``link, utilization, mean_queue_pkts`` and counters such as
        ``marks, drops``.
    control : DataFrame
        PRED controller trace: ``time_s, link, n_flows, slope_per_pkt, min_k_pkts`` (empty when not traced).
    packets : int
        Data packets sent by all senders (the figure of merit for simulation speed).
    duration_s : float
        Simulated time.

    Examples
    --------
    >>> empty = pd.DataFrame()
    >>> SimResult(empty, empty, empty, empty, 0, 0.0).packets
    0
    """

    flows: pd.DataFrame
    queue: pd.DataFrame
    links: pd.DataFrame
    control: pd.DataFrame
    packets: int
    duration_s: float
