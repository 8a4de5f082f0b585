"""Controller rules on hand traces: Rajomon's price update and token split, DAGOR's level, Breakwater's credits."""

import numpy as np
import pytest

from workbench.microservices import (
    Controller,
    breakwater_credits,
    dagor_level,
    make_controller,
    rajomon_price,
    split_tokens,
)


def test_rajomon_price_on_a_hand_trace():
    # threshold 2 ms, step 10 per 10 ms over, decrement 1 under 1 ms
    delays_ms = [0.0, 3.0, 12.0, 1.5, 0.5, 0.5, 0.0]
    expected = [0.0, 1.0, 11.0, 11.0, 10.0, 9.0, 8.0]
    p, out = 0.0, []
    for d in delays_ms:
        p = rajomon_price(p, d / 1e3, 0.002, 10.0, 1.0)
        out.append(p)
    assert out == pytest.approx(expected)
    assert rajomon_price(0.5, 0.0, 0.002, 10.0, 1.0) == 0.0  # never below zero


def test_split_tokens_gives_each_call_its_price_plus_an_equal_share():
    out = split_tokens(30.0, 4.0, np.array([6.0, 2.0, 0.0]))
    assert out.tolist() == pytest.approx([12.0, 8.0, 6.0])  # surplus 30 - 4 - 8 = 18 -> 6 each
    assert split_tokens(5.0, 1.0, np.zeros(0)).size == 0
    # not enough: the calls get less than their prices (they will be dropped downstream)
    assert (split_tokens(3.0, 2.0, np.array([2.0, 2.0])) < 2.0).all()


def test_dagor_level_steps():
    lv = 1.0
    for _ in range(3):
        lv = dagor_level(lv, 0.003, 0.002, 0.05, 0.01)
    assert lv == pytest.approx(0.95**3)
    assert dagor_level(lv, 0.001, 0.002, 0.05, 0.01) == pytest.approx(0.95**3 * 1.01)
    assert dagor_level(1.0, 0.0, 0.002, 0.05, 0.01) == 1.0
    assert dagor_level(0.01, 1.0, 0.002, 0.05, 0.01) == 0.01


def test_breakwater_credits():
    assert breakwater_credits(10.0, 0.001, 0.002, 1.0, 0.1, 2.0) == 11.0
    assert breakwater_credits(100.0, 0.010, 0.002, 1.0, 0.1, 2.0) == pytest.approx(100 * (1 - 0.1 * 0.8))
    assert breakwater_credits(100.0, 1.0, 0.002, 1.0, 1.0, 2.0) == pytest.approx(50.0)  # at most halves
    assert breakwater_credits(3.0, 1.0, 0.002, 1.0, 1.0, 2.0) == 2.0  # floor


def test_controller_validation():
    with pytest.raises(ValueError, match="controller must be one of"):
        Controller("topfull")
    with pytest.raises(ValueError, match="parameter of controller 'rajomon'"):
        Controller("rajomon", {"alpha": 0.1})
    with pytest.raises(ValueError, match="rajomon price_step"):
        Controller("rajomon", {"price_step": -1.0})
    with pytest.raises(ValueError, match="threshold_ms"):
        make_controller("dagor", threshold_ms=0.0)
    assert make_controller("none", threshold_ms=3.0).vector().sum() == 0.0
