"""PRED's adaptive marking (NSDI 2025): its configuration, its fluid form and what its two controllers do.

PRED's controllers
------------------
On each switch port, :class:`PredConfig` runs the paper's two control loops (compiled, in the per-packet engine's
loop: :mod:`workbench.aqm.perpacket_loop`, configured by :func:`workbench.aqm.perpacket.simulate_packets`):

* **Flow Concurrent Stabilizer (FCS)**: every ``fcs_period_rtts`` (1.25 RTT) it counts the distinct flows that sent
  packets into the queue during the period and sets the marking slope to ``slope_per_pkt * N`` (linear scaling,
  the variant the paper settles on over square-root scaling).
* **Queue Length Adjuster (QLA)**: every ``qla_period_rtts`` (5 RTT) it scores the period with the utility
  ``U = 0.4 * throughput / capacity - 0.6 * mean queue / queue_ref`` and hill-climbs: one period at the current
  setting, one with the slope offset raised by ``slope_step`` (0.025), one with it lowered, then keeps the best of the
  three. When the FCS slope is below ``min_slope_for_slope_tuning`` (0.05) it tunes the start point ``min_k``
  instead, in 5-packet steps (and drops its slope offset). The paper gives no bounds for these walks; here ``min_k``
  stays within ``[0, 40]`` packets, the offset within ``+-0.25`` and the slope at or above one flow's slope, because
  an unbounded hill climb on a noisy utility drifts.

The fluid form of a configuration (its one-flow ramp, whether the slope scales with the flow count and how) is
:meth:`PredConfig.fluid_marking`, used by every fluid computation of PRED.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._contracts import Opaque, accepts
from .._validate import in_range, nonnegative, one_of, positive
from .red import RedMarking

__all__ = ["PredConfig", "PRED_DEFAULT", "FluidMarking", "fluid_marking", "pred_controller"]


@accepts()
@dataclass(frozen=True)
class FluidMarking:
    """The arguments the fluid models (:func:`~workbench.aqm.fluid.steady_state`,
    :func:`~workbench.aqm.fluid.simulate_fluid`) take for a marking: the ramp of one flow, whether the slope scales
    with the number of flows (PRED's FCS) and how (``"linear"`` or ``"sqrt"``).

    Examples
    --------
    >>> from workbench.aqm.fluid import steady_state
    >>> f = fluid_marking(PredConfig())
    >>> steady_state([8], **f.kwargs()).round(1).tolist()
    [6.2]
    """

    marking: RedMarking
    scale_with_flows: bool = False
    scaling: str = "linear"

    @accepts()
    def kwargs(self) -> dict:
        """``marking``, ``scale_with_flows`` and ``scaling`` as keyword arguments."""
        return {"marking": self.marking, "scale_with_flows": self.scale_with_flows, "scaling": self.scaling}


@accepts()
@dataclass(frozen=True)
class PredConfig:
    """PRED's adaptive marking: Flow Concurrent Stabilizer (FCS) and Queue Length Adjuster (QLA).

    Parameters
    ----------
    slope_per_pkt : float
        Marking slope per concurrent flow; FCS sets the slope to ``slope_per_pkt * N``.
    min_k_pkts : float
        Initial start point of the marking ramp (packets).
    fcs, qla : bool
        Turn either controller off (``fcs=False`` keeps the slope at ``slope_per_pkt``).
    fcs_scaling : {"linear", "sqrt"}
        Slope ``unit * N`` (the paper's choice) or ``unit * sqrt(N)``.
    fcs_period_rtts, qla_period_rtts : float
        Control periods in base RTTs (paper: about 1.25 and 5).
    throughput_weight : float
        Weight of the throughput share in the QLA utility (paper: 0.4); the queue penalty gets the rest.
    slope_step, min_k_step_pkts : float
        QLA's probing steps (paper: 0.025 and 5 packets).
    min_slope_for_slope_tuning : float
        Below this slope QLA tunes ``min_k`` instead of the slope (paper: 0.05).
    queue_ref_pkts : float or None
        Queue length that costs a full unit of utility; default the link's bandwidth-delay product.
    max_min_k_pkts, max_slope_offset : float
        Bounds on what QLA may do (the paper does not give them): ``min_k`` stays in ``[0, max_min_k_pkts]`` and
        QLA's offset to the FCS slope in ``[-max_slope_offset, max_slope_offset]``; the slope never drops below one
        flow's ``slope_per_pkt``.

    Examples
    --------
    >>> PredConfig().slope_per_pkt
    0.01
    """

    slope_per_pkt: float = 0.01
    min_k_pkts: float = 5.0
    fcs: bool = True
    qla: bool = True
    fcs_period_rtts: float = 1.25
    qla_period_rtts: float = 5.0
    throughput_weight: float = 0.4
    slope_step: float = 0.025
    min_k_step_pkts: float = 5.0
    min_slope_for_slope_tuning: float = 0.05
    queue_ref_pkts: float | None = None
    max_min_k_pkts: float = 40.0
    max_slope_offset: float = 0.25
    fcs_scaling: str = "linear"

    def __post_init__(self) -> None:
        positive("slope_per_pkt", self.slope_per_pkt)
        nonnegative("min_k_pkts", self.min_k_pkts)
        positive("fcs_period_rtts", self.fcs_period_rtts)
        positive("qla_period_rtts", self.qla_period_rtts)
        in_range("throughput_weight", self.throughput_weight, 0.0, 1.0)
        positive("slope_step", self.slope_step)
        positive("min_k_step_pkts", self.min_k_step_pkts)
        nonnegative("min_slope_for_slope_tuning", self.min_slope_for_slope_tuning)
        if self.queue_ref_pkts is not None:
            positive("queue_ref_pkts", self.queue_ref_pkts)
        nonnegative("max_min_k_pkts", self.max_min_k_pkts)
        one_of("fcs_scaling", self.fcs_scaling, ("linear", "sqrt"))
        nonnegative("max_slope_offset", self.max_slope_offset)

    @accepts()
    def fluid_marking(self) -> FluidMarking:
        """PRED's fluid form: the one-flow ramp from ``min_k_pkts`` at ``slope_per_pkt``, scaled with the flow count
        by FCS (QLA has no fluid form).

        Examples
        --------
        >>> PredConfig().fluid_marking().marking.max_k_pkts
        105.0
        """
        return FluidMarking(RedMarking.from_slope(self.min_k_pkts, self.slope_per_pkt), self.fcs, self.fcs_scaling)


#: PRED as described in the paper, with a per-flow slope of 0.01 per packet from min_k = 5 packets.
PRED_DEFAULT = PredConfig()


@accepts()
def fluid_marking(marking: RedMarking | PredConfig) -> FluidMarking:
    """The fluid form of a static ramp (itself, not scaled) or of PRED (:meth:`PredConfig.fluid_marking`).

    Examples
    --------
    >>> fluid_marking(RedMarking(20, 200, 0.1)).scale_with_flows
    False
    """
    if isinstance(marking, PredConfig):
        return marking.fluid_marking()
    if isinstance(marking, RedMarking):
        return FluidMarking(marking)
    raise TypeError(f"marking must be a RedMarking or a PredConfig, got {type(marking).__name__}")


@accepts(net=Opaque("the packet network a simpy run holds"), li=Opaque("a link of net (the run that drives it checks)"))
def pred_controller(net, li: int):
    """PRED's two controllers on link ``li`` of ``net``, written plainly as a simpy process: the readable reference
    of the logic the per-packet engine runs compiled (``_pred_tick`` in :mod:`workbench.aqm.perpacket_loop`).
    ``tests/aqm/test_pred_mirror.py`` drives both with the same flow counts, busy times and queue integrals and
    requires the same marking ramps, so the two copies cannot drift. ``net`` provides ``env`` (a simpy
    environment), ``marking`` (the :class:`PredConfig`), ``rtt_s``, ``monitor``, ``control`` and ``links`` whose
    entries hold the port's rate ``c`` (packets/s), its ``flows`` seen in the period, ``served`` and ``area``
    (refreshed by ``advance(now)``) and the ramp ``lo``, ``hi``, ``maxp`` the controller sets."""
    cfg: PredConfig = net.marking
    env = net.env
    L = net.links[li]
    fcs_dt = cfg.fcs_period_rtts * net.rtt_s
    qla_every = max(1, round(cfg.qla_period_rtts / cfg.fcs_period_rtts))
    qref = cfg.queue_ref_pkts or L.c * net.rtt_s
    offset = 0.0
    min_k = cfg.min_k_pkts
    phase = 0
    utils = [0.0, 0.0, 0.0]
    mode = "slope"
    base_param = 0.0
    n_flows = 1
    tick = 0
    served0, area0, t0 = L.served, L.area, env.now
    monitored = li in net.monitor

    def fcs_factor(n: int) -> float:
        if not cfg.fcs:
            return 1.0
        return float(n) if cfg.fcs_scaling == "linear" else math.sqrt(n)

    def apply() -> float:
        slope = cfg.slope_per_pkt * fcs_factor(n_flows) + offset
        slope = max(slope, cfg.slope_per_pkt)
        L.lo = min_k
        L.hi = min_k + 1.0 / slope
        L.maxp = 1.0
        return slope

    while True:
        yield env.timeout(fcs_dt)
        now = env.now
        n_flows = max(1, len(L.flows))
        L.flows.clear()
        tick += 1
        if cfg.qla and tick % qla_every == 0:
            L.advance(now)
            span = now - t0
            util = (L.served - served0) / (L.c * span)
            qmean = (L.area - area0) / span
            served0, area0, t0 = L.served, L.area, now
            utils[phase] = cfg.throughput_weight * util - (1.0 - cfg.throughput_weight) * qmean / qref
            if phase == 0:
                fcs_slope = cfg.slope_per_pkt * fcs_factor(n_flows)
                mode = "slope" if fcs_slope >= cfg.min_slope_for_slope_tuning else "min_k"
                if mode == "min_k":
                    offset = 0.0
                base_param = offset if mode == "slope" else min_k
                phase = 1
                step = +1
            elif phase == 1:
                phase = 2
                step = -1
            else:
                best = int(np.argmax(utils))
                step = (0, +1, -1)[best]
                phase = 0
            if mode == "slope":
                offset = min(max(base_param + step * cfg.slope_step, -cfg.max_slope_offset), cfg.max_slope_offset)
            else:
                min_k = min(max(0.0, base_param + step * cfg.min_k_step_pkts), cfg.max_min_k_pkts)
        slope = apply()
        if monitored:
            net.control.append((now, li, n_flows, slope, min_k))
