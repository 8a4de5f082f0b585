"""Preemption panel for notebook 14 (FastSwitch): priority-change rate, priority process, block size, PCIe, load and
the mechanisms to compare -> p99 TTFT and TBT per mechanism, their gain over vLLM, throughput and vLLM's stall share.

Every number is a point of the ``llm-preemption`` experiment (:func:`workbench.experiments.run_point`), so the panel
shows the experiment's own rows."""

from __future__ import annotations

import ipywidgets as W
import pandas as pd

from .. import experiments as ex
from ..serving import specs
from ..serving.preemption import MECHANISMS
from ..viz import preemption as vp
from . import FigurePane, html_table, panel, param_controls, param_values, redraw

__all__ = ["PANEL_CONVERSATIONS", "CONTROLS", "panel_model", "preemption_panel"]

#: Conversations per point in the panel: the run length of the ``fastswitch`` reproduction (150 at both scales; quick
#: runs seed 0 only), so at its defaults the panel shows exactly the claims' centre point (about 0.3 s per mechanism).
PANEL_CONVERSATIONS = 150
#: The ``llm-preemption`` parameters the panel controls, in the order shown.
CONTROLS = ("rate", "priority_kind", "block_tokens", "pcie_gbs", "load")


def panel_model(mechanisms=tuple(MECHANISMS), seed: int = 0, **params) -> pd.DataFrame:
    """The panel's model call: one ``llm-preemption`` row per mechanism (``vllm`` always included, first) at
    ``params`` over the experiment's defaults with :data:`PANEL_CONVERSATIONS` conversations.

    Examples
    --------
    >>> rows = panel_model(("fastswitch",), rate=0.02)  # doctest: +SKIP
    >>> rows.mechanism.tolist()  # doctest: +SKIP
    ['vllm', 'fastswitch']
    """
    names = list(dict.fromkeys(["vllm", *mechanisms]))
    point = {"n_conversations": PANEL_CONVERSATIONS, **params}
    rows = [ex.run_point("llm-preemption", {**point, "mechanism": m}, seed=seed) for m in names]
    return pd.concat(rows, ignore_index=True)


def preemption_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    exp = ex.get("llm-preemption")
    gpu = specs.gpu(exp.param("gpu").default)
    own = f"{gpu.pcie_bytes_per_s / 1e9:g} (GPU)"  # pcie_gbs=0 means the GPU table's rate (the caption names the GPU)
    # rate: 0 and the 1-2-5 stops of (0, 1] per iteration; pcie_gbs: 0 is the GPU table's rate
    controls = param_controls(exp, CONTROLS, rate={"sentinel": (0.0, "0 (never)")}, pcie_gbs={"sentinel": (0.0, own)})
    rate = controls[0]
    compared = tuple(exp.param("mechanism").choices or ())[1:]  # all but vLLM, which is always the baseline
    mechs = W.SelectMultiple(options=list(compared), value=tuple(compared), description="mechanisms")
    info = W.HTML()
    fig = FigurePane()

    def update(*_):
        rows = panel_model(tuple(mechs.value), **param_values(controls))
        redraw(fig, vp.tails(rows, title=f"Tail latency by mechanism (rate {rate.value:g} per iteration)"), height=340)
        base = rows.iloc[0]
        info.value = html_table(
            ["mechanism", "p99 TTFT (s)", "p99 TBT (ms)", "gain TTFT / TBT", "tokens/s", "stall share of p99 TBT"],
            [
                [
                    r.mechanism,
                    vp.value_text(r.p99_ttft_s),
                    vp.value_text(r.p99_tbt_s * 1e3),
                    f"{base.p99_ttft_s / r.p99_ttft_s:.2f}x / {base.p99_tbt_s / r.p99_tbt_s:.2f}x",
                    f"{r.throughput_tok_s:.0f}",
                    f"{r.stall_share_tbt:.0%}",
                ]
                for r in rows.itertuples()
            ],
            caption=f"{PANEL_CONVERSATIONS} conversations on Llama-3.1-8B / A100-80GB with a 16k-token KV cache; one "
            "run (the experiment's seed 0, as the reproduction's quick scale; its full scale averages 3 seeds)",
        )

    for w in (*controls, mechs):
        w.observe(update, "value")
    update()
    return panel([*controls, mechs], [fig], info=info, fidelity="workbench.widgets.preemption:preemption_panel")
