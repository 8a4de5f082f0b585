"""BurstGPT (Wang et al., KDD 2025): burstiness, periodicity and token lengths of LLM serving traffic.

BurstGPT characterizes ChatGPT and GPT-4 traffic in Azure OpenAI: conversation traffic follows the day while API
traffic is aperiodic and bursty; inter-arrival gaps in 20-minute windows are fitted far better by a Gamma
distribution than by the exponential when the traffic is bursty (shape < 1); request lengths are Zipf-like and
responses grow with requests; and a generator fitted to the trace ("modeled scaling") reproduces it.

The BurstGPT files are not on these machines (CC-BY-4.0, downloadable with ``workbench data fetch burstgpt``). When
they are absent, every claim that needs them runs on a **stand-in** generated from the paper's parameters (Gamma shape
0.5, Zipf 1.1) and stated assumptions (:data:`workbench.workloads.burstgpt.STAND_IN_ASSUMPTIONS`); a claim shown only
on the stand-in gets the verdict ``partial`` and says so, because the stand-in encodes the finding by construction.
The same analysis runs on the real Azure LLM inference traces (code and conversation, Splitwise 2023) and Mooncake's
conversation trace, which is where the findings meet production data.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .._deps import remember
from .._rng import spawn
from ..viz import workloads as fig_wl
from ..workloads import burstgpt as gen
from ..workloads import characterize as C
from ..workloads.trace_analysis import (
    REAL_TRACES,
    SEED,
    WINDOW_S,
    burstgpt_label,
    burstgpt_trace,
    length_curve,
    real_trace,
)
from . import AtLeast, Check, Measured, Paper, Scale, Verdict, claim, figure

PAPER = Paper(
    id="burstgpt",
    title="BurstGPT: A Real-World Workload Dataset to Optimize LLM Serving Systems",
    citation="Yuxin Wang et al., KDD 2025 (arXiv:2401.17644)",
    url="https://arxiv.org/abs/2401.17644",
    notebook="notebooks/03_burstgpt.ipynb",
    panel="workbench.widgets.burstgpt:burstgpt_panel",
    dashboard="BurstGPT workload characterization",
)

ROUND_TRIP_WINDOW_S = 300.0  # the real traces are one hour long: 12 windows of 5 minutes for the round trip


def is_stand_in(scale: Scale) -> bool:
    return bool(burstgpt_trace(scale).attrs.get("stand_in"))


def sources(scale: Scale = "full") -> dict[str, pd.DataFrame]:
    """Every trace the analysis runs on: BurstGPT (or its stand-in) split by log type, then the real traces."""
    bg = burstgpt_trace(scale)
    label = burstgpt_label(scale)
    out = {}
    for lt in ("conversation", "api"):
        sub = bg[bg["log_type"] == lt].reset_index(drop=True)
        sub.attrs = dict(bg.attrs)
        if len(sub):
            out[f"{label}: {lt}"] = sub
    for name in REAL_TRACES:
        df = real_trace(name)
        if df is not None:
            out[name] = df
    return out


@remember
def services_table(scale: Scale = "full") -> pd.DataFrame:
    """Side-by-side characterization of every source (one row each, :func:`characterize.summarize`)."""
    rows = [C.summarize(df, window_s=WINDOW_S, seed=SEED, label=name) for name, df in sources(scale).items()]
    return pd.DataFrame(map(dataclasses.asdict, rows)).set_index("trace")


@remember
def window_fits(scale: Scale = "full") -> dict[str, pd.DataFrame]:
    return {name: C.window_gamma_fits(df, WINDOW_S, seed=SEED) for name, df in sources(scale).items()}


# ------------------------------------------------------------------------------------------------------------------
# Claims
# ------------------------------------------------------------------------------------------------------------------


def _staged(value: dict, reproduced, partial) -> Verdict:
    """Verdict for a value measured on BurstGPT or its stand-in: on the stand-in the best is ``partial``."""
    if value["stand_in"]:
        return Verdict.PARTIAL if reproduced(value) else Verdict.NOT_REPRODUCED
    if reproduced(value):
        return Verdict.REPRODUCED
    return Verdict.PARTIAL if partial(value) else Verdict.NOT_REPRODUCED


STAND_IN_NOTE = (
    "BurstGPT is not on this machine: measured on the stand-in generated from the paper's parameters and stated "
    "assumptions, which encodes this finding by construction, so the verdict can only be partial (it checks that "
    "the analysis detects the pattern). With BurstGPT_1.csv on the data search path the claim runs on the real trace."
)


@claim(
    PAPER,
    "diurnal-conversation-aperiodic-api",
    text="Conversation traffic follows a daily cycle while API traffic is aperiodic.",
    paper_value="ChatGPT conversation logs show a diurnal pattern; API logs show no clear periodicity and are bursty",
    compare=Check(
        lambda v: _staged(
            v, lambda x: x["conversation"] >= 0.5 and x["api"] <= 0.25, lambda x: x["conversation"] > x["api"]
        ),
        "hour of day explains >= 50% of hourly-count variance for conversation and <= 25% for API "
        "(partial at best on the stand-in)",
    ),
    expected="partial",
    note=STAND_IN_NOTE + " The real Azure and Mooncake traces cover one hour each and cannot show a daily cycle.",
)
def _diurnal(scale: Scale) -> Measured:
    bg = burstgpt_trace(scale)
    eta = {lt: C.periodicity(bg[bg["log_type"] == lt]) for lt in ("conversation", "api")}
    value = {"stand_in": is_stand_in(scale), **eta}
    return Measured(
        value,
        f"share of hourly variance explained by hour of day (adjusted): conversation {eta['conversation']:.2f}, "
        f"API {eta['api']:.2f} ({burstgpt_label(scale)})",
        details={"source": bg.attrs.get("source", ""), "days": float(bg["arrival_s"].iloc[-1] / 86400)},
    )


def _bursty_window_stats(fits: dict[str, pd.DataFrame]) -> dict:
    per = {}
    total = better = better_lr = 0
    for name, f in fits.items():
        b = f[f["shape"] < 1]
        per[name] = {
            "windows": int(f["shape"].notna().sum()),
            "bursty_windows": int(len(b)),
            "gamma_better": int(b["gamma_better"].sum()),
            "gamma_more_likely": int((b["lr_p_value"] < 0.05).sum()),
            "median_shape": float(f["shape"].median()),
            "median_ks_gamma": float(b["ks_gamma"].median()) if len(b) else float("nan"),
            "median_ks_exponential": float(b["ks_exponential"].median()) if len(b) else float("nan"),
        }
        total += len(b)
        better += int(b["gamma_better"].sum())
        better_lr += int((b["lr_p_value"] < 0.05).sum())
    return {"per_trace": per, "bursty_windows": total, "gamma_better": better, "gamma_more_likely": better_lr}


@claim(
    PAPER,
    "gamma-beats-exponential-when-bursty",
    text="In bursty 20-minute windows (Gamma shape below 1) inter-arrival gaps are fitted better by a Gamma "
    "distribution than by the exponential.",
    paper_value="Gamma fits inter-arrivals better than exponential; bursty periods have shape < 1 (paper's starting "
    "point: shape 0.5)",
    compare=Check(
        lambda v: (
            "not reproduced"
            if v["bursty_windows"] == 0
            else _staged(v, lambda x: x["share"] >= 0.9, lambda x: x["share"] >= 0.5)
        ),
        "share of real-trace windows with shape < 1 where the Gamma has the smaller KS distance and a likelihood-"
        "ratio p < 0.05: >= 90% reproduced, >= 50% partial (partial at best when only the stand-in is available)",
    ),
    expected="partial",
    note="Measured on the real Azure code, Azure conversation and Mooncake conversation traces (20-minute windows). "
    "Every Azure code window is strongly bursty (shape ~0.24) and the Gamma wins decisively (KS ~0.2 vs ~0.5). The "
    "Azure conversation windows are barely sub-Poisson (shape 0.86-0.91): the Gamma is significantly more likely "
    "in all of them but no closer in KS distance in most, so they count against the claim. Mooncake's conversation "
    "trace records arrivals on a 3-second tick; dequantized over the tick it is Poisson-like (shape about 1), and "
    "its windows that land just below 1 are counted too.",
)
def _gamma_vs_exp(scale: Scale) -> Measured:
    fits = {name: C.window_gamma_fits(df, WINDOW_S, seed=SEED) for name, df in _reals().items()}
    if not fits:  # no real data on this machine: the stand-in can only show it by construction
        fits = {burstgpt_label(scale): C.window_gamma_fits(burstgpt_trace(scale), WINDOW_S, seed=SEED)}
    st = _bursty_window_stats(fits)
    share = st["gamma_better"] / st["bursty_windows"] if st["bursty_windows"] else float("nan")
    parts = ", ".join(f"{k} {v['gamma_better']}/{v['bursty_windows']}" for k, v in st["per_trace"].items())
    return Measured(
        {"stand_in": not _reals(), "share": share, "bursty_windows": st["bursty_windows"]},
        f"Gamma better in {st['gamma_better']} of {st['bursty_windows']} bursty windows ({parts}); "
        f"more likely (LR) in {st['gamma_more_likely']}",
        details=st,
    )


def _reals() -> dict[str, pd.DataFrame]:
    return {k: v for k in REAL_TRACES if (v := real_trace(k)) is not None}


@claim(
    PAPER,
    "zipf-request-lengths",
    text="Request lengths follow a Zipf-like law.",
    paper_value="request tokens of ChatGPT follow a Zipf distribution (paper's starting point: exponent 1.1)",
    compare=Check(
        lambda v: _staged(v, lambda x: x["best_family"] == "zipf", lambda x: x["zipf_rank"] <= 2),
        "the truncated Zipf law is the best of Zipf / lognormal / exponential by KS distance (partial at best on the "
        "stand-in)",
    ),
    expected="partial",
    note=STAND_IN_NOTE + " On the real traces the Zipf law is the worst of the three fits for request lengths: the "
    "Azure and Mooncake services (long code and document contexts) are not Zipf-like (see details and the notebook).",
)
def _zipf(scale: Scale) -> Measured:
    bg = burstgpt_trace(scale)
    fits = C.fit_lengths(bg["input_tokens"].to_numpy())
    best = str(fits["family"].iloc[0])
    rank = int(np.flatnonzero(fits["family"].to_numpy() == "zipf")[0]) + 1
    alpha = fits.set_index("family").loc["zipf", "params"]["alpha"]
    real = {
        name: {
            "best_family": str((f := C.fit_lengths(df["input_tokens"].to_numpy()))["family"].iloc[0]),
            "zipf_ks": float(f.set_index("family").loc["zipf", "ks"]),
            "best_ks": float(f["ks"].iloc[0]),
        }
        for name, df in _reals().items()
    }
    return Measured(
        {"stand_in": is_stand_in(scale), "best_family": best, "zipf_rank": rank},
        f"{burstgpt_label(scale)}: best fit {best}, Zipf exponent {alpha:.2f}, KS "
        f"{fits.set_index('family').loc['zipf', 'ks']:.3f}; real traces best: "
        + ", ".join(f"{k} {v['best_family']}" for k, v in real.items()),
        details={"fits": fits.drop(columns=["fit"]).to_dict("records"), "real_traces": real},
    )


@claim(
    PAPER,
    "response-grows-with-request",
    text="Response length grows with request length.",
    paper_value="response tokens increase with request tokens",
    compare=Check(
        lambda v: _staged(v, lambda x: x["spearman"] >= 0.3, lambda x: x["spearman"] > 0.05),
        "Spearman rank correlation of request and response tokens >= 0.3 (partial at best on the stand-in)",
    ),
    expected="partial",
    note=STAND_IN_NOTE + " On the real traces the correlation is near zero (Azure code -0.02, Azure conversation "
    "0.07, Mooncake 0.07): in those services the response length barely depends on the prompt length.",
)
def _resp_req(scale: Scale) -> Measured:
    bg = burstgpt_trace(scale)
    rr = C.request_response(bg)  # failed requests (no response) are left out by request_response itself
    real = {name: C.request_response(df).spearman for name, df in _reals().items()}
    return Measured(
        {"stand_in": is_stand_in(scale), "spearman": rr.spearman},
        f"{burstgpt_label(scale)} Spearman {rr.spearman:.2f}; real traces: "
        + ", ".join(f"{k} {v:.2f}" for k, v in real.items()),
        details={"binned": rr.table[["mean_input", "mean_output"]].round(1).to_dict("list"), "real_spearman": real},
    )


@remember
def round_trips(scale: Scale) -> dict[str, gen.RoundTrip]:
    """Fit -> generate -> re-fit on each real trace (5-minute windows) and on the BurstGPT source (20-minute)."""
    out = {}
    rngs = spawn(SEED, len(REAL_TRACES) + 1)
    for (name, df), rng in zip(_reals().items(), rngs):
        out[name] = gen.round_trip(df, window_s=ROUND_TRIP_WINDOW_S, seed=rng)
    out[burstgpt_label(scale)] = gen.round_trip(burstgpt_trace(scale), window_s=WINDOW_S, seed=rngs[-1])
    return out


@claim(
    PAPER,
    "fit-generate-fit",
    text="Fitting a trace, generating from the fit and re-fitting recovers the parameters within sampling error.",
    paper_value="BurstGPT's workload generator reproduces the fitted arrival (Gamma) and length (Zipf) models",
    compare=AtLeast(0.9, partial=0.75),
    note="Parameters: per-window Gamma shape and rate, Zipf exponent, response slope; z = (re-fit - fit) / standard "
    "error (asymptotic MLE errors; count dispersion 1/shape for rates). A share near 95% of |z| < 2 is what "
    "sampling error alone gives. Run on the three real traces and on the BurstGPT source.",
)
def _round_trip(scale: Scale) -> Measured:
    rts = round_trips(scale)
    per_trace = gen.round_trip_summary(rts)
    pooled = gen.round_trip_summary({"all": pd.concat([rt.table for rt in rts.values()])}).iloc[0]
    share = float(pooled["share_within_2se"])
    return Measured(
        share,
        f"{share:.0%} of {pooled['parameters']} re-fitted parameters within 2 standard errors "
        f"(max |z| {pooled['max_abs_z']:.1f})",
        details={
            r.trace: {
                "n": int(r.parameters),
                "share_within_2se": float(r.share_within_2se),
                "max_abs_z": float(r.max_abs_z),
            }
            for r in per_trace.itertuples()
        },
    )


# ------------------------------------------------------------------------------------------------------------------
# Figures
# ------------------------------------------------------------------------------------------------------------------


@figure(PAPER, "arrivals_over_time")
def _fig_arrivals(scale: Scale):
    series = {}
    for name, df in sources(scale).items():
        hours = df["arrival_s"].iloc[-1] > 6 * 3600
        series[name] = C.rate_series(df, 3600.0 if hours else 60.0)
    return fig_wl.arrivals_over_time(series)


@figure(PAPER, "hour_of_day")
def _fig_hour(scale: Scale):
    profiles = {name: C.time_profile(df) for name, df in sources(scale).items() if name.startswith("BurstGPT")}
    return fig_wl.hour_of_day(profiles)


@figure(PAPER, "window_cv_and_shape")
def _fig_windows(scale: Scale):
    return fig_wl.window_fits(window_fits(scale), window_s=WINDOW_S)


@figure(PAPER, "request_length_ccdf")
def _fig_lengths(scale: Scale):
    return fig_wl.length_ccdf(
        length_curves(scale, "input_tokens"), title="Request lengths with Zipf and lognormal fits"
    )


@figure(PAPER, "request_vs_response")
def _fig_rr(scale: Scale):
    return fig_wl.request_response({name: C.request_response(df) for name, df in sources(scale).items()})


@figure(PAPER, "services_side_by_side")
def _fig_services(scale: Scale):
    return fig_wl.service_comparison(services_table(scale))


@remember
def length_curves(scale: Scale, column: str) -> dict[str, dict]:
    """:func:`length_curve` for every source."""
    return {name: length_curve(df, column) for name, df in sources(scale).items()}
