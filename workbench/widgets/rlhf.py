"""Interactive panels for notebook 12: a fused Actor/Critic pipeline you shape (stages, micro-batches, the Critic's
size relative to the Actor), scheduled by a method you pick, drawn as a Gantt chart per GPU beside sequential 1F1B;
and generation's long tail (length model, tail, threshold, instances) with RLHFuse's inter-stage fusion.

Every number is a point of a registered experiment (:func:`workbench.experiments.run_point`): the schedule's tasks
and bounds are ``rlhf-fused-schedule``'s, the tail's per-sample completions and stage times
``rlhf-generation-tail-samples``' (the same run as ``rlhf-generation-tail`` at that point)."""

from __future__ import annotations

import ipywidgets as W
import pandas as pd

from .. import experiments as ex
from ..viz import rlhf as vr
from . import FigurePane, clear, html_table, panel, param_control, param_controls, param_values, redraw

__all__ = [
    "PIPELINE_CONTROLS",
    "critic_stages",
    "fused_pipeline_panel",
    "panel_model",
    "generation_tail_panel",
    "tail_model",
    "TAIL_CONTROLS",
]

#: The ``rlhf-fused-schedule`` parameters the pipeline panel controls, in the order shown (annealing moves at the
#: experiment's default).
PIPELINE_CONTROLS = ("pp0", "pp1", "m0", "m1", "critic_size", "method")
#: The ``rlhf-generation-tail`` parameters the tail panel controls (the rest at their defaults).
TAIL_CONTROLS = ("source", "sigma", "max_tokens", "threshold", "instances", "tail_instances", "samples")
#: How each schedule reads in the panel.
METHOD_NAMES = {"anneal": "annealing (fused)", "greedy": "greedy (fused)", "sequential-1f1b": "sequential 1F1B"}


def panel_model(seed: int = 0, **values) -> pd.DataFrame:
    """The pipeline panel's numbers: the ``rlhf-fused-schedule`` point at ``values`` (one row per task, with the
    schedule's makespan and peak memory, the lower bound and sequential 1F1B's makespan on each).

    Examples
    --------
    >>> r = panel_model(pp0=4, pp1=2, m0=4, m1=4, method="greedy").iloc[0]
    >>> bool(r.makespan >= r.lower_bound), bool(r.sequential_makespan >= r.makespan)
    (True, True)
    """
    return ex.run_point("rlhf-fused-schedule", values, seed=seed)


def critic_stages(actor_stages: int) -> list[int]:
    """The Critic's pipeline depths for an Actor of ``actor_stages`` stages: the ``pp1`` choices of
    ``rlhf-fused-schedule`` up to the Actor's (the Critic runs on the Actor's GPUs).

    Examples
    --------
    >>> critic_stages(2), critic_stages(16)
    ([1, 2], [1, 2, 4, 8])
    """
    return [v for v in ex.get("rlhf-fused-schedule").param("pp1").choices or () if v <= actor_stages]


