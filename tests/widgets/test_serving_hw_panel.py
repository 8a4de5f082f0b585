"""The serving-hardware panel redraws on a control change, reports what does not fit, and plans GPUs."""

from __future__ import annotations

import numpy as np

from workbench.widgets.serving_hw import ServingHardwarePanel


def test_panel_updates_reports_misfit_and_plans():
    panel = ServingHardwarePanel(rate_rps=5.0, span_s=300)
    before = np.asarray(panel.ttft.data[0].x).copy()
    assert "optimal bound" in panel.stats.value
    assert panel.scheduler.value == "sarathi"  # chunked prefill, as the default engine (a current vLLM) runs
    panel.scheduler.value = "vllm"
    assert not np.array_equal(before, np.asarray(panel.ttft.data[0].x))
    panel.disagg.value = True
    assert "optimal bound" in panel.stats.value
    panel.model.value = "Llama-3.1-405B"  # 810 GB of weights on one H100
    assert "does not fit" in panel.stats.value and "short by" in panel.stats.value
    panel.model.value = "Llama-3.1-8B"
    panel._on_plan(None)
    assert "GPUs" in panel.plan.value


def test_engine_and_cost_source_change_the_answer_and_uncovered_profiles_are_named():
    panel = ServingHardwarePanel(rate_rps=5.0, span_s=300)
    v1 = panel.stats.value
    panel.engine.value = "vllm-v0"  # eager: the host step adds to every iteration
    assert panel.stats.value != v1 and "optimal bound" in panel.stats.value
    panel.costs.value = "stated"
    assert "optimal bound" in panel.stats.value
    panel.gpu.value = "B200"
    panel.costs.value = "profiled"  # Vidur measured A100 and H100 only
    assert "needs measured curves" in panel.stats.value and "blackwell" in panel.stats.value
    panel.gpu.value = "A100-40GB"  # an Ampere GPU Vidur did not measure: the error names the ones it did
    assert "no measured operator profile" in panel.stats.value and "A100-80GB, H100-SXM" in panel.stats.value
    panel.overlap.value = True
    assert panel.engine.value == "nanoflow"
