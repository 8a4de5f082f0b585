"""PRED's controllers exist twice: the simpy process :func:`workbench.aqm.pred.pred_controller` and its compiled
mirror ``_pred_tick`` in :mod:`workbench.aqm.perpacket_loop`. Driven with the same flow counts, busy times and queue
integrals, period after period, they must set the same marking ramps exactly."""

from __future__ import annotations

import numpy as np
import pytest
import simpy

from workbench.aqm.perpacket import pred_parameters
from workbench.aqm.perpacket_loop import _pred_tick
from workbench.aqm.pred import PredConfig, pred_controller

CAP_GBPS, MTU, RTT_S, TICKS = 10.0, 1500, 20e-6, 60
PKTS_PER_S = CAP_GBPS * 1e9 / (8 * MTU)


class _Link:
    """A port whose flow count, served packets and queue integral at each period's end come from a script."""

    def __init__(self, env, script, dt):
        self.env, self.script, self.dt = env, script, dt
        self.c = PKTS_PER_S
        self.served, self.area = 0.0, 0.0
        self.lo = self.hi = self.maxp = 0.0

    def _tick(self) -> int:
        return round(self.env.now / self.dt)

    @property
    def flows(self) -> set:
        return set(range(self.script["flows"][self._tick() - 1]))

    def advance(self, now) -> None:
        k = self._tick() - 1
        self.served = self.script["busy_s"][k] * self.c
        self.area = self.script["area"][k]


class _Net:
    def __init__(self, cfg, script):
        self.env = simpy.Environment()
        self.marking, self.rtt_s, self.monitor, self.control = cfg, RTT_S, (), []
        self.links = [_Link(self.env, script, cfg.fcs_period_rtts * RTT_S)]


@pytest.mark.parametrize(
    "cfg",
    [
        PredConfig(),
        PredConfig(fcs_scaling="sqrt"),
        PredConfig(qla=False),
        PredConfig(fcs=False),
        PredConfig(slope_per_pkt=0.002, queue_ref_pkts=30.0),
    ],
)
def test_compiled_pred_controllers_mirror_the_reference_exactly(cfg):
    rng = np.random.default_rng(7)
    dt = cfg.fcs_period_rtts * RTT_S
    flows = rng.integers(0, 40, TICKS)
    busy = np.cumsum(rng.uniform(0.2, 1.0, TICKS) * dt)  # cumulative busy seconds at each period's end
    area = np.cumsum(rng.uniform(0.0, 80.0, TICKS) * dt)  # cumulative queue integral, packets x s
    script = {"flows": flows, "busy_s": busy, "area": area}
    net = _Net(cfg, script)
    ref = net.links[0]
    net.env.process(pred_controller(net, 0))

    pred, qref = pred_parameters(cfg, RTT_S, np.array([CAP_GBPS]), MTU)
    ramp = cfg.fluid_marking().marking
    links = np.zeros((7, 1))
    links[1, 0], links[2, 0], links[3, 0] = ramp.min_k_pkts, ramp.max_k_pkts, ramp.max_p
    ctl, utils, nseen = np.zeros((8, 1)), np.zeros((3, 1)), np.zeros(1, np.int64)
    ctl[1, :] = cfg.min_k_pkts
    mtu_s = np.array([MTU * 8 / (CAP_GBPS * 1e9)])
    seen = []
    for k in range(TICKS):
        now = (k + 1) * dt
        net.env.run(until=now + dt / 2)  # the reference's period k ends at ``now``
        nseen[0] = flows[k]
        links[4, 0], links[5, 0] = busy[k], area[k]  # the port is idle (busy-until 0): nothing more accrues
        _pred_tick(links, ctl, utils, nseen, np.array([True]), mtu_s, qref, pred, k + 1, now)
        seen.append(((ref.lo, ref.hi, ref.maxp), (links[1, 0], links[2, 0], links[3, 0])))
    ramps = np.array([r for r, _ in seen])
    assert np.unique(ramps, axis=0).shape[0] > 2  # the controllers moved the ramp
    for r, c in seen:
        assert c == r
