"""Workload figures say what they draw."""

from workbench import arrivals
from workbench.viz import workloads as W
from workbench.workloads import characterize as C


def test_window_fits_title_states_the_window():
    """The title says the window length it was fitted over (it read a removed ``attrs`` entry and said "nan")."""
    t = arrivals.arrival_times(arrivals.Poisson(1.0), 5_000, seed=3)
    fig = W.window_fits({"poisson": C.window_gamma_fits(t, 600.0, resolution_s=0.0)}, window_s=600.0)
    assert fig.layout.title.text.startswith("Burstiness per 10-minute window")


def test_a_thinned_log_log_curve_stays_within_one_drawing_step_of_the_whole_one():
    """An empirical CCDF of a heavy-tailed sample (every distinct value, as ``length_curve`` gives it) thinned for
    drawing: at most ``points + 1`` points, both ends kept, and between any two kept points neither log x nor log y
    moves by more than one of the ``points / 2`` steps, except across a gap the whole curve has too."""
    import numpy as np

    from workbench.distributions import survival_at_values

    x = np.round(np.random.default_rng(5).pareto(1.2, 200_000) * 2000) + 1
    vx, vy = survival_at_values(x)
    assert vx.size > 5 * 2000
    tx, ty = W.loglog_points(vx, vy, points=2000)
    assert tx.size <= 2001 and (tx[0], ty[0], tx[-1], ty[-1]) == (vx[0], vy[0], vx[-1], vy[-1])
    assert np.isin(tx, vx).all()  # the drawn points are points of the curve, none made up
    at = np.searchsorted(vx, tx)  # where each kept point is on the whole curve
    for whole in (np.log(vx), np.log(vy)):
        step = (whole.max() - whole.min()) / 999
        jumps = np.abs(np.diff(whole[at]))
        own = np.maximum.reduceat(np.abs(np.diff(whole)), at[:-1])  # the widest step of the whole curve in between
        assert (jumps <= np.maximum(2 * step, own) + 1e-12).all()
    small_x, small_y = W.loglog_points(vx[:100], vy[:100], points=2000)
    assert np.array_equal(small_x, vx[:100]) and np.array_equal(small_y, vy[:100])
