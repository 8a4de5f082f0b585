"""Serving and training share one GPU record type, one Model record type and one hardware table."""

from __future__ import annotations

import dataclasses

import pytest

from workbench.serving import specs
from workbench.training import GPUS, MODELS, Plan, iteration_table
from workbench.training.specs import EFFICIENCY, efficiency


def test_training_gpus_are_rows_of_the_one_hardware_table():
    assert GPUS["H100"] is specs.gpu("H100") is specs.gpu("H100-SXM")
    assert GPUS["A100"] is specs.gpu("A100-80GB")
    assert all(isinstance(g, specs.GPU) and g is specs.gpu(g.name) for g in GPUS.values())
    assert {g.generation for g in GPUS.values()} <= set(EFFICIENCY)


def test_training_models_are_the_one_model_record():
    assert all(isinstance(m, specs.Model) and m.seq_len >= 1 for m in MODELS.values())
    moe = MODELS["moe-8x22b"]
    assert moe.is_moe and moe.shared_params + 2 * moe.expert_params == pytest.approx(moe.active_params)
    assert not specs.model("Llama-2-70B").is_moe and specs.model("Mixtral-8x7B").is_moe


def test_settings_that_are_not_hardware_facts_are_asked_for_by_name():
    with pytest.raises(ValueError, match=r"generation 'ada'.*no stated training efficiency"):
        efficiency(specs.gpu("L40S"))
    serving_model = specs.model("Llama-2-7B")  # the serving table states no training sequence length
    with pytest.raises(ValueError, match="seq_len"):
        iteration_table(serving_model, [Plan(1, 1, 8, 64)], GPUS["A100"])
    t = iteration_table(dataclasses.replace(serving_model, seq_len=4096), [Plan(1, 1, 8, 64)], GPUS["A100"])
    assert 0 < float(t.mfu.iloc[0]) < 0.75  # below the measured GEMM asymptote of the A100
    constant = iteration_table(dataclasses.replace(serving_model, seq_len=4096), [Plan(1, 1, 8, 64)], GPUS["A100"],
                               compute="constant")  # fmt: skip
    assert 0 < float(constant.mfu.iloc[0]) < efficiency(GPUS["A100"])
