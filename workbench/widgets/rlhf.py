"""Interactive panels for notebook 12: a fused Actor/Critic pipeline you shape (stages, micro-batches, the Critic's
size relative to the Actor), scheduled by a method you pick, drawn as a Gantt chart per GPU beside sequential 1F1B;
and generation's long tail (length model, tail, threshold, instances) with RLHFuse's inter-stage fusion."""

from __future__ import annotations

import ipywidgets as W

from .. import experiments as ex
from ..experiments.rlhf import generation_tail_run
from ..training import fused_pipeline as fp
from ..viz import rlhf as vr
from . import FigurePane, clear, html_table, panel, param_controls, param_values, redraw

__all__ = [
    "ACTOR_STAGES",
    "critic_stages",
    "fused_pipeline_panel",
    "panel_model",
    "generation_tail_panel",
    "tail_model",
    "TAIL_CONTROLS",
]

#: The ``rlhf-generation-tail`` parameters the tail panel controls (the rest at their defaults).
TAIL_CONTROLS = ("source", "sigma", "max_tokens", "threshold", "instances", "tail_instances", "samples")

#: Annealing moves in the panel: a fraction of a second on one core for the panel's sizes.
PANEL_ITERATIONS = 3_000


def panel_model(pp0: int, pp1: int, m0: int, m1: int, critic_size: float, method: str, seed: int = 0) -> dict:
    """The panel's model call: the instance (Actor forward 10 time units per stage, the Critic's
    ``round(10 * critic_size)``, memory 1 per micro-batch and stage), its schedule by ``method``, sequential 1F1B and
    the lower bound.

    Examples
    --------
    >>> r = panel_model(4, 2, 4, 4, 0.5, "greedy")
    >>> r["schedule"].makespan >= r["bound"], r["sequential"].makespan >= r["schedule"].makespan
    (True, True)
    """
    inst = fp.Instance(pp0=pp0, pp1=pp1, m0=m0, m1=m1, f0=10, f1=max(1, round(10 * critic_size)))
    if method == "greedy":
        sched = fp.greedy(inst)
    elif method == "anneal":
        sched = fp.anneal(inst, seed=seed, iterations=PANEL_ITERATIONS)
    else:
        sched = fp.sequential_1f1b(inst)
    return {
        "instance": inst,
        "schedule": sched,
        "sequential": fp.sequential_1f1b(inst),
        "bound": fp.lower_bound(inst).value,
        "check": fp.check_schedule(inst, sched),
    }


#: The Actor's pipeline depths the panel offers (its GPUs); the Critic's are the powers of two up to the Actor's.
ACTOR_STAGES = (2, 4, 8, 16)


def critic_stages(actor_stages: int) -> list[int]:
    """The Critic's pipeline depths for an Actor of ``actor_stages`` stages: the Critic runs on the Actor's GPUs, so
    it has at most as many stages (1, 2, 4, ... up to the Actor's, and at most 8).

    Examples
    --------
    >>> critic_stages(2), critic_stages(16)
    ([1, 2], [1, 2, 4, 8])
    """
    return [v for v in (1, 2, 4, 8) if v <= actor_stages]


def fused_pipeline_panel() -> W.Widget:
    """Build the panel and return its top-level widget."""
    pp0 = W.SelectionSlider(options=list(ACTOR_STAGES), value=8, description="Actor stages (GPUs)")
    pp1 = W.SelectionSlider(options=critic_stages(8), value=4, description="Critic stages")
    m0 = W.IntSlider(value=8, min=1, max=32, description="Actor micro-batches")
    m1 = W.IntSlider(value=4, min=1, max=32, description="Critic micro-batches")
    size = W.SelectionSlider(options=[0.1, 0.2, 0.3, 0.5, 0.7, 1.0], value=0.5, description="Critic / Actor size")
    method = W.Dropdown(
        options=[("annealing (fused)", "anneal"), ("greedy (fused)", "greedy"), ("sequential 1F1B", "sequential")],
        value="anneal",
        description="schedule",
    )
    info = W.HTML()
    fig = FigurePane()

    bounding = []  # set while the Critic's stops follow the Actor's (one redraw for the move, not two)

    def bound_critic(*_):
        allowed = critic_stages(pp0.value)
        if list(pp1.options) != allowed:
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
        r = panel_model(pp0.value, pp1.value, m0.value, m1.value, size.value, method.value)
        inst, sched = r["instance"], r["schedule"]
        redraw(fig, vr.gantt(sched, (inst.pp0, inst.pp1), title=f"{method.label}: one row per GPU"), height=340)
        info.value = html_table(
            ["schedule", "makespan", "over the lower bound", "vs sequential 1F1B", "peak memory"],
            [
                [
                    method.label,
                    f"{sched.makespan:.0f}",
                    f"{sched.makespan / r['bound'] - 1:+.1%}",
                    f"{r['sequential'].makespan / sched.makespan:.2f}x faster",
                    f"{r['check'].peak_memory:.0f}",
                ]
            ],
            caption=f"lower bound {r['bound']:.0f} (time units; backward = 2 x forward)"
            + (
                f"; one annealing run ({PANEL_ITERATIONS:,} moves, seed 0): another seed or more moves can land "
                "elsewhere"
                if method.value == "anneal"
                else ""
            ),
        )

    pp0.observe(bound_critic, "value")  # before update: the Critic's stops are bounded when the panel redraws
    for w in (pp0, pp1, m0, m1, size, method):
        w.continuous_update = False
        w.observe(update, "value")
    update()
    return panel(
        [pp0, pp1, m0, m1, size, method], [fig], info=info, fidelity="workbench.widgets.rlhf:fused_pipeline_panel"
    )


def tail_model(**values):
    """The tail panel's model call: ``rlhf-generation-tail`` at ``values`` over its defaults, with the seed the
    experiment gives that point (so the panel's numbers are the experiment's).

    Examples
    --------
    >>> r = tail_model(samples=64, instances=4, threshold=0.05)
    >>> r.fused_s <= r.baseline_s * 1.5
    True
    """
    exp = ex.get("rlhf-generation-tail")
    params = {**exp.defaults(), **values}
    return generation_tail_run(**params, seed=ex.point_seed(exp, params, 0, 0))


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
        r = tail_model(**v)
        redraw(fig, vr.tail_completion(r), height=340)
        info.value = html_table(
            ["baseline stage", "fused stage", "gain", "generation alone", "inference", "migrated", "cap"],
            [[f"{r.baseline_s:.1f} s", f"{r.fused_s:.1f} s", f"{r.gain:.3f}x", f"{r.generation_s:.1f} s",
              f"{r.inference_s:.1f} s", f"{r.migrated} at {r.migrate_at_s:.1f} s",
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