def fused_pipeline_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    exp = ex.get("rlhf-fused-schedule")
    defaults = exp.defaults()
    controls = {}
    for name in PIPELINE_CONTROLS:
        p = exp.param(name)
        if name == "pp1":  # the Critic's stops follow the Actor's
            controls[name] = param_control(p, stops=critic_stages(defaults["pp0"]))
        elif name == "method":  # the experiment's choices, each read as what it does
            controls[name] = param_control(p)
            controls[name].options = [(METHOD_NAMES.get(m, m), m) for m in p.choices or ()]
            controls[name].value = defaults[name]
        elif p.choices is not None:  # a number from a set: a slider over it
            controls[name] = param_control(p, stops=p.choices)
        else:
            controls[name] = param_control(p)
    pp0, pp1, method = controls["pp0"], controls["pp1"], controls["method"]
    info = W.HTML()
    fig = FigurePane()

    bounding = []  # set while the Critic's stops follow the Actor's (one redraw for the move, not two)

    def bound_critic(*_):
        allowed = critic_stages(pp0.value)
        if [o[1] if isinstance(o, tuple) else o for o in pp1.options] != allowed:
            keep = min(pp1.value, allowed[-1])
            bounding.append(True)
            try:
                pp1.options = allowed
                pp1.value = keep
            finally:
                bounding.pop()

    def update(*_):
        if bounding:
            return
        if pp1.value > pp0.value:  # reachable only by setting the options by hand
            info.value = html_table(["problem"], [["Critic stages must not exceed the Actor's (they share its GPUs)"]])
            clear(fig, "more Critic stages than Actor stages")
            return
        v = param_values(controls.values())
        tasks = panel_model(**v)
        r = tasks.iloc[0]
        redraw(fig, vr.gantt(tasks, (v["pp0"], v["pp1"]), title=f"{method.label}: one row per GPU"), height=340)
        info.value = html_table(
            ["schedule", "makespan", "over the lower bound", "vs sequential 1F1B", "peak memory"],
            [
                [
                    method.label,
                    f"{r.makespan:.0f}",
                    f"{r.makespan / r.lower_bound - 1:+.1%}",
                    f"{r.sequential_makespan / r.makespan:.2f}x faster",
                    f"{r.peak_memory:.0f}",
                ]
            ],
            caption=f"lower bound {r.lower_bound:.0f} (time units; backward = 2 x forward)"
            + (
                f"; one annealing run ({defaults['iterations']:,} moves, the experiment's seed 0): another seed or "
                "more moves can land elsewhere"
                if method.value == "anneal"
                else ""
            ),
        )

    pp0.observe(bound_critic, "value")  # before update: the Critic's stops are bounded when the panel redraws
    for w in controls.values():
        w.observe(update, "value")
    update()
    return panel(list(controls.values()), [fig], info=info, fidelity="workbench.widgets.rlhf:fused_pipeline_panel")


def tail_model(seed: int = 0, **values) -> pd.DataFrame:
    """The tail panel's numbers: the ``rlhf-generation-tail-samples`` point at ``values`` over its defaults, one
    row per sample with the run's ``rlhf-generation-tail`` results on each (the same run: the same parameters draw
    the same lengths).

    Examples
    --------
    >>> r = tail_model(samples=64, instances=4, threshold=0.05).iloc[0]
    >>> bool(r.fused_s <= r.baseline_s * 1.5)
    True
    """
    return ex.run_point("rlhf-generation-tail-samples", values, seed=seed)


def generation_tail_panel() -> W.Widget:
    """Build the generation-tail panel and return its top-level widget."""
    controls = param_controls("rlhf-generation-tail", TAIL_CONTROLS)
    info = W.HTML()
    fig = FigurePane()

    def update(*_):
        v = param_values(controls)
        if v["tail_instances"] >= v["instances"]:
            info.value = html_table(["problem"], [["tail instances must be fewer than the instances"]])
            clear(fig, "as many tail instances as instances")
            return
        samples = tail_model(**v)
        r = samples.iloc[0]
        redraw(fig, vr.tail_completion(samples), height=340)
        info.value = html_table(
            ["baseline stage", "fused stage", "gain", "generation alone", "inference", "migrated", "cap"],
            [[f"{r.baseline_s:.1f} s", f"{r.fused_s:.1f} s", f"{r.gain:.3f}x", f"{r.generation_s:.1f} s",
              f"{r.inference_s:.1f} s", f"{r.migrated:.0f} at {r.migrate_at_s:.1f} s",
              f"{1 + r.inference_s / r.generation_s:.3f}x"]],
            caption="cap = 1 + inference / generation: fusion hides inference behind the tail, nothing more",
        )  # fmt: skip

    by_name = {c.param_name: c for c in controls}
    instances, tail, samples = by_name["instances"], by_name["tail_instances"], by_name["samples"]
    top = instances.max

    def limit(*_):
        # no more instances than samples and fewer tail instances than instances: the model rejects either (a slider
        # clamps its value when its maximum drops, and the clamped value redraws)
        instances.max = min(top, samples.value)
        tail.max = instances.value - 1

    samples.observe(limit, "value")
    instances.observe(limit, "value")
    limit()
    for c in controls:
        c.observe(update, "value")
    update()
    return panel(controls, [fig], info=info, fidelity="rlhf-generation-tail")  # its experiment
