"""Panel for arrival processes: rate, burstiness, window and utilization -> gaps, counts, waiting times.

Every control is a parameter of the ``arrivals-burstiness`` experiment (:mod:`workbench.experiments.arrivals`) and
every number one of its points' rows (:func:`workbench.experiments.run_point`). The window slider offers only the
windows of which at least :data:`~workbench.experiments.arrivals.MIN_WINDOWS` fit in the sample (its span is the
``customers`` parameter over the rate), so no setting reaches a point the experiment refuses.
"""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from .. import experiments as ex
from .._units import number_text
from ..experiments.arrivals import MIN_WINDOWS
from ..viz import arrivals as fig_arr
from . import FigurePane, panel, param_controls, param_values, redraw

__all__ = ["ArrivalsPanel", "arrivals_panel"]

EXPERIMENT = "arrivals-burstiness"


class ArrivalsPanel:
    """Controls wired to the ``arrivals-burstiness`` experiment and three figures; ``.widget`` is what a notebook
    displays."""

    def __init__(
        self,
        rate_rps: float = 10.0,
        burstiness: float = 0.25,
        window_s: float = 10.0,
        utilization: float = 0.7,
        seed: int = 0,
    ) -> None:
        exp = ex.get(EXPERIMENT)
        values = {"rate_rps": rate_rps, "burstiness": burstiness, "window_s": window_s, "utilization": utilization}
        self.controls = param_controls(exp, list(values), values)
        self.rate, self.burstiness, self.window, self.utilization = self.controls
        self.windows = tuple(self.window.options)  # every stop of the window Param; those that fit are offered
        self.customers = exp.param("customers").default
        self.seed = seed
        self.stats = W.HTML()
        self.hist = FigurePane()
        self.counts = FigurePane()
        self.waits = FigurePane()
        self._limit_window()
        self.update()
        for control in self.controls:
            control.observe(self._on_change, names="value")
        self.widget = panel(
            self.controls,
            {"Waits and gaps": [self.waits, self.hist], "Arrival counts": [self.counts]},
            info=self.stats,
            fidelity="workbench.widgets.arrivals:arrivals_panel",
            fidelity_controls={"burstiness": self.burstiness, "utilization": self.utilization},
        )

    def largest_window(self) -> float:
        """The longest window of which :data:`MIN_WINDOWS` fit in the sample at the current rate."""
        return self.customers / self.rate.value / MIN_WINDOWS

    def _limit_window(self) -> None:
        fits = [o for o in self.windows if o[1] <= self.largest_window()]
        if [tuple(o) for o in self.window.options] != fits:
            value = self.window.value if self.window.value <= fits[-1][1] else fits[-1][1]
            self.window.options = fits  # the value it held stays when still offered
            self.window.value = value

    def _on_change(self, change) -> None:
        if change["owner"] is self.rate:
            self._limit_window()
        self.update()

    def update(self) -> None:
        """Redraw every figure from the experiment's point at the current control values."""
        rows = ex.run_point(EXPERIMENT, param_values(self.controls), seed=self.seed)
        s = rows[rows.kind == "summary"].iloc[0]
        gaps, counts = rows[rows.kind == "gaps"], rows[rows.kind == "counts"]
        waits = rows[rows.kind == "waits"].set_index("process").dropna(axis=1, how="all")
        edges = np.append(gaps.edge_low_s.to_numpy(), gaps.edge_high_s.iloc[-1])
        model = gaps.model_density.to_numpy()
        pdf = (np.sqrt(edges[:-1] * edges[1:]), model) if np.isfinite(model).all() else (None, None)
        window = self.window.value
        self.stats.value = (
            f"<b>CV</b> {s.gap_cv:.2f} (theory {s.cv_theory:.2f})<br>"
            f"<b>IDC</b> at {number_text(window)} s: {s.idc:.2f} (long-window limit CV² = {s.cv_theory**2:.2f})<br>"
            f"<b>Gamma fit</b>: shape {s.gamma_shape:.3f}, p-value vs exponential {number_text(s.gamma_p_value, 2)}<br>"
            f"<b>p99 wait</b>: Gamma {number_text(waits.loc['gamma', 'sim_p99_s'])} s vs Poisson "
            f"{number_text(waits.loc['poisson', 'sim_p99_s'])} s (one simulated run of {self.customers:,} arrivals, the "
            f"experiment's replicate {self.seed}; exact GI/M/1 {number_text(waits.loc['gamma', 'exact_p99_s'])} s vs "
            f"{number_text(waits.loc['poisson', 'exact_p99_s'])} s)"
        )
        redraw(self.hist, fig_arr.interarrival_histogram(edges, gaps.density.to_numpy(), *pdf))
        redraw(
            self.counts,
            fig_arr.counts_per_window_figure(counts.window_start_s.to_numpy(), counts["count"].to_numpy(), window),
        )
        redraw(self.waits, fig_arr.wait_percentiles(waits))


def arrivals_panel(**defaults) -> W.VBox:
    """Build the arrivals panel and return its top-level widget (see :class:`ArrivalsPanel` for the defaults)."""
    return ArrivalsPanel(**defaults).widget
