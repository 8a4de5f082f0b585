"""Sunk carbon: SCI amortization, break-even intensity and placement against hand-computed cases."""

import numpy as np
import pytest

from workbench.carbon.sunk import NEW, OLD, break_even_intensity, compare, embodied_g_per_core_h, place


def test_constants_have_sources():
    for s in (OLD, NEW):
        assert s.source and s.embodied_kg > 0 and s.cpu_watts > 0
    assert OLD.watts_per_core == pytest.approx(240 / 28)
    assert NEW.watts_per_core == pytest.approx(540 / 80)


def test_embodied_share_hand_case():
    # 1,726 kg over 4 years x 8,760 h x 80 cores = 0.6158 g per core-hour; zero once fully amortized
    assert embodied_g_per_core_h(NEW, 4.0, 0.0) == pytest.approx(1726e3 / (4 * 8760 * 80))
    assert embodied_g_per_core_h(OLD, 4.0, 4.0) == 0.0


def test_break_even_hand_case():
    m = 1726e3 / (4 * 8760 * 80)
    assert break_even_intensity(4.0) == pytest.approx(m * 1e3 / (240 / 28 - 540 / 80))
    assert break_even_intensity(8.0) == pytest.approx(break_even_intensity(4.0) / 2)


def test_place_operational_vs_sci():
    d = np.array([50.0, 50.0])
    i = np.array([100.0, 600.0])  # below / above the ~338 g/kWh break-even
    o, n = place(d, i, "operational", n_old=2, n_new=1)
    assert o.tolist() == [0.0, 0.0] and n.tolist() == [50.0, 50.0]
    o, n = place(d, i, "sci", n_old=2, n_new=1)
    assert o.tolist() == [50.0, 0.0] and n.tolist() == [0.0, 50.0]
    # overflow: 100 cores with 80 new cores -> 20 spill onto old servers
    o, n = place(np.array([100.0]), np.array([600.0]), "operational", n_old=2, n_new=1)
    assert (o[0], n[0]) == (20.0, 80.0)
    with pytest.raises(ValueError, match="demand must be <= the fleet's 136 cores"):
        place(np.array([200.0]), np.array([1.0]), "sci", n_old=2, n_new=1)


def test_compare_extra_carbon_hand_case():
    # clean grid, utilization such that all work fits on either fleet: SCI moves it to old servers
    r = compare(np.array([100.0]), 0.1, n_old=100, n_new=100)
    demand = 0.1 * (2800 + 8000)  # 1,080 cores, all fit on the old fleet's 2,800
    assert r["operational_kg"] == pytest.approx(100 * demand * 6.75 / 1e6)
    assert r["sci_kg"] == pytest.approx(100 * demand * (240 / 28) / 1e6)
    assert r["extra"] == pytest.approx((240 / 28) / 6.75 - 1)
    # dirty grid: both rules agree
    assert compare(np.array([800.0]), 0.1)["extra"] == pytest.approx(0.0)
