"""Reproduction: C4's runtime and fault-handling claims, re-derived as iteration time on the fabric and as ETTR.

C4 (Dong et al., arXiv 2406.04594) reports two end-to-end numbers: planned paths (C4P) enhance "runtime performance
by about 15% for applications with moderate communication costs", and fast fault detection and isolation (C4D)
cuts "error-induced overhead by roughly 30%". :mod:`workbench.reproductions.c4` derives the first from a shortcut
(gain = communication share x (slowdown - 1)); here it is the iteration-time model of
:mod:`workbench.training.iteration` with the DP collectives routed on a 1,024-GPU leaf-spine, ECMP averaged over
independent per-job hashings against planned paths, over every plan of four GPT models that fits. The second is the
renewal-reward ETTR of :mod:`workbench.training.failures` with manual vs automated detection and isolation.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .. import experiments as ex
from .._deps import remember
from ..training import GPUS, MODELS
from ..training import failures as tf
from ..training.scaling import weak_scaling
from . import Check, Measured, Paper, Trend, Verdict, Within, claim, figure
from .c4 import _in_c4_range

PAPER = Paper(
    "c4-training",
    title="Boosting Large-scale Parallel Training Efficiency with C4: A Communication-Driven Approach "
    "(iteration time and ETTR)",
    citation="J. Dong, B. Luo, J. Zhang, et al. arXiv:2406.04594, 2024",
    url="https://arxiv.org/abs/2406.04594",
    notebook="notebooks/07_training_iteration.ipynb",
    panel="workbench.widgets.training:iteration_panel",
    dashboard="Training iteration time on the fabric",
    experiments=("training-plan-routing-gain",),
)

#: "moderate" fabric share of the iteration (exposed DP communication under planned paths), as in notebook 02
MODERATE = (0.10, 0.30)
SWEEP_MODELS = ("gpt-18b", "gpt-39b", "gpt-76b", "gpt3-175b")
SCALING_GPUS = {"full": (512, 1024, 2048, 4096, 8192, 16384), "quick": (512, 1024, 2048, 4096)}
#: detection and isolation (seconds): manual = NCCL watchdog timeout (PyTorch default 10 min) + 30 min by hand;
#: automated = C4D-style seconds to detect, a minute to isolate
MANUAL = (600.0, 1800.0)
AUTOMATED = (5.0, 60.0)


@remember
def gain_sweep() -> pd.DataFrame:
    """ECMP vs planned iteration time for every fitting plan of 1,024 H100s (batch 1,024) on a 64x16x16 leaf-spine:
    the ``training-plan-routing-gain`` experiment over the four GPT models, ECMP averaged over 4 hashings."""
    grid = {"model": list(SWEEP_MODELS), "gpu": "H100", "n_gpus": 1024, "global_batch": 1024, "hosts_per_leaf": 16,
            "spines": 16, "hashings": 4}  # fmt: skip
    t = ex.sweep("training-plan-routing-gain", grid, client=False, progress=False)
    columns = ["plan", "tp", "pp", "dp", "routing", "iteration_s", "mfu", "fabric_share", "gain", "shortcut_gain"]
    return t[[*columns, "model"]].reset_index(drop=True)


@claim(
    PAPER,
    "runtime-gain-on-fabric",
    text="For jobs with moderate communication, planned paths shorten the iteration by about 15% over ECMP.",
    paper_value="about 15% for applications with moderate communication costs",
    compare=Check(_in_c4_range, "15% lies within the interquartile range of the gains at fabric share 10-30%"),
    note="Iteration time on the fabric, not a replay of C4's testbed: 1,024 H100s on a non-blocking 64x16x16 "
    "leaf-spine (400 Gb/s), ring DP collectives of all TP x PP groups at once in Megatron's rank order, one ECMP "
    "hashing per job, the validated iteration model (H100 kernels at the sustained fraction estimated on the "
    "validation corpus, gradients reduced in FP32 and parameters gathered in BF16, as Megatron-LM does with BF16). "
    "The gain spreads widely at the same share (0% when TP=1 puts ring neighbours on one leaf, over 50% when TP=8 "
    "and PP=1 push every DP flow across the spine), so 'moderate communication' alone does not pin it down. With "
    "the validated model the interquartile range at a 10-30% share starts at C4's 15% (14.9% with the H100's "
    "sustained fraction at 0.72, its estimate once Lumos's measured compute informs it; 15.3%, partial, at 0.74) "
    "and the median gain is nearly twice C4's figure: the verdict rests on a few tenths of a point. The shortcut "
    "gain = share x (R - 1) of notebook 02 under-estimates by a few points: the backward-overlap window hides part "
    "of the planned DP time but none of ECMP's extra time.",
)
def _gain(scale):
    t = gain_sweep()
    e = t[(t.routing == "ecmp") & t.fabric_share.between(*MODERATE)]
    lo, hi = (float(x) for x in np.quantile(e.gain, [0.25, 0.75]))
    under = float((e.gain - e.shortcut_gain).median())
    return Measured(
        [lo, hi],
        f"interquartile {lo:.0%} to {hi:.0%} (median {e.gain.median():.0%}) over {len(e)} "
        f"plans at fabric share {MODERATE[0]:.0%}-{MODERATE[1]:.0%}; the share x (R - 1) shortcut is "
        f"{under:.0%} lower (median)",
        {
            "plans": int(len(e)),
            "median": float(e.gain.median()),
            "max": float(e.gain.max()),
            "shortcut_underestimate_median": under,
        },
    )


@remember
def scaling_table(scale: str = "quick") -> pd.DataFrame:
    """Weak scaling of GPT-3 175B (TP 8, PP 8, 16 sequences per replica) on H100s, 32 GPUs per leaf."""
    return weak_scaling(MODELS["gpt3-175b"], GPUS["H100"], SCALING_GPUS[scale], 8, 8, 16, seeds=4)


@claim(
    PAPER,
    "ecmp-penalty-vs-gpus",
    text="ECMP's iteration-time penalty over planned paths grows with the number of GPUs (collisions do not "
    "average out at scale).",
    paper_value="increasing with scale",
    compare=Trend("increasing", min_change=0.05),
    note="GPT-3 175B weak scaling (TP 8, PP 8, DP = GPUs/64, 16 sequences per replica) on a non-blocking leaf-spine "
    "of 32 GPUs per leaf; spraying and planned paths stay at the ideal.",
)
def _scaling(scale):
    t = scaling_table(scale)
    s = t[t.routing == "ecmp"].set_index("gpus").slowdown
    return Measured(s.tolist(), ", ".join(f"{g}: {v:.2f}x" for g, v in s.items()), {"gpus": [int(g) for g in s.index]})


def error_overhead(n_gpus: int, detect_isolate_s: tuple[float, float]) -> float:
    """Fraction of wall time lost to failures (lost work, detection, isolation, restart) under checkpoint-restart
    with the Young/Daly interval, Llama 3 rates."""
    lf = sum(tf.job_rates_per_s(n_gpus).values())
    rec = tf.Recovery(detect_s=detect_isolate_s[0], isolate_s=detect_isolate_s[1])
    rec = replace(rec, interval_s=tf.young_daly_s(rec.checkpoint_s, 1 / lf))
    out = tf.ettr(lf, rec)
    return out["lost_work"] + out["detection"] + out["isolation"] + out["recovery"]


@claim(
    PAPER,
    "error-overhead-30",
    text="Fast fault detection and isolation cut the error-induced overhead by roughly 30%.",
    paper_value="roughly 30% lower error-induced overhead",
    compare=Within(0.30, abs=0.05, partial_abs=0.20),
    expected=Verdict.NOT_REPRODUCED,
    note="2,048-GPU job with Llama 3's failure rates, checkpoint-restart at the Young/Daly interval (60 s writes, "
    "270 s restart). Manual: 10 min NCCL-timeout detection + 30 min isolation; C4D-style: 5 s + 60 s. The reduction "
    "is set by how slow the manual baseline was: about 30% needs a manual detection + isolation of ~13 min at this "
    "size (see details), and it grows with job size as failures become more frequent.",
)
def _overhead(scale):
    n = 2048
    manual, fast = error_overhead(n, MANUAL), error_overhead(n, AUTOMATED)
    totals = np.arange(60.0, 3601.0, 60.0)
    red = np.array([1 - fast / error_overhead(n, (x / 2, x / 2)) for x in totals])
    needed = float(totals[np.argmin(abs(red - 0.30))])
    by_size = {int(g): 1 - error_overhead(g, AUTOMATED) / error_overhead(g, MANUAL) for g in (1024, 4096, 16384)}
    value = 1 - fast / manual
    return Measured(
        value,
        f"{value:.0%} lower ({manual:.2%} -> {fast:.2%} of wall time); 30% at "
        f"{needed / 60:.0f} min manual detection + isolation",
        {
            "manual_overhead": manual,
            "automated_overhead": fast,
            "manual_total_for_30pct_s": needed,
            "reduction_by_gpus": by_size,
        },
    )


@figure(PAPER, "gain_vs_fabric_share")
def _fig_gain(scale):
    from ..viz import training as vt

    return vt.gain_vs_share(gain_sweep())


@figure(PAPER, "iteration_vs_gpus")
def _fig_scaling(scale):
    from ..viz import training as vt

    return vt.iteration_vs_gpus(
        scaling_table(scale),
        title="GPT-3 175B (TP 8, PP 8, 16 sequences per replica): iteration time vs GPUs (weak scaling)",
    )
