"""Reproduction: PCAPS and CAP (arXiv 2502.09717) — carbon- and precedence-aware scheduling of job DAGs.

Lechowicz, Shenoy, Bashir, Hajiesmaili, Wierman, Delimitrou, "Carbon- and Precedence-Aware Scheduling for Data
Processing Clusters" (arXiv 2502.09717, 2025): PCAPS defers a stage when the grid's carbon intensity is above a
threshold set by the stage's relative importance in its job's DAG (``Psi_gamma(r)``); CAP wraps any scheduler and
limits the busy executors by k-search thresholds between the next 48 hours' lowest and highest intensity. Their
Spark prototype on a 100-node Kubernetes cluster cuts carbon by up to 32.9% "without significantly impacting the
cluster's total efficiency".

Measured here with :mod:`workbench.carbon` on the TPC-H DAGs with measured task durations (Decima's job set) and the
2023 summer traces of the six PCAPS regions in the shared data (Quebec is not there). What differs from the paper:
the carbon-agnostic policy is a critical-path heuristic standing in for Decima's learned policy (so PCAPS's relative
importance is a stage's critical path over the longest one, not Decima's action probability); forecasts are
perfect; one trace hour is 60 simulated seconds as in the authors' simulator; there is no executor start-up or
moving delay beyond the fresh-executor durations.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import experiments as ex
from .._deps import remember
from ..carbon import load_trace, trace_summary
from ..experiments.carbon import SEASONS, WINDOW_DAYS, YEAR, region_intensity
from ..viz import carbon as vc
from . import Check, Measured, Paper, Scale, Trend, Verdict, claim, figure

PAPER = Paper(
    "pcaps",
    title="Carbon- and Precedence-Aware Scheduling for Data Processing Clusters (PCAPS, CAP)",
    citation="A. Lechowicz, R. Shenoy, N. Bashir, M. Hajiesmaili, A. Wierman, C. Delimitrou. arXiv 2502.09717, 2025",
    url="https://arxiv.org/abs/2502.09717",
    notebook="notebooks/11_carbon_aware_scheduling.ipynb",
    panel="workbench.widgets.carbon:carbon_panel",
    dashboard="Carbon-aware scheduling",
    experiments=("carbon-scheduling", "carbon-busy-hours"),
    requires_data=("carbon-dag/tpch/2g/q01.json", "carbon-dag/carbon-intensity/ZA/ZA_2023_hourly.csv"),
    cost_s=40,  # claims + figures, cold, 2 cores (make reproduce, 2026-11-27): orders the first run
)

REGIONS = ("CAISO", "DE", "NSW", "ON", "PJM", "ZA")
GAMMAS = (0.25, 0.5, 1.0)


def _size(scale: Scale) -> dict:
    if scale == "full":
        return {"jobs": 50, "executors": 100, "job_cap": 25, "seeds": 5}
    return {"jobs": 25, "executors": 50, "job_cap": 25, "seeds": 2}


@remember
def runs(scale: Scale) -> pd.DataFrame:
    """Every scheduler on every region (summer 2023, load 0.5), with carbon and mean JCT relative to the
    carbon-agnostic baseline at the same seed (common jobs, arrivals and draws)."""
    z = _size(scale)
    seeds = z.pop("seeds")
    k = z["executors"]
    common = {"region": list(REGIONS), "season": "summer", "load": 0.5, **z}
    grids = [
        {**common, "scheduler": ["agnostic"], "gamma": 0.5, "cap_minimum": k // 5},
        {**common, "scheduler": ["cap"], "gamma": 0.5, "cap_minimum": [k // 5, k // 2]},
        {**common, "scheduler": ["pcaps"], "gamma": list(GAMMAS), "cap_minimum": k // 5},
    ]
    df = pd.concat(
        [ex.sweep("carbon-scheduling", g, seeds=seeds, client=False, progress=False) for g in grids],
        ignore_index=True,
    )
    base = df[df.scheduler == "agnostic"].set_index(["region", "seed"])[["carbon_kg", "mean_jct_s"]]
    df = df.join(base.rename(columns=lambda c: c + "_agnostic"), on=["region", "seed"])
    df["carbon_cut"] = 1.0 - df.carbon_kg / df.carbon_kg_agnostic
    df["jct_increase"] = df.mean_jct_s / df.mean_jct_s_agnostic - 1.0
    return df


def _policy(df: pd.DataFrame) -> pd.DataFrame:
    """Mean carbon cut and JCT increase per policy (CAP by its B, PCAPS by gamma)."""
    d = df[df.scheduler != "agnostic"].copy()
    d["policy"] = np.where(
        d.scheduler == "cap", "CAP B=" + d.cap_minimum.astype(str), "PCAPS gamma=" + d.gamma.astype(str)
    )
    return d.groupby("policy")[["carbon_cut", "jct_increase"]].mean()


@remember
def region_spread(scale: Scale) -> pd.Series:
    """Relative daily spread (mean of (max - min) / mean per day) of each region's summer window."""
    out = {}
    for r in REGIONS:
        from ..carbon.traces import ALIASES

        tr = load_trace(ALIASES[r], YEAR).window(f"{YEAR}-{SEASONS['summer']}T00", 24 * WINDOW_DAYS)
        out[r] = trace_summary(tr)["relative_daily_spread"]
    return pd.Series(out)


