"""Panel for arrival processes: rate, burstiness, window and utilization -> gaps, counts, waiting times.

Every control is range-limited so no setting reaches an invalid model call: the window slider's maximum follows the
rate so that at least four complete windows fit in the sample.
"""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from .. import arrivals as arr
from ..viz import arrivals as fig_arr
from . import FigurePane, panel, redraw

__all__ = ["ArrivalsPanel", "arrivals_panel"]

_N = 100_000  # arrivals per redraw: enough for stable percentiles, fast enough (~50 ms) to feel interactive


class ArrivalsPanel:
    """Controls wired to :mod:`workbench.arrivals` and three figures; ``.widget`` is what a notebook displays."""

    def __init__(
        self,
        rate_rps: float = 10.0,
        burstiness: float = 0.25,
        window_s: float = 10.0,
        utilization: float = 0.7,
        seed: int = 0,
    ) -> None:
        self.rate = W.FloatLogSlider(value=rate_rps, base=10, min=-1, max=3, step=0.05, description="rate (req/s)")
        self.burstiness = W.FloatLogSlider(
            value=burstiness, base=10, min=-1.7, max=1.8, step=0.05, description="burstiness"
        )
        self.window = W.FloatLogSlider(value=window_s, base=10, min=-2, max=3, step=0.05, description="window (s)")
        self.utilization = W.FloatSlider(value=utilization, min=0.05, max=0.95, step=0.05, description="utilization")
        self.seed = seed
        self.stats = W.HTML()
        self.hist = FigurePane()
        self.counts = FigurePane()
        self.waits = FigurePane()
        self._limit_window()
        self.update()
        for control in (self.rate, self.burstiness, self.window, self.utilization):
            control.observe(self._on_change, names="value")
        self.widget = panel(
            [self.rate, self.burstiness, self.window, self.utilization],
            {"Waits and gaps": [self.waits, self.hist], "Arrival counts": [self.counts]},
            info=self.stats,
            fidelity="workbench.widgets.arrivals:arrivals_panel",
            fidelity_controls={"burstiness": self.burstiness, "utilization": self.utilization},
        )

    def _limit_window(self) -> None:
        span_s = _N / self.rate.value
        self.window.max = float(np.floor(np.log10(span_s / 4) * 20) / 20)
        if self.window.value > 10**self.window.max:
            self.window.value = 10**self.window.max

    def _on_change(self, change) -> None:
        if change["owner"] is self.rate:
            self._limit_window()
        self.update()

    def update(self) -> None:
        """Redraw every figure from the current control values."""
        process = arr.Gamma.from_burstiness(self.rate.value, self.burstiness.value)
        times = arr.arrival_times(process, _N, seed=self.seed)
        gaps = np.diff(times, prepend=0.0)
        edges, density = arr.density_histogram(gaps[gaps > 0], bins=60)
        x = np.sqrt(edges[:-1] * edges[1:])
        counts = arr.counts_per_window(times, self.window.value, start_s=0.0)
        shown = counts[:200]
        starts = np.arange(shown.size) * self.window.value
        frame = arr.compare_waits(self.rate.value, self.burstiness.value, self.utilization.value, n=_N, seed=self.seed)
        idc = counts.var(ddof=1) / counts.mean() if counts.size > 1 and counts.mean() > 0 else float("nan")
        fit = arr.fit_gamma(gaps[gaps > 0])
        self.stats.value = (
            f"<b>CV</b> {arr.cv(gaps):.2f} (theory {process.cv:.2f})<br>"
            f"<b>IDC</b> at {self.window.value:.3g} s: {idc:.2f} (long-window limit CV² = {process.cv**2:.2f})<br>"
            f"<b>Gamma fit</b>: shape {fit.shape:.3f}, p-value vs exponential {fit.p_value:.2g}<br>"
            f"<b>p99 wait</b>: Gamma {frame.loc['gamma', 'sim_p99_s']:.3g} s vs Poisson "
            f"{frame.loc['poisson', 'sim_p99_s']:.3g} s (one simulated run of {_N:,} arrivals, seed {self.seed}; "
            f"exact GI/M/1 {frame.loc['gamma', 'exact_p99_s']:.3g} s vs {frame.loc['poisson', 'exact_p99_s']:.3g} s)"
        )
        pdf = (x, process.pdf(x)) if np.isfinite(process.shape) else (None, None)
        redraw(self.hist, fig_arr.interarrival_histogram(edges, density, *pdf))
        redraw(self.counts, fig_arr.counts_per_window_figure(starts, shown, self.window.value))
        redraw(self.waits, fig_arr.wait_percentiles(frame))


def arrivals_panel(**defaults) -> W.VBox:
    """Build the arrivals panel and return its top-level widget (see :class:`ArrivalsPanel` for the defaults)."""
    return ArrivalsPanel(**defaults).widget
