"""Reproduction: ByteCheckpoint (NSDI 2025) -- checkpoint stalls cut by making only the device-to-host copy blocking,
and what that buys in effective training time.

Wan et al., "ByteCheckpoint: A Unified Checkpointing System for Large Foundation Model Development" (USENIX NSDI
2025; arXiv 2407.20143v3, the version reproduced here). Its abstract reports, against PyTorch DCP and Megatron MCP,
"an average reduction of 54.20x" in runtime checkpoint stalls and saves and loads "up to 9.96x and 8.80x" faster.
The first arXiv version ("A Unified Checkpointing System for LLM Development", 2024) reported different numbers
(summaries of it cite up to 529x less stall and 3.5x faster loading); those are not the ones compared here.

The model is :mod:`workbench.training.checkpointing` (per-rank copy, plan, serialise and upload phases with shared
storage bandwidth; load with resharding) on the failures model of :mod:`workbench.training.failures` (Llama 3's
failure rates, Young/Daly, ETTR), measured through the ``checkpoint`` experiment. Only the abstract and
introduction of the paper could be read from the stored copies, so the paper's testbed (its storage bandwidths,
models and GPU counts) is not reproduced: every bandwidth here is a stated parameter with its source, and the
verdicts say how far the model's numbers depend on them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import experiments as ex
from .._deps import remember
from . import InRange, Measured, Paper, Trend, Verdict, Within, claim

PAPER = Paper(
    "bytecheckpoint",
    title="ByteCheckpoint: A Unified Checkpointing System for Large Foundation Model Development",
    citation="B. Wan, M. Han, Y. Sheng, et al. USENIX NSDI 2025 (arXiv 2407.20143v3)",
    url="https://arxiv.org/abs/2407.20143",
    notebook="notebooks/12_rlhf_and_checkpointing.ipynb",
    panel="workbench.widgets.checkpointing:checkpoint_panel",
    dashboard="Checkpointing: stall, save, load and ETTR",
    experiments=("checkpoint",),
)

#: (billions of parameters, tp, pp): a 13B, a 70B and a 405B model with typical Megatron layouts.
MODELS = ((13.0, 2, 1), (70.0, 8, 4), (405.0, 8, 16))
#: Job sizes of the save/load comparison, and of the ETTR comparison (405B).
SAVE_GPUS = (256, 1024)
ETTR_GPUS = (1024, 4096, 16384)


@remember
def save_table(scale: str) -> pd.DataFrame:
    """Stall, save and (resharding) load per model, job size and method (deterministic: both scales equal)."""
    del scale
    pts = [{"params_b": b, "tp": tp, "pp": pp, "gpus": n, "method": m}
           for b, tp, pp in MODELS for n in SAVE_GPUS for m in ("bytecheckpoint", "dcp", "mcp")]  # fmt: skip
    df = ex.sweep("checkpoint", pts, client=False, progress=False)
    return df.pivot_table(index=["params_b", "gpus"], columns="method",
                          values=["stall_s", "save_s", "reshard_load_s"])  # fmt: skip


@remember
def ettr_frame(scale: str) -> pd.DataFrame:
    """ETTR at the optimal interval for the 405B model at 1k-16k GPUs, per method."""
    del scale
    df = ex.sweep("checkpoint", {"gpus": list(ETTR_GPUS), "method": ["bytecheckpoint", "dcp", "mcp"]}, client=False,
                  progress=False)  # fmt: skip
    return df.pivot(index="gpus", columns="method", values=["ettr", "optimal_interval_s", "stall_s", "young_daly_s"])


def _ratio(t: pd.DataFrame, col: str, base: str) -> pd.Series:
    return t[col][base] / t[col]["bytecheckpoint"]


def _cells(s: pd.Series) -> dict[str, float]:
    return {f"{b:g}B@{n}": round(float(v), 3) for (b, n), v in s.items()}


@claim(
    PAPER,
    "stall-reduction",
    text="Making only the device-to-host copy blocking (serialisation and upload asynchronous) cuts the runtime "
    "checkpoint stall by well over an order of magnitude.",
    paper_value="54.20x less stall on average (abstract)",
    compare=InRange(54.2 / 10**0.5, 54.2 * 10**0.5, partial_low=5.42, partial_high=542.0),
    note="Geometric mean over a 13B, 70B and 405B model at 256 and 1,024 H100s of the blocking, balanced baseline's "
    "stall (MCP-like: plan, copy, serialise, upload) over the copy-only stall. Reproduced means within half a decade "
    "of 54x. The ratio grows with the job: the copy shrinks as 1/GPUs while a blocking upload is held by the shared "
    "storage (2 TB/s aggregate, Llama 3's). The DCP-like baseline also saves the replicated weights from one data-"
    "parallel replica only (an assumption), which multiplies its stall further (details). That the mean lands near "
    "54x is not evidence about the paper's testbed: it moves with the stated bandwidths (38x-124x over the grid).",
)
def _stall(scale):
    t = save_table(scale)
    mcp, dcp = _ratio(t, "stall_s", "mcp"), _ratio(t, "stall_s", "dcp")
    g = float(np.exp(np.log(mcp).mean()))
    return Measured(
        g,
        f"{g:.0f}x (geometric mean; {mcp.min():.0f}x-{mcp.max():.0f}x; vs the DCP-like baseline "
        f"{dcp.min():.0f}x-{dcp.max():.0f}x)",
        {"vs_mcp": _cells(mcp), "vs_dcp": _cells(dcp)},
    )


@claim(
    PAPER,
    "save-speedup",
    text="A save completes (is durable) several times sooner than with the blocking baselines.",
    paper_value="up to 9.96x faster saves (abstract)",
    compare=InRange(9.96 / 2, 9.96 * 2, partial_low=9.96 / 4, partial_high=9.96 * 4),
    expected=Verdict.PARTIAL,
    note="Largest ratio of the balanced blocking baseline's save time to ByteCheckpoint's (copy + the larger of "
    "serialisation and upload, pipelined) over the same grid. Pipelining can save at most the smaller of "
    "serialisation and upload, so the model's speedup stays under about 4x unless planning is slow; the paper's "
    "larger figure needs baseline costs the model does not have (its measured planning and I/O paths). The DCP-like "
    "baseline's imbalance gives far larger ratios (details), an artefact of that assumption.",
)
def _save(scale):
    t = save_table(scale)
    mcp, dcp = _ratio(t, "save_s", "mcp"), _ratio(t, "save_s", "dcp")
    return Measured(
        float(mcp.max()),
        f"up to {mcp.max():.2f}x (vs the DCP-like baseline up to {dcp.max():.0f}x)",
        {"vs_mcp": _cells(mcp), "vs_dcp": _cells(dcp)},
    )


@claim(
    PAPER,
    "load-speedup",
    text="Loading into a new parallel layout is several times faster when each rank reads only the bytes it needs "
    "and pipelines download, deserialisation and the host-to-device copy.",
    paper_value="up to 8.80x faster loads (abstract)",
    compare=InRange(8.80 / 2, 8.80 * 2, partial_low=8.80 / 4, partial_high=8.80 * 4),
    expected=Verdict.PARTIAL,
    note="Largest ratio over the grid of the baselines' load time to ByteCheckpoint's when the tensor parallelism "
    "doubles (the baselines read each whole old shard file the new shard lies in: twice the bytes, phases one after "
    "another). Within a factor of 4 of 8.80x: the model has no per-file metadata or small-read costs.",
)
def _load(scale):
    t = save_table(scale)
    r = _ratio(t, "reshard_load_s", "mcp")
    return Measured(float(r.max()), f"up to {r.max():.2f}x ({r.min():.2f}x-{r.max():.2f}x)", {"ratio": _cells(r)})


@claim(
    PAPER,
    "ettr-gain",
    text="What the stall reduction buys in effective training time grows with the job: failures come more often, so "
    "checkpoints are taken more often and a blocking save costs more.",
    paper_value="less stall -> less time lost to checkpointing (abstract's motivation)",
    compare=Trend("increasing", min_change=0.005),
    note="ETTR (closed-form renewal-reward, Llama 3's failure rates) of a 405B model at 1k, 4k and 16k H100s, each "
    "method at its own optimal interval; the value is ETTR(ByteCheckpoint) / ETTR(blocking balanced baseline) per "
    "size. The asynchronous save's upload delays durability (a failure during it loses one more interval), "
    "included. Small in absolute terms because the model's blocking saves take seconds, not the minutes the "
    "paper's introduction describes: slower storage makes the gain larger (explore section of notebook 12).",
)
def _ettr(scale):
    t = ettr_frame(scale)
    g = t.ettr["bytecheckpoint"] / t.ettr["mcp"]
    gd = t.ettr["bytecheckpoint"] / t.ettr["dcp"]
    return Measured(
        g.to_numpy().tolist(),
        ", ".join(f"{n // 1024}k GPUs: {v:.3f}x (vs DCP-like {gd[n]:.3f}x)" for n, v in g.items()),
        {"vs_mcp": {str(k): round(float(v), 5) for k, v in g.items()},
         "vs_dcp": {str(k): round(float(v), 5) for k, v in gd.items()},
         "ettr": {m: {str(k): round(float(v), 4) for k, v in t.ettr[m].items()} for m in t.ettr.columns}},
    )  # fmt: skip


@claim(
    PAPER,
    "interval-moves",
    text="The ETTR-optimal checkpoint interval shrinks as the square root of the stall (Young/Daly): a 50x smaller "
    "stall checkpoints about 7x more often.",
    paper_value="(derived, Young/Daly: interval ~ sqrt(2 x stall x MTBF); not a number of the paper)",
    compare=Within(1.0, rel=0.1, partial_rel=0.3),
    note="(optimal interval of the blocking baseline / ByteCheckpoint's) divided by sqrt(stall ratio), for the 405B "
    "model at 1,024 GPUs; 1 means the square-root law holds. At 16k GPUs ByteCheckpoint's optimum hits the floor of "
    "one iteration or one asynchronous save (details).",
)
def _interval(scale):
    t = ettr_frame(scale)
    iv, stall = t.optimal_interval_s, t.stall_s
    v = float(
        (iv["mcp"][1024] / iv["bytecheckpoint"][1024]) / np.sqrt(stall["mcp"][1024] / stall["bytecheckpoint"][1024])
    )
    return Measured(
        v,
        f"{v:.2f} (1k GPUs: {iv['mcp'][1024]:.0f} s -> {iv['bytecheckpoint'][1024]:.0f} s; 16k: "
        f"{iv['mcp'][16384]:.0f} s -> {iv['bytecheckpoint'][16384]:.0f} s)",
        {m: {str(k): round(float(x), 2) for k, x in iv[m].items()} for m in iv.columns},
    )