def _both_cut(value) -> Verdict:
    cap_cut, pcaps_cut, cap_jct, pcaps_jct = value
    if cap_cut > 0.01 and pcaps_cut > 0.01 and max(cap_jct, pcaps_jct) <= 0.5:
        return Verdict.REPRODUCED
    if cap_cut > 0 and pcaps_cut > 0:
        return Verdict.PARTIAL
    return Verdict.NOT_REPRODUCED


@claim(
    PAPER,
    "cut-carbon",
    text="CAP and PCAPS cut carbon against the carbon-agnostic scheduler at a moderate completion-time cost.",
    paper_value="PCAPS up to 32.9% less carbon (prototype); CAP less",
    compare=Check(_both_cut, "reproduced if both cut > 1% with mean JCT +50% at most; partial if both cut > 0"),
    expected=Verdict.PARTIAL,
    note="Both cut carbon on average, but not at a moderate cost: PCAPS (gamma 0.5) cuts about 1% or less while "
    "the mean JCT grows by a quarter to more than double; CAP (B = K/5) cuts 5-12% but multiplies the mean JCT "
    "several times. With one trace hour per 60 simulated seconds and jobs that finish in about half a minute, a stage "
    "PCAPS defers mostly waits for more important stages of the same hour; moving work into cleaner hours takes "
    "CAP's cluster-wide executor limit, which queues whole jobs.",
)
def _cut(scale):
    p = _policy(runs(scale))
    cap, pc = p.loc["CAP B=" + str(_size(scale)["executors"] // 5)], p.loc["PCAPS gamma=0.5"]
    v = [float(cap.carbon_cut), float(pc.carbon_cut), float(cap.jct_increase), float(pc.jct_increase)]
    return Measured(
        v,
        f"CAP: {v[0]:.1%} less carbon, mean JCT +{v[2]:.0%}; PCAPS (gamma 0.5): {v[1]:.1%} less, JCT +{v[3]:.0%} "
        f"(mean over {len(REGIONS)} regions)",
        {"by_policy": p.reset_index().to_dict("records")},
    )


@claim(
    PAPER,
    "prototype-32.9",
    text="A moderate configuration of PCAPS reduces carbon by up to 32.9% on a 100-node Spark cluster.",
    paper_value="up to 32.9%",
    compare=Check(lambda v: Verdict.NOT_REPRODUCED, "not comparable: a prototype measurement on a real cluster"),
    expected=Verdict.NOT_REPRODUCED,
    note="Not comparable: the 32.9% is the prototype's best case with Decima's learned policy, Spark's executor "
    "start-up and a real Kubernetes cluster; a simulator with a critical-path stand-in can only say how much the "
    "threshold rule shifts work in time given the measured task durations. The measured value is the largest "
    "PCAPS cut over regions, seeds and gamma here.",
)
def _proto(scale):
    d = runs(scale)
    best = float(d[d.scheduler == "pcaps"].carbon_cut.max())
    return Measured(best, f"largest PCAPS cut here {best:.1%} (any region, seed, gamma)")


def _beats(value) -> Verdict:
    pcaps_cut, cap_cut = value
    if pcaps_cut > cap_cut * 1.05:
        return Verdict.REPRODUCED
    if pcaps_cut >= cap_cut * 0.95:
        return Verdict.PARTIAL
    return Verdict.NOT_REPRODUCED


@claim(
    PAPER,
    "pcaps-beats-cap",
    text="PCAPS saves more carbon than CAP at an equal completion-time cost (precedence awareness pays).",
    paper_value="PCAPS below CAP's carbon at equal JCT",
    compare=Check(_beats, "PCAPS's cut > CAP's at CAP's JCT increase (interpolated on PCAPS's gamma curve)"),
    expected=Verdict.NOT_REPRODUCED,
    note="Compared at the JCT increase of CAP with B = K/2 (its mildest setting here): PCAPS's carbon cut is read "
    "off its curve over gamma at that JCT increase (linear interpolation, clamped to the curve's ends). In this "
    "simulator PCAPS's cut at CAP's JCT cost is at most CAP's (below it at both scales; close at full scale), "
    "so the precedence-aware rule does not win here; the critical-path stand-in gives flatter importance "
    "than Decima's probabilities, which may be part of the difference.",
)
def _beats_m(scale):
    p = _policy(runs(scale))
    cap = p.loc["CAP B=" + str(_size(scale)["executors"] // 2)]
    curve = p.loc[[f"PCAPS gamma={g}" for g in GAMMAS]].sort_values("jct_increase")
    at = float(np.interp(cap.jct_increase, curve.jct_increase, curve.carbon_cut))
    return Measured(
        [at, float(cap.carbon_cut)],
        f"at JCT +{cap.jct_increase:.0%}: PCAPS {at:.2%} vs CAP {cap.carbon_cut:.2%} less carbon",
        {"pcaps_curve": curve.reset_index().to_dict("records")},
    )


@claim(
    PAPER,
    "grows-with-spread",
    text="Carbon savings grow with the daily spread of the grid's intensity (small where the grid is flat).",
    paper_value="larger savings in regions with more variable intensity",
    compare=Check(
        lambda r: Verdict.REPRODUCED if r >= 0.6 else (Verdict.PARTIAL if r >= 0.3 else Verdict.NOT_REPRODUCED),
        "Spearman rank correlation of CAP's cut with the region's relative daily spread >= 0.6 (partial >= 0.3)",
    ),
    expected=Verdict.REPRODUCED,
    note="Six regions, summer 2023, CAP with B = K/5 (PCAPS's cuts are too small to rank): South Africa and PJM "
    "(flat, around a tenth of the mean per day) gain least, Ontario (a daily swing near its mean) most. Six "
    "regions only: one region out of order moves the rank correlation a lot.",
)
def _spread(scale):
    d = runs(scale)
    k = _size(scale)["executors"] // 5
    cut = d[(d.scheduler == "cap") & (d.cap_minimum == k)].groupby("region").carbon_cut.mean()
    sp = region_spread(scale)
    rho = float(pd.Series(cut).rank().corr(sp[cut.index].rank()))
    pairs = ", ".join(f"{r} {sp[r]:.2f}/{cut[r]:.1%}" for r in sp.sort_values().index)
    return Measured(rho, f"Spearman {rho:.2f} (spread/cut: {pairs})", {"cut": cut.to_dict(), "spread": sp.to_dict()})


@claim(
    PAPER,
    "gamma-tradeoff",
    text="Raising PCAPS's gamma trades completion time for carbon: both the carbon cut and the JCT grow with gamma.",
    paper_value="configurable trade-off between carbon and JCT",
    compare=Trend("increasing", slack=0.05),
    expected=Verdict.REPRODUCED,
    note="The measured sequence is the mean JCT increase over gamma = 0.25, 0.5, 1 (the cut's own sequence is in "
    "the details; it is small at every gamma).",
)
def _gamma(scale):
    p = _policy(runs(scale))
    rows = p.loc[[f"PCAPS gamma={g}" for g in GAMMAS]]
    return Measured(
        rows.jct_increase.tolist(),
        "JCT +"
        + ", +".join(f"{x:.0%}" for x in rows.jct_increase)
        + "; carbon cut "
        + ", ".join(f"{x:.2%}" for x in rows.carbon_cut)
        + f" at gamma {', '.join(map(str, GAMMAS))}",
        {"carbon_cut": rows.carbon_cut.tolist()},
    )


@figure(PAPER, "carbon_vs_jct")
def _fig_points(scale: Scale):
    return vc.carbon_vs_jct(
        runs(scale), title=f"Carbon vs mean job completion time per scheduler (mean of {len(REGIONS)} regions, summer)"
    )


@remember
def example(scale: Scale, region: str = "CAISO") -> dict:
    """Busy executors per trace hour of the carbon-agnostic baseline and PCAPS (gamma 0.5) on one region's summer
    window, with that window's intensity: the ``carbon-busy-hours`` experiment, both schedulers on the run of seed 0
    (the same jobs, arrivals and duration draws)."""
    z = {k: v for k, v in _size(scale).items() if k != "seeds"}
    grid = {"scheduler": ["agnostic", "pcaps"], "region": region, "season": "summer", "load": 0.5, "gamma": 0.5, **z,
            "job_seed": 0}  # fmt: skip
    t = ex.sweep("carbon-busy-hours", grid, client=False, progress=False)
    busy = {str(s): g["busy_executors"].to_numpy() for s, g in t.groupby("scheduler", sort=False)}
    return {"busy": busy, "intensity": region_intensity(region, "summer")}


@figure(PAPER, "busy_vs_intensity")
def _fig_busy(scale: Scale):
    e = example(scale)
    return vc.busy_vs_intensity(
        e["busy"], e["intensity"], title="Executors busy per trace hour against CAISO's intensity (summer 2023)"
    )
