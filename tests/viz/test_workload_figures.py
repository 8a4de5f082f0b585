"""Workload figures say what they draw."""

from workbench import arrivals
from workbench.viz import workloads as W
from workbench.workloads import characterize as C


def test_window_fits_title_states_the_window():
    """The title says the window length it was fitted over (it read a removed ``attrs`` entry and said "nan")."""
    t = arrivals.arrival_times(arrivals.Poisson(1.0), 5_000, seed=3)
    fig = W.window_fits({"poisson": C.window_gamma_fits(t, 600.0, resolution_s=0.0)}, window_s=600.0)
    assert fig.layout.title.text.startswith("Burstiness per 10-minute window")
